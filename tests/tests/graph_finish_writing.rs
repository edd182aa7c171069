//! `TrackFinishWritingAMDX` / `OpFinishWritingNodePayloadAMDX` (issue 5):
//! each record's eight workgroups write their part of the payload, and
//! `OpFinishWritingNodePayloadAMDX` returns true to exactly one workgroup
//! of the record (all its invocations, no other's), which then reads every
//! write. The node shaders (`tests/shaders/graphs/finish_count`, corpus
//! module 23 with numbered records) count, per record, the workgroups and
//! the invocations that saw "finished" and add up what they read.

use ash::vk;
use conformance_tests::graph::{Stage, TestGraph};
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

const FINISH_COUNT: &[u8] = include_bytes!("../shaders/graphs/finish_count.spv");
/// gather's workgroups per record and threads per workgroup.
const WORKGROUPS: u32 = 8;
const THREADS: u32 = 32;
/// Out: the record counter, then per record (at most 8) the readers'
/// workgroups, their sums and their invocations.
const OUT_WORDS: usize = 1 + 3 * 8;

/// What `records` records leave in Out: each read by one workgroup of
/// `THREADS` invocations, which saw workgroup w's `w * 10 + 1` for every w.
fn model(records: u32) -> Vec<u32> {
    let sum: u32 = (0..WORKGROUPS).map(|w| w * 10 + 1).sum();
    let mut out = vec![0u32; OUT_WORDS];
    out[0] = records;
    for r in 0..records as usize {
        out[1 + r] = 1;
        out[9 + r] = sum;
        out[17 + r] = THREADS;
    }
    out
}

#[test]
fn exactly_one_workgroup_reads_each_finished_record() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let out = dev.create_host_buffer(4 * OUT_WORDS as u64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        let stages = [Stage { entry: "spawner", node: None }, Stage { entry: "gather", node: None }];
        let graph = TestGraph::new(&dev, FINISH_COUNT, &stages, &[&out], 0).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let spawner = graph.node_index("spawner", 0).expect("spawner");
        for records in [1u32, 5, 8] {
            out.write_u32(&[0; OUT_WORDS]).expect("clear");
            // spawner has no input payload: `records` empty records, one
            // GatherRec each.
            dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(spawner, &[], records, 0)])).expect("submit");
            assert_eq!(out.read_u32(OUT_WORDS).expect("read"), model(records), "{records} records");
        }
    }
    inst.finish();
}
