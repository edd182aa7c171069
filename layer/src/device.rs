//! Per-device state, the layer's second tier (below `ffi`, above
//! [`graph`](crate::graph) and [`state`](crate::state)): [`DeviceState`] is
//! the runtime's context on the device ([`Gpu`], to which it dereferences)
//! plus the registries of what the application created there (node shader
//! words, scratch buffers, graphs and the graph stages of library
//! pipelines, descriptor layouts, update templates), the runtime's meta
//! pipelines and status buffer, the reports still to check, and each
//! command buffer's [`CommandBufferEntry`]. [`DEVICES`] finds it from a
//! dispatchable handle's dispatch key.
//!
//! The hooks look a device up here and hand the runtime what it needs: the
//! [`Gpu`], a command buffer's shadow, a graph or a pipeline layout's info.
//! Nothing in `graph` or `state` names this module.

use crate::graph::errors::GraphError;
use crate::graph::gpu::Gpu;
use crate::graph::pipeline::{GraphPipeline, MetaPipelines};
use crate::graph::scratch::ScratchTarget;
use crate::graph::stage::{MeshNode, NodeStage};
use crate::graph::status::{GraphNames, StatusBuffer, StatusTarget};
use crate::state::command_buffer::Shadow;
use crate::state::pipeline_layout::PipelineLayoutInfo;
use crate::state::registry::HandleMap;
use crate::state::Registry;
use ash::vk;
use parking_lot::{Mutex, RwLock};
use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use sync_unsafe_cell::SyncUnsafeCell;

pub(crate) static DEVICES: LazyLock<Registry<DeviceState>> = LazyLock::new(Registry::default);

/// Bumped whenever a command buffer's state may leave
/// [`DeviceState::command_buffers`] (buffers freed, a pool or a device
/// destroyed): a handle may then name another command buffer, so the hooks'
/// caches (`ffi::lookup`) look it up again.
pub(crate) static COMMAND_BUFFERS_RETIRED: AtomicU64 = AtomicU64::new(0);

/// Notes that command buffer states are about to leave (see
/// [`COMMAND_BUFFERS_RETIRED`]).
pub(crate) fn retire_command_buffers() {
    COMMAND_BUFFERS_RETIRED.fetch_add(1, Ordering::Relaxed);
}

pub(crate) struct DeviceState {
    /// The runtime's context: entry points, instance and physical device,
    /// `shaderMeshEnqueue`, and the runtime's pools.
    pub gpu: Gpu,
    /// The application enabled `VK_AMDX_shader_enqueue` and the layer emulates it.
    pub emulated: bool,
    pub resources: Mutex<Resources>,
    /// Each command buffer, shared with the hooks' caches (`ffi::lookup`).
    pub command_buffers: RwLock<HandleMap<vk::CommandBuffer, Arc<CommandBufferEntry>>>,
    /// Where graph dispatches leave their status for the host (created on first use).
    pub status: Mutex<Option<StatusBuffer>>,
    /// Submissions whose graph dispatches' status has not been checked yet.
    pub pending_reports: Mutex<Vec<PendingReport>>,
}

/// The hooks reach the runtime's context (`state.dispatch`,
/// `state.physical`, `state.handle()`) through the device.
impl Deref for DeviceState {
    type Target = Gpu;
    fn deref(&self) -> &Gpu {
        &self.gpu
    }
}

/// Graph dispatches of one submission, checked at the next host
/// synchronisation point that proves the submission finished.
#[derive(Clone, Debug)]
pub(crate) struct PendingReport {
    pub queue: vk::Queue,
    pub fence: vk::Fence,
    pub slots: Vec<StatusSlot>,
}

/// A buffer created with the execution-graph scratch usage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScratchBuffer {
    pub size: vk::DeviceSize,
    pub address: Option<vk::DeviceAddress>,
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
    pub push_templates: HandleMap<vk::DescriptorUpdateTemplate, Arc<PushTemplate>>,
    /// Devices with mesh nodes: each single-subpass render pass's resume
    /// copies (see `state::command_buffer::RenderPassInstance::resume`).
    pub render_passes: HandleMap<vk::RenderPass, [vk::RenderPass; 2]>,
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
    /// Whether the hooks shadow what is bound at `bind_point`: compute and
    /// the graph bind point always, graphics only where mesh nodes draw
    /// (the state they restore); other bind points never.
    pub(crate) fn shadows(&self, bind_point: vk::PipelineBindPoint) -> bool {
        match bind_point {
            vk::PipelineBindPoint::COMPUTE | crate::amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH => true,
            vk::PipelineBindPoint::GRAPHICS => self.mesh_enqueue,
            _ => false,
        }
    }

    /// A command buffer's entry (created on first use).
    pub(crate) fn command_buffer(&self, cb: vk::CommandBuffer) -> Arc<CommandBufferEntry> {
        if let Some(entry) = self.command_buffers.read().get(&cb) {
            return entry.clone();
        }
        self.command_buffers.write().entry(cb).or_default().clone()
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
    pub(crate) fn meta_pipelines(&self) -> Result<Arc<MetaPipelines>, GraphError> {
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

    /// Reserves a status slot for a dispatch about to be recorded (creating the
    /// buffer on first use); `None` when no buffer can be had (then the
    /// dispatch still runs, unreported).
    pub(crate) fn reserve_status_slot(&self) -> Option<StatusTarget> {
        let mut status = self.status.lock();
        if status.is_none() {
            match StatusBuffer::create(self) {
                Ok(created) => *status = Some(created),
                Err(e) => {
                    tracing::warn!("graph status readback unavailable ({e:?}): overflows will not be reported");
                    return None;
                }
            }
        }
        let status = status.as_mut()?;
        let slot = status.allocate_slot();
        Some(StatusTarget { slot, address: status.address(slot) })
    }
}

/// One command buffer as the device's map holds it: how it was allocated,
/// fixed from then on, and the state its recording changes.
///
/// The state has no lock. Vulkan has the application synchronise every
/// command that records into a command buffer, or begins, ends or resets
/// it, with every other use of the buffer and of its pool (the commands'
/// "Host Synchronization" lists), as drivers rely on too; the layer only
/// reaches the state from such commands, and reads its status slots at a
/// submission, where the buffer may not be recording (`ffi::lookup` says
/// how). A lock cost every hook an atomic read-modify-write, which waits
/// for the driver's command stores before it: 3-4 ns a call on the H200's
/// host. The pool and level, which a pool reset or destroy reads for every
/// buffer of the device, while others may be recording, are outside it.
#[derive(Default)]
pub(crate) struct CommandBufferEntry {
    pub pool: vk::CommandPool,
    /// Allocated at `VK_COMMAND_BUFFER_LEVEL_SECONDARY`: graph dispatches
    /// are not allowed in it (revision 2, "Dispatch a graph").
    pub secondary: bool,
    /// Reached only through `ffi::lookup`, under the rule above.
    pub state: SyncUnsafeCell<CommandBufferState>,
}

impl CommandBufferEntry {
    pub(crate) fn new(pool: vk::CommandPool, secondary: bool) -> Self {
        CommandBufferEntry { pool, secondary, state: SyncUnsafeCell::new(CommandBufferState::default()) }
    }
}

/// What recording a command buffer changes: whether a hook failed while
/// recording it, the status slot of each graph dispatch recorded, and the
/// [`Shadow`] of what is bound (to which it dereferences).
///
/// Aligned to 128 bytes, so that the fields every hook writes share no
/// cache line (nor the pair of lines x86 fetches together) with another
/// command buffer's: command buffers are often allocated on one thread,
/// side by side in one heap arena, and then recorded on many, where a
/// shared line would bounce between the recording cores on every call.
#[derive(Clone, Debug, Default, PartialEq)]
#[repr(align(128))]
pub(crate) struct CommandBufferState {
    /// A hook panicked while recording: `vkEndCommandBuffer` must fail.
    pub poisoned: bool,
    /// The status slot of each graph dispatch recorded.
    pub status_slots: Vec<StatusSlot>,
    /// Graph dispatches recorded since the buffer was begun: a later one
    /// starts with a barrier (see `graph::record::DispatchArgs::after_graph`).
    pub graphs_recorded: u32,
    /// What is bound, for the runtime's recording.
    pub shadow: Shadow,
    /// The pipeline layout of the last descriptor set binding with dynamic
    /// offsets and its dynamic descriptors per set (how to split the offsets):
    /// the next such binding usually names it again.
    pub last_layout: Option<(vk::PipelineLayout, Vec<u32>)>,
}

impl Deref for CommandBufferState {
    type Target = Shadow;
    fn deref(&self) -> &Shadow {
        &self.shadow
    }
}

impl DerefMut for CommandBufferState {
    fn deref_mut(&mut self) -> &mut Shadow {
        &mut self.shadow
    }
}

/// Where a recorded graph dispatch leaves its status, and what ran when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StatusSlot {
    pub slot: u32,
    pub graph: vk::Pipeline,
    /// The node slots dispatched at each level (named by `names` when a
    /// report needs them).
    pub levels: crate::graph::levels::Levels,
    /// What the fault record's numbers name (the graph's, shared).
    pub names: Arc<GraphNames>,
    /// Its timestamps, when the `profile` setting is on.
    pub profile: Option<crate::graph::profile::Slot>,
    /// Its counts per level and node, when the `statistics` setting is on.
    pub statistics: Option<crate::graph::statistics::Statistics>,
}

impl CommandBufferState {
    /// Back to the initial state (begin, reset, pool reset).
    pub(crate) fn reset(&mut self) {
        *self = CommandBufferState::default();
    }
}
