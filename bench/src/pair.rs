//! The one measuring path of every workload: [`measure()`] takes a [`Pair`]
//! (the graph side, the baseline side, the CPU model's words and the graph
//! dispatch to record alone) and a context ([`Ctx`]) on a device with the
//! features the workload needs, and returns the samples of both sides
//! (submitted in turn) and the CPU time of recording the dispatch, after
//! checking that both sides produced the model's words.

use ash::vk;

use crate::cmd;
use crate::context::Ctx;
use crate::measure;
use demo::gpu::{Buffer, Gpu};
use demo::graph::Graph;
use vk_host::render::ColorTarget;

/// Where a side leaves its result, read back outside the timed span.
pub trait Output {
    /// Makes it ready for the side's commands (before the span).
    fn ready(&self, gpu: &Gpu, cb: vk::CommandBuffer);
    /// Copies its first `bytes` into `host` (after the span).
    fn read(&self, gpu: &Gpu, cb: vk::CommandBuffer, host: &Buffer<'_>, bytes: u64);
}

/// A storage buffer written by compute work (cleared through [`Side::zero`]).
impl Output for Buffer<'_> {
    fn ready(&self, _: &Gpu, _: vk::CommandBuffer) {}

    fn read(&self, gpu: &Gpu, cb: vk::CommandBuffer, host: &Buffer<'_>, bytes: u64) {
        cmd::compute_to_transfer(gpu, cb);
        cmd::copy(gpu, cb, self, host, bytes);
        cmd::transfer_to_host(gpu, cb);
    }
}

/// A colour target drawn in a rendering instance; its old contents are
/// discarded (`UNDEFINED`) and the whole image is read back.
impl Output for ColorTarget {
    fn ready(&self, gpu: &Gpu, cb: vk::CommandBuffer) {
        self.transition(&gpu.device, cb, vk::ImageLayout::UNDEFINED, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
    }

    fn read(&self, gpu: &Gpu, cb: vk::CommandBuffer, host: &Buffer<'_>, _: u64) {
        let d = &gpu.device;
        self.transition(d, cb, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
        self.copy_to(d, cb, host.buffer);
        cmd::barrier(gpu, cb, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST);
    }
}

/// One side of a workload: `zero` buffers cleared and `out` made ready,
/// `prep` (untimed), the timed `body`, then `out` read back.
pub struct Side<'a, 'b> {
    pub zero: &'a [&'a Buffer<'b>],
    pub prep: Box<dyn FnOnce(vk::CommandBuffer) + 'a>,
    pub body: Box<dyn FnOnce(vk::CommandBuffer) + 'a>,
    pub out: &'a dyn Output,
}

/// The graph dispatch recorded alone for its CPU time: `dispatch` is timed,
/// `before` and `after` (what it must be recorded inside) are not.
pub struct Recording<'a> {
    pub before: Box<dyn FnMut(vk::CommandBuffer) + 'a>,
    pub dispatch: Box<dyn FnMut(vk::CommandBuffer) + 'a>,
    pub after: Box<dyn FnMut(vk::CommandBuffer) + 'a>,
}

impl<'a> Recording<'a> {
    /// `count` host `records` into `node` of a compute graph, after its
    /// scratch setup.
    pub fn graph(graph: &'a Graph<'_>, scratch: &'a Buffer<'_>, node: u32, records: &'a [u8], count: u32) -> Self {
        Recording {
            before: Box::new(move |cb| graph.record_setup(cb, scratch)),
            dispatch: Box::new(move |cb| graph.record_dispatch(cb, scratch, node, records, count)),
            after: Box::new(|_| {}),
        }
    }
}

/// A workload as [`measure()`] takes it.
pub struct Pair<'a, 'b> {
    /// The workload's name (for the errors).
    pub name: &'a str,
    pub graph: Side<'a, 'b>,
    pub baseline: Side<'a, 'b>,
    /// The CPU model's words: each side's output must begin with them.
    pub want: &'a [u32],
    pub record: Recording<'a>,
}

/// What [`measure()`] returns.
pub struct Measured {
    /// Every measured GPU sample (graph, baseline), µs.
    pub samples: (Vec<f64>, Vec<f64>),
    /// Median CPU µs of recording the graph dispatch.
    pub record_cpu_us: f64,
}

/// Measures both sides of `pair` in turn on `ctx`'s device, checks their
/// outputs against each other and the model, then times the recording.
pub fn measure(ctx: &Ctx<'_>, pair: Pair<'_, '_>) -> Result<Measured, String> {
    let Pair { name, graph, baseline, want, mut record } = pair;
    let words = want.len();
    let (g_cb, g_host) = timed(ctx, graph, words)?;
    let (b_cb, b_host) = timed(ctx, baseline, words)?;
    let [g_samples, b_samples] = measure::sample_interleaved(ctx.gpu, [g_cb, b_cb], &ctx.timer, &ctx.settings)?;
    check(name, &g_host.read_u32(words)?, &b_host.read_u32(words)?, want)?;
    let record_cpu_us = measure::record_cpu_us(
        ctx.gpu,
        ctx.settings.runs,
        &mut record.before,
        &mut record.dispatch,
        &mut record.after,
    )?;
    Ok(Measured { samples: (g_samples, b_samples), record_cpu_us })
}

/// The side's command buffer and the host buffer its output lands in.
fn timed<'d>(ctx: &Ctx<'d>, side: Side<'_, '_>, words: usize) -> Result<(vk::CommandBuffer, Buffer<'d>), String> {
    let gpu = ctx.gpu;
    let bytes = 4 * words as u64;
    let host = cmd::host_buffer(gpu, bytes)?;
    let Side { zero, prep, body, out } = side;
    let cb = measure::timed_cb(
        gpu,
        &ctx.timer,
        |cb| {
            for b in zero {
                cmd::zero(gpu, cb, b);
            }
            out.ready(gpu, cb);
            cmd::transfer_to_compute(gpu, cb);
            prep(cb);
        },
        body,
        |cb| out.read(gpu, cb, &host, bytes),
    )?;
    Ok((cb, host))
}

/// The graph's words against the baseline's, then against the model's, so
/// that the error tells two sides that disagree from two that agree on
/// something else than the model.
fn check(name: &str, graph: &[u32], baseline: &[u32], want: &[u32]) -> Result<(), String> {
    if let Some(i) = (0..want.len()).find(|&i| graph[i] != baseline[i]) {
        return Err(format!(
            "{name}: the graph and the baseline differ at word {i}: graph {}, baseline {}",
            graph[i], baseline[i]
        ));
    }
    if let Some(i) = (0..want.len()).find(|&i| graph[i] != want[i]) {
        return Err(format!(
            "{name}: graph and baseline agree but differ from the CPU model at word {i}: {} vs {}",
            graph[i], want[i]
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn sides_are_checked_against_each_other_first() {
        assert!(check("w", &[1, 2], &[1, 2], &[1, 2]).is_ok());
        let e = check("w", &[1, 3], &[1, 2], &[1, 2]).unwrap_err();
        assert!(e.contains("differ at word 1"), "{e}");
        let e = check("w", &[1, 3], &[1, 3], &[1, 2]).unwrap_err();
        assert!(e.contains("agree but differ from the CPU model at word 1"), "{e}");
    }
}
