//! `empty-levels`: a recursive node (`empty_levels.spvasm`, 32 levels:
//! MaxNodeRecursionAMDX 31) that only recurses while `depth < stop`. With
//! `stop = 0` one level carries work and 31 are empty, so the graph time is
//! mostly the layer's fixed cost per level; `busy-levels` (`stop = 31`) has
//! one record on every level. Baseline (`empty_level.comp`): the same 32
//! levels as 32 indirect dispatches with barriers, each level writing the
//! next level's arguments (1x1x1 or nothing, so 0x0x0).

use crate::cmd;
use crate::pair::{self, Pair, Recording, Side};
use crate::report::Row;
use crate::scratch_search::{self, Probe};
use crate::workloads::{bytes_of, row, Ctx};

const SPV: &[u8] = include_bytes!("../../shaders/empty_levels.spv");
const LEVEL: &[u8] = include_bytes!("../../shaders/empty_level.comp.spv");

/// Levels of the graph (MaxNodeRecursionAMDX 31 + the entry level).
pub const LEVELS: u32 = 32;

/// Payload bytes of a record `{ depth, stop }`: every level with work
/// consumes exactly one.
const RECORD_BYTES: u64 = 8;

/// `Out` after one dispatch: `d + 1` at every depth `d <= stop`.
pub fn model(stop: u32) -> Vec<u32> {
    (0..LEVELS).map(|d| if d <= stop { d + 1 } else { 0 }).collect()
}

/// Runs the workload with `stop` (0: empty levels; 31: one record a level).
pub fn run(ctx: &Ctx<'_>, name: &'static str, stop: u32) -> Result<Row, String> {
    let gpu = ctx.gpu;
    let out_g = cmd::device_buffer(gpu, 4 * u64::from(LEVELS))?;
    let setup = ctx.graph(SPV, &[(c"level", u32::MAX)], &[&out_g], 0)?;
    let entry = setup.graph.node_index(c"level", 0)?;
    let record = bytes_of(&[0, stop]);

    let out_b = cmd::device_buffer(gpu, 4 * u64::from(LEVELS))?;
    let args = cmd::device_buffer(gpu, 12 * u64::from(LEVELS))?;
    let k = crate::kernel::Kernels::new(gpu, &[LEVEL], &[&out_b, &args])?;

    let (g, s) = (&setup.graph, &setup.scratch);
    let graph_side = Side {
        zero: &[&out_g],
        prep: Box::new(|cb| g.record_setup(cb, s)),
        body: Box::new(|cb| g.record_dispatch(cb, s, entry, &record, 1)),
        out: &out_g,
    };
    let zero_b = [&out_b, &args];
    let base_side = Side {
        zero: &zero_b,
        prep: Box::new(|cb| {
            cmd::update(gpu, cb, &args, &[1, 1, 1]);
            cmd::transfer_to_compute(gpu, cb);
        }),
        body: Box::new(|cb| {
            for level in 0..LEVELS {
                if level > 0 {
                    cmd::compute_barrier(gpu, cb);
                }
                k.bind(cb, 0, [level, stop, 0, 0]);
                k.dispatch_indirect(cb, &args, 12 * u64::from(level));
            }
        }),
        out: &out_b,
    };
    let want = model(stop);
    let recording = Recording::graph(g, s, entry, &record, 1);
    let pair = Pair { name, graph: graph_side, baseline: base_side, want: &want, record: recording };
    let measured = pair::measure(ctx, pair)?;
    let probe = Probe { graph: g, zero: &[&out_g], out: &out_g, node: entry, records: &record, count: 1, want: &want };
    // One record a level: each level reads one and writes the next.
    let levels: Vec<u64> = (0..=stop.min(LEVELS - 1)).map(|_| RECORD_BYTES).collect();
    let scratch = scratch_search::search(ctx, &probe, scratch_search::Payload::of_levels(&levels))?;
    let detail = format!("{LEVELS} levels, {} with a record; 1 node vs {LEVELS} indirect dispatches", stop + 1);
    let mut r = row(name, detail, setup.figures(), measured, scratch);
    r.extra.push(("graph µs per level", r.graph_us / f64::from(LEVELS)));
    r.extra.push(("baseline µs per level", r.baseline_us / f64::from(LEVELS)));
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::model;

    #[test]
    fn models() {
        assert_eq!(model(0)[..3], [1, 0, 0]);
        assert_eq!(model(31)[31], 32);
    }
}
