//! Recursion through the layer on lavapipe (corpus module 19): a node with
//! MaxNodeRecursionAMDX 5 enqueues itself while RemainingRecursionLevelsAMDX
//! is above zero; every level writes what it saw. Also reached along two
//! paths of different lengths (tests/shaders/graphs/paths.spvasm): each
//! record keeps its own count of remaining levels.

use ash::vk;
use conformance_tests::graph::{Stage, TestGraph};
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

const RECURSE: &[u8] = include_bytes!("../../spirv-lowering/tests/corpus/19_recursion.spv");
const PATHS: &[u8] = include_bytes!("../shaders/graphs/paths.spv");

/// What the chain started by record (depth, value) writes: level k of it
/// has depth + k, value << k and 5 - k levels left.
fn chain(out: &mut [u32], depth: u32, value: u32) {
    for k in 0..=5u32 {
        out[(depth + k) as usize] = (value << k) * 16 + (5 - k);
    }
}

#[test]
fn recursion_counts_down_to_zero() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let out = dev.create_host_buffer(64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        out.write_u32(&[0; 16]).expect("clear");
        let graph =
            TestGraph::new(&dev, RECURSE, &[Stage { entry: "recurse", node: None }], &[&out], 0).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let value = 3u32;
        let record: Vec<u8> = [0u32, value].iter().flat_map(|w| w.to_le_bytes()).collect();
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, &record, 1, 8)])).expect("submit");
        // Level k: depth k, value 3 * 2^k, RemainingRecursionLevelsAMDX 5 - k.
        let mut want = vec![0u32; 16];
        for k in 0..=5u32 {
            want[k as usize] = (value << k) * 16 + (5 - k);
        }
        assert_eq!(out.read_u32(16).expect("read"), want);
    }
    inst.finish();
}

#[test]
fn records_reaching_recursion_at_different_levels_keep_their_own_count() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let out = dev.create_host_buffer(4 * 16, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        out.write_u32(&[0; 16]).expect("clear");
        let paths = [Stage { entry: "fork", node: None }, Stage { entry: "relay", node: None }];
        let recurse = [Stage { entry: "recurse", node: None }];
        let graph = TestGraph::from_modules(&dev, &[(PATHS, &paths), (RECURSE, &recurse)], &[&out], 0).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let fork = graph.node_index("fork", 0).expect("fork");
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(fork, &[], 1, 0)])).expect("submit");
        // fork's record enters recurse at level 1, relay's at level 2: both
        // chains run all five recursion levels.
        let mut want = vec![0u32; 16];
        chain(&mut want, 0, 3);
        chain(&mut want, 8, 5);
        assert_eq!(out.read_u32(16).expect("read"), want);
    }
    inst.finish();
}
