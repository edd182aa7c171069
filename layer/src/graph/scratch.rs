//! Where everything lives in the application's scratch memory, and the
//! sizes `vkGetExecutionGraphPipelineScratchSizeAMDX` reports.
//!
//! ```text
//! fixed part (per graph)                  dynamic part (scales with the size)
//! +-------------------------------------+ +--------------------------------------+
//! | GraphContext | status words         | | payload ring half 0 | half 1         |
//! | NodeDispatch x N x 2 (parities)     | | level-0 RecordRef list               |
//! | NodeSchedule x N | NodeInfo x N     | | record index (IndexSlot x 2^k)       |
//! | OutputLink x L | slot tables        | +--------------------------------------+
//! | u64 counters x N x 2 | u32 x N      |
//! | done-group counters                 |
//! | sink                                |
//! +-------------------------------------+
//! ```
//! The dynamic part is made of units of [`UNIT`] bytes: 32 bytes of each
//! ring half (one single-record allocation of up to 16 payload bytes: a
//! 16-byte header and the record), half a level-0 `RecordRef`, and two
//! record-index slots (the index holds the records a level reads and those
//! it enqueues). Sizes:
//! - `minSize`: the fixed part plus [`MIN_UNITS`] units, and enough for the
//!   largest single allocation any node can make (the ring half must hold it);
//! - `maxSize`: `minSize` plus [`MAX_EXTRA`] (about four million single-record
//!   allocations in flight per level);
//! - `sizeGranularity`: [`GRANULARITY`].
//!
//! Work beyond what a size holds raises a status flag and is dropped; every
//! size in between is usable. The record index is the largest power of two
//! of slots that fits beside the rest.

use super::link::Graph;
use ash::vk;
use spirv_lowering::abi::{
    GraphContext, IndexSlot, NodeDispatch, NodeInfo, NodeSchedule, OutputLink, RecordRef, ALLOC_ALIGN,
    DONE_GROUPS_BYTES, DONE_GROUP_STRIDE_WORDS,
};
use spirv_lowering::{GraphTables, OutputTargets};
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

/// Status words a dispatch leaves for the host: after the inputs, after
/// each of up to [`MAX_DEPTH`](super::link::MAX_DEPTH) levels, and the final status.
pub const STATUS_WORDS: u32 = super::link::MAX_DEPTH + 2;

/// `sizeGranularity`.
pub const GRANULARITY: u64 = 4096;
/// Ring bytes per unit in each half.
const UNIT_RING_HALF: u64 = 32;
/// Level-0 records per unit (one per two units).
const UNITS_PER_LISTED_RECORD: u64 = 2;
/// Record-index slots per unit.
const UNIT_INDEX_SLOTS: u64 = 2;
/// Bytes of one unit.
pub const UNIT: u64 = 2 * UNIT_RING_HALF
    + size_of::<RecordRef>() as u64 / UNITS_PER_LISTED_RECORD
    + UNIT_INDEX_SLOTS * size_of::<IndexSlot>() as u64;
/// Units the smallest scratch holds.
pub const MIN_UNITS: u64 = 1024;
/// `maxSize - minSize`.
pub const MAX_EXTRA: u64 = 512 << 20;

fn align(value: u64, to: u64) -> u64 {
    value.div_ceil(to) * to
}

/// Offsets (from the scratch address) of the fixed part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedLayout {
    pub context: u64,
    /// [`STATUS_WORDS`] words: the status after the inputs, after each level,
    /// and at the end (see `record.rs`).
    pub level_status: u64,
    /// `NodeDispatch` arrays of each level parity.
    pub dispatches: [u64; 2],
    pub schedules: u64,
    pub node_infos: u64,
    pub links: u64,
    pub slot_tables: u64,
    /// `u64` record counters of each level parity.
    pub counts: [u64; 2],
    /// `u32` record counters of the entry passes (level 0 from device infos).
    pub entry_counts: u64,
    /// The done-group counters (`abi::DONE_GROUPS_BYTES`, right after the
    /// entry counters and aligned to their stride).
    pub done_groups: u64,
    pub sink: u64,
    pub sink_size: u64,
    /// First byte after the fixed part (a multiple of [`GRANULARITY`]).
    pub end: u64,
    /// Offset of each node's first `OutputLink` (index into the link array).
    pub first_link: Vec<u32>,
    /// Offset of each link's slot table, relative to `slot_tables`.
    pub slot_table_offsets: Vec<u64>,
}

/// Offsets of the dynamic part for one scratch size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamicLayout {
    pub halves: [u64; 2],
    pub half_size: u64,
    /// The level-0 `RecordRef` list.
    pub records: u64,
    pub record_capacity: u32,
    /// The record index.
    pub index: u64,
    /// Slots of the record index (a power of two).
    pub index_slots: u64,
}

impl DynamicLayout {
    /// First byte after the dynamic part.
    pub fn end(&self) -> u64 {
        self.index + self.index_slots * size_of::<IndexSlot>() as u64
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
        let level_status = align(size_of::<GraphContext>() as u64, 64);
        let dispatch_bytes = n * size_of::<NodeDispatch>() as u64;
        let dispatches0 = align(level_status + 4 * u64::from(STATUS_WORDS), 64);
        let dispatches = [dispatches0, dispatches0 + dispatch_bytes];
        let schedules = dispatches[1] + dispatch_bytes;
        let node_infos = schedules + n * size_of::<NodeSchedule>() as u64;
        let links = node_infos + n * size_of::<NodeInfo>() as u64;
        let slot_tables = links + links_count * size_of::<OutputLink>() as u64;
        let counts0 = align(slot_tables + table_bytes, 16);
        let counts = [counts0, counts0 + 8 * n];
        let entry_counts = counts[1] + 8 * n;
        let done_groups = align(entry_counts + 4 * n, 4 * u64::from(DONE_GROUP_STRIDE_WORDS));
        let sink = align(done_groups + DONE_GROUPS_BYTES, 64);
        let sink_size = graph
            .nodes
            .iter()
            .flat_map(|node| node.decl.info.outputs.iter())
            .map(|o| u64::from(ALLOC_ALIGN) + u64::from(o.max_payloads.max(1)) * u64::from(o.record_stride))
            .max()
            .unwrap_or(0)
            .max(64);
        let end = align(sink + sink_size, GRANULARITY);
        FixedLayout {
            context,
            level_status,
            dispatches,
            schedules,
            node_infos,
            links,
            slot_tables,
            counts,
            entry_counts,
            done_groups,
            sink,
            sink_size,
            end,
            first_link,
            slot_table_offsets,
        }
    }

    /// Where node `slot`'s kernel finds the tables (offsets from the
    /// context, which starts the scratch) and its outputs' targets.
    pub fn tables_for(&self, graph: &Graph, slot: usize) -> GraphTables {
        let outputs = graph.nodes.get(slot).map(|n| n.outputs.as_slice()).unwrap_or_default();
        let first = self.first_link.get(slot).copied().unwrap_or(0) as usize;
        GraphTables {
            schedules: self.schedules - self.context,
            nodes: self.node_infos - self.context,
            outputs: outputs
                .iter()
                .enumerate()
                .map(|(k, out)| OutputTargets {
                    table: self.slot_tables + self.slot_table_offsets.get(first + k).copied().unwrap_or(0)
                        - self.context,
                    slots: out.slots.clone(),
                })
                .collect(),
        }
    }

    /// Units needed at the least: [`MIN_UNITS`] and the largest allocation.
    fn min_units(&self) -> u64 {
        MIN_UNITS.max(self.sink_size.div_ceil(UNIT_RING_HALF))
    }

    /// Bytes of the dynamic part for `units` units (the index rounded up to a
    /// power of two of slots).
    fn dynamic_bytes(units: u64) -> u64 {
        let slots = (units * UNIT_INDEX_SLOTS).next_power_of_two();
        2 * units * UNIT_RING_HALF
            + units / UNITS_PER_LISTED_RECORD * size_of::<RecordRef>() as u64
            + slots * size_of::<IndexSlot>() as u64
    }

    /// `(minSize, maxSize, sizeGranularity)`.
    pub fn sizes(&self) -> (u64, u64, u64) {
        let min = align(self.end + Self::dynamic_bytes(self.min_units()), GRANULARITY);
        (min, min + MAX_EXTRA, GRANULARITY)
    }

    /// The dynamic part for `size` bytes of scratch; `None` below `minSize`.
    /// Memory past what the units use is not touched.
    pub fn dynamic(&self, size: u64) -> Option<DynamicLayout> {
        if size < self.sizes().0 {
            return None;
        }
        let room = size.checked_sub(self.end)?;
        // The most units whose dynamic part fits (the index's power-of-two
        // rounding makes the size a step function of the units).
        // (A unit takes at least UNIT bytes, less 8 for the list's rounding.)
        let (mut lo, mut hi) = (self.min_units(), (room + 8) / UNIT + 1);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if Self::dynamic_bytes(mid) <= room {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let units = lo;
        let half_size = units * UNIT_RING_HALF;
        let records = self.end + 2 * half_size;
        let record_capacity = (units / UNITS_PER_LISTED_RECORD).min(u64::from(u32::MAX)) as u32;
        let index = align(records + u64::from(record_capacity) * size_of::<RecordRef>() as u64, 64);
        let index_slots = (units * UNIT_INDEX_SLOTS).next_power_of_two();
        let layout = DynamicLayout {
            halves: [self.end, self.end + half_size],
            half_size,
            records,
            record_capacity,
            index,
            index_slots,
        };
        (layout.end() <= size).then_some(layout)
    }

    /// Bytes of the static tables, from `schedules` up to the end of the
    /// slot tables, for scratch at device address `base`. `schedules` gives
    /// each node's schedule.
    pub fn static_tables(&self, graph: &Graph, schedules: &[NodeSchedule], base: u64) -> Vec<u8> {
        let mut bytes = Vec::with_capacity((self.counts[0] - self.schedules) as usize);
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
                _reserved: 0,
            };
            put(
                self.node_infos + 16 * slot as u64,
                &words_of(&[info.first_link, info.max_recursion, info.self_slot, 0]),
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
}

/// Little-endian bytes of 32-bit words.
pub fn words_of(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

pub fn dispatch_words(d: &NodeDispatch) -> [u32; 12] {
    let [x, y, z] = d.indirect;
    [
        x,
        y,
        z,
        d.workgroup_count,
        d.record_count,
        d.workgroup_base,
        d.mode,
        d.key_node,
        d.records as u32,
        (d.records >> 32) as u32,
        d.input_base as u32,
        (d.input_base >> 32) as u32,
    ]
}

pub fn schedule_words(s: &NodeSchedule) -> [u32; 10] {
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
        s.reserved,
    ]
}

/// A `RecordRef`'s 16 bytes (built straight into the upload: a host dispatch
/// can have many).
pub fn record_bytes(r: &RecordRef) -> [u8; 16] {
    let mut b = [0; 16];
    b[..8].copy_from_slice(&r.payload.to_le_bytes());
    b[8..12].copy_from_slice(&r.workgroup_start.to_le_bytes());
    b[12..].copy_from_slice(&r.remaining_recursion.to_le_bytes());
    b
}

/// The words of a `GraphContext` up to (not including) `tag`, which the
/// host never writes after scratch initialisation.
pub fn context_words(c: &GraphContext) -> [u32; 34] {
    let lo = |v: u64| v as u32;
    let hi = |v: u64| (v >> 32) as u32;
    [
        lo(c.ring[0]),
        hi(c.ring[0]),
        lo(c.ring[1]),
        hi(c.ring[1]),
        c.ring_top[0],
        c.ring_top[1],
        c.ring_capacity,
        c.node_count,
        lo(c.counts[0]),
        hi(c.counts[0]),
        lo(c.counts[1]),
        hi(c.counts[1]),
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
        lo(c.index),
        hi(c.index),
        c.index_mask,
        c.status,
        c.done[0],
        c.done[1],
        c.launched[0],
        c.launched[1],
        lo(c.level_status),
        hi(c.level_status),
    ]
}

/// The record-index tag scratch initialisation starts from (tags 0 and 1
/// must never be live, so that zeroed slots read as free).
pub const FIRST_TAG: u32 = 2;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::link::{LinkedNode, LinkedOutput, NodeDecl};
    use spirv_lowering::{LaunchMode, NodeShaderInfo, OutputInfo};

    fn graph() -> Graph {
        let info = |outputs: Vec<OutputInfo>| NodeShaderInfo {
            name: "n".into(),
            shader_index: 0,
            launch: LaunchMode::Thread,
            workgroup_size: [1, 1, 1],
            input: None,
            outputs,
            max_recursion: Some(3),
            shares_input_with: None,
            is_api_entry: true,
            track_finish_writing: false,
            uses_workgroup_memory: false,
            uses_control_barriers: false,
            input_needs_contiguous_records: false,
            mesh: false,
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
        };
        let decl = |name: &str, outputs| NodeDecl { name: name.into(), index: 0, info: info(outputs) };
        Graph {
            nodes: vec![
                LinkedNode {
                    decl: decl("n", vec![out]),
                    outputs: vec![LinkedOutput { slots: vec![1, NO], record_stride: 60 }],
                    successors: Default::default(),
                    shares_with: None,
                    sharers: vec![],
                },
                LinkedNode {
                    decl: decl("m", vec![]),
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
    fn a_unit_is_one_small_allocation_in_flight() {
        assert_eq!(UNIT, 2 * 32 + 8 + 2 * 24);
    }

    #[test]
    fn sizes_are_ordered_and_every_size_between_works() {
        let fixed = FixedLayout::new(&graph());
        let (min, max, granularity) = fixed.sizes();
        assert!(min < max && granularity == GRANULARITY);
        assert_eq!(fixed.sink_size, 16 + 256 * 60);
        assert!(fixed.dynamic(min - 1).is_none());
        let mut last_units = 0;
        for size in [min, min + 1, min + granularity * 3 + 17, (min + max) / 2, max] {
            let d = fixed.dynamic(size).unwrap();
            assert!(d.half_size >= fixed.sink_size, "a half holds the largest allocation");
            assert!(d.end() <= size, "{size}: layout ends at {}", d.end());
            assert_eq!(d.halves[1], d.halves[0] + d.half_size);
            assert!(d.records >= d.halves[1] + d.half_size);
            assert!(d.index_slots.is_power_of_two() && d.index_slots >= 2 * d.half_size / 32);
            assert!(d.half_size >= last_units, "more scratch never holds less");
            last_units = d.half_size;
        }
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
        assert!(bytes.len() as u64 <= fixed.counts[0] - fixed.schedules);
        // What a kernel lowered for slot 0 is told matches the tables.
        let t = fixed.tables_for(&g, 0);
        assert_eq!(base + t.outputs[0].table, table, "slot table offset from the context");
        assert_eq!((t.schedules, t.nodes), (fixed.schedules, fixed.node_infos));
        assert_eq!((t.outputs[0].slots.clone(), t.outputs[0].consecutive()), (vec![1, NO], None));
        assert!(fixed.tables_for(&g, 1).outputs.is_empty());
    }
}
