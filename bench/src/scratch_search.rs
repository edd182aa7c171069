//! Scratch used against payload bytes live at the fullest level.
//!
//! For a workload's graph, [`search`] finds the smallest scratch size (a
//! multiple of `sizeGranularity` between `minSize` and `maxSize` of
//! `vkGetExecutionGraphPipelineScratchSizeAMDX`) at which one dispatch still
//! produces the CPU model's words: each step creates a scratch buffer of the
//! size, records scratch initialisation and the dispatch, submits once
//! (untimed) and compares the output. A mismatch or an error message from
//! the layer (it drops work that does not fit and reports it through
//! `VK_EXT_debug_utils`, see [`crate::messages`]) means "too small". It
//! starts from `maxSize` (when that fails the workload is reported as such
//! and not searched), tries `minSize`, then bisects between a failing and a
//! working size, assuming that more scratch never breaks a working run.
//!
//! The figures it is set against come from the workload's own model
//! ([`Payload::of_levels`]): `live_payload_bytes`, the payload bytes of the
//! records alive at once at the fullest level (the records a level reads
//! and the records it writes for the next: neither can be let go while
//! it runs, in any implementation), and `consumed_payload_bytes`, those
//! a level reads alone (the figure before 2026-11-27).

use ash::vk;

use crate::cmd;
use crate::context::Ctx;
use crate::report::{Outcome, Scratch};
use demo::gpu::Buffer;
use demo::graph::Graph;

/// One graph dispatch to repeat at different scratch sizes.
pub struct Probe<'a> {
    pub graph: &'a Graph<'a>,
    /// Buffers cleared before each run.
    pub zero: &'a [&'a Buffer<'a>],
    /// The buffer whose first `want.len()` words are checked.
    pub out: &'a Buffer<'a>,
    /// Entry node, host records and their count, as in the timed runs.
    pub node: u32,
    pub records: &'a [u8],
    pub count: u32,
    /// The CPU model's words.
    pub want: &'a [u32],
}

/// The payload a graph holds at its fullest level, from its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Payload {
    /// Records alive at once: a level's inputs and outputs, at the level
    /// where they are the most.
    pub alive: u64,
    /// Records a level reads, at the level where they are the most.
    pub consumed: u64,
}

impl Payload {
    /// From `levels[d]`, the payload bytes of the records consumed at level
    /// d (written at level d - 1, so that level d - 1 holds them and its
    /// own inputs at once).
    pub fn of_levels(levels: &[u64]) -> Payload {
        let consumed = levels.iter().copied().max().unwrap_or(0);
        let alive = (0..levels.len()).map(|d| levels[d] + levels.get(d + 1).copied().unwrap_or(0)).max();
        Payload { alive: alive.unwrap_or(0), consumed }
    }
}

/// Searches the smallest working scratch size of `probe` (unless the
/// context disables the search) and pairs it with the graph's `payload`.
pub fn search(ctx: &Ctx<'_>, probe: &Probe<'_>, payload: Payload) -> Result<Scratch, String> {
    let size = probe.graph.scratch_size()?;
    let granularity = size.size_granularity.max(1);
    let mut out = Scratch {
        live_payload_bytes: payload.alive,
        consumed_payload_bytes: payload.consumed,
        min_size: size.min_size,
        max_size: size.max_size,
        granularity,
        outcome: Outcome::Skipped,
    };
    if !ctx.scratch_search {
        return Ok(out);
    }
    // Candidates: multiples of the granularity in [minSize, maxSize].
    let lo = size.min_size.div_ceil(granularity) * granularity;
    let hi = (size.max_size / granularity * granularity).max(lo);
    let cb = ctx.gpu.command_buffer()?;
    out.outcome = bisect(lo, hi, granularity, |bytes| check(ctx, probe, cb, bytes))?;
    Ok(out)
}

/// The smallest of `lo, lo + granularity, ..., hi` at which `run` (`None`:
/// works, `Some(why)`: fails) works: `hi` first, then `lo`, then bisection.
fn bisect(
    lo: u64,
    hi: u64,
    granularity: u64,
    mut run: impl FnMut(u64) -> Result<Option<String>, String>,
) -> Result<Outcome, String> {
    if let Some(why) = run(hi)? {
        return Ok(Outcome::MaxFails(why));
    }
    let Some(mut failure) = run(lo)? else {
        return Ok(Outcome::Found { bytes: lo, runs: 2, failure_below: None });
    };
    // Invariant: `bad` fails (with `failure`), `good` works.
    let (mut bad, mut good, mut runs) = (lo, hi, 2);
    while good - bad > granularity {
        let mid = bad + (good - bad) / granularity / 2 * granularity;
        runs += 1;
        match run(mid)? {
            Some(why) => (bad, failure) = (mid, why),
            None => good = mid,
        }
    }
    Ok(Outcome::Found { bytes: good, runs, failure_below: Some(failure) })
}

/// One untimed run of `probe` with `bytes` of fresh scratch: `None` when
/// the output matches and the layer reported nothing, else why not.
fn check(ctx: &Ctx<'_>, probe: &Probe<'_>, cb: vk::CommandBuffer, bytes: u64) -> Result<Option<String>, String> {
    let gpu = ctx.gpu;
    let words = probe.want.len();
    let usage = vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
    let scratch = gpu.buffer(bytes, usage, false)?;
    let host = cmd::host_buffer(gpu, 4 * words as u64)?;
    cmd::begin(gpu, cb)?;
    for b in probe.zero {
        cmd::zero(gpu, cb, b);
    }
    cmd::transfer_to_compute(gpu, cb);
    probe.graph.record_setup(cb, &scratch);
    probe.graph.record_dispatch(cb, &scratch, probe.node, probe.records, probe.count);
    cmd::compute_to_transfer(gpu, cb);
    cmd::copy(gpu, cb, probe.out, &host, 4 * words as u64);
    cmd::transfer_to_host(gpu, cb);
    cmd::end(gpu, cb)?;
    if let Some(m) = ctx.messages {
        m.take(); // Only this run's reports count.
    }
    gpu.submit_and_wait(cb)?;
    if let Some(first) = ctx.messages.and_then(|m| m.take().into_iter().next()) {
        return Ok(Some(first));
    }
    let got = host.read_u32(words)?;
    Ok((0..words).find(|&i| got[i] != probe.want[i]).map(|i| {
        let wrong = (0..words).filter(|&i| got[i] != probe.want[i]).count();
        format!("{wrong} of {words} words differ from the model (first: word {i}, {} vs {})", got[i], probe.want[i])
    }))
}

#[cfg(test)]
mod tests {
    use super::{bisect, Outcome, Payload, Scratch};

    /// A fake run that works from `need` bytes on.
    fn from(need: u64) -> impl FnMut(u64) -> Result<Option<String>, String> {
        move |bytes| Ok((bytes < need).then(|| format!("{bytes} too small")))
    }

    #[test]
    fn bisection_finds_the_first_working_size() {
        let found = bisect(4096, 4096 * 1000, 4096, from(4096 * 377 + 1)).unwrap();
        let Outcome::Found { bytes, runs, failure_below } = found else { panic!("{found:?}") };
        assert_eq!(bytes, 4096 * 378);
        assert_eq!(failure_below.as_deref(), Some("1544192 too small"), "one granule less");
        assert!(runs <= 2 + 10, "{runs} runs");
        let at_min = bisect(4096, 8192, 4096, from(0)).unwrap();
        assert_eq!(at_min, Outcome::Found { bytes: 4096, runs: 2, failure_below: None });
        assert_eq!(bisect(4096, 8192, 4096, from(9000)).unwrap(), Outcome::MaxFails("8192 too small".into()));
        let Outcome::Found { bytes, .. } = bisect(4096, 8192, 4096, from(8192)).unwrap() else { panic!() };
        assert_eq!(bytes, 8192);
    }

    #[test]
    fn ratio_needs_a_result() {
        let mut s = Scratch {
            live_payload_bytes: 100,
            consumed_payload_bytes: 50,
            min_size: 0,
            max_size: 0,
            granularity: 1,
            outcome: Outcome::Skipped,
        };
        assert_eq!(s.needed_over_live(), None);
        assert_eq!(s.needed_over_consumed(), None);
        s.outcome = Outcome::Found { bytes: 250, runs: 3, failure_below: None };
        assert_eq!(s.needed_over_live(), Some(2.5));
        assert_eq!(s.needed_over_consumed(), Some(5.0));
    }

    #[test]
    fn payload_alive_counts_a_levels_inputs_and_outputs() {
        // chain: level 1 reads 640 bytes and writes 320 for level 2.
        assert_eq!(Payload::of_levels(&[8, 640, 320]), Payload { alive: 960, consumed: 640 });
        assert_eq!(Payload::of_levels(&[768]), Payload { alive: 768, consumed: 768 });
        assert_eq!(Payload::of_levels(&[]), Payload { alive: 0, consumed: 0 });
    }
}
