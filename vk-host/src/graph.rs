//! Execution graphs as an application drives them, through
//! [`vk_amdx::Commands`]: `vkCreateExecutionGraphPipelinesAMDX` from stages
//! with node overrides, the scratch-size and node-index queries, and the
//! recording of a dispatch of host-side payloads.

use std::ffi::{c_void, CStr};

use ash::vk;
use vk_amdx::{Commands, ExecutionGraphPipelineScratchSize};

use crate::{vk_err, Result};

/// One node stage of a graph pipeline.
#[derive(Debug, Clone, Copy)]
pub struct GraphStage<'a> {
    pub module: vk::ShaderModule,
    /// The entry point (also the node name unless `node_name` renames it).
    pub entry: &'a CStr,
    /// `VkPipelineShaderStageNodeCreateInfoAMDX::pName` (null when `None`).
    pub node_name: Option<&'a CStr>,
    /// `VkPipelineShaderStageNodeCreateInfoAMDX::index`; `SHADER_INDEX_UNUSED` keeps the shader's.
    pub node_index: u32,
    pub specialization: Option<&'a vk::SpecializationInfo<'a>>,
}

/// One `vkCreateExecutionGraphPipelinesAMDX` call with a create info per
/// entry of `graphs` (its stages, `layout`); the caller owns the pipelines
/// returned, null where creation failed.
pub fn create_graphs(
    fns: &Commands,
    d: &ash::Device,
    cache: vk::PipelineCache,
    layout: vk::PipelineLayout,
    graphs: &[&[GraphStage<'_>]],
) -> (vk::Result, Vec<vk::Pipeline>) {
    let all: Vec<&GraphStage<'_>> = graphs.iter().flat_map(|g| g.iter()).collect();
    let nodes: Vec<vk::PipelineShaderStageNodeCreateInfoAMDX<'_>> = all
        .iter()
        .map(|s| {
            let mut node = vk::PipelineShaderStageNodeCreateInfoAMDX::default().index(s.node_index);
            node.p_name = s.node_name.map_or(std::ptr::null(), CStr::as_ptr);
            node
        })
        .collect();
    let stages: Vec<vk::PipelineShaderStageCreateInfo<'_>> = all
        .iter()
        .zip(&nodes)
        .map(|(s, node)| {
            let mut stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(s.module)
                .name(s.entry);
            if let Some(spec) = s.specialization {
                stage = stage.specialization_info(spec);
            }
            stage.p_next = (node as *const vk::PipelineShaderStageNodeCreateInfoAMDX<'_>).cast::<c_void>();
            stage
        })
        .collect();
    let mut first = 0;
    let infos: Vec<vk::ExecutionGraphPipelineCreateInfoAMDX<'_>> = graphs
        .iter()
        .map(|g| {
            let info = vk::ExecutionGraphPipelineCreateInfoAMDX::default()
                .stages(&stages[first..first + g.len()])
                .layout(layout);
            first += g.len();
            info
        })
        .collect();
    let mut pipelines = vec![vk::Pipeline::null(); infos.len()];
    // SAFETY: valid create infos whose arrays live across the call; one output each.
    let result = unsafe {
        (fns.create)(d.handle(), cache, infos.len() as u32, infos.as_ptr(), std::ptr::null(), pipelines.as_mut_ptr())
    };
    (result, pipelines)
}

/// `vkGetExecutionGraphPipelineScratchSizeAMDX` (revision 2) of `graph`.
pub fn scratch_size(fns: &Commands, d: &ash::Device, graph: vk::Pipeline) -> Result<ExecutionGraphPipelineScratchSize> {
    let mut size = ExecutionGraphPipelineScratchSize::default();
    // SAFETY: valid device and output structure.
    let result = unsafe { (fns.scratch_size)(d.handle(), graph, &mut size) };
    result.result().map_err(vk_err("vkGetExecutionGraphPipelineScratchSizeAMDX"))?;
    Ok(size)
}

/// `vkGetExecutionGraphPipelineNodeIndexAMDX` of node `(name, index)` of `graph`.
pub fn node_index(fns: &Commands, d: &ash::Device, graph: vk::Pipeline, name: &CStr, index: u32) -> Result<u32> {
    let info = vk::PipelineShaderStageNodeCreateInfoAMDX::default().name(name).index(index);
    let mut out = 0;
    // SAFETY: valid device, info and output.
    let result = unsafe { (fns.node_index)(d.handle(), graph, &info, &mut out) };
    result.result().map_err(vk_err("vkGetExecutionGraphPipelineNodeIndexAMDX"))?;
    Ok(out)
}

/// A `VkDispatchGraphInfoAMDX` of `count` host payloads of `stride` bytes at
/// `payloads` into node `node` (the bytes must outlive the recording).
pub fn host_payloads(node: u32, payloads: &[u8], count: u32, stride: u64) -> vk::DispatchGraphInfoAMDX {
    vk::DispatchGraphInfoAMDX {
        node_index: node,
        payload_count: count,
        payloads: vk::DeviceOrHostAddressConstAMDX { host_address: payloads.as_ptr().cast() },
        payload_stride: stride,
    }
}

/// Records `vkCmdDispatchGraphAMDX` of the host-side `infos` with
/// `size` bytes of scratch at `scratch`. The layer copies the payloads
/// while recording, as the extension allows.
///
/// # Safety
/// `cb` is recording with a graph bound; every payload pointer in `infos`
/// is valid for the call.
pub unsafe fn record_host_dispatch(
    fns: &Commands,
    cb: vk::CommandBuffer,
    scratch: vk::DeviceAddress,
    size: vk::DeviceSize,
    infos: &[vk::DispatchGraphInfoAMDX],
) {
    let count_info = vk::DispatchGraphCountInfoAMDX {
        count: infos.len() as u32,
        infos: vk::DeviceOrHostAddressConstAMDX { host_address: infos.as_ptr().cast() },
        stride: std::mem::size_of::<vk::DispatchGraphInfoAMDX>() as u64,
    };
    // SAFETY: the caller's contract; `infos` lives across the call.
    unsafe { (fns.dispatch)(cb, scratch, size, &count_info) };
}
