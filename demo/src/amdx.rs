//! `VK_AMDX_shader_enqueue` revision-2 items that ash 0.38 (revision 1)
//! lacks: features, properties and scratch-size structs, the revision-2
//! command signatures, the bind point and the scratch usage bit (same
//! layouts as the layer's `amdx.rs` and the test harness's; sTypes from the
//! Vulkan registry: 1000134000 features, 1000134001 properties).

use std::ffi::{c_void, CStr};

use ash::vk;

/// The extension name.
pub const EXTENSION_NAME: &CStr = c"VK_AMDX_shader_enqueue";

/// The seven device commands.
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
pub struct Features {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub shader_enqueue: vk::Bool32,
    pub shader_mesh_enqueue: vk::Bool32,
}

impl Default for Features {
    fn default() -> Self {
        Self {
            s_type: vk::StructureType::from_raw(1_000_134_000),
            p_next: std::ptr::null_mut(),
            shader_enqueue: vk::FALSE,
            shader_mesh_enqueue: vk::FALSE,
        }
    }
}

// SAFETY: `#[repr(C)]`, starts with sType/pNext.
unsafe impl vk::ExtendsPhysicalDeviceFeatures2 for Features {}
// SAFETY: as above; valid in VkDeviceCreateInfo::pNext.
unsafe impl vk::ExtendsDeviceCreateInfo for Features {}

/// `VkPhysicalDeviceShaderEnqueuePropertiesAMDX` (revision 2).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Properties {
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

impl Default for Properties {
    fn default() -> Self {
        Self {
            s_type: vk::StructureType::from_raw(1_000_134_001),
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

// SAFETY: `#[repr(C)]`, starts with sType/pNext.
unsafe impl vk::ExtendsPhysicalDeviceProperties2 for Properties {}

const _: () = assert!(std::mem::size_of::<Features>() == 24);
const _: () = assert!(std::mem::size_of::<Properties>() == 56);

/// `VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX`.
pub const BIND_POINT: vk::PipelineBindPoint = vk::PipelineBindPoint::from_raw(1_000_134_000);

/// `VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX`.
pub const BUFFER_USAGE_SCRATCH: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(0x0200_0000);

/// `VkExecutionGraphPipelineScratchSizeAMDX` (revision 2: min/max/granularity).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ScratchSize {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub min_size: vk::DeviceSize,
    pub max_size: vk::DeviceSize,
    pub size_granularity: vk::DeviceSize,
}

impl Default for ScratchSize {
    fn default() -> Self {
        Self {
            s_type: vk::StructureType::EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX,
            p_next: std::ptr::null_mut(),
            min_size: 0,
            max_size: 0,
            size_granularity: 0,
        }
    }
}

const _: () = assert!(std::mem::size_of::<ScratchSize>() == 40);

/// Revision-2 `vkGetExecutionGraphPipelineScratchSizeAMDX`.
pub type PfnGetScratchSize =
    unsafe extern "system" fn(device: vk::Device, graph: vk::Pipeline, size: *mut ScratchSize) -> vk::Result;

/// Revision-2 `vkCmdInitializeGraphScratchMemoryAMDX` (takes `scratchSize`).
pub type PfnCmdInitializeScratch = unsafe extern "system" fn(
    command_buffer: vk::CommandBuffer,
    graph: vk::Pipeline,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
);

/// Revision-2 `vkCmdDispatchGraphAMDX` (takes `scratchSize`).
pub type PfnCmdDispatchGraph = unsafe extern "system" fn(
    command_buffer: vk::CommandBuffer,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
    count_info: *const vk::DispatchGraphCountInfoAMDX,
);
