//! Driver pipelines made from SPIR-V words: node kernels, the meta
//! pipelines, and the empty kernel behind the handles applications hold for
//! graphs and graph libraries. Below [`kernels`](super::kernels) and
//! [`pipeline`](super::pipeline), which both compile through it.

use super::errors::GraphError;
use super::gpu::Gpu;
use crate::spirv_scan::{PLACEHOLDER_ENTRY_POINT, PLACEHOLDER_KERNEL};
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
