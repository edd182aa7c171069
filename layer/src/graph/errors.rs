//! The runtime's errors: [`GraphError`] when a graph or mesh node is
//! created, [`RecordError`] when a dispatch is recorded. Near the bottom of
//! [`graph`](super): the modules that create and record (driver, kernels,
//! mesh, pipeline, entry, record) all return them, so they live apart from
//! every one of those modules.

use super::link::LinkError;
use ash::vk;
use spirv_lowering::LowerError;

#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error("{0}")]
    Link(#[from] LinkError),
    #[error("node \"{node}\": {error}")]
    Lower { node: String, error: LowerError },
    #[error("stage {stage}: {what}")]
    Stage { stage: usize, what: String },
    #[error("the layout's push constants end at byte {end}; the runtime's 16-byte block does not fit in {max}")]
    PushSpace { end: u32, max: u32 },
    #[error("{call} failed: {result:?}")]
    Vulkan { call: &'static str, result: vk::Result },
}

impl GraphError {
    pub fn result(&self) -> vk::Result {
        match self {
            GraphError::Vulkan { result, .. } => *result,
            _ => vk::Result::ERROR_INITIALIZATION_FAILED,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("scratch size {size} is below the graph's minSize {min}")]
    ScratchTooSmall { size: u64, min: u64 },
    #[error("scratch address {0:#x} is not 16-byte aligned")]
    Misaligned(u64),
    #[error("no host-visible memory for the dispatch's level 0 ({0:?})")]
    Staging(vk::Result),
    #[error(
        "record {record} of node \"{node}\" asks for a grid of {grid:?} workgroups; the node's \
         MaxNumWorkgroupsAMDX is {max:?} and a node's records may ask for {total} workgroups in all"
    )]
    GridTooLarge { node: String, record: u64, grid: [u64; 3], max: [u32; 3], total: u32 },
}
