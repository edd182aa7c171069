//! Size (issue 5, item 8) through the layer on lavapipe, against a CPU
//! model, with wall-clock timings printed (`--nocapture` shows them):
//! - a level of 262,144 records produced by nodes: the broadcast node
//!   `spray` (1024 x 64 threads) enqueues 4 thread-node records per thread
//!   to `leaf`;
//! - a level of 524,288 workgroups in x (lavapipe's
//!   `maxComputeWorkGroupCount` is 65535 per dimension): the same 262,144
//!   records go to `wide`, a static-grid broadcast node of 2 workgroups;
//! - one node dispatched with millions of workgroups (`big`, grid from the
//!   record, `MaxNumWorkgroupsAMDX` 16,777,215): [`BIG_GROUPS`] in the
//!   default run, and the advertised limit of 16,777,215 workgroups (about
//!   10 s on lavapipe on 2 shared cores: the slowest test, run anyway).
//!
//! Scratch: queried with `vkGetExecutionGraphPipelineScratchSizeAMDX` and
//! sized between `minSize` and `maxSize` to hold the work, by the layout
//! documented in `layer/src/graph/scratch.rs` (120-byte units; one unit per
//! single allocation of up to 16 payload bytes in flight, and per record a
//! level holds).

use std::time::Instant;

use ash::vk;
use conformance_tests::graph::{Stage, TestGraph};
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

const SIZE: &[u8] = include_bytes!("../shaders/graphs/size.spv");

/// Records `spray` makes: 1024 workgroups x 64 threads x 4.
const SPRAY_RECORDS: u32 = 1024 * 64 * 4;

/// Workgroups of the one `big` dispatch in the default run: 4,000,037
/// (a prime; 61 full 65535-wide rows and a partial one), about 2.5 s on
/// lavapipe.
const BIG_GROUPS: u32 = 4_000_037;

/// The advertised per-node limit, 2^24 - 1 workgroups.
const LIMIT_GROUPS: u32 = 16_777_215;

/// Bytes of one unit of the layer's scratch layout.
const UNIT: u64 = 120;

/// A scratch size in `[min, max]` (a multiple of the granularity above
/// `min`) with room for `units` units past `min`.
fn scratch_size((min, max, granularity): (u64, u64, u64), units: u64) -> u64 {
    let want = min + (units * UNIT).div_ceil(granularity) * granularity;
    assert!(want <= max, "the work needs {want} bytes of scratch; maxSize is {max}");
    assert!(want >= min);
    want
}

/// Scratch for a run of `spray`.
#[derive(Clone, Copy)]
enum Scratch {
    /// Room for the 65,536 allocations of 4 records (16 payload bytes: one
    /// unit of ring each) and the 262,144 records (one unit each).
    Holds,
    /// `minSize`: the level does not fit.
    Min,
}

/// Runs `spray` -> `consumer` (named ("leaf", 0)) and returns the first
/// `words` of Out, the seconds taken, and the layer's status reports.
fn run_spray(consumer: &str, base: u32, words: usize, scratch: Scratch) -> (Vec<u32>, f64, Vec<String>) {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    if let Scratch::Min = scratch {
        // The layer's overflow report is an error message: expected there.
        inst.log().tolerate("EMU-SE-execution-graph-status");
    }
    let result = {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let out = dev.create_host_buffer(4 * words as u64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        out.write_u32(&vec![0; words]).expect("clear");
        let stages = [Stage { entry: "spray", node: None }, Stage { entry: consumer, node: Some(("leaf", 0)) }];
        let graph = TestGraph::from_modules(&dev, &[(SIZE, &stages)], &[&out], 0).expect("graph");
        let sizes = graph.scratch_sizes().expect("sizes");
        let size = match scratch {
            Scratch::Holds => scratch_size(sizes, u64::from(SPRAY_RECORDS)),
            Scratch::Min => sizes.0,
        };
        eprintln!("scratch sizes (min, max, granularity) {sizes:?}, using {size}");
        let scratch = graph.scratch(size).expect("scratch");
        let start = Instant::now();
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, &base.to_le_bytes(), 1, 4)])).expect("submit");
        let seconds = start.elapsed().as_secs_f64();
        (out.read_u32(words).expect("read"), seconds, inst.log().tolerated())
    };
    inst.finish();
    result
}

fn first_mismatch(got: &[u32], want: impl Fn(usize) -> u32) -> Option<(usize, u32, u32)> {
    got.iter().enumerate().find(|&(i, &g)| g != want(i)).map(|(i, &g)| (i, g, want(i)))
}

#[test]
fn level_of_262144_node_records() {
    let words = SPRAY_RECORDS as usize;
    let (got, seconds, _) = run_spray("leaf", 0, words, Scratch::Holds);
    eprintln!("spray -> leaf: {SPRAY_RECORDS} thread-node records at level 1 in {seconds:.2} s");
    // Every id base + 4 g + j in [0, 262144) once: Out[id] = 3 id + 1.
    let mismatch = first_mismatch(&got, |i| 3 * i as u32 + 1);
    assert_eq!(mismatch, None, "(word, got, model)");
}

#[test]
fn level_with_524288_workgroups_in_x() {
    let words = 2 * SPRAY_RECORDS as usize;
    let (got, seconds, _) = run_spray("wide", 0, words, Scratch::Holds);
    eprintln!("spray -> wide: {SPRAY_RECORDS} records x 2 = {words} workgroups in x at level 1 in {seconds:.2} s");
    // Record id, workgroup x: Out[2 id + x] = (2 id + x) * 5 + 2.
    let mismatch = first_mismatch(&got, |i| 5 * i as u32 + 2);
    assert_eq!(mismatch, None, "(word, got, model)");
}

/// The same level at `minSize` (1024 units) does not fit: the layer flags
/// and reports it, drops what does not fit, and invents nothing.
#[test]
fn level_of_262144_records_overflows_min_scratch() {
    let words = SPRAY_RECORDS as usize;
    let (got, _, reports) = run_spray("leaf", 0, words, Scratch::Min);
    assert!(!reports.is_empty(), "no overflow report at minSize");
    eprintln!("reports at minSize: {reports:?}");
    let written = got.iter().enumerate().filter(|&(i, &g)| g == 3 * i as u32 + 1).count();
    let zero = got.iter().filter(|&&g| g == 0).count();
    assert_eq!(written + zero, words, "every word is either the model's or untouched");
    assert!(written < words, "all {words} records ran in minSize scratch");
}

/// Dispatches `big` once with `groups` workgroups; checks every word.
fn run_big(groups: u32) {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let words = groups as usize;
        let out = dev.create_host_buffer(4 * words as u64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        let sentinel = 0xdead_beef;
        out.write_u32(&vec![sentinel; words]).expect("fill");
        let stages = [Stage { entry: "big", node: None }];
        let graph = TestGraph::from_modules(&dev, &[(SIZE, &stages)], &[&out], 0).expect("graph");
        let sizes = graph.scratch_sizes().expect("sizes");
        // One entry record: the smallest size holds it.
        let scratch = graph.scratch(sizes.0).expect("scratch");
        let tag = 0x0100_0000u32;
        let record: Vec<u8> = [groups, tag].iter().flat_map(|w| w.to_le_bytes()).collect();
        let start = Instant::now();
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, &record, 1, 8)])).expect("submit");
        let seconds = start.elapsed().as_secs_f64();
        eprintln!("big: {groups} workgroups of one node in {seconds:.2} s");
        let got = out.read_u32(words).expect("read");
        // Out[x] = x + tag for every workgroup x, each written once.
        let mismatch = first_mismatch(&got, |i| i as u32 + tag);
        assert_eq!(mismatch, None, "(word, got, model)");
    }
    inst.finish();
}

#[test]
fn one_node_with_millions_of_workgroups() {
    run_big(BIG_GROUPS);
}

#[test]
fn one_node_at_the_workgroup_limit() {
    run_big(LIMIT_GROUPS);
}
