//! Level 0 of a host dispatch (`vkCmdDispatchGraphAMDX`): the entry nodes'
//! records, all known on the host, written once, from the application's
//! memory, into a staging block the command buffer holds, where the first
//! level's kernels read them in place ([`RECORDS_CONTIGUOUS`]: each node's
//! payloads side by side at its input stride, with the first workgroup of
//! each record's grid for a node that takes its grid from the payload).
//! The block starts with the launched nodes' `NodeDispatch`es (the kernels
//! find theirs through their push constants); the launches' workgroup
//! counts are known here, so level 0 is recorded as direct dispatches.
//! Nothing goes into scratch: a host dispatch starts with no transfer.
//!
//! A node with [`GPU_GRIDS_FROM`] dynamic-grid records or more has its
//! records' starts summed on the GPU instead ([`GpuGrids`], `grids.comp`):
//! the CPU only copies the records, and level 0 is launched indirectly from
//! the `NodeDispatch`es the pass sizes.

use super::errors::RecordError;
use super::gpu::Gpu;
use super::pipeline::{GraphPipeline, MetaPipelines};
use super::scratch::dispatch_words;
use super::staging::Reserved;
use meta_shaders::{GridsPush, SCHEDULE_DYNAMIC, SCHEDULE_STATIC};
use spirv_lowering::abi::{NodeDispatch, LAUNCH_LINE_PAD, RECORDS_CONTIGUOUS, SCHEDULE_FLAG_MESH};
use spirv_lowering::LaunchMode;
use std::collections::BTreeMap;

/// Records for one entry node of a host dispatch, in the application's memory.
#[derive(Clone, Debug)]
pub struct EntryInput<'a> {
    pub slot: usize,
    pub count: u32,
    /// The payloads, `stride` bytes apart (each at least the node's input
    /// size; empty for empty records).
    pub payloads: &'a [u8],
    pub stride: usize,
}

/// The most records a host dispatch may give (level 0 is copied on the CPU
/// when the command is recorded; past this a hostile count would cost
/// seconds and gigabytes).
pub const MAX_HOST_RECORDS: u64 = 1 << 26;
/// The most payload bytes a host dispatch may give.
pub const MAX_HOST_BYTES: u64 = 256 << 20;

/// Dynamic-grid records of one node from which a host dispatch sums their
/// grids on the GPU. On the H200 machine the CPU's sums cost about 1.6 ns a
/// record, written across the bus (fanout's 64k records: 105 µs of its
/// 150 µs of recording); the GPU's cost 17 µs of GPU time for them (two
/// passes of 5–6 µs and their barriers), nearly all of it latency, which
/// below this many records would cost more than the CPU time it saves.
pub const GPU_GRIDS_FROM: u32 = 16 * 1024;

/// Launches `grids.comp` can size (a bit each in `GridsPush::grid_launches`).
const GPU_GRIDS_MAX_LAUNCHES: usize = 32;

/// Level 0 of a host dispatch, staged.
pub(super) struct HostLevel {
    /// Per launched node slot (entry nodes and their input sharers): the
    /// device address of its `NodeDispatch` and the dispatch itself.
    pub launches: BTreeMap<usize, (u64, NodeDispatch)>,
    /// Set when `grids.comp` sizes the launches: they are then launched
    /// indirectly from the block.
    pub grids: Option<GpuGrids>,
}

/// A node's grids summed on the GPU: `grids.comp`'s two phases, run before
/// level 0 (phase 0's push; phase 1 differs in `phase` only).
#[derive(Clone, Copy, Debug)]
pub(super) struct GpuGrids {
    pub pipeline: ash::vk::Pipeline,
    pub push: GridsPush,
    /// The block's buffer, which holds the launches' `NodeDispatch`es.
    pub buffer: ash::vk::Buffer,
    /// The block's device address (the buffer's offset 0).
    pub address: u64,
}

impl HostLevel {
    /// Where the launch's `NodeDispatch` at `address` lies in the block's
    /// buffer, when the GPU sizes the launches.
    pub(super) fn staged_offset(&self, address: u64) -> Option<(ash::vk::Buffer, u64)> {
        self.grids.map(|g| (g.buffer, address - g.address))
    }
}

/// One entry node's records as they will sit in the block.
struct Staged<'i, 'a> {
    slot: usize,
    inputs: Vec<&'i EntryInput<'a>>,
    records: u32,
    /// Bytes between records in the block (the node's input stride).
    stride: u64,
    /// The node (of its input-sharing group) that takes its grid from the
    /// payload, if one does: the block then holds each record's first
    /// workgroup.
    grid_node: Option<usize>,
    /// The workgroups of all its records' grids (once written).
    grid_total: u64,
    /// Offsets of the payloads and starts in the block.
    payloads_at: u64,
    starts_at: u64,
    /// The grids are summed on the GPU ([`GpuGrids`]): phase 0's sums at
    /// this offset in the block.
    gpu_sums_at: Option<u64>,
}

/// Stages level 0 for `inputs` (the dispatch's status words at `status`).
pub(super) fn host_level(
    device: &Gpu,
    cb: ash::vk::CommandBuffer,
    (graph, meta): (&GraphPipeline, &MetaPipelines),
    inputs: &[EntryInput<'_>],
    status: u64,
) -> Result<HostLevel, RecordError> {
    let mut by_slot: BTreeMap<usize, Vec<&EntryInput<'_>>> = BTreeMap::new();
    for input in inputs {
        by_slot.entry(input.slot).or_default().push(input);
    }
    let mut staged: Vec<Staged<'_, '_>> =
        by_slot.into_iter().map(|(slot, inputs)| stage_node(graph, slot, inputs)).collect();
    let launched: Vec<usize> = staged.iter().flat_map(|s| input_group(graph, s.slot)).collect();
    // The GPU sums where it can; where its pipeline cannot be had, the CPU.
    let on_gpu = gpu_grids_node(graph, &staged, &launched).and_then(|i| match meta.grids(device) {
        Ok(pipeline) => Some((i, pipeline)),
        Err(e) => {
            tracing::warn!("grids summed on the CPU: {e}");
            None
        }
    });
    // Layout: the dispatches, then per node its payloads and starts (and
    // the GPU's sums).
    let mut end = launched.len() as u64 * std::mem::size_of::<NodeDispatch>() as u64;
    for (i, s) in staged.iter_mut().enumerate() {
        s.payloads_at = end.next_multiple_of(16);
        end = s.payloads_at + u64::from(s.records) * s.stride;
        s.starts_at = end.next_multiple_of(16);
        end = s.starts_at + if s.grid_node.is_some() { 4 * u64::from(s.records) } else { 0 };
        if on_gpu.is_some_and(|(gpu, _)| gpu == i) {
            let at = end.next_multiple_of(16);
            s.gpu_sums_at = Some(at);
            end = at + 16 * u64::from(GridsPush::chunking(s.records).0);
        }
    }
    let block = device
        .staging
        .lock()
        // Kernels read a little past their `NodeDispatch` (see the pad).
        .reserve(&device.dispatch, &device.physical.memory_properties, cb, end + LAUNCH_LINE_PAD)
        .map_err(RecordError::Staging)?;
    let mut launches = BTreeMap::new();
    let mut workgroups = 0u32;
    for s in &mut staged {
        copy_records(&block, s, graph);
        if let (Some(n), None) = (s.grid_node, s.gpu_sums_at) {
            s.grid_total = write_grid_starts(&block, graph, n, s)?;
        }
    }
    for s in &staged {
        for n in input_group(graph, s.slot) {
            let d = dispatch(graph, n, s, &block, status, &mut workgroups);
            launches.insert(n, d);
        }
    }
    // Every launch counts the level's workgroups done against their total.
    for (i, (_, (address, d))) in launches.iter_mut().enumerate() {
        d.level_workgroups = workgroups;
        let at = i as u64 * std::mem::size_of::<NodeDispatch>() as u64;
        *address = block.address + at;
        let words: Vec<u8> = dispatch_words(d).iter().flat_map(|w| w.to_le_bytes()).collect();
        block.write(at, &words);
    }
    let grids = on_gpu.map(|(i, pipeline)| GpuGrids {
        pipeline,
        push: grids_push(graph, &staged[i], &launches, &block, status),
        buffer: block.buffer,
        address: block.address,
    });
    Ok(HostLevel { launches, grids })
}

/// The staged node whose grids the GPU sums, if any: the one with the most
/// dynamic-grid records, from [`GPU_GRIDS_FROM`], where `grids.comp` can
/// size every launch (at most [`GPU_GRIDS_MAX_LAUNCHES`], none of them a mesh
/// node, whose draws number no workgroups).
fn gpu_grids_node(graph: &GraphPipeline, staged: &[Staged<'_, '_>], launched: &[usize]) -> Option<usize> {
    let drawn = launched.iter().any(|&n| graph.schedules[n].flags & SCHEDULE_FLAG_MESH != 0);
    if drawn || launched.len() > GPU_GRIDS_MAX_LAUNCHES {
        return None;
    }
    (0..staged.len())
        .filter(|&i| staged[i].grid_node.is_some() && staged[i].records >= GPU_GRIDS_FROM)
        .max_by_key(|&i| staged[i].records)
}

/// `grids.comp`'s push constants for node `s`, whose records and launches
/// are in `block` (each launch's `NodeDispatch` at its index in `launches`).
fn grids_push(
    graph: &GraphPipeline,
    s: &Staged<'_, '_>,
    launches: &BTreeMap<usize, (u64, NodeDispatch)>,
    block: &Reserved,
    status: u64,
) -> GridsPush {
    let grid_node = s.grid_node.unwrap_or(s.slot);
    let schedule = &graph.schedules[grid_node];
    let group: Vec<usize> = input_group(graph, s.slot).collect();
    // The dynamic-grid launches of the node's input-sharing group take the
    // grids' total; the others' workgroups were known here.
    let grid_launches = launches
        .keys()
        .enumerate()
        .filter(|(_, n)| group.contains(n) && graph.schedules[**n].mode == SCHEDULE_DYNAMIC)
        .fold(0u32, |mask, (i, _)| mask | 1 << i);
    // The grids' total is held to MAX_RECORD_WORKGROUPS there, which is
    // `GridLimits::total` (the advertised maxExecutionGraphWorkgroups).
    let [max_grid_x, max_grid_y, max_grid_z] = GridLimits::of(graph, grid_node).declared;
    let (chunks, per_invocation) = GridsPush::chunking(s.records);
    GridsPush {
        records: block.address + s.payloads_at,
        starts: block.address + s.starts_at,
        sums: block.address + s.gpu_sums_at.unwrap_or(0),
        dispatches: block.address,
        status,
        count: s.records,
        stride: s.stride as u32,
        grid_offset: schedule.grid_offset,
        grid_bytes: schedule.grid_bytes,
        grid_components: schedule.grid_components,
        max_grid_x,
        max_grid_y,
        max_grid_z,
        launches: launches.len() as u32,
        grid_launches,
        phase: 0,
        chunks,
        per_invocation,
        reserved: 0,
    }
}

/// Node `slot` and the nodes sharing its input (SharesInputWithAMDX), which
/// read the same records: level 0 launches each of them.
fn input_group(graph: &GraphPipeline, slot: usize) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(slot).chain(graph.graph.nodes[slot].sharers.iter().copied())
}

/// Counts node `slot`'s records and finds whether a node of its
/// input-sharing group takes its grid from the payload.
fn stage_node<'i, 'a>(graph: &GraphPipeline, slot: usize, inputs: Vec<&'i EntryInput<'a>>) -> Staged<'i, 'a> {
    // A grid read from the payload is the same for the whole group.
    let grid_node = input_group(graph, slot).find(|&n| graph.schedules[n].mode == SCHEDULE_DYNAMIC);
    let records: u64 = inputs.iter().map(|i| u64::from(i.count)).sum();
    Staged {
        slot,
        inputs,
        records: records as u32,
        stride: u64::from(graph.schedules[slot].input_stride),
        grid_node,
        grid_total: 0,
        payloads_at: 0,
        starts_at: 0,
        gpu_sums_at: None,
    }
}

/// Writes each of `s`'s records' first workgroup (an exclusive prefix sum
/// of their grids, read from the application's memory) into the block at
/// `s.starts_at` and returns the total, checked against the node's
/// MaxNumWorkgroupsAMDX (else the per-dimension limit) and the workgroups a
/// node's records may ask for (past them a dispatch could run for minutes).
/// This is the CPU's part of a host dispatch's cost (fanout's 64k records),
/// so:
/// - the sums run without a check per record: the checks hold for all
///   records iff they hold for the largest component and the final total
///   (the prefix sums only grow), and only a failed check walks the records
///   again to name the first one;
/// - the starts are summed into a chunk in cached memory and copied from
///   there in wide writes (the block may be write-combined memory across
///   the bus);
/// - one-component grids, the common form, take four records a step
///   ([`scan_fixed`]): on the H200 machine's host fanout's 64k grids took
///   122 µs before and 58 µs after.
fn write_grid_starts(
    block: &Reserved,
    graph: &GraphPipeline,
    grid_node: usize,
    s: &Staged<'_, '_>,
) -> Result<u64, RecordError> {
    let read = GridReader::new(&graph.schedules[grid_node]);
    let mut at = s.starts_at;
    let mut written = true;
    let sums = read.sum_inputs(&s.inputs, |starts| {
        written &= block.write_words(at, starts);
        at += 4 * starts.len() as u64;
    });
    let limits = GridLimits::of(graph, grid_node);
    let fits = written && !limits.passes(sums.largest) && !sums.wrapped && sums.total <= limits.total;
    if fits {
        Ok(sums.total)
    } else {
        first_grid_over(graph, s, &read, &limits)
    }
}

/// A dynamic-grid node's limits on its records' grids.
struct GridLimits {
    /// MaxNumWorkgroupsAMDX, else the per-dimension limit.
    declared: [u32; 3],
    /// The workgroups a node's records may ask for together.
    total: u64,
}

impl GridLimits {
    fn of(graph: &GraphPipeline, grid_node: usize) -> Self {
        let declared = match graph.graph.nodes[grid_node].decl.info.launch {
            LaunchMode::BroadcastDynamic { max_grid } => max_grid,
            _ => None,
        }
        .unwrap_or(crate::advertise::properties().max_execution_graph_workgroup_count);
        let total = u64::from(crate::advertise::properties().max_execution_graph_workgroups);
        GridLimits { declared, total }
    }

    /// Whether `grid` passes the declared grid in some dimension.
    fn passes(&self, grid: [u64; 3]) -> bool {
        grid.iter().zip(self.declared).any(|(&g, most)| g > u64::from(most))
    }
}

/// The error for the first of `s`'s records whose grid passes `limits` (or
/// makes the total pass them), found record by record; the total when none
/// does (a block too small for the starts, which were then not written).
fn first_grid_over(
    graph: &GraphPipeline,
    s: &Staged<'_, '_>,
    read: &GridReader,
    limits: &GridLimits,
) -> Result<u64, RecordError> {
    let mut total = 0u64;
    let mut record = 0u64;
    for input in &s.inputs {
        for i in 0..input.count as usize {
            let grid = read.grid(input.payloads, i * input.stride);
            total = total.saturating_add(workgroups(grid));
            if limits.passes(grid) || total > limits.total {
                return Err(RecordError::GridTooLarge {
                    node: graph.graph.nodes[s.slot].decl.name.clone(),
                    record,
                    grid,
                    max: limits.declared,
                    total: limits.total as u32,
                });
            }
            record += 1;
        }
    }
    Ok(total)
}

/// A grid's workgroups, saturating: three components of up to 2^32
/// overflow a u64.
fn workgroups(grid: [u64; 3]) -> u64 {
    grid[0].saturating_mul(grid[1]).saturating_mul(grid[2])
}

/// Copies node `s`'s payloads into the block at its input stride: one copy
/// when the application's stride is the node's and the records fill it,
/// else record by record with the padding zeroed (a TrackFinishWritingAMDX
/// counter lives there).
fn copy_records(block: &Reserved, s: &Staged<'_, '_>, graph: &GraphPipeline) {
    let size = graph.graph.nodes[s.slot].decl.info.input.as_ref().map_or(0, |p| u64::from(p.size));
    let mut at = s.payloads_at;
    for input in &s.inputs {
        let count = u64::from(input.count);
        if size == 0 || count == 0 {
            block.zero(at, count * s.stride);
            at += count * s.stride;
            continue;
        }
        if size == s.stride && input.stride as u64 == s.stride {
            block.write(at, &input.payloads[..(count * s.stride) as usize]);
            at += count * s.stride;
            continue;
        }
        for i in 0..input.count as usize {
            let from = i * input.stride;
            block.write(at, &input.payloads[from..from + size as usize]);
            block.zero(at + size, s.stride - size);
            at += s.stride;
        }
    }
}

/// Node `n`'s level-0 dispatch (it reads `s`'s records): its address is
/// filled in once the block's dispatches are laid out.
fn dispatch(
    graph: &GraphPipeline,
    n: usize,
    s: &Staged<'_, '_>,
    block: &Reserved,
    status: u64,
    workgroups: &mut u32,
) -> (u64, NodeDispatch) {
    let schedule = graph.schedules[n];
    let groups = match schedule.mode {
        SCHEDULE_DYNAMIC => s.grid_total,
        SCHEDULE_STATIC => u64::from(s.records) * u64::from(schedule.static_groups),
        _ => u64::from(s.records.div_ceil(schedule.records_per_workgroup.max(1))),
    }
    .min(u64::from(u32::MAX)) as u32;
    let indirect = meta_shaders::split_groups(groups);
    let workgroup_base = *workgroups;
    // Mesh nodes are drawn, not launched (see `abi::SCHEDULE_FLAG_MESH`).
    if schedule.flags & SCHEDULE_FLAG_MESH == 0 {
        *workgroups = workgroups.saturating_add(indirect[0].saturating_mul(indirect[1]));
    }
    let d = NodeDispatch {
        indirect,
        workgroup_count: groups,
        record_count: s.records,
        workgroup_base,
        level_workgroups: 0,
        mode: RECORDS_CONTIGUOUS,
        key_node: s.slot as u32,
        status_in: 0,
        records: block.address + s.payloads_at,
        starts: block.address + s.starts_at,
        status,
    };
    (0, d)
}

/// Reads dynamic grids from records, as the node's schedule lays them out
/// (components of 2 or 4 bytes from `grid_offset`; absent ones are 1, a
/// component past the record reads 0). Host dispatches read one a record,
/// so the layout is decided once, not per record.
struct GridReader {
    offset: usize,
    bytes: usize,
    components: usize,
}

impl GridReader {
    fn new(schedule: &meta_shaders::NodeSchedule) -> Self {
        GridReader {
            offset: schedule.grid_offset as usize,
            bytes: schedule.grid_bytes as usize,
            components: schedule.grid_components.min(3) as usize,
        }
    }

    /// Sums the grids of every record of `inputs`, handing their starts to
    /// `emit` in order, a chunk at a time.
    fn sum_inputs(&self, inputs: &[&EntryInput<'_>], mut emit: impl FnMut(&[u32])) -> GridSums {
        const CHUNK: usize = 2048;
        // No longer than the records: a small dispatch (chain's 4) zeroed
        // 8 KiB here, a third of its recording's instructions on lavapipe.
        let longest = inputs.iter().map(|i| i.count as usize).max().unwrap_or(0);
        let mut chunk = vec![0u32; longest.min(CHUNK)];
        let mut sums = GridSums::default();
        for input in inputs {
            let mut first = 0usize;
            while first < input.count as usize {
                let n = (input.count as usize - first).min(CHUNK);
                let from = (first * input.stride).min(input.payloads.len());
                self.scan(&input.payloads[from..], input.stride, &mut chunk[..n], &mut sums);
                emit(&chunk[..n]);
                first += n;
            }
        }
        sums
    }

    /// Adds the grids of the records `stride` bytes apart in `payloads`,
    /// one for each word of `starts`, to `sums`, writing each record's
    /// first workgroup (the total before it) into its word. Where every
    /// grid lies inside `payloads` (always, for a valid call), the layout is
    /// a constant of the loop: one bounds check a record, no branch on it.
    fn scan(&self, payloads: &[u8], stride: usize, starts: &mut [u32], sums: &mut GridSums) {
        let span = self.offset + self.components * self.bytes;
        let last = starts.len().saturating_sub(1);
        let inside =
            last.checked_mul(stride).and_then(|at| at.checked_add(span)).is_some_and(|end| end <= payloads.len());
        let from = &payloads[self.offset.min(payloads.len())..];
        match (inside, self.bytes, self.components) {
            (true, 4, 1) => scan_fixed::<4, 1>(from, stride, starts, sums),
            (true, 4, 2) => scan_fixed::<4, 2>(from, stride, starts, sums),
            (true, 4, 3) => scan_fixed::<4, 3>(from, stride, starts, sums),
            (true, 2, 1) => scan_fixed::<2, 1>(from, stride, starts, sums),
            (true, 2, 2) => scan_fixed::<2, 2>(from, stride, starts, sums),
            (true, 2, 3) => scan_fixed::<2, 3>(from, stride, starts, sums),
            _ => {
                for (i, start) in starts.iter_mut().enumerate() {
                    sums.add(start, self.grid(payloads, i * stride));
                }
            }
        }
    }

    /// The grid of the record at byte `at` of `payloads`.
    fn grid(&self, payloads: &[u8], at: usize) -> [u64; 3] {
        let mut grid = [1u64; 3];
        for (c, g) in grid.iter_mut().enumerate().take(self.components) {
            let from = at + self.offset + c * self.bytes;
            *g = match self.bytes {
                4 => {
                    payloads.get(from..from + 4).map_or(0, |b| u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                }
                2 => payloads.get(from..from + 2).map_or(0, |b| u64::from(u16::from_le_bytes([b[0], b[1]]))),
                _ => 0,
            };
        }
        grid
    }
}

/// Grids added up: their total workgroups and their largest component in
/// each dimension. The total wraps, and whether it did is kept beside it
/// (the prefix sums are then wrong, and the check fails), so each addition
/// is a plain add: the sum is the loop's only chain from one record to the
/// next.
#[derive(Default)]
struct GridSums {
    total: u64,
    wrapped: bool,
    largest: [u64; 3],
}

impl GridSums {
    /// Adds `grid`, writing the total before it into `start`.
    #[inline(always)]
    fn add(&mut self, start: &mut u32, grid: [u64; 3]) {
        *start = self.total as u32;
        let (total, wrapped) = self.total.overflowing_add(workgroups(grid));
        self.total = total;
        self.wrapped |= wrapped;
        for (largest, g) in self.largest.iter_mut().zip(grid) {
            *largest = (*largest).max(g);
        }
    }
}

/// [`GridReader::scan`] for `C` components of `B` bytes from the start of
/// each record of `from` (which starts at the grid's offset).
fn scan_fixed<const B: usize, const C: usize>(from: &[u8], stride: usize, starts: &mut [u32], sums: &mut GridSums) {
    // One component (HLSL's `uint` SV_DispatchGrid, fanout's): no product,
    // and a chunk of grids below 2^32 cannot wrap a total below 2^63, so
    // four records take one bounds check, their loads are independent and
    // their starts come from one running sum (on the H200 machine's host,
    // 0.6 against 1.1 ns a record).
    if C == 1 && stride >= B && sums.total < 1 << 63 && starts.len() <= 1 << 30 {
        let (mut total, mut largest) = (sums.total, sums.largest[0]);
        let mut quads = starts.chunks_exact_mut(4);
        let mut at = 0;
        for quad in &mut quads {
            let r = &from[at..at + 3 * stride + B];
            let g = [
                component::<B>(&r[..B]),
                component::<B>(&r[stride..stride + B]),
                component::<B>(&r[2 * stride..2 * stride + B]),
                component::<B>(&r[3 * stride..3 * stride + B]),
            ];
            quad[0] = total as u32;
            quad[1] = (total + g[0]) as u32;
            quad[2] = (total + g[0] + g[1]) as u32;
            quad[3] = (total + g[0] + g[1] + g[2]) as u32;
            total += (g[0] + g[1]) + (g[2] + g[3]);
            largest = largest.max(g[0].max(g[1]).max(g[2].max(g[3])));
            at += 4 * stride;
        }
        for (k, start) in quads.into_remainder().iter_mut().enumerate() {
            let g = component::<B>(&from[at + k * stride..]);
            *start = total as u32;
            total += g;
            largest = largest.max(g);
        }
        (sums.total, sums.largest[0]) = (total, largest);
        if !starts.is_empty() {
            sums.largest[1] = sums.largest[1].max(1);
            sums.largest[2] = sums.largest[2].max(1);
        }
        return;
    }
    for (i, start) in starts.iter_mut().enumerate() {
        let at = i * stride;
        let bytes = &from[at..at + B * C];
        let mut grid = [1u64; 3];
        for (c, g) in grid.iter_mut().enumerate().take(C) {
            *g = component::<B>(&bytes[c * B..]);
        }
        sums.add(start, grid);
    }
}

/// The `B`-byte (4 or 2) little-endian component at the start of `bytes`
/// (0 past their end, as [`GridReader::grid`] reads it).
#[inline(always)]
fn component<const B: usize>(bytes: &[u8]) -> u64 {
    if B == 4 {
        bytes.first_chunk::<4>().map_or(0, |&word| u64::from(u32::from_le_bytes(word)))
    } else {
        bytes.first_chunk::<2>().map_or(0, |&half| u64::from(u16::from_le_bytes(half)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The total and the starts, record by record through `grid` (the
    /// reference `scan` must agree with).
    fn by_record(read: &GridReader, payloads: &[u8], stride: usize, count: usize) -> (Vec<u32>, GridSums) {
        let mut sums = GridSums::default();
        let mut starts = vec![0; count];
        for (i, start) in starts.iter_mut().enumerate() {
            sums.add(start, read.grid(payloads, i * stride));
        }
        (starts, sums)
    }

    #[test]
    fn scans_agree_with_reading_record_by_record() {
        let payloads: Vec<u8> = (0..200u32).map(|i| (i * 37 % 11) as u8).collect();
        for (bytes, components) in [(4, 1), (4, 2), (4, 3), (2, 1), (2, 2), (2, 3), (4, 0)] {
            for (offset, stride) in [(0, 12), (4, 16), (2, 6), (0, 0)] {
                let read = GridReader { offset, bytes, components };
                // Some counts run past the payloads (their last grids read 0).
                for count in [0, 1, 5, 12, 40] {
                    let (want_starts, want) = by_record(&read, &payloads, stride, count);
                    let mut starts = vec![u32::MAX; count];
                    let mut sums = GridSums::default();
                    read.scan(&payloads, stride, &mut starts, &mut sums);
                    let case =
                        format!("{bytes} bytes x {components}, offset {offset}, stride {stride}, {count} records");
                    assert_eq!(starts, want_starts, "{case}");
                    assert_eq!(
                        (sums.total, sums.wrapped, sums.largest),
                        (want.total, want.wrapped, want.largest),
                        "{case}"
                    );
                }
            }
        }
    }

    #[test]
    fn inputs_are_summed_in_chunks_in_order() {
        let payloads: Vec<u8> = (0..40_000u32).flat_map(|i| (i % 7 + 1).to_le_bytes()).collect();
        let read = GridReader { offset: 0, bytes: 4, components: 1 };
        let input = |count: u32| EntryInput { slot: 0, count, payloads: &payloads, stride: 4 };
        let (a, b) = (input(5000), input(3));
        let mut starts = Vec::new();
        let sums = read.sum_inputs(&[&a, &b], |chunk| starts.extend_from_slice(chunk));
        let (mut want, first) = by_record(&read, &payloads, 4, 5000);
        let mut rest = GridSums { total: first.total, ..GridSums::default() };
        for i in 0..3 {
            want.push(0);
            rest.add(want.last_mut().unwrap(), read.grid(&payloads, i * 4));
        }
        assert_eq!(starts, want);
        assert_eq!(sums.total, rest.total);
    }
}
