//! Driver pipelines made from SPIR-V words: node kernels, the meta
//! pipelines, and the empty kernel behind the handles applications hold for
//! graphs and graph libraries. Below [`kernels`](super::kernels) and
//! [`pipeline`](super::pipeline), which both compile through it.

use super::errors::GraphError;
use super::gpu::Gpu;
use crate::spirv_scan::{PLACEHOLDER_ENTRY_POINT, PLACEHOLDER_KERNEL};
use crate::state::pipeline_layout::PipelineLayoutInfo;
use ash::vk;

pub(crate) fn check(call: &'static str, result: vk::Result) -> Result<(), GraphError> {
    if result == vk::Result::SUCCESS {
        Ok(())
    } else {
        Err(GraphError::Vulkan { call, result })
    }
}

/// A driver pipeline and the driver's creation feedback for it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Compiled {
    pub pipeline: vk::Pipeline,
    /// `VK_PIPELINE_CREATION_FEEDBACK_*` the driver reported (empty when it
    /// gave none).
    pub feedback: vk::PipelineCreationFeedbackFlags,
}

/// Creates a compute pipeline from SPIR-V words on the driver (`flags`:
/// what node kernels inherit from their graph, such as
/// `VK_PIPELINE_CREATE_DESCRIPTOR_BUFFER_BIT_EXT`), asking the driver for
/// creation feedback (Vulkan 1.3 core, where the application's version
/// allows it) so that a graph can answer the application's.
pub(crate) fn compiled_pipeline(
    device: &Gpu,
    cache: vk::PipelineCache,
    flags: vk::PipelineCreateFlags,
    words: &[u32],
    entry: &std::ffi::CStr,
    layout: vk::PipelineLayout,
    spec: Option<&vk::SpecializationInfo<'_>>,
) -> Result<Compiled, GraphError> {
    let fp = device.dispatch.fp.fp_v1_0();
    let module_info = vk::ShaderModuleCreateInfo::default().code(words);
    let mut module = vk::ShaderModule::null();
    // SAFETY: valid device and create info.
    check("vkCreateShaderModule", unsafe {
        (fp.create_shader_module)(device.handle(), &module_info, std::ptr::null(), &mut module)
    })?;
    let mut stage =
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(entry);
    if let Some(spec) = spec {
        stage = stage.specialization_info(spec);
    }
    let mut feedback = vk::PipelineCreationFeedback::default();
    let mut feedback_info = vk::PipelineCreationFeedbackCreateInfo::default().pipeline_creation_feedback(&mut feedback);
    let mut info = vk::ComputePipelineCreateInfo::default().flags(flags).stage(stage).layout(layout);
    // Core 1.3: not for an application that asked for an older version.
    if device.physical.creation_feedback {
        info = info.push_next(&mut feedback_info);
    }
    let mut pipeline = vk::Pipeline::null();
    // SAFETY: valid device, cache and create info.
    let result =
        unsafe { (fp.create_compute_pipelines)(device.handle(), cache, 1, &info, std::ptr::null(), &mut pipeline) };
    // SAFETY: the module is ours and no longer needed.
    unsafe { (fp.destroy_shader_module)(device.handle(), module, std::ptr::null()) };
    check("vkCreateComputePipelines", result)?;
    Ok(Compiled { pipeline, feedback: feedback.flags })
}

/// A driver pipeline running the empty kernel: the handle an application
/// holds for a graph or graph library.
pub fn placeholder_pipeline(
    device: &Gpu,
    cache: vk::PipelineCache,
    layout: vk::PipelineLayout,
    flags: vk::PipelineCreateFlags,
) -> Result<vk::Pipeline, GraphError> {
    compiled_pipeline(device, cache, flags, &PLACEHOLDER_KERNEL, PLACEHOLDER_ENTRY_POINT, layout, None)
        .map(|c| c.pipeline)
}

/// An application's layout extended by the runtime's push block.
pub(crate) struct NodeLayout {
    pub layout: vk::PipelineLayout,
    /// Where the block sits: the application's ranges' end, rounded up to 8.
    pub push_offset: u32,
    /// The stages of the range holding the block.
    pub push_stages: vk::ShaderStageFlags,
}

/// The application's layout (what the layer recorded of it) with the
/// runtime's push block appended to the range that holds `stage` (Vulkan
/// allows one range per stage), or in a new range of `stage`: compute for
/// node kernels, mesh for mesh nodes.
pub(crate) fn node_layout(
    device: &Gpu,
    info: &PipelineLayoutInfo,
    stage: vk::ShaderStageFlags,
) -> Result<NodeLayout, GraphError> {
    let end = info.push_ranges.iter().map(|r| r.offset + r.size).max().unwrap_or(0);
    let push_offset = end.next_multiple_of(8);
    let block = std::mem::size_of::<spirv_lowering::abi::NodePush>() as u32;
    let max = device.physical.max_push_constants_size;
    if push_offset + block > max {
        return Err(GraphError::PushSpace { end, max });
    }
    let mut ranges = info.push_ranges.clone();
    let push_stages = match ranges.iter_mut().find(|r| r.stage_flags.contains(stage)) {
        Some(r) => {
            r.size = push_offset + block - r.offset;
            r.stage_flags
        }
        None => {
            ranges.push(vk::PushConstantRange { stage_flags: stage, offset: push_offset, size: block });
            stage
        }
    };
    let create = vk::PipelineLayoutCreateInfo::default().set_layouts(&info.set_layouts).push_constant_ranges(&ranges);
    let mut layout = vk::PipelineLayout::null();
    // SAFETY: valid device and create info.
    check("vkCreatePipelineLayout", unsafe {
        (device.dispatch.fp.fp_v1_0().create_pipeline_layout)(device.handle(), &create, std::ptr::null(), &mut layout)
    })?;
    Ok(NodeLayout { layout, push_offset, push_stages })
}
