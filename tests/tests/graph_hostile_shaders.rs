//! Node shaders with bad values (issue 24), through the real loader: grids
//! past their limits, over-allocation, node-array indexes that wrap,
//! payload writes and input reads past their records, recursion past its
//! limit. For each: the dispatch finishes (a hang aborts the test after a
//! bounded wait), the records that are valid run exactly, nothing is
//! written outside the scratch or the application's results (guard words
//! around both), the layer's report names the node, the level and the
//! value, and a correct dispatch on the same scratch works afterwards. The
//! nodes are in `tests/shaders/graphs/hostile.hlsl`; `hostile/mod.rs` runs
//! them.

mod hostile;

use hostile::{grid, with_graph, RESULT_WORDS};

/// `Out` with `values` at their words, zero elsewhere.
fn words(values: &[(usize, u32)]) -> Vec<u32> {
    let mut out = vec![0; RESULT_WORDS];
    for &(at, v) in values {
        out[at] = v;
    }
    out
}

/// Dispatches `bad` among two valid `grids` records (tags 1 and 2, one to
/// each target): only the valid ones run, and the report says `parts`.
fn grid_dropped(bad: [u32; 5], parts: &[&str]) {
    with_graph(None, |h| {
        let records: Vec<u32> = [grid([2, 1, 1], 1, false), bad, grid([6, 1, 1], 2, true)].concat();
        let outcome = h.dispatch("grids", &records, 20);
        assert_eq!(outcome.out, words(&[(1, 2), (2, 6)]), "the valid grids run exactly, the bad one not at all");
        outcome.reported(parts);
        h.still_works();
    });
}

#[test]
fn a_grid_of_65535_by_65535_is_dropped_and_reported() {
    grid_dropped(
        grid([65535, 65535, 1], 3, false),
        &["node \"grids\"[0] at level 0", "grid of (65535, 65535, 1)", "\"open\"[0]", "(65535, 256, 1)", "dropped"],
    );
}

#[test]
fn a_grid_of_0xffffffff_is_dropped_and_reported() {
    grid_dropped(grid([u32::MAX, 1, 1], 3, false), &["node \"grids\"[0] at level 0", "grid of (4294967295, 1, 1)"]);
}

#[test]
fn a_grid_of_65536_cubed_is_dropped_and_reported() {
    grid_dropped(
        grid([65536, 65536, 65536], 3, false),
        &["node \"grids\"[0] at level 0", "grid of (65536, 65536, 65536)"],
    );
}

#[test]
fn a_grid_past_max_num_workgroups_is_dropped_and_reported() {
    grid_dropped(
        grid([9, 1, 1], 3, true),
        &["node \"grids\"[0] at level 0", "grid of (9, 1, 1)", "\"capped\"[0]", "MaxNumWorkgroupsAMDX (8, 1, 1)"],
    );
}

/// 129 grids of 16,776,960 workgroups each (within every per-record limit)
/// ask for 2,164,227,840 workgroups at one level: more than a level
/// launches. The level's records of that node are dropped.
#[test]
fn dynamic_grids_past_what_a_level_launches_are_dropped_and_reported() {
    with_graph(None, |h| {
        let records: Vec<u32> = (0..129).flat_map(|_| grid([65535, 256, 1], 3, false)).collect();
        let outcome = h.dispatch("grids", &records, 20);
        assert_eq!(outcome.out, words(&[]), "nothing of that level runs");
        outcome.reported(&["\"open\"[0] at level 1", "2164227840 workgroups", "dropped"]);
        h.still_works();
    });
}

/// The same through a static grid: 129 records of `wide` (65535 x 256).
#[test]
fn static_grids_past_what_a_level_launches_are_dropped_and_reported() {
    with_graph(None, |h| {
        let outcome = h.dispatch("flood", &[129, 3, 0, 0], 16);
        assert_eq!(outcome.out, words(&[]), "nothing of that level runs");
        outcome.reported(&["\"wide\"[0] at level 1", "2164227840 workgroups", "dropped"]);
        h.still_works();
    });
}

/// Two nodes of one level, each within what a level launches, together past
/// it: 65 records of `wide` and 65 grids of (65535, 256, 1) for `open`
/// (1,090,502,400 workgroups each). The level runs nothing.
#[test]
fn launches_together_past_what_a_level_launches_are_dropped_and_reported() {
    with_graph(None, |h| {
        let grids: Vec<u32> = (0..65).flat_map(|_| grid([65535, 256, 1], 3, false)).collect();
        let outcome = h.dispatch_many(&[("flood", &[65, 4, 0, 0], 16), ("grids", &grids, 20)]);
        assert_eq!(outcome.out, words(&[]), "nothing of that level runs");
        outcome.reported(&["at level 1", "1090502400 workgroups", "with the level's other launches", "dropped"]);
        h.still_works();
    });
}

/// 100,000 records (800 KB) on an output of MaxRecords(4), every one
/// written, beside valid allocations of the same level: the excess goes
/// nowhere that anything lives (it used to run from the sink through the
/// frames and past the scratch), and the valid records run exactly.
#[test]
fn an_allocation_past_max_records_damages_nothing() {
    with_graph(None, |h| {
        let spill = [4, 10, 0, 0, 100_000, 100, 0, 0, 3, 20, 0, 0];
        let outcome = h.dispatch("spill", &spill, 16);
        assert_eq!(outcome.out, words(&[(10, 1), (11, 1), (12, 1), (13, 1), (20, 1), (21, 1), (22, 1)]));
        outcome.reported(&["node \"spill\"[0] at level 0", "100000 records", "\"item\"", "4", "dropped"]);
        h.still_works();
    });
}

/// Index 0xFFFFFFFF of an output array from node index 1: past the array
/// (1 + 0xFFFFFFFF wraps to 0, which is member 0 of the graph).
#[test]
fn a_node_array_index_that_wraps_is_dropped_and_reported() {
    with_graph(None, |h| {
        let outcome = h.dispatch("pick", &[0, 10, u32::MAX, 20, 1, 30], 8);
        assert_eq!(outcome.out, words(&[(11, 1), (32, 1)]), "member 0 receives nothing");
        outcome.reported(&["node \"pick\"[0] at level 0", "index 4294967295", "\"member\"", "dropped"]);
        h.still_works();
    });
}

/// Record 1,000,000 of a one-record allocation (8 MB past it): with
/// `checked_payloads` the write is clamped into the allocation and
/// reported.
#[test]
fn a_payload_write_past_its_allocation_is_clamped_and_reported() {
    with_graph(Some(true), |h| {
        let outcome = h.dispatch("scribble", &[1, 10, 1_000_000, 0], 16);
        assert_eq!(outcome.out, words(&[(10, 1)]), "the record holds what was written last");
        outcome.reported(&["node \"scribble\"[0] at level 0", "record 1000000", "allocation of 1 record", "\"item\""]);
        h.still_works();
    });
}

/// The same without `checked_payloads`: nothing reported, but the write
/// still cannot leave the allocation's frame (its index is clamped to
/// MaxRecords - 1).
#[test]
fn a_payload_write_past_its_allocation_stays_inside_unchecked() {
    with_graph(Some(false), |h| {
        let outcome = h.dispatch("scribble", &[1, 10, 1_000_000, 0], 16);
        assert_eq!(outcome.out, words(&[(10, 1)]));
        assert_eq!(outcome.reports, Vec::<String>::new());
        h.still_works();
    });
}

/// A coalescing node reading `inputs[t + 2]` of 3 records: with
/// `checked_payloads` the reads past the third are clamped to it and
/// reported.
#[test]
fn input_reads_past_the_records_are_clamped_and_reported() {
    with_graph(Some(true), |h| {
        let outcome = h.dispatch("batch", &[100, 7, 0, 8, 0, 9], 8);
        assert_eq!(outcome.out, words(&[(100, 9), (101, 9), (102, 9), (103, 9)]));
        outcome.reported(&["node \"batch\"[0] at level 0", "input record", "of 3"]);
        h.still_works();
    });
}

/// `deep` enqueues to itself at every depth, past NodeMaxRecursionDepth(2):
/// three levels run, the fourth record is dropped and reported.
#[test]
fn recursion_past_its_limit_is_dropped_and_reported() {
    with_graph(None, |h| {
        let outcome = h.dispatch("deep", &[5, 6], 4);
        assert_eq!(outcome.out, words(&[(5, 3), (6, 3)]));
        outcome.reported(&["node \"deep\"[0] at level 2", "recursion"]);
        h.still_works();
    });
}

/// Empty grids among valid ones: no workgroups for them, nothing reported.
#[test]
fn empty_grids_among_valid_ones_run_nothing() {
    with_graph(None, |h| {
        let records: Vec<u32> = [
            grid([2, 1, 1], 1, false),
            grid([0, 0, 0], 2, false),
            grid([3, 1, 1], 3, true),
            grid([0, 5, 1], 4, false),
            grid([1, 1, 1], 5, false),
        ]
        .concat();
        let outcome = h.dispatch("grids", &records, 20);
        assert_eq!(outcome.out, words(&[(1, 2), (3, 3), (5, 1)]));
        assert_eq!(outcome.reports, Vec::<String>::new());
        h.still_works();
    });
}

/// Entry records in device memory (`vkCmdDispatchGraphIndirectAMDX`), which
/// no host check sees: a grid past the entry's NodeMaxDispatchGrid(8, 4, 1)
/// and one of 65536 x 65536 among valid ones. The entry pass drops them.
#[test]
fn device_entry_grids_past_their_limits_are_dropped_and_reported() {
    with_graph(None, |h| {
        let records: Vec<u32> =
            [[2, 1, 1, 1], [9, 1, 1, 2], [8, 4, 1, 3], [65536, 65536, 1, 4]].into_iter().flatten().collect();
        let outcome = h.dispatch_device("dyn_entry", &records, 16);
        assert_eq!(outcome.out, words(&[(1, 2), (3, 32)]), "the valid grids run exactly, the others not at all");
        outcome.reported(&["while reading the dispatch's inputs", "MaxNumWorkgroupsAMDX", "dropped"]);
        h.still_works();
    });
}

/// Device-side entry records within their limits run exactly, and nothing
/// is reported: the entry pass's checks drop nothing valid.
#[test]
fn device_entry_grids_within_limits_run_exactly() {
    with_graph(None, |h| {
        let records: Vec<u32> = (0..200).flat_map(|_| [8, 4, 1, 5]).collect();
        let outcome = h.dispatch_device("dyn_entry", &records, 16);
        assert_eq!(outcome.out, words(&[(5, 6400)]));
        assert_eq!(outcome.reports, Vec::<String>::new());
        h.still_works();
    });
}

/// Many dynamic-grid host records (past the layer's `GPU_GRIDS_FROM`, so
/// `grids.comp` sizes level 0 on the GPU) in one dispatch with two other
/// entries: each launch of the level is numbered after the ones before it
/// and the level's total counts them all, so every entry, and what each
/// enqueues, runs exactly once and nothing is reported.
#[test]
fn many_dynamic_grid_records_beside_other_entries_run_exactly() {
    with_graph(None, |h| {
        // dyn_entry: 17,000 records, grids (1..=2, 1..=3, 1), tags 0..8.
        let dynamic: Vec<u32> = (0..17_000u32).flat_map(|i| [1 + i % 2, 1 + i % 3, 1, i % 8]).collect();
        // spill: 2 items tagged 20, 3 tagged 30; pick: member 1, tagged 40.
        let spill = [2, 20, 0, 0, 3, 30, 0, 0];
        let pick = [0, 40];
        let outcome = h.dispatch_many(&[("spill", &spill, 16), ("dyn_entry", &dynamic, 16), ("pick", &pick, 8)]);
        let mut want = words(&[(20, 1), (21, 1), (30, 1), (31, 1), (32, 1), (41, 1)]);
        for r in dynamic.chunks(4) {
            want[r[3] as usize] += r[0] * r[1];
        }
        assert_eq!(outcome.out, want);
        assert_eq!(outcome.reports, Vec::<String>::new());
        h.still_works();
    });
}
