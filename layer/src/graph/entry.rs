//! Level 0 of a host dispatch (`vkCmdDispatchGraphAMDX`): the records,
//! payload bytes and dispatch arguments of the entry nodes, all known on the
//! host, laid out for the transfer that starts the dispatch.

use super::errors::RecordError;
use super::pipeline::GraphPipeline;
use super::scratch::{record_bytes, DynamicLayout};
use meta_shaders::{SCHEDULE_DYNAMIC, SCHEDULE_STATIC};
use spirv_lowering::abi::{NodeDispatch, RecordRef, ALLOC_ALIGN, RECORDS_LISTED};
use spirv_lowering::LaunchMode;
use std::collections::BTreeMap;

/// Records for one entry node of a host dispatch, at the node's input stride.
#[derive(Clone, Debug)]
pub struct EntryInput {
    pub slot: usize,
    pub count: u32,
    pub bytes: Vec<u8>,
}

/// Level 0 of a host dispatch: records, payload bytes and dispatch arguments.
pub(super) struct EntryLevel {
    pub payloads: Vec<u8>,
    /// The `RecordRef`s, as bytes.
    pub records: Vec<u8>,
    pub dispatches: BTreeMap<usize, NodeDispatch>,
    /// Workgroups the level's dispatches launch (x * y * z summed).
    pub launched: u32,
}

pub(super) fn entry_level(
    graph: &GraphPipeline,
    dynamic: &DynamicLayout,
    base: u64,
    inputs: &[EntryInput],
) -> Result<EntryLevel, RecordError> {
    let mut by_slot: BTreeMap<usize, Vec<&EntryInput>> = BTreeMap::new();
    for input in inputs {
        by_slot.entry(input.slot).or_default().push(input);
    }
    let mut level = EntryLevel { payloads: Vec::new(), records: Vec::new(), dispatches: BTreeMap::new(), launched: 0 };
    // Level 0 allocates in ring half 0 (parity 0): its inputs live in half 1.
    let payload_base = base + dynamic.halves[1];
    let records_base = base + dynamic.records;
    let mut record_count = 0u64;
    for (&slot, inputs) in &by_slot {
        let node = &graph.graph.nodes[slot];
        let stride = u64::from(graph.schedules[slot].input_stride);
        let recursion = node.decl.info.max_recursion.unwrap_or(0);
        // Sharers (SharesInputWithAMDX) read the same records; a grid read
        // from the payload is the same for all of them.
        let group = std::iter::once(slot).chain(node.sharers.iter().copied());
        let grid_node = group.clone().find(|&n| graph.schedules[n].mode == SCHEDULE_DYNAMIC);
        let grid_schedule = grid_node.map(|n| graph.schedules[n]);
        // The grids a node may be given (MaxNumWorkgroupsAMDX, else the
        // per-dimension limit), and the workgroups all its records may ask
        // for: past them a dispatch could run for minutes.
        let max_grid = grid_node
            .and_then(|n| match graph.graph.nodes[n].decl.info.launch {
                LaunchMode::BroadcastDynamic { max_grid } => max_grid,
                _ => None,
            })
            .unwrap_or(crate::advertise::properties().max_execution_graph_workgroup_count);
        let max_total = crate::advertise::properties().max_execution_graph_workgroups;
        let first_record = record_count;
        let mut grid_groups = 0u64;
        for input in inputs {
            let start = level.payloads.len().next_multiple_of(ALLOC_ALIGN as usize);
            level.payloads.resize(start, 0);
            level.payloads.extend_from_slice(&input.bytes);
            for i in 0..u64::from(input.count) {
                let record = RecordRef {
                    payload: payload_base + start as u64 + i * stride,
                    workgroup_start: grid_groups.min(u64::from(u32::MAX)) as u32,
                    remaining_recursion: recursion,
                };
                if let Some(schedule) = &grid_schedule {
                    let grid = grid_of(&input.bytes[(i * stride) as usize..], schedule);
                    // Saturating: three components of up to 2^32 overflow a u64.
                    let groups = grid.iter().fold(1u64, |n, &g| n.saturating_mul(g));
                    grid_groups = grid_groups.saturating_add(groups);
                    let over = grid.iter().zip(max_grid).any(|(&g, m)| g > u64::from(m));
                    if over || grid_groups > u64::from(max_total) {
                        return Err(RecordError::GridTooLarge {
                            node: node.decl.name.clone(),
                            record: record_count - first_record,
                            grid,
                            max: max_grid,
                            total: max_total,
                        });
                    }
                }
                level.records.extend_from_slice(&record_bytes(&record));
                record_count += 1;
            }
        }
        let count = (record_count - first_record) as u32;
        let records = records_base + first_record * std::mem::size_of::<RecordRef>() as u64;
        for n in group {
            let schedule = graph.schedules[n];
            let groups = match schedule.mode {
                SCHEDULE_DYNAMIC => grid_groups,
                SCHEDULE_STATIC => u64::from(count) * u64::from(schedule.static_groups),
                _ => u64::from(count.div_ceil(schedule.records_per_workgroup.max(1))),
            }
            .min(u64::from(u32::MAX)) as u32;
            let indirect = meta_shaders::split_groups(groups);
            let workgroup_base = level.launched;
            // Mesh nodes are drawn, not launched (see `abi::SCHEDULE_FLAG_MESH`).
            if schedule.flags & spirv_lowering::abi::SCHEDULE_FLAG_MESH == 0 {
                level.launched = level.launched.saturating_add(indirect[0].saturating_mul(indirect[1]));
            }
            let dispatch = NodeDispatch {
                indirect,
                workgroup_count: groups,
                record_count: count,
                workgroup_base,
                mode: RECORDS_LISTED,
                key_node: slot as u32,
                records,
                input_base: 0,
            };
            level.dispatches.insert(n, dispatch);
        }
    }
    if level.payloads.len() as u64 > dynamic.half_size {
        return Err(RecordError::PayloadsTooLarge { bytes: level.payloads.len() as u64, capacity: dynamic.half_size });
    }
    if record_count > u64::from(dynamic.record_capacity) {
        return Err(RecordError::TooManyRecords { records: record_count, capacity: dynamic.record_capacity });
    }
    Ok(level)
}

/// A dynamic-grid record's grid (absent components are 1).
fn grid_of(record: &[u8], schedule: &meta_shaders::NodeSchedule) -> [u64; 3] {
    std::array::from_fn(|c| {
        let c = c as u32;
        if c >= schedule.grid_components {
            return 1;
        }
        let at = (schedule.grid_offset + c * schedule.grid_bytes) as usize;
        let bytes = record.get(at..at + schedule.grid_bytes as usize).unwrap_or(&[]);
        match bytes {
            [a, b] => u64::from(u16::from_le_bytes([*a, *b])),
            [a, b, c, d] => u64::from(u32::from_le_bytes([*a, *b, *c, *d])),
            _ => 0,
        }
    })
}
