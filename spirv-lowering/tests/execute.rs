//! Runs lowered kernels on a real Vulkan device (lavapipe here; any Vulkan 1.3
//! device with buffer device address and int64) against a hand-built ABI
//! state (version 5, see `gpu::state`), and checks what they wrote: record
//! selection per launch mode from contiguous and framed level-0 records
//! (through frames' tails and grid entries), the node-semantics builtins,
//! records placed by rank in their target's frames (tail and meta words
//! included), rank and grid counters, status bits, and the finisher's next
//! level. Most kernels are lowered without the graph's tables (they read
//! geometry from the schedules); the `*_with_tables` tests lower against
//! them, as the layer does. Without a usable device the tests fail with a
//! message (set SPIRV_LOWERING_NO_GPU=1 to skip them explicitly). A test
//! whose device lacks what it needs skips through [`skip`], which CI sees.

mod common;
mod gpu;

use gpu::state::{
    claimed, dispatch, done, done_groups_sum, grid_count, grid_largest, host_status, level_status, rank_count, run_at,
    run_indirect, sink, tag, NodeSpec, Setup, TAG,
};
use gpu::{at, Gpu};
use spirv_lowering::abi::{
    NodeDispatch, COUNTER_STRIDE_BYTES, NO_NODE, RECORDS_FRAMED, STATUS_FRAME_RANGE, STATUS_INVALID_ENTRY,
    STATUS_INVALID_NODE, STATUS_PAYLOAD_OVERFLOW, STATUS_WORDS,
};
use spirv_lowering::{lower, LowerOptions, LoweredNode};

fn device() -> Option<Gpu> {
    if std::env::var("SPIRV_LOWERING_NO_GPU").is_ok_and(|v| v == "1") {
        return None;
    }
    match Gpu::new() {
        Ok(g) => Some(g),
        Err(e) => panic!(
            "no usable Vulkan device ({e}); lavapipe: apt install mesa-vulkan-drivers; SPIRV_LOWERING_NO_GPU=1 skips"
        ),
    }
}

/// Says that the calling test does not run here because `why`; `runs_on`
/// names the lanes (`old`, `modern`, `gpu`) whose driver has what it needs.
/// The same rule and log as `conformance_tests::skip::skip`, which this crate
/// cannot depend on: on the lane `EMU_SE_LANE` names, if listed, the test
/// fails; otherwise a `lane\tbinary\ttest\twhy` line goes to `EMU_SE_SKIP_LOG`.
fn skip(runs_on: &[&str], why: &str) {
    use std::io::Write;
    let lane = std::env::var("EMU_SE_LANE").unwrap_or_else(|_| "unnamed".into());
    let test = std::thread::current().name().unwrap_or("?").to_string();
    if runs_on.contains(&lane.as_str()) {
        panic!("execute::{test} cannot run on the {lane} lane, which should have what it needs: {why}");
    }
    eprintln!("skipped: {why} (runs on: {})", runs_on.join(", "));
    let Some(path) = std::env::var_os("EMU_SE_SKIP_LOG") else { return };
    let line = format!("{lane}\texecute\t{test}\t{why}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    // The log is how CI sees skips: not being able to write it fails.
    if let Err(e) = written {
        panic!("cannot append to the skip log {}: {e}", std::path::Path::new(&path).display());
    }
}

/// Lowers `entry` of `tests/corpus/<file>` with `configure`d options and
/// validates the result (except for the `val-exempt/` inputs).
fn lowered(file: &str, entry: &str, configure: impl FnOnce(&mut LowerOptions)) -> LoweredNode {
    let w = common::read_spv(&common::crate_dir().join("tests/corpus").join(file));
    let mut o = LowerOptions::new(entry);
    configure(&mut o);
    let l = lower(&w, &o).unwrap();
    if !file.starts_with("val-exempt/") && std::env::var("SPIRV_LOWERING_SKIP_VAL").is_err() {
        common::validate(&l.words).unwrap();
    }
    l
}

/// Lowers against `s`'s tables when `tables`, else without them.
fn lowered_for(s: &Setup, tables: bool, file: &str, entry: &str) -> LoweredNode {
    lowered(file, entry, |o| o.tables = tables.then(|| s.tables()))
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

/// firstNode (slot 0: dynamic grid, a uint at offset 0 of 8-byte records)
/// enqueues 2 records a workgroup for secondNode (slot 1: 8-byte records,
/// meta words, 4 recursion levels) through `slots`.
fn first_node_graph(slots: Vec<u32>) -> Vec<NodeSpec> {
    vec![NodeSpec::dynamic(8, (0, 4, 1)).output(slots), NodeSpec::batched(8, 1).max_count(2).with_meta().recursion(4)]
}

/// Two records: grid 3 (recordIndex 7) and grid 2 (recordIndex 9): 5 workgroups.
fn first_node_records() -> Vec<Vec<u8>> {
    vec![u32s(&[3, 7]), u32s(&[2, 9])]
}

/// What firstNode's records of (recordIndex, grid) `grids` enqueue, sorted:
/// per workgroup w of a record's grid, (recordIndex, (w*2+t)*2 + t + 1) for
/// threads t = 0, 1.
fn first_node_outputs(grids: &[(u32, u32)]) -> Vec<[u32; 2]> {
    let mut want = vec![];
    for &(index, grid) in grids {
        for w in 0..grid {
            want.push([index, (w * 2) * 2 + 1]);
            want.push([index, (w * 2 + 1) * 2 + 2]);
        }
    }
    sorted(want)
}

/// firstNode's records for slot 1 at `TAG + 1` as pairs, checking that each
/// pair is one workgroup's allocation: ranks 2i and 2i + 1, one record index,
/// threads 0 and 1, the meta words (4 levels left; the count on the first).
fn first_node_pairs(g: &Gpu, s: &Setup) -> Vec<[u32; 2]> {
    let recs = s.outputs(g, 1, 2);
    for (i, pair) in recs.chunks(2).enumerate() {
        let r = 2 * i as u32;
        assert_eq!(pair[0][0], pair[1][0], "ranks {r} and {}: one workgroup's record index", r + 1);
        assert_eq!(pair[1][1], pair[0][1] + 3, "ranks {r} and {}: threads 0 and 1 of one workgroup", r + 1);
        let meta = [s.meta(g, TAG + 1, 1, r), s.meta(g, TAG + 1, 1, r + 1)];
        assert_eq!(meta, [Some(4 | 2 << 16), Some(4)], "meta words of ranks {r}, {}", r + 1);
    }
    sorted(recs.iter().map(|r| [r[0], r[1]]).collect())
}

/// firstNode from contiguous records (each grid's first workgroup given):
/// two records' grids in one dispatch split over x and y, a
/// Workgroup-visibility allocation of 2 records a workgroup, placed by rank
/// in node 1's frame with their meta words.
fn first_node_enqueues(tables: bool) {
    let Some(mut g) = device() else { return };
    let s = Setup::new(first_node_graph(vec![1]), 0, first_node_records(), 5);
    let l = lowered_for(&s, tables, "01_hello_chain.spv", "firstNode");
    s.write(&mut g);
    s.launch(&g, &l, [2, 3, 1]); // 6 workgroups, 5 valid: L >= 5 returns
    assert_eq!(level_status(&g, 0), 0, "status");
    assert_eq!(rank_count(&g, 0, 1), 10);
    assert_eq!(grid_count(&g, 0, 1), (0, 0), "node 1 takes no grid from its payload");
    assert_eq!(first_node_pairs(&g, &s), first_node_outputs(&[(7, 3), (9, 2)]));
    assert_eq!(claimed(&g, 0), 1, "ten records fit one frame");
}

/// firstNode from contiguous records: see [`first_node_enqueues`].
#[test]
fn dynamic_broadcast_allocates_and_enqueues() {
    first_node_enqueues(false);
}

/// The same, lowered against the graph's tables (geometry, frame shift and
/// targets baked in).
#[test]
fn dynamic_broadcast_allocates_and_enqueues_with_tables() {
    first_node_enqueues(true);
}

/// Two levels with no pass between them: firstNode's last workgroup (the
/// finisher) turns the rank counters into level 1's `NodeDispatch`es,
/// clears the counters, advances the tag and writes the status words (the
/// `status_in` carried); secondNode then finds its records in node 1's
/// frames, and its own finisher sets up level 2 (node 2's records in frames
/// of the tag after). With `tables`, both finishers are the unrolled form
/// (constant schedules for the targets, slots 1 and 2; slot 0, only ever
/// launched at level 0, is left alone).
fn last_workgroup_sets_up_the_next_level(tables: bool, homes: bool) {
    let Some(mut g) = device() else { return };
    let nodes = vec![
        NodeSpec::dynamic(8, (0, 4, 1)).output(vec![1]),
        NodeSpec::batched(8, 8).max_count(2).output(vec![2]),
        NodeSpec::batched(4, 32),
    ];
    // 6 workgroups launched at level 0: the 2 x 3 grid below.
    let s = Setup {
        level_workgroups: 6,
        status_in: STATUS_INVALID_ENTRY,
        homes: if homes { 6 } else { 0 },
        ..Setup::new(nodes, 0, first_node_records(), 5)
    };
    let first = lowered_for(&s, tables, "01_hello_chain.spv", "firstNode");
    let second_tables = tables.then(|| Setup { slot: 1, ..s.clone() }.tables());
    let second = lowered("01_hello_chain.spv", "secondNode", |o| {
        o.thread_pack_width = 8;
        o.tables = second_tables;
    });
    s.write(&mut g);
    s.launch(&g, &first, [2, 3, 1]);
    assert_eq!(tag(&g), TAG + 1, "tag advanced");
    assert_eq!((level_status(&g, 0), rank_count(&g, 0, 1)), (0, 0), "level 0's status and counters cleared");
    assert_eq!(
        (host_status(&g, 1), host_status(&g, STATUS_WORDS as usize - 1)),
        (STATUS_INVALID_ENTRY, STATUS_INVALID_ENTRY)
    );
    let status = g.addr(at::STATUS_WORDS);
    let want = NodeDispatch {
        indirect: [2, 1, 1],
        workgroup_count: 2,
        record_count: 10,
        workgroup_base: 0,
        level_workgroups: 2,
        mode: RECORDS_FRAMED,
        key_node: 1,
        status,
        ..NodeDispatch::default()
    };
    assert_eq!(dispatch(&g, 1, 1), want, "node 1 at level 1: 8 records a workgroup");
    let d = dispatch(&g, 1, 2);
    assert_eq!((d.workgroup_count, d.record_count, d.level_workgroups), (0, 0, 2), "node 2 at level 1");
    let d = dispatch(&g, 1, 0);
    let entry_only = if tables { 0 } else { 2 };
    assert_eq!((d.workgroup_count, d.record_count, d.level_workgroups), (0, 0, entry_only), "node 0 at level 1");
    // Level 1: secondNode adds each record's increment to UAV[recordIndex].
    run_indirect(&g, &second, 1, 1);
    assert_eq!(level_status(&g, 1), 0);
    let sum = |grid: u32| (0..grid * 2).map(|t| t * 2 + t % 2 + 1).sum::<u32>();
    assert_eq!((g.get32(at::UAV + 4 * 7), g.get32(at::UAV + 4 * 9)), (sum(3), sum(2)));
    assert_eq!(tag(&g), TAG + 2, "tag advanced again");
    assert_eq!(host_status(&g, 2), STATUS_INVALID_ENTRY, "carried to level 1's word");
    let want = NodeDispatch { indirect: [1, 1, 1], workgroup_count: 1, level_workgroups: 1, key_node: 2, ..want };
    assert_eq!(dispatch(&g, 0, 2), want, "node 2 at level 2");
    let recs: Vec<u32> = (0..10).map(|r| s.record(&g, TAG + 2, 2, r, 1).expect("node 2's record")[0]).collect();
    assert_eq!(sorted(recs), [[7; 6].as_slice(), &[9; 4]].concat(), "secondNode's records for node 2");
    // Both levels' records fit frame 0 (at home or claimed).
    assert_eq!((claimed(&g, 0), claimed(&g, 1)), (1, 1), "frames taken");
    if homes {
        let home = |tag: u32, slot: u32| (tag & 1) * 6 + slot;
        assert_eq!(s.place(&g, TAG + 2, 2, 0).map(|p| p.frame), Some(home(TAG + 2, 2)), "node 2's frame 0 at home");
        let keys = s.pool().keys(&g);
        assert!(keys.iter().all(|k| (k >> 32) as u32 <= TAG), "no key of the levels' tags: {keys:x?}");
    }
}

/// See [`last_workgroup_sets_up_the_next_level`] (the finishers' general form).
#[test]
fn the_last_workgroup_sets_up_the_next_level() {
    last_workgroup_sets_up_the_next_level(false, false);
}

/// See [`last_workgroup_sets_up_the_next_level`] (lowered against the graph's
/// tables: the finishers' unrolled form).
#[test]
fn the_last_workgroup_sets_up_the_next_level_with_tables() {
    last_workgroup_sets_up_the_next_level(true, false);
}

/// See [`last_workgroup_sets_up_the_next_level`], with home frames: each
/// level's records in their node's home (both forms of the lowering).
#[test]
fn the_last_workgroup_sets_up_the_next_level_in_home_frames() {
    last_workgroup_sets_up_the_next_level(false, true);
    last_workgroup_sets_up_the_next_level(true, true);
}

/// The frame pool is full after three of node 1's frames (two more hold the
/// input's records and grid entries, live at the tag read): the
/// allocations whose frames cannot be had raise the overflow bit and write
/// to the sink; their ranks stay taken; what was placed is intact.
#[test]
fn allocation_overflow_goes_to_sink() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "firstNode", |_| {});
    // Two of node 1's records a frame by rank: one allocation a frame.
    let nodes = vec![NodeSpec::dynamic(8, (0, 4, 1)).output(vec![1]), NodeSpec::batched(8, 1).max_count(510)];
    let s = Setup { frame_count: 5, ..Setup::new(nodes, 0, first_node_records(), 5).framed(vec![1, 1]) };
    assert_eq!(s.geometry(1).per_frame, 2);
    s.write(&mut g);
    s.launch(&g, &words, [5, 1, 1]);
    assert_eq!(level_status(&g, 0), STATUS_PAYLOAD_OVERFLOW);
    assert_eq!(rank_count(&g, 0, 1), 10);
    assert_eq!(claimed(&g, 0), 3, "every free frame");
    let placed: Vec<bool> = (0..10).map(|r| s.place(&g, TAG + 1, 1, r).is_some()).collect();
    assert_eq!(placed, [[true; 6].as_slice(), &[false; 4]].concat(), "ranks 0..6 in the three frames");
    for r in (0..6).step_by(2) {
        let pair = [s.record(&g, TAG + 1, 1, r, 2).unwrap(), s.record(&g, TAG + 1, 1, r + 1, 2).unwrap()];
        assert!([7, 9].contains(&pair[0][0]) && pair[1][0] == pair[0][0], "ranks {r}, {}: {pair:?}", r + 1);
    }
    assert!([7, 9].contains(&sink(&g, 1)[0]), "the lost records went to the sink: {:?}", sink(&g, 4));
    assert_eq!(s.record(&g, TAG, 0, 1, 2), Some(vec![2, 9]), "the input's frame is left alone");
    // With the finisher: the status is fatal, nothing is launched next.
    let finishing = Setup { level_workgroups: 5, ..s };
    finishing.write(&mut g);
    finishing.launch(&g, &words, [5, 1, 1]);
    assert_eq!((host_status(&g, 1), tag(&g)), (STATUS_PAYLOAD_OVERFLOW, TAG + 1));
    let d = dispatch(&g, 1, 1);
    let written = (d.record_count, d.workgroup_count, d.indirect[0], d.mode, d.key_node, d.status);
    assert_eq!(written, (0, 0, 0, RECORDS_FRAMED, 1, g.addr(at::STATUS_WORDS)), "node 1 not launched at level 1");
}

/// A frame number whose key does not fit 32 bits (ranks near 2^32 with two
/// records a frame): the frame-range bit, the records go to the sink.
#[test]
fn frame_number_out_of_range_goes_to_sink() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "firstNode", |_| {});
    let nodes = vec![NodeSpec::dynamic(8, (0, 4, 1)).output(vec![1]), NodeSpec::batched(8, 1).max_count(510)];
    let s = Setup::new(nodes, 0, first_node_records(), 5);
    s.write(&mut g);
    g.put32(at::RANKS[0] + COUNTER_STRIDE_BYTES as usize, 0xF000_0000); // node 1's rank counter
    s.launch(&g, &words, [5, 1, 1]);
    assert_eq!(level_status(&g, 0), STATUS_FRAME_RANGE);
    assert_eq!((rank_count(&g, 0, 1), claimed(&g, 0)), (0xF000_000A, 0));
    assert!([7, 9].contains(&sink(&g, 1)[0]), "the records went to the sink: {:?}", sink(&g, 4));
}

/// A missing node at the index: status bit, nothing counted or claimed, the
/// records go to the sink.
#[test]
fn invalid_node_index_is_dropped() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "firstNode", |_| {});
    let s = Setup::new(first_node_graph(vec![NO_NODE]), 0, first_node_records(), 5);
    s.write(&mut g);
    let keys = s.pool().keys(&g);
    s.launch(&g, &words, [5, 1, 1]);
    assert_eq!(level_status(&g, 0), STATUS_INVALID_NODE);
    assert_eq!((rank_count(&g, 0, 1), claimed(&g, 0)), (0, 0));
    assert_eq!(s.pool().keys(&g), keys, "no frame claimed");
    assert!([7, 9].contains(&sink(&g, 1)[0]), "the records went to the sink: {:?}", sink(&g, 4));
}

/// secondNode (slot 1) with 10 records, unpacked or packed `pack` a
/// workgroup, from contiguous records or from frames (stride 1024: two
/// records a frame by rank, allocations of 1 and 2, so that some records
/// sit in the tail of the frame before theirs).
fn second_node(g: &mut Gpu, pack: u32, framed: bool) {
    let words = lowered("01_hello_chain.spv", "secondNode", |o| {
        o.push_offset = 8;
        o.thread_pack_width = pack;
    });
    let n = 10u32;
    let records = (0..n).map(|i| u32s(&[i % 4, i + 1])).collect();
    let groups = n.div_ceil(pack);
    let input = if framed { NodeSpec::batched(1024, pack).max_count(2) } else { NodeSpec::batched(8, pack) };
    let nodes = vec![NodeSpec::batched(8, 1), input.output(vec![2]), NodeSpec::batched(4, 32)];
    let mut s = Setup::new(nodes, 1, records, groups);
    if framed {
        s = s.framed(vec![1, 2, 2, 1, 2, 2]);
    }
    s.write(g);
    if framed {
        assert_eq!(s.input_ranks_in_tails(g), vec![2, 4], "records in tails");
    }
    s.launch(g, &words, [groups, 1, 1]);
    assert_eq!(level_status(g, 0), 0);
    for k in 0..4u32 {
        let want: u32 = (0..n).filter(|i| i % 4 == k).map(|i| i + 1).sum();
        assert_eq!(g.get32(at::UAV + 4 * k as usize), want, "UAV[{k}] (pack {pack}, framed {framed})");
    }
    let eri: Vec<u32> = s.outputs(g, 2, 1).iter().map(|r| r[0]).collect();
    assert_eq!(sorted(eri), sorted((0..n).map(|i| i % 4).collect()));
}

/// secondNode: thread launch, one record per workgroup and packed 8 per
/// workgroup, each from contiguous and from framed records.
#[test]
fn thread_node_unpacked_and_packed() {
    let Some(mut g) = device() else { return };
    for (pack, framed) in [(1, false), (8, false), (1, true), (8, true)] {
        second_node(&mut g, pack, framed);
    }
}

/// thirdNode: coalescing, 32 records per workgroup, 40 records spread over
/// some twenty frames (some in tails); counts per key.
#[test]
fn coalescing_node_sees_its_records() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "thirdNode", |_| {});
    let records = (0..40u32).map(|i| u32s(&[i % 4])).collect();
    let nodes = vec![NodeSpec::batched(8, 1), NodeSpec::batched(8, 1), NodeSpec::batched(1024, 32).max_count(2)];
    let s = Setup::new(nodes, 2, records, 2).framed([1, 2, 2].repeat(8));
    s.write(&mut g);
    assert_eq!(s.input_ranks_in_tails(&g).len(), 8, "records in tails");
    s.launch(&g, &words, [2, 1, 1]);
    for k in 0..4 {
        assert_eq!(g.get32(at::UAV + 16 + 4 * k), 10, "UAV[4+{k}]");
    }
}

/// 02: static 4x2x1 grid of 8x4 workgroups; the dispatch is split over x/y with
/// extra workgroups past workgroup_count; ids are the node's own.
#[test]
fn static_broadcast_ids() {
    let Some(mut g) = device() else { return };
    let words = lowered("02_broadcast_static.spv", "staticGrid", |_| {});
    let s = Setup::new(vec![NodeSpec::static_grid(8, 8)], 0, vec![u32s(&[3, 5])], 8);
    s.write(&mut g);
    s.launch(&g, &words, [3, 3, 1]);
    for gy in 0..2u32 {
        for gx in 0..4u32 {
            for ty in 0..4u32 {
                for tx in 0..8u32 {
                    let (dx, dy) = (gx * 8 + tx, gy * 4 + ty);
                    let want = 15 + (gy * 4 + gx) * 100 + ty * 8 + tx;
                    assert_eq!(
                        g.get32(at::UAV + 4 * (dy * 32 + dx) as usize),
                        want,
                        "gid ({gx},{gy}) gtid ({tx},{ty})"
                    );
                }
            }
        }
    }
}

/// 19: RemainingRecursionLevelsAMDX from a framed record's meta word; a
/// self-enqueue's meta word gets parent - 1 (and its count); with no levels
/// left the node allocates 0 records (nothing counted or claimed). A
/// contiguous record has the node's own MaxNodeRecursionAMDX (5).
#[test]
fn recursion_levels() {
    let Some(mut g) = device() else { return };
    let words = lowered("19_recursion.spv", "recurse", |_| {});
    let nodes = vec![NodeSpec::static_grid(8, 1).with_meta().recursion(5).output(vec![0])];
    let contiguous = Setup::new(nodes, 0, vec![u32s(&[3, 1])], 1);
    for (remaining, framed) in [(2, true), (0, true), (5, false)] {
        let mut s = contiguous.clone();
        if framed {
            s = Setup { remaining: vec![remaining], ..s.framed(vec![1]) };
        }
        s.write(&mut g);
        s.launch(&g, &words, [1, 1, 1]);
        assert_eq!(level_status(&g, 0), 0);
        assert_eq!(g.get32(at::UAV + 12), 16 + remaining, "levels left {remaining}");
        if remaining == 0 {
            assert_eq!((rank_count(&g, 0, 0), claimed(&g, 0)), (0, 0), "nothing enqueued");
            continue;
        }
        assert_eq!(s.outputs(&g, 0, 2), vec![vec![4, 2]], "the self-enqueued record");
        assert_eq!(s.meta(&g, TAG + 1, 0, 0), Some((remaining - 1) | 1 << 16), "its levels left and count");
    }
}

/// 19 again, for a node whose frames keep no meta word (only it enqueues
/// to itself: `abi::FrameGeometry::meta`): RemainingRecursionLevelsAMDX is
/// its limit less the level, and its self-enqueue stops at the limit.
#[test]
fn recursion_levels_from_the_level() {
    let Some(mut g) = device() else { return };
    let words = lowered("19_recursion.spv", "recurse", |_| {});
    let nodes = vec![NodeSpec::static_grid(8, 1).recursion(5).output(vec![0])];
    let s = Setup::new(nodes, 0, vec![u32s(&[3, 1])], 1).framed(vec![1]);
    for (level, remaining) in [(2, 3), (4, 1), (6, 0)] {
        s.write(&mut g);
        run_at(&g, &words, [1, 1, 1], level, 0);
        assert_eq!(level_status(&g, 0), 0);
        assert_eq!(g.get32(at::UAV + 12), 16 + remaining, "level {level}");
        let enqueued = if remaining == 0 { vec![] } else { vec![vec![4, 2]] };
        assert_eq!(s.outputs(&g, 0, 2), enqueued, "level {level}: the self-enqueued record");
    }
}

/// 23: TrackFinishWritingAMDX over two levels. spawner (one workgroup:
/// also the finisher) zeroes the record's hidden counter in the pool's
/// garbage, and its enqueue numbers the record for gather's dynamic grid
/// (grid counter, grid entry); the finisher launches gather's 8 workgroups
/// from the grid counter; of those exactly the last sees FinishWriting true;
/// gather's finisher has nothing to launch and zeroes its arguments.
#[test]
fn finish_writing_two_levels() {
    let Some(mut g) = device() else { return };
    let spawner = lowered("23_finish_writing.spv", "spawner", |_| {});
    let gather = lowered("23_finish_writing.spv", "gather", |_| {});
    let stride = spawner.info.outputs[0].record_stride;
    let nodes = vec![NodeSpec::static_grid(4, 1).output(vec![1]), NodeSpec::dynamic(stride, (0, 4, 1))];
    let s = Setup::new(nodes, 0, vec![vec![]], 1);
    let record = |g: &Gpu| s.record(g, TAG + 1, 1, 0, 10).expect("gather's record");
    // Without the finisher: what the enqueue counted.
    s.write(&mut g);
    s.launch(&g, &spawner, [1, 1, 1]);
    assert_eq!((rank_count(&g, 0, 1), grid_count(&g, 0, 1)), (1, (1, 8)), "one record, 8 workgroups");
    assert_eq!(s.entry(&g, TAG + 1, 1, 0), Some((0, 0)), "its grid entry");
    assert_eq!(record(&g), [[8].as_slice(), &[0; 8], &[0]].concat(), "grid, parts, hidden counter zeroed");
    // With it: level 1 runs gather.
    let finishing = Setup { level_workgroups: 1, ..s.clone() };
    finishing.write(&mut g);
    finishing.launch(&g, &spawner, [1, 1, 1]);
    let d = dispatch(&g, 1, 1);
    assert_eq!((d.indirect, d.workgroup_count, d.record_count, d.mode), ([8, 1, 1], 8, 1, RECORDS_FRAMED));
    assert_eq!(d.starts, 8, "one grid: every grid has 8 workgroups");
    run_indirect(&g, &gather, 1, 1);
    assert_eq!(record(&g)[9], 8, "8 workgroups finished");
    assert_eq!(g.get32(at::UAV), (0..8).map(|i| i * 10 + 1).sum::<u32>());
    assert_eq!(tag(&g), TAG + 2);
    let d = dispatch(&g, 1, 1);
    assert_eq!((d.indirect, d.workgroup_count), ([0; 3], 0), "nothing after level 1: its arguments zeroed");
}

/// 08: coalescing with 64 records per workgroup over 100 contiguous records;
/// WorkgroupId reads 0.
#[test]
fn coalescing_count_and_workgroup_id() {
    let Some(mut g) = device() else { return };
    let words = lowered("08_coalescing_array.spv", "coalesce", |_| {});
    let records = (0..100u32).map(|i| u32s(&[i % 8, 1])).collect();
    let s = Setup::new(vec![NodeSpec::batched(8, 64)], 0, records, 2);
    s.write(&mut g);
    s.launch(&g, &words, [2, 1, 1]);
    for k in 0..8usize {
        let want = (0..100).filter(|i| i % 8 == k).count() as u32;
        assert_eq!(g.get32(at::UAV + 4 * k), want, "key {k}");
    }
    assert_eq!(g.get32(at::UAV + 4 * 1023), 100, "sum of counts + gid.x (0)");
}

/// 24: RW coalesced input records are written in place, in their frames.
#[test]
fn rw_input_records() {
    let Some(mut g) = device() else { return };
    let words = lowered("24_rw_input.spv", "rwInput", |_| {});
    let records = (0..12u32).map(|i| u32s(&[i * 3, 0])).collect();
    let s = Setup::new(vec![NodeSpec::batched(1024, 8).max_count(2)], 0, records, 2).framed(vec![2, 1, 2, 2, 1, 2, 2]);
    s.write(&mut g);
    assert!(!s.input_ranks_in_tails(&g).is_empty(), "records in tails");
    s.launch(&g, &words, [2, 1, 1]);
    for i in 0..12u32 {
        assert_eq!(g.get32(at::UAV + 4 * (i * 3) as usize), i * 6 + 1);
        assert_eq!(s.record(&g, TAG, 0, i, 2), Some(vec![i * 3, i * 6 + 1]), "record {i} result member");
    }
}

/// 20: the ShaderIndexAMDX builtin reads LowerOptions::shader_index (packed 4).
#[test]
fn shader_index_builtin() {
    let Some(mut g) = device() else { return };
    let words = lowered("20_shader_index_builtin.spv", "material", |o| {
        o.thread_pack_width = 4;
        o.shader_index = 42;
    });
    let records = (0..6u32).map(|i| u32s(&[i])).collect();
    let s = Setup::new(vec![NodeSpec::batched(4, 4).shader_index(77)], 0, records, 2);
    s.write(&mut g);
    s.launch(&g, &words, [2, 1, 1]);
    assert_eq!(g.words(at::UAV, 6), [42; 6]);
}

/// 20 lowered against its graph: ShaderIndexAMDX reads the node's
/// `NodeInfo::shader_index` (so that the members of a node array share one kernel).
#[test]
fn shader_index_from_node_info_with_tables() {
    let Some(mut g) = device() else { return };
    let records = (0..6u32).map(|i| u32s(&[i])).collect();
    let s = Setup::new(vec![NodeSpec::batched(4, 4).shader_index(77)], 0, records, 2);
    let words = lowered("20_shader_index_builtin.spv", "material", |o| {
        o.thread_pack_width = 4;
        o.shader_index = 42;
        o.tables = Some(s.tables());
    });
    s.write(&mut g);
    s.launch(&g, &words, [2, 1, 1]);
    assert_eq!(g.words(at::UAV, 6), [77; 6]);
}

/// 06: a u16x3 dispatch grid at offset 4, from a framed record (its grid entry).
#[test]
fn dynamic_grid_u16() {
    let Some(mut g) = device() else { return };
    if !g.has16 {
        skip(&["old", "modern", "gpu"], "device without 16-bit storage");
        return;
    }
    let words = lowered("06_broadcast_dynamic_u16x3.spv", "dynGrid16", |_| {});
    let mut p = 5u32.to_le_bytes().to_vec();
    for v in [2u16, 3, 2, 7] {
        p.extend(v.to_le_bytes());
    }
    let s = Setup::new(vec![NodeSpec::dynamic(12, (4, 2, 3))], 0, vec![p], 12).framed(vec![1]);
    s.write(&mut g);
    s.launch(&g, &words, [12, 1, 1]);
    for flat in 0..96 {
        assert_eq!(g.get32(at::UAV + 4 * flat), 12, "flat {flat}");
    }
    assert_eq!(g.get32(at::UAV + 4 * 96), 0);
}

/// v15: OpIsNodePayloadValidAMDX on a sparse node array guards the
/// allocation; 16 framed input records.
fn sparse_array(tables: bool) {
    let Some(mut g) = device() else { return };
    let slots = vec![1, NO_NODE, 3, NO_NODE, 5, NO_NODE, 7, NO_NODE];
    let mut nodes = vec![NodeSpec::batched(1024, 1).max_count(2).output(slots)];
    nodes.extend((1..8).map(|_| NodeSpec::batched(4, 1)));
    let records = (0..16u32).map(|i| u32s(&[i])).collect();
    let s = Setup::new(nodes, 0, records, 16).framed(vec![2; 8]);
    let words = lowered_for(&s, tables, "val-exempt/v15_output_sparse_array.spv", "sparseArray");
    s.write(&mut g);
    s.launch(&g, &words, [16, 1, 1]);
    assert_eq!(level_status(&g, 0), 0, "no invalid allocation happened");
    for node in 1..8u32 {
        let got: Vec<u32> = s.outputs(&g, node, 1).iter().map(|r| r[0]).collect();
        let want: Vec<u32> = (0..16u32).filter(|v| (v & 7) + 1 == node && (v & 7) % 2 == 0).collect();
        assert_eq!(sorted(got), want, "node {node}");
    }
}

/// See [`sparse_array`] (lowered without the graph's tables).
#[test]
fn sparse_array_is_valid() {
    sparse_array(false);
}

/// The same lowered against the graph's tables (a slot table with holes).
#[test]
fn sparse_array_is_valid_with_tables() {
    sparse_array(true);
}

/// v25: payload pointers passed to helper functions (input array, record,
/// output array); the allocation's 4 records are adjacent in one frame.
#[test]
fn payload_pointers_through_functions() {
    let Some(mut g) = device() else { return };
    let words = lowered("val-exempt/v25_payload_function_param.spv", "funcParams", |_| {});
    let nodes = vec![NodeSpec::static_grid(8, 1).output(vec![1]), NodeSpec::batched(4, 1).max_count(4)];
    let s = Setup::new(nodes, 0, vec![u32s(&[5, 3])], 1);
    s.write(&mut g);
    s.launch(&g, &words, [1, 1, 1]);
    assert_eq!(s.outputs(&g, 1, 1), vec![vec![5], vec![8], vec![11], vec![14]]);
    let at: Vec<usize> = (0..4).map(|r| s.record_offset(&g, TAG + 1, 1, r).unwrap()).collect();
    assert_eq!(at, (0..4).map(|r| at[0] + 4 * r).collect::<Vec<_>>(), "one allocation: adjacent records");
}

/// 34: handles as values (Function variables, copies, phis, a helper taking
/// the variable and returning the handle, length and validity asked of the
/// variable): every write lands in the enqueued records; the length asked
/// of a handle that is not the allocation's result reads the first record's
/// meta word (so the target keeps them).
#[test]
fn handles_as_values() {
    let Some(mut g) = device() else { return };
    let words = lowered("34_handles_as_values.spv", "handles", |_| {});
    let base = 40;
    let nodes = vec![NodeSpec::static_grid(1024, 1).output(vec![1]), NodeSpec::batched(8, 1).max_count(2).with_meta()];
    let s = Setup::new(nodes, 0, vec![u32s(&[base])], 1).framed(vec![1]);
    s.write(&mut g);
    s.launch(&g, &words, [1, 1, 1]);
    assert_eq!(level_status(&g, 0), 0);
    let got: Vec<(u32, u32)> = s.outputs(&g, 1, 2).iter().map(|r| (r[0], r[1])).collect();
    let want: Vec<(u32, u32)> = (0..4).flat_map(|t| [(base + t, 11), (100 + t, 11)]).collect();
    assert_eq!(sorted(got), sorted(want));
    let metas: Vec<Option<u32>> = (0..8).map(|r| s.meta(&g, TAG + 1, 1, r)).collect();
    assert_eq!(metas, vec![Some(1 << 16); 8], "allocations of one record each");
}

/// 34 with a target that takes its grid from the payload (a uint at offset
/// 0): enqueueing the variable's handle, which is not the output's last
/// allocation, finds its target, rank and count from the record's frame
/// key, place and meta word; every record gets a grid entry whose first
/// workgroup follows the grids of the entries before it.
#[test]
fn handles_as_values_into_a_dynamic_grid() {
    let Some(mut g) = device() else { return };
    let words = lowered("34_handles_as_values.spv", "handles", |_| {});
    let target = NodeSpec::dynamic(8, (0, 4, 1)).max_count(2).with_meta();
    let nodes = vec![NodeSpec::static_grid(4, 1).output(vec![1]), target];
    // Without and with home frames (the entries' frame 0 then at home).
    for homes in [0, 4] {
        handles_into_a_dynamic_grid(
            &mut g,
            &words,
            Setup { homes, ..Setup::new(nodes.clone(), 0, vec![u32s(&[40])], 1) },
        );
    }
}

/// One run of [`handles_as_values_into_a_dynamic_grid`] with `s`.
fn handles_into_a_dynamic_grid(g: &mut Gpu, words: &LoweredNode, s: Setup) {
    s.write(g);
    s.launch(g, words, [1, 1, 1]);
    assert_eq!(level_status(g, 0), 0);
    let grids: Vec<u32> = s.outputs(g, 1, 1).iter().map(|r| r[0]).collect();
    let total: u32 = grids.iter().sum();
    assert_eq!(total, (0..4).map(|t| 40 + t + 100 + t).sum::<u32>());
    assert_eq!(grid_count(g, 0, 1), (8, total), "entries and workgroups");
    assert_eq!(grid_largest(g, 0, 1), *grids.iter().max().unwrap(), "the largest grid");
    let entries: Vec<(u32, u32)> = (0..8).map(|e| s.entry(g, TAG + 1, 1, e).expect("grid entry")).collect();
    let mut start = 0;
    for &(first, rank) in &entries {
        assert_eq!(first, start, "entries {entries:?} of grids {grids:?}");
        start += grids[rank as usize];
    }
    assert_eq!(sorted(entries.iter().map(|e| e.1).collect()), (0..8).collect::<Vec<_>>(), "one entry a rank");
    // With the finisher: unequal grids are searched.
    let finishing = Setup { level_workgroups: 1, ..s.clone() };
    finishing.write(g);
    finishing.launch(g, words, [1, 1, 1]);
    let d = dispatch(g, 1, 1);
    assert_eq!((d.workgroup_count, d.starts), (total, 0), "grids of different sizes");
    assert_eq!((grid_count(g, 0, 1), grid_largest(g, 0, 1)), ((0, 0), 0), "cleared");
}

/// v26: OpPtrAccessChain across input records, with the records contiguous
/// (`input_needs_contiguous_records`).
#[test]
fn ptr_access_chain_over_contiguous_records() {
    let Some(mut g) = device() else { return };
    let words = lowered("val-exempt/v26_ptr_access_chain.spv", "ptrWalk", |_| {});
    assert!(words.info.input_needs_contiguous_records);
    let records = (0..20u32).map(|i| u32s(&[if i < 16 { 2 } else { 3 }, i])).collect();
    let s = Setup::new(vec![NodeSpec::batched(8, 16)], 0, records, 2);
    s.write(&mut g);
    s.launch(&g, &words, [2, 1, 1]);
    assert_eq!(g.get32(at::UAV + 8), (0..16).sum::<u32>());
    assert_eq!(g.get32(at::UAV + 12), (16..20).sum::<u32>());
}

/// firstNode with 7 framed records (grids 1, 0, 4, 2, 16, 3, 1: one empty;
/// their grid entries in reverse rank order) in one dispatch of 5x6
/// workgroups: the binary search over the entries finds each workgroup's
/// record.
#[test]
fn dynamic_broadcast_many_records() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "firstNode", |_| {});
    let grids = [1u32, 0, 4, 2, 16, 3, 1];
    let records = grids.iter().enumerate().map(|(i, gr)| u32s(&[*gr, 100 + i as u32])).collect();
    let mut nodes = first_node_graph(vec![1]);
    nodes[0] = NodeSpec::dynamic(1024, (0, 4, 1)).max_count(2).output(vec![1]);
    let s = Setup::new(nodes, 0, records, grids.iter().sum()).framed(vec![2, 1, 2, 2]);
    // Without and with home frames (records' and entries' frame 0 at home).
    for homes in [0, 4] {
        let s = Setup { homes, ..s.clone() };
        s.write(&mut g);
        assert!(!s.input_ranks_in_tails(&g).is_empty(), "records in tails");
        s.launch(&g, &words, [5, 6, 1]);
        assert_eq!(level_status(&g, 0), 0);
        let want: Vec<(u32, u32)> = grids.iter().enumerate().map(|(i, gr)| (100 + i as u32, *gr)).collect();
        assert_eq!(first_node_pairs(&g, &s), first_node_outputs(&want), "homes {homes}");
    }
}

/// Seven framed records whose grids all have 3 workgroups, said in
/// `NodeDispatch::starts`: each workgroup divides to its grid entry (in
/// reverse rank order, so the entry's rank is what finds the record).
#[test]
fn dynamic_broadcast_uniform_grids() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "firstNode", |_| {});
    let records = (0..7).map(|i| u32s(&[3, 100 + i])).collect();
    let mut nodes = first_node_graph(vec![1]);
    nodes[0] = NodeSpec::dynamic(1024, (0, 4, 1)).max_count(2).output(vec![1]);
    let s = Setup { uniform_grid: 3, ..Setup::new(nodes, 0, records, 21).framed(vec![2, 1, 2, 2]) };
    s.write(&mut g);
    s.launch(&g, &words, [21, 1, 1]);
    assert_eq!(level_status(&g, 0), 0);
    let want: Vec<(u32, u32)> = (0..7).map(|i| (100 + i, 3)).collect();
    assert_eq!(first_node_pairs(&g, &s), first_node_outputs(&want));
}

/// 03: a 3-D dynamic grid (uint3 at offset 0) decomposed x-fastest.
#[test]
fn dynamic_grid_3d() {
    let Some(mut g) = device() else { return };
    let words = lowered("03_broadcast_dynamic_uint3.spv", "dynGrid3", |_| {});
    let s = Setup::new(vec![NodeSpec::dynamic(16, (0, 4, 3))], 0, vec![u32s(&[3, 2, 2, 1000])], 12);
    s.write(&mut g);
    s.launch(&g, &words, [4, 4, 1]);
    for flat in 0..12 * 16u32 {
        assert_eq!(g.get32(at::UAV + 4 * flat as usize), 1000 + flat % 16, "flat {flat}");
    }
    assert_eq!(g.get32(at::UAV + 4 * 12 * 16), 0);
}

/// 07: no input variable: the grid comes from the implicit uvec3 payload.
#[test]
fn implicit_grid_payload() {
    let Some(mut g) = device() else { return };
    let words = lowered("07_broadcast_no_input.spv", "noInput", |_| {});
    let s = Setup::new(vec![NodeSpec::dynamic(12, (0, 4, 3))], 0, vec![u32s(&[3, 2, 1])], 6);
    s.write(&mut g);
    s.launch(&g, &words, [6, 1, 1]);
    for y in 0..2u32 {
        for x in 0..3u32 {
            assert_eq!(g.get32(at::UAV + 4 * (y * 128 + x) as usize), x + y * 65536);
        }
    }
}

/// 04: a 1-D grid of 70000 workgroups (> 65535) dispatched as 65535 x 2: the
/// kernel still sees ids inside the full grid. All 131070 workgroups count
/// themselves done (about 2048 a done group): the last one finishes the
/// level, once, and leaves every done counter zero.
#[test]
fn grid_larger_than_65535_is_split() {
    let Some(mut g) = device() else { return };
    let words = lowered("04_broadcast_dynamic_uint1.spv", "dynGrid1", |_| {});
    let mut p = u32s(&[1, 70000]);
    p.extend(0.5f32.to_le_bytes());
    p.extend(1.5f32.to_le_bytes());
    let nodes = vec![NodeSpec::dynamic(16, (4, 4, 1))];
    let s = Setup { level_workgroups: 65535 * 2, ..Setup::new(nodes, 0, vec![p], 70000) };
    s.write(&mut g);
    s.launch(&g, &words, [65535, 2, 1]);
    let total = 70000 * 32;
    for dtid in [0usize, 1, 31, 32, 65535 * 32 - 1, 65535 * 32, 65535 * 32 + 1, total - 1] {
        let v = f32::from_bits(g.get32(at::UAV + 4 * dtid));
        let want = if dtid & 1 == 0 { 0.5 } else { 1.5 } + 70001.0;
        assert_eq!(v, want, "dtid {dtid}");
    }
    assert_eq!(g.get32(at::UAV + 4 * total), 0, "nothing past the grid");
    assert_eq!(tag(&g), TAG + 1, "one finisher");
    assert_eq!((done(&g, 0), done_groups_sum(&g)), (0, 0), "done counters zero again");
}

/// 13: Invocation-visibility allocations with a per-thread count (0..3),
/// into frames of five records by rank: allocations run into the frames'
/// tails; every allocation's records are adjacent ranks with its count in
/// the first meta word; each frame holding an allocation's first record
/// was claimed once, and zero-record allocations claim nothing.
fn per_thread_allocations(tables: bool, homes: bool) {
    let Some(mut g) = device() else { return };
    let nodes = vec![
        NodeSpec::static_grid(4, 2).output(vec![1]),
        NodeSpec::batched(8, 1).max_count(337).with_meta().recursion(3),
    ];
    let s = Setup { homes: if homes { 4 } else { 0 }, ..Setup::new(nodes, 0, vec![u32s(&[1])], 2) };
    assert_eq!(s.geometry(1).per_frame, 5);
    let words = lowered_for(&s, tables, "13_output_thread_records.spv", "threadRecords");
    s.write(&mut g);
    s.launch(&g, &words, [2, 1, 1]);
    assert_eq!(level_status(&g, 0), 0);
    let recs = s.outputs(&g, 1, 2);
    let want: Vec<(u32, u32)> = (0..64u32).flat_map(|dtid| (0..(dtid + 1) & 3).map(move |i| (dtid, i))).collect();
    assert_eq!(sorted(recs.iter().map(|r| (r[0], r[1])).collect()), want);
    let (mut rank, mut first_frames, mut crossings) = (0, std::collections::BTreeSet::new(), 0);
    while rank < recs.len() as u32 {
        let count = s.meta(&g, TAG + 1, 1, rank).unwrap() >> 16;
        assert!((1..=3).contains(&count), "rank {rank} starts an allocation of {count}");
        for i in 0..count {
            let r = rank + i;
            assert_eq!((recs[r as usize][0], recs[r as usize][1]), (recs[rank as usize][0], i), "rank {r}");
            let meta = if i == 0 { 3 | count << 16 } else { 3 };
            assert_eq!(s.meta(&g, TAG + 1, 1, r), Some(meta), "rank {r}'s meta word");
            crossings += u32::from(s.place(&g, TAG + 1, 1, r).unwrap().in_tail);
        }
        first_frames.insert(s.place(&g, TAG + 1, 1, rank).unwrap().frame);
        rank += count;
    }
    assert!(crossings > 0, "some allocation ran into a frame's tail");
    // Frame 0 in its home (slot 1's of the tag's parity): never claimed,
    // counted all the same.
    let home = homes.then_some(((TAG + 1) & 1) * 4 + 1);
    assert_eq!(home.map(|h| first_frames.contains(&h)), homes.then_some(true), "frame 0 at home");
    assert_eq!(claimed(&g, 0) as usize, first_frames.len(), "frames taken");
}

/// See [`per_thread_allocations`] (lowered without the graph's tables).
#[test]
fn per_thread_allocations_into_tails() {
    per_thread_allocations(false, false);
}

/// The same lowered against the graph's tables.
#[test]
fn per_thread_allocations_into_tails_with_tables() {
    per_thread_allocations(true, false);
}

/// The same with home frames: frame 0 at home, its tail run into by the
/// allocations that cross into frame 1 (hashed).
#[test]
fn per_thread_allocations_from_a_home_frame() {
    per_thread_allocations(false, true);
    per_thread_allocations(true, true);
}

/// 14: Workgroup-visibility allocation on a node array with base index 2; an
/// index past the array is dropped with a status bit.
#[test]
fn node_array_with_base_index() {
    let Some(mut g) = device() else { return };
    let words = lowered("14_output_group_records_array.spv", "groupRecords", |_| {});
    let slots = vec![NO_NODE, NO_NODE, 10, 11, 12, 13];
    let mut nodes = vec![NodeSpec::static_grid(8, 1).output(slots)];
    nodes.extend((1..14).map(|_| NodeSpec::batched(4, 1).max_count(64)));
    let s = Setup::new(nodes, 0, vec![u32s(&[5, 1])], 1).framed(vec![1]);
    s.write(&mut g);
    s.launch(&g, &words, [1, 1, 1]);
    assert_eq!(level_status(&g, 0), 0);
    assert_eq!(s.outputs(&g, 11, 1), vec![vec![1], vec![11], vec![21], vec![31], vec![41]]);
    assert_eq!((10..14).map(|n| rank_count(&g, 0, n)).collect::<Vec<_>>(), vec![0, 5, 0, 0]);
    let s = Setup { records: vec![u32s(&[5, 7])], ..s };
    s.write(&mut g);
    s.launch(&g, &words, [1, 1, 1]);
    assert_eq!(level_status(&g, 0), STATUS_INVALID_NODE);
    assert_eq!(((10..14).map(|n| rank_count(&g, 0, n)).sum::<u32>(), claimed(&g, 0)), (0, 0));
}

/// 18: empty payloads: only counts travel (Invocation and Workgroup
/// visibility); the targets' records are frameless: no frame is claimed.
#[test]
fn empty_outputs_count_only() {
    let Some(mut g) = device() else { return };
    let words = lowered("18_output_empty.spv", "emptyOutputs", |_| {});
    let mut nodes = vec![NodeSpec::batched(4, 1).output(vec![5]).output(vec![6, 7, 8])];
    nodes.extend((1..9).map(|_| NodeSpec::batched(4, 1).max_count(16).frameless()));
    let s = Setup::new(nodes, 0, vec![vec![]], 1);
    s.write(&mut g);
    let keys = s.pool().keys(&g);
    s.launch(&g, &words, [1, 1, 1]);
    assert_eq!(level_status(&g, 0), 0);
    assert_eq!((0..9).map(|n| rank_count(&g, 0, n)).collect::<Vec<_>>(), [0, 0, 0, 0, 0, 8, 0, 0, 4]);
    assert_eq!((claimed(&g, 0), s.pool().keys(&g) == keys), (0, true), "no frame claimed");
}
