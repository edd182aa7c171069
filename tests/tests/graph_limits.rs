//! Pipeline creation refuses what exceeds the limits the layer advertises
//! (issue 12), through the real loader: each graph below fails with
//! `VK_ERROR_INITIALIZATION_FAILED` in milliseconds, the layer's log names the
//! node and the limit, and the device still creates a valid graph afterwards.
//! The nodes are in `tests/shaders/graphs/limits.spvasm`. Own file: the log
//! goes to a file named in the environment, read once per process.

use std::time::Instant;

use ash::vk;
use conformance_tests::graph::{Stage, TestGraph};
use conformance_tests::{env, Error, InstanceOptions, TestDevice, TestInstance};

const LIMITS: &[u8] = include_bytes!("../shaders/graphs/limits.spv");

/// Graphs past one limit each, and what the log must say about them.
const REFUSED: [(&str, &[Stage<'static>], &str); 4] = [
    (
        "a 32,772-byte input record",
        &[Stage { entry: "huge", node: None }],
        "node (\"huge\", 0): its input record is 32772 bytes; maxExecutionGraphShaderPayloadSize is 32768",
    ),
    (
        "MaxRecords(257) on an output",
        &[Stage { entry: "fan", node: None }, Stage { entry: "leaf2", node: None }],
        "allocates up to 257 records (NodeMaxPayloadsAMDX); maxExecutionGraphShaderPayloadCount is 256",
    ),
    (
        "MaxNodeRecursionAMDX 0xFFFFFFFF",
        &[Stage { entry: "deep", node: None }],
        "levels deep through node \"deep\" (recursion included); the limit is 32",
    ),
    (
        "node index 0xFFFFFFFE",
        &[Stage { entry: "leaf2", node: Some(("leaf2", 0xFFFF_FFFE)) }],
        "node (\"leaf2\", 4294967294): the node index is above the layer's limit of 1048575",
    ),
];

#[test]
fn graphs_past_the_advertised_limits_are_refused() {
    let log_path = env::init_with_log_file("limits", &[]).expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let out = dev.create_host_buffer(64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        for (case, stages, message) in REFUSED {
            let started = Instant::now();
            match TestGraph::from_modules(&dev, &[(LIMITS, stages)], &[&out], 0) {
                Err(Error::Vk { result, .. }) => assert_eq!(result, vk::Result::ERROR_INITIALIZATION_FAILED, "{case}"),
                Err(other) => panic!("{case}: unexpected error {other}"),
                Ok(_) => panic!("{case}: the graph was created"),
            }
            eprintln!("{case}: refused in {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
            let text = std::fs::read_to_string(&log_path).unwrap_or_default();
            assert!(text.contains(message), "{case}: the log does not say {message:?}:\n{text}");
        }
        // Within the limits the same nodes link and run.
        out.write_u32(&[0; 16]).expect("clear");
        let stages = [Stage { entry: "leaf2", node: None }];
        let graph = TestGraph::from_modules(&dev, &[(LIMITS, &stages)], &[&out], 0).expect("valid graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let record = 5u32.to_le_bytes();
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, &record, 1, 4)])).expect("submit");
        assert_eq!(out.read_u32(6).expect("read")[5], 6);
    }
    inst.finish();
    let _ = std::fs::remove_file(&log_path);
}
