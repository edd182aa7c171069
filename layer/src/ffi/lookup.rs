//! Finding the layer's state of a device from one of its dispatchable
//! handles, and marking a command buffer as failed. Below both the hooks
//! ([`commands`](super::commands) and the others) and [`guard`](super::guard),
//! which poisons a command buffer when a void hook panics: neither imports
//! the other for it.
//!
//! The `vkCmd*` hooks run on every state-setting call of an application
//! that records thousands a frame on many threads, so they find their
//! command buffer through two caches in front of the shared maps, both
//! checked against [`COMMAND_BUFFERS_RETIRED`]:
//! - [`cached`]: a table shared by all threads, one slot per command buffer
//!   handle's hash, each read as a sequence lock: plain loads, no call (a
//!   per-thread variable in a shared library costs a call to
//!   `__tls_get_addr`), no store. The hooks' short paths use it alone.
//! - per thread, the command buffer the thread last looked up in the maps
//!   (a command buffer is recorded by one thread at a time, Vulkan's
//!   external synchronisation), for the rare thread whose command buffer
//!   shares its slot with another one being recorded: only a lookup in the
//!   maps takes a slot, so two such threads do not take it in turns.
//!
//! A hit takes no lock and no reference count; a miss of both looks the
//! device and the command buffer up in the shared maps once.
//!
//! A command buffer's recording state has no lock either: Vulkan has the
//! application synchronise each command of a command buffer with every
//! other use of the buffer (see `crate::device::CommandBufferEntry`), and
//! the layer reaches the state only from such commands: a hook's
//! [`Recording`], made from a [`ValidCommandBuffer`], and
//! [`with_command_buffer`] mutably (both through [`with_entry`]),
//! [`with_submitted`] to read at a submission. Inside a hook, [`Recording::shadow`] takes the recording
//! mutably, so the compiler rules out a second access nested in the first.
//!
//! A slot's pointers stay valid while nothing is retired: the device's map
//! holds the command buffer's state, and the device registry the device,
//! until a free or destroy bumps [`COMMAND_BUFFERS_RETIRED`], which makes
//! every slot stale. A command buffer cannot be freed while it is being
//! recorded (its external synchronisation), so one found is kept for the
//! call; the thread's own last lookup holds references besides ([`Held`]).

use super::dispatch_key;
use crate::device::{CommandBufferEntry, CommandBufferState, DeviceState, COMMAND_BUFFERS_RETIRED, DEVICES};
use ash::vk;
use ash::vk::Handle;
use std::cell::{Cell, RefCell};
use std::ops::Deref;
use std::sync::atomic::{fence, AtomicPtr, AtomicU64, Ordering};
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
///
/// # Safety
/// As [`with_command_buffer`]'s: called by a guarded hook of `cb` once its
/// own access has ended (unwound).
pub(super) unsafe fn poison(cb: vk::CommandBuffer) {
    // SAFETY: the application's valid handle (caller's contract).
    if let Some(device) = unsafe { device_of(cb) } {
        // SAFETY: caller's contract.
        unsafe { with_command_buffer(&device, cb, |state| state.poisoned = true) };
    }
}

/// Runs `f` on `cb`'s recording state (created on first use), for the
/// commands that reach it outside a [`Recording`]: begin, end, reset and
/// graph dispatches.
///
/// # Safety
/// The caller is a command of `cb` whose host access to it the application
/// synchronises (Vulkan's rule, see the module doc), and makes no other
/// access to `cb`'s state while `f` runs.
pub(super) unsafe fn with_command_buffer<R>(
    device: &DeviceState,
    cb: vk::CommandBuffer,
    f: impl FnOnce(&mut CommandBufferState) -> R,
) -> R {
    // SAFETY: caller's contract.
    unsafe { with_entry(&device.command_buffer(cb), f) }
}

/// Runs `f` on the recording state of `entry`, found already (every
/// mutable access to a command buffer's state goes through here).
///
/// # Safety
/// As [`with_command_buffer`]'s, for `entry`'s command buffer.
#[inline(always)]
pub(super) unsafe fn with_entry<R>(entry: &CommandBufferEntry, f: impl FnOnce(&mut CommandBufferState) -> R) -> R {
    // SAFETY: no other thread reaches the state while the application
    // synchronises this command, and no other access of this thread is
    // alive (caller's contract).
    f(unsafe { &mut *entry.state.get() })
}

/// Runs `f` on the recording state of `entry`, a command buffer being
/// submitted.
///
/// # Safety
/// `entry`'s command buffer is an element of a valid submission's command
/// buffers: executable or pending, so no command records, begins, resets or
/// frees it while the submission runs (`vkQueueSubmit`'s valid usage);
/// other submissions of it only read.
pub(super) unsafe fn with_submitted<R>(entry: &CommandBufferEntry, f: impl FnOnce(&CommandBufferState) -> R) -> R {
    // SAFETY: nothing changes the state while it is submitted (caller's contract).
    f(unsafe { &*entry.state.get() })
}

/// A command buffer being recorded: its device (the hooks forward through
/// it) and its state.
pub(super) struct Recording<'a> {
    device: &'a DeviceState,
    state: &'a CommandBufferEntry,
}

impl<'a> Recording<'a> {
    /// The device, not tied to a borrow of the recording: a hook may hold
    /// its entry points across [`Self::shadow`].
    #[inline(always)]
    pub(super) fn device(&self) -> &'a DeviceState {
        self.device
    }

    /// Runs `f` on the command buffer's state (inline: the hooks' every
    /// call). `&mut self`: nothing in `f` can reach the state again.
    #[inline(always)]
    pub(super) fn shadow<R>(&mut self, f: impl FnOnce(&mut CommandBufferState) -> R) -> R {
        // SAFETY: a `Recording` is made for a hook of its command buffer
        // (`ValidCommandBuffer`), which the application synchronises with
        // every other use of it; this thread's one access (`&mut self`).
        unsafe { with_entry(self.state, f) }
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
    state: *const CommandBufferEntry,
}

impl Recent {
    /// Matches no command buffer (the counter never reaches `u64::MAX`).
    const NONE: Recent =
        Recent { cb: vk::CommandBuffer::null(), retired: u64::MAX, device: std::ptr::null(), state: std::ptr::null() };
}

/// The references behind a thread's [`Recent`], replaced on a miss only.
struct Held {
    _device: Arc<DeviceState>,
    _state: Arc<CommandBufferEntry>,
}

thread_local! {
    static RECENT: Cell<Recent> = const { Cell::new(Recent::NONE) };
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

/// A command buffer handle the application passed to a hook: valid for the
/// call, and the call's host access to it synchronised (the command's valid
/// usage and "Host Synchronization").
#[derive(Clone, Copy, Debug)]
pub(super) struct ValidCommandBuffer(vk::CommandBuffer);

impl ValidCommandBuffer {
    /// # Safety
    /// `cb` must be a valid command buffer, and the caller a command of it
    /// that Vulkan has the application synchronise with every other use
    /// of it (all `vkCmd*` commands).
    pub(super) unsafe fn new(cb: vk::CommandBuffer) -> Self {
        ValidCommandBuffer(cb)
    }

    pub(super) fn handle(self) -> vk::CommandBuffer {
        self.0
    }
}

/// Runs `f` with `cb`'s device and state where the shared table's slot
/// for `cb` holds them; `None` (nothing run) otherwise. No call, no store:
/// inline, the hooks' short paths.
#[inline(always)]
pub(super) fn cached<R>(cb: ValidCommandBuffer, f: impl FnOnce(&mut Recording<'_>) -> R) -> Option<R> {
    let retired = COMMAND_BUFFERS_RETIRED.load(Ordering::Relaxed);
    let (device, state) = Slot::of(cb.0).read(cb.0, retired)?;
    // SAFETY: written while both were alive, and nothing was retired since
    // (see the module doc): alive for the call.
    let (device, state) = unsafe { (&*device, &*state) };
    Some(f(&mut Recording { device, state }))
}

/// Runs `f` with `cb`'s device and state (the state created on first use);
/// `None` when `cb` belongs to no device the layer knows (logged). `f` must
/// not call `recording` itself (a nested miss would release what the outer
/// call reads; no hook does: each one forwards its own call).
#[inline]
pub(super) fn recording<R>(cb: ValidCommandBuffer, f: impl FnOnce(&mut Recording<'_>) -> R) -> Option<R> {
    let retired = COMMAND_BUFFERS_RETIRED.load(Ordering::Relaxed);
    let (device, state) = match Slot::of(cb.0).read(cb.0, retired) {
        Some(found) => found,
        None => {
            let mut recent = RECENT.get();
            if recent.cb != cb.0 || recent.retired != retired {
                recent = look_up(cb, retired)?;
            }
            (recent.device, recent.state)
        }
    };
    // SAFETY: a slot's are alive as in `cached`; the thread's recent ones
    // are kept alive by its `Held` until its next miss, which only a later
    // hook can take (see above).
    let (device, state) = unsafe { (&*device, &*state) };
    Some(f(&mut Recording { device, state }))
}

/// A miss: looks `cb` up in the shared maps and makes it the thread's
/// recent one and its slot's.
#[cold]
fn look_up(cb: ValidCommandBuffer, retired: u64) -> Option<Recent> {
    // SAFETY: a valid command buffer (`ValidCommandBuffer`).
    let device = unsafe { device_of(cb.0) }?;
    let state = device.command_buffer(cb.0);
    let recent = Recent { cb: cb.0, retired, device: Arc::as_ptr(&device), state: Arc::as_ptr(&state) };
    RECENT.set(recent);
    Slot::of(cb.0).write(&recent);
    // The previous command buffer's references go only now.
    HELD.with(|held| *held.borrow_mut() = Some(Held { _device: device, _state: state }));
    Some(recent)
}

/// Slots in the shared table (40 bytes each).
const SLOTS: usize = 1024;

/// The shared table (all zeros: no slot names a command buffer, whose
/// handles are never null).
static TABLE: [Slot; SLOTS] = [const { Slot::EMPTY }; SLOTS];

/// One slot of the shared table: a command buffer, when it was looked up,
/// and its device and state, behind a sequence number that is odd while a
/// miss writes them.
struct Slot {
    sequence: AtomicU64,
    cb: AtomicU64,
    retired: AtomicU64,
    device: AtomicPtr<DeviceState>,
    state: AtomicPtr<CommandBufferEntry>,
}

impl Slot {
    #[allow(clippy::declare_interior_mutable_const)] // only the table's initialiser
    const EMPTY: Slot = Slot {
        sequence: AtomicU64::new(0),
        cb: AtomicU64::new(0),
        retired: AtomicU64::new(0),
        device: AtomicPtr::new(std::ptr::null_mut()),
        state: AtomicPtr::new(std::ptr::null_mut()),
    };

    /// `cb`'s slot (Fibonacci hashing of the handle, which points to a
    /// driver object, so its low bits are alignment).
    #[inline(always)]
    fn of(cb: vk::CommandBuffer) -> &'static Slot {
        let hash = (cb.as_raw() >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        &TABLE[(hash >> (64 - SLOTS.trailing_zeros())) as usize]
    }

    /// The device and state of `cb` looked up at `retired`, if this slot
    /// holds them whole (a sequence lock's read: no write here).
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    fn read(&self, cb: vk::CommandBuffer, retired: u64) -> Option<(*const DeviceState, *const CommandBufferEntry)> {
        let before = self.sequence.load(Ordering::Acquire);
        if self.cb.load(Ordering::Relaxed) != cb.as_raw() || self.retired.load(Ordering::Relaxed) != retired {
            return None;
        }
        let (device, state) = (self.device.load(Ordering::Relaxed), self.state.load(Ordering::Relaxed));
        fence(Ordering::Acquire);
        (before & 1 == 0 && self.sequence.load(Ordering::Relaxed) == before).then_some((device, state))
    }

    /// Makes the slot hold `recent`; leaves it as it is while another miss
    /// writes it.
    fn write(&self, recent: &Recent) {
        let sequence = self.sequence.load(Ordering::Relaxed);
        if sequence & 1 == 1
            || self.sequence.compare_exchange(sequence, sequence + 1, Ordering::Relaxed, Ordering::Relaxed).is_err()
        {
            return;
        }
        fence(Ordering::Release);
        self.cb.store(recent.cb.as_raw(), Ordering::Relaxed);
        self.retired.store(recent.retired, Ordering::Relaxed);
        self.device.store(recent.device.cast_mut(), Ordering::Relaxed);
        self.state.store(recent.state.cast_mut(), Ordering::Relaxed);
        self.sequence.store(sequence + 2, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Recent` naming `cb` at `retired`, its pointers made from `cb`
    /// (never dereferenced here) so that a torn read shows.
    fn recent(cb: u64, retired: u64) -> Recent {
        Recent {
            cb: vk::CommandBuffer::from_raw(cb),
            retired,
            device: (cb * 8) as *const DeviceState,
            state: (cb * 16) as *const CommandBufferEntry,
        }
    }

    fn read(slot: &Slot, cb: u64, retired: u64) -> Option<(usize, usize)> {
        slot.read(vk::CommandBuffer::from_raw(cb), retired).map(|(d, s)| (d as usize, s as usize))
    }

    #[test]
    fn a_slot_holds_one_command_buffer_of_one_retirement() {
        let slot = Slot::EMPTY;
        assert_eq!(read(&slot, 0x1000, 0), None, "empty");
        slot.write(&recent(0x1000, 3));
        assert_eq!(read(&slot, 0x1000, 3), Some((0x8000, 0x10000)));
        assert_eq!(read(&slot, 0x2000, 3), None, "another command buffer");
        assert_eq!(read(&slot, 0x1000, 4), None, "retired since");
        slot.write(&recent(0x2000, 4));
        assert_eq!(read(&slot, 0x1000, 4), None, "replaced");
        assert_eq!(read(&slot, 0x2000, 4), Some((0x10000, 0x20000)));
        slot.sequence.fetch_add(1, Ordering::Relaxed);
        assert_eq!(read(&slot, 0x2000, 4), None, "being written");
        slot.write(&recent(0x3000, 4));
        assert_eq!(read(&slot, 0x3000, 4), None, "a second writer leaves it");
    }

    /// A thread writing two command buffers into one slot in turn while
    /// another reads it: a read that succeeds is never a mix of two writes.
    #[test]
    fn reads_of_a_slot_being_written_are_whole() {
        let slot = Slot::EMPTY;
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for i in 0..1_000_000u64 {
                    slot.write(&recent((1 + (i & 1)) << 12, 0));
                }
                done.store(true, Ordering::Relaxed);
            });
            scope.spawn(|| {
                let mut i = 0u64;
                while !done.load(Ordering::Relaxed) {
                    let cb = (1 + (i & 1)) << 12;
                    if let Some(found) = read(&slot, cb, 0) {
                        assert_eq!(found, (cb as usize * 8, cb as usize * 16), "a torn read of {cb:#x}");
                    }
                    i += 1;
                }
            });
        });
    }
}
