//! The `statistics` setting (issue 14): a hello-chain dispatch of four
//! entry records with grids 16, 3, 9 and 12 writes one JSON line whose
//! counts match the chain's known work: level 0, firstNode: 4 records, 40
//! workgroups; level 1, secondNode: 80 records (thread nodes, 64 to a
//! workgroup: 2 workgroups); level 2, thirdNode: 80 records (coalescing 32:
//! 3 workgroups); and the scratch frames each level's records took
//! (firstNode's 80 records of 8 bytes and secondNode's 80: one frame each;
//! thirdNode enqueues nothing) within the pool. A second dispatch writes a
//! second line. Own file: the setting is read from the environment once per
//! process.

use ash::vk;
use conformance_tests::graph::{hello_chain_records, TestGraph};
use conformance_tests::models::hello_chain;
use conformance_tests::{env, InstanceOptions, TestDevice, TestInstance};

#[test]
fn dispatches_are_counted_per_level_and_node() {
    let path = std::env::temp_dir().join(format!("emu-se-statistics-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let path_text = path.display().to_string();
    env::init_with(&[("VK_EMU_SE_STATISTICS", path_text.as_str())]).expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let entry = graph.node_index("firstNode", 0).expect("entry");
        let records: Vec<(u32, u32)> = [16, 3, 9, 12].iter().enumerate().map(|(i, &g)| (g, i as u32)).collect();
        let bytes = hello_chain_records(&records);
        for run in 0..2 {
            dev.submit_once(|cb| graph.record(cb, &scratch, run == 0, &[(entry, &bytes, 4, 8)])).expect("submit");
        }
        let mut want = hello_chain(&records, &[]);
        want.iter_mut().for_each(|w| *w *= 2);
        assert_eq!(uav.read_u32(8).expect("read"), want);
    }
    inst.finish();
    let text = std::fs::read_to_string(&path).expect("statistics file");
    let _ = std::fs::remove_file(&path);
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(lines.len(), 2, "one line per dispatch:\n{text}");
    for v in &lines {
        let levels: Vec<(String, u64, u64)> = v["levels"]
            .as_array()
            .expect("levels")
            .iter()
            .flat_map(|l| l["nodes"].as_array().expect("nodes").clone())
            .map(|n| {
                (
                    n["node"].as_str().expect("name").to_string(),
                    n["records"].as_u64().expect("records"),
                    n["workgroups"].as_u64().expect("workgroups"),
                )
            })
            .collect();
        let expected = [("firstNode", 4, 40), ("secondNode", 80, 2), ("thirdNode", 80, 3)];
        let expected: Vec<(String, u64, u64)> = expected.iter().map(|&(n, r, w)| (n.to_string(), r, w)).collect();
        assert_eq!(levels, expected, "{v}");
        let frames: Vec<u64> =
            v["levels"].as_array().expect("levels").iter().map(|l| l["frames"].as_u64().expect("frames")).collect();
        assert_eq!(frames, [1, 1, 0], "frames claimed per level: {v}");
        assert_eq!(v["frames_high_water"].as_u64(), Some(1), "{v}");
        assert!(v["frame_count"].as_u64() > Some(1), "{v}");
        assert_eq!(v["frame_bytes"].as_u64(), Some(4096), "{v}");
    }
}
