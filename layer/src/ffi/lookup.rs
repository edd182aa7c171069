//! Finding the layer's state of a device from one of its dispatchable
//! handles, and marking a command buffer as failed. Below both the hooks
//! ([`commands`](super::commands) and the others) and [`guard`](super::guard),
//! which poisons a command buffer when a void hook panics: neither imports
//! the other for it.
//!
//! The `vkCmd*` hooks run on every state-setting call of an application
//! that records thousands a frame on many threads, so they find their
//! command buffer through [`recording`]: a per-thread cache of the last
//! command buffer the thread recorded into (a command buffer is recorded by
//! one thread at a time, Vulkan's external synchronisation), checked against
//! [`COMMAND_BUFFERS_RETIRED`]. A hit reads two plain words of the thread's
//! and takes no lock but the command buffer's own (uncontended) and no
//! reference count; a miss looks the device and the command buffer up in the
//! shared maps once.

use super::dispatch_key;
use crate::device::{CommandBufferState, DeviceState, COMMAND_BUFFERS_RETIRED, DEVICES};
use crate::state::recording_lock::RecordingLock;
use ash::vk;
use std::cell::{Cell, RefCell};
use std::ops::Deref;
use std::sync::atomic::Ordering;
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

/// A command buffer being recorded: its device (the hooks forward through
/// it) and its state.
pub(super) struct Recording<'a> {
    device: &'a DeviceState,
    state: &'a RecordingLock<CommandBufferState>,
}

impl Recording<'_> {
    /// Runs `f` on the command buffer's state (inline: the hooks' every call).
    #[inline(always)]
    pub(super) fn shadow<R>(&self, f: impl FnOnce(&mut CommandBufferState) -> R) -> R {
        f(&mut self.state.lock())
    }
}

impl Deref for Recording<'_> {
    type Target = DeviceState;
    fn deref(&self) -> &DeviceState {
        self.device
    }
}

/// What a thread recorded into last, as the hit path reads it: plain
/// values, read without a write (no borrow flag, no reference count), so
/// that a hit costs a comparison and no store a neighbouring thread's line
/// could share.
#[derive(Clone, Copy)]
struct Recent {
    cb: vk::CommandBuffer,
    /// [`COMMAND_BUFFERS_RETIRED`] when it was looked up.
    retired: u64,
    /// Kept alive by the thread's [`Held`] until its next miss.
    device: *const DeviceState,
    state: *const RecordingLock<CommandBufferState>,
}

impl Recent {
    /// Matches no command buffer (the counter never reaches `u64::MAX`).
    const NONE: Recent =
        Recent { cb: vk::CommandBuffer::null(), retired: u64::MAX, device: std::ptr::null(), state: std::ptr::null() };
}

/// The references behind a thread's [`Recent`], replaced on a miss only.
struct Held {
    _device: Arc<DeviceState>,
    _state: Arc<RecordingLock<CommandBufferState>>,
}

thread_local! {
    static RECENT: Cell<Recent> = const { Cell::new(Recent::NONE) };
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

/// A command buffer handle the application passed to a hook: valid for the
/// call (the command's valid usage).
#[derive(Clone, Copy, Debug)]
pub(super) struct ValidCommandBuffer(vk::CommandBuffer);

impl ValidCommandBuffer {
    /// # Safety
    /// `cb` must be a valid command buffer.
    pub(super) unsafe fn new(cb: vk::CommandBuffer) -> Self {
        ValidCommandBuffer(cb)
    }
}

/// Runs `f` with `cb`'s device and state (the state created on first use);
/// `None` when `cb` belongs to no device the layer knows (logged). `f` must
/// not call `recording` itself (a nested miss would release what the outer
/// call reads; no hook does: each one forwards its own call).
#[inline]
pub(super) fn recording<R>(cb: ValidCommandBuffer, f: impl FnOnce(&Recording<'_>) -> R) -> Option<R> {
    let retired = COMMAND_BUFFERS_RETIRED.load(Ordering::Relaxed);
    let mut recent = RECENT.get();
    if recent.cb != cb.0 || recent.retired != retired {
        recent = look_up(cb, retired)?;
    }
    // SAFETY: the thread's `Held` keeps both alive until its next miss,
    // which only a later hook can take (see above).
    let (device, state) = unsafe { (&*recent.device, &*recent.state) };
    Some(f(&Recording { device, state }))
}

/// A miss: looks `cb` up in the shared maps and makes it the thread's recent one.
#[cold]
fn look_up(cb: ValidCommandBuffer, retired: u64) -> Option<Recent> {
    // SAFETY: a valid command buffer (`ValidCommandBuffer`).
    let device = unsafe { device_of(cb.0) }?;
    let state = device.command_buffer(cb.0);
    let recent = Recent { cb: cb.0, retired, device: Arc::as_ptr(&device), state: Arc::as_ptr(&state) };
    RECENT.set(recent);
    // The previous command buffer's references go only now.
    HELD.with(|held| *held.borrow_mut() = Some(Held { _device: device, _state: state }));
    Some(recent)
}
