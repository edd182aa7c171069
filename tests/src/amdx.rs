//! `VK_AMDX_shader_enqueue` revision 2 items that ash 0.38 lacks (it has
//! revision 1 only): the features and properties structs with their
//! revision-2 layouts, the command names and their revision-2 PFN types.
//!
//! sType values and layouts cross-checked against `vulkanalia-sys` 0.35
//! (`PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX = 1000134000`,
//! `..._PROPERTIES_AMDX = 1000134001`).

use std::ffi::{c_void, CStr};

use ash::vk;

/// The extension name.
pub const EXTENSION_NAME: &CStr = c"VK_AMDX_shader_enqueue";
/// The revision the layer advertises.
pub const SPEC_VERSION: u32 = 2;

/// `VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX`.
pub const STRUCTURE_TYPE_FEATURES: vk::StructureType = vk::StructureType::from_raw(1_000_134_000);
/// `VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES_AMDX`.
pub const STRUCTURE_TYPE_PROPERTIES: vk::StructureType = vk::StructureType::from_raw(1_000_134_001);

/// `VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX`.
pub const BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(0x0200_0000);

/// The seven device commands of the extension, in registry order.
pub const COMMANDS: [&CStr; 7] = [
    c"vkCreateExecutionGraphPipelinesAMDX",
    c"vkGetExecutionGraphPipelineScratchSizeAMDX",
    c"vkGetExecutionGraphPipelineNodeIndexAMDX",
    c"vkCmdInitializeGraphScratchMemoryAMDX",
    c"vkCmdDispatchGraphAMDX",
    c"vkCmdDispatchGraphIndirectAMDX",
    c"vkCmdDispatchGraphIndirectCountAMDX",
];

/// `VkPhysicalDeviceShaderEnqueueFeaturesAMDX` (revision 2).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PhysicalDeviceShaderEnqueueFeatures {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub shader_enqueue: vk::Bool32,
    pub shader_mesh_enqueue: vk::Bool32,
}

impl Default for PhysicalDeviceShaderEnqueueFeatures {
    fn default() -> Self {
        Self {
            s_type: STRUCTURE_TYPE_FEATURES,
            p_next: std::ptr::null_mut(),
            shader_enqueue: vk::FALSE,
            shader_mesh_enqueue: vk::FALSE,
        }
    }
}

// SAFETY: `#[repr(C)]` and starts with sType/pNext, as ash's chain walking requires.
unsafe impl vk::ExtendsPhysicalDeviceFeatures2 for PhysicalDeviceShaderEnqueueFeatures {}
// SAFETY: as above; the struct is valid in VkDeviceCreateInfo::pNext per the spec.
unsafe impl vk::ExtendsDeviceCreateInfo for PhysicalDeviceShaderEnqueueFeatures {}

/// `VkPhysicalDeviceShaderEnqueuePropertiesAMDX` (revision 2).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
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

impl Default for PhysicalDeviceShaderEnqueueProperties {
    fn default() -> Self {
        Self {
            s_type: STRUCTURE_TYPE_PROPERTIES,
            p_next: std::ptr::null_mut(),
            max_execution_graph_depth: 0,
            max_execution_graph_shader_output_nodes: 0,
            max_execution_graph_shader_payload_size: 0,
            max_execution_graph_shader_payload_count: 0,
            execution_graph_dispatch_address_alignment: 0,
            max_execution_graph_workgroup_count: [0; 3],
            max_execution_graph_workgroups: 0,
        }
    }
}

// SAFETY: `#[repr(C)]` and starts with sType/pNext, as ash's chain walking requires.
unsafe impl vk::ExtendsPhysicalDeviceProperties2 for PhysicalDeviceShaderEnqueueProperties {}

const _: () = assert!(std::mem::size_of::<PhysicalDeviceShaderEnqueueFeatures>() == 24);
const _: () = assert!(std::mem::size_of::<PhysicalDeviceShaderEnqueueProperties>() == 56);

/// `VkExecutionGraphPipelineScratchSizeAMDX` (revision 2: min/max/granularity).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ExecutionGraphPipelineScratchSize {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub min_size: vk::DeviceSize,
    pub max_size: vk::DeviceSize,
    pub size_granularity: vk::DeviceSize,
}

/// `VkDispatchGraphCountInfoAMDX`.
pub type DispatchGraphCountInfo = vk::DispatchGraphCountInfoAMDX;

/// Revision-2 `vkGetExecutionGraphPipelineScratchSizeAMDX`.
pub type PfnGetExecutionGraphPipelineScratchSize = unsafe extern "system" fn(
    device: vk::Device,
    execution_graph: vk::Pipeline,
    p_size_info: *mut ExecutionGraphPipelineScratchSize,
) -> vk::Result;

/// Revision-2 `vkCmdInitializeGraphScratchMemoryAMDX` (takes `scratchSize`).
pub type PfnCmdInitializeGraphScratchMemory = unsafe extern "system" fn(
    command_buffer: vk::CommandBuffer,
    execution_graph: vk::Pipeline,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
);

/// Revision-2 `vkCmdDispatchGraphAMDX` / `vkCmdDispatchGraphIndirectAMDX`.
pub type PfnCmdDispatchGraph = unsafe extern "system" fn(
    command_buffer: vk::CommandBuffer,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
    p_count_info: *const DispatchGraphCountInfo,
);

/// Revision-2 `vkCmdDispatchGraphIndirectCountAMDX`.
pub type PfnCmdDispatchGraphIndirectCount = unsafe extern "system" fn(
    command_buffer: vk::CommandBuffer,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
    count_info: vk::DeviceAddress,
);
