//! The workloads, each a graph through the layer against a hand-written
//! plain-compute baseline on the same inputs, and what they share: the
//! features each one's device needs ([`features`]), the context ([`Ctx`]),
//! graph creation with timing and scratch allocation, and
//! the row from what [`crate::pair::measure()`] measured and the scratch
//! figures ([`crate::scratch_search`]).

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

use crate::device::Features;
use crate::measure::{self, Settings};
use crate::messages::Messages;
use crate::pair::Measured;
use crate::report::Row;
use crate::report::Scratch;
use demo::gpu::{Buffer, Gpu};
use demo::graph::Graph;
use vk_host::Timer;

/// What every workload runs with: a device with the features it needs
/// ([`features`]), its timer, the run's settings.
pub struct Ctx<'d> {
    pub gpu: &'d Gpu,
    pub timer: Timer<'d>,
    pub settings: Settings,
    /// Search the smallest working scratch size (not `--no-scratch-search`).
    pub scratch_search: bool,
    /// The layer's error reports, when `VK_EXT_debug_utils` is enabled.
    pub messages: Option<&'d Messages>,
}

/// The features the device of the workload `name` is created with.
pub fn features(name: &str) -> Features {
    match name {
        "mesh-nodes" => Features::MeshNodes,
        _ => Features::Compute,
    }
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

/// A row from what [`crate::pair::measure()`] measured and the graph's figures.
pub fn row(name: &'static str, detail: String, graph: GraphFigures, measured: Measured, scratch: Scratch) -> Row {
    let Measured { samples, record_cpu_us } = measured;
    Row {
        name,
        detail,
        graph_us: measure::median(&samples.0),
        baseline_us: measure::median(&samples.1),
        record_cpu_us,
        pipeline_ms_per_node: graph.ms_per_node,
        nodes: graph.nodes,
        scratch_bytes: graph.scratch_bytes,
        extra: Vec::new(),
        samples,
        scratch,
    }
}

/// Little-endian bytes of `words` (host records).
pub fn bytes_of(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}
