//! `SharesInputWithAMDX` (issue 5) through the layer on lavapipe, corpus
//! module 21: every record dispatched to ("base", 0) also runs the node
//! "sharer", with the same payload.

use ash::vk;
use conformance_tests::graph::{Stage, TestGraph};
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

const SHARES: &[u8] = include_bytes!("../../spirv-lowering/tests/corpus/21_shares_input.spv");

#[test]
fn sharer_runs_on_every_record_of_its_base() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let out = dev.create_host_buffer(64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        out.write_u32(&[0; 16]).expect("clear");
        let stages = [Stage { entry: "base", node: None }, Stage { entry: "sharer", node: None }];
        let graph = TestGraph::new(&dev, SHARES, &stages, &[&out], 0).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let records: Vec<u8> = [0u32, 10, 4, 20, 8, 30].iter().flat_map(|w| w.to_le_bytes()).collect();
        let base = graph.node_index("base", 0).expect("base node");
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(base, &records, 3, 8)])).expect("submit");
        // base: Out[slot] = value; sharer: Out[slot + 1] = value + 1.
        let mut want = vec![0u32; 16];
        for (slot, value) in [(0, 10), (4, 20), (8, 30)] {
            want[slot] = value;
            want[slot + 1] = value + 1;
        }
        assert_eq!(out.read_u32(16).expect("read"), want);
    }
    inst.finish();
}
