//! Every exported function runs inside one of these guards: a panic never
//! unwinds into the loader or the application. It is logged and becomes an
//! error code; a void `vkCmd*` hook instead poisons its command buffer so that
//! `vkEndCommandBuffer` fails.

use super::lookup::ValidCommandBuffer;
use crate::settings::test_panic_hook;
use ash::vk;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Panics when the panic-guard tests asked this hook to (debug builds only).
fn injected_panic(name: &str) {
    if test_panic_hook() == Some(name) {
        panic!("VK_EMU_SE_TEST_PANIC: injected panic in {name}");
    }
}

fn report(name: &str, payload: &(dyn std::any::Any + Send)) {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into());
    tracing::error!("internal error in {name}: {message}; the call failed");
}

/// Runs a hook that returns a `VkResult`; a panic returns `VK_ERROR_UNKNOWN`.
pub(crate) fn guard_result(name: &'static str, f: impl FnOnce() -> vk::Result) -> vk::Result {
    catch_unwind(AssertUnwindSafe(|| {
        injected_panic(name);
        f()
    }))
    .unwrap_or_else(|payload| {
        report(name, payload.as_ref());
        vk::Result::ERROR_UNKNOWN
    })
}

/// Runs a hook that returns a value; a panic returns `fallback`.
pub(crate) fn guard_value<T>(name: &'static str, fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(|| {
        injected_panic(name);
        f()
    }))
    .unwrap_or_else(|payload| {
        report(name, payload.as_ref());
        fallback
    })
}

/// Runs a void command hook; a panic poisons the command buffer.
pub(crate) fn guard_command(name: &'static str, command_buffer: ValidCommandBuffer, f: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| {
        injected_panic(name);
        f()
    })) {
        report(name, payload.as_ref());
        // SAFETY: the hook's own command buffer, its access unwound.
        let poisoned = catch_unwind(|| unsafe { super::lookup::poison(command_buffer.handle()) });
        if poisoned.is_err() {
            tracing::error!("{name}: could not poison the command buffer");
        }
    }
}
