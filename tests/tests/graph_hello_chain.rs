//! End to end: the D3D12HelloWorkGraphs chain (corpus module 01) created and
//! dispatched through the layer on lavapipe, checked against a CPU model.

use conformance_tests::graph::run_hello_chain;
use conformance_tests::models::hello_chain;
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

/// Runs `body` with the instance and a device with the extension, through
/// the layer on lavapipe (or the lane's driver).
fn with_device(body: impl FnOnce(&TestInstance, &TestDevice<'_>)) {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        body(&inst, &dev);
    }
    inst.finish();
}

/// (grid, record index) of each entry record.
fn records_of(grids: &[u32]) -> Vec<(u32, u32)> {
    grids.iter().enumerate().map(|(i, &g)| (g, i as u32)).collect()
}

#[test]
fn hello_chain_matches_the_cpu_model() {
    with_device(|_, dev| {
        let records = records_of(&[1, 3, 16, 7]);
        let uavs = run_hello_chain(dev, &records, 1, |min, max, granularity| {
            assert!(min > 0 && min <= max && granularity > 0, "{min} {max} {granularity}");
            min
        })
        .expect("dispatch");
        assert_eq!(uavs[0], hello_chain(&records, &[]));
    });
}

/// Many entry records, some with empty grids: every workgroup of level 0
/// finds its own record among them (the search over the records' first
/// workgroups takes several steps, and an empty grid's record shares its
/// first workgroup with the next record's).
#[test]
fn many_records_some_empty_each_workgroup_finds_its_own() {
    with_device(|_, dev| {
        // Grids 0..=5 in an irregular order, the record index cycling.
        let records: Vec<(u32, u32)> = (0..301u32).map(|i| ((i * 7 + i / 5) % 6, i % 4)).collect();
        let uavs = run_hello_chain(dev, &records, 1, |min, max, _| max.min(min * 16)).expect("dispatch");
        assert_eq!(uavs[0], hello_chain(&records, &[]));
    });
}

/// Entry records past the layer's `GPU_GRIDS_FROM` (16384): their grids
/// are summed on the GPU (`grids.comp`) and level 0 is launched indirectly,
/// with the same result as the CPU's sums; twice, so that the second
/// dispatch finds the staging memory the first left.
#[test]
fn many_records_summed_on_the_gpu_each_workgroup_finds_its_own() {
    with_device(|_, dev| {
        // 17 chunks of 1024 records (`grids.comp`), the last one part full; grids 0..=3.
        let records: Vec<(u32, u32)> = (0..17_000u32).map(|i| ((i * 7 + i / 5) % 4, i % 4)).collect();
        let uavs = run_hello_chain(dev, &records, 2, |min, max, _| max.min(min * 64)).expect("dispatch");
        let want = hello_chain(&records, &[]);
        assert_eq!(uavs, vec![want.clone(), want]);
    });
}

/// One of that many records asks for more than firstNode's
/// MaxNumWorkgroupsAMDX (16): checked on the GPU, the dispatch launches
/// nothing (as a CPU-checked one records nothing), the status says why
/// when the submission is waited on, and the next dispatch runs.
#[test]
fn many_records_one_grid_past_the_maximum_launch_nothing() {
    with_device(|inst, dev| {
        inst.log().tolerate("EMU-SE-execution-graph-status");
        let mut records: Vec<(u32, u32)> = (0..17_000u32).map(|i| (i % 3, i % 4)).collect();
        records[12_345].0 = 17;
        let uavs = run_hello_chain(dev, &records, 1, |min, max, _| max.min(min * 64)).expect("dispatch");
        assert_eq!(uavs[0], vec![0; 8], "nothing launched");
        let reports = inst.log().tolerated();
        assert!(reports.iter().any(|r| r.contains("MaxNumWorkgroupsAMDX")), "{reports:?}");
        let fine = records_of(&[1, 3, 16, 7]);
        let uavs = run_hello_chain(dev, &fine, 1, |min, _, _| min).expect("dispatch");
        assert_eq!(uavs[0], hello_chain(&fine, &[]));
    });
}
