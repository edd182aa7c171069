//! The `shader_statistics` setting (`VK_EMU_SE_SHADER_STATISTICS`): where
//! the driver has `VK_KHR_pipeline_executable_properties` the layer enables
//! it and logs each node kernel's statistics (`Register Count = ...` on
//! NVIDIA) when the graph is created; where it has not (Debian 12's
//! lavapipe), it says so once and the graph works as without the setting.
//! Own file: the environment is read once per process.

use ash::vk;
use conformance_tests::graph::{hello_chain_records, TestGraph};
use conformance_tests::models::hello_chain;
use conformance_tests::{env, InstanceOptions, TestDevice, TestInstance};

#[test]
fn node_kernels_are_described_where_the_driver_can() {
    let log_path = std::env::temp_dir().join(format!("emu-se-shader-stats-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&log_path);
    let log_str = log_path.display().to_string();
    env::init_with(&[
        ("VK_EMU_SE_SHADER_STATISTICS", "1"),
        ("VK_EMU_SE_LOG", "info"),
        ("VK_EMU_SE_LOG_FILE", log_str.as_str()),
    ])
    .expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let has_it = inst
        .device_extensions(pd)
        .expect("extensions")
        .iter()
        .any(|(n, _)| n == "VK_KHR_pipeline_executable_properties");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let entry = graph.node_index("firstNode", 0).expect("entry");
        let records = [(3, 1)];
        let bytes = hello_chain_records(&records);
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(entry, &bytes, 1, 8)])).expect("submit");
        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&records, &[]));
    }
    inst.finish();
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let _ = std::fs::remove_file(&log_path);
    let described: Vec<&str> = text.lines().filter(|l| l.contains("kernel:")).collect();
    if has_it {
        for node in ["firstNode", "secondNode", "thirdNode"] {
            assert!(described.iter().any(|l| l.contains(&format!("\"{node}\""))), "{node} not described:\n{text}");
        }
    } else {
        assert!(described.is_empty(), "{text}");
        assert_eq!(text.matches("no VK_KHR_pipeline_executable_properties").count(), 1, "said once:\n{text}");
    }
}
