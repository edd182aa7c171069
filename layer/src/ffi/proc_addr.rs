//! The exported entry points the loader looks for (interface negotiation,
//! `vkGetInstanceProcAddr`, `vkGetDeviceProcAddr`, and the legacy
//! enumeration exports of pre-negotiation loaders), and the tables of hooks.
//!
//! The exports are thin wrappers: the layer never hands out the address of
//! an exported symbol, because in a process that links `libvulkan.so.1` the
//! dynamic linker binds such references to the loader's functions of the
//! same name (ELF symbol interposition), and the loader would be given its
//! own `vkGetInstanceProcAddr` back (seen: `Failed to find 'vkCreateInstance'`,
//! and a deadlock under Mesa's device-select layer).

use super::guard::guard_value;
use super::loader::{NegotiateLayerInterface, INTERFACE_VERSION, NEGOTIATE_INTERFACE_STRUCT};
use super::{
    c_str, commands, descriptor_buffer, device, dispatch_key, graph, instance, maintenance6, rendering, report,
    resources, templates, write_array,
};
use crate::device::{DeviceState, DEVICES};
use crate::state::INSTANCES;
use ash::vk;
use std::ffi::{c_char, CStr};

/// Casts a hook to the loader's generic function pointer type.
macro_rules! hook {
    ($f:expr) => {
        // SAFETY: the loader casts it back to the prototype of the name it asked for.
        Some(unsafe { std::mem::transmute::<*const (), unsafe extern "system" fn()>($f as *const ()) })
    };
}

/// Hooks reachable from `vkGetInstanceProcAddr` with any instance (or none).
fn global_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkGetInstanceProcAddr" => hook!(get_instance_proc_addr),
        b"vkCreateInstance" => hook!(instance::create_instance),
        b"vkEnumerateInstanceLayerProperties" => hook!(enumerate_instance_layer_properties),
        b"vkEnumerateInstanceExtensionProperties" => hook!(enumerate_instance_extension_properties),
        _ => None,
    }
}

/// Instance-level hooks (with a valid instance).
fn instance_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkDestroyInstance" => hook!(instance::destroy_instance),
        b"vkEnumerateDeviceExtensionProperties" => hook!(enumerate_device_extension_properties),
        b"vkEnumerateDeviceLayerProperties" => hook!(enumerate_device_layer_properties),
        b"vkGetPhysicalDeviceFeatures2" => hook!(instance::get_physical_device_features2),
        b"vkGetPhysicalDeviceFeatures2KHR" => hook!(instance::get_physical_device_features2_khr),
        b"vkGetPhysicalDeviceProperties2" => hook!(instance::get_physical_device_properties2),
        b"vkGetPhysicalDeviceProperties2KHR" => hook!(instance::get_physical_device_properties2_khr),
        b"vkCreateDevice" => hook!(device::create_device),
        b"vkGetDeviceProcAddr" => hook!(get_device_proc_addr),
        _ => graph_hook(name),
    }
}

/// The seven `VK_AMDX_shader_enqueue` commands.
fn graph_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkCreateExecutionGraphPipelinesAMDX" => hook!(graph::create_execution_graph_pipelines),
        b"vkGetExecutionGraphPipelineScratchSizeAMDX" => hook!(graph::get_scratch_size),
        b"vkGetExecutionGraphPipelineNodeIndexAMDX" => hook!(graph::get_node_index),
        b"vkCmdInitializeGraphScratchMemoryAMDX" => hook!(graph::cmd_initialize_scratch),
        b"vkCmdDispatchGraphAMDX" => hook!(graph::cmd_dispatch_graph),
        b"vkCmdDispatchGraphIndirectAMDX" => hook!(graph::cmd_dispatch_graph_indirect),
        b"vkCmdDispatchGraphIndirectCountAMDX" => hook!(graph::cmd_dispatch_graph_indirect_count),
        _ => None,
    }
}

/// Whether `name` is a command of a device extension the application did
/// not enable (the layer then answers as the driver does, with null, rather
/// than with its hook).
fn extension_not_enabled(state: &crate::device::DeviceState, name: &CStr) -> bool {
    match name.to_bytes() {
        b"vkCmdBindDescriptorSets2KHR"
        | b"vkCmdBindDescriptorSets2"
        | b"vkCmdPushConstants2KHR"
        | b"vkCmdPushConstants2"
        | b"vkCmdPushDescriptorSet2KHR"
        | b"vkCmdPushDescriptorSet2"
        | b"vkCmdPushDescriptorSetWithTemplate2KHR"
        | b"vkCmdPushDescriptorSetWithTemplate2" => state.dispatch.maintenance6.is_none(),
        // These two need both extensions.
        b"vkCmdSetDescriptorBufferOffsets2EXT" | b"vkCmdBindDescriptorBufferEmbeddedSamplers2EXT" => {
            state.dispatch.maintenance6.is_none() || state.dispatch.descriptor_buffer.is_none()
        }
        b"vkCmdPushDescriptorSetKHR" | b"vkCmdPushDescriptorSetWithTemplateKHR" => {
            state.dispatch.push_descriptor.is_none()
        }
        b"vkCmdSetDescriptorBufferOffsetsEXT" | b"vkCmdBindDescriptorBufferEmbeddedSamplersEXT" => {
            state.dispatch.descriptor_buffer.is_none()
        }
        _ => false,
    }
}

/// Hooks of devices with mesh nodes only (see `rendering`): every other
/// device's rendering and dynamic-state commands go straight to the driver,
/// and so do the rendering commands of a device that has neither core 1.3
/// nor `VK_KHR_dynamic_rendering` entry points to forward them to.
fn mesh_hook(state: &DeviceState, name: &CStr) -> vk::PFN_vkVoidFunction {
    let rendering = state.dispatch.rendering.is_some();
    match name.to_bytes() {
        b"vkCmdBeginRendering" | b"vkCmdBeginRenderingKHR" if rendering => hook!(rendering::cmd_begin_rendering),
        b"vkCmdEndRendering" | b"vkCmdEndRenderingKHR" if rendering => hook!(rendering::cmd_end_rendering),
        b"vkCreateRenderPass" => hook!(rendering::create_render_pass),
        b"vkCreateRenderPass2" | b"vkCreateRenderPass2KHR" => hook!(rendering::create_render_pass2),
        b"vkDestroyRenderPass" => hook!(rendering::destroy_render_pass),
        b"vkCmdBeginRenderPass" => hook!(rendering::cmd_begin_render_pass),
        b"vkCmdBeginRenderPass2" | b"vkCmdBeginRenderPass2KHR" => hook!(rendering::cmd_begin_render_pass2),
        b"vkCmdEndRenderPass" => hook!(rendering::cmd_end_render_pass),
        b"vkCmdEndRenderPass2" | b"vkCmdEndRenderPass2KHR" => hook!(rendering::cmd_end_render_pass2),
        b"vkCmdSetViewport" => hook!(rendering::cmd_set_viewport),
        b"vkCmdSetScissor" => hook!(rendering::cmd_set_scissor),
        _ => None,
    }
}

/// Device-level hooks, installed only on devices where emulation is active:
/// elsewhere the loader's dispatch table points straight at the next layer.
fn emulated_device_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkCreateShaderModule" => hook!(resources::create_shader_module),
        b"vkDestroyShaderModule" => hook!(resources::destroy_shader_module),
        b"vkCreateBuffer" => hook!(resources::create_buffer),
        b"vkDestroyBuffer" => hook!(resources::destroy_buffer),
        b"vkGetBufferDeviceAddress" => hook!(resources::get_buffer_device_address),
        b"vkGetBufferDeviceAddressKHR" => hook!(resources::get_buffer_device_address),
        b"vkGetBufferDeviceAddressEXT" => hook!(resources::get_buffer_device_address),
        b"vkCreateComputePipelines" => hook!(resources::create_compute_pipelines),
        b"vkCreateGraphicsPipelines" => hook!(resources::create_graphics_pipelines),
        b"vkDestroyPipeline" => hook!(resources::destroy_pipeline),
        b"vkCreateDescriptorSetLayout" => hook!(resources::create_descriptor_set_layout),
        b"vkDestroyDescriptorSetLayout" => hook!(resources::destroy_descriptor_set_layout),
        b"vkCreatePipelineLayout" => hook!(resources::create_pipeline_layout),
        b"vkDestroyPipelineLayout" => hook!(resources::destroy_pipeline_layout),
        b"vkAllocateCommandBuffers" => hook!(commands::allocate_command_buffers),
        b"vkFreeCommandBuffers" => hook!(commands::free_command_buffers),
        b"vkBeginCommandBuffer" => hook!(commands::begin_command_buffer),
        b"vkEndCommandBuffer" => hook!(commands::end_command_buffer),
        b"vkResetCommandBuffer" => hook!(commands::reset_command_buffer),
        b"vkResetCommandPool" => hook!(commands::reset_command_pool),
        b"vkDestroyCommandPool" => hook!(commands::destroy_command_pool),
        b"vkCmdBindPipeline" => hook!(commands::cmd_bind_pipeline),
        b"vkCmdBindDescriptorSets" => hook!(commands::cmd_bind_descriptor_sets),
        b"vkCmdPushConstants" => hook!(commands::cmd_push_constants),
        b"vkCmdPushDescriptorSetKHR" => hook!(commands::cmd_push_descriptor_set),
        b"vkCreateDescriptorUpdateTemplate" | b"vkCreateDescriptorUpdateTemplateKHR" => {
            hook!(templates::create_descriptor_update_template)
        }
        b"vkDestroyDescriptorUpdateTemplate" | b"vkDestroyDescriptorUpdateTemplateKHR" => {
            hook!(templates::destroy_descriptor_update_template)
        }
        b"vkCmdPushDescriptorSetWithTemplateKHR" => hook!(templates::cmd_push_descriptor_set_with_template),
        b"vkCmdSetDescriptorBufferOffsetsEXT" => hook!(descriptor_buffer::cmd_set_descriptor_buffer_offsets),
        b"vkCmdBindDescriptorBufferEmbeddedSamplersEXT" => {
            hook!(descriptor_buffer::cmd_bind_descriptor_buffer_embedded_samplers)
        }
        b"vkCmdBindDescriptorSets2KHR" | b"vkCmdBindDescriptorSets2" => hook!(maintenance6::cmd_bind_descriptor_sets2),
        b"vkCmdPushConstants2KHR" | b"vkCmdPushConstants2" => hook!(maintenance6::cmd_push_constants2),
        b"vkCmdPushDescriptorSet2KHR" | b"vkCmdPushDescriptorSet2" => hook!(maintenance6::cmd_push_descriptor_set2),
        b"vkCmdPushDescriptorSetWithTemplate2KHR" | b"vkCmdPushDescriptorSetWithTemplate2" => {
            hook!(maintenance6::cmd_push_descriptor_set_with_template2)
        }
        b"vkCmdSetDescriptorBufferOffsets2EXT" => hook!(maintenance6::cmd_set_descriptor_buffer_offsets2),
        b"vkCmdBindDescriptorBufferEmbeddedSamplers2EXT" => {
            hook!(maintenance6::cmd_bind_descriptor_buffer_embedded_samplers2)
        }
        b"vkQueueSubmit" => hook!(report::queue_submit),
        b"vkQueueSubmit2" => hook!(report::queue_submit2_core),
        b"vkQueueSubmit2KHR" => hook!(report::queue_submit2_khr),
        b"vkWaitForFences" => hook!(report::wait_for_fences),
        b"vkGetFenceStatus" => hook!(report::get_fence_status),
        b"vkResetFences" => hook!(report::reset_fences),
        b"vkQueueWaitIdle" => hook!(report::queue_wait_idle),
        b"vkDeviceWaitIdle" => hook!(report::device_wait_idle),
        _ => graph_hook(name),
    }
}

/// # Safety
/// Called by the loader with a valid negotiation structure.
#[no_mangle]
pub unsafe extern "system" fn vkNegotiateLoaderLayerInterfaceVersion(
    p_version_struct: *mut NegotiateLayerInterface,
) -> vk::Result {
    super::guard::guard_result("vkNegotiateLoaderLayerInterfaceVersion", || {
        // SAFETY: the loader passes a valid, writable structure (or null).
        let Some(negotiate) = (unsafe { p_version_struct.as_mut() }) else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        if negotiate.s_type != NEGOTIATE_INTERFACE_STRUCT
            || negotiate.loader_layer_interface_version < INTERFACE_VERSION
        {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        }
        negotiate.loader_layer_interface_version = INTERFACE_VERSION;
        negotiate.pfn_get_instance_proc_addr = Some(get_instance_proc_addr);
        negotiate.pfn_get_device_proc_addr = Some(get_device_proc_addr);
        negotiate.pfn_get_physical_device_proc_addr = None;
        vk::Result::SUCCESS
    })
}

/// # Safety
/// Loader contract: `name` is a valid C string, `instance` null or valid.
unsafe extern "system" fn get_instance_proc_addr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    guard_value("vkGetInstanceProcAddr", None, || {
        // SAFETY: the loader passes a valid name.
        let name = unsafe { c_str(name) }?;
        if let Some(f) = global_hook(name) {
            return Some(f);
        }
        if instance == vk::Instance::null() {
            return None;
        }
        if let Some(f) = instance_hook(name) {
            return Some(f);
        }
        // SAFETY: a valid instance created through the loader.
        let state = INSTANCES.get(unsafe { dispatch_key(instance) })?;
        // SAFETY: the next layer's GIPA with its own instance.
        unsafe { (state.dispatch.get_instance_proc_addr)(instance, name.as_ptr()) }
    })
}

/// Exported for the loader; see the module doc.
///
/// # Safety
/// Loader contract.
#[no_mangle]
pub unsafe extern "system" fn vkGetInstanceProcAddr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: same contract.
    unsafe { get_instance_proc_addr(instance, name) }
}

/// # Safety
/// Loader contract: `device` is valid and `name` a valid C string.
unsafe extern "system" fn get_device_proc_addr(device: vk::Device, name: *const c_char) -> vk::PFN_vkVoidFunction {
    guard_value("vkGetDeviceProcAddr", None, || {
        // SAFETY: the loader passes a valid name.
        let name = unsafe { c_str(name) }?;
        match name.to_bytes() {
            b"vkGetDeviceProcAddr" => return hook!(get_device_proc_addr),
            b"vkDestroyDevice" => return hook!(device::destroy_device),
            _ => {}
        }
        // SAFETY: a valid device.
        let state = DEVICES.get(unsafe { dispatch_key(device) })?;
        if state.mesh_enqueue {
            if let Some(f) = mesh_hook(&state, name) {
                return Some(f);
            }
        }
        if state.emulated && !extension_not_enabled(&state, name) {
            if let Some(f) = emulated_device_hook(name) {
                return Some(f);
            }
        }
        state.dispatch.next_proc_addr(name)
    })
}

/// Exported for the loader; see the module doc.
///
/// # Safety
/// Loader contract.
#[no_mangle]
pub unsafe extern "system" fn vkGetDeviceProcAddr(device: vk::Device, name: *const c_char) -> vk::PFN_vkVoidFunction {
    // SAFETY: same contract.
    unsafe { get_device_proc_addr(device, name) }
}

/// The layer's own `VkLayerProperties`.
fn layer_properties() -> vk::LayerProperties {
    let props =
        vk::LayerProperties { spec_version: vk::API_VERSION_1_3, implementation_version: 1, ..Default::default() };
    // Both fit their fixed-size arrays.
    let props = props.layer_name(c"VK_LAYER_EMU_shader_enqueue").unwrap_or(props);
    props.description(c"VK_AMDX_shader_enqueue (revision 2) emulated on plain compute").unwrap_or(props)
}

fn is_our_layer(name: *const c_char) -> bool {
    // SAFETY: the loader passes a valid C string or null.
    unsafe { c_str(name) }.is_some_and(|n| n.to_bytes() == crate::settings::LAYER_NAME.as_bytes())
}

/// # Safety
/// Legacy loader export; valid count/array pointers.
unsafe extern "system" fn enumerate_instance_layer_properties(
    count: *mut u32,
    props: *mut vk::LayerProperties,
) -> vk::Result {
    // SAFETY: caller's contract.
    super::guard::guard_result("vkEnumerateInstanceLayerProperties", || unsafe {
        write_array(&[layer_properties()], count, props)
    })
}

/// Exported for the loader; see the module doc.
///
/// # Safety
/// Loader contract.
#[no_mangle]
pub unsafe extern "system" fn vkEnumerateInstanceLayerProperties(
    count: *mut u32,
    props: *mut vk::LayerProperties,
) -> vk::Result {
    // SAFETY: same contract.
    unsafe { enumerate_instance_layer_properties(count, props) }
}

/// # Safety
/// Legacy loader export; valid count/array pointers.
unsafe extern "system" fn enumerate_device_layer_properties(
    _pd: vk::PhysicalDevice,
    count: *mut u32,
    props: *mut vk::LayerProperties,
) -> vk::Result {
    // SAFETY: caller's contract.
    super::guard::guard_result("vkEnumerateDeviceLayerProperties", || unsafe {
        write_array(&[layer_properties()], count, props)
    })
}

/// Exported for the loader; see the module doc.
///
/// # Safety
/// Loader contract.
#[no_mangle]
pub unsafe extern "system" fn vkEnumerateDeviceLayerProperties(
    pd: vk::PhysicalDevice,
    count: *mut u32,
    props: *mut vk::LayerProperties,
) -> vk::Result {
    // SAFETY: same contract.
    unsafe { enumerate_device_layer_properties(pd, count, props) }
}

/// The layer adds no instance extensions.
///
/// # Safety
/// Legacy loader export; valid pointers.
unsafe extern "system" fn enumerate_instance_extension_properties(
    layer_name: *const c_char,
    count: *mut u32,
    props: *mut vk::ExtensionProperties,
) -> vk::Result {
    super::guard::guard_result("vkEnumerateInstanceExtensionProperties", || {
        if !is_our_layer(layer_name) {
            return vk::Result::ERROR_LAYER_NOT_PRESENT;
        }
        // SAFETY: caller's contract.
        unsafe { write_array::<vk::ExtensionProperties>(&[], count, props) }
    })
}

/// Exported for the loader; see the module doc.
///
/// # Safety
/// Loader contract.
#[no_mangle]
pub unsafe extern "system" fn vkEnumerateInstanceExtensionProperties(
    layer_name: *const c_char,
    count: *mut u32,
    props: *mut vk::ExtensionProperties,
) -> vk::Result {
    // SAFETY: same contract.
    unsafe { enumerate_instance_extension_properties(layer_name, count, props) }
}

/// # Safety
/// Loader contract: valid physical device and pointers.
unsafe extern "system" fn enumerate_device_extension_properties(
    pd: vk::PhysicalDevice,
    layer_name: *const c_char,
    count: *mut u32,
    props: *mut vk::ExtensionProperties,
) -> vk::Result {
    super::guard::guard_result("vkEnumerateDeviceExtensionProperties", || {
        if is_our_layer(layer_name) {
            // SAFETY: caller's contract.
            return unsafe { write_array(&[crate::advertise::extension_properties()], count, props) };
        }
        // SAFETY: caller's contract.
        unsafe { instance::enumerate_device_extensions(pd, layer_name, count, props) }
    })
}

/// Exported for the loader; see the module doc.
///
/// # Safety
/// Loader contract.
#[no_mangle]
pub unsafe extern "system" fn vkEnumerateDeviceExtensionProperties(
    pd: vk::PhysicalDevice,
    layer_name: *const c_char,
    count: *mut u32,
    props: *mut vk::ExtensionProperties,
) -> vk::Result {
    // SAFETY: same contract.
    unsafe { enumerate_device_extension_properties(pd, layer_name, count, props) }
}
