//! Per-device state: the next layer's entry points, what the layer tracks
//! for the graph runtime (node shader words, scratch buffers, graph stages of
//! library pipelines, descriptor layouts) and the command buffers' shadow state.

use super::command_buffer::CommandBufferState;
use super::instance::{InstanceState, PhysicalDeviceState};
use super::registry::HandleMap;
use crate::dispatch::DeviceDispatch;
use crate::graph::pipeline::{GraphPipeline, MetaPipelines};
use crate::graph::scratch::ScratchTarget;
use ash::vk;
use parking_lot::{Mutex, RwLock};
use std::collections::BTreeMap;
use std::sync::Arc;

pub(crate) struct DeviceState {
    pub dispatch: DeviceDispatch,
    pub instance: Arc<InstanceState>,
    pub physical: Arc<PhysicalDeviceState>,
    /// The application enabled `VK_AMDX_shader_enqueue` and the layer emulates it.
    pub emulated: bool,
    /// The application enabled `shaderMeshEnqueue` (the layer enabled
    /// `VK_EXT_mesh_shader` below): mesh nodes can be created and drawn.
    pub mesh_enqueue: bool,
    pub resources: Mutex<Resources>,
    pub command_buffers: RwLock<HandleMap<vk::CommandBuffer, Mutex<CommandBufferState>>>,
    /// Where graph dispatches leave their status for the host (created on first use).
    pub status: Mutex<Option<crate::ffi::StatusBuffer>>,
    /// Timestamp queries of the `profile` setting (created on first use).
    pub profile_queries: Mutex<Option<crate::graph::profile::QueryRing>>,
    /// Submissions whose graph dispatches' status has not been checked yet.
    pub pending_reports: Mutex<Vec<PendingReport>>,
    /// Host-visible blocks holding host dispatches' records until their
    /// command buffers are reset.
    pub staging: Mutex<crate::graph::staging::StagingPool>,
    /// Analyses and lowered kernels kept across pipeline creations.
    pub lowered: Mutex<crate::graph::lowered_cache::LoweredCache>,
}

/// Graph dispatches of one submission, checked at the next host
/// synchronisation point that proves the submission finished.
#[derive(Clone, Debug)]
pub(crate) struct PendingReport {
    pub queue: vk::Queue,
    pub fence: vk::Fence,
    pub slots: Vec<super::command_buffer::StatusSlot>,
}

/// A buffer created with the execution-graph scratch usage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScratchBuffer {
    pub size: vk::DeviceSize,
    pub address: Option<vk::DeviceAddress>,
}

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
    pub(crate) fn destroy(&self, device: &DeviceState) {
        let fp = device.dispatch.fp.fp_v1_0();
        // SAFETY: the layer's own objects on this device.
        unsafe {
            (fp.destroy_pipeline)(device.handle(), self.pipeline, std::ptr::null());
            (fp.destroy_pipeline_layout)(device.handle(), self.layout, std::ptr::null());
        }
    }
}

/// What the runtime needs of an application pipeline layout: node kernels
/// use a copy extended by the runtime's push-constant block.
#[derive(Clone, Debug, Default)]
pub(crate) struct PipelineLayoutInfo {
    pub set_layouts: Vec<vk::DescriptorSetLayout>,
    pub push_ranges: Vec<vk::PushConstantRange>,
    /// Dynamic descriptors of each set.
    pub dynamic_counts: Vec<u32>,
}

#[derive(Default)]
pub(crate) struct Resources {
    /// Words of shader modules that declare `ShaderEnqueueAMDX`.
    pub node_modules: HandleMap<vk::ShaderModule, Arc<[u32]>>,
    pub scratch_buffers: HandleMap<vk::Buffer, ScratchBuffer>,
    /// Scratch buffers by device address, for range look-ups.
    pub scratch_by_address: BTreeMap<vk::DeviceAddress, vk::Buffer>,
    /// Node stages of library pipelines, by the handle given to the application.
    pub node_libraries: HandleMap<vk::Pipeline, NodeStage>,
    /// Mesh nodes destroyed by the application while a graph still used
    /// them: destroyed with the last such graph (see [`Resources::sweep_meshes`]).
    pub retired_meshes: Vec<Arc<MeshNode>>,
    /// Dynamic descriptors per set layout (to split `pDynamicOffsets` per set).
    pub set_layout_dynamic_counts: HandleMap<vk::DescriptorSetLayout, u32>,
    pub pipeline_layouts: HandleMap<vk::PipelineLayout, Arc<PipelineLayoutInfo>>,
    /// The driver module behind node library pipelines (created on first use).
    pub placeholder_module: Option<vk::ShaderModule>,
    /// Execution graph pipelines, by the handle given to the application.
    pub graphs: HandleMap<vk::Pipeline, Arc<GraphPipeline>>,
    /// Execution graph pipelines created as libraries: their node stages,
    /// linked only into the graphs that list them in `pLibraryInfo`.
    pub graph_libraries: HandleMap<vk::Pipeline, Vec<NodeStage>>,
    /// The runtime's meta pipelines (created with the first graph).
    pub meta: Option<Arc<MetaPipelines>>,
    /// Push-descriptor update templates, with the bind point the
    /// application named (see `ffi::templates`).
    pub push_templates: HandleMap<vk::DescriptorUpdateTemplate, PushTemplate>,
}

impl Resources {
    /// The retired mesh nodes no graph uses any more, taken out of the list
    /// for the caller to destroy.
    pub(crate) fn sweep_meshes(&mut self) -> Vec<Arc<MeshNode>> {
        let (free, kept) =
            std::mem::take(&mut self.retired_meshes).into_iter().partition(|m| Arc::strong_count(m) == 1);
        self.retired_meshes = kept;
        free
    }
}

/// A push-descriptor update template as the application created it.
#[derive(Clone, Debug)]
pub(crate) struct PushTemplate {
    pub bind_point: vk::PipelineBindPoint,
    pub entries: Vec<vk::DescriptorUpdateTemplateEntry>,
}

impl DeviceState {
    pub(crate) fn handle(&self) -> vk::Device {
        self.dispatch.fp.handle()
    }

    /// Runs `f` on a command buffer's shadow state (created on first use).
    pub(crate) fn with_command_buffer<R>(
        &self,
        cb: vk::CommandBuffer,
        f: impl FnOnce(&mut CommandBufferState) -> R,
    ) -> R {
        if let Some(state) = self.command_buffers.read().get(&cb) {
            return f(&mut state.lock());
        }
        let mut map = self.command_buffers.write();
        let state = map.entry(cb).or_default();
        f(state.get_mut())
    }

    /// The scratch buffer range `[address, address + size)` lies in.
    pub(crate) fn scratch_target(&self, address: vk::DeviceAddress, size: vk::DeviceSize) -> Option<ScratchTarget> {
        let resources = self.resources.lock();
        let (&base, buffer) = resources.scratch_by_address.range(..=address).next_back()?;
        let tracked = resources.scratch_buffers.get(buffer)?;
        let offset = address - base;
        (offset.checked_add(size)? <= tracked.size).then_some(ScratchTarget { buffer: *buffer, offset, address, size })
    }

    /// The meta pipelines, created on first use.
    pub(crate) fn meta_pipelines(&self) -> Result<Arc<MetaPipelines>, crate::graph::errors::GraphError> {
        if let Some(meta) = &self.resources.lock().meta {
            return Ok(meta.clone());
        }
        let meta = Arc::new(MetaPipelines::create(self)?);
        let mut resources = self.resources.lock();
        if let Some(existing) = &resources.meta {
            meta.destroy(self);
            return Ok(existing.clone());
        }
        resources.meta = Some(meta.clone());
        Ok(meta)
    }

    /// What the layer recorded about a pipeline layout (empty if unknown).
    pub(crate) fn pipeline_layout(&self, layout: vk::PipelineLayout) -> Arc<PipelineLayoutInfo> {
        self.resources.lock().pipeline_layouts.get(&layout).cloned().unwrap_or_default()
    }
}
