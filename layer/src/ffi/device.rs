//! `vkCreateDevice` / `vkDestroyDevice`: the next layer's device table, and
//! for devices that enable `VK_AMDX_shader_enqueue` under emulation a copy of
//! the create info without the extension and its feature structure, with the
//! layer's own features merged in.

use super::chain::OwnedChain;
use super::device_features::enable_layer_features;
use super::guard::{guard_result, guard_value};
use super::instance::{instance_of, probe};
use super::loader::{find_link, LayerDeviceCreateInfo};
use super::{c_str, dispatch_key, slice};
use crate::advertise::Support;
use crate::amdx;
use crate::device::{retire_command_buffers, DeviceState, DEVICES};
use crate::dispatch::{DeviceDispatch, EnabledTables};
use crate::graph::gpu::Gpu;
use crate::state::PhysicalDeviceState;
use ash::vk;
use std::ffi::{c_char, CStr};
use std::sync::Arc;

pub(super) unsafe extern "system" fn create_device(
    pd: vk::PhysicalDevice,
    create_info: *const vk::DeviceCreateInfo<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
    device: *mut vk::Device,
) -> vk::Result {
    guard_result("vkCreateDevice", || {
        // SAFETY: the loader passes a valid create info.
        let Some(info) = (unsafe { create_info.as_ref() }) else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: valid chain; advancing the loader's link is the protocol.
        let link =
            unsafe { find_link::<LayerDeviceCreateInfo>(info.p_next, vk::StructureType::LOADER_DEVICE_CREATE_INFO) };
        // SAFETY: non-null link structures and their layer info are valid.
        let Some((link, layer_info)) =
            (unsafe { link.as_mut() }).and_then(|l| unsafe { l.p_layer_info.as_ref() }.map(|i| (l, i)))
        else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        let (next_gipa, next_gdpa) =
            (layer_info.pfn_next_get_instance_proc_addr, layer_info.pfn_next_get_device_proc_addr);
        link.p_layer_info = layer_info.p_next;
        // SAFETY: caller's contract.
        let Some(instance) = (unsafe { instance_of(pd) }) else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the next layer's GIPA with its instance.
        let Some(next_create) = (unsafe { next_gipa(instance.dispatch.handle, c"vkCreateDevice".as_ptr()) }) else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the prototype of vkCreateDevice.
        let next_create: vk::PFN_vkCreateDevice = unsafe { std::mem::transmute(next_create) };

        let physical = instance.physical_device(pd, |i| probe(i, pd));
        // SAFETY: the create info's array of extension names.
        let names: Vec<*const c_char> =
            unsafe { slice(info.pp_enabled_extension_names, info.enabled_extension_count) }.to_vec();
        // SAFETY: each name is a valid C string.
        let enabled = |wanted: &CStr| names.iter().any(|&n| unsafe { c_str(n) } == Some(wanted));
        let wants_amdx = enabled(amdx::EXTENSION_NAME);
        let emulated = wants_amdx && physical.support.is_emulated();
        // The `shader_statistics` setting, where the driver can answer it.
        let shader_statistics = emulated && instance.settings.shader_statistics && physical.executable_properties;
        if emulated && instance.settings.shader_statistics && !physical.executable_properties {
            tracing::warn!(
                "shader_statistics: the driver has no VK_KHR_pipeline_executable_properties; node kernels are not \
                 described"
            );
        }
        // The `phase_clock` setting, where the driver has the clock.
        let phase_clock = emulated && crate::graph::phases::timed(&instance.settings, &physical);
        if emulated && instance.settings.phase_clock && !physical.subgroup_clock {
            tracing::warn!(
                "phase_clock: the driver has no VK_KHR_shader_clock with shaderSubgroupClock; nothing is timed"
            );
        }
        let result = if !emulated {
            if let (true, Support::Unavailable(missing)) = (wants_amdx, &physical.support) {
                tracing::error!(
                    "vkCreateDevice: VK_AMDX_shader_enqueue cannot be emulated on this device; missing: {}",
                    missing.join(", ")
                );
                return vk::Result::ERROR_FEATURE_NOT_PRESENT;
            }
            // Native support, or the extension is not used: untouched.
            // SAFETY: forwarding the application's arguments.
            unsafe { next_create(pd, create_info, allocator, device) }
        } else {
            let next = NextCreate { next_create, allocator, device, shader_statistics, phase_clock };
            // SAFETY: valid create info; `next_create` is the next layer's.
            unsafe { create_emulated(pd, info, &names, &physical, next) }
        };
        if result != vk::Result::SUCCESS {
            return result;
        }
        // SAFETY: created just now.
        let handle = unsafe { *device };
        // SAFETY: valid create info.
        let mesh_enqueue = emulated && unsafe { wants_mesh_enqueue(info) };
        // SAFETY: next GDPA and the device it created.
        let dispatch = unsafe {
            DeviceDispatch::load(
                next_gdpa,
                handle,
                EnabledTables {
                    push_descriptor: enabled(c"VK_KHR_push_descriptor"),
                    maintenance6: enabled(c"VK_KHR_maintenance6"),
                    descriptor_buffer: enabled(c"VK_EXT_descriptor_buffer"),
                    mesh_enqueue,
                    debug_utils: instance.debug_utils,
                    executable_properties: shader_statistics,
                },
            )
        };
        let state = DeviceState {
            gpu: Gpu::new(dispatch, instance.clone(), physical, mesh_enqueue),
            emulated,
            resources: Default::default(),
            command_buffers: Default::default(),
            status: Default::default(),
            pending_reports: Default::default(),
        };
        if emulated {
            tracing::debug!("device {handle:?} created with VK_AMDX_shader_enqueue emulated");
        }
        // SAFETY: a valid device.
        DEVICES.insert(unsafe { dispatch_key(handle) }, Arc::new(state));
        vk::Result::SUCCESS
    })
}

/// The next layer's `vkCreateDevice`, the application's output arguments,
/// and what the layer adds of its own.
struct NextCreate {
    next_create: vk::PFN_vkCreateDevice,
    allocator: *const vk::AllocationCallbacks<'static>,
    device: *mut vk::Device,
    /// Enable `VK_KHR_pipeline_executable_properties` (the `shader_statistics` setting).
    shader_statistics: bool,
    /// Enable `VK_KHR_shader_clock` (the `phase_clock` setting).
    phase_clock: bool,
}

/// Creates the device below without the extension, with the layer's features.
///
/// # Safety
/// `info` must be the application's valid create info.
unsafe fn create_emulated(
    pd: vk::PhysicalDevice,
    info: &vk::DeviceCreateInfo<'static>,
    names: &[*const c_char],
    physical: &PhysicalDeviceState,
    next: NextCreate,
) -> vk::Result {
    let NextCreate { next_create, allocator, device, shader_statistics, phase_clock } = next;
    // SAFETY: valid chain.
    let mut chain = unsafe { OwnedChain::copy_from(info.p_next) };
    let features_type = amdx::STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES;
    let mesh_enqueue =
        chain.get::<amdx::PhysicalDeviceShaderEnqueueFeatures>().is_some_and(|f| f.shader_mesh_enqueue == vk::TRUE);
    if mesh_enqueue && !physical.mesh_shader {
        tracing::error!(
            "vkCreateDevice: shaderMeshEnqueue needs VK_EXT_mesh_shader with meshShader, which this device lacks"
        );
        return vk::Result::ERROR_FEATURE_NOT_PRESENT;
    }
    chain.remove(features_type);
    // SAFETY: the application's chain is still valid.
    if unsafe { chain.tail_contains(features_type) } {
        tracing::warn!(
            "vkCreateDevice: VkPhysicalDeviceShaderEnqueueFeaturesAMDX follows a structure this layer cannot copy; \
             it stays in the chain the driver sees"
        );
    }
    // SAFETY: valid when non-null.
    let mut legacy = unsafe { info.p_enabled_features.as_ref() }.copied();
    enable_layer_features(&mut chain, &mut legacy, physical.optional);
    // SAFETY: each name is a valid C string.
    let mut names: Vec<*const c_char> =
        names.iter().copied().filter(|&n| unsafe { c_str(n) } != Some(amdx::EXTENSION_NAME)).collect();
    if mesh_enqueue {
        enable_mesh_shaders(&mut chain, &mut names);
    }
    if shader_statistics {
        enable_executable_properties(&mut chain, &mut names);
    }
    if phase_clock {
        enable_subgroup_clock(&mut chain, &mut names);
    }
    let mut copy = *info;
    copy.p_next = chain.link();
    copy.enabled_extension_count = names.len() as u32;
    copy.pp_enabled_extension_names = names.as_ptr();
    copy.p_enabled_features = legacy.as_ref().map_or(std::ptr::null(), |f| f as *const _);
    // SAFETY: `copy` and everything it points to live until the call returns.
    let result = unsafe { next_create(pd, &copy, allocator, device) };
    if result != vk::Result::SUCCESS {
        tracing::error!("vkCreateDevice with the layer's features failed: {result:?}");
    }
    result
}

/// Turns on device extension `ext` and the feature `on` sets in its
/// structure `T`, the application's own where it chained one, else a new
/// one (all its other features off).
fn enable_with_feature<T: vk::TaggedStructure + Default>(
    (chain, names): (&mut OwnedChain, &mut Vec<*const c_char>),
    ext: &'static CStr,
    on: impl Fn(&mut T),
) {
    // SAFETY: each name is a valid C string.
    if !names.iter().any(|&n| unsafe { c_str(n) } == Some(ext)) {
        names.push(ext.as_ptr());
    }
    match chain.get_mut::<T>() {
        Some(f) => on(f),
        None => {
            let mut f = T::default();
            on(&mut f);
            chain.push(f);
        }
    }
}

/// Mesh nodes are drawn with `VK_EXT_mesh_shader`: its extension and
/// `meshShader` feature are turned on below the application's device.
fn enable_mesh_shaders(chain: &mut OwnedChain, names: &mut Vec<*const c_char>) {
    enable_with_feature((chain, names), c"VK_EXT_mesh_shader", |f: &mut vk::PhysicalDeviceMeshShaderFeaturesEXT| {
        f.mesh_shader = vk::TRUE
    });
}

/// The `shader_statistics` setting reads the driver's statistics of each
/// node kernel: `VK_KHR_pipeline_executable_properties` and its feature.
fn enable_executable_properties(chain: &mut OwnedChain, names: &mut Vec<*const c_char>) {
    let ext = c"VK_KHR_pipeline_executable_properties";
    enable_with_feature((chain, names), ext, |f: &mut vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR| {
        f.pipeline_executable_info = vk::TRUE
    });
}

/// The `phase_clock` setting reads the SM clock in node kernels:
/// `VK_KHR_shader_clock` and its `shaderSubgroupClock`.
fn enable_subgroup_clock(chain: &mut OwnedChain, names: &mut Vec<*const c_char>) {
    enable_with_feature((chain, names), c"VK_KHR_shader_clock", |f: &mut vk::PhysicalDeviceShaderClockFeaturesKHR| {
        f.shader_subgroup_clock = vk::TRUE
    });
}

/// Whether the application asks for `shaderMeshEnqueue`.
///
/// # Safety
/// `info` must be a valid create info.
unsafe fn wants_mesh_enqueue(info: &vk::DeviceCreateInfo<'static>) -> bool {
    // SAFETY: valid chain.
    let mut chain = unsafe { OwnedChain::copy_from(info.p_next) };
    chain.get::<amdx::PhysicalDeviceShaderEnqueueFeatures>().is_some_and(|f| f.shader_mesh_enqueue == vk::TRUE)
}

pub(super) unsafe extern "system" fn destroy_device(
    device: vk::Device,
    allocator: *const vk::AllocationCallbacks<'static>,
) {
    guard_value("vkDestroyDevice", (), || {
        if device == vk::Device::null() {
            return;
        }
        // Its command buffers' handles may name other ones from now on.
        retire_command_buffers();
        // SAFETY: a valid device.
        if let Some(state) = DEVICES.remove(unsafe { dispatch_key(device) }) {
            let (graphs, meta) = {
                let mut resources = state.resources.lock();
                (std::mem::take(&mut resources.graphs), resources.meta.take())
            };
            for graph in graphs.values() {
                tracing::warn!("vkDestroyDevice: execution graph {:?} was not destroyed", graph.handle);
                graph.destroy(&state);
            }
            if let Some(meta) = meta {
                meta.destroy(&state);
            }
            drop(graphs);
            let meshes: Vec<_> = {
                let mut resources = state.resources.lock();
                let libraries = std::mem::take(&mut resources.node_libraries);
                resources.graph_libraries.clear();
                let mut all = std::mem::take(&mut resources.retired_meshes);
                all.extend(libraries.into_values().filter_map(|stage| stage.mesh));
                all
            };
            for mesh in meshes {
                if std::sync::Arc::strong_count(&mesh) == 1 {
                    mesh.destroy(&state);
                }
            }
            // Resume copies of render passes the application did not destroy.
            let render_passes = std::mem::take(&mut state.resources.lock().render_passes);
            for pass in render_passes.into_values().flatten() {
                // SAFETY: the layer's own render passes on this device, idle now.
                unsafe { (state.dispatch.fp.fp_v1_0().destroy_render_pass)(device, pass, std::ptr::null()) };
            }
            super::report::report_all(&state);
            if let Some(status) = state.status.lock().take() {
                status.destroy(&state);
            }
            if let Some(queries) = state.profile_queries.lock().take() {
                queries.destroy(&state.dispatch);
            }
            state.staging.lock().destroy(&state.dispatch);
            if let Some(module) = state.resources.lock().placeholder_module.take() {
                // SAFETY: the layer's own module on this device.
                unsafe { (state.dispatch.fp.fp_v1_0().destroy_shader_module)(device, module, std::ptr::null()) };
            }
            // SAFETY: forwarding to the next layer.
            unsafe { (state.dispatch.fp.fp_v1_0().destroy_device)(device, allocator) };
        }
    })
}
