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
    let stats = device.dispatch.executable_properties.as_ref();
    let flags = if stats.is_some() { flags | vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR } else { flags };
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
    let statistics = stats.map(|fns| executable_statistics(device, fns, pipeline));
    Ok(Compiled { pipeline, feedback: feedback.flags, statistics })
}

/// The driver's statistics of `pipeline`'s first executable, as
/// `name = value` pairs (`VK_KHR_pipeline_executable_properties`).
fn executable_statistics(
    device: &Gpu,
    fns: &ash::khr::pipeline_executable_properties::DeviceFn,
    pipeline: vk::Pipeline,
) -> String {
    let info = vk::PipelineExecutableInfoKHR::default().pipeline(pipeline).executable_index(0);
    let mut count = 0u32;
    // SAFETY: a pipeline created with CAPTURE_STATISTICS; the two-call idiom.
    let result = unsafe {
        (fns.get_pipeline_executable_statistics_khr)(device.handle(), &info, &mut count, std::ptr::null_mut())
    };
    if result != vk::Result::SUCCESS {
        return format!("no statistics ({result:?})");
    }
    let mut stats = vec![vk::PipelineExecutableStatisticKHR::default(); count as usize];
    // SAFETY: as above, with room for `count` statistics.
    let result =
        unsafe { (fns.get_pipeline_executable_statistics_khr)(device.handle(), &info, &mut count, stats.as_mut_ptr()) };
    if result != vk::Result::SUCCESS && result != vk::Result::INCOMPLETE {
        return format!("no statistics ({result:?})");
    }
    stats
        .iter()
        .take(count as usize)
        .map(|s| {
            let name = s.name_as_c_str().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            // SAFETY: the union member `format` names.
            let value = unsafe {
                match s.format {
                    vk::PipelineExecutableStatisticFormatKHR::BOOL32 => s.value.b32.to_string(),
                    vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64.to_string(),
                    vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64.to_string(),
                    _ => s.value.f64.to_string(),
                }
            };
            format!("{name} = {value}")
        })
        .collect::<Vec<_>>()
        .join(", ")
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
