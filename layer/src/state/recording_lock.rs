//! The lock of one command buffer's state: taken by every `vkCmd*` hook
//! (thousands of times a frame), almost never contended (Vulkan has the
//! application record a command buffer on one thread at a time), so it
//! costs one atomic swap to take and a plain release store to give back,
//! where a general mutex's release is another read-modify-write. Contention
//! (an application breaking that rule, or the layer's own rare accesses
//! from another thread at submission) spins, briefly, instead of racing.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Default)]
pub(crate) struct RecordingLock<T> {
    held: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is only reached through a `Held` guard, and at most one
// guard exists at a time (`held`, taken with Acquire and given back with
// Release, orders the accesses): the same contract as a mutex.
unsafe impl<T: Send> Sync for RecordingLock<T> {}

impl<T> RecordingLock<T> {
    /// Takes the lock, spinning while another thread holds it.
    pub(crate) fn lock(&self) -> Held<'_, T> {
        while self.held.swap(true, Ordering::Acquire) {
            while self.held.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        }
        Held { lock: self }
    }
}

/// The value of a taken [`RecordingLock`], given back on drop.
pub(crate) struct Held<'a, T> {
    lock: &'a RecordingLock<T>,
}

impl<T> Deref for Held<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (see `RecordingLock`'s `Sync`).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for Held<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`, and `&mut self` makes it exclusive here.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for Held<'_, T> {
    fn drop(&mut self) {
        self.lock.held.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn threads_take_turns() {
        let lock = Arc::new(RecordingLock::<u64>::default());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        *lock.lock() += 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*lock.lock(), 40_000, "no increment lost");
    }
}
