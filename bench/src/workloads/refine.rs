//! `refine`: adaptive subdivision of an N x N Mandelbrot image (N = 2048:
//! 11 levels, recursion depth 10; 512 with `--quick`). The graph and its CPU
//! model are `demo::refine` (shared with the demo's picture).
//! Baseline (`refine_*.comp`): ping-pong tile lists with one indirect tile
//! dispatch per level, a fill dispatch per level beside the next level's
//! tile dispatch, and one leaf dispatch at the end.

use crate::cmd;
use crate::pair::{self, Pair, Recording, Side};
use crate::report::Row;
use crate::scratch_search::{self, Probe};
use crate::workloads::{row, Ctx};
use demo::refine::{model, SPV};

const TILE: &[u8] = include_bytes!("../../shaders/refine_tile.comp.spv");
const FILL: &[u8] = include_bytes!("../../shaders/refine_fill.comp.spv");
const LEAF: &[u8] = include_bytes!("../../shaders/refine_leaf.comp.spv");

/// Entries of each baseline list (tile, fill and leaf lists).
const CAP: u32 = 1 << 19;
/// Words of the baseline's state (per-level arguments and counts).
const STATE_WORDS: usize = 132;

/// Runs the workload.
pub fn run(ctx: &Ctx<'_>) -> Result<Row, String> {
    let gpu = ctx.gpu;
    let n: u32 = if ctx.settings.quick { 512 } else { 2048 };
    let step = demo::refine::step(n);
    let levels = n.trailing_zeros(); // sizes n .. 2
    let pixels = (n * n) as usize;
    let params = cmd::upload(gpu, &[n, step])?;

    let image_g = cmd::device_buffer(gpu, 4 * pixels as u64)?;
    let setup = ctx.graph(SPV, &demo::refine::NODES, &[&image_g, &params], 128 << 20)?;
    let entry = setup.graph.node_index(c"tile", 0)?;
    let record = demo::refine::entry_record(n);

    let image_b = cmd::device_buffer(gpu, 4 * pixels as u64)?;
    let state = cmd::device_buffer(gpu, 4 * STATE_WORDS as u64)?;
    let lists = cmd::device_buffer(gpu, 16 * 5 * u64::from(CAP))?;
    let k = crate::kernel::Kernels::new(gpu, &[TILE, FILL, LEAF], &[&image_b, &params, &state, &lists])?;
    let mut init = vec![0u32; STATE_WORDS];
    for a in (0..STATE_WORDS).step_by(4) {
        init[a + 1] = 1;
        init[a + 2] = 1;
    }
    init[0] = 1;
    init[3] = 1;

    let (g, s) = (&setup.graph, &setup.scratch);
    let graph_side = Side {
        zero: &[&image_g],
        prep: Box::new(|cb| g.record_setup(cb, s)),
        body: Box::new(|cb| g.record_dispatch(cb, s, entry, &record, 1)),
        out: &image_g,
    };
    let zero_b = [&image_b];
    let base_side = Side {
        zero: &zero_b,
        prep: Box::new(|cb| {
            cmd::update(gpu, cb, &state, &init);
            cmd::update(gpu, cb, &lists, &[0, 0, n, 0]);
            cmd::transfer_to_compute(gpu, cb);
        }),
        body: Box::new(|cb| {
            let p = |l: u32| [l, 0, CAP, 0];
            k.bind(cb, 0, p(0));
            k.dispatch_indirect(cb, &state, 0);
            for l in 0..levels {
                cmd::compute_barrier(gpu, cb);
                k.bind(cb, 1, p(l));
                k.dispatch_indirect(cb, &state, 4 * u64::from(64 + 4 * l));
                if l + 1 < levels {
                    k.bind(cb, 0, p(l + 1));
                    k.dispatch_indirect(cb, &state, 16 * u64::from(l + 1));
                }
            }
            cmd::compute_barrier(gpu, cb);
            k.bind(cb, 2, p(0));
            k.dispatch_indirect(cb, &state, 4 * 128);
        }),
        out: &image_b,
    };
    let m = model(n, step);
    let want = &m.image;
    let recording = Recording::graph(g, s, entry, &record, 1);
    let pair = Pair { name: "refine", graph: graph_side, baseline: base_side, want, record: recording };
    let measured = pair::measure(ctx, pair)?;
    let probe = Probe { graph: g, zero: &[&image_g], out: &image_g, node: entry, records: &record, count: 1, want };
    let scratch = scratch_search::search(ctx, &probe, scratch_search::Payload::of_levels(&m.level_bytes()))?;
    let detail = format!("{n}x{n} Mandelbrot, {levels} levels (recursion {}), {} 2x2 leaves", levels - 1, m.leaves);
    Ok(row("refine", detail, setup.figures(), measured, scratch))
}
