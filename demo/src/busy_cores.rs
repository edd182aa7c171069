//! Keeps the cores a measurement does not use busy, so that every thread
//! count is measured at the same CPU clock.
//!
//! A CPU raises the clock of its busy cores the fewer of them there are
//! (turbo): on the H200 machine (16 cores of a shared Xeon host), one
//! recording thread alone ran either at that raised clock or at the
//! all-core one, from process to process, and the layer's added cost per
//! call moved with it by up to 2.7× (`vkCmdPushConstants`: +5.4 to +6.4 ns
//! in three processes, +14.8 in another, 2026-11-27), while 16 threads
//! always ran at the all-core clock. The load has to be like the measured
//! work: with the other 15 cores running shell loops, one thread measured
//! what 16 do to within 2 ns in each of three processes, but with threads
//! spinning on an integer loop in registers it still ran at the raised
//! clock in two processes of five. `cmd_cost` has them record commands
//! (see `PassThrough::measure_counts`), each pinned to one of the CPUs a
//! round's measured threads leave free ([`crate::cpus`]): unpinned, the one
//! measured thread stayed on whichever CPU they left free, and that CPU
//! decided the process's one-thread figures (see `bench/README.md`).

use std::sync::atomic::{AtomicBool, Ordering};

/// Runs `measure` while `count` threads run `work(i, stop)` (thread `i`
/// of `count`), each until `stop` is set, which happens when `measure`
/// returns or unwinds; the threads are joined before this returns. A
/// thread that cannot be started is left out (they only steady the clock).
pub fn while_busy<R>(count: usize, work: impl Fn(usize, &AtomicBool) + Sync, measure: impl FnOnce() -> R) -> R {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for i in 0..count {
            let (work, stop) = (&work, &stop);
            // A thread that does not start only leaves a core idle.
            let _ = std::thread::Builder::new().name(format!("busy-core-{i}")).spawn_scoped(s, move || work(i, stop));
        }
        let _stops = StopOnDrop(&stop);
        measure()
    })
}

/// Sets its flag when dropped (also when the measurement unwinds, so that
/// the scope's join does not wait forever).
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::while_busy;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn workers_run_until_the_measurement_ends() {
        let started = AtomicUsize::new(0);
        let r = while_busy(
            2,
            |_, stop| {
                started.fetch_add(1, Ordering::Relaxed);
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            },
            || 7,
        );
        // Joined: both ran, and the test would hang if one never stopped.
        assert_eq!((r, started.load(Ordering::Relaxed)), (7, 2));
        assert_eq!(while_busy(0, |_, _| unreachable!(), || 8), 8);
    }

    #[test]
    fn workers_stop_when_the_measurement_panics() {
        let caught = std::panic::catch_unwind(|| {
            while_busy(
                1,
                |_, stop| {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                },
                || panic!("measurement failed"),
            )
        });
        assert!(caught.is_err());
    }
}
