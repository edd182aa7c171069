//! Pass-through overhead per `vkCmd*` call with the layer enabled and
//! unused: `demo`'s `cmd_cost` measurement ([`demo::cmd_cost`]) run on the
//! bench's device with 1, 4 and 16 recording threads (each its own command
//! pool), the counts measured in turn, each round's threads pinned to the
//! next CPUs, and the other cores recording too, CPU time of recording
//! only (nothing is submitted).

use demo::cmd_cost::{self, PassThrough, Skipped, ThreadRun};

/// Calls of each command per thread and repeat, and repeats: full, then `--quick`.
const FULL: (u32, u32) = (200_000, 9);
const QUICK: (u32, u32) = (50_000, 5);
/// Recording threads at once, one measurement each.
const THREADS: [u32; 3] = [1, 4, 16];

/// The per-command medians and how they were taken.
#[derive(Debug, Clone)]
pub struct Figures {
    /// `"<device> [driver <driver>]"` as the three instances saw it.
    pub device: String,
    pub iters: u32,
    pub repeats: u32,
    /// The instance without the layer lists the extension too (a native
    /// driver or an implicit layer), so `without` may include a layer.
    pub plain_lists_amdx: bool,
    /// CPU cores the bench could use (`None` when unknown): with more
    /// threads than cores, the times include waiting for a core.
    pub cores: Option<usize>,
    /// The cores the measured threads left free recorded too while they
    /// were measured (`demo::busy_cores`: every thread count with all
    /// cores busy).
    pub other_cores_busy: bool,
    /// CPUs the threads were pinned to in turn, round by round
    /// (`demo::cpus`; 0: not pinned).
    pub pinned_cpus: usize,
    /// Commands the device cannot record, left out of every run.
    pub skipped: Vec<Skipped>,
    /// One per thread count, in [`THREADS`] order.
    pub runs: Vec<ThreadRun>,
}

impl Figures {
    /// The one-thread run (the figures from before threads were measured).
    pub fn single(&self) -> Option<&ThreadRun> {
        self.runs.iter().find(|r| r.threads == 1)
    }
}

/// Measures on physical device `device_index` (enumeration order).
pub fn run(entry: &ash::Entry, device_index: usize, quick: bool) -> Result<Figures, String> {
    let (iters, repeats) = if quick { QUICK } else { FULL };
    println!(
        "pass-through: {iters} calls of each command per thread x {repeats} repeats, {THREADS:?} threads, \
         3 configurations ..."
    );
    let mut rigs = PassThrough::new(entry, device_index)?;
    let runs = rigs.measure_counts(iters, repeats, &THREADS)?;
    Ok(Figures {
        device: rigs.device().to_string(),
        iters,
        repeats,
        plain_lists_amdx: rigs.plain_lists_amdx(),
        cores: cmd_cost::cores(),
        other_cores_busy: true,
        pinned_cpus: rigs.pinned_cpus(),
        skipped: rigs.skipped(),
        runs,
    })
}
