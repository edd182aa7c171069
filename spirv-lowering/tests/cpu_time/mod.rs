//! CPU time of one thread, for the tests' time limits.
//!
//! The limits catch exponential walks and endless loops in the lowering,
//! which burn CPU. Wall-clock time also counts the time the thread waits
//! for a core, which on a loaded 2-core CI machine can be many times the
//! work itself; the thread's CPU time counts only the work.

use std::time::Duration;

/// A thread's CPU-time clock, readable from any thread of the process.
#[derive(Clone, Copy, Debug)]
pub struct ThreadClock(libc::clockid_t);

impl ThreadClock {
    /// The clock of the calling thread.
    pub fn current() -> Self {
        let mut id: libc::clockid_t = 0;
        // SAFETY: `pthread_self()` is a live thread (the caller) and `id`
        // is a valid place for the clock id.
        let err = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) };
        assert_eq!(err, 0, "pthread_getcpuclockid");
        ThreadClock(id)
    }

    /// CPU time the thread has used so far. The thread must still run.
    pub fn elapsed(self) -> Duration {
        self.try_elapsed().expect("clock_gettime on a running thread")
    }

    /// CPU time the thread has used so far, or `None` once it has ended.
    pub fn try_elapsed(self) -> Option<Duration> {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: a clock id and a valid `timespec` to write; the clock of
        // an ended thread makes the call fail, not misbehave.
        let err = unsafe { libc::clock_gettime(self.0, &mut ts) };
        (err == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
    }
}
