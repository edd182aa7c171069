//! Instance-level hooks: instance creation (next-layer table, settings),
//! and the physical-device queries through which the extension is
//! advertised (extension list, features, properties).

use super::chain::with_unlinked;
use super::guard::{guard_result, guard_value};
use super::loader::{find_link, LayerInstanceCreateInfo};
use super::{c_str, dispatch_key, slice, write_array};
use crate::advertise::{self, DeviceFacts, Support};
use crate::amdx;
use crate::dispatch::InstanceDispatch;
use crate::settings::{init_logging, SettingValue, Settings, LAYER_NAME};
use crate::state::instance::OptionalFeatures;
use crate::state::{InstanceState, PhysicalDeviceState, INSTANCES};
use ash::vk;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

pub(super) unsafe extern "system" fn create_instance(
    create_info: *const vk::InstanceCreateInfo<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
    instance: *mut vk::Instance,
) -> vk::Result {
    guard_result("vkCreateInstance", || {
        // SAFETY: the loader passes a valid create info.
        let Some(info) = (unsafe { create_info.as_ref() }) else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: valid chain; the loader owns the link structure and expects
        // each layer to advance it before calling down.
        let link = unsafe {
            find_link::<LayerInstanceCreateInfo>(info.p_next, vk::StructureType::LOADER_INSTANCE_CREATE_INFO)
        };
        // SAFETY: non-null link structures and their layer info are valid.
        let Some(layer_info) =
            (unsafe { link.as_mut() }).and_then(|l| unsafe { l.p_layer_info.as_ref() }.map(|i| (l, i)))
        else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        let (link, info_link) = layer_info;
        let next_gipa = info_link.pfn_next_get_instance_proc_addr;
        link.p_layer_info = info_link.p_next;
        // SAFETY: the next layer's GIPA answers vkCreateInstance with a null instance.
        let Some(next_create) = (unsafe { next_gipa(vk::Instance::null(), c"vkCreateInstance".as_ptr()) }) else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the prototype of vkCreateInstance.
        let next_create: vk::PFN_vkCreateInstance = unsafe { std::mem::transmute(next_create) };
        // SAFETY: forwarding the application's arguments.
        let result = unsafe { next_create(create_info, allocator, instance) };
        if result != vk::Result::SUCCESS {
            return result;
        }
        // SAFETY: created just now.
        let handle = unsafe { *instance };
        // SAFETY: valid application info when non-null.
        let api_version = unsafe { info.p_application_info.as_ref() }.map_or(vk::API_VERSION_1_0, |a| a.api_version);
        // SAFETY: valid chain.
        let settings = unsafe { settings_for(info.p_next) };
        init_logging(&settings);
        tracing::debug!("settings: {settings:?}");

        tracing::debug!("instance created (apiVersion {})", version_string(api_version));
        // SAFETY: the create info's array of valid extension names.
        let debug_utils = unsafe { slice(info.pp_enabled_extension_names, info.enabled_extension_count) }
            .iter()
            // SAFETY: each name is a valid C string.
            .any(|&n| unsafe { c_str(n) } == Some(ash::ext::debug_utils::NAME));
        // SAFETY: next GIPA and the instance it created.
        let dispatch = unsafe { InstanceDispatch::load(next_gipa, handle, debug_utils) };
        let state = InstanceState::new(dispatch, api_version, settings, debug_utils);
        // SAFETY: a valid instance.
        INSTANCES.insert(unsafe { dispatch_key(handle) }, Arc::new(state));
        vk::Result::SUCCESS
    })
}

/// Environment settings, overridden by `VkLayerSettingsCreateInfoEXT` values
/// addressed to this layer.
///
/// # Safety
/// `p_next` must be a valid chain.
unsafe fn settings_for(mut p_next: *const c_void) -> Settings {
    let mut settings = Settings::from_env();
    while !p_next.is_null() {
        // SAFETY: valid chain.
        let base = unsafe { &*p_next.cast::<vk::BaseInStructure<'static>>() };
        if base.s_type == vk::StructureType::LAYER_SETTINGS_CREATE_INFO_EXT {
            // SAFETY: the sType says what it is.
            let info = unsafe { &*p_next.cast::<vk::LayerSettingsCreateInfoEXT<'static>>() };
            // SAFETY: count/pointer pair of the structure.
            for setting in unsafe { slice(info.p_settings, info.setting_count) } {
                // SAFETY: the setting's strings are valid C strings.
                let (layer, key) = unsafe { (c_str(setting.p_layer_name), c_str(setting.p_setting_name)) };
                if layer.is_none_or(|l| l.to_bytes() != LAYER_NAME.as_bytes()) || setting.value_count == 0 {
                    continue;
                }
                let Some(key) = key.and_then(|k| k.to_str().ok()) else { continue };
                // SAFETY: `p_values` holds `value_count` values of `type_`.
                let value = unsafe { first_setting_value(setting) };
                match value.map(|v| settings.apply(key, v)) {
                    Some(Err(message)) => tracing::warn!("{message}"),
                    None => tracing::warn!("layer setting {key}: unsupported value type {:?}", setting.ty),
                    Some(Ok(())) => {}
                }
            }
        }
        p_next = base.p_next.cast();
    }
    settings
}

/// # Safety
/// `setting.p_values` must hold at least one value of `setting.ty`.
unsafe fn first_setting_value(setting: &vk::LayerSettingEXT<'_>) -> Option<SettingValue> {
    let values = setting.p_values;
    if values.is_null() {
        return None;
    }
    // SAFETY: one value of the declared type is present (every arm).
    unsafe {
        match setting.ty {
            vk::LayerSettingTypeEXT::BOOL32 => Some(SettingValue::Bool(*values.cast::<vk::Bool32>() != 0)),
            vk::LayerSettingTypeEXT::INT32 | vk::LayerSettingTypeEXT::UINT32 => {
                Some(SettingValue::Bool(*values.cast::<u32>() != 0))
            }
            vk::LayerSettingTypeEXT::STRING => {
                c_str(*values.cast::<*const c_char>()).map(|s| SettingValue::String(s.to_string_lossy().into_owned()))
            }
            _ => None,
        }
    }
}

fn version_string(v: u32) -> String {
    format!("{}.{}.{}", vk::api_version_major(v), vk::api_version_minor(v), vk::api_version_patch(v))
}

pub(super) unsafe extern "system" fn destroy_instance(
    instance: vk::Instance,
    allocator: *const vk::AllocationCallbacks<'static>,
) {
    guard_value("vkDestroyInstance", (), || {
        if instance == vk::Instance::null() {
            return;
        }
        // SAFETY: a valid instance.
        if let Some(state) = INSTANCES.remove(unsafe { dispatch_key(instance) }) {
            // SAFETY: forwarding to the next layer.
            unsafe { (state.dispatch.fp.fp_v1_0().destroy_instance)(instance, allocator) };
        }
    })
}

/// The instance state behind a physical device (they share a dispatch key).
///
/// # Safety
/// `pd` must be a valid physical device.
pub(super) unsafe fn instance_of(pd: vk::PhysicalDevice) -> Option<Arc<InstanceState>> {
    // SAFETY: caller's contract.
    let state = INSTANCES.get(unsafe { dispatch_key(pd) });
    if state.is_none() {
        tracing::error!("physical device {pd:?} belongs to no instance this layer knows");
    }
    state
}

/// The driver's device extensions (through the next layer).
fn driver_extensions(instance: &InstanceState, pd: vk::PhysicalDevice) -> Vec<vk::ExtensionProperties> {
    let f = instance.dispatch.fp.fp_v1_0().enumerate_device_extension_properties;
    for _ in 0..4 {
        let mut count = 0;
        // SAFETY: valid physical device; count query.
        if unsafe { f(pd, std::ptr::null(), &mut count, std::ptr::null_mut()) } != vk::Result::SUCCESS {
            return Vec::new();
        }
        let mut list = vec![vk::ExtensionProperties::default(); count as usize];
        // SAFETY: `list` holds `count` elements.
        match unsafe { f(pd, std::ptr::null(), &mut count, list.as_mut_ptr()) } {
            vk::Result::SUCCESS => {
                list.truncate(count as usize);
                return list;
            }
            vk::Result::INCOMPLETE => continue, // the list grew between the calls
            _ => return Vec::new(),
        }
    }
    Vec::new()
}

/// Probes a physical device once: what it supports and how AMDX is provided.
pub(super) fn probe(instance: &InstanceState, pd: vk::PhysicalDevice) -> PhysicalDeviceState {
    let fp = &instance.dispatch.fp;
    // SAFETY: valid physical device.
    let props = unsafe { fp.get_physical_device_properties(pd) };
    let extensions = driver_extensions(instance, pd);
    let lists = |name: &std::ffi::CStr| extensions.iter().any(|e| e.extension_name_as_c_str() == Ok(name));
    let driver_lists_extension = lists(amdx::EXTENSION_NAME);
    let can_query2 = instance.api_version >= vk::API_VERSION_1_1 || instance.dispatch.has_features2_khr;
    let mut facts = DeviceFacts { api_version: props.api_version, driver_lists_extension, ..Default::default() };
    let mut optional = OptionalFeatures::default();
    let mut mesh_shader = false;
    let mut subgroup_clock = false;
    if can_query2 && props.api_version >= vk::API_VERSION_1_2 {
        let mut amdx_features = amdx::PhysicalDeviceShaderEnqueueFeatures {
            s_type: amdx::STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES,
            p_next: std::ptr::null_mut(),
            shader_enqueue: vk::FALSE,
            shader_mesh_enqueue: vk::FALSE,
        };
        let mut v13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut features2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut v11).push_next(&mut v12);
        if props.api_version >= vk::API_VERSION_1_3 {
            features2 = features2.push_next(&mut v13);
        }
        let mut mesh = vk::PhysicalDeviceMeshShaderFeaturesEXT::default();
        if lists(c"VK_EXT_mesh_shader") {
            features2 = features2.push_next(&mut mesh);
        }
        let mut clock = vk::PhysicalDeviceShaderClockFeaturesKHR::default();
        if lists(c"VK_KHR_shader_clock") {
            features2 = features2.push_next(&mut clock);
        }
        if driver_lists_extension {
            amdx_features.p_next = features2.p_next;
            features2.p_next = (&mut amdx_features as *mut amdx::PhysicalDeviceShaderEnqueueFeatures).cast();
        }
        // SAFETY: a valid chain of output structures on the stack.
        unsafe { (instance.dispatch.get_features2_khr)(pd, &mut features2) };
        facts.shader_int64 = features2.features.shader_int64 == vk::TRUE;
        facts.buffer_device_address = v12.buffer_device_address == vk::TRUE;
        facts.scalar_block_layout = v12.scalar_block_layout == vk::TRUE;
        facts.shader_buffer_int64_atomics = v12.shader_buffer_int64_atomics == vk::TRUE;
        facts.driver_shader_enqueue = amdx_features.shader_enqueue == vk::TRUE;
        mesh_shader = mesh.mesh_shader == vk::TRUE;
        subgroup_clock = clock.shader_subgroup_clock == vk::TRUE;
        // The device's version as the application sees it is the lower of the
        // two: a Vulkan 1.3 feature such as maintenance4 may only be enabled
        // through core 1.3 when the instance asked for 1.3 (the layer does not
        // add VK_KHR_maintenance4 to the application's extensions).
        let effective_version = props.api_version.min(instance.api_version);
        optional = OptionalFeatures {
            storage_buffer_16bit_access: v11.storage_buffer16_bit_access == vk::TRUE,
            storage_buffer_8bit_access: v12.storage_buffer8_bit_access == vk::TRUE,
            maintenance4: v13.maintenance4 == vk::TRUE && effective_version >= vk::API_VERSION_1_3,
            vulkan_memory_model: v12.vulkan_memory_model == vk::TRUE
                && v12.vulkan_memory_model_device_scope == vk::TRUE,
        };
    }
    let support = Support::decide(&facts, instance.api_version, instance.settings.force_emulation);
    // SAFETY: the driver fills device_name with a NUL-terminated string.
    let name = props.device_name_as_c_str().unwrap_or(c"?").to_string_lossy().into_owned();
    match &support {
        Support::Unavailable(missing) => {
            tracing::info!("{name}: VK_AMDX_shader_enqueue not offered, missing: {}", missing.join(", "))
        }
        Support::Native => tracing::info!("{name}: the driver implements VK_AMDX_shader_enqueue; passing through"),
        Support::Emulated => tracing::debug!("{name}: VK_AMDX_shader_enqueue emulated"),
    }
    PhysicalDeviceState {
        support,
        optional,
        has_maintenance5: lists(c"VK_KHR_maintenance5"),
        mesh_shader,
        executable_properties: lists(c"VK_KHR_pipeline_executable_properties"),
        subgroup_clock,
        creation_feedback: props.api_version.min(instance.api_version) >= vk::API_VERSION_1_3,
        max_push_constants_size: props.limits.max_push_constants_size,
        timestamp_period: props.limits.timestamp_period,
        subgroup_ops: can_query2 && props.api_version >= vk::API_VERSION_1_1 && subgroup_ops(instance, pd),
        // SAFETY: valid physical device.
        memory_properties: unsafe { fp.get_physical_device_memory_properties(pd) },
    }
}

/// Whether compute shaders have the subgroup operations the lowering's
/// allocation uses (Vulkan 1.1 guarantees only the basic ones).
fn subgroup_ops(instance: &InstanceState, pd: vk::PhysicalDevice) -> bool {
    let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut subgroup);
    // SAFETY: valid physical device, a chain of output structures on the stack.
    unsafe { (instance.dispatch.get_properties2_khr)(pd, &mut props2) };
    let needed = vk::SubgroupFeatureFlags::BASIC
        | vk::SubgroupFeatureFlags::ARITHMETIC
        | vk::SubgroupFeatureFlags::BALLOT
        | vk::SubgroupFeatureFlags::VOTE
        | vk::SubgroupFeatureFlags::SHUFFLE;
    subgroup.supported_stages.contains(vk::ShaderStageFlags::COMPUTE) && subgroup.supported_operations.contains(needed)
}

/// # Safety
/// Valid physical device and two-call-idiom pointers.
pub(super) unsafe fn enumerate_device_extensions(
    pd: vk::PhysicalDevice,
    layer_name: *const c_char,
    count: *mut u32,
    props: *mut vk::ExtensionProperties,
) -> vk::Result {
    // SAFETY: caller's contract.
    let Some(instance) = (unsafe { instance_of(pd) }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    if !layer_name.is_null() {
        // Another layer's list: not ours to edit.
        let f = instance.dispatch.fp.fp_v1_0().enumerate_device_extension_properties;
        // SAFETY: forwarding the application's arguments.
        return unsafe { f(pd, layer_name, count, props) };
    }
    let state = instance.physical_device(pd, |i| probe(i, pd));
    let list = advertise::device_extensions(&driver_extensions(&instance, pd), &state.support);
    // SAFETY: caller's contract.
    unsafe { write_array(&list, count, props) }
}

/// Shared body of `vkGetPhysicalDeviceFeatures2` and its KHR alias.
///
/// # Safety
/// Valid physical device and writable output chain.
unsafe fn features2(
    name: &'static str,
    pd: vk::PhysicalDevice,
    features: *mut vk::PhysicalDeviceFeatures2<'static>,
    khr: bool,
) {
    guard_value(name, (), || {
        // SAFETY: caller's contract.
        let Some(instance) = (unsafe { instance_of(pd) }) else { return };
        let next = if khr {
            instance.dispatch.get_features2_khr
        } else {
            instance.dispatch.fp.fp_v1_1().get_physical_device_features2
        };
        let state = instance.physical_device(pd, |i| probe(i, pd));
        if !state.support.is_emulated() || features.is_null() {
            // SAFETY: forwarding the application's arguments.
            return unsafe { next(pd, features) };
        }
        let s_type = amdx::STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES;
        // SAFETY: the application's writable output chain; the driver must
        // not see the AMDX structure it does not implement.
        let ((), ours) = unsafe { with_unlinked(features.cast(), s_type, || next(pd, features)) };
        for node in ours {
            // SAFETY: the node's sType says it is the AMDX features structure.
            let f = unsafe { &mut *node.cast::<amdx::PhysicalDeviceShaderEnqueueFeatures>() };
            f.shader_enqueue = vk::TRUE;
            // Mesh nodes are drawn with VK_EXT_mesh_shader's mesh shaders.
            f.shader_mesh_enqueue = vk::Bool32::from(state.mesh_shader);
        }
    })
}

pub(super) unsafe extern "system" fn get_physical_device_features2(
    pd: vk::PhysicalDevice,
    f: *mut vk::PhysicalDeviceFeatures2<'static>,
) {
    // SAFETY: loader contract.
    unsafe { features2("vkGetPhysicalDeviceFeatures2", pd, f, false) }
}

pub(super) unsafe extern "system" fn get_physical_device_features2_khr(
    pd: vk::PhysicalDevice,
    f: *mut vk::PhysicalDeviceFeatures2<'static>,
) {
    // SAFETY: loader contract.
    unsafe { features2("vkGetPhysicalDeviceFeatures2KHR", pd, f, true) }
}

/// Shared body of `vkGetPhysicalDeviceProperties2` and its KHR alias.
///
/// # Safety
/// Valid physical device and writable output chain.
unsafe fn properties2(
    name: &'static str,
    pd: vk::PhysicalDevice,
    properties: *mut vk::PhysicalDeviceProperties2<'static>,
    khr: bool,
) {
    guard_value(name, (), || {
        // SAFETY: caller's contract.
        let Some(instance) = (unsafe { instance_of(pd) }) else { return };
        let next = if khr {
            instance.dispatch.get_properties2_khr
        } else {
            instance.dispatch.fp.fp_v1_1().get_physical_device_properties2
        };
        let state = instance.physical_device(pd, |i| probe(i, pd));
        if !state.support.is_emulated() || properties.is_null() {
            // SAFETY: forwarding the application's arguments.
            return unsafe { next(pd, properties) };
        }
        let s_type = amdx::STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES;
        // SAFETY: as for the features.
        let ((), ours) = unsafe { with_unlinked(properties.cast(), s_type, || next(pd, properties)) };
        for node in ours {
            // SAFETY: the node's sType says it is the AMDX properties structure.
            let p = unsafe { &mut *node.cast::<amdx::PhysicalDeviceShaderEnqueueProperties>() };
            *p = amdx::PhysicalDeviceShaderEnqueueProperties {
                s_type: p.s_type,
                p_next: p.p_next,
                ..advertise::properties()
            };
        }
    })
}

pub(super) unsafe extern "system" fn get_physical_device_properties2(
    pd: vk::PhysicalDevice,
    p: *mut vk::PhysicalDeviceProperties2<'static>,
) {
    // SAFETY: loader contract.
    unsafe { properties2("vkGetPhysicalDeviceProperties2", pd, p, false) }
}

pub(super) unsafe extern "system" fn get_physical_device_properties2_khr(
    pd: vk::PhysicalDevice,
    p: *mut vk::PhysicalDeviceProperties2<'static>,
) {
    // SAFETY: loader contract.
    unsafe { properties2("vkGetPhysicalDeviceProperties2KHR", pd, p, true) }
}
