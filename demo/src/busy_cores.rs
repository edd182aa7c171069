//! Keeps the cores a measurement does not use busy, so that every thread
//! count is measured at the same CPU clock.
//!
//! A CPU raises the clock of its busy cores the fewer of them there are
//! (turbo): on the H200 machine (16 cores of a shared Xeon host), one
//! recording thread alone ran either at that raised clock or at the
//! all-core one, from process to process, and the layer's added cost per
//! call moved with it by up to 2.7× (`vkCmdPushConstants`: +5.4 to +6.4 ns
//! in three processes, +14.8 in another, 2026-11-27), while 16 threads
//! always ran at the all-core clock. With the other 15 cores spinning, one
//! thread measured what 16 do to within 2 ns for every command, in each of
//! three processes: comparing thread counts then shows what the threads do
//! to each other (shared locks, cache lines), not the clock.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Threads spinning on integer work until dropped.
pub struct BusyCores {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl BusyCores {
    /// Starts `count` spinning threads (as many as could be started: a
    /// failure to start one leaves fewer, never an error, since they only
    /// steady the clock).
    pub fn start(count: usize) -> BusyCores {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..count)
            .filter_map(|i| {
                let stop = stop.clone();
                std::thread::Builder::new().name(format!("busy-core-{i}")).spawn(move || spin(&stop)).ok()
            })
            .collect();
        BusyCores { stop, threads }
    }

    /// How many threads spin.
    pub fn count(&self) -> usize {
        self.threads.len()
    }
}

impl Drop for BusyCores {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            // A spinner cannot panic; nothing to report if one did.
            let _ = t.join();
        }
    }
}

/// Integer work (an xorshift), like a core running code, rather than a
/// `pause` loop, which a core may run at a lower power and so at a higher
/// clock; checks `stop` every 4,096 steps.
fn spin(stop: &AtomicBool) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..4096 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        x = black_box(x);
    }
}

#[cfg(test)]
mod tests {
    use super::BusyCores;

    #[test]
    fn spinners_start_and_stop() {
        let busy = BusyCores::start(2);
        assert_eq!(busy.count(), 2);
        drop(busy); // joins: the test would hang if a spinner never stopped
        assert_eq!(BusyCores::start(0).count(), 0);
    }
}
