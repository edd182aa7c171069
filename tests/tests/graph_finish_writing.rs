//! `TrackFinishWritingAMDX` / `OpFinishWritingNodePayloadAMDX` (issue 5),
//! corpus module 23: a record's eight workgroups each write their part of
//! the payload; the one workgroup that sees "finished" (the last) sums them.

use ash::vk;
use conformance_tests::graph::{Stage, TestGraph};
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

const FINISH: &[u8] = include_bytes!("../../spirv-lowering/tests/corpus/23_finish_writing.spv");

#[test]
fn last_workgroup_sees_every_write() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let out = dev.create_host_buffer(16, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        let stages = [Stage { entry: "spawner", node: None }, Stage { entry: "gather", node: None }];
        let graph = TestGraph::new(&dev, FINISH, &stages, &[&out], 0).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        for spawners in [1u32, 5] {
            out.write_u32(&[0; 4]).expect("clear");
            // spawner has no input payload: `spawners` empty records.
            dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, &[], spawners, 0)])).expect("submit");
            // Each record: workgroups 0..8 write g * 10 + 1; exactly one sums them.
            let sum: u32 = (0..8).map(|g| g * 10 + 1).sum();
            assert_eq!(out.read_u32(1).expect("read"), vec![sum], "{spawners} records");
        }
    }
    inst.finish();
}
