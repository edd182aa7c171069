//! The `dump_spirv` setting (here through `VK_EXT_layer_settings`; the
//! environment variable is `VK_EMU_SE_DUMP_SPIRV`): creating a graph writes
//! every node's input SPIR-V, byte for byte what the application gave, and
//! the lowered SPIR-V the driver received, which `spirv-val` accepts.

use std::process::Command;

use ash::vk;
use conformance_tests::graph::{TestGraph, HELLO_CHAIN_SPV, HELLO_CHAIN_STAGES};
use conformance_tests::{string_setting, InstanceOptions, TestDevice, TestInstance};

#[test]
fn every_node_is_written_before_and_after_lowering() {
    let dir = std::env::temp_dir().join(format!("emu-se-dump-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_c = std::ffi::CString::new(dir.display().to_string()).expect("path");
    let value = [dir_c.as_ptr()];
    let settings = [string_setting(c"dump_spirv", &value)];
    let opts = InstanceOptions { layer_settings: &settings, ..InstanceOptions::with_layer() };
    let inst = TestInstance::new(&opts).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        let _graph = TestGraph::hello_chain(&dev, &uav).expect("graph pipeline");
    }
    inst.finish();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("dump directory written")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2 * HELLO_CHAIN_STAGES.len(), "{names:?}");
    for (slot, stage) in HELLO_CHAIN_STAGES.iter().enumerate() {
        let stem = names
            .iter()
            .find(|n| n.contains(&format!(".node{slot}.{}.0.input.spv", stage.entry)))
            .unwrap_or_else(|| panic!("no input file for {}: {names:?}", stage.entry))
            .trim_end_matches(".input.spv")
            .to_string();
        let input = std::fs::read(dir.join(format!("{stem}.input.spv"))).expect("input");
        assert_eq!(input, HELLO_CHAIN_SPV, "{stem}: the input is the application's module");
        let lowered = dir.join(format!("{stem}.lowered.spv"));
        let out = Command::new("spirv-val")
            .args(["--target-env", "vulkan1.3", "--scalar-block-layout"])
            .arg(&lowered)
            .output()
            .expect("spirv-val (SPIRV-Tools 2025.5) on PATH");
        assert!(out.status.success(), "{stem}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
