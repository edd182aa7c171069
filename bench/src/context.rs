//! The context every workload runs with ([`Ctx`]: its device, timer and
//! settings) and graph creation with timing and scratch allocation
//! ([`Ctx::graph`]). Below the measuring path (`pair`) and the workloads,
//! which both take it.

use std::ffi::CStr;
use std::time::Instant;

use ash::vk;

use crate::measure::Settings;
use crate::messages::Messages;
use demo::gpu::{Buffer, Gpu};
use demo::graph::Graph;
use vk_host::Timer;

/// What every workload runs with: a device with the features it needs
/// ([`crate::workloads::features`]), its timer, the run's settings.
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
    /// The context on `gpu`.
    pub fn new(
        gpu: &'d Gpu,
        settings: Settings,
        scratch_search: bool,
        messages: Option<&'d Messages>,
    ) -> Result<Self, String> {
        let timer = Timer::new(&gpu.device, gpu.timestamps)?.ok_or("the device's queue writes no timestamps")?;
        Ok(Ctx { gpu, timer, settings, scratch_search, messages })
    }

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
}

impl GraphSetup<'_> {
    /// What the row reports of the graph.
    pub fn figures(&self) -> GraphFigures {
        GraphFigures { ms_per_node: self.ms_per_node, nodes: self.nodes, scratch_bytes: self.scratch.size }
    }
}

/// A graph's figures in its row: creation time per node, nodes, scratch
/// bytes allocated.
pub struct GraphFigures {
    pub ms_per_node: f64,
    pub nodes: u32,
    pub scratch_bytes: u64,
}
