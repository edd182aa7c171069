//! Shared by `settings_env.rs` and `layer_settings.rs`: runs the hello chain
//! on an instance whose settings ask for a debug log in a file and forced
//! emulation, and names the debug lines the layer must have written about
//! what was created.
//!
//! What `force_emulation` changes cannot be observed here: it only matters
//! where the driver implements VK_AMDX_shader_enqueue (`advertise.rs` then
//! passes through unless forced), and no driver here does (Mesa 25 lists
//! the extension with `shaderEnqueue` off, which is emulated either way);
//! the layer does not log the settings it read. What is checked is the
//! decision the layer logs, "emulated", which is what the setting asks for,
//! and that the extension is listed once, at the layer's revision 2.

use ash::vk;
use conformance_tests::graph::{hello_chain_records, TestGraph, HELLO_CHAIN_SPV};
use conformance_tests::instance::c_to_string;
use conformance_tests::models::hello_chain;
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

/// Checks the extension listing, creates a device, a node shader module and
/// the hello-chain graph, dispatches it (checked against the CPU model) and
/// returns the debug messages the layer must have logged about them. Extra
/// checks on the device run in `on_device`.
pub fn run_hello_chain(
    inst: &TestInstance,
    opts: &InstanceOptions<'_>,
    on_device: impl FnOnce(&TestDevice<'_>),
) -> Vec<String> {
    let pd = inst.pick_physical_device().expect("physical device");
    let exts = inst.device_extensions(pd).expect("extensions");
    let amdx: Vec<_> = exts.iter().filter(|(n, _)| n == "VK_AMDX_shader_enqueue").collect();
    assert_eq!(amdx.len(), 1, "{amdx:?}");
    assert_eq!(amdx[0].1, 2, "the layer's revision, not a driver's");
    // SAFETY: a physical device of this instance.
    let props = unsafe { inst.instance.get_physical_device_properties(pd) };
    let device_name = c_to_string(props.device_name_as_c_str().expect("device name"));
    let dev = TestDevice::with_amdx(inst, pd).expect("device with AMDX");
    on_device(&dev);
    let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
    uav.write_u32(&[0; 8]).expect("clear");
    let graph = TestGraph::hello_chain(&dev, &uav).expect("graph");
    let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
    let records = [(2, 1)];
    let bytes = hello_chain_records(&records);
    dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, &bytes, 1, 8)])).expect("submit");
    assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&records, &[]), "the emulated graph's result");
    let v = opts.api_version;
    let (major, minor, patch) = (vk::api_version_major(v), vk::api_version_minor(v), vk::api_version_patch(v));
    vec![
        format!("instance created (apiVersion {major}.{minor}.{patch})"),
        format!("{device_name}: VK_AMDX_shader_enqueue emulated"),
        format!("device {:?} created with VK_AMDX_shader_enqueue emulated", dev.device.handle()),
        format!("kept node shader module {:?} ({} words)", graph.module, HELLO_CHAIN_SPV.len() / 4),
        format!("execution graph {:?}: 3 nodes", graph.pipeline),
    ]
}

/// Asserts that the log file at `path` holds every `want` message as a
/// debug line (`<time> DEBUG <message>`), then removes it.
pub fn assert_logged(path: &std::path::Path, want: &[String]) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("log file {} not written: {e}", path.display()));
    let _ = std::fs::remove_file(path);
    let messages: Vec<&str> = text.lines().filter_map(|l| l.split_once(" DEBUG ").map(|(_, m)| m)).collect();
    for line in want {
        assert!(messages.contains(&line.as_str()), "the log lacks the debug line {line:?}:\n{text}");
    }
}
