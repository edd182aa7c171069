//! `VK_AMDX_shader_enqueue` revision 2 as the layer implements it.
//!
//! ash 0.38 (the newest release) only carries revision 1 (no `scratchSize`
//! parameters, no min/max/granularity scratch sizes, no `shaderMeshEnqueue`),
//! so the revision-2 structures and entry points are declared here; the
//! layouts are checked against `vulkanalia-sys` 0.35 in the tests below.

use ash::vk;
use std::ffi::{c_char, c_void, CStr};

/// Extension name as listed by `vkEnumerateDeviceExtensionProperties`.
pub const EXTENSION_NAME: &CStr = c"VK_AMDX_shader_enqueue";
/// The revision this layer implements.
pub const SPEC_VERSION: u32 = 2;

pub const STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES: vk::StructureType =
    vk::StructureType::PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX;
pub const STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES: vk::StructureType =
    vk::StructureType::PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES_AMDX;
pub const STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE: vk::StructureType =
    vk::StructureType::EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX;
pub const STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO: vk::StructureType =
    vk::StructureType::EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX;
pub const STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO: vk::StructureType =
    vk::StructureType::PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX;

/// `VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX`.
pub const PIPELINE_BIND_POINT_EXECUTION_GRAPH: vk::PipelineBindPoint = vk::PipelineBindPoint::EXECUTION_GRAPH_AMDX;
/// `VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX`, the same bit in the
/// 32-bit and the 64-bit (`VkBufferUsageFlags2KHR`) usage flags.
pub const BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH: u64 = 0x0200_0000;
/// `VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX`.
pub const PIPELINE_CREATE_2_EXECUTION_GRAPH: u64 = 0x1_0000_0000;
/// `VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR` (same value as the 32-bit flag).
pub const PIPELINE_CREATE_2_LIBRARY: u64 = 0x800;
/// `VK_SHADER_INDEX_UNUSED_AMDX`.
pub const SHADER_INDEX_UNUSED: u32 = u32::MAX;

/// `VkPhysicalDeviceShaderEnqueueFeaturesAMDX` (revision 2).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PhysicalDeviceShaderEnqueueFeatures {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub shader_enqueue: vk::Bool32,
    pub shader_mesh_enqueue: vk::Bool32,
}

// SAFETY: `s_type` is the first member and matches the constant.
unsafe impl vk::TaggedStructure for PhysicalDeviceShaderEnqueueFeatures {
    const STRUCTURE_TYPE: vk::StructureType = STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES;
}

/// `VkPhysicalDeviceShaderEnqueuePropertiesAMDX` (revision 2).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PhysicalDeviceShaderEnqueueProperties {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub max_execution_graph_depth: u32,
    pub max_execution_graph_shader_output_nodes: u32,
    pub max_execution_graph_shader_payload_size: u32,
    pub max_execution_graph_shader_payload_count: u32,
    pub execution_graph_dispatch_address_alignment: u32,
    pub max_execution_graph_workgroup_count: [u32; 3],
    pub max_execution_graph_workgroups: u32,
}

/// `VkExecutionGraphPipelineScratchSizeAMDX` (revision 2).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ExecutionGraphPipelineScratchSize {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub min_size: vk::DeviceSize,
    pub max_size: vk::DeviceSize,
    pub size_granularity: vk::DeviceSize,
}

/// `VkExecutionGraphPipelineCreateInfoAMDX`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ExecutionGraphPipelineCreateInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub flags: vk::PipelineCreateFlags,
    pub stage_count: u32,
    pub p_stages: *const vk::PipelineShaderStageCreateInfo<'static>,
    pub p_library_info: *const vk::PipelineLibraryCreateInfoKHR<'static>,
    pub layout: vk::PipelineLayout,
    pub base_pipeline_handle: vk::Pipeline,
    pub base_pipeline_index: i32,
}

/// `VkPipelineShaderStageNodeCreateInfoAMDX`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PipelineShaderStageNodeCreateInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub p_name: *const c_char,
    pub index: u32,
}

/// `VkDeviceOrHostAddressConstAMDX`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union DeviceOrHostAddressConst {
    pub device_address: vk::DeviceAddress,
    pub host_address: *const c_void,
}

impl std::fmt::Debug for DeviceOrHostAddressConst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: both members are plain 64-bit values; reading the integer is always defined.
        let raw = unsafe { self.device_address };
        write!(f, "{raw:#x}")
    }
}

/// `VkDispatchGraphInfoAMDX`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DispatchGraphInfo {
    pub node_index: u32,
    pub payload_count: u32,
    pub payloads: DeviceOrHostAddressConst,
    pub payload_stride: u64,
}

/// `VkDispatchGraphCountInfoAMDX`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DispatchGraphCountInfo {
    pub count: u32,
    pub infos: DeviceOrHostAddressConst,
    pub stride: u64,
}

pub type PfnCreateExecutionGraphPipelines = unsafe extern "system" fn(
    vk::Device,
    vk::PipelineCache,
    u32,
    *const ExecutionGraphPipelineCreateInfo,
    *const vk::AllocationCallbacks<'static>,
    *mut vk::Pipeline,
) -> vk::Result;
pub type PfnGetExecutionGraphPipelineScratchSize =
    unsafe extern "system" fn(vk::Device, vk::Pipeline, *mut ExecutionGraphPipelineScratchSize) -> vk::Result;
pub type PfnGetExecutionGraphPipelineNodeIndex = unsafe extern "system" fn(
    vk::Device,
    vk::Pipeline,
    *const PipelineShaderStageNodeCreateInfo,
    *mut u32,
) -> vk::Result;
pub type PfnCmdInitializeGraphScratchMemory =
    unsafe extern "system" fn(vk::CommandBuffer, vk::Pipeline, vk::DeviceAddress, vk::DeviceSize);
pub type PfnCmdDispatchGraph =
    unsafe extern "system" fn(vk::CommandBuffer, vk::DeviceAddress, vk::DeviceSize, *const DispatchGraphCountInfo);
pub type PfnCmdDispatchGraphIndirectCount =
    unsafe extern "system" fn(vk::CommandBuffer, vk::DeviceAddress, vk::DeviceSize, vk::DeviceAddress);

/// The seven device commands of the extension, by name.
pub const COMMAND_NAMES: [&CStr; 7] = [
    c"vkCreateExecutionGraphPipelinesAMDX",
    c"vkGetExecutionGraphPipelineScratchSizeAMDX",
    c"vkGetExecutionGraphPipelineNodeIndexAMDX",
    c"vkCmdInitializeGraphScratchMemoryAMDX",
    c"vkCmdDispatchGraphAMDX",
    c"vkCmdDispatchGraphIndirectAMDX",
    c"vkCmdDispatchGraphIndirectCountAMDX",
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};
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
        assert_eq!(
            size_of::<ExecutionGraphPipelineScratchSize>(),
            size_of::<va::ExecutionGraphPipelineScratchSizeAMDX>()
        );
        assert_eq!(
            offset_of!(ExecutionGraphPipelineScratchSize, size_granularity),
            offset_of!(va::ExecutionGraphPipelineScratchSizeAMDX, size_granularity)
        );
        assert_eq!(
            size_of::<ExecutionGraphPipelineCreateInfo>(),
            size_of::<va::ExecutionGraphPipelineCreateInfoAMDX>()
        );
        assert_eq!(
            size_of::<PipelineShaderStageNodeCreateInfo>(),
            size_of::<va::PipelineShaderStageNodeCreateInfoAMDX>()
        );
        assert_eq!(size_of::<DispatchGraphInfo>(), size_of::<va::DispatchGraphInfoAMDX>());
        assert_eq!(
            offset_of!(DispatchGraphInfo, payload_stride),
            offset_of!(va::DispatchGraphInfoAMDX, payload_stride)
        );
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
}
