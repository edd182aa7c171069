//! Pipelines on emulated devices: compute pipelines created as
//! execution-graph libraries (a placeholder driver pipeline, the node stage
//! kept for linking), graphics pipelines that are mesh nodes, and the
//! destruction of pipelines, graphs and mesh nodes.

use super::chain::{find_in_chain, OwnedChain};
use super::guard::{guard_result, guard_value};
use super::lookup::device_of;
use super::{c_str, slice};
use crate::amdx;
use crate::device::DeviceState;
use crate::graph::mesh::{create_mesh_node, MeshCreateInfo};
use crate::graph::stage::NodeStage;
use crate::spirv_scan::{declares_shader_enqueue, PLACEHOLDER_ENTRY_POINT, PLACEHOLDER_KERNEL};
use ash::vk::{self, TaggedStructure};
use std::sync::Arc;

/// The device's placeholder shader module, created on first use.
fn placeholder_module(state: &DeviceState) -> Result<vk::ShaderModule, vk::Result> {
    let mut resources = state.resources.lock();
    if let Some(module) = resources.placeholder_module {
        return Ok(module);
    }
    let info = vk::ShaderModuleCreateInfo::default().code(&PLACEHOLDER_KERNEL);
    let mut module = vk::ShaderModule::null();
    // SAFETY: valid device and create info.
    let result = unsafe {
        (state.dispatch.fp.fp_v1_0().create_shader_module)(state.handle(), &info, std::ptr::null(), &mut module)
    };
    if result != vk::Result::SUCCESS {
        return Err(result);
    }
    resources.placeholder_module = Some(module);
    Ok(module)
}

/// Deep copy of a node stage of a library pipeline.
///
/// # Safety
/// `stage` must be a valid stage create info.
pub(super) unsafe fn node_stage(
    state: &DeviceState,
    stage: &vk::PipelineShaderStageCreateInfo<'_>,
) -> Option<NodeStage> {
    let words: Arc<[u32]> = if stage.module != vk::ShaderModule::null() {
        state.resources.lock().node_modules.get(&stage.module).cloned()?
    } else {
        // Inline code (maintenance5 / graphics pipeline library style).
        // SAFETY: valid chain.
        let inline = unsafe { find_in_chain::<vk::ShaderModuleCreateInfo>(stage.p_next) }?;
        // SAFETY: `code_size` bytes of code.
        Arc::from(unsafe { slice(inline.p_code, (inline.code_size / 4) as u32) })
    };
    // SAFETY: valid strings and chain.
    let entry_point = unsafe { c_str(stage.p_name) }?.to_string_lossy().into_owned();
    // SAFETY: valid chain.
    let node = unsafe { find_in_chain::<NodeInfoTag>(stage.p_next) }.map(|n| &n.0);
    // SAFETY: valid name when non-null.
    let node_name = node.and_then(|n| unsafe { c_str(n.p_name) }).map(|n| n.to_string_lossy().into_owned());
    let node_index = node.map_or(amdx::SHADER_INDEX_UNUSED, |n| n.index);
    // SAFETY: valid specialization info when non-null.
    let specialization = match unsafe { stage.p_specialization_info.as_ref() } {
        None => Vec::new(),
        Some(spec) => {
            // SAFETY: `data_size` bytes of data and `map_entry_count` entries.
            let (data, entries) = unsafe {
                (
                    slice(spec.p_data.cast::<u8>(), spec.data_size as u32),
                    slice(spec.p_map_entries, spec.map_entry_count),
                )
            };
            entries
                .iter()
                .filter_map(|e| {
                    let bytes = data.get(e.offset as usize..e.offset as usize + e.size)?;
                    Some((e.constant_id, bytes.to_vec()))
                })
                .collect()
        }
    };
    Some(NodeStage { words, entry_point, node_name, node_index, specialization, mesh: None })
}

/// Lets [`find_in_chain`] find the AMDX node create info.
#[repr(transparent)]
struct NodeInfoTag(amdx::PipelineShaderStageNodeCreateInfo);
// SAFETY: transparent over a structure whose first member is this sType.
unsafe impl TaggedStructure for NodeInfoTag {
    const STRUCTURE_TYPE: vk::StructureType = amdx::STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO;
}

/// Creates one compute pipeline: an execution-graph library stage becomes a
/// placeholder driver pipeline plus the kept stage; anything else goes to the
/// driver with `VkPipelineCreateFlags2CreateInfoKHR` translated if needed.
///
/// # Safety
/// `info` must be a valid compute pipeline create info.
unsafe fn create_one_compute_pipeline(
    state: &DeviceState,
    cache: vk::PipelineCache,
    info: &vk::ComputePipelineCreateInfo<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
) -> Result<vk::Pipeline, vk::Result> {
    // SAFETY: valid chain.
    let flags2 =
        unsafe { find_in_chain::<vk::PipelineCreateFlags2CreateInfoKHR>(info.p_next) }.map(|f| f.flags.as_raw());
    let mut copy = *info;
    // SAFETY: valid chain.
    let mut chain = unsafe { OwnedChain::copy_from(info.p_next) };
    let graph_stage = flags2.is_some_and(|f| f & amdx::PIPELINE_CREATE_2_EXECUTION_GRAPH != 0);
    if let Some(flags2) = flags2 {
        if graph_stage || !state.physical.has_maintenance5 {
            chain.remove(vk::StructureType::PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR);
            let low = flags2 & !(amdx::PIPELINE_CREATE_2_EXECUTION_GRAPH | amdx::PIPELINE_CREATE_2_LIBRARY);
            copy.flags = vk::PipelineCreateFlags::from_raw(low as u32);
        }
    }
    let kept = if graph_stage {
        // SAFETY: valid stage.
        let Some(stage) = (unsafe { node_stage(state, &info.stage) }) else {
            tracing::error!(
                "vkCreateComputePipelines: execution-graph library stage {:?} is neither a node shader module \
                 (one declaring ShaderEnqueueAMDX) nor inline SPIR-V",
                info.stage.module
            );
            return Err(vk::Result::ERROR_INITIALIZATION_FAILED);
        };
        copy.stage.module = placeholder_module(state)?;
        copy.stage.p_name = PLACEHOLDER_ENTRY_POINT.as_ptr();
        copy.stage.p_specialization_info = std::ptr::null();
        copy.stage.p_next = std::ptr::null();
        Some(stage)
    } else {
        None
    };
    copy.p_next = chain.link();
    let mut pipeline = vk::Pipeline::null();
    // SAFETY: `copy` and its chain live across the call.
    let result = unsafe {
        (state.dispatch.fp.fp_v1_0().create_compute_pipelines)(
            state.handle(),
            cache,
            1,
            &copy,
            allocator,
            &mut pipeline,
        )
    };
    if result != vk::Result::SUCCESS {
        return Err(result);
    }
    if let Some(stage) = kept {
        tracing::debug!("kept execution-graph library stage {:?} as {pipeline:?}", stage.entry_point);
        state.resources.lock().node_libraries.insert(pipeline, stage);
    }
    Ok(pipeline)
}

pub(super) unsafe extern "system" fn create_compute_pipelines(
    device: vk::Device,
    cache: vk::PipelineCache,
    count: u32,
    create_infos: *const vk::ComputePipelineCreateInfo<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
    pipelines: *mut vk::Pipeline,
) -> vk::Result {
    guard_result("vkCreateComputePipelines", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: the application's array.
        let infos = unsafe { slice(create_infos, count) };
        // SAFETY: valid chains.
        let needs_layer =
            infos.iter().any(|i| unsafe { find_in_chain::<vk::PipelineCreateFlags2CreateInfoKHR>(i.p_next) }.is_some());
        if !needs_layer {
            // SAFETY: forwarding.
            return unsafe {
                (state.dispatch.fp.fp_v1_0().create_compute_pipelines)(
                    device,
                    cache,
                    count,
                    create_infos,
                    allocator,
                    pipelines,
                )
            };
        }
        // SAFETY: the application's output array of `count` handles.
        let out = unsafe { std::slice::from_raw_parts_mut(pipelines, count as usize) };
        super::create_each(
            infos,
            out,
            |info| info.flags,
            |info| {
                // SAFETY: each create info is valid.
                unsafe { create_one_compute_pipeline(&state, cache, info, allocator) }
            },
        )
    })
}

/// Whether a graphics pipeline create info asks for a mesh node: its flags
/// carry `VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX`, or a stage is a
/// node shader (a module the layer kept, or inline SPIR-V declaring
/// `ShaderEnqueueAMDX`).
///
/// # Safety
/// `info` must be a valid graphics pipeline create info.
unsafe fn is_mesh_node_request(state: &DeviceState, info: &vk::GraphicsPipelineCreateInfo<'static>) -> bool {
    // SAFETY: valid chain.
    let flags2 = unsafe { find_in_chain::<vk::PipelineCreateFlags2CreateInfoKHR>(info.p_next) };
    if flags2.is_some_and(|f| f.flags.as_raw() & amdx::PIPELINE_CREATE_2_EXECUTION_GRAPH != 0) {
        return true;
    }
    // SAFETY: the create info's stage array.
    unsafe { slice(info.p_stages, info.stage_count) }.iter().any(|stage| {
        let kept =
            stage.module != vk::ShaderModule::null() && state.resources.lock().node_modules.contains_key(&stage.module);
        // SAFETY: valid chain.
        kept || unsafe { find_in_chain::<vk::ShaderModuleCreateInfo>(stage.p_next) }.is_some_and(|m| {
            // SAFETY: `code_size` bytes of code.
            declares_shader_enqueue(unsafe { slice(m.p_code, (m.code_size / 4) as u32) })
        })
    })
}

/// Creates a mesh node from a graphics pipeline create info (see
/// `graph::mesh`): its mesh stage is kept as a node stage whose driver
/// pipeline is made at once, and the library bits leave the flags the
/// driver sees.
///
/// # Safety
/// `info` must be a valid graphics pipeline create info.
unsafe fn create_one_mesh_node(
    state: &DeviceState,
    cache: vk::PipelineCache,
    info: &vk::GraphicsPipelineCreateInfo<'static>,
) -> Result<vk::Pipeline, vk::Result> {
    let refuse = |why: String| {
        tracing::error!("vkCreateGraphicsPipelines: mesh node: {why}");
        Err(vk::Result::ERROR_INITIALIZATION_FAILED)
    };
    if !state.mesh_enqueue {
        return refuse("the device was created without shaderMeshEnqueue".into());
    }
    // SAFETY: the create info's stage array.
    let stages = unsafe { slice(info.p_stages, info.stage_count) };
    if let Some(k) =
        stages.iter().position(|s| !s.stage.intersects(vk::ShaderStageFlags::MESH_EXT | vk::ShaderStageFlags::FRAGMENT))
    {
        return refuse(format!(
            "stage {k} is a {:?} shader; a mesh node is a mesh shader (and a fragment shader), without task or \
             vertex shaders (VK_AMDX_shader_enqueue revision 2)",
            stages[k].stage
        ));
    }
    let Some(mesh_index) = stages.iter().position(|s| s.stage == vk::ShaderStageFlags::MESH_EXT) else {
        return refuse("no mesh stage".into());
    };
    // SAFETY: a valid stage.
    let Some(mut stage) = (unsafe { node_stage(state, &stages[mesh_index]) }) else {
        return refuse(format!("mesh stage {mesh_index} is neither a node shader module nor inline SPIR-V"));
    };
    // SAFETY: valid chain.
    let libraries = unsafe { find_in_chain::<vk::PipelineLibraryCreateInfoKHR>(info.p_next) };
    if libraries.is_some_and(|l| l.library_count > 0) {
        return refuse("mesh nodes linked from graphics pipeline libraries are not supported".into());
    }
    // SAFETY: valid chain.
    let flags2 =
        unsafe { find_in_chain::<vk::PipelineCreateFlags2CreateInfoKHR>(info.p_next) }.map_or(0, |f| f.flags.as_raw());
    let mut copy = *info;
    // SAFETY: valid chain.
    let mut chain = unsafe { OwnedChain::copy_from(info.p_next) };
    chain.remove(vk::StructureType::PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR);
    let library_bits = amdx::PIPELINE_CREATE_2_EXECUTION_GRAPH | amdx::PIPELINE_CREATE_2_LIBRARY;
    let flags = (u64::from(info.flags.as_raw()) | flags2) & !library_bits;
    copy.flags = vk::PipelineCreateFlags::from_raw(flags as u32);
    copy.p_next = chain.link();
    let layout_info = state.pipeline_layout(copy.layout);
    // SAFETY: the create info's dynamic state info, when given.
    let dynamic = unsafe { info.p_dynamic_state.as_ref() };
    let dynamic_states = match dynamic.filter(|d| !d.p_dynamic_states.is_null()) {
        // SAFETY: `dynamic_state_count` states.
        Some(d) => unsafe { slice(d.p_dynamic_states, d.dynamic_state_count) }.to_vec(),
        None => Vec::new(),
    };
    let create = MeshCreateInfo { info: &copy, stages, dynamic_states };
    match create_mesh_node(state, cache, create, &layout_info, mesh_index, &stage) {
        Ok(mesh) => {
            let pipeline = mesh.pipeline;
            tracing::debug!("mesh node {:?} kept as {pipeline:?}", stage.entry_point);
            stage.mesh = Some(Arc::new(mesh));
            state.resources.lock().node_libraries.insert(pipeline, stage);
            Ok(pipeline)
        }
        Err(e) => {
            tracing::error!("vkCreateGraphicsPipelines: mesh node \"{}\": {e}", stage.entry_point);
            Err(e.result())
        }
    }
}

/// Graphics pipelines pass through, except mesh nodes (a stage that is a
/// node shader, or the execution-graph flag), which become mesh node
/// libraries (see [`create_one_mesh_node`]).
pub(super) unsafe extern "system" fn create_graphics_pipelines(
    device: vk::Device,
    cache: vk::PipelineCache,
    count: u32,
    create_infos: *const vk::GraphicsPipelineCreateInfo<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
    pipelines: *mut vk::Pipeline,
) -> vk::Result {
    guard_result("vkCreateGraphicsPipelines", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: the application's array.
        let infos = unsafe { slice(create_infos, count) };
        // SAFETY: valid create infos.
        let any_node = infos.iter().any(|i| unsafe { is_mesh_node_request(&state, i) });
        let forward = |info: *const vk::GraphicsPipelineCreateInfo<'static>, n: u32, out: *mut vk::Pipeline| {
            // SAFETY: forwarding the application's valid arguments.
            unsafe { (state.dispatch.fp.fp_v1_0().create_graphics_pipelines)(device, cache, n, info, allocator, out) }
        };
        if !any_node {
            return forward(create_infos, count, pipelines);
        }
        // SAFETY: the application's output array of `count` handles.
        let out = unsafe { std::slice::from_raw_parts_mut(pipelines, count as usize) };
        super::create_each(
            infos,
            out,
            |info| info.flags,
            |info| {
                // SAFETY: valid create info.
                if unsafe { is_mesh_node_request(&state, info) } {
                    // SAFETY: valid create info.
                    return unsafe { create_one_mesh_node(&state, cache, info) };
                }
                let mut pipeline = vk::Pipeline::null();
                match forward(info, 1, &mut pipeline) {
                    vk::Result::SUCCESS => Ok(pipeline),
                    error => Err(error),
                }
            },
        )
    })
}

pub(super) unsafe extern "system" fn destroy_pipeline(
    device: vk::Device,
    pipeline: vk::Pipeline,
    allocator: *const vk::AllocationCallbacks<'static>,
) {
    guard_value("vkDestroyPipeline", (), || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return };
        let (graph, library) = {
            let mut resources = state.resources.lock();
            let library = resources.node_libraries.remove(&pipeline);
            resources.graph_libraries.remove(&pipeline);
            (resources.graphs.remove(&pipeline), library)
        };
        if let Some(graph) = graph {
            // The graph's objects include the handle the application held.
            graph.destroy(&state);
            drop(graph);
            destroy_unused_meshes(&state);
            return;
        }
        if let Some(mesh) = library.and_then(|l| l.mesh) {
            // The handle is the mesh node's driver pipeline, which graphs
            // created from it go on drawing.
            state.resources.lock().retired_meshes.push(mesh);
            destroy_unused_meshes(&state);
            return;
        }
        // SAFETY: forwarding.
        unsafe { (state.dispatch.fp.fp_v1_0().destroy_pipeline)(device, pipeline, allocator) }
    })
}

/// Destroys the mesh nodes the application destroyed that no graph uses any more.
pub(super) fn destroy_unused_meshes(state: &DeviceState) {
    let free = state.resources.lock().sweep_meshes();
    for mesh in free {
        mesh.destroy(state);
    }
}
