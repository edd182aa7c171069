//! Environment settings: `VK_EMU_SE_LOG=trace` with `VK_EMU_SE_LOG_FILE`
//! writes the layer's log to that file, and `VK_EMU_SE_FORCE_EMULATION=1`
//! keeps the extension listed. Own file: the loader and layer read the
//! environment once per process.

use conformance_tests::{env, InstanceOptions, TestDevice, TestInstance};

#[test]
fn log_file_and_force_emulation_from_env() {
    let log_path = std::env::temp_dir().join(format!("emu-se-log-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&log_path);
    let log_str = log_path.display().to_string();
    env::init_with(&[
        ("VK_EMU_SE_LOG", "trace"),
        ("VK_EMU_SE_LOG_FILE", log_str.as_str()),
        ("VK_EMU_SE_FORCE_EMULATION", "1"),
    ])
    .expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let exts = inst.device_extensions(pd).expect("extensions");
    let listed = exts.iter().filter(|(n, v)| n == "VK_AMDX_shader_enqueue" && *v == 2).count();
    assert_eq!(listed, 1);
    {
        let _dev = TestDevice::with_amdx(&inst, pd).expect("device with AMDX");
    }
    inst.finish();
    let text = std::fs::read_to_string(&log_path)
        .unwrap_or_else(|e| panic!("log file {} not written: {e}", log_path.display()));
    assert!(!text.trim().is_empty(), "log file is empty");
    let _ = std::fs::remove_file(&log_path);
}
