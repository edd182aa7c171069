//! The implicit manifest's `disable_environment`: with `VK_EMU_SE_DISABLE=1`
//! the loader skips the installed layer, so nothing reports the
//! `shaderEnqueue` feature. (Mesa 25's lavapipe lists
//! `VK_AMDX_shader_enqueue` itself with the feature off, so the extension
//! list alone cannot tell.) Own file: the variable is per process.

use ash::vk;
use conformance_tests::{env, InstanceOptions, TestInstance};
use vk_amdx::PhysicalDeviceShaderEnqueueFeatures;

#[test]
fn implicit_layer_is_disabled_by_env() {
    let test_env = env::init_with(&[("VK_EMU_SE_DISABLE", "1")]).expect("environment");
    test_env.install_implicit().expect("install implicit manifest");
    let inst = TestInstance::new(&InstanceOptions::without_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let mut amdx = PhysicalDeviceShaderEnqueueFeatures::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut amdx);
    // SAFETY: valid physical device and output chain.
    unsafe { inst.instance.get_physical_device_features2(pd, &mut f2) };
    assert_ne!(amdx.shader_enqueue, vk::TRUE, "shaderEnqueue reported although VK_EMU_SE_DISABLE=1");
    inst.finish();
}
