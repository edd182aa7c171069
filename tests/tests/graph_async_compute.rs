//! Graph dispatches on an async-compute queue (issue 13): a device whose only
//! queue comes from a compute-only queue family (no graphics), as engines
//! and translators use for async compute, runs the hello chain correctly.
//! Lavapipe has one graphics+compute family, so there the test skips (see
//! `conformance_tests::skip`); the GPU lane (NVIDIA's driver has
//! compute-only families) must run it.

use ash::vk;
use conformance_tests::dxc_models::bytes_of;
use conformance_tests::graph::TestGraph;
use conformance_tests::models::hello_chain;
use conformance_tests::skip::{skip, Lane};
use conformance_tests::{compute_only_queue_family, Extras, InstanceOptions, TestDevice, TestInstance};

#[test]
fn hello_chain_on_a_compute_only_queue() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let compute_only = compute_only_queue_family(&inst, pd);
    match compute_only {
        None => skip(&[Lane::Gpu], "the driver has no compute-only queue family"),
        Some(family) => {
            let dev = TestDevice::with_amdx_extras(&inst, pd, family, 1, Extras::default())
                .expect("device on a compute-only family");
            let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
            uav.write_u32(&[0; 8]).expect("clear");
            let graph = TestGraph::hello_chain(&dev, &uav).expect("graph");
            let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
            let entry = graph.node_index("firstNode", 0).expect("entry");
            let records = bytes_of(&[5u32, 0, 3, 2]);
            dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(entry, &records, 2, 8)])).expect("submit");
            assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&[(5, 0), (3, 2)], &[]));
            eprintln!("compute-only queue family {family}: correct");
        }
    }
    inst.finish();
}
