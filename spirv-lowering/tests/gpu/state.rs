//! The ABI-5 state one kernel runs against, built by hand in the harness
//! buffer (see [`at`]), and readers for what the kernel leaves there.
//!
//! A [`Setup`] is a small graph: per node slot a [`NodeSpec`] (its
//! `NodeSchedule`, frame geometry, `NodeInfo` and output slot tables), the
//! node under test and its level-0 records, either side by side
//! ([`Placement::Contiguous`], as a host dispatch stages them) or in the
//! node's frames ([`Placement::Framed`], as the allocations of a level
//! before would have left them, grid entries included). [`Setup::write`]
//! writes the `GraphContext`, the tables, the frame pool and the node's
//! level-0 `NodeDispatch`; the pool starts with stale keys of earlier levels
//! (tags [`TAG`] - 1 and - 2, which nothing may mistake for live frames) and
//! garbage bytes (which nothing may read as records).

use super::frames::{Place, Pool};
use super::{at, Gpu};
use spirv_lowering::abi::{
    frame_key, FrameGeometry, GraphContext, NodeDispatch, NodeInfo, NodePush, NodeSchedule, OutputLink,
    COUNTER_STRIDE_BYTES, DONE_GROUPS_BYTES, GRID_MAX_OFFSET_BYTES, NO_NODE, RECORDS_CONTIGUOUS, RECORDS_FRAMED,
    SCHEDULE_BATCHED, SCHEDULE_DYNAMIC, SCHEDULE_FLAG_FRAMELESS, SCHEDULE_FLAG_MESH, SCHEDULE_FLAG_META,
    SCHEDULE_FLAG_PINNED, SCHEDULE_STATIC,
};
use spirv_lowering::{GraphTables, LoweredNode, OutputTargets};
use std::mem::{offset_of, size_of};

/// The tag of the frames level 0 reads (`GraphContext::tag`); its outputs get `TAG + 1`.
pub const TAG: u32 = 10;
/// `NodeDispatch::level_workgroups` that no workgroup count reaches: no finisher runs.
pub const NEVER_FINISH: u32 = u32::MAX;
/// Byte that fills the frame pool before a run.
pub const POOL_GARBAGE: u8 = 0xAB;

/// One node slot of the hand-built graph.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    /// `SCHEDULE_*`.
    pub mode: u32,
    /// Records a workgroup (batched nodes).
    pub per_workgroup: u32,
    /// Workgroups a record (static grids).
    pub static_groups: u32,
    /// Dynamic grids: (byte offset, bytes per component, components).
    pub grid: (u32, u32, u32),
    /// Bytes between its records.
    pub stride: u32,
    /// The largest allocation into it (its frames' tail is one less).
    pub max_count: u32,
    /// Its frames keep a meta word per record.
    pub meta: bool,
    /// Its records are counted, never stored.
    pub frameless: bool,
    /// `NodeInfo::max_recursion`.
    pub max_recursion: u32,
    /// `NodeInfo::shader_index`.
    pub shader_index: u32,
    /// One slot table per output of the node's code, in order.
    pub outputs: Vec<Vec<u32>>,
    /// A mesh node drawn once after the last level (`SCHEDULE_FLAG_PINNED`).
    pub pinned: bool,
    /// `NodeSchedule::max_grid` (dynamic grids).
    pub max_grid: [u32; 3],
}

impl NodeSpec {
    fn with_mode(mode: u32, stride: u32) -> NodeSpec {
        NodeSpec {
            mode,
            per_workgroup: 1,
            static_groups: 1,
            grid: (0, 4, 0),
            stride,
            max_count: 1,
            meta: false,
            frameless: false,
            max_recursion: 0,
            shader_index: 0,
            outputs: vec![],
            pinned: false,
            max_grid: [65535; 3],
        }
    }

    /// A coalescing or thread node: `per_workgroup` records a workgroup.
    pub fn batched(stride: u32, per_workgroup: u32) -> NodeSpec {
        NodeSpec { per_workgroup, ..NodeSpec::with_mode(SCHEDULE_BATCHED, stride) }
    }

    /// A broadcast node with a static grid of `groups` workgroups.
    pub fn static_grid(stride: u32, groups: u32) -> NodeSpec {
        NodeSpec { static_groups: groups, ..NodeSpec::with_mode(SCHEDULE_STATIC, stride) }
    }

    /// A broadcast node whose grid is in the payload: (offset, bytes per component, components).
    pub fn dynamic(stride: u32, grid: (u32, u32, u32)) -> NodeSpec {
        NodeSpec { grid, ..NodeSpec::with_mode(SCHEDULE_DYNAMIC, stride) }
    }

    /// The largest grid its records may ask for (`MaxNumWorkgroupsAMDX`).
    pub fn max_grid(self, max_grid: [u32; 3]) -> NodeSpec {
        NodeSpec { max_grid, ..self }
    }

    pub fn max_count(self, max_count: u32) -> NodeSpec {
        NodeSpec { max_count, ..self }
    }

    /// A mesh node drawn once after the last level: its records pinned.
    pub fn pinned(self) -> NodeSpec {
        NodeSpec { pinned: true, ..self }
    }

    pub fn with_meta(self) -> NodeSpec {
        NodeSpec { meta: true, ..self }
    }

    pub fn frameless(self) -> NodeSpec {
        NodeSpec { frameless: true, ..self }
    }

    pub fn recursion(self, max_recursion: u32) -> NodeSpec {
        NodeSpec { max_recursion, ..self }
    }

    pub fn shader_index(self, shader_index: u32) -> NodeSpec {
        NodeSpec { shader_index, ..self }
    }

    /// Adds an output whose array index `i` reaches slot `slots[i]`.
    pub fn output(mut self, slots: Vec<u32>) -> NodeSpec {
        self.outputs.push(slots);
        self
    }

    /// Workgroups of a record's grid read from `payload` (dynamic grids).
    fn grid_of(&self, payload: &[u8]) -> u32 {
        let (offset, bytes, components) = self.grid;
        (0..components)
            .map(|c| {
                let at = (offset + c * bytes) as usize;
                let mut word = [0u8; 4];
                word[..bytes as usize].copy_from_slice(&payload[at..at + bytes as usize]);
                u32::from_le_bytes(word)
            })
            .product()
    }
}

/// Where the node under test finds its level-0 records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Side by side at the node's input stride, with each record's first
    /// workgroup in a `u32` array for a dynamic grid (a host dispatch).
    Contiguous,
    /// In the node's frames at [`TAG`], placed by allocations of these
    /// counts in rank order; a dynamic grid's entries list the records in
    /// reverse rank order.
    Framed(Vec<u32>),
}

/// The state for one kernel run at level 0.
#[derive(Debug, Clone)]
pub struct Setup {
    pub nodes: Vec<NodeSpec>,
    /// The node under test.
    pub slot: u32,
    /// Its level-0 payloads, by rank.
    pub records: Vec<Vec<u8>>,
    pub placement: Placement,
    /// Framed records with meta words: the recursion levels each has left.
    pub remaining: Vec<u32>,
    /// `NodeDispatch::workgroup_count` of the launch.
    pub workgroup_count: u32,
    pub frame_shift: u32,
    pub frame_count: u32,
    /// `NodeDispatch::level_workgroups` ([`NEVER_FINISH`]: no finisher).
    pub level_workgroups: u32,
    /// `NodeDispatch::status_in`.
    pub status_in: u32,
    /// Framed dynamic grids: `NodeDispatch::starts`, the workgroups of
    /// every record's grid when all are equal (0: search the entries).
    pub uniform_grid: u64,
    /// `GraphContext::homes` (0: every frame hashed).
    pub homes: u32,
}

impl Setup {
    /// Node `slot` of `nodes` with contiguous `records` and `workgroup_count`
    /// workgroups, 64 frames of 4 KiB, no finisher.
    pub fn new(nodes: Vec<NodeSpec>, slot: u32, records: Vec<Vec<u8>>, workgroup_count: u32) -> Setup {
        Setup {
            nodes,
            slot,
            records,
            placement: Placement::Contiguous,
            remaining: vec![],
            workgroup_count,
            frame_shift: 12,
            frame_count: 64,
            level_workgroups: NEVER_FINISH,
            status_in: 0,
            uniform_grid: 0,
            homes: 0,
        }
    }

    /// The same with the records in frames, made by allocations of `allocations` records.
    pub fn framed(self, allocations: Vec<u32>) -> Setup {
        Setup { placement: Placement::Framed(allocations), ..self }
    }

    pub fn node_count(&self) -> u32 {
        self.nodes.len() as u32
    }

    pub fn pool(&self) -> Pool {
        Pool { shift: self.frame_shift, count: self.frame_count, node_count: self.node_count(), homes: self.homes }
    }

    /// How node `slot`'s records sit in its frames.
    pub fn geometry(&self, slot: u32) -> FrameGeometry {
        let n = &self.nodes[slot as usize];
        FrameGeometry::new(n.stride, n.max_count, n.meta, n.frameless, self.frame_shift)
    }

    /// Index of node `slot`'s first `OutputLink`.
    fn first_link(&self, slot: usize) -> usize {
        self.nodes[..slot].iter().map(|n| n.outputs.len()).sum()
    }

    /// Writes the whole state (see the module doc).
    pub fn write(&self, g: &mut Gpu) {
        assert!(self.nodes.len() <= at::MAX_NODES && self.frame_count as usize <= at::MAX_FRAMES);
        assert!((self.frame_count as usize) << self.frame_shift <= at::POOL_SIZE, "pool too large");
        g.bytes().fill(0);
        g.bytes()[at::POOL..at::POOL + at::POOL_SIZE].fill(POOL_GARBAGE);
        self.write_stale_keys(g);
        self.write_context(g);
        self.write_tables(g);
        let (records, starts) = match &self.placement {
            Placement::Contiguous => self.write_contiguous(g),
            Placement::Framed(allocations) => {
                self.write_framed(g, allocations);
                (0, self.uniform_grid)
            }
        };
        let dispatch = NodeDispatch {
            indirect: [self.workgroup_count, 1, 1],
            workgroup_count: self.workgroup_count,
            record_count: self.records.len() as u32,
            workgroup_base: 0,
            level_workgroups: self.level_workgroups,
            mode: if self.placement == Placement::Contiguous { RECORDS_CONTIGUOUS } else { RECORDS_FRAMED },
            key_node: self.slot,
            status_in: self.status_in,
            records,
            starts,
            status: g.addr(at::STATUS_WORDS),
        };
        put_dispatch(g, dispatch_at(0, self.slot), &dispatch);
    }

    /// Keys left by earlier levels: every fourth slot of tag `TAG - 1` (the
    /// frames the level before read), the others `TAG - 2`, with low words
    /// that this run's frames use too.
    fn write_stale_keys(&self, g: &mut Gpu) {
        let pool = self.pool();
        for i in 0..self.frame_count {
            let tag = if i % 4 == 0 { TAG - 1 } else { TAG - 2 };
            g.put64(pool.key_at(i), frame_key(tag, i));
        }
    }

    fn write_context(&self, g: &mut Gpu) {
        let ctx = GraphContext {
            pool: g.addr(at::POOL),
            keys: g.addr(at::KEYS),
            frame_count: self.frame_count,
            frame_shift: self.frame_shift,
            node_count: self.node_count(),
            homes: self.homes,
            tag: TAG,
            rank_counts: at::RANKS.map(|o| g.addr(o)),
            grid_counts: at::GRIDS.map(|o| g.addr(o)),
            dispatches: at::DISPATCHES.map(|o| g.addr(o)),
            schedules: g.addr(at::SCHEDULES),
            links: g.addr(at::LINKS),
            nodes: g.addr(at::NODES),
            sink: g.addr(at::SINK),
            done_groups: g.addr(at::DONE_GROUPS),
            entry_counts: g.addr(at::ENTRY_COUNTS),
            ..GraphContext::default()
        };
        put_context(g, &ctx);
    }

    /// Node `slot`'s schedule.
    fn schedule(&self, slot: usize) -> NodeSchedule {
        let n = &self.nodes[slot];
        let geom = self.geometry(slot as u32);
        let flags = if n.meta { SCHEDULE_FLAG_META } else { 0 }
            | if n.frameless { SCHEDULE_FLAG_FRAMELESS } else { 0 }
            | if n.pinned { SCHEDULE_FLAG_MESH | SCHEDULE_FLAG_PINNED } else { 0 };
        NodeSchedule {
            mode: n.mode,
            records_per_workgroup: n.per_workgroup,
            static_groups: n.static_groups,
            grid_offset: n.grid.0,
            grid_bytes: n.grid.1,
            grid_components: n.grid.2,
            input_stride: n.stride,
            share_base: 0,
            flags,
            per_frame: geom.per_frame,
            tail: geom.tail,
            max_grid: n.max_grid,
            ..NodeSchedule::default()
        }
    }

    /// Schedules, node infos, output links and their slot tables.
    fn write_tables(&self, g: &mut Gpu) {
        for (slot, n) in self.nodes.iter().enumerate() {
            put_schedule(g, at::SCHEDULES + slot * size_of::<NodeSchedule>(), &self.schedule(slot));
            let first_link = self.first_link(slot);
            let info = NodeInfo {
                first_link: first_link as u32,
                max_recursion: n.max_recursion,
                self_slot: slot as u32,
                shader_index: n.shader_index,
            };
            put_node_info(g, at::NODES + slot * size_of::<NodeInfo>(), &info);
            for (k, slots) in n.outputs.iter().enumerate() {
                let link = first_link + k;
                assert!(link < at::MAX_LINKS && slots.len() <= at::MAX_LINK_SLOTS);
                let table = slot_table_at(link);
                for (i, s) in slots.iter().enumerate() {
                    g.put32(table + 4 * i, *s);
                }
                let stride = slots.iter().find(|&&s| s != NO_NODE).map_or(0, |&s| self.nodes[s as usize].stride);
                let l = OutputLink { slots: g.addr(table), slot_count: slots.len() as u32, record_stride: stride };
                put_link(g, at::LINKS + link * size_of::<OutputLink>(), &l);
            }
        }
    }

    /// Contiguous records (and their grids' first workgroups); returns the
    /// `NodeDispatch::records` and `starts` addresses.
    fn write_contiguous(&self, g: &mut Gpu) -> (u64, u64) {
        let node = &self.nodes[self.slot as usize];
        let stride = node.stride as usize;
        assert!(self.records.len() * stride <= at::INPUTS_SIZE, "contiguous records overflow their area");
        let mut start = 0;
        for (r, p) in self.records.iter().enumerate() {
            assert!(p.len() <= stride, "payload of {} bytes over the stride {stride}", p.len());
            g.put_bytes(at::INPUTS + r * stride, p);
            if node.mode == SCHEDULE_DYNAMIC {
                g.put32(at::STARTS + 4 * r, start);
                start += node.grid_of(p);
            }
        }
        let starts = if node.mode == SCHEDULE_DYNAMIC { g.addr(at::STARTS) } else { 0 };
        (g.addr(at::INPUTS), starts)
    }

    /// Framed records: allocations of `allocations` records in rank order,
    /// and for a dynamic grid one entry a record, in reverse rank order.
    fn write_framed(&self, g: &mut Gpu, allocations: &[u32]) {
        let (pool, geom, node) = (self.pool(), self.geometry(self.slot), &self.nodes[self.slot as usize]);
        assert_eq!(allocations.iter().sum::<u32>() as usize, self.records.len(), "allocations cover the records");
        let mut rank = 0;
        for &count in allocations {
            let r = rank as usize;
            let remaining = self.remaining.get(r).copied().unwrap_or(0);
            let payloads = &self.records[r..r + count as usize];
            pool.place_allocation(g, &geom, (TAG, self.slot, rank), payloads, remaining);
            rank += count;
        }
        if node.mode == SCHEDULE_DYNAMIC {
            let mut start = 0;
            for (e, rank) in (0..self.records.len() as u32).rev().enumerate() {
                pool.put_entry(g, (TAG, self.slot, e as u32), start, rank);
                start += node.grid_of(&self.records[rank as usize]);
            }
        }
    }

    /// Ranks of framed level-0 records that sit in a frame's tail.
    pub fn input_ranks_in_tails(&self, g: &Gpu) -> Vec<u32> {
        let geom = self.geometry(self.slot);
        (0..self.records.len() as u32)
            .filter(|&r| self.pool().locate(g, &geom, TAG, self.slot, r).is_some_and(|p| p.in_tail))
            .collect()
    }

    /// The `GraphTables` of the node under test: what the layer gives a
    /// kernel lowered against its linked graph.
    pub fn tables(&self) -> GraphTables {
        let node = &self.nodes[self.slot as usize];
        let first = self.first_link(self.slot as usize);
        let outputs = node
            .outputs
            .iter()
            .enumerate()
            .map(|(k, slots)| {
                let mut targets = slots.iter().filter(|&&s| s != NO_NODE).map(|&s| s as usize);
                OutputTargets {
                    table: (slot_table_at(first + k) - at::CTX) as u64,
                    slots: slots.clone(),
                    geometry: targets.clone().next().map_or(FrameGeometry::default(), |s| self.geometry(s as u32)),
                    dynamic: targets.clone().any(|s| self.nodes[s].mode == SCHEDULE_DYNAMIC),
                    pinned: targets.any(|s| self.nodes[s].pinned),
                }
            })
            .collect();
        GraphTables {
            schedules: (at::SCHEDULES - at::CTX) as u64,
            nodes: (at::NODES - at::CTX) as u64,
            frame_shift: self.frame_shift,
            node_count: self.node_count(),
            homes: self.homes,
            input: self.geometry(self.slot),
            outputs,
            dispatches: at::DISPATCHES.map(|o| (o - at::CTX) as u64),
            rank_counts: at::RANKS.map(|o| (o - at::CTX) as u64),
            grid_counts: at::GRIDS.map(|o| (o - at::CTX) as u64),
            launched: (0..self.nodes.len())
                .filter(|&s| self.nodes.iter().any(|n| n.outputs.iter().flatten().any(|&t| t as usize == s)))
                .map(|s| (s as u32, self.schedule(s)))
                .collect(),
            pool: (at::POOL - at::CTX) as u64,
        }
    }

    /// Runs `kernel` for the node under test at level 0 on `groups` workgroups.
    pub fn launch(&self, g: &Gpu, kernel: &LoweredNode, groups: [u32; 3]) {
        if self.placement == Placement::Contiguous {
            let stride = kernel.info.input.as_ref().map_or(4, |i| i.stride.max(4));
            assert_eq!(self.nodes[self.slot as usize].stride, stride, "contiguous records at the kernel's stride");
        }
        run_at(g, kernel, groups, 0, self.slot);
    }

    /// Node `slot`'s record of `rank` at `tag` (`None`: not in any frame).
    pub fn place(&self, g: &Gpu, tag: u32, slot: u32, rank: u32) -> Option<Place> {
        self.pool().locate(g, &self.geometry(slot), tag, slot, rank)
    }

    /// The first `words` words of node `slot`'s record of `rank` at `tag`.
    pub fn record(&self, g: &Gpu, tag: u32, slot: u32, rank: u32, words: usize) -> Option<Vec<u32>> {
        let place = self.place(g, tag, slot, rank)?;
        Some(g.words(self.pool().record_at(&self.geometry(slot), place), words))
    }

    /// Buffer offset of node `slot`'s record of `rank` at `tag`.
    pub fn record_offset(&self, g: &Gpu, tag: u32, slot: u32, rank: u32) -> Option<usize> {
        let place = self.place(g, tag, slot, rank)?;
        Some(self.pool().record_at(&self.geometry(slot), place))
    }

    /// The meta word of node `slot`'s record of `rank` at `tag`.
    pub fn meta(&self, g: &Gpu, tag: u32, slot: u32, rank: u32) -> Option<u32> {
        let place = self.place(g, tag, slot, rank)?;
        Some(g.get32(self.pool().meta_at(&self.geometry(slot), place)))
    }

    /// Every record the level wrote for node `slot` (tag `TAG + 1`), by
    /// rank, `words` words each; panics when one of its counted ranks is missing.
    pub fn outputs(&self, g: &Gpu, slot: u32, words: usize) -> Vec<Vec<u32>> {
        (0..rank_count(g, 0, slot))
            .map(|r| self.record(g, TAG + 1, slot, r, words).unwrap_or_else(|| panic!("node {slot} rank {r} missing")))
            .collect()
    }

    /// Grid entry `e` of node `slot` at `tag`: (first workgroup, rank).
    pub fn entry(&self, g: &Gpu, tag: u32, slot: u32, e: u32) -> Option<(u32, u32)> {
        let at = self.pool().entry_at(g, tag, slot, e)?;
        Some((g.get32(at), g.get32(at + 4)))
    }
}

/// Buffer offset of node `slot`'s `NodeDispatch` of level parity `parity`.
pub fn dispatch_at(parity: usize, slot: u32) -> usize {
    at::DISPATCHES[parity] + slot as usize * size_of::<NodeDispatch>()
}

/// Buffer offset of output link `link`'s slot table.
fn slot_table_at(link: usize) -> usize {
    at::SLOTS + 4 * at::MAX_LINK_SLOTS * link
}

/// Runs `kernel` as node `slot` at `level`, with its `NodeDispatch` of that level's parity.
pub fn run_at(g: &Gpu, kernel: &LoweredNode, groups: [u32; 3], level: u32, slot: u32) {
    let push = NodePush { dispatch: g.addr(dispatch_at(level as usize % 2, slot)), ctx: g.addr(at::CTX), level, slot };
    g.run(&kernel.words, &kernel.info.name, kernel.push_range.0, groups, &push);
}

/// Runs `kernel` as node `slot` at `level` on the workgroups its
/// `NodeDispatch` asks for (as `vkCmdDispatchIndirect` would).
pub fn run_indirect(g: &Gpu, kernel: &LoweredNode, level: u32, slot: u32) {
    let d = dispatch(g, level as usize % 2, slot);
    run_at(g, kernel, d.indirect, level, slot);
}

/// A `u32` field of the `GraphContext` at byte offset `field`.
pub fn ctx32(g: &Gpu, field: usize) -> u32 {
    g.get32(at::CTX + field)
}

/// `GraphContext::tag`.
pub fn tag(g: &Gpu) -> u32 {
    ctx32(g, offset_of!(GraphContext, tag))
}

/// `GraphContext::status[parity]`: the bits the level's kernels raised.
pub fn level_status(g: &Gpu, parity: usize) -> u32 {
    ctx32(g, offset_of!(GraphContext, status) + 4 * parity)
}

/// `GraphContext::done[parity]`: workgroups counted done at a level of that parity.
pub fn done(g: &Gpu, parity: usize) -> u32 {
    ctx32(g, offset_of!(GraphContext, done) + 4 * parity)
}

/// The sum of every done-group counter (both parities).
pub fn done_groups_sum(g: &Gpu) -> u64 {
    (0..DONE_GROUPS_BYTES as usize / 4).map(|k| u64::from(g.get32(at::DONE_GROUPS + 4 * k))).sum()
}

/// `GraphContext::claimed[parity]`: frames claimed at levels of that parity.
pub fn claimed(g: &Gpu, parity: usize) -> u32 {
    ctx32(g, offset_of!(GraphContext, claimed) + 4 * parity)
}

/// Records allocated for node `slot` at a level of `parity` (its rank counter).
pub fn rank_count(g: &Gpu, parity: usize, slot: u32) -> u32 {
    g.get32(at::RANKS[parity] + COUNTER_STRIDE_BYTES as usize * slot as usize)
}

/// Node `slot`'s grid counter at a level of `parity`: (entries, workgroups).
pub fn grid_count(g: &Gpu, parity: usize, slot: u32) -> (u32, u32) {
    let v = g.get64(at::GRIDS[parity] + COUNTER_STRIDE_BYTES as usize * slot as usize);
    (v as u32, (v >> 32) as u32)
}

/// The largest grid counted next to node `slot`'s grid counter of `parity`.
pub fn grid_largest(g: &Gpu, parity: usize, slot: u32) -> u32 {
    g.get32(at::GRIDS[parity] + COUNTER_STRIDE_BYTES as usize * slot as usize + GRID_MAX_OFFSET_BYTES as usize)
}

/// Host status word `k` (`NodeDispatch::status`).
pub fn host_status(g: &Gpu, k: usize) -> u32 {
    g.get32(at::STATUS_WORDS + 4 * k)
}

/// The first `words` words of the sink.
pub fn sink(g: &Gpu, words: usize) -> Vec<u32> {
    g.words(at::SINK, words)
}

/// Node `slot`'s `NodeDispatch` of level parity `parity`.
pub fn dispatch(g: &Gpu, parity: usize, slot: u32) -> NodeDispatch {
    let o = dispatch_at(parity, slot);
    let w = |f: usize| g.get32(o + f);
    let q = |f: usize| g.get64(o + f);
    NodeDispatch {
        indirect: [w(0), w(4), w(8)],
        workgroup_count: w(offset_of!(NodeDispatch, workgroup_count)),
        record_count: w(offset_of!(NodeDispatch, record_count)),
        workgroup_base: w(offset_of!(NodeDispatch, workgroup_base)),
        level_workgroups: w(offset_of!(NodeDispatch, level_workgroups)),
        mode: w(offset_of!(NodeDispatch, mode)),
        key_node: w(offset_of!(NodeDispatch, key_node)),
        status_in: w(offset_of!(NodeDispatch, status_in)),
        records: q(offset_of!(NodeDispatch, records)),
        starts: q(offset_of!(NodeDispatch, starts)),
        status: q(offset_of!(NodeDispatch, status)),
    }
}

fn put_dispatch(g: &mut Gpu, o: usize, d: &NodeDispatch) {
    for (k, v) in d.indirect.iter().enumerate() {
        g.put32(o + 4 * k, *v);
    }
    for (f, v) in [
        (offset_of!(NodeDispatch, workgroup_count), d.workgroup_count),
        (offset_of!(NodeDispatch, record_count), d.record_count),
        (offset_of!(NodeDispatch, workgroup_base), d.workgroup_base),
        (offset_of!(NodeDispatch, level_workgroups), d.level_workgroups),
        (offset_of!(NodeDispatch, mode), d.mode),
        (offset_of!(NodeDispatch, key_node), d.key_node),
        (offset_of!(NodeDispatch, status_in), d.status_in),
    ] {
        g.put32(o + f, v);
    }
    for (f, v) in [
        (offset_of!(NodeDispatch, records), d.records),
        (offset_of!(NodeDispatch, starts), d.starts),
        (offset_of!(NodeDispatch, status), d.status),
    ] {
        g.put64(o + f, v);
    }
}

fn put_context(g: &mut Gpu, c: &GraphContext) {
    let o = at::CTX;
    for (f, v) in [
        (offset_of!(GraphContext, pool), c.pool),
        (offset_of!(GraphContext, keys), c.keys),
        (offset_of!(GraphContext, rank_counts), c.rank_counts[0]),
        (offset_of!(GraphContext, rank_counts) + 8, c.rank_counts[1]),
        (offset_of!(GraphContext, grid_counts), c.grid_counts[0]),
        (offset_of!(GraphContext, grid_counts) + 8, c.grid_counts[1]),
        (offset_of!(GraphContext, dispatches), c.dispatches[0]),
        (offset_of!(GraphContext, dispatches) + 8, c.dispatches[1]),
        (offset_of!(GraphContext, schedules), c.schedules),
        (offset_of!(GraphContext, links), c.links),
        (offset_of!(GraphContext, nodes), c.nodes),
        (offset_of!(GraphContext, sink), c.sink),
        (offset_of!(GraphContext, done_groups), c.done_groups),
        (offset_of!(GraphContext, entry_counts), c.entry_counts),
    ] {
        g.put64(o + f, v);
    }
    for (f, v) in [
        (offset_of!(GraphContext, frame_count), c.frame_count),
        (offset_of!(GraphContext, frame_shift), c.frame_shift),
        (offset_of!(GraphContext, node_count), c.node_count),
        (offset_of!(GraphContext, tag), c.tag),
        (offset_of!(GraphContext, status), c.status[0]),
        (offset_of!(GraphContext, status) + 4, c.status[1]),
        (offset_of!(GraphContext, done), c.done[0]),
        (offset_of!(GraphContext, done) + 4, c.done[1]),
        (offset_of!(GraphContext, carried), c.carried),
        (offset_of!(GraphContext, homes), c.homes),
        (offset_of!(GraphContext, claimed), c.claimed[0]),
        (offset_of!(GraphContext, claimed) + 4, c.claimed[1]),
        (offset_of!(GraphContext, pinned), c.pinned),
    ] {
        g.put32(o + f, v);
    }
}

fn put_schedule(g: &mut Gpu, o: usize, s: &NodeSchedule) {
    for (f, v) in [
        (offset_of!(NodeSchedule, mode), s.mode),
        (offset_of!(NodeSchedule, records_per_workgroup), s.records_per_workgroup),
        (offset_of!(NodeSchedule, static_groups), s.static_groups),
        (offset_of!(NodeSchedule, grid_offset), s.grid_offset),
        (offset_of!(NodeSchedule, grid_bytes), s.grid_bytes),
        (offset_of!(NodeSchedule, grid_components), s.grid_components),
        (offset_of!(NodeSchedule, input_stride), s.input_stride),
        (offset_of!(NodeSchedule, share_base), s.share_base),
        (offset_of!(NodeSchedule, flags), s.flags),
        (offset_of!(NodeSchedule, per_frame), s.per_frame),
        (offset_of!(NodeSchedule, tail), s.tail),
        (offset_of!(NodeSchedule, max_grid), s.max_grid[0]),
        (offset_of!(NodeSchedule, max_grid) + 4, s.max_grid[1]),
        (offset_of!(NodeSchedule, max_grid) + 8, s.max_grid[2]),
    ] {
        g.put32(o + f, v);
    }
}

fn put_node_info(g: &mut Gpu, o: usize, n: &NodeInfo) {
    for (f, v) in [
        (offset_of!(NodeInfo, first_link), n.first_link),
        (offset_of!(NodeInfo, max_recursion), n.max_recursion),
        (offset_of!(NodeInfo, self_slot), n.self_slot),
        (offset_of!(NodeInfo, shader_index), n.shader_index),
    ] {
        g.put32(o + f, v);
    }
}

fn put_link(g: &mut Gpu, o: usize, l: &OutputLink) {
    g.put64(o + offset_of!(OutputLink, slots), l.slots);
    g.put32(o + offset_of!(OutputLink, slot_count), l.slot_count);
    g.put32(o + offset_of!(OutputLink, record_stride), l.record_stride);
}
