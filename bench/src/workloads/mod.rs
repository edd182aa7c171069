//! The workloads, each a graph through the layer against a hand-written
//! plain-compute baseline on the same inputs, and what they share: the
//! features each one's device needs ([`features`]), and the row from what
//! [`crate::pair::measure()`] measured and the scratch figures
//! ([`crate::scratch_search`]). Their context is [`crate::context`]'s.

pub mod chain;
pub mod classify;
pub mod deferred;
pub mod empty;
pub mod fanout;
pub mod mesh;
pub mod refine;

pub use crate::context::{Ctx, GraphFigures};
use crate::device::Features;
use crate::measure;
use crate::pair::Measured;
use crate::report::Row;
use crate::report::Scratch;

/// The features the device of the workload `name` is created with.
pub fn features(name: &str) -> Features {
    match name {
        "mesh-nodes" => Features::MeshNodes,
        _ => Features::Compute,
    }
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
