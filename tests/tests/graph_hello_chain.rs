//! End to end: the D3D12HelloWorkGraphs chain (corpus module 01) created and
//! dispatched through the layer on lavapipe, checked against a CPU model.

use conformance_tests::graph::run_hello_chain;
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
        let records = records_of(&[1, 3, 16, 7]);
        let uavs = run_hello_chain(&dev, &records, 1, |min, max, granularity| {
            assert!(min > 0 && min <= max && granularity > 0, "{min} {max} {granularity}");
            min
        })
        .expect("dispatch");
        assert_eq!(uavs[0], hello_chain(&records, &[]));
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
        // Grids 0..=5 in an irregular order, the record index cycling.
        let records: Vec<(u32, u32)> = (0..301u32).map(|i| ((i * 7 + i / 5) % 6, i % 4)).collect();
        let uavs = run_hello_chain(&dev, &records, 1, |min, max, _| max.min(min * 16)).expect("dispatch");
        assert_eq!(uavs[0], hello_chain(&records, &[]));
    }
    inst.finish();
}
