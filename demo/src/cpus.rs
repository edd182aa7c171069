//! Which CPUs a measurement's threads run on: the pass-through measurement
//! pins each recording thread, and each thread that keeps a core busy, to
//! one CPU of the process's affinity set, so that a thread count's figure
//! is the median over the same CPUs as another count's.
//!
//! Why: on the H200 machine (16 vCPUs of a shared host) the driver's own
//! `vkCmdPushDescriptorSetKHR` cost 13.3 ns a call on one thread in one
//! process and 24.3 ns in another, while 16 threads measured 20.8-25.8 in
//! both (2026-11-27). Left to the scheduler, the one measured thread lands
//! on whichever CPU the busy threads leave free, the same one for a whole
//! pass, so one CPU's state (what shares its core on the host) decided
//! every one-thread figure of a process.

/// The CPUs this process may run on, in order; empty where the kernel
/// does not say (the threads then run where the scheduler puts them).
pub fn allowed() -> Vec<usize> {
    // SAFETY: a zeroed `cpu_set_t` is a valid empty set; the kernel writes
    // at most `size_of::<cpu_set_t>()` bytes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&cpu| libc::CPU_ISSET(cpu, &set)).collect()
    }
}

/// Pins the calling thread to `cpu`; false where the kernel refuses.
pub fn pin_current_thread(cpu: usize) -> bool {
    if cpu >= libc::CPU_SETSIZE as usize {
        return false;
    }
    // SAFETY: a zeroed `cpu_set_t` is a valid empty set; `cpu` is below
    // `CPU_SETSIZE`; pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Where one round's threads run: `measured[i]` for its recording thread
/// `i`, `busy[j]` for the thread that keeps core `j` busy (`None`: not
/// pinned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub measured: Vec<Option<usize>>,
    pub busy: Vec<Option<usize>>,
}

impl Placement {
    /// Round `round` of `threads` recording threads over `cpus` (the
    /// allowed set): thread `i` on CPU `(round * threads + i) mod n`, so
    /// that consecutive rounds of fewer threads than CPUs go around them
    /// all, and, where `others_busy`, one busy thread on each CPU left.
    /// Without known CPUs nothing is pinned and `others_busy` keeps
    /// `cores - threads` threads busy.
    pub fn of_round(cpus: &[usize], cores: usize, round: usize, threads: usize, others_busy: bool) -> Placement {
        let n = cpus.len();
        if n == 0 {
            let busy = if others_busy { cores.saturating_sub(threads) } else { 0 };
            return Placement { measured: vec![None; threads], busy: vec![None; busy] };
        }
        let first = round * threads;
        let measured: Vec<Option<usize>> = (0..threads).map(|i| Some(cpus[(first + i) % n])).collect();
        let busy = match others_busy {
            true => (threads..n).map(|i| Some(cpus[(first + i) % n])).collect(),
            false => Vec::new(),
        };
        Placement { measured, busy }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_goes_around_the_cpus_and_the_others_keep_the_rest() {
        let cpus = [0, 1, 2, 3];
        let p = Placement::of_round(&cpus, 4, 1, 1, true);
        assert_eq!(p.measured, [Some(1)]);
        assert_eq!(p.busy, [Some(2), Some(3), Some(0)]);
        let seen: Vec<_> = (0..4).map(|r| Placement::of_round(&cpus, 4, r, 1, true).measured[0]).collect();
        assert_eq!(seen, [Some(0), Some(1), Some(2), Some(3)]);
        let two = Placement::of_round(&cpus, 4, 1, 2, false);
        assert_eq!((two.measured, two.busy), (vec![Some(2), Some(3)], vec![]));
    }

    #[test]
    fn more_threads_than_cpus_share_them_and_leave_none_busy() {
        let p = Placement::of_round(&[4, 6], 2, 0, 3, true);
        assert_eq!((p.measured, p.busy), (vec![Some(4), Some(6), Some(4)], vec![]));
    }

    #[test]
    fn unknown_cpus_pin_nothing() {
        let p = Placement::of_round(&[], 8, 3, 2, true);
        assert_eq!((p.measured, p.busy), (vec![None, None], vec![None; 6]));
    }

    #[test]
    fn this_process_has_cpus_and_a_thread_can_be_pinned_to_one() {
        let cpus = allowed();
        assert!(!cpus.is_empty(), "sched_getaffinity lists this process's CPUs");
        let last = *cpus.last().unwrap();
        let pinned = std::thread::spawn(move || pin_current_thread(last) && allowed() == [last]).join().unwrap();
        assert!(pinned, "a thread pinned to CPU {last} is allowed that CPU alone");
    }
}
