//! The seven `VK_AMDX_shader_enqueue` commands on emulated devices:
//! argument checks and conversion at the boundary, then the runtime in
//! [`crate::graph`]. Misuse is logged and answered with an error result, or
//! for commands with no result, by recording nothing.

use super::chain::find_in_chain;
use super::guard::{guard_command, guard_result};
use super::lookup::{device_of, with_command_buffer, with_entry, ValidCommandBuffer};
use super::pipelines::node_stage;
use super::{c_str, slice};
use crate::amdx;
use crate::device::{DeviceState, StatusSlot};
use crate::graph::driver::placeholder_pipeline;
use crate::graph::entry::{MAX_HOST_BYTES, MAX_HOST_RECORDS};
use crate::graph::pipeline::{create_graph, GraphPipeline, MetaPipelines};
use crate::graph::record::{self, DispatchArgs, EntryInput, IndirectSource, Recorded};
use crate::graph::scratch::ScratchTarget;
use crate::graph::status::StatusTarget;
use crate::state::command_buffer::Shadow;
use ash::vk;
use std::sync::Arc;

fn graph_of(state: &DeviceState, pipeline: vk::Pipeline, command: &str) -> Option<Arc<GraphPipeline>> {
    let graph = state.resources.lock().graphs.get(&pipeline).cloned();
    if graph.is_none() {
        tracing::error!("{command}: {pipeline:?} is not an execution graph pipeline of this device");
    }
    graph
}

/// The graph's create flags: with `VK_KHR_maintenance5`, a chained
/// `VkPipelineCreateFlags2CreateInfoKHR` replaces `flags` (every bit a
/// graph uses lies in the low 32).
///
/// # Safety
/// `info` must be a valid `VkExecutionGraphPipelineCreateInfoAMDX`.
unsafe fn graph_flags(info: &amdx::ExecutionGraphPipelineCreateInfo) -> vk::PipelineCreateFlags {
    // SAFETY: valid chain.
    match unsafe { find_in_chain::<vk::PipelineCreateFlags2CreateInfoKHR>(info.p_next) } {
        Some(f2) => vk::PipelineCreateFlags::from_raw(f2.flags.as_raw() as u32),
        None => info.flags,
    }
}

/// Answers a chained `VkPipelineCreationFeedbackCreateInfo`: the whole
/// creation's time, valid, and an application-cache hit when every kernel
/// was one; per stage of `pStages`, its kernel's (see `GraphPipeline`).
///
/// # Safety
/// `info` must be a valid create info; its feedback pointers writable.
unsafe fn write_feedback(
    info: &amdx::ExecutionGraphPipelineCreateInfo,
    elapsed: std::time::Duration,
    stages: &[vk::PipelineCreationFeedback],
) {
    // SAFETY: valid chain.
    let Some(fb) = (unsafe { find_in_chain::<vk::PipelineCreationFeedbackCreateInfo>(info.p_next) }) else { return };
    let hit = vk::PipelineCreationFeedbackFlags::APPLICATION_PIPELINE_CACHE_HIT;
    let mut flags = vk::PipelineCreationFeedbackFlags::VALID;
    if !stages.is_empty() && stages.iter().all(|s| s.flags.contains(hit)) {
        flags |= hit;
    }
    let duration = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
    // SAFETY: the application's output structure (valid usage: not null).
    if let Some(out) = unsafe { fb.p_pipeline_creation_feedback.as_mut() } {
        *out = vk::PipelineCreationFeedback { flags, duration };
    }
    let count = (fb.pipeline_stage_creation_feedback_count as usize).min(info.stage_count as usize);
    if !fb.p_pipeline_stage_creation_feedbacks.is_null() {
        for i in 0..count {
            let stage = stages.get(i).copied().unwrap_or_default();
            // SAFETY: the application's array of at least `count` elements.
            unsafe { *fb.p_pipeline_stage_creation_feedbacks.add(i) = stage };
        }
    }
}

/// Creates one graph from a create info.
///
/// # Safety
/// `info` must be a valid `VkExecutionGraphPipelineCreateInfoAMDX`.
unsafe fn create_one(
    state: &DeviceState,
    cache: vk::PipelineCache,
    info: &amdx::ExecutionGraphPipelineCreateInfo,
) -> Result<vk::Pipeline, vk::Result> {
    let started = std::time::Instant::now();
    // SAFETY: valid create info.
    let flags = unsafe { graph_flags(info) };
    let mut stages = Vec::new();
    // SAFETY: the create info's stage array.
    for (i, stage) in unsafe { slice(info.p_stages, info.stage_count) }.iter().enumerate() {
        if stage.stage.intersects(vk::ShaderStageFlags::MESH_EXT | vk::ShaderStageFlags::TASK_EXT) {
            tracing::error!(
                "vkCreateExecutionGraphPipelinesAMDX: stage {i} is a {:?} stage; mesh nodes join a graph as \
                 graphics pipelines in pLibraryInfo (VK_AMDX_shader_enqueue revision 2)",
                stage.stage
            );
            return Err(vk::Result::ERROR_INITIALIZATION_FAILED);
        }
        // SAFETY: a valid stage.
        match unsafe { node_stage(state, stage) } {
            Some(s) => stages.push(s),
            None => {
                tracing::error!(
                    "vkCreateExecutionGraphPipelinesAMDX: stage {i} is neither a node shader module nor inline SPIR-V"
                );
                return Err(vk::Result::ERROR_INITIALIZATION_FAILED);
            }
        }
    }
    // SAFETY: valid when non-null.
    if let Some(libraries) = unsafe { info.p_library_info.as_ref() } {
        // SAFETY: the library array.
        for library in unsafe { slice(libraries.p_libraries, libraries.library_count) } {
            let resources = state.resources.lock();
            if let Some(stage) = resources.node_libraries.get(library) {
                stages.push(stage.clone());
            } else if let Some(graph_stages) = resources.graph_libraries.get(library) {
                stages.extend(graph_stages.iter().cloned());
            } else {
                tracing::error!(
                    "vkCreateExecutionGraphPipelinesAMDX: library {library:?} is neither a compute pipeline created \
                     with the library and execution-graph flags nor an execution graph library"
                );
                return Err(vk::Result::ERROR_INITIALIZATION_FAILED);
            }
        }
    }
    // What every driver pipeline of the graph inherits: node kernels read the
    // application's descriptor buffers when the graph does.
    let kernel_flags = flags & vk::PipelineCreateFlags::DESCRIPTOR_BUFFER_EXT;
    if flags.contains(vk::PipelineCreateFlags::LIBRARY_KHR) {
        // A library is linked only where it is used: keep its stages.
        let handle = placeholder_pipeline(state, cache, info.layout, kernel_flags).map_err(|e| {
            tracing::error!("vkCreateExecutionGraphPipelinesAMDX: {e}");
            e.result()
        })?;
        tracing::debug!("execution graph library {handle:?}: {} node stages", stages.len());
        state.resources.lock().graph_libraries.insert(handle, stages);
        let valid = vk::PipelineCreationFeedback { flags: vk::PipelineCreationFeedbackFlags::VALID, duration: 0 };
        // SAFETY: valid create info.
        unsafe { write_feedback(info, started.elapsed(), &vec![valid; info.stage_count as usize]) };
        return Ok(handle);
    }
    let meta = state.meta_pipelines().map_err(|e| {
        tracing::error!("vkCreateExecutionGraphPipelinesAMDX: meta pipelines: {e}");
        e.result()
    })?;
    drop(meta);
    let layout_info = state.pipeline_layout(info.layout);
    let graph = create_graph(state, cache, &stages, info.layout, &layout_info, kernel_flags).map_err(|e| {
        tracing::error!("vkCreateExecutionGraphPipelinesAMDX: {e}");
        e.result()
    })?;
    let handle = graph.handle;
    // SAFETY: valid create info.
    unsafe { write_feedback(info, started.elapsed(), &graph.stage_feedback) };
    tracing::debug!("execution graph {handle:?}: {} nodes", graph.nodes.len());
    state.resources.lock().graphs.insert(handle, Arc::new(graph));
    Ok(handle)
}

pub(super) unsafe extern "system" fn create_execution_graph_pipelines(
    device: vk::Device,
    cache: vk::PipelineCache,
    count: u32,
    infos: *const amdx::ExecutionGraphPipelineCreateInfo,
    _allocator: *const vk::AllocationCallbacks<'static>,
    pipelines: *mut vk::Pipeline,
) -> vk::Result {
    guard_result("vkCreateExecutionGraphPipelinesAMDX", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        if pipelines.is_null() || (infos.is_null() && count > 0) {
            tracing::error!("vkCreateExecutionGraphPipelinesAMDX: null pCreateInfos or pPipelines");
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: the application's arrays of `count` elements.
        let (infos, out) = unsafe { (slice(infos, count), std::slice::from_raw_parts_mut(pipelines, count as usize)) };
        super::create_each(
            infos,
            out,
            // SAFETY: each create info is valid.
            |info| unsafe { graph_flags(info) },
            // SAFETY: each create info is valid.
            |info| unsafe { create_one(&state, cache, info) },
        )
    })
}

pub(super) unsafe extern "system" fn get_scratch_size(
    device: vk::Device,
    graph: vk::Pipeline,
    size: *mut amdx::ExecutionGraphPipelineScratchSize,
) -> vk::Result {
    guard_result("vkGetExecutionGraphPipelineScratchSizeAMDX", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        let Some(graph) = graph_of(&state, graph, "vkGetExecutionGraphPipelineScratchSizeAMDX") else {
            return vk::Result::ERROR_UNKNOWN;
        };
        // SAFETY: the application's output structure.
        let Some(out) = (unsafe { size.as_mut() }) else {
            tracing::error!("vkGetExecutionGraphPipelineScratchSizeAMDX: null pSizeInfo");
            return vk::Result::ERROR_UNKNOWN;
        };
        (out.min_size, out.max_size, out.size_granularity) = graph.fixed.sizes();
        vk::Result::SUCCESS
    })
}

pub(super) unsafe extern "system" fn get_node_index(
    device: vk::Device,
    graph: vk::Pipeline,
    node: *const amdx::PipelineShaderStageNodeCreateInfo,
    index: *mut u32,
) -> vk::Result {
    guard_result("vkGetExecutionGraphPipelineNodeIndexAMDX", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        let Some(graph) = graph_of(&state, graph, "vkGetExecutionGraphPipelineNodeIndexAMDX") else {
            return vk::Result::ERROR_UNKNOWN;
        };
        // SAFETY: valid structure when non-null.
        let node = unsafe { node.as_ref() };
        // SAFETY: a valid name when non-null.
        let name = node.and_then(|n| unsafe { c_str(n.p_name) });
        let (Some(node), Some(name), false) = (node, name, index.is_null()) else {
            tracing::error!("vkGetExecutionGraphPipelineNodeIndexAMDX: null pNodeInfo, pNodeInfo->pName or pNodeIndex");
            return vk::Result::ERROR_UNKNOWN;
        };
        let wanted = if node.index == amdx::SHADER_INDEX_UNUSED { 0 } else { node.index };
        let name = name.to_string_lossy();
        match graph.graph.find(&name, wanted) {
            Some(position) => {
                // SAFETY: non-null output pointer.
                unsafe { *index = position as u32 };
                vk::Result::SUCCESS
            }
            None => {
                tracing::error!("vkGetExecutionGraphPipelineNodeIndexAMDX: graph has no node (\"{name}\", {wanted})");
                vk::Result::ERROR_UNKNOWN
            }
        }
    })
}

pub(super) unsafe extern "system" fn cmd_initialize_scratch(
    cb: vk::CommandBuffer,
    graph: vk::Pipeline,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdInitializeGraphScratchMemoryAMDX", valid, || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return };
        let Some(graph) = graph_of(&state, graph, "vkCmdInitializeGraphScratchMemoryAMDX") else { return };
        let Some(target) = state.scratch_target(scratch, scratch_size) else {
            tracing::error!(
                "vkCmdInitializeGraphScratchMemoryAMDX: [{scratch:#x}, +{scratch_size}) is not inside a buffer created \
                 with VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX"
            );
            return;
        };
        if let Err(e) = record::initialize(&state, cb, &graph, target) {
            tracing::error!("vkCmdInitializeGraphScratchMemoryAMDX: {e}; nothing recorded");
        }
    })
}

/// Reads the host infos of `vkCmdDispatchGraphAMDX` into entry inputs that
/// borrow the application's payloads, after checking every count against
/// what a host dispatch may give (`MAX_HOST_RECORDS`, `MAX_HOST_BYTES`,
/// with no arithmetic that can wrap), so that hostile counts cost neither
/// memory nor time.
///
/// # Safety
/// `count_info` must follow the command's valid usage (host addresses,
/// which stay valid while the command is recorded).
unsafe fn host_inputs<'a>(
    graph: &GraphPipeline,
    count_info: &'a amdx::DispatchGraphCountInfo,
) -> Result<Vec<EntryInput<'a>>, String> {
    // SAFETY: host address of `count` infos at `stride` (caller's contract).
    let infos = unsafe { count_info.infos.host_address }.cast::<u8>();
    if infos.is_null() && count_info.count > 0 {
        return Err("infos.hostAddress is null".into());
    }
    if u64::from(count_info.count) > MAX_HOST_RECORDS {
        return Err(format!(
            "{} infos, more than the {MAX_HOST_RECORDS} records a host dispatch may give",
            count_info.count
        ));
    }
    let read_info = |i: usize| -> amdx::DispatchGraphInfo {
        // SAFETY: as above; read unaligned in case of an odd stride.
        unsafe { std::ptr::read_unaligned(infos.add(i * count_info.stride as usize).cast::<amdx::DispatchGraphInfo>()) }
    };
    let (mut records, mut bytes) = (0u64, 0u64);
    for i in 0..count_info.count as usize {
        let info = read_info(i);
        let stride = graph.schedules.get(info.node_index as usize).map_or(0, |s| u64::from(s.input_stride));
        records += u64::from(info.payload_count);
        // At most 2^32 payloads of at most 2^32 bytes: no wrap in u64.
        bytes = bytes.saturating_add(u64::from(info.payload_count) * stride);
        if records > MAX_HOST_RECORDS || bytes > MAX_HOST_BYTES {
            return Err(format!(
                "info {i}: {records} records of {bytes} payload bytes so far, more than a host dispatch may give \
                 ({MAX_HOST_RECORDS} records, {MAX_HOST_BYTES} bytes)"
            ));
        }
    }
    let mut inputs = Vec::new();
    for i in 0..count_info.count as usize {
        let info = read_info(i);
        let slot = info.node_index as usize;
        let Some(node) = graph.graph.nodes.get(slot) else {
            return Err(format!("info {i}: nodeIndex {} is not a node of the graph", info.node_index));
        };
        if !node.decl.info.is_api_entry {
            return Err(format!("info {i}: node \"{}\" is declared IsApiEntryAMDX false", node.decl.name));
        }
        let size = node.decl.info.input.as_ref().map_or(0, |p| p.size as usize);
        let count = info.payload_count as usize;
        let stride = info.payload_stride as usize;
        // SAFETY: host address of `payloadCount` payloads at `payloadStride`.
        let at = unsafe { info.payloads.host_address }.cast::<u8>();
        let payloads: &'a [u8] = if size == 0 || count == 0 {
            &[]
        } else if at.is_null() {
            return Err(format!("info {i}: payloads.hostAddress is null"));
        } else {
            // SAFETY: `count` payloads of at least the node's input size,
            // `stride` bytes apart (the command's valid usage).
            unsafe { std::slice::from_raw_parts(at, (count - 1) * stride + size) }
        };
        inputs.push(EntryInput { slot, count: info.payload_count, payloads, stride });
    }
    Ok(inputs)
}

/// What every graph dispatch command needs, or `None` after logging why
/// nothing can be recorded.
struct DispatchContext {
    state: Arc<DeviceState>,
    /// What the command buffer has bound (a copy: see [`dispatch_context`]).
    shadow: Shadow,
    /// A graph dispatch was recorded in the command buffer before this one.
    after_graph: bool,
    graph: Arc<GraphPipeline>,
    target: ScratchTarget,
    meta: Arc<MetaPipelines>,
}

impl DispatchContext {
    fn args(&self, cb: vk::CommandBuffer, status: Option<StatusTarget>) -> DispatchArgs<'_> {
        DispatchArgs {
            device: &self.state,
            cb,
            cb_state: &self.shadow,
            graph: &self.graph,
            meta: &self.meta,
            target: self.target,
            status,
            after_graph: self.after_graph,
        }
    }

    /// Counts the dispatch in the command buffer and notes its status slot
    /// there, so that its submissions are checked at the next host
    /// synchronisation point.
    fn remember(&self, cb: ValidCommandBuffer, status: Option<StatusTarget>, recorded: Recorded) {
        let entry = status.map(|StatusTarget { slot, .. }| StatusSlot {
            slot,
            graph: self.graph.handle,
            levels: recorded.levels,
            names: self.graph.names.clone(),
            profile: recorded.profile,
            statistics: recorded.statistics,
        });
        // One look-up of the command buffer's state for both.
        // SAFETY: the dispatch command's own command buffer.
        unsafe {
            with_command_buffer(&self.state, cb.handle(), |s| {
                s.graphs_recorded += 1;
                s.status_slots.extend(entry);
            })
        };
    }
}

fn dispatch_context(
    name: &str,
    valid: ValidCommandBuffer,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
) -> Option<DispatchContext> {
    let cb = valid.handle();
    // SAFETY: a valid command buffer.
    let state = unsafe { device_of(cb) }?;
    let entry = state.command_buffer(cb);
    if entry.secondary {
        tracing::error!(
            "{name}: {cb:?} is a secondary command buffer; graph dispatches are only allowed in primary \
             command buffers (VK_AMDX_shader_enqueue revision 2); nothing recorded"
        );
        return None;
    }
    // The shadow alone: the status slots of the dispatches recorded before
    // grow with every one of them.
    // SAFETY: the dispatch command's own command buffer.
    let (mut shadow, after_graph) = unsafe { with_entry(&entry, |s| (s.shadow.clone(), s.graphs_recorded > 0)) };
    // The copy's graph bind point gets its mirrored pushes; the command
    // buffer's own state keeps them mirrored for its next pushes.
    shadow.settle();
    let graph = graph_of(&state, shadow.graph.pipeline, name)?;
    if graph.has_mesh_nodes() {
        let why = match (&shadow.rendering, &shadow.render_pass) {
            (None, None) => Some("outside a render pass instance"),
            (Some(r), _) if r.flags.contains(vk::RenderingFlags::SUSPENDING) => {
                Some("inside a rendering instance begun with VK_RENDERING_SUSPENDING_BIT")
            }
            (None, Some(p)) if p.resume[0] == vk::RenderPass::null() => {
                Some("inside a render pass of several subpasses (it cannot be suspended in its middle)")
            }
            _ => None,
        };
        if let Some(why) = why {
            tracing::error!(
                "{name}: graph {:?} has mesh nodes and is dispatched {why}; the layer draws mesh nodes by \
                 suspending and resuming a dynamic rendering instance or a render pass of one subpass; \
                 nothing recorded",
                graph.handle
            );
            return None;
        }
    }
    let Some(target) = state.scratch_target(scratch, scratch_size) else {
        tracing::error!(
            "{name}: scratch [{scratch:#x}, +{scratch_size}) is not inside a buffer created with \
             VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX; nothing recorded"
        );
        return None;
    };
    let meta = state.meta_pipelines().map_err(|e| tracing::error!("{name}: {e}; nothing recorded")).ok()?;
    Some(DispatchContext { state, shadow, after_graph, graph, target, meta })
}

pub(super) unsafe extern "system" fn cmd_dispatch_graph(
    cb: vk::CommandBuffer,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
    count_info: *const amdx::DispatchGraphCountInfo,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdDispatchGraphAMDX", valid, || {
        const NAME: &str = "vkCmdDispatchGraphAMDX";
        let Some(cx) = dispatch_context(NAME, valid, scratch, scratch_size) else { return };
        // SAFETY: valid when non-null.
        let Some(count_info) = (unsafe { count_info.as_ref() }) else {
            tracing::error!("{NAME}: pCountInfo is null; nothing recorded");
            return;
        };
        if cx.graph.fixed.dynamic(cx.target.size).is_none() {
            let min = cx.graph.fixed.sizes().0;
            tracing::error!(
                "{NAME}: scratch size {} is below the graph's minSize {min}; nothing recorded",
                cx.target.size
            );
            return;
        }
        // SAFETY: host infos (the command's valid usage).
        let inputs = match unsafe { host_inputs(&cx.graph, count_info) } {
            Ok(inputs) => inputs,
            Err(e) => {
                tracing::error!("{NAME}: {e}; nothing recorded");
                return;
            }
        };
        let status = cx.state.reserve_status_slot();
        match record::dispatch(&cx.args(cb, status), &inputs) {
            Ok(recorded) => cx.remember(valid, status, recorded),
            Err(e) => tracing::error!("{NAME}: {e}; nothing recorded"),
        }
    })
}

/// Records an indirect dispatch, logging failures.
fn record_indirect(name: &str, valid: ValidCommandBuffer, cx: DispatchContext, source: IndirectSource) {
    let cb = valid.handle();
    let status = cx.state.reserve_status_slot();
    match record::dispatch_indirect(&cx.args(cb, status), source) {
        Ok(recorded) => cx.remember(valid, status, recorded),
        Err(e) => tracing::error!("{name}: {e}; nothing recorded"),
    }
}

pub(super) unsafe extern "system" fn cmd_dispatch_graph_indirect(
    cb: vk::CommandBuffer,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
    count_info: *const amdx::DispatchGraphCountInfo,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdDispatchGraphIndirectAMDX", valid, || {
        const NAME: &str = "vkCmdDispatchGraphIndirectAMDX";
        let Some(cx) = dispatch_context(NAME, valid, scratch, scratch_size) else { return };
        // SAFETY: valid when non-null.
        let Some(count_info) = (unsafe { count_info.as_ref() }) else {
            tracing::error!("{NAME}: pCountInfo is null; nothing recorded");
            return;
        };
        // SAFETY: for this command `infos` is a device address.
        let infos = unsafe { count_info.infos.device_address };
        if infos == 0 && count_info.count > 0 {
            tracing::error!("{NAME}: infos.deviceAddress is 0; nothing recorded");
            return;
        }
        let source = IndirectSource::HostCount { count: count_info.count, infos, stride: count_info.stride };
        record_indirect(NAME, valid, cx, source);
    })
}

pub(super) unsafe extern "system" fn cmd_dispatch_graph_indirect_count(
    cb: vk::CommandBuffer,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
    count_info: vk::DeviceAddress,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdDispatchGraphIndirectCountAMDX", valid, || {
        const NAME: &str = "vkCmdDispatchGraphIndirectCountAMDX";
        let Some(cx) = dispatch_context(NAME, valid, scratch, scratch_size) else { return };
        if count_info == 0 || count_info % 4 != 0 {
            tracing::error!(
                "{NAME}: countInfo address {count_info:#x} is null or not 4-byte aligned; nothing recorded"
            );
            return;
        }
        record_indirect(NAME, valid, cx, IndirectSource::DeviceCount { count_info });
    })
}
