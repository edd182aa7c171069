//! End to end on lavapipe, node shaders as a real DXC 1.9 emits them
//! (`spirv-lowering/tests/dxc/`), every graph at default optimisation and at
//! `-O0`: launch modes (static and `uint`/`uint3`/`uint16_t3` dynamic grids,
//! coalescing with `Count()`, thread), HLSL scalar record layouts, empty
//! records, and output records filled through helper functions. Each result
//! is compared word for word with the graph's CPU model in
//! `conformance_tests::dxc_models`. Library modules: every node is the entry
//! point named after its HLSL function, at index 0.

use ash::vk;
use conformance_tests::dxc_models::{self as m, bytes_of, run_graph, DxcModule, GraphRun, Opt, Wide};
use conformance_tests::graph::Stage;

/// Stages named after their entry points (no override), in this order.
fn library(entries: &'static [&'static str]) -> Vec<Stage<'static>> {
    entries.iter().map(|&entry| Stage { entry, node: None }).collect()
}

/// Runs the library `module` (stages `entries`) with `records` sent to
/// `entries[0]` and compares with `want`.
fn check_library(
    module: &DxcModule,
    opt: Opt,
    features: vk::PhysicalDeviceFeatures,
    entries: &'static [&'static str],
    (records, count, stride): (&[u8], u32, u64),
    want: &[u32],
) {
    let stages = library(entries);
    let label = format!("{}.hlsl ({opt:?})", module.name);
    let got = run_graph(&GraphRun {
        label: label.clone(),
        features,
        modules: &[(module.spv(opt), &stages)],
        specs: &[],
        out_words: want.len(),
        entry: (entries[0], 0),
        records,
        count,
        stride,
    });
    m::assert_words(&label, &got, want);
}

/// Static grid `spawn` feeding a `uint`-grid and a `uint3`-grid node.
fn broadcast(opt: Opt) {
    let records = [(1u32, 3u32), (20, 5), (7, 0)];
    let words: Vec<u32> = records.iter().flat_map(|&(b, s)| [b, s]).collect();
    check_library(
        &m::BROADCAST,
        opt,
        vk::PhysicalDeviceFeatures::default(),
        &["spawn", "grid1", "grid3"],
        (&bytes_of(&words), records.len() as u32, 8),
        &m::broadcast(&records),
    );
}

#[test]
fn broadcast_static_uint_uint3_grids() {
    broadcast(Opt::Default);
}

#[test]
fn broadcast_static_uint_uint3_grids_o0() {
    broadcast(Opt::O0);
}

/// A scalar-layout thread-node input (16-bit members, vectors across 16-byte
/// boundaries) feeding a `uint16_t3`-grid node.
fn layout16(opt: Opt) {
    let records = [
        Wide { h: 3, k: 4, a: 10, s: [5, 6, 7], c: [8, 9], d: [11, 12, 13], e: [14, 15] },
        Wide { h: 60000, k: 6000, a: 1 << 20, s: [2, 1 << 17, 3], c: [1 << 30, 2], d: [7, 1 << 18, 4], e: [65535, 1] },
        Wide { h: 0, k: 1, a: 0, s: [3, 0, 0], c: [0, 1], d: [0, 0, 1], e: [0, 0] },
    ];
    let payload: Vec<u8> = records.iter().flat_map(Wide::bytes).collect();
    // The nodes declare Int16: the application enables shaderInt16.
    check_library(
        &m::LAYOUT16,
        opt,
        vk::PhysicalDeviceFeatures::default().shader_int16(true),
        &["layouts", "grid16"],
        (&payload, records.len() as u32, Wide::SIZE as u64),
        &m::layout16(&records),
    );
}

#[test]
fn scalar_layouts_and_u16x3_grid() {
    layout16(Opt::Default);
}

#[test]
fn scalar_layouts_and_u16x3_grid_o0() {
    layout16(Opt::O0);
}

/// Coalescing (`Count()`), thread and empty-record nodes behind one producer.
fn coalesce_thread(opt: Opt) {
    let records = [(32u32, 3u32), (5, 7), (0, 9), (19, 1)];
    let words: Vec<u32> = records.iter().flat_map(|&(n, mul)| [n, mul]).collect();
    check_library(
        &m::COALESCE_THREAD,
        opt,
        vk::PhysicalDeviceFeatures::default(),
        &["feed", "coal", "thr", "tick", "tock"],
        (&bytes_of(&words), records.len() as u32, 8),
        &m::coalesce_thread(&records),
    );
}

#[test]
fn coalescing_thread_and_empty_records() {
    coalesce_thread(Opt::Default);
}

#[test]
fn coalescing_thread_and_empty_records_o0() {
    coalesce_thread(Opt::O0);
}

/// Thread and group output records filled by helper functions.
fn helpers(opt: Opt) {
    let seeds = [4u32, 1000, 77];
    check_library(
        &m::HELPERS,
        opt,
        vk::PhysicalDeviceFeatures::default(),
        &["start", "each", "batch"],
        (&bytes_of(&seeds), seeds.len() as u32, 4),
        &m::helpers(&seeds),
    );
}

#[test]
fn output_records_through_helper_functions() {
    helpers(Opt::Default);
}

#[test]
fn output_records_through_helper_functions_o0() {
    helpers(Opt::O0);
}
