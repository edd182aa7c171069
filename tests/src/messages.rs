//! Collects `VK_EXT_debug_utils` messages (validation errors and warnings)
//! so that each test can end by asserting there were no errors.

use std::ffi::c_void;
use std::sync::Mutex;

use ash::vk;

/// Messages received by the debug messenger, split by severity.
#[derive(Debug, Default)]
pub struct MessageLog {
    errors: Mutex<Vec<String>>,
    warnings: Mutex<Vec<String>>,
    tolerated_patterns: Mutex<Vec<String>>,
    tolerated: Mutex<Vec<String>>,
}

impl MessageLog {
    /// Files messages containing `pattern` under "tolerated" instead of
    /// errors/warnings. Only for known validation-layer limitations, e.g.
    /// validation 1.3.239 predates `VK_EXT_layer_settings` and reports its
    /// struct in `VkInstanceCreateInfo::pNext` as unknown.
    pub fn tolerate(&self, pattern: impl Into<String>) {
        if let Ok(mut v) = self.tolerated_patterns.lock() {
            v.push(pattern.into());
        }
    }

    /// Messages that matched a [`tolerate`](Self::tolerate) pattern.
    pub fn tolerated(&self) -> Vec<String> {
        self.tolerated.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// Errors received so far.
    pub fn errors(&self) -> Vec<String> {
        self.errors.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// Warnings received so far.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// Forgets everything received so far (for tests that provoke an error on purpose).
    pub fn clear(&self) {
        if let Ok(mut v) = self.errors.lock() {
            v.clear();
        }
        if let Ok(mut v) = self.warnings.lock() {
            v.clear();
        }
    }

    /// Panics, listing them, if any error was received; prints warnings.
    pub fn assert_no_errors(&self) {
        let warnings = self.warnings();
        if !warnings.is_empty() {
            eprintln!("{} validation warning(s):", warnings.len());
            for w in &warnings {
                eprintln!("  WARNING: {w}");
            }
        }
        let errors = self.errors();
        if !errors.is_empty() {
            let list: Vec<String> = errors.iter().map(|e| format!("  ERROR: {e}")).collect();
            panic!("{} validation error(s):\n{}", errors.len(), list.join("\n"));
        }
    }

    fn push(&self, severity: vk::DebugUtilsMessageSeverityFlagsEXT, text: String) {
        let tolerated =
            self.tolerated_patterns.lock().map(|pats| pats.iter().any(|p| text.contains(p.as_str()))).unwrap_or(false);
        let target = if tolerated {
            &self.tolerated
        } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
            &self.errors
        } else {
            &self.warnings
        };
        if let Ok(mut v) = target.lock() {
            v.push(text);
        }
    }
}

/// The severities the messenger subscribes to.
pub fn severities() -> vk::DebugUtilsMessageSeverityFlagsEXT {
    vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
}

/// The message types the messenger subscribes to.
pub fn types() -> vk::DebugUtilsMessageTypeFlagsEXT {
    vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
        | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
        | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE
}

/// The messenger callback; `user_data` is a `*const MessageLog` that
/// outlives the instance (see `TestInstance`).
///
/// # Safety
/// Called by the loader with a valid callback-data pointer and the user data
/// given at messenger creation.
pub unsafe extern "system" fn callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user_data: *mut c_void,
) -> vk::Bool32 {
    if data.is_null() || user_data.is_null() {
        return vk::FALSE;
    }
    // SAFETY: the loader passes a valid callback-data struct for the call's duration.
    let data = unsafe { &*data };
    // SAFETY: the strings are valid NUL-terminated strings or null.
    let id = unsafe { data.message_id_name_as_c_str() }.map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    // SAFETY: as above.
    let msg = unsafe { data.message_as_c_str() }.map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    // SAFETY: user_data is the `MessageLog` kept alive by the owning TestInstance.
    let log = unsafe { &*(user_data as *const MessageLog) };
    log.push(severity, format!("[{id}] {msg}"));
    vk::FALSE
}
