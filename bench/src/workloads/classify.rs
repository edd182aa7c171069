//! `classify`: items hashed into 64 bins; every item goes as a thread record
//! to the bin's node of a 64-node array (`classify.spvasm`: one `bin` entry
//! point created 64 times with index overrides), which runs a fixed 16-step
//! ALU loop and writes the item's result. Baseline (`classify_*.comp`):
//! atomic bin counts, a prefix sum (with per-bin indirect arguments), a
//! scatter into per-bin lists, then one indirect dispatch per bin.
//!
//! Sizes: `classify` 1M items (64k with `--quick`), the size of the first
//! published figures; `classify-4m` 4M (256k with `--quick`; a level of 4M
//! single-record allocations needs 512 MiB of scratch units, which the
//! layer's `maxSize`, `minSize` + 512 MiB, holds).

use crate::cmd;
use crate::pair::{self, Pair, Recording, Side};
use crate::report::Row;
use crate::scratch_search::{self, Probe};
use crate::workloads::{bytes_of, row, Ctx};

const SPV: &[u8] = include_bytes!("../../shaders/classify.spv");
const COUNT: &[u8] = include_bytes!("../../shaders/classify_count.comp.spv");
const SCAN: &[u8] = include_bytes!("../../shaders/classify_scan.comp.spv");
const SCATTER: &[u8] = include_bytes!("../../shaders/classify_scatter.comp.spv");
const BIN: &[u8] = include_bytes!("../../shaders/classify_bin.comp.spv");

/// Bins (nodes of the array).
pub const BINS: u32 = 64;
/// Threads per workgroup of the entry node.
const GROUP: u32 = 64;
/// Words of the baseline's meta buffer: counts, offsets, cursors, arguments.
const META_WORDS: u32 = 192 + 3 * BINS;

/// Payload bytes of a thread record `{ i, item }`; level 1 holds one per item.
const BIN_RECORD_BYTES: u64 = 8;

/// The bin of an item (as the shaders compute it).
pub fn bin_of(item: u32) -> u32 {
    item.wrapping_mul(2_654_435_761) >> 26
}

/// The per-bin work (as the shaders compute it).
pub fn shade(item: u32, k: u32) -> u32 {
    (0..16).fold(item, |x, _| x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223) ^ k)
}

/// `count` items from a fixed LCG.
pub fn items(count: u32) -> Vec<u32> {
    let mut state = 0x1234_5678u32;
    (0..count)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            state
        })
        .collect()
}

/// Runs the workload with `full` items (`quick` with `--quick`), multiples of 64.
pub fn run(ctx: &Ctx<'_>, name: &'static str, full: u32, quick: u32) -> Result<Row, String> {
    let gpu = ctx.gpu;
    let count = if ctx.settings.quick { quick } else { full };
    if count == 0 || count % GROUP != 0 {
        return Err(format!("{name}: {count} items is not a positive multiple of {GROUP}"));
    }
    let items = items(count);
    let item_buf = cmd::upload(gpu, &items)?;
    let out_g = cmd::device_buffer(gpu, 4 * u64::from(count))?;
    let mut stages = vec![(c"classify", u32::MAX)];
    stages.extend((0..BINS).map(|k| (c"bin", k)));
    // 128 bytes of scratch units per thread record (see the module doc).
    let setup = ctx.graph(SPV, &stages, &[&item_buf, &out_g], 128 * u64::from(count) + (1 << 20))?;
    let entry = setup.graph.node_index(c"classify", 0)?;
    let record = bytes_of(&[count / GROUP, count]);

    let out_b = cmd::device_buffer(gpu, 4 * u64::from(count))?;
    let meta = cmd::device_buffer(gpu, 4 * u64::from(META_WORDS))?;
    let list = cmd::device_buffer(gpu, 4 * u64::from(count))?;
    let k = crate::kernel::Kernels::new(gpu, &[COUNT, SCAN, SCATTER, BIN], &[&item_buf, &out_b, &meta, &list])?;

    let (g, s) = (&setup.graph, &setup.scratch);
    let graph_side = Side {
        zero: &[&out_g],
        prep: Box::new(|cb| g.record_setup(cb, s)),
        body: Box::new(|cb| g.record_dispatch(cb, s, entry, &record, 1)),
        out: &out_g,
    };
    let zero_b = [&out_b, &meta];
    let base_side = Side {
        zero: &zero_b,
        prep: Box::new(|_| {}),
        body: Box::new(|cb| {
            let p = [count, 0, 0, 0];
            k.bind(cb, 0, p);
            k.dispatch(cb, count.div_ceil(256));
            cmd::compute_barrier(gpu, cb);
            k.bind(cb, 1, p);
            k.dispatch(cb, 1);
            cmd::compute_barrier(gpu, cb);
            k.bind(cb, 2, p);
            k.dispatch(cb, count.div_ceil(256));
            cmd::compute_barrier(gpu, cb);
            for b in 0..BINS {
                k.bind(cb, 3, [b, 0, 0, 0]);
                k.dispatch_indirect(cb, &meta, 4 * u64::from(192 + 3 * b));
            }
        }),
        out: &out_b,
    };
    let want: Vec<u32> = items.iter().map(|&it| shade(it, bin_of(it))).collect();
    let recording = Recording::graph(g, s, entry, &record, 1);
    let pair = Pair { name, graph: graph_side, baseline: base_side, want: &want, record: recording };
    let measured = pair::measure(ctx, pair)?;
    let probe = Probe { graph: g, zero: &[&out_g], out: &out_g, node: entry, records: &record, count: 1, want: &want };
    let levels = [record.len() as u64, BIN_RECORD_BYTES * u64::from(count)];
    let scratch = scratch_search::search(ctx, &probe, scratch_search::Payload::of_levels(&levels))?;
    let detail = format!("{count} items into {BINS} bins (thread node array) vs count+scan+scatter+{BINS} indirect");
    Ok(row(name, detail, setup.figures(), measured, scratch))
}

#[cfg(test)]
mod tests {
    use super::{bin_of, items, BINS};

    #[test]
    fn items_spread_over_all_bins() {
        let mut seen = [false; BINS as usize];
        items(4096).iter().for_each(|&it| seen[bin_of(it) as usize] = true);
        assert!(seen.iter().all(|&s| s));
    }
}
