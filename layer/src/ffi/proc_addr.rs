//! The exported entry points the loader looks for (interface negotiation,
//! `vkGetInstanceProcAddr`, `vkGetDeviceProcAddr`, and the legacy
//! enumeration exports of pre-negotiation loaders), and the table of hooks.
//!
//! Every hook is one line of [`HOOKS`] (built by `hooks!`): its Vulkan
//! name, the levels at which the layer hands it out, the extension gate
//! (if any) that must be open on the device, the function, and for the few
//! the loader also looks up as symbols, the signature of the export. Both
//! `vkGet*ProcAddr` lookups and the exports come from that line, as
//! Vulkan-ExtensionLayer generates its entry-point lists.
//!
//! The name a hook's guard logs (and that `VK_EMU_SE_TEST_PANIC` matches)
//! stays a literal in the hook's body: the guard runs inside the hook,
//! which the table only points to, and aliases share one hook. The test
//! `every_hook_logs_a_name_of_its_own` reads the `ffi/` sources and fails
//! when a hook's literal is not one of its names in the table.
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
    buffers, c_str, commands, descriptor_buffer, device, dispatch_key, graph, instance, layouts, maintenance6,
    pipelines, rendering, report, shader_modules, templates, write_array,
};
use crate::device::{DeviceState, DEVICES};
use crate::state::INSTANCES;
use ash::vk;
use std::ffi::{c_char, CStr};

/// The levels at which the layer hands a hook out (a set of bits).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Levels(u8);

impl Levels {
    /// `vkGetInstanceProcAddr` with any instance, or none.
    const GLOBAL: Levels = Levels(1);
    /// `vkGetInstanceProcAddr` with a valid instance (after the global hooks).
    const INSTANCE: Levels = Levels(2);
    /// `vkGetDeviceProcAddr` on every device.
    const DEVICE: Levels = Levels(4);
    /// `vkGetDeviceProcAddr` on devices with mesh nodes only (see
    /// `rendering`): every other device's rendering and dynamic-state
    /// commands go straight to the driver.
    const MESH: Levels = Levels(8);
    /// `vkGetDeviceProcAddr` on devices where emulation is active (after the
    /// mesh hooks): elsewhere the loader's dispatch table points straight at
    /// the next layer.
    const EMULATED: Levels = Levels(16);

    const fn union(self, other: Levels) -> Levels {
        Levels(self.0 | other.0)
    }

    const fn intersects(self, other: Levels) -> bool {
        self.0 & other.0 != 0
    }
}

/// The device entry points a device-level hook forwards to: while the
/// device lacks them (the application did not enable the extension, or for
/// [`Gate::Rendering`] the device has neither core 1.3 nor
/// `VK_KHR_dynamic_rendering`), the lookup skips the hook and falls through
/// to the next layer, which answers as the driver does (null for an
/// extension not enabled).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Gate {
    /// Handed out whenever its level applies.
    Always,
    /// Core 1.3 or `VK_KHR_dynamic_rendering` rendering commands.
    Rendering,
    /// `VK_KHR_maintenance6`.
    Maintenance6,
    /// `VK_KHR_push_descriptor`.
    PushDescriptor,
    /// `VK_EXT_descriptor_buffer`.
    DescriptorBuffer,
    /// Both `VK_KHR_maintenance6` and `VK_EXT_descriptor_buffer`.
    Maintenance6DescriptorBuffer,
}

impl Gate {
    fn open(self, state: &DeviceState) -> bool {
        let dispatch = &state.dispatch;
        match self {
            Gate::Always => true,
            Gate::Rendering => dispatch.rendering.is_some(),
            Gate::Maintenance6 => dispatch.maintenance6.is_some(),
            Gate::PushDescriptor => dispatch.push_descriptor.is_some(),
            Gate::DescriptorBuffer => dispatch.descriptor_buffer.is_some(),
            Gate::Maintenance6DescriptorBuffer => {
                dispatch.maintenance6.is_some() && dispatch.descriptor_buffer.is_some()
            }
        }
    }
}

/// One line of the hook table.
struct Hook {
    /// The Vulkan command name.
    name: &'static str,
    levels: Levels,
    gate: Gate,
    /// The hook, cast to the loader's generic function pointer type (the
    /// loader casts it back to the prototype of the name it asked for).
    hook: unsafe extern "system" fn(),
    /// The hook's path in `ffi/` (for the guard-name test).
    #[cfg(test)]
    path: &'static str,
}

/// Declares the hook table: one line per Vulkan name,
/// `vkName [LEVEL, ...] if Gate => module::hook;`, with `, export(args) -> ret`
/// before the `;` for the names the layer also exports as symbols.
macro_rules! hooks {
    ($(
        $name:ident [$($level:ident),+] $(if $gate:ident)? => $hook:path
        $(, export($($arg:ident: $ty:ty),*) -> $ret:ty)?;
    )*) => {
        /// Every hook, in lookup order.
        const HOOKS: &[Hook] = &[$(Hook {
            name: stringify!($name),
            levels: Levels(0)$(.union(Levels::$level))+,
            gate: hooks!(@gate $($gate)?),
            // SAFETY: a function pointer cast to another function pointer
            // type; the loader casts it back before calling it.
            hook: unsafe {
                std::mem::transmute::<*const (), unsafe extern "system" fn()>($hook as *const ())
            },
            #[cfg(test)]
            path: stringify!($hook),
        },)*];

        $($(
            /// Exported for the loader; see the module doc.
            ///
            /// # Safety
            /// Loader contract.
            #[no_mangle]
            pub unsafe extern "system" fn $name($($arg: $ty),*) -> $ret {
                // SAFETY: same contract.
                unsafe { $hook($($arg),*) }
            }
        )?)*
    };
    (@gate) => { Gate::Always };
    (@gate $gate:ident) => { Gate::$gate };
}

hooks! {
    vkGetInstanceProcAddr [GLOBAL] => get_instance_proc_addr,
        export(instance: vk::Instance, name: *const c_char) -> vk::PFN_vkVoidFunction;
    vkCreateInstance [GLOBAL] => instance::create_instance;
    vkEnumerateInstanceLayerProperties [GLOBAL] => enumerate_instance_layer_properties,
        export(count: *mut u32, props: *mut vk::LayerProperties) -> vk::Result;
    vkEnumerateInstanceExtensionProperties [GLOBAL] => enumerate_instance_extension_properties,
        export(layer_name: *const c_char, count: *mut u32, props: *mut vk::ExtensionProperties) -> vk::Result;

    vkDestroyInstance [INSTANCE] => instance::destroy_instance;
    vkEnumerateDeviceExtensionProperties [INSTANCE] => enumerate_device_extension_properties,
        export(pd: vk::PhysicalDevice, layer_name: *const c_char, count: *mut u32, props: *mut vk::ExtensionProperties)
            -> vk::Result;
    vkEnumerateDeviceLayerProperties [INSTANCE] => enumerate_device_layer_properties,
        export(pd: vk::PhysicalDevice, count: *mut u32, props: *mut vk::LayerProperties) -> vk::Result;
    vkGetPhysicalDeviceFeatures2 [INSTANCE] => instance::get_physical_device_features2;
    vkGetPhysicalDeviceFeatures2KHR [INSTANCE] => instance::get_physical_device_features2_khr;
    vkGetPhysicalDeviceProperties2 [INSTANCE] => instance::get_physical_device_properties2;
    vkGetPhysicalDeviceProperties2KHR [INSTANCE] => instance::get_physical_device_properties2_khr;
    vkCreateDevice [INSTANCE] => device::create_device;
    vkGetDeviceProcAddr [INSTANCE, DEVICE] => get_device_proc_addr,
        export(device: vk::Device, name: *const c_char) -> vk::PFN_vkVoidFunction;
    vkDestroyDevice [DEVICE] => device::destroy_device;

    // The seven `VK_AMDX_shader_enqueue` commands.
    vkCreateExecutionGraphPipelinesAMDX [INSTANCE, EMULATED] => graph::create_execution_graph_pipelines;
    vkGetExecutionGraphPipelineScratchSizeAMDX [INSTANCE, EMULATED] => graph::get_scratch_size;
    vkGetExecutionGraphPipelineNodeIndexAMDX [INSTANCE, EMULATED] => graph::get_node_index;
    vkCmdInitializeGraphScratchMemoryAMDX [INSTANCE, EMULATED] => graph::cmd_initialize_scratch;
    vkCmdDispatchGraphAMDX [INSTANCE, EMULATED] => graph::cmd_dispatch_graph;
    vkCmdDispatchGraphIndirectAMDX [INSTANCE, EMULATED] => graph::cmd_dispatch_graph_indirect;
    vkCmdDispatchGraphIndirectCountAMDX [INSTANCE, EMULATED] => graph::cmd_dispatch_graph_indirect_count;

    // Mesh nodes: rendering and dynamic state (forwarded to core 1.3 or
    // `VK_KHR_dynamic_rendering`, hence the gate).
    vkCmdBeginRendering [MESH] if Rendering => rendering::cmd_begin_rendering;
    vkCmdBeginRenderingKHR [MESH] if Rendering => rendering::cmd_begin_rendering;
    vkCmdEndRendering [MESH] if Rendering => rendering::cmd_end_rendering;
    vkCmdEndRenderingKHR [MESH] if Rendering => rendering::cmd_end_rendering;
    vkCreateRenderPass [MESH] => rendering::create_render_pass;
    vkCreateRenderPass2 [MESH] => rendering::create_render_pass2;
    vkCreateRenderPass2KHR [MESH] => rendering::create_render_pass2;
    vkDestroyRenderPass [MESH] => rendering::destroy_render_pass;
    vkCmdBeginRenderPass [MESH] => rendering::cmd_begin_render_pass;
    vkCmdBeginRenderPass2 [MESH] => rendering::cmd_begin_render_pass2;
    vkCmdBeginRenderPass2KHR [MESH] => rendering::cmd_begin_render_pass2;
    vkCmdEndRenderPass [MESH] => rendering::cmd_end_render_pass;
    vkCmdEndRenderPass2 [MESH] => rendering::cmd_end_render_pass2;
    vkCmdEndRenderPass2KHR [MESH] => rendering::cmd_end_render_pass2;
    vkCmdSetViewport [MESH] => rendering::cmd_set_viewport;
    vkCmdSetScissor [MESH] => rendering::cmd_set_scissor;

    // Shader modules, buffers, pipelines, layouts, update templates.
    vkCreateShaderModule [EMULATED] => shader_modules::create_shader_module;
    vkDestroyShaderModule [EMULATED] => shader_modules::destroy_shader_module;
    vkCreateBuffer [EMULATED] => buffers::create_buffer;
    vkDestroyBuffer [EMULATED] => buffers::destroy_buffer;
    vkGetBufferDeviceAddress [EMULATED] => buffers::get_buffer_device_address;
    vkGetBufferDeviceAddressKHR [EMULATED] => buffers::get_buffer_device_address;
    vkGetBufferDeviceAddressEXT [EMULATED] => buffers::get_buffer_device_address;
    vkCreateComputePipelines [EMULATED] => pipelines::create_compute_pipelines;
    vkCreateGraphicsPipelines [EMULATED] => pipelines::create_graphics_pipelines;
    vkDestroyPipeline [EMULATED] => pipelines::destroy_pipeline;
    vkCreateDescriptorSetLayout [EMULATED] => layouts::create_descriptor_set_layout;
    vkDestroyDescriptorSetLayout [EMULATED] => layouts::destroy_descriptor_set_layout;
    vkCreatePipelineLayout [EMULATED] => layouts::create_pipeline_layout;
    vkDestroyPipelineLayout [EMULATED] => layouts::destroy_pipeline_layout;
    vkCreateDescriptorUpdateTemplate [EMULATED] => templates::create_descriptor_update_template;
    vkCreateDescriptorUpdateTemplateKHR [EMULATED] => templates::create_descriptor_update_template;
    vkDestroyDescriptorUpdateTemplate [EMULATED] => templates::destroy_descriptor_update_template;
    vkDestroyDescriptorUpdateTemplateKHR [EMULATED] => templates::destroy_descriptor_update_template;

    // Command buffers and pools.
    vkAllocateCommandBuffers [EMULATED] => commands::allocate_command_buffers;
    vkFreeCommandBuffers [EMULATED] => commands::free_command_buffers;
    vkBeginCommandBuffer [EMULATED] => commands::begin_command_buffer;
    vkEndCommandBuffer [EMULATED] => commands::end_command_buffer;
    vkResetCommandBuffer [EMULATED] => commands::reset_command_buffer;
    vkResetCommandPool [EMULATED] => commands::reset_command_pool;
    vkDestroyCommandPool [EMULATED] => commands::destroy_command_pool;

    // Bound state the graph dispatch saves and restores.
    vkCmdBindPipeline [EMULATED] => commands::cmd_bind_pipeline;
    vkCmdBindDescriptorSets [EMULATED] => commands::cmd_bind_descriptor_sets;
    vkCmdPushConstants [EMULATED] => commands::cmd_push_constants;
    vkCmdPushDescriptorSetKHR [EMULATED] if PushDescriptor => commands::cmd_push_descriptor_set;
    vkCmdPushDescriptorSetWithTemplateKHR [EMULATED] if PushDescriptor
        => templates::cmd_push_descriptor_set_with_template;
    vkCmdSetDescriptorBufferOffsetsEXT [EMULATED] if DescriptorBuffer
        => descriptor_buffer::cmd_set_descriptor_buffer_offsets;
    vkCmdBindDescriptorBufferEmbeddedSamplersEXT [EMULATED] if DescriptorBuffer
        => descriptor_buffer::cmd_bind_descriptor_buffer_embedded_samplers;
    vkCmdBindDescriptorSets2KHR [EMULATED] if Maintenance6 => maintenance6::cmd_bind_descriptor_sets2;
    vkCmdBindDescriptorSets2 [EMULATED] if Maintenance6 => maintenance6::cmd_bind_descriptor_sets2;
    vkCmdPushConstants2KHR [EMULATED] if Maintenance6 => maintenance6::cmd_push_constants2;
    vkCmdPushConstants2 [EMULATED] if Maintenance6 => maintenance6::cmd_push_constants2;
    vkCmdPushDescriptorSet2KHR [EMULATED] if Maintenance6 => maintenance6::cmd_push_descriptor_set2;
    vkCmdPushDescriptorSet2 [EMULATED] if Maintenance6 => maintenance6::cmd_push_descriptor_set2;
    vkCmdPushDescriptorSetWithTemplate2KHR [EMULATED] if Maintenance6
        => maintenance6::cmd_push_descriptor_set_with_template2;
    vkCmdPushDescriptorSetWithTemplate2 [EMULATED] if Maintenance6
        => maintenance6::cmd_push_descriptor_set_with_template2;
    vkCmdSetDescriptorBufferOffsets2EXT [EMULATED] if Maintenance6DescriptorBuffer
        => maintenance6::cmd_set_descriptor_buffer_offsets2;
    vkCmdBindDescriptorBufferEmbeddedSamplers2EXT [EMULATED] if Maintenance6DescriptorBuffer
        => maintenance6::cmd_bind_descriptor_buffer_embedded_samplers2;

    // Submission and completion (the report of graph errors).
    vkQueueSubmit [EMULATED] => report::queue_submit;
    vkQueueSubmit2 [EMULATED] => report::queue_submit2_core;
    vkQueueSubmit2KHR [EMULATED] => report::queue_submit2_khr;
    vkWaitForFences [EMULATED] => report::wait_for_fences;
    vkGetFenceStatus [EMULATED] => report::get_fence_status;
    vkResetFences [EMULATED] => report::reset_fences;
    vkQueueWaitIdle [EMULATED] => report::queue_wait_idle;
    vkDeviceWaitIdle [EMULATED] => report::device_wait_idle;
}

/// The first hook named `name` at one of `levels` whose gate `open` accepts.
fn find(name: &CStr, levels: Levels, open: impl Fn(Gate) -> bool) -> vk::PFN_vkVoidFunction {
    let name = name.to_bytes();
    HOOKS.iter().find(|h| h.levels.intersects(levels) && h.name.as_bytes() == name && open(h.gate)).map(|h| h.hook)
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
        if let Some(f) = find(name, Levels::GLOBAL, |_| true) {
            return Some(f);
        }
        if instance == vk::Instance::null() {
            return None;
        }
        if let Some(f) = find(name, Levels::INSTANCE, |_| true) {
            return Some(f);
        }
        // SAFETY: a valid instance created through the loader.
        let state = INSTANCES.get(unsafe { dispatch_key(instance) })?;
        // SAFETY: the next layer's GIPA with its own instance.
        unsafe { (state.dispatch.get_instance_proc_addr)(instance, name.as_ptr()) }
    })
}

/// # Safety
/// Loader contract: `device` is valid and `name` a valid C string.
unsafe extern "system" fn get_device_proc_addr(device: vk::Device, name: *const c_char) -> vk::PFN_vkVoidFunction {
    guard_value("vkGetDeviceProcAddr", None, || {
        // SAFETY: the loader passes a valid name.
        let name = unsafe { c_str(name) }?;
        if let Some(f) = find(name, Levels::DEVICE, |_| true) {
            return Some(f);
        }
        // SAFETY: a valid device.
        let state = DEVICES.get(unsafe { dispatch_key(device) })?;
        if state.mesh_enqueue {
            if let Some(f) = find(name, Levels::MESH, |gate| gate.open(&state)) {
                return Some(f);
            }
        }
        if state.emulated {
            if let Some(f) = find(name, Levels::EMULATED, |gate| gate.open(&state)) {
                return Some(f);
            }
        }
        state.dispatch.next_proc_addr(name)
    })
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

#[cfg(test)]
mod tests {
    use super::{Levels, HOOKS};

    /// The first `"vk…"` literal in the body of `fn name` in `ffi/file.rs`:
    /// the name its guard logs, or the name it passes to the shared body
    /// that runs the guard.
    fn logged_name(file: &str, name: &str) -> String {
        let path = format!("{}/src/ffi/{file}.rs", env!("CARGO_MANIFEST_DIR"));
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let at = source.find(&format!("fn {name}(")).unwrap_or_else(|| panic!("no fn {name} in {path}"));
        let body = &source[at..];
        let literal = body.find("\"vk").unwrap_or_else(|| panic!("fn {name} in {path} logs no name"));
        let literal = &body[literal + 1..];
        literal[..literal.find('"').expect("a closed literal")].to_string()
    }

    #[test]
    fn every_hook_logs_a_name_of_its_own() {
        for hook in HOOKS {
            let (file, function) =
                hook.path.rsplit_once("::").map_or(("proc_addr", hook.path), |(f, n)| (f.trim(), n.trim()));
            let logged = logged_name(file, function);
            let own = HOOKS.iter().any(|h| h.path == hook.path && h.name == logged);
            assert!(own, "{} ({}) logs {logged}, which the table does not map to it", hook.name, hook.path);
        }
    }

    #[test]
    fn every_name_is_declared_once() {
        for (i, hook) in HOOKS.iter().enumerate() {
            assert!(hook.levels != Levels(0), "{} has no level", hook.name);
            assert!(HOOKS[i + 1..].iter().all(|h| h.name != hook.name), "{} is declared twice", hook.name);
        }
    }
}
