//! Shader modules on emulated devices: a node shader module (one declaring
//! `ShaderEnqueueAMDX`) is kept, never shown to the driver, which gets a
//! placeholder kernel instead; pipelines find the kept code by handle (see
//! `pipelines`). Other modules pass through.

use super::guard::guard_result;
use super::lookup::device_of;
use super::objects::forget_then_forward;
use super::slice;
use crate::spirv_scan::{declares_shader_enqueue, PLACEHOLDER_KERNEL};
use ash::vk;
use std::sync::Arc;

pub(super) unsafe extern "system" fn create_shader_module(
    device: vk::Device,
    create_info: *const vk::ShaderModuleCreateInfo<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
    module: *mut vk::ShaderModule,
) -> vk::Result {
    guard_result("vkCreateShaderModule", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        let create = state.dispatch.fp.fp_v1_0().create_shader_module;
        // SAFETY: valid create info with `code_size` bytes of code.
        let info = unsafe { &*create_info };
        // SAFETY: as above.
        let words = unsafe { slice(info.p_code, (info.code_size / 4) as u32) };
        if !declares_shader_enqueue(words) {
            // SAFETY: forwarding.
            return unsafe { create(device, create_info, allocator, module) };
        }
        let mut placeholder = *info;
        placeholder.code_size = std::mem::size_of_val(&PLACEHOLDER_KERNEL);
        placeholder.p_code = PLACEHOLDER_KERNEL.as_ptr();
        // SAFETY: the placeholder create info lives across the call.
        let result = unsafe { create(device, &placeholder, allocator, module) };
        if result == vk::Result::SUCCESS {
            // SAFETY: written on success.
            let handle = unsafe { *module };
            state.resources.lock().node_modules.insert(handle, Arc::from(words));
            tracing::debug!("kept node shader module {handle:?} ({} words)", words.len());
        }
        result
    })
}

pub(super) unsafe extern "system" fn destroy_shader_module(
    device: vk::Device,
    module: vk::ShaderModule,
    allocator: *const vk::AllocationCallbacks<'static>,
) {
    // SAFETY: a valid device; forwarding the application's arguments.
    unsafe {
        forget_then_forward(
            "vkDestroyShaderModule",
            device,
            |state| {
                state.resources.lock().node_modules.remove(&module);
            },
            |state| (state.dispatch.fp.fp_v1_0().destroy_shader_module)(device, module, allocator),
        )
    }
}
