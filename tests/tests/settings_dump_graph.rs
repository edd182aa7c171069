//! The `dump_graph` setting (issue 14): creating the hello chain with
//! `VK_EMU_SE_DUMP_GRAPH` set writes `graph<N>.json` and `graph<N>.dot`,
//! which describe the graph's known shape: three nodes with their launch
//! modes and workgroup sizes, the edges firstNode -> secondNode -> thirdNode,
//! the levels each node can run at (all three are API entries, so the
//! chain's tail can also start at level 0), and scratch sizes equal to what
//! the API reports. Own file: the setting is read from the environment once
//! per process.

use ash::vk;
use conformance_tests::graph::TestGraph;
use conformance_tests::{env, InstanceOptions, TestDevice, TestInstance};

#[test]
fn graphs_are_described_as_json_and_dot() {
    let dir = std::env::temp_dir().join(format!("emu-se-graphs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_text = dir.display().to_string();
    env::init_with(&[("VK_EMU_SE_DUMP_GRAPH", dir_text.as_str())]).expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    let sizes = {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph");
        graph.scratch_sizes().expect("sizes")
    };
    inst.finish();
    let mut written: Vec<_> =
        std::fs::read_dir(&dir).expect("dump directory").map(|e| e.expect("entry").path()).collect();
    written.sort();
    let json_path = written.iter().find(|p| p.extension().is_some_and(|e| e == "json")).expect("a .json file");
    let dot_path = json_path.with_extension("dot");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json_path).expect("read json")).expect("valid JSON");
    let nodes = v["nodes"].as_array().expect("nodes");
    let shape: Vec<(&str, &str, u64, Vec<u64>)> = nodes
        .iter()
        .map(|n| {
            let levels = n["levels"].as_array().expect("levels").iter().map(|l| l.as_u64().expect("level")).collect();
            (
                n["name"].as_str().expect("name"),
                n["launch"]["mode"].as_str().expect("mode"),
                n["workgroup_size"][0].as_u64().expect("workgroup size"),
                levels,
            )
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            ("firstNode", "broadcast", 2, vec![0]),
            ("secondNode", "thread", 1, vec![0, 1]),
            ("thirdNode", "coalescing", 32, vec![0, 1, 2]),
        ]
    );
    assert_eq!(v["nodes"][0]["launch"]["max_grid"], serde_json::json!([16, 1, 1]));
    assert_eq!(v["nodes"][2]["launch"]["max_records"], 32);
    assert_eq!(v["nodes"][0]["outputs"][0]["targets"][0]["slot"], 1);
    let edges: Vec<(u64, u64, &str)> = v["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| {
            (e["from"].as_u64().expect("from"), e["to"].as_u64().expect("to"), e["output"].as_str().expect("output"))
        })
        .collect();
    assert_eq!(edges, vec![(0, 1, "secondNode"), (1, 2, "thirdNode")]);
    let scratch = &v["scratch"];
    assert_eq!(
        (scratch["min_size"].as_u64(), scratch["max_size"].as_u64(), scratch["granularity"].as_u64()),
        (Some(sizes.0), Some(sizes.1), Some(sizes.2))
    );
    let dot = std::fs::read_to_string(&dot_path).expect("read dot");
    assert!(dot.starts_with("digraph execution_graph {"), "{dot}");
    assert!(
        dot.contains("n0 -> n1 [label=\"secondNode\"];") && dot.contains("n1 -> n2 [label=\"thirdNode\"];"),
        "{dot}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
