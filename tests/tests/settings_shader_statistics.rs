//! The `shader_statistics` setting (`VK_EMU_SE_SHADER_STATISTICS`): where
//! the driver has `VK_KHR_pipeline_executable_properties` the layer enables
//! it and logs each node kernel's statistics (`Register Count = ...` on
//! NVIDIA) when the graph is created; where it has not (Debian 12's
//! lavapipe), it says so once and the graph works as without the setting.
//! Own file: the environment is read once per process.

use conformance_tests::graph::run_hello_chain;
use conformance_tests::models::hello_chain;
use conformance_tests::{env, InstanceOptions, TestDevice, TestInstance};

#[test]
fn node_kernels_are_described_where_the_driver_can() {
    let log_path =
        env::init_with_log_file("shader-stats", &[("VK_EMU_SE_SHADER_STATISTICS", "1"), ("VK_EMU_SE_LOG", "info")])
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
        let records = [(3, 1)];
        let uavs = run_hello_chain(&dev, &records, 1, |min, _, _| min).expect("dispatch");
        assert_eq!(uavs[0], hello_chain(&records, &[]));
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
