//! `fanout`: 64k records (4k with `--quick`) into a broadcast node with a
//! dynamic grid of 1..64 workgroups each (`fanout.spvasm`). Baseline: an
//! exclusive prefix sum over the grid sizes that also writes the indirect
//! arguments (`fanout_scan.comp`), then one indirect dispatch of all the
//! workgroups, each finding its record by binary search (`fanout_work.comp`).

use crate::cmd;
use crate::pair::{self, Pair, Recording, Side};
use crate::report::Row;
use crate::scratch_search::{self, Probe};
use crate::workloads::{bytes_of, row, Ctx};

const SPV: &[u8] = include_bytes!("../../shaders/fanout.spv");
const SCAN: &[u8] = include_bytes!("../../shaders/fanout_scan.comp.spv");
const WORK: &[u8] = include_bytes!("../../shaders/fanout_work.comp.spv");

/// Workgroups per row of the baseline's 2D indirect dispatch.
const ROW: u32 = 16384;

/// Records `{ grid, id, off }`: grids 1..=64 from a fixed LCG, `off` the
/// exclusive prefix sum of the grids. Returns the words and the total grid.
pub fn records(count: u32) -> (Vec<u32>, u32) {
    let mut state = 0x2545_f491u32;
    let mut off = 0u32;
    let mut words = Vec::with_capacity(3 * count as usize);
    for id in 0..count {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let grid = 1 + (state >> 26);
        words.extend([grid, id, off]);
        off += grid;
    }
    (words, off)
}

/// `Out` after one dispatch: `32 * (id ^ w) + 496` at `off + w`.
pub fn model(words: &[u32], total: u32) -> Vec<u32> {
    let mut out = vec![0u32; total as usize];
    for r in words.chunks_exact(3) {
        for w in 0..r[0] {
            out[(r[2] + w) as usize] = 32u32.wrapping_mul(r[1] ^ w).wrapping_add(496);
        }
    }
    out
}

/// Runs the workload.
pub fn run(ctx: &Ctx<'_>) -> Result<Row, String> {
    let gpu = ctx.gpu;
    let count: u32 = if ctx.settings.quick { 4 * 1024 } else { 64 * 1024 };
    let (words, total) = records(count);
    let host_records = bytes_of(&words);

    let out_g = cmd::device_buffer(gpu, 4 * u64::from(total))?;
    let extra = 32 * 1024 * 1024 + 64 * host_records.len() as u64;
    let setup = ctx.graph(SPV, &[(c"fanout", u32::MAX)], &[&out_g], extra)?;
    let entry = setup.graph.node_index(c"fanout", 0)?;

    let out_b = cmd::device_buffer(gpu, 4 * u64::from(total))?;
    let recs = cmd::upload(gpu, &words)?;
    let starts = cmd::device_buffer(gpu, 4 * u64::from(count + 1))?;
    let args = cmd::device_buffer(gpu, 12)?;
    let k = crate::kernel::Kernels::new(gpu, &[SCAN, WORK], &[&out_b, &recs, &starts, &args])?;

    let (g, s) = (&setup.graph, &setup.scratch);
    let graph_side = Side {
        zero: &[&out_g],
        prep: Box::new(|cb| g.record_setup(cb, s)),
        body: Box::new(|cb| g.record_dispatch(cb, s, entry, &host_records, count)),
        out: &out_g,
    };
    let base_side = Side {
        zero: &[&out_b],
        prep: Box::new(|_| {}),
        body: Box::new(|cb| {
            k.bind(cb, 0, [count, ROW, 0, 0]);
            k.dispatch(cb, 1);
            cmd::compute_barrier(gpu, cb);
            k.bind(cb, 1, [count, ROW, 0, 0]);
            k.dispatch_indirect(cb, &args, 0);
        }),
        out: &out_b,
    };
    let want = model(&words, total);
    let recording = Recording::graph(g, s, entry, &host_records, count);
    let pair = Pair { name: "fanout", graph: graph_side, baseline: base_side, want: &want, record: recording };
    let measured = pair::measure(ctx, pair)?;
    let probe =
        Probe { graph: g, zero: &[&out_g], out: &out_g, node: entry, records: &host_records, count, want: &want };
    // One level: all the host records `{ grid, id, off }` at once.
    let levels = [host_records.len() as u64];
    let scratch = scratch_search::search(ctx, &probe, scratch_search::Payload::of_levels(&levels))?;
    let detail = format!("{count} records, {total} workgroups of 32 threads (grids 1..64)");
    Ok(row("fanout", detail, setup.figures(), measured, scratch))
}

#[cfg(test)]
mod tests {
    use super::{model, records};

    #[test]
    fn records_cover_the_grids() {
        let (w, total) = records(1000);
        assert!(w.chunks_exact(3).all(|r| (1..=64).contains(&r[0])));
        assert_eq!(w.chunks_exact(3).map(|r| r[0]).sum::<u32>(), total);
        assert_eq!(model(&w, total)[0], 496);
    }
}
