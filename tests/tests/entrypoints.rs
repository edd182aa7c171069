//! The seven AMDX device commands resolve through `vkGetDeviceProcAddr` on a
//! device that enabled the extension, and none do on one that did not.

use conformance_tests::{InstanceOptions, TestDevice, TestInstance};
use vk_amdx::COMMANDS;

#[test]
fn all_seven_resolve_when_enabled() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device with AMDX");
        let missing: Vec<_> = COMMANDS.iter().filter(|name| dev.proc_addr(name).is_none()).collect();
        assert!(missing.is_empty(), "not resolved: {missing:?}");
    }
    inst.finish();
}

#[test]
fn none_resolve_when_not_enabled() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        let dev = TestDevice::new(&inst, pd, &[]).expect("plain device");
        let resolved: Vec<_> = COMMANDS.iter().filter(|name| dev.proc_addr(name).is_some()).collect();
        assert!(resolved.is_empty(), "resolved without the extension: {resolved:?}");
        // Core commands still resolve through the layer.
        assert!(dev.proc_addr(c"vkCmdDispatch").is_some());
    }
    inst.finish();
}
