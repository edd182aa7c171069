//! Small Vulkan helpers for the binaries: instance creation with or without
//! the layer, device queries, the bundled compute shader.

use std::ffi::{c_char, CStr};

use ash::vk;

/// `shaders/scale_add.comp` (same as tests/shaders): push constants
/// `{mul, add, count}`, storage buffer at set 0 binding 0.
pub const SCALE_ADD_SPV: &[u8] = include_bytes!("../shaders/scale_add.comp.spv");

/// Creates an instance (API 1.3) with `layers` enabled, first = topmost.
pub fn create_instance(entry: &ash::Entry, layers: &[&CStr]) -> Result<ash::Instance, String> {
    create_instance_with(entry, layers, &[])
}

/// [`create_instance`] with the instance `extensions` enabled too.
pub fn create_instance_with(
    entry: &ash::Entry,
    layers: &[&CStr],
    extensions: &[&CStr],
) -> Result<ash::Instance, String> {
    let app = vk::ApplicationInfo::default().application_name(c"shader-enqueue-demo").api_version(vk::API_VERSION_1_3);
    let names: Vec<*const c_char> = layers.iter().map(|l| l.as_ptr()).collect();
    let ext_names: Vec<*const c_char> = extensions.iter().map(|e| e.as_ptr()).collect();
    let info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_layer_names(&names)
        .enabled_extension_names(&ext_names);
    // SAFETY: `info` points at locals alive for the call.
    unsafe { entry.create_instance(&info, None) }.map_err(|e| {
        if e == vk::Result::ERROR_LAYER_NOT_PRESENT {
            format!(
                "vkCreateInstance: {e:?}: the loader cannot find {layers:?}; run through \
                 `cargo xtask demo`, or set VK_LAYER_PATH=<repo>/manifests after \
                 `cargo build --release -p shader-enqueue-layer`, or `cargo xtask install`"
            )
        } else {
            format!("vkCreateInstance: {e:?}")
        }
    })
}

/// Device name, driver name and driver info of `pd`.
pub fn describe(instance: &ash::Instance, pd: vk::PhysicalDevice) -> (String, String, String) {
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
    // SAFETY: valid physical device; output chain of locals.
    unsafe { instance.get_physical_device_properties2(pd, &mut p2) };
    let name = p2.properties.device_name_as_c_str().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let driver_name = driver.driver_name_as_c_str().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let driver_info = driver.driver_info_as_c_str().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    (name, driver_name, driver_info)
}

/// The spec versions under which `name` is listed for `pd` (one per listing).
pub fn extension_listings(instance: &ash::Instance, pd: vk::PhysicalDevice, name: &CStr) -> Result<Vec<u32>, String> {
    // SAFETY: valid physical device.
    let props = unsafe { instance.enumerate_device_extension_properties(pd) }
        .map_err(|e| format!("vkEnumerateDeviceExtensionProperties: {e:?}"))?;
    Ok(props.iter().filter(|p| p.extension_name_as_c_str().ok() == Some(name)).map(|p| p.spec_version).collect())
}
