//! Re-creating a graph from the same SPIR-V, as API translators do
//! (issue 13): the layer keeps each device's analyses and lowered kernels
//! (`layer/src/graph/lowered_cache.rs`), so every creation after the first
//! takes its kernels from that cache (the debug log says so for each node)
//! and only the driver compiles, through the application's
//! `VkPipelineCache`. Every re-created graph runs correctly. Creation times
//! are printed (`--nocapture`), not asserted. Own file: the log goes to a
//! file named in the environment.

use std::time::Instant;

use ash::vk;
use conformance_tests::dxc_models::bytes_of;
use conformance_tests::graph::{Stage, TestGraph, HELLO_CHAIN_SPV, HELLO_CHAIN_STAGES};
use conformance_tests::models::hello_chain;
use conformance_tests::{env, InstanceOptions, TestDevice, TestInstance};

const CREATIONS: usize = 10;

/// A graph of another module, created first so that the device's one-time
/// objects (the meta pipelines) do not count in the first creation below.
const WARM_UP: &[u8] = include_bytes!("../shaders/graphs/size.spv");

#[test]
fn recreated_graphs_take_their_kernels_from_the_cache() {
    let log_path = env::init_with_log_file("recreate", &[("VK_EMU_SE_LOG", "debug")]).expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        let leaf = [Stage { entry: "leaf", node: None }];
        drop(TestGraph::new(&dev, WARM_UP, &leaf, &[&uav], 0).expect("warm-up graph"));
        let mut millis = Vec::new();
        for creation in 0..CREATIONS {
            uav.write_u32(&[0; 8]).expect("clear");
            // A new shader module each time, as a translator makes one per PSO.
            let started = Instant::now();
            let graph = TestGraph::new(&dev, HELLO_CHAIN_SPV, &HELLO_CHAIN_STAGES, &[&uav], 0).expect("graph");
            millis.push(started.elapsed().as_secs_f64() * 1e3);
            let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
            let entry = graph.node_index("firstNode", 0).expect("entry");
            let records = bytes_of(&[2u32, 1]);
            dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(entry, &records, 1, 8)])).expect("submit");
            assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&[(2, 1)], &[]), "creation {creation}");
        }
        let nodes = HELLO_CHAIN_STAGES.len() as f64;
        let mut warm = millis[1..].to_vec();
        warm.sort_by(f64::total_cmp);
        eprintln!(
            "first creation (lowering): {:.2} ms per node; re-creations (kernels from the cache): median {:.2} ms per node",
            millis[0] / nodes,
            warm[warm.len() / 2] / nodes
        );
    }
    inst.finish();
    let text = std::fs::read_to_string(&log_path).expect("log");
    let hits = text.matches("lowered kernel taken from the device's cache").count();
    assert_eq!(hits, (CREATIONS - 1) * HELLO_CHAIN_STAGES.len(), "cache hits in the log:\n{text}");
    let _ = std::fs::remove_file(&log_path);
}
