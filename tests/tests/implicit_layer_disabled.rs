//! The implicit manifest's `disable_environment`: with `VK_EMU_SE_DISABLE=1`
//! the loader skips the installed layer, and plain lavapipe does not list
//! `VK_AMDX_shader_enqueue`. Own file: the variable is per process.

use conformance_tests::{env, InstanceOptions, TestInstance};

#[test]
fn implicit_layer_is_disabled_by_env() {
    let test_env = env::init_with(&[("VK_EMU_SE_DISABLE", "1")]).expect("environment");
    test_env.install_implicit().expect("install implicit manifest");
    let inst = TestInstance::new(&InstanceOptions::without_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let exts = inst.device_extensions(pd).expect("extensions");
    assert!(!exts.iter().any(|(n, _)| n == "VK_AMDX_shader_enqueue"), "extension listed although VK_EMU_SE_DISABLE=1");
    inst.finish();
}
