//! The workloads, each a graph through the layer against a hand-written
//! plain-compute baseline on the same inputs, and what they share: the
//! context ([`Ctx`]), graph creation with timing and scratch allocation, the
//! measured pair of command buffers with readbacks and the result check, and
//! the row with the scratch figures ([`crate::scratch_search`]).

pub mod chain;
pub mod classify;
pub mod deferred;
pub mod empty;
pub mod fanout;
pub mod mesh;
pub mod refine;

use std::ffi::CStr;
use std::time::Instant;

use ash::vk;

use crate::cmd;
use crate::measure::{self, Settings};
use crate::messages::Messages;
use crate::report::Row;
use crate::report::Scratch;
use demo::gpu::{Buffer, Gpu};
use demo::graph::Graph;
use vk_host::Timer;

/// What every workload runs with.
pub struct Ctx<'d> {
    pub gpu: &'d Gpu,
    pub timer: Timer<'d>,
    pub settings: Settings,
    /// Search the smallest working scratch size (not `--no-scratch-search`).
    pub scratch_search: bool,
    /// The layer's error reports, when `VK_EXT_debug_utils` is enabled.
    pub messages: Option<&'d Messages>,
}

/// A graph, its creation time per node, its scratch buffer.
pub struct GraphSetup<'d> {
    pub graph: Graph<'d>,
    pub ms_per_node: f64,
    pub nodes: u32,
    pub scratch: Buffer<'d>,
}

impl<'d> Ctx<'d> {
    /// Creates the graph of `entries` of `spv` with `storage` at set 0
    /// (timed), and scratch of `minSize + extra` bytes (capped at `maxSize`,
    /// rounded up to the granularity).
    pub fn graph(
        &self,
        spv: &[u8],
        entries: &[(&CStr, u32)],
        storage: &[&Buffer<'_>],
        extra: u64,
    ) -> Result<GraphSetup<'d>, String> {
        let start = Instant::now();
        let graph = Graph::new(self.gpu, spv, entries, storage)?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let size = graph.scratch_size()?;
        let gran = size.size_granularity.max(1);
        let bytes = (size.min_size + extra).div_ceil(gran) * gran;
        let bytes = bytes.min(size.max_size.max(size.min_size));
        let usage = vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let scratch = self.gpu.buffer(bytes, usage, false)?;
        let nodes = entries.len() as u32;
        Ok(GraphSetup { graph, ms_per_node: ms / f64::from(nodes.max(1)), nodes, scratch })
    }

    /// Measures the graph side and the baseline side and checks that they
    /// computed the same words. Each side: `zero` buffers cleared, `prep`
    /// (untimed), the timed `body`, then `out` (its first `words` words)
    /// copied back. `model`, when given, is what both must equal.
    pub fn compare(
        &self,
        name: &str,
        graph: Side<'_, '_>,
        baseline: Side<'_, '_>,
        words: usize,
        model: Option<&[u32]>,
    ) -> Result<(Vec<f64>, Vec<f64>), String> {
        let (g_cb, g_host) = self.timed(graph, words)?;
        let (b_cb, b_host) = self.timed(baseline, words)?;
        let [g_samples, b_samples] = measure::sample_interleaved(self.gpu, [g_cb, b_cb], &self.timer, &self.settings)?;
        let (g_out, b_out) = (g_host.read_u32(words)?, b_host.read_u32(words)?);
        if let Some(i) = (0..words).find(|&i| g_out[i] != b_out[i]) {
            return Err(format!(
                "{name}: the graph and the baseline differ at word {i}: graph {}, baseline {}",
                g_out[i], b_out[i]
            ));
        }
        if let Some(m) = model {
            if let Some(i) = (0..words).find(|&i| g_out[i] != m[i]) {
                return Err(format!(
                    "{name}: graph and baseline agree but differ from the CPU model at word {i}: {} vs {}",
                    g_out[i], m[i]
                ));
            }
        }
        Ok((g_samples, b_samples))
    }

    /// The side's command buffer and the host buffer its output lands in.
    fn timed(&self, side: Side<'_, '_>, words: usize) -> Result<(vk::CommandBuffer, Buffer<'d>), String> {
        let gpu = self.gpu;
        let bytes = 4 * words as u64;
        let host = cmd::host_buffer(gpu, bytes)?;
        let Side { zero, prep, body, out } = side;
        let cb = measure::timed_cb(
            gpu,
            &self.timer,
            |cb| {
                for b in zero {
                    cmd::zero(gpu, cb, b);
                }
                cmd::transfer_to_compute(gpu, cb);
                prep(cb);
            },
            body,
            |cb| {
                cmd::compute_to_transfer(gpu, cb);
                cmd::copy(gpu, cb, out, &host, bytes);
                cmd::transfer_to_host(gpu, cb);
            },
        )?;
        Ok((cb, host))
    }
}

/// One side of a comparison (see [`Ctx::compare`]).
pub struct Side<'a, 'b> {
    pub zero: &'a [&'a Buffer<'b>],
    pub prep: Box<dyn FnOnce(vk::CommandBuffer) + 'a>,
    pub body: Box<dyn FnOnce(vk::CommandBuffer) + 'a>,
    pub out: &'a Buffer<'b>,
}

/// A row from the samples and the graph's figures.
pub fn row(
    name: &'static str,
    detail: String,
    setup: &GraphSetup<'_>,
    record_cpu_us: f64,
    samples: (Vec<f64>, Vec<f64>),
    scratch: Scratch,
) -> Row {
    Row {
        name,
        detail,
        graph_us: measure::median(&samples.0),
        baseline_us: measure::median(&samples.1),
        record_cpu_us,
        pipeline_ms_per_node: setup.ms_per_node,
        nodes: setup.nodes,
        scratch_bytes: setup.scratch.size,
        extra: Vec::new(),
        samples,
        scratch,
    }
}

/// Little-endian bytes of `words` (host records).
pub fn bytes_of(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}
