//! The `profile` setting (here through `VK_EXT_layer_settings`; the
//! environment variable is `VK_EMU_SE_PROFILE`): every graph dispatch is
//! bracketed with timestamps, and once the submission has finished (here:
//! the fence wait) one JSON line per dispatch names each pass, its level and
//! node, and sums GPU time per level and per node. Checked against the hello
//! chain's known shape: three levels, one node each.

use ash::vk;
use conformance_tests::graph::TestGraph;
use conformance_tests::models::hello_chain;
use conformance_tests::{string_setting, InstanceOptions, TestDevice, TestInstance};

#[test]
fn every_pass_is_timed_and_written() {
    let path = std::env::temp_dir().join(format!("emu-se-profile-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let path_c = std::ffi::CString::new(path.display().to_string()).expect("path");
    let value = [path_c.as_ptr()];
    let settings = [string_setting(c"profile", &value)];
    let opts = InstanceOptions { layer_settings: &settings, ..InstanceOptions::with_layer() };
    let inst = TestInstance::new(&opts).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph pipeline");
        let (min, _, _) = graph.scratch_sizes().expect("scratch sizes");
        let scratch = graph.scratch(min).expect("scratch");
        let entry = graph.node_index("firstNode", 0).expect("node index");
        let records: Vec<u8> = [4u32, 1].iter().flat_map(|w| w.to_le_bytes()).collect();
        for _ in 0..2 {
            dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(entry, &records, 1, 8)])).expect("submit");
        }
        let mut want = hello_chain(&[(4, 1)], &[]);
        want.iter_mut().for_each(|w| *w *= 2);
        assert_eq!(uav.read_u32(8).expect("read"), want);
    }
    inst.finish();
    let text = std::fs::read_to_string(&path).expect("profile file written");
    let lines: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).expect("one JSON object a line")).collect();
    assert_eq!(lines.len(), 2, "one line per dispatch: {text}");
    for p in &lines {
        let passes = p["passes"].as_array().expect("passes");
        let kinds: Vec<&str> = passes.iter().filter_map(|x| x["kind"].as_str()).collect();
        for kind in ["node", "barrier"] {
            assert!(kinds.contains(&kind), "{kind} missing: {kinds:?}");
        }
        // A host dispatch reads level 0 where the host staged it and the
        // finishers write the status for the host: no transfers.
        for kind in ["upload", "status"] {
            assert!(!kinds.contains(&kind), "{kind} recorded: {kinds:?}");
        }
        let node_passes: Vec<(String, u64)> = passes
            .iter()
            .filter(|x| x["kind"] == "node")
            .map(|x| (x["node"].as_str().unwrap_or("").to_string(), x["level"].as_u64().unwrap_or(99)))
            .collect();
        let want: Vec<(String, u64)> =
            [("firstNode", 0), ("secondNode", 1), ("thirdNode", 2)].iter().map(|(n, l)| (n.to_string(), *l)).collect();
        assert_eq!(node_passes, want);
        let levels: Vec<u64> =
            p["levels"].as_array().expect("levels").iter().filter_map(|l| l["level"].as_u64()).collect();
        assert_eq!(levels, vec![0, 1, 2]);
        assert_eq!(p["nodes"].as_array().map(Vec::len), Some(3));
        let total = p["total_gpu_us"].as_f64().expect("total");
        let sum: f64 = passes.iter().filter_map(|x| x["gpu_us"].as_f64()).sum();
        assert!(total > 0.0 && (total - sum).abs() < 1e-6 * total.max(1.0), "{total} vs {sum}");
    }
    let _ = std::fs::remove_file(&path);
}
