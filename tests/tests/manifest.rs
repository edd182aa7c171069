//! The in-tree explicit manifest: parses, names the layer, points at the
//! release build relative to itself, exports the negotiate function, and
//! lists `VK_AMDX_shader_enqueue` revision 2 with exactly the seven commands.

use std::collections::BTreeSet;

use conformance_tests::env::{workspace_root, LAYER_NAME};
use vk_amdx::COMMANDS;

#[test]
fn explicit_manifest_is_consistent() {
    let path = workspace_root().join("manifests/VkLayer_EMU_shader_enqueue.json");
    let text = std::fs::read_to_string(&path).expect("read manifest");
    let v: serde_json::Value = serde_json::from_str(&text).expect("manifest is JSON");
    assert_eq!(v["file_format_version"], "1.2.0");
    let layer = &v["layer"];
    assert_eq!(layer["name"], LAYER_NAME);
    assert_eq!(layer["library_path"], "../target/release/libVkLayer_EMU_shader_enqueue.so");
    assert!(layer["api_version"].as_str().is_some_and(|s| s.starts_with("1.3.")));
    assert_eq!(layer["functions"]["vkNegotiateLoaderLayerInterfaceVersion"], "vkNegotiateLoaderLayerInterfaceVersion");
    assert!(layer.get("disable_environment").is_none(), "explicit layer");
    let exts = layer["device_extensions"].as_array().expect("device_extensions");
    assert_eq!(exts.len(), 1);
    assert_eq!(exts[0]["name"], "VK_AMDX_shader_enqueue");
    assert_eq!(exts[0]["spec_version"], "2");
    let listed: BTreeSet<String> = exts[0]["entrypoints"]
        .as_array()
        .expect("entrypoints")
        .iter()
        .map(|e| e.as_str().expect("string").to_owned())
        .collect();
    let expected: BTreeSet<String> = COMMANDS.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    assert_eq!(listed, expected);
    assert_eq!(exts[0]["entrypoints"].as_array().map(Vec::len), Some(7), "no duplicates");
}
