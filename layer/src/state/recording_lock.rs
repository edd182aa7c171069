//! The lock of one command buffer's state: taken by every `vkCmd*` hook
//! (thousands of times a frame), almost never contended (Vulkan has the
//! application record a command buffer on one thread at a time). A spin
//! lock costs one atomic read-modify-write to take and a plain release
//! store to give back, where a parking mutex's release is a second
//! read-modify-write; contention (an application breaking that rule, or the
//! layer's own rare accesses from another thread at submission) spins,
//! briefly, instead of racing. The lock is the `spin` crate's, so that the
//! layer's own unchecked code stays at the C boundary (issue 25).

/// A command buffer's lock: see the module doc.
pub(crate) type RecordingLock<T> = spin::mutex::SpinMutex<T>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn threads_take_turns() {
        let lock = Arc::new(RecordingLock::<u64>::new(0));
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
