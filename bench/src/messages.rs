//! Error messages sent to the application through `VK_EXT_debug_utils`.
//!
//! The layer reads a graph dispatch's status when a fence wait proves it
//! finished and sends each problem (work dropped because the scratch was too
//! small, ...) to the instance's messengers as an error; the scratch search
//! ([`crate::scratch_search`]) counts such a message as a failed run. The
//! bench enables the extension when the loader offers it (the loader itself
//! implements it, so it nearly always does).

use std::ffi::{c_void, CStr};
use std::sync::Mutex;

use ash::vk;

/// The extension's name.
pub const EXTENSION: &CStr = ash::ext::debug_utils::NAME;

/// True when the loader lists [`EXTENSION`].
pub fn available(entry: &ash::Entry) -> bool {
    // SAFETY: a global query with no layer named.
    let props = unsafe { entry.enumerate_instance_extension_properties(None) }.unwrap_or_default();
    props.iter().any(|p| p.extension_name_as_c_str().ok() == Some(EXTENSION))
}

/// A messenger collecting the text of every error message; destroyed on drop.
pub struct Messages {
    loader: ash::ext::debug_utils::Instance,
    messenger: vk::DebugUtilsMessengerEXT,
    /// Boxed: the callback holds its address.
    log: Box<Mutex<Vec<String>>>,
}

impl Messages {
    /// Registers the messenger on `instance`, created with [`EXTENSION`].
    pub fn new(entry: &ash::Entry, instance: &ash::Instance) -> Result<Self, String> {
        let loader = ash::ext::debug_utils::Instance::new(entry, instance);
        let log = Box::new(Mutex::new(Vec::new()));
        let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
            .message_type(
                vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                    | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                    | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
            )
            .pfn_user_callback(Some(collect))
            .user_data(std::ptr::from_ref::<Mutex<Vec<String>>>(&log).cast_mut().cast());
        // SAFETY: valid instance that enabled the extension; the user data
        // (the boxed log) outlives the messenger, which drop destroys first.
        let messenger = unsafe { loader.create_debug_utils_messenger(&info, None) }
            .map_err(|e| format!("vkCreateDebugUtilsMessengerEXT: {e:?}"))?;
        Ok(Self { loader, messenger, log })
    }

    /// The error messages received since the last call.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Drop for Messages {
    fn drop(&mut self) {
        // SAFETY: the messenger belongs to this loader's instance, which is
        // still alive (the bench destroys the instance after this).
        unsafe { self.loader.destroy_debug_utils_messenger(self.messenger, None) };
    }
}

/// The messenger callback: appends the message text to the log.
unsafe extern "system" fn collect(
    _severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the loader passes valid callback data (or null) and the user
    // data registered in `Messages::new`, a live `Mutex<Vec<String>>`.
    let (data, log) = unsafe { (data.as_ref(), user.cast::<Mutex<Vec<String>>>().as_ref()) };
    if let (Some(data), Some(log)) = (data, log) {
        // SAFETY: pMessage is null or a NUL-terminated string valid for the call.
        let text = unsafe { data.message_as_c_str() }.map(|m| m.to_string_lossy().into_owned()).unwrap_or_default();
        log.lock().unwrap_or_else(|e| e.into_inner()).push(text);
    }
    vk::FALSE
}
