//! Cross-checks the hand-declared revision-2 layouts and values against
//! `vulkanalia-sys` 0.35, which generates them from a revision-2 registry.

use std::mem::{offset_of, size_of};

use vk_amdx::*;
use vulkanalia_sys as va;

#[test]
fn layouts_match_vulkanalia_revision_2() {
    assert_eq!(
        size_of::<PhysicalDeviceShaderEnqueueFeatures>(),
        size_of::<va::PhysicalDeviceShaderEnqueueFeaturesAMDX>()
    );
    assert_eq!(
        offset_of!(PhysicalDeviceShaderEnqueueFeatures, shader_mesh_enqueue),
        offset_of!(va::PhysicalDeviceShaderEnqueueFeaturesAMDX, shader_mesh_enqueue)
    );
    assert_eq!(
        size_of::<PhysicalDeviceShaderEnqueueProperties>(),
        size_of::<va::PhysicalDeviceShaderEnqueuePropertiesAMDX>()
    );
    assert_eq!(
        offset_of!(PhysicalDeviceShaderEnqueueProperties, max_execution_graph_workgroups),
        offset_of!(va::PhysicalDeviceShaderEnqueuePropertiesAMDX, max_execution_graph_workgroups)
    );
    assert_eq!(size_of::<ExecutionGraphPipelineScratchSize>(), size_of::<va::ExecutionGraphPipelineScratchSizeAMDX>());
    assert_eq!(
        offset_of!(ExecutionGraphPipelineScratchSize, size_granularity),
        offset_of!(va::ExecutionGraphPipelineScratchSizeAMDX, size_granularity)
    );
    assert_eq!(size_of::<ExecutionGraphPipelineCreateInfo>(), size_of::<va::ExecutionGraphPipelineCreateInfoAMDX>());
    assert_eq!(size_of::<PipelineShaderStageNodeCreateInfo>(), size_of::<va::PipelineShaderStageNodeCreateInfoAMDX>());
    assert_eq!(size_of::<DispatchGraphInfo>(), size_of::<va::DispatchGraphInfoAMDX>());
    assert_eq!(offset_of!(DispatchGraphInfo, payload_stride), offset_of!(va::DispatchGraphInfoAMDX, payload_stride));
    assert_eq!(size_of::<DispatchGraphCountInfo>(), size_of::<va::DispatchGraphCountInfoAMDX>());
    assert_eq!(offset_of!(DispatchGraphCountInfo, infos), offset_of!(va::DispatchGraphCountInfoAMDX, infos));
}

#[test]
fn structure_types_match_vulkanalia() {
    assert_eq!(
        STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES.as_raw(),
        va::StructureType::PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX.as_raw()
    );
    assert_eq!(
        STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO.as_raw(),
        va::StructureType::PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX.as_raw()
    );
    assert_eq!(PIPELINE_CREATE_2_EXECUTION_GRAPH, va::PipelineCreateFlags2KHR::EXECUTION_GRAPH_AMDX.bits());
    assert_eq!(BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH, va::BufferUsageFlags2KHR::EXECUTION_GRAPH_SCRATCH_AMDX.bits());
}
