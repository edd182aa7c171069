//! A Vulkan instance through the real loader: optionally the layer under
//! test on top, the Khronos validation layer beneath it, and a debug-utils
//! messenger (also chained at creation) recording every message.

use std::ffi::{c_char, CStr, CString};
use std::sync::Arc;

use ash::vk;

use crate::env::{self, LAYER_NAME, VALIDATION_LAYER_NAME};
use crate::error::{Error, Result};
use crate::messages::{self, MessageLog};

/// What validation 1.3.239 says about `VkLayerSettingsCreateInfoEXT`, which
/// it does not know; tolerated when a test chains layer settings.
pub const LAYER_SETTINGS_UNKNOWN_STYPE: &str = "unknown VkStructureType (1000496000)";

/// How to build a [`TestInstance`].
#[derive(Debug, Clone)]
pub struct InstanceOptions<'a> {
    /// Enable `VK_LAYER_EMU_shader_enqueue` (first in `ppEnabledLayerNames`).
    pub our_layer: bool,
    /// Enable `VK_LAYER_KHRONOS_validation` beneath it.
    pub validation: bool,
    /// `VkLayerSettingEXT`s to chain in a `VkLayerSettingsCreateInfoEXT`.
    pub layer_settings: &'a [vk::LayerSettingEXT<'a>],
    /// `VkApplicationInfo::apiVersion`.
    pub api_version: u32,
}

/// A `VkLayerSettingEXT` setting this layer's string setting `name` to the
/// NUL-terminated string `value[0]` points at (both must outlive the use).
pub fn string_setting<'a>(name: &'a CStr, value: &'a [*const c_char; 1]) -> vk::LayerSettingEXT<'a> {
    vk::LayerSettingEXT {
        p_layer_name: c"VK_LAYER_EMU_shader_enqueue".as_ptr(),
        p_setting_name: name.as_ptr(),
        ty: vk::LayerSettingTypeEXT::STRING,
        value_count: 1,
        p_values: value.as_ptr().cast(),
        ..Default::default()
    }
}

impl InstanceOptions<'_> {
    /// Our layer over the validation layer: what conformance tests use.
    /// With `EMU_SE_TESTS_WITHOUT_LAYER=1` the layer is left out, to see which
    /// tests plain lavapipe already passes (a harness check, not a mode for CI);
    /// with `EMU_SE_TESTS_WITHOUT_VALIDATION=1` the validation layer is (for a
    /// check on a GPU whose driver it is too old for).
    pub fn with_layer() -> Self {
        Self {
            our_layer: std::env::var_os(env::WITHOUT_LAYER_ENV).is_none_or(|v| v != "1"),
            validation: std::env::var_os(env::WITHOUT_VALIDATION_ENV).is_none_or(|v| v != "1"),
            layer_settings: &[],
            api_version: vk::API_VERSION_1_3,
        }
    }

    /// Validation only: plain lavapipe, to prove the harness itself.
    pub fn without_layer() -> Self {
        Self { our_layer: false, validation: true, layer_settings: &[], api_version: vk::API_VERSION_1_3 }
    }
}

/// An instance plus its messenger; dropping it destroys both.
pub struct TestInstance {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    pub debug_utils: ash::ext::debug_utils::Instance,
    messenger: vk::DebugUtilsMessengerEXT,
    log: Arc<MessageLog>,
}

impl TestInstance {
    /// Sets up the environment (see [`env::init`]) and creates the instance
    /// (apiVersion from the options, 1.3 by default).
    pub fn new(opts: &InstanceOptions<'_>) -> Result<Self> {
        let test_env = env::init()?;
        if opts.our_layer && !test_env.layer_lib_present() {
            return Err(Error::Setup(format!(
                "layer library {} not found: run `cargo build -p shader-enqueue-layer` \
                 or set {}",
                test_env.layer_lib.display(),
                env::LAYER_LIB_ENV
            )));
        }
        let entry = ash::Entry::linked();
        let mut layers: Vec<CString> = Vec::new();
        if opts.our_layer {
            layers.push(CString::new(LAYER_NAME).map_err(|e| Error::Setup(e.to_string()))?);
        }
        if opts.validation {
            layers.push(CString::new(VALIDATION_LAYER_NAME).map_err(|e| Error::Setup(e.to_string()))?);
        }
        check_layers_present(&entry, &layers)?;
        let layer_ptrs: Vec<*const c_char> = layers.iter().map(|l| l.as_ptr()).collect();
        let ext_ptrs = [ash::ext::debug_utils::NAME.as_ptr()];

        let log = Arc::new(MessageLog::default());
        if !opts.layer_settings.is_empty() {
            // Validation 1.3.239 predates VK_EXT_layer_settings (1.3.272).
            log.tolerate(LAYER_SETTINGS_UNKNOWN_STYPE);
        }
        let mut messenger_info = messenger_info(&log);
        let app = vk::ApplicationInfo::default().application_name(c"conformance-tests").api_version(opts.api_version);
        let mut settings = vk::LayerSettingsCreateInfoEXT::default().settings(opts.layer_settings);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layer_ptrs)
            .enabled_extension_names(&ext_ptrs)
            .push_next(&mut messenger_info);
        if !opts.layer_settings.is_empty() {
            info = info.push_next(&mut settings);
        }
        // SAFETY: every pointer in `info` refers to locals alive for the call.
        let instance = unsafe { entry.create_instance(&info, None) }.map_err(Error::vk("vkCreateInstance"))?;
        let debug_utils = ash::ext::debug_utils::Instance::new(&entry, &instance);
        let messenger_info = self::messenger_info(&log);
        // SAFETY: valid instance; user data outlives the messenger (kept in `log`).
        let messenger = match unsafe { debug_utils.create_debug_utils_messenger(&messenger_info, None) } {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: the instance was just created and has no children.
                unsafe { instance.destroy_instance(None) };
                return Err(Error::vk("vkCreateDebugUtilsMessengerEXT")(e));
            }
        };
        Ok(Self { entry, instance, debug_utils, messenger, log })
    }

    /// The messages recorded so far.
    pub fn log(&self) -> &Arc<MessageLog> {
        &self.log
    }

    /// Picks lavapipe (driver id `MESA_LLVMPIPE`), else the first device
    /// (when `EMU_SE_ICD` points at another driver).
    pub fn pick_physical_device(&self) -> Result<vk::PhysicalDevice> {
        // SAFETY: valid instance.
        let devices =
            unsafe { self.instance.enumerate_physical_devices() }.map_err(Error::vk("vkEnumeratePhysicalDevices"))?;
        let lavapipe = devices.iter().copied().find(|&pd| {
            let mut driver = vk::PhysicalDeviceDriverProperties::default();
            let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
            // SAFETY: valid physical device and output chain.
            unsafe { self.instance.get_physical_device_properties2(pd, &mut props) };
            driver.driver_id == vk::DriverId::MESA_LLVMPIPE
        });
        lavapipe.or_else(|| devices.first().copied()).ok_or_else(|| Error::Setup("no Vulkan physical device".into()))
    }

    /// The device extensions of `pd` as (name, spec version), in driver order
    /// (duplicates kept, so tests can check there are none).
    pub fn device_extensions(&self, pd: vk::PhysicalDevice) -> Result<Vec<(String, u32)>> {
        // SAFETY: valid physical device.
        let props = unsafe { self.instance.enumerate_device_extension_properties(pd) }
            .map_err(Error::vk("vkEnumerateDeviceExtensionProperties"))?;
        Ok(props
            .iter()
            .map(|p| {
                let name = p.extension_name_as_c_str().map(|c| c.to_string_lossy().into_owned()).unwrap_or_default();
                (name, p.spec_version)
            })
            .collect())
    }

    /// Destroys the instance, then asserts that no validation error was
    /// recorded at any point (including during destruction). Call it last.
    pub fn finish(self) {
        let log = Arc::clone(&self.log);
        drop(self);
        log.assert_no_errors();
    }
}

impl Drop for TestInstance {
    fn drop(&mut self) {
        // SAFETY: the messenger and instance belong to self; devices borrow
        // self, so they are gone already.
        unsafe {
            self.debug_utils.destroy_debug_utils_messenger(self.messenger, None);
            self.instance.destroy_instance(None);
        }
    }
}

fn messenger_info(log: &Arc<MessageLog>) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(messages::severities())
        .message_type(messages::types())
        .pfn_user_callback(Some(messages::callback))
        .user_data(Arc::as_ptr(log) as *mut std::ffi::c_void)
}

fn check_layers_present(entry: &ash::Entry, wanted: &[CString]) -> Result<()> {
    // SAFETY: plain loader query.
    let available = unsafe { entry.enumerate_instance_layer_properties() }
        .map_err(Error::vk("vkEnumerateInstanceLayerProperties"))?;
    for name in wanted {
        let found = available.iter().any(|l| l.layer_name_as_c_str().ok() == Some(name.as_c_str()));
        if !found {
            return Err(Error::Setup(format!(
                "layer {name:?} not found by the loader (VK_LAYER_PATH={:?}); \
                 is vulkan-validationlayers installed?",
                std::env::var("VK_LAYER_PATH").unwrap_or_default()
            )));
        }
    }
    Ok(())
}

/// Convenience: `CStr` to `String`.
pub fn c_to_string(s: &CStr) -> String {
    s.to_string_lossy().into_owned()
}
