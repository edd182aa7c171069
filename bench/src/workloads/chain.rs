//! `chain`: the D3D12HelloWorkGraphs chain (corpus module 01) with its 4
//! entry records, against three plain dispatches with barriers doing the same
//! work (`chain_first/second/third.comp`): the fixed cost of one graph
//! dispatch.

use crate::cmd;
use crate::pair::{self, Pair, Recording, Side};
use crate::report::Row;
use crate::scratch_search::{self, Probe};
use crate::workloads::{bytes_of, row, Ctx};
// The storage buffer after one dispatch (4 sums, then 4 counts) is the
// demo's model of the same graph.
use demo::hello::model;

/// The chain's node shaders.
const SPV: &[u8] = include_bytes!("../../../spirv-lowering/tests/corpus/01_hello_chain.spv");
const FIRST: &[u8] = include_bytes!("../../shaders/chain_first.comp.spv");
const SECOND: &[u8] = include_bytes!("../../shaders/chain_second.comp.spv");
const THIRD: &[u8] = include_bytes!("../../shaders/chain_third.comp.spv");

/// The entry records' grids (as in the demo).
pub const GRIDS: [u32; 4] = [16, 3, 9, 12];

/// Payload bytes consumed at each level: the entry records `{ gridSize,
/// recordIndex }`, then 2 `{ entryRecordIndex, incrementValue }` per
/// firstNode workgroup, then one `{ entryRecordIndex }` for each of those.
pub fn level_bytes(grids: &[u32]) -> [u64; 3] {
    let second = 2 * u64::from(grids.iter().sum::<u32>());
    [8 * grids.len() as u64, 8 * second, 4 * second]
}

/// Runs the workload.
pub fn run(ctx: &Ctx<'_>) -> Result<Row, String> {
    let gpu = ctx.gpu;
    let records: Vec<u32> = GRIDS.iter().enumerate().flat_map(|(r, &g)| [g, r as u32]).collect();
    let groups: u32 = GRIDS.iter().sum();
    let pairs = groups * 2;

    let uav_g = cmd::device_buffer(gpu, 32)?;
    let setup =
        ctx.graph(SPV, &[(c"firstNode", u32::MAX), (c"secondNode", u32::MAX), (c"thirdNode", u32::MAX)], &[&uav_g], 0)?;
    let entry = setup.graph.node_index(c"firstNode", 0)?;
    let host_records = bytes_of(&records);
    let n = GRIDS.len() as u32;

    let uav_b = cmd::device_buffer(gpu, 32)?;
    let recs = cmd::upload(gpu, &records)?;
    let pair_buf = cmd::device_buffer(gpu, 8 * u64::from(pairs))?;
    let fwd = cmd::device_buffer(gpu, 4 * u64::from(pairs))?;
    let k = crate::kernel::Kernels::new(gpu, &[FIRST, SECOND, THIRD], &[&uav_b, &recs, &pair_buf, &fwd])?;

    let (g, s) = (&setup.graph, &setup.scratch);
    let graph_side = Side {
        zero: &[&uav_g],
        prep: Box::new(|cb| g.record_setup(cb, s)),
        body: Box::new(|cb| g.record_dispatch(cb, s, entry, &host_records, n)),
        out: &uav_g,
    };
    let base_side = Side {
        zero: &[&uav_b],
        prep: Box::new(|_| {}),
        body: Box::new(|cb| {
            k.bind(cb, 0, [n, 0, 0, 0]);
            k.dispatch(cb, groups);
            cmd::compute_barrier(gpu, cb);
            k.bind(cb, 1, [pairs, 0, 0, 0]);
            k.dispatch(cb, pairs.div_ceil(64));
            cmd::compute_barrier(gpu, cb);
            k.bind(cb, 2, [pairs, 0, 0, 0]);
            k.dispatch(cb, pairs.div_ceil(32));
        }),
        out: &uav_b,
    };
    let want = model(&GRIDS);
    let recording = Recording::graph(g, s, entry, &host_records, n);
    let pair = Pair { name: "chain", graph: graph_side, baseline: base_side, want: &want, record: recording };
    let measured = pair::measure(ctx, pair)?;
    let probe =
        Probe { graph: g, zero: &[&uav_g], out: &uav_g, node: entry, records: &host_records, count: n, want: &want };
    let scratch = scratch_search::search(ctx, &probe, scratch_search::Payload::of_levels(&level_bytes(&GRIDS)))?;
    let detail = format!("4 records, {groups} + {pairs} + {pairs} threads' work, 3 nodes vs 3 dispatches");
    Ok(row("chain", detail, setup.figures(), measured, scratch))
}

#[cfg(test)]
mod tests {
    use super::{level_bytes, model, GRIDS};

    #[test]
    fn model_of_one_workgroup() {
        assert_eq!(model(&[1, 0, 0, 0]), [5, 0, 0, 0, 2, 0, 0, 0]);
    }

    #[test]
    fn the_second_level_is_the_fullest() {
        assert_eq!(level_bytes(&GRIDS), [32, 640, 320]);
    }
}
