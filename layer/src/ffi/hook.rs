//! The two paths of the `vkCmd*` hooks an application's recording loop
//! calls most (binds and pushes): the short one inline, for the common
//! case, in front of the general one, out of line ([`general`], `#[cold]`;
//! its closure takes the hook's arguments by value, which the compiler
//! then copies only on that path).
//!
//! The short path finds the command buffer in the shared table
//! ([`cached`]) and does only what takes no call but the driver's: it runs
//! outside the [`guard`](super::guard), whose landing pad costs every call
//! a frame, so nothing it runs may panic (no indexing, `unwrap`, allocation
//! or logging; the shadow's short paths, such as `Shadow::rebind`, are
//! written so). It either forwards the call and returns true, or returns
//! false having forwarded nothing and changed only what the general path
//! then changes the same way. The general path runs inside the guard with
//! the full lookup (`lookup::recording`).

use super::guard::guard_command;
use super::lookup::{cached, recording, Recording, ValidCommandBuffer};
use crate::settings::test_panic_hook;

/// Runs a hook's short path `f` on `cb`'s state where the shared table
/// holds it; false where it does not or `f` declines (the hook then takes
/// its general path). Always false in a debug build told to make a hook
/// panic (`VK_EMU_SE_TEST_PANIC`), which only the guarded path does.
#[inline(always)]
pub(super) fn short(cb: ValidCommandBuffer, f: impl FnOnce(&mut Recording<'_>) -> bool) -> bool {
    if cfg!(debug_assertions) && test_panic_hook().is_some() {
        return false;
    }
    cached(cb, f) == Some(true)
}

/// A hook's general path: `f` on `cb`'s state, looked up in full, inside
/// the guard, as `name`.
#[cold]
#[inline(never)]
pub(super) fn general(name: &'static str, cb: ValidCommandBuffer, f: impl FnOnce(&mut Recording<'_>)) {
    guard_command(name, cb, move || {
        recording(cb, f);
    })
}
