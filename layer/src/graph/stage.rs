//! What the layer keeps of the application's node shaders until a graph
//! links them: a [`NodeStage`] per node (from a compute library pipeline,
//! a graph library, or a graph's own stages) and a [`MeshNode`] per mesh
//! node graphics pipeline. Plain data plus the destruction of a mesh
//! node's driver objects; below [`kernels`](super::kernels),
//! [`mesh`](super::mesh) and [`pipeline`](super::pipeline), which read it.

use super::gpu::Gpu;
use ash::vk;
use spirv_lowering::SpecMap;
use std::sync::Arc;

/// One node stage kept from a compute pipeline created with the
/// execution-graph + library flags, for linking into a graph later.
#[derive(Clone, Debug)]
pub(crate) struct NodeStage {
    pub words: Arc<[u32]>,
    pub entry_point: String,
    /// `VkPipelineShaderStageNodeCreateInfoAMDX` name / index overrides.
    pub node_name: Option<String>,
    pub node_index: u32,
    pub specialization: Vec<(u32, Vec<u8>)>,
    /// A mesh node: the graphics pipeline the layer made of it.
    pub mesh: Option<Arc<MeshNode>>,
}

/// A mesh node: a graphics pipeline the application created with the
/// library + execution-graph flags. Its mesh shader is lowered when it is
/// created (a mesh node has no outputs, so its kernel does not depend on
/// the graph it joins) and compiled with the application's graphics state
/// into a complete driver pipeline, which the application's handle names.
#[derive(Debug)]
pub(crate) struct MeshNode {
    /// The driver pipeline (also the handle the application holds).
    pub pipeline: vk::Pipeline,
    /// The application's layout with the runtime's push block appended.
    pub layout: vk::PipelineLayout,
    pub push_offset: u32,
    /// Stages of the push-constant range holding the runtime's block.
    pub push_stages: vk::ShaderStageFlags,
    pub info: spirv_lowering::NodeShaderInfo,
    pub records_per_workgroup: u32,
    /// The pipeline's dynamic states (the graph checks they agree).
    pub dynamic_states: Vec<vk::DynamicState>,
}

impl MeshNode {
    /// Destroys the driver objects (once no graph uses them).
    pub(crate) fn destroy(&self, device: &Gpu) {
        // The layer's own objects on this device.
        device.dispatch.destroy_pipeline(self.pipeline);
        device.dispatch.destroy_pipeline_layout(self.layout);
    }
}

/// Specialization values as the lowering reads them (32-bit constants; a
/// 64-bit constant contributes its low word, a bool its `VkBool32`).
pub(crate) fn spec_map(stage: &NodeStage) -> SpecMap {
    stage
        .specialization
        .iter()
        .filter_map(|(id, bytes)| {
            let mut word = [0u8; 4];
            let n = bytes.len().min(4);
            word[..n].copy_from_slice(bytes.get(..n)?);
            Some((*id, u32::from_le_bytes(word)))
        })
        .collect()
}
