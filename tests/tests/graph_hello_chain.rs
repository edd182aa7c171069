//! End to end: the D3D12HelloWorkGraphs chain (corpus module 01) created and
//! dispatched through the layer on lavapipe, checked against a CPU model.

use ash::vk;
use conformance_tests::graph::TestGraph;
use conformance_tests::models::hello_chain;
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

/// (grid, record index) of each entry record.
fn records_of(grids: &[u32]) -> Vec<(u32, u32)> {
    grids.iter().enumerate().map(|(i, &g)| (g, i as u32)).collect()
}

#[test]
fn hello_chain_matches_the_cpu_model() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph pipeline");
        let (min, max, granularity) = graph.scratch_sizes().expect("scratch sizes");
        assert!(min > 0 && min <= max && granularity > 0, "{min} {max} {granularity}");
        let scratch = graph.scratch(min).expect("scratch");
        let entry = graph.node_index("firstNode", 0).expect("node index");
        let grids = [1u32, 3, 16, 7];
        let records: Vec<u8> =
            grids.iter().enumerate().flat_map(|(i, &g)| [g, i as u32]).flat_map(u32::to_le_bytes).collect();
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(entry, &records, 4, 8)])).expect("submit");
        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&records_of(&grids), &[]));
    }
    inst.finish();
}

/// Many entry records, some with empty grids: every workgroup of level 0
/// finds its own record among them (the search over the records' first
/// workgroups takes several steps, and an empty grid's record shares its
/// first workgroup with the next record's).
#[test]
fn many_records_some_empty_each_workgroup_finds_its_own() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph pipeline");
        let (min, max, _) = graph.scratch_sizes().expect("scratch sizes");
        let scratch = graph.scratch(max.min(min * 16)).expect("scratch");
        let entry = graph.node_index("firstNode", 0).expect("node index");
        // Grids 0..=5 in an irregular order, the record index cycling.
        let records: Vec<(u32, u32)> = (0..301u32).map(|i| ((i * 7 + i / 5) % 6, i % 4)).collect();
        let bytes: Vec<u8> = records.iter().flat_map(|&(g, r)| [g, r]).flat_map(u32::to_le_bytes).collect();
        let count = records.len() as u32;
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(entry, &bytes, count, 8)])).expect("submit");
        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&records, &[]));
    }
    inst.finish();
}
