//! Panic guard, VkResult case: with `VK_EMU_SE_TEST_PANIC=vkCreateBuffer`
//! (debug builds of the layer) the hooked `vkCreateBuffer` panics inside its
//! guard; the app gets `VK_ERROR_UNKNOWN` instead of an abort, and the
//! process and device keep working. Own file: the variable is per process.
//! The device enables the extension: the layer hooks these commands only
//! on devices where emulation is active.

use ash::vk;
use conformance_tests::{env, run_scale_add, InstanceOptions, TestDevice, TestInstance};

#[test]
fn panicking_vkcreatebuffer_returns_error_unknown() {
    env::init_with(&[("VK_EMU_SE_TEST_PANIC", "vkCreateBuffer")]).expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device with AMDX");
        let info = vk::BufferCreateInfo::default().size(256).usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        // SAFETY: valid device and create info.
        let r = unsafe { dev.device.create_buffer(&info, None) };
        assert_eq!(r, Err(vk::Result::ERROR_UNKNOWN));
        // A second call panics again and is caught again.
        // SAFETY: as above.
        let r = unsafe { dev.device.create_buffer(&info, None) };
        assert_eq!(r, Err(vk::Result::ERROR_UNKNOWN));
        // Other entry points are unaffected: a pipeline still builds.
        let module_words =
            conformance_tests::compute::spirv_words(conformance_tests::compute::SCALE_ADD_SPV).expect("spirv");
        let module_info = vk::ShaderModuleCreateInfo::default().code(&module_words);
        // SAFETY: valid device and SPIR-V.
        let module =
            unsafe { dev.device.create_shader_module(&module_info, None) }.expect("shader module after a caught panic");
        // SAFETY: unused module.
        unsafe { dev.device.destroy_shader_module(module, None) };
        // And run_scale_add fails cleanly at its buffer, not with an abort.
        assert!(run_scale_add(&dev, &[1, 2, 3], 1, 1).is_err());
    }
    inst.finish();
}
