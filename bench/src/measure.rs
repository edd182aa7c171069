//! Timing: command buffers with two timestamps around a span, repeated
//! submission (warm-up, then the measured runs), medians, the CPU cost of
//! recording one `vkCmdDispatchGraphAMDX`, and the settings that size them.

use std::time::Instant;

use ash::vk;

use crate::cmd;
use demo::gpu::Gpu;
use vk_host::Timer;

/// How many times to run and how big the workloads are.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Unmeasured submissions first (pipeline JIT, caches).
    pub warmup: u32,
    /// Measured submissions (the median is reported).
    pub runs: u32,
    /// Smaller sizes (for lavapipe).
    pub quick: bool,
}

impl Settings {
    /// Full (`quick` false: 20 warm-up, 50 runs) or quick (2 warm-up, 20 runs).
    pub fn new(quick: bool) -> Self {
        if quick {
            Self { warmup: 2, runs: 20, quick }
        } else {
            Self { warmup: 20, runs: 50, quick }
        }
    }
}

/// The median of `values` (0 when empty).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Records a reusable command buffer: `prep` (untimed: clears, scratch
/// initialisation), a timestamp, `body` (the span measured), a timestamp,
/// then `after` (untimed: readback copies).
pub fn timed_cb(
    gpu: &Gpu,
    timer: &Timer<'_>,
    prep: impl FnOnce(vk::CommandBuffer),
    body: impl FnOnce(vk::CommandBuffer),
    after: impl FnOnce(vk::CommandBuffer),
) -> Result<vk::CommandBuffer, String> {
    let cb = gpu.command_buffer()?;
    cmd::begin(gpu, cb)?;
    timer.record_reset(cb);
    prep(cb);
    // Everything before the first stamp is done before the span starts.
    cmd::barrier(gpu, cb, vk::PipelineStageFlags::ALL_COMMANDS, vk::PipelineStageFlags::ALL_COMMANDS);
    timer.record_stamp(cb, 0);
    body(cb);
    timer.record_stamp(cb, 1);
    after(cb);
    cmd::end(gpu, cb)?;
    Ok(cb)
}

/// Submits each of `cbs` `warmup + runs` times, taking turns, so that the
/// graph and its baseline run under the same clocks (a GPU that idles
/// between short submissions changes clocks from one second to the next;
/// measured one after the other, the two sides saw different ones); the GPU
/// microseconds of each one's measured runs.
pub fn sample_interleaved<const N: usize>(
    gpu: &Gpu,
    cbs: [vk::CommandBuffer; N],
    timer: &Timer<'_>,
    s: &Settings,
) -> Result<[Vec<f64>; N], String> {
    for _ in 0..s.warmup {
        for cb in cbs {
            gpu.submit_and_wait(cb)?;
        }
    }
    let mut out: [Vec<f64>; N] = std::array::from_fn(|_| Vec::with_capacity(s.runs as usize));
    for _ in 0..s.runs {
        for (cb, samples) in cbs.iter().zip(out.iter_mut()) {
            gpu.submit_and_wait(*cb)?;
            samples.push(timer.micros()?);
        }
    }
    Ok(out)
}

/// Median CPU microseconds of recording `dispatch` (one
/// `vkCmdDispatchGraphAMDX`) between `before` and `after`, which are
/// recorded around it but not timed (the scratch setup, a rendering
/// instance); nothing is submitted.
pub fn record_cpu_us(
    gpu: &Gpu,
    runs: u32,
    before: &mut dyn FnMut(vk::CommandBuffer),
    dispatch: &mut dyn FnMut(vk::CommandBuffer),
    after: &mut dyn FnMut(vk::CommandBuffer),
) -> Result<f64, String> {
    let cb = gpu.command_buffer()?;
    let mut times = Vec::with_capacity(runs as usize);
    for _ in 0..runs.max(1) + 2 {
        cmd::begin(gpu, cb)?;
        before(cb);
        let start = Instant::now();
        dispatch(cb);
        times.push(start.elapsed().as_secs_f64() * 1e6);
        after(cb);
        cmd::end(gpu, cb)?;
    }
    Ok(median(&times[2..]))
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
