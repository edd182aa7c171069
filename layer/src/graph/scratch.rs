//! Where everything lives in the application's scratch memory, and the
//! sizes `vkGetExecutionGraphPipelineScratchSizeAMDX` reports.
//!
//! ```text
//! fixed part (per graph)                  dynamic part (scales with the size)
//! +-------------------------------------+ +--------------------------------------+
//! | GraphContext                        | | frame pool: frame_count frames       |
//! | NodeDispatch x N x 2 (parities)     | |   (the first 2 x homes are homes)    |
//! |                                     | | frame keys: frame_count u64          |
//! | NodeSchedule x N | NodeInfo x N     | +--------------------------------------+
//! | OutputLink x L | slot tables        |
//! | rank counters x N x 2 (256 B apart) |
//! | grid counters x N x 2 (256 B apart) |
//! | u32 entry counters x (N + 1)        |
//! | done-group counters | sink          |
//! +-------------------------------------+
//! ```
//! The dynamic part is made of frames (see `frames` and
//! `spirv_lowering::abi`): each takes its bytes in the pool and a `u64` key.
//! Sizes:
//! - `minSize`: the fixed part plus the home frames (`abi::homes_for`: one
//!   per namespace and parity in a small graph) and [`MIN_FRAMES`] hashed
//!   frames;
//! - `maxSize`: `minSize` plus [`MAX_EXTRA`];
//! - `sizeGranularity`: [`GRANULARITY`].
//!
//! Work beyond what a size holds raises a status flag and is dropped; every
//! size in between is usable (the frames are as many as fit). Everything is
//! written when the scratch is initialised: the context holds the
//! addresses, so a dispatch must use the address and size its scratch was
//! initialised with (as revision 2 says: "initializes it ... with the
//! specified scratchSize").

use super::frames::Frames;
use super::link::Graph;
use ash::vk;
use spirv_lowering::abi::{
    self, FrameGeometry, GraphContext, NodeDispatch, NodeInfo, NodeSchedule, OutputLink, COUNTER_STRIDE_BYTES,
    DONE_GROUPS_BYTES, DONE_GROUP_STRIDE_WORDS,
};
use spirv_lowering::{GraphTables, LaunchMode, OutputTargets};
use std::mem::size_of;

/// Scratch memory as a buffer range.
#[derive(Clone, Copy, Debug)]
pub struct ScratchTarget {
    pub buffer: vk::Buffer,
    /// Offset of the scratch address in `buffer`.
    pub offset: u64,
    pub address: u64,
    pub size: u64,
}

/// Status words a dispatch leaves for the host (see `abi::STATUS_WORDS`).
pub const STATUS_WORDS: u32 = spirv_lowering::abi::STATUS_WORDS;
const _: () = assert!(STATUS_WORDS == super::link::MAX_DEPTH + 2);
/// Words of the fault record after the status words (see `abi::FAULT_WORDS`).
pub const FAULT_WORDS: u32 = spirv_lowering::abi::FAULT_WORDS;

/// `sizeGranularity`.
pub const GRANULARITY: u64 = 4096;
/// Frames the smallest scratch holds.
pub const MIN_FRAMES: u64 = 32;
/// `maxSize - minSize`.
pub const MAX_EXTRA: u64 = 512 << 20;
/// Bytes of a frame key.
const KEY_BYTES: u64 = 8;

fn align(value: u64, to: u64) -> u64 {
    value.div_ceil(to) * to
}

/// Offsets (from the scratch address) of the fixed part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedLayout {
    pub context: u64,
    /// `NodeDispatch` arrays of each level parity.
    pub dispatches: [u64; 2],
    pub schedules: u64,
    pub node_infos: u64,
    pub links: u64,
    pub slot_tables: u64,
    /// `u32` rank counters of each level parity.
    pub rank_counts: [u64; 2],
    /// `u64` grid counters of each level parity.
    pub grid_counts: [u64; 2],
    /// `u32` counters of the entry passes and their status word.
    pub entry_counts: u64,
    /// The done-group counters (`abi::DONE_GROUPS_BYTES`, aligned to their stride).
    pub done_groups: u64,
    pub sink: u64,
    pub sink_size: u64,
    /// First byte after the fixed part: the frame pool (a multiple of 256).
    pub end: u64,
    /// Offset of each node's first `OutputLink` (index into the link array).
    pub first_link: Vec<u32>,
    /// Offset of each link's slot table, relative to `slot_tables`.
    pub slot_table_offsets: Vec<u64>,
    /// How each node's records are kept, and the frame size.
    pub frames: Frames,
    /// Home frames per parity (`GraphContext::homes`).
    pub homes: u32,
}

/// Offsets of the dynamic part for one scratch size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamicLayout {
    /// The frame pool.
    pub pool: u64,
    pub frame_count: u32,
    /// The frames' keys.
    pub keys: u64,
}

impl DynamicLayout {
    /// First byte after the dynamic part.
    pub fn end(&self) -> u64 {
        self.keys + u64::from(self.frame_count) * KEY_BYTES
    }
}

impl FixedLayout {
    pub fn new(graph: &Graph) -> Self {
        let n = graph.nodes.len() as u64;
        let mut first_link = Vec::with_capacity(graph.nodes.len());
        let mut slot_table_offsets = Vec::new();
        let mut table_bytes = 0u64;
        for node in &graph.nodes {
            first_link.push(slot_table_offsets.len() as u32);
            for out in &node.outputs {
                slot_table_offsets.push(table_bytes);
                // At least one word: kernels may read the pointer's target.
                table_bytes += 4 * (out.slots.len() as u64).max(1);
            }
        }
        let links_count = slot_table_offsets.len() as u64;
        let context = 0;
        let dispatch_bytes = n * size_of::<NodeDispatch>() as u64;
        let dispatches0 = align(size_of::<GraphContext>() as u64, 64);
        let dispatches = [dispatches0, dispatches0 + dispatch_bytes];
        let schedules = dispatches[1] + dispatch_bytes;
        let node_infos = schedules + n * size_of::<NodeSchedule>() as u64;
        let links = node_infos + n * size_of::<NodeInfo>() as u64;
        let slot_tables = links + links_count * size_of::<OutputLink>() as u64;
        // Each node's counters a cache line (and L2 slice) of their own.
        let stride = u64::from(COUNTER_STRIDE_BYTES);
        let rank0 = align(slot_tables + table_bytes, stride);
        let rank_counts = [rank0, rank0 + stride * n];
        let grid_counts = [rank_counts[1] + stride * n, rank_counts[1] + 2 * stride * n];
        let entry_counts = grid_counts[1] + stride * n;
        let done_groups = align(entry_counts + 4 * (n + 1), 4 * u64::from(DONE_GROUP_STRIDE_WORDS));
        let sink = align(done_groups + DONE_GROUPS_BYTES, 64);
        let sink_size = graph
            .nodes
            .iter()
            .flat_map(|node| node.decl.info.outputs.iter())
            .map(|o| u64::from(o.max_payloads.max(1)) * u64::from(o.record_stride))
            .max()
            .unwrap_or(0)
            .max(64);
        let end = align(sink + sink_size, 256);
        let frames = Frames::new(graph);
        FixedLayout {
            context,
            dispatches,
            schedules,
            node_infos,
            links,
            slot_tables,
            rank_counts,
            grid_counts,
            entry_counts,
            done_groups,
            sink,
            sink_size,
            end,
            first_link,
            slot_table_offsets,
            homes: abi::homes_for(graph.nodes.len() as u32, frames.bytes()),
            frames,
        }
    }

    /// Where node `slot`'s kernel finds the tables (offsets from the
    /// context, which starts the scratch), how its records and its outputs'
    /// are kept, its outputs' targets, and the nodes a level can launch
    /// next with their `schedules`.
    pub fn tables_for(&self, graph: &Graph, slot: usize, schedules: &[NodeSchedule]) -> GraphTables {
        let dynamic = |t: u32| {
            graph
                .nodes
                .get(t as usize)
                .is_some_and(|n| matches!(n.decl.info.launch, LaunchMode::BroadcastDynamic { .. }))
        };
        // Outputs never mix pinned and other targets (see `pipeline`).
        let pinned = |t: u32| {
            schedules.get(t as usize).is_some_and(|s| s.flags & spirv_lowering::abi::SCHEDULE_FLAG_PINNED != 0)
        };
        let node = graph.nodes.get(slot);
        let outputs = node.map(|n| n.outputs.as_slice()).unwrap_or_default();
        let first = self.first_link.get(slot).copied().unwrap_or(0) as usize;
        let key = node.and_then(|n| n.shares_with).unwrap_or(slot);
        let geometry = |s: usize| self.frames.geometry.get(s).copied().unwrap_or_default();
        GraphTables {
            schedules: self.schedules - self.context,
            nodes: self.node_infos - self.context,
            frame_shift: self.frames.shift,
            node_count: graph.nodes.len() as u32,
            homes: self.homes,
            input: geometry(key),
            outputs: outputs
                .iter()
                .enumerate()
                .map(|(k, out)| {
                    let mut targets = out.slots.iter().filter(|&&s| s != spirv_lowering::abi::NO_NODE);
                    OutputTargets {
                        table: self.slot_tables + self.slot_table_offsets.get(first + k).copied().unwrap_or(0)
                            - self.context,
                        slots: out.slots.clone(),
                        geometry: targets.clone().next().map_or(FrameGeometry::default(), |&t| geometry(t as usize)),
                        dynamic: targets.clone().any(|&t| dynamic(t)),
                        pinned: targets.any(|&t| pinned(t)),
                    }
                })
                .collect(),
            dispatches: self.dispatches.map(|d| d - self.context),
            rank_counts: self.rank_counts.map(|d| d - self.context),
            grid_counts: self.grid_counts.map(|d| d - self.context),
            launched: launched_after_entry(graph)
                .into_iter()
                .map(|s| (s as u32, schedules.get(s).copied().unwrap_or_default()))
                .collect(),
            pool: self.end - self.context,
        }
    }

    /// Bytes a frame takes in the dynamic part (its bytes and its key).
    fn frame_cost(&self) -> u64 {
        self.frames.bytes() + KEY_BYTES
    }

    /// `(minSize, maxSize, sizeGranularity)`.
    pub fn sizes(&self) -> (u64, u64, u64) {
        let frames = 2 * u64::from(self.homes) + MIN_FRAMES;
        let min = align(self.end + frames * self.frame_cost(), GRANULARITY);
        (min, min + MAX_EXTRA, GRANULARITY)
    }

    /// The dynamic part for `size` bytes of scratch (as many frames as fit);
    /// `None` below `minSize`.
    pub fn dynamic(&self, size: u64) -> Option<DynamicLayout> {
        if size < self.sizes().0 {
            return None;
        }
        let room = size.checked_sub(self.end)?;
        let frame_count = (room / self.frame_cost()).min(u64::from(u32::MAX >> 1)) as u32;
        let pool = self.end;
        let layout = DynamicLayout { pool, frame_count, keys: pool + u64::from(frame_count) * self.frames.bytes() };
        (layout.end() <= size).then_some(layout)
    }

    /// Bytes of the static tables, from `schedules` up to the end of the
    /// slot tables, for scratch at device address `base`. `schedules` gives
    /// each node's schedule.
    pub fn static_tables(&self, graph: &Graph, schedules: &[NodeSchedule], base: u64) -> Vec<u8> {
        let mut bytes = Vec::with_capacity((self.rank_counts[0] - self.schedules) as usize);
        let mut put = |offset: u64, data: &[u8]| {
            let at = (offset - self.schedules) as usize;
            if bytes.len() < at + data.len() {
                bytes.resize(at + data.len(), 0);
            }
            bytes[at..at + data.len()].copy_from_slice(data);
        };
        for (slot, node) in graph.nodes.iter().enumerate() {
            let slot32 = slot as u32;
            let s = schedules.get(slot).copied().unwrap_or_default();
            let schedule_size = size_of::<NodeSchedule>() as u64;
            put(self.schedules + schedule_size * slot as u64, &words_of(&schedule_words(&s)));
            let info = NodeInfo {
                first_link: self.first_link[slot],
                max_recursion: node.decl.info.max_recursion.unwrap_or(0),
                self_slot: slot32,
                shader_index: node.decl.index,
            };
            put(
                self.node_infos + 16 * slot as u64,
                &words_of(&[info.first_link, info.max_recursion, info.self_slot, info.shader_index]),
            );
            for (o, out) in node.outputs.iter().enumerate() {
                let link = self.first_link[slot] as usize + o;
                let table = self.slot_tables + self.slot_table_offsets[link];
                let address = base + table;
                let link_words = [address as u32, (address >> 32) as u32, out.slots.len() as u32, out.record_stride];
                put(self.links + 16 * link as u64, &words_of(&link_words));
                let slots = if out.slots.is_empty() { vec![spirv_lowering::abi::NO_NODE] } else { out.slots.clone() };
                put(table, &words_of(&slots));
            }
        }
        bytes
    }

    /// The context of a graph whose scratch is at device address `base`
    /// with the dynamic part `dynamic`; the tag is written apart.
    pub fn context(&self, graph: &Graph, dynamic: &DynamicLayout, base: u64) -> GraphContext {
        GraphContext {
            pool: base + dynamic.pool,
            keys: base + dynamic.keys,
            frame_count: dynamic.frame_count,
            homes: self.homes,
            frame_shift: self.frames.shift,
            node_count: graph.nodes.len() as u32,
            tag: 0,
            rank_counts: [base + self.rank_counts[0], base + self.rank_counts[1]],
            grid_counts: [base + self.grid_counts[0], base + self.grid_counts[1]],
            dispatches: [base + self.dispatches[0], base + self.dispatches[1]],
            schedules: base + self.schedules,
            links: base + self.links,
            nodes: base + self.node_infos,
            sink: base + self.sink,
            status: [0, 0],
            done: [0, 0],
            carried: 0,
            done_groups: base + self.done_groups,
            entry_counts: base + self.entry_counts,
            claimed: [0, 0],
            pinned: 0,
            _reserved: 0,
        }
    }
}

/// The slots that can have records after level 0: every output's targets,
/// with the nodes that share input with them (they read the same records).
fn launched_after_entry(graph: &Graph) -> Vec<usize> {
    let group = |s: usize| graph.nodes.get(s).and_then(|n| n.shares_with).unwrap_or(s);
    let targeted: std::collections::BTreeSet<usize> = graph
        .nodes
        .iter()
        .flat_map(|n| n.outputs.iter().flat_map(|o| o.slots.iter()))
        .filter(|&&s| s != spirv_lowering::abi::NO_NODE)
        .map(|&s| group(s as usize))
        .collect();
    (0..graph.nodes.len()).filter(|&s| targeted.contains(&group(s))).collect()
}

/// Little-endian bytes of 32-bit words.
pub fn words_of(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

pub fn dispatch_words(d: &NodeDispatch) -> [u32; 16] {
    let [x, y, z] = d.indirect;
    let lo = |v: u64| v as u32;
    let hi = |v: u64| (v >> 32) as u32;
    [
        x,
        y,
        z,
        d.workgroup_count,
        d.record_count,
        d.workgroup_base,
        d.level_workgroups,
        d.mode,
        d.key_node,
        d.status_in,
        lo(d.records),
        hi(d.records),
        lo(d.starts),
        hi(d.starts),
        lo(d.status),
        hi(d.status),
    ]
}

pub fn schedule_words(s: &NodeSchedule) -> [u32; 16] {
    [
        s.mode,
        s.records_per_workgroup,
        s.static_groups,
        s.grid_offset,
        s.grid_bytes,
        s.grid_components,
        s.input_stride,
        s.share_base,
        s.flags,
        s.per_frame,
        s.tail,
        s.input_size,
        s.max_grid[0],
        s.max_grid[1],
        s.max_grid[2],
        s._reserved,
    ]
}

/// The words of a `GraphContext`.
pub fn context_words(c: &GraphContext) -> [u32; 42] {
    let lo = |v: u64| v as u32;
    let hi = |v: u64| (v >> 32) as u32;
    [
        lo(c.pool),
        hi(c.pool),
        lo(c.keys),
        hi(c.keys),
        c.frame_count,
        c.frame_shift,
        c.node_count,
        c.tag,
        lo(c.rank_counts[0]),
        hi(c.rank_counts[0]),
        lo(c.rank_counts[1]),
        hi(c.rank_counts[1]),
        lo(c.grid_counts[0]),
        hi(c.grid_counts[0]),
        lo(c.grid_counts[1]),
        hi(c.grid_counts[1]),
        lo(c.dispatches[0]),
        hi(c.dispatches[0]),
        lo(c.dispatches[1]),
        hi(c.dispatches[1]),
        lo(c.schedules),
        hi(c.schedules),
        lo(c.links),
        hi(c.links),
        lo(c.nodes),
        hi(c.nodes),
        lo(c.sink),
        hi(c.sink),
        c.status[0],
        c.status[1],
        c.done[0],
        c.done[1],
        c.carried,
        c.homes,
        lo(c.done_groups),
        hi(c.done_groups),
        lo(c.entry_counts),
        hi(c.entry_counts),
        c.claimed[0],
        c.claimed[1],
        c.pinned,
        c._reserved,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::link::{LinkedNode, LinkedOutput, NodeDecl};
    use spirv_lowering::{InputPayload, NodeShaderInfo, OutputInfo};

    /// Node "n" (recursive) sends up to 256 60-byte records to "m"[0]; "m" reads them.
    pub(crate) fn graph() -> Graph {
        let info = |outputs: Vec<OutputInfo>, input: Option<InputPayload>| NodeShaderInfo {
            max_recursion: Some(3),
            ..crate::graph::link::test_node_info("n", 0, input, outputs)
        };
        let out = OutputInfo {
            type_id: 1,
            name: "m".into(),
            name_spec_id: None,
            base_index: 0,
            array_size: Some(2),
            sparse: true,
            max_payloads: 256,
            shares_limits_with: None,
            payload_size: 60,
            record_stride: 60,
            track_finish_writing: false,
            visibilities: vec![],
            length_queried: false,
        };
        let input = InputPayload {
            size: 60,
            stride: 60,
            dispatch_grid: None,
            max_payloads: 1,
            track_finish_writing: false,
            implicit: false,
        };
        let decl = |name: &str, outputs, input| NodeDecl { name: name.into(), index: 0, info: info(outputs, input) };
        Graph {
            nodes: vec![
                LinkedNode {
                    decl: decl("n", vec![out], None),
                    outputs: vec![LinkedOutput { slots: vec![1, NO], record_stride: 60 }],
                    successors: Default::default(),
                    shares_with: None,
                    sharers: vec![],
                },
                LinkedNode {
                    decl: decl("m", vec![], Some(input)),
                    outputs: vec![],
                    successors: Default::default(),
                    shares_with: None,
                    sharers: vec![],
                },
            ],
            notes: vec![],
        }
    }
    const NO: u32 = spirv_lowering::abi::NO_NODE;

    #[test]
    fn sizes_are_ordered_and_every_size_between_works() {
        let fixed = FixedLayout::new(&graph());
        let (min, max, granularity) = fixed.sizes();
        assert!(min < max && granularity == GRANULARITY);
        assert_eq!(fixed.sink_size, 256 * 60, "the largest allocation");
        assert!(fixed.dynamic(min - 1).is_none());
        let mut last = 0;
        for size in [min, min + 1, min + granularity * 3 + 17, (min + max) / 2, max] {
            let d = fixed.dynamic(size).unwrap();
            assert!(u64::from(d.frame_count) >= MIN_FRAMES, "{size}");
            assert!(d.end() <= size, "{size}: layout ends at {}", d.end());
            assert_eq!((d.pool, d.keys), (fixed.end, fixed.end + u64::from(d.frame_count) * fixed.frames.bytes()));
            assert!(d.pool % 256 == 0, "frames stay aligned for every record type");
            assert!(d.frame_count >= last, "more scratch never holds less");
            // The next frame would not fit: the frames use the size.
            assert!(d.end() + fixed.frames.bytes() + 8 > size);
            last = d.frame_count;
        }
    }

    #[test]
    fn counters_sit_a_cache_line_apart() {
        let fixed = FixedLayout::new(&graph());
        let stride = u64::from(COUNTER_STRIDE_BYTES);
        assert_eq!(fixed.rank_counts[0] % stride, 0);
        assert_eq!(fixed.rank_counts[1] - fixed.rank_counts[0], 2 * stride, "two nodes");
        assert_eq!(fixed.grid_counts[0] - fixed.rank_counts[1], 2 * stride);
        assert_eq!(fixed.grid_counts[1] - fixed.grid_counts[0], 2 * stride);
        assert!(fixed.entry_counts >= fixed.grid_counts[1] + 2 * stride);
        assert!(fixed.done_groups >= fixed.entry_counts + 4 * 3, "two counters and the status word");
    }

    #[test]
    fn static_tables_point_into_scratch() {
        let g = graph();
        let fixed = FixedLayout::new(&g);
        let base = 0x1_0000_0000;
        let bytes = fixed.static_tables(&g, &[], base);
        let word = |offset: u64| {
            let at = (offset - fixed.schedules) as usize;
            u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
        };
        assert_eq!(word(fixed.node_infos + 16 + 8), 1, "self slot of slot 1");
        assert_eq!(word(fixed.node_infos + 4), 3, "max recursion");
        let table = u64::from(word(fixed.links)) | (u64::from(word(fixed.links + 4)) << 32);
        assert_eq!(table, base + fixed.slot_tables);
        assert_eq!((word(fixed.links + 8), word(fixed.links + 12)), (2, 60));
        assert_eq!((word(fixed.slot_tables), word(fixed.slot_tables + 4)), (1, NO));
        assert!(bytes.len() as u64 <= fixed.rank_counts[0] - fixed.schedules);
        // What a kernel lowered for slot 0 is told matches the tables and frames.
        let schedules =
            [NodeSchedule { mode: 1, ..Default::default() }, NodeSchedule { mode: 2, ..Default::default() }];
        let t = fixed.tables_for(&g, 0, &schedules);
        assert_eq!(base + t.outputs[0].table, table, "slot table offset from the context");
        assert_eq!((t.schedules, t.nodes), (fixed.schedules, fixed.node_infos));
        assert_eq!((t.outputs[0].slots.clone(), t.outputs[0].consecutive()), (vec![1, NO], None));
        assert_eq!(t.outputs[0].geometry, fixed.frames.geometry[1], "the target's frames");
        assert_eq!((t.frame_shift, t.node_count), (fixed.frames.shift, 2));
        assert_eq!((t.dispatches, t.rank_counts), (fixed.dispatches, fixed.rank_counts), "the context is at 0");
        assert_eq!(t.launched, vec![(1, schedules[1])], "only slot 1 is a target");
        let m = fixed.tables_for(&g, 1, &schedules);
        assert!(m.outputs.is_empty());
        assert_eq!(m.input, fixed.frames.geometry[1], "a node reads its own frames");
    }

    #[test]
    fn the_context_points_at_the_layout() {
        let g = graph();
        let fixed = FixedLayout::new(&g);
        let base = 0x2_0000_0000;
        let d = fixed.dynamic(fixed.sizes().0).unwrap();
        let c = fixed.context(&g, &d, base);
        assert_eq!((c.pool, c.keys, c.frame_count), (base + d.pool, base + d.keys, d.frame_count));
        assert_eq!((c.rank_counts[1], c.grid_counts[0]), (base + fixed.rank_counts[1], base + fixed.grid_counts[0]));
        assert_eq!((c.node_count, c.frame_shift), (2, fixed.frames.shift));
        let words = context_words(&c);
        assert_eq!(words.len() * 4, std::mem::size_of::<GraphContext>());
        assert_eq!((words[0], words[1]), ((base + d.pool) as u32, ((base + d.pool) >> 32) as u32));
    }
}
