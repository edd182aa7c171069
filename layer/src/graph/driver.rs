//! Driver pipelines made from SPIR-V words: node kernels, the meta
//! pipelines, and the empty kernel behind the handles applications hold for
//! graphs and graph libraries. Below [`kernels`](super::kernels) and
//! [`pipeline`](super::pipeline), which both compile through it.

use super::errors::GraphError;
use super::gpu::Gpu;
use crate::spirv_scan::{PLACEHOLDER_ENTRY_POINT, PLACEHOLDER_KERNEL};
use crate::state::pipeline_layout::PipelineLayoutInfo;
use ash::vk;

/// The driver's error `result` of `call`.
pub(crate) fn vulkan(call: &'static str, result: vk::Result) -> GraphError {
    GraphError::Vulkan { call, result }
}

/// A driver pipeline and the driver's creation feedback for it.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    pub pipeline: vk::Pipeline,
    /// `VK_PIPELINE_CREATION_FEEDBACK_*` the driver reported (empty when it
    /// gave none).
    pub feedback: vk::PipelineCreationFeedbackFlags,
    /// What the driver says of the compiled code (`name = value, ...`), with
    /// the `shader_statistics` setting.
    pub statistics: Option<String>,
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
    let vk = &device.dispatch;
    let module = vk.create_shader_module(words).map_err(|result| vulkan("vkCreateShaderModule", result))?;
    let mut stage =
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(entry);
    if let Some(spec) = spec {
        stage = stage.specialization_info(spec);
    }
    let mut feedback = vk::PipelineCreationFeedback::default();
    let mut feedback_info = vk::PipelineCreationFeedbackCreateInfo::default().pipeline_creation_feedback(&mut feedback);
    let stats = vk.executable_properties.is_some();
    let flags = if stats { flags | vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR } else { flags };
    let mut info = vk::ComputePipelineCreateInfo::default().flags(flags).stage(stage).layout(layout);
    // Core 1.3: not for an application that asked for an older version.
    if device.physical.creation_feedback {
        info = info.push_next(&mut feedback_info);
    }
    let result = vk.create_compute_pipeline(cache, &info);
    // The module is ours and no longer needed.
    vk.destroy_shader_module(module);
    let pipeline = result.map_err(|result| vulkan("vkCreateComputePipelines", result))?;
    let statistics = stats.then(|| executable_statistics(device, pipeline));
    Ok(Compiled { pipeline, feedback: feedback.flags, statistics })
}

/// The driver's statistics of `pipeline`'s first executable, as
/// `name = value` pairs (`VK_KHR_pipeline_executable_properties`).
fn executable_statistics(device: &Gpu, pipeline: vk::Pipeline) -> String {
    match device.dispatch.pipeline_executable_statistics(pipeline) {
        Some(Ok(stats)) => stats.iter().map(|(name, value)| format!("{name} = {value}")).collect::<Vec<_>>().join(", "),
        Some(Err(result)) => format!("no statistics ({result:?})"),
        None => String::new(),
    }
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
    let layout =
        device.dispatch.create_pipeline_layout(&create).map_err(|result| vulkan("vkCreatePipelineLayout", result))?;
    Ok(NodeLayout { layout, push_offset, push_stages })
}
