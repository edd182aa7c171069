//! Where everything lives in the application's scratch memory, and the
//! sizes `vkGetExecutionGraphPipelineScratchSizeAMDX` reports.
//!
//! ```text
//! fixed part (per graph)             dynamic part (scales with the size)
//! +--------------------------------+ +-------------------------------------+
//! | GraphContext x 2 | status words| | payload ring half A | half B        |
//! | NodeDispatch x N               | | RecordRef list      | OutputEntry   |
//! | NodeSchedule x N | NodeInfo x N| +-------------------------------------+
//! | OutputLink x L | slot tables   |
//! | node_counts x 2N | sink        |
//! +--------------------------------+
//! ```
//! The dynamic part is made of 128-byte units: 32 bytes of each ring half,
//! two `RecordRef`s and 32 bytes of `OutputEntry` list. One unit holds one
//! single-record allocation of up to 16 payload bytes (16-byte header plus
//! record) in flight at a level, which is the densest case (thread nodes);
//! larger records use several units' ring bytes. Sizes:
//! - `minSize`: the fixed part plus enough units for 1024 such allocations
//!   and for the largest single allocation any node can make (the ring half
//!   must hold it);
//! - `maxSize`: `minSize` plus 512 MiB (about four million allocations in
//!   flight per level: a 4M-item thread-node classification fits);
//! - `sizeGranularity`: 4096 bytes (32 units).
//!
//! Work beyond what a size holds raises a status flag and is dropped; every
//! size in between is usable.
//!
//! Level d runs with GraphContext d % 2 and its node counters: the meta pass
//! after level d reads one pair and resets the other in the same dispatch.

use super::link::Graph;
use spirv_lowering::abi::{GraphContext, NodeDispatch, NodeInfo, OutputEntry, OutputLink, RecordRef, ALLOC_ALIGN};
use std::mem::size_of;

/// Status words a dispatch leaves for the host: after the inputs, after
/// each of up to [`MAX_DEPTH`](super::link::MAX_DEPTH) levels, and the final status.
pub const STATUS_WORDS: u32 = super::link::MAX_DEPTH + 2;

/// `sizeGranularity`.
pub const GRANULARITY: u64 = 4096;
/// Bytes of one unit of the dynamic part (see the module doc).
const UNIT: u64 = 128;
const UNIT_RING_HALF: u64 = 32;
const UNIT_RECORDS: u64 = 2;
const UNIT_ENTRY_BYTES: u64 = 32;
/// Allocations the smallest scratch holds at one level.
const MIN_UNITS: u64 = 1024;
/// `maxSize - minSize`.
const MAX_EXTRA: u64 = 512 << 20;

fn align(value: u64, to: u64) -> u64 {
    value.div_ceil(to) * to
}

/// Offsets (from the scratch address) of the fixed part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedLayout {
    /// The two graph contexts (level d uses `contexts[d % 2]`).
    pub contexts: [u64; 2],
    /// [`STATUS_WORDS`] words: the status after the inputs, after each level,
    /// and at the end (see `record.rs`).
    pub level_status: u64,
    pub dispatches: u64,
    pub schedules: u64,
    pub node_infos: u64,
    pub links: u64,
    pub slot_tables: u64,
    /// One counter per node slot for each context.
    pub node_counts: [u64; 2],
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
    pub records: u64,
    pub record_capacity: u32,
    pub entries: u64,
    pub entry_capacity: u32,
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
        let context_size = align(size_of::<GraphContext>() as u64, 64);
        let contexts = [0, context_size];
        let level_status = 2 * context_size;
        let dispatches = align(level_status + 4 * u64::from(STATUS_WORDS), 16);
        let schedules = dispatches + n * size_of::<NodeDispatch>() as u64;
        let node_infos = schedules + n * size_of::<meta_shaders::NodeSchedule>() as u64;
        let links = node_infos + n * size_of::<NodeInfo>() as u64;
        let slot_tables = links + links_count * size_of::<OutputLink>() as u64;
        let node_counts = align(slot_tables + table_bytes, 16);
        let node_counts = [node_counts, node_counts + 4 * n];
        let sink = align(node_counts[1] + 4 * n, 64);
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
            contexts,
            level_status,
            dispatches,
            schedules,
            node_infos,
            links,
            slot_tables,
            node_counts,
            sink,
            sink_size,
            end,
            first_link,
            slot_table_offsets,
        }
    }

    /// Units needed at the least: [`MIN_UNITS`] and the largest allocation.
    fn min_units(&self) -> u64 {
        let largest = self.sink_size.div_ceil(UNIT_RING_HALF);
        align(MIN_UNITS.max(largest), GRANULARITY / UNIT)
    }

    /// `(minSize, maxSize, sizeGranularity)`.
    pub fn sizes(&self) -> (u64, u64, u64) {
        let min = self.end + self.min_units() * UNIT;
        (min, min + MAX_EXTRA, GRANULARITY)
    }

    /// The dynamic part for `size` bytes of scratch; `None` below `minSize`.
    /// Memory past `minSize + k * granularity` is not used.
    pub fn dynamic(&self, size: u64) -> Option<DynamicLayout> {
        let units = size.checked_sub(self.end)? / UNIT;
        if units < self.min_units() {
            return None;
        }
        let units = align(units - (GRANULARITY / UNIT - 1), GRANULARITY / UNIT).min(units);
        let half_size = units * UNIT_RING_HALF;
        let records = self.end + 2 * half_size;
        let record_capacity = (units * UNIT_RECORDS).min(u64::from(u32::MAX)) as u32;
        let entries = records + units * UNIT_RECORDS * size_of::<RecordRef>() as u64;
        let entry_capacity =
            ((units * UNIT_ENTRY_BYTES) / size_of::<OutputEntry>() as u64).min(u64::from(u32::MAX)) as u32;
        Some(DynamicLayout {
            halves: [self.end, self.end + half_size],
            half_size,
            records,
            record_capacity,
            entries,
            entry_capacity,
        })
    }

    /// Bytes of the static tables, from `dispatches` up to the end of the
    /// second `node_counts`, for scratch at device address `base`. `schedules`
    /// gives each node's meta-shader schedule.
    pub fn static_tables(&self, graph: &Graph, schedules: &[meta_shaders::NodeSchedule], base: u64) -> Vec<u8> {
        let mut bytes = Vec::with_capacity((self.sink - self.dispatches) as usize);
        let mut put = |offset: u64, data: &[u8]| {
            let at = (offset - self.dispatches) as usize;
            if bytes.len() < at + data.len() {
                bytes.resize(at + data.len(), 0);
            }
            bytes[at..at + data.len()].copy_from_slice(data);
        };
        for (slot, node) in graph.nodes.iter().enumerate() {
            let slot32 = slot as u32;
            let dispatch = NodeDispatch { node_slot: slot32, ..Default::default() };
            put(self.dispatches + 32 * slot as u64, &words_of(&dispatch_words(&dispatch)));
            let s = schedules.get(slot).copied().unwrap_or_default();
            let schedule_size = std::mem::size_of::<meta_shaders::NodeSchedule>() as u64;
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
        put(self.node_counts[1], &vec![0; 4 * graph.nodes.len()]);
        bytes
    }
}

/// Little-endian bytes of 32-bit words.
pub fn words_of(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

pub fn dispatch_words(d: &NodeDispatch) -> [u32; 8] {
    let [x, y, z] = d.indirect;
    [x, y, z, d.workgroup_count, d.record_count, d.node_slot, d.records as u32, (d.records >> 32) as u32]
}

pub fn schedule_words(s: &meta_shaders::NodeSchedule) -> [u32; 10] {
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

pub fn record_words(r: &RecordRef) -> [u32; 4] {
    [r.payload as u32, (r.payload >> 32) as u32, r.workgroup_start, r.remaining_recursion]
}

pub fn context_words(c: &GraphContext) -> [u32; 22] {
    let lo = |v: u64| v as u32;
    let hi = |v: u64| (v >> 32) as u32;
    [
        lo(c.out_payload_base),
        hi(c.out_payload_base),
        c.out_payload_capacity,
        c.out_payload_top,
        lo(c.entries),
        hi(c.entries),
        c.entry_capacity,
        c.entry_count,
        lo(c.node_counts),
        hi(c.node_counts),
        lo(c.links),
        hi(c.links),
        lo(c.nodes),
        hi(c.nodes),
        lo(c.sink),
        hi(c.sink),
        c.status,
        c.node_count,
        c.advance_groups[0],
        c.advance_groups[1],
        c.advance_groups[2],
        c._reserved,
    ]
}

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
    fn sizes_are_ordered_and_every_size_between_works() {
        let fixed = FixedLayout::new(&graph());
        let (min, max, granularity) = fixed.sizes();
        assert!(min < max && granularity == GRANULARITY);
        assert_eq!(fixed.sink_size, 16 + 256 * 60);
        assert!(fixed.dynamic(min - 1).is_none());
        for size in [min, min + 1, min + granularity * 3 + 17, (min + max) / 2, max] {
            let d = fixed.dynamic(size).unwrap();
            assert!(d.half_size >= fixed.sink_size, "a half holds the largest allocation");
            let end = d.entries + u64::from(d.entry_capacity) * 24;
            assert!(end <= size, "{size}: layout ends at {end}");
            assert_eq!(d.halves[1], d.halves[0] + d.half_size);
            assert!(d.records >= d.halves[1] + d.half_size);
        }
    }

    #[test]
    fn static_tables_point_into_scratch() {
        let g = graph();
        let fixed = FixedLayout::new(&g);
        let base = 0x1_0000_0000;
        let bytes = fixed.static_tables(&g, &[], base);
        let word = |offset: u64| {
            let at = (offset - fixed.dispatches) as usize;
            u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
        };
        assert_eq!(word(fixed.dispatches + 32 + 20), 1, "node_slot of slot 1");
        assert_eq!(word(fixed.node_infos + 4), 3, "max recursion");
        let table = u64::from(word(fixed.links)) | (u64::from(word(fixed.links + 4)) << 32);
        assert_eq!(table, base + fixed.slot_tables);
        assert_eq!((word(fixed.links + 8), word(fixed.links + 12)), (2, 60));
        assert_eq!((word(fixed.slot_tables), word(fixed.slot_tables + 4)), (1, NO));
        assert_eq!(bytes.len() as u64, fixed.node_counts[1] + 8 - fixed.dispatches);
    }
}
