//! Finding the layer's state of a device from one of its dispatchable
//! handles, and marking a command buffer as failed. Below both the hooks
//! ([`commands`](super::commands) and the others) and [`guard`](super::guard),
//! which poisons a command buffer when a void hook panics: neither imports
//! the other for it.

use super::dispatch_key;
use crate::device::{DeviceState, DEVICES};
use ash::vk;
use std::sync::Arc;

/// The device a command buffer (or queue) belongs to.
///
/// # Safety
/// `cb` must be a valid dispatchable handle of a device.
pub(super) unsafe fn device_of<H: vk::Handle + Copy + std::fmt::Debug>(handle: H) -> Option<Arc<DeviceState>> {
    // SAFETY: caller's contract.
    let state = DEVICES.get(unsafe { dispatch_key(handle) });
    if state.is_none() {
        tracing::error!("{handle:?} belongs to no device this layer knows");
    }
    state
}

/// Marks a command buffer as failed (a hook panicked while recording it).
pub(super) fn poison(cb: vk::CommandBuffer) {
    // SAFETY: called from a guarded hook with the application's valid handle.
    if let Some(device) = unsafe { device_of(cb) } {
        device.with_command_buffer(cb, |state| state.poisoned = true);
    }
}
