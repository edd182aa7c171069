//! The shape shared by the create and destroy hooks of objects the layer
//! keeps records of: a create hook forwards, then records the handle the
//! driver wrote; a destroy hook forgets the handle, then forwards. (In the
//! other order, another thread could be given the same handle value by
//! the driver between the two steps, and lose its record to ours.)
//!
//! Hooks that translate what they forward (shader modules, buffers,
//! pipelines, render passes) keep their own bodies.

use super::guard::{guard_result, guard_value};
use super::lookup::device_of;
use crate::device::DeviceState;
use ash::vk;

/// A create hook, guarded as `name`: `forward` calls the driver; on
/// success `record` keeps what the layer needs about the handle written to
/// `out`.
///
/// # Safety
/// `device` must be a valid device, and `out` valid for reading one handle
/// once `forward` returns `VK_SUCCESS` (the driver wrote it).
pub(super) unsafe fn forward_then_record<H: Copy>(
    name: &'static str,
    device: vk::Device,
    out: *const H,
    forward: impl FnOnce(&DeviceState) -> vk::Result,
    record: impl FnOnce(&DeviceState, H),
) -> vk::Result {
    guard_result(name, || {
        // SAFETY: caller's contract.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        let result = forward(&state);
        if result == vk::Result::SUCCESS {
            // SAFETY: written on success (caller's contract).
            record(&state, unsafe { *out });
        }
        result
    })
}

/// A destroy (or free) hook, guarded as `name`: `forget` drops the layer's
/// records, then `forward` calls the driver.
///
/// # Safety
/// `device` must be a valid device.
pub(super) unsafe fn forget_then_forward(
    name: &'static str,
    device: vk::Device,
    forget: impl FnOnce(&DeviceState),
    forward: impl FnOnce(&DeviceState),
) {
    guard_value(name, (), || {
        // SAFETY: caller's contract.
        let Some(state) = (unsafe { device_of(device) }) else { return };
        forget(&state);
        forward(&state);
    })
}
