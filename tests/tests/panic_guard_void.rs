//! Panic guard, void-command case: with
//! `VK_EMU_SE_TEST_PANIC=vkCmdPushConstants` (debug builds of the layer) the
//! hooked command panics inside its guard; the command buffer is poisoned
//! and `vkEndCommandBuffer` returns `VK_ERROR_UNKNOWN`. A command buffer that
//! does not call it still records and runs. Own file: the variable is per process.
//! The device enables the extension: the layer hooks these commands only
//! on devices where emulation is active.

use ash::vk;
use conformance_tests::compute::{scale_add_push, spirv_words, SCALE_ADD_SPV};
use conformance_tests::{env, InstanceOptions, TestDevice, TestInstance};

#[test]
fn panicking_void_command_poisons_command_buffer() {
    env::init_with(&[("VK_EMU_SE_TEST_PANIC", "vkCmdPushConstants")]).expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device with AMDX");
        let buf = dev
            .create_host_buffer(16, vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST)
            .expect("buffer");
        let words = spirv_words(SCALE_ADD_SPV).expect("spirv");
        let p = dev.create_storage_compute(&words, 12, &buf).expect("pipeline");

        // Record only the panicking command: vkEndCommandBuffer must fail.
        let result = dev.submit_once(|cb| {
            let push = scale_add_push(1, 2, 3);
            // SAFETY: cb is recording; the layout has a 12-byte compute range.
            unsafe { dev.device.cmd_push_constants(cb, p.layout, vk::ShaderStageFlags::COMPUTE, 0, &push) };
        });
        match result {
            Err(conformance_tests::Error::Vk { what, result }) => {
                assert_eq!(what, "vkEndCommandBuffer");
                assert_eq!(result, vk::Result::ERROR_UNKNOWN);
            }
            other => panic!("expected vkEndCommandBuffer -> VK_ERROR_UNKNOWN, got {other:?}"),
        }

        // A command buffer without the panicking command still works.
        dev.submit_once(|cb| {
            // SAFETY: cb is recording; buf is a transfer destination.
            unsafe { dev.device.cmd_fill_buffer(cb, buf.buffer, 0, 16, 0x1234_5678) };
        })
        .expect("unpoisoned command buffer");
        assert_eq!(buf.read_u32(4).expect("read"), [0x1234_5678; 4]);
    }
    inst.finish();
}
