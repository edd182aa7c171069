//! The revision-2 structures, `#[repr(C)]` as in the C headers.
//!
//! Features, properties and scratch sizes changed in revision 2 (new
//! `shaderMeshEnqueue`, min/max/granularity sizes): only these declarations
//! are right. The create infos and dispatch infos kept revision 1's layout;
//! they are declared here without lifetimes for the layer's entry points, and
//! asserted below to match ash's revision-1 structures, which applications
//! (tests, demo, bench) build with ash's builders and pass to [`crate::commands`].

use ash::vk;
use std::ffi::{c_char, c_void};
use std::mem::{offset_of, size_of};

use crate::*;

/// `VkPhysicalDeviceShaderEnqueueFeaturesAMDX` (revision 2).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PhysicalDeviceShaderEnqueueFeatures {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub shader_enqueue: vk::Bool32,
    pub shader_mesh_enqueue: vk::Bool32,
}

impl Default for PhysicalDeviceShaderEnqueueFeatures {
    fn default() -> Self {
        Self {
            s_type: STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES,
            p_next: std::ptr::null_mut(),
            shader_enqueue: vk::FALSE,
            shader_mesh_enqueue: vk::FALSE,
        }
    }
}

// SAFETY: `s_type` is the first member and matches the constant.
unsafe impl vk::TaggedStructure for PhysicalDeviceShaderEnqueueFeatures {
    const STRUCTURE_TYPE: vk::StructureType = STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES;
}
// SAFETY: `#[repr(C)]` and starts with sType/pNext, as ash's chain walking requires.
unsafe impl vk::ExtendsPhysicalDeviceFeatures2 for PhysicalDeviceShaderEnqueueFeatures {}
// SAFETY: as above; the struct is valid in VkDeviceCreateInfo::pNext per the spec.
unsafe impl vk::ExtendsDeviceCreateInfo for PhysicalDeviceShaderEnqueueFeatures {}

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

impl Default for PhysicalDeviceShaderEnqueueProperties {
    fn default() -> Self {
        Self {
            s_type: STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES,
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

impl Default for ExecutionGraphPipelineScratchSize {
    fn default() -> Self {
        Self {
            s_type: STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE,
            p_next: std::ptr::null_mut(),
            min_size: 0,
            max_size: 0,
            size_granularity: 0,
        }
    }
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

/// Size and member offsets of `$ours` equal those of `$theirs`.
macro_rules! same_layout {
    ($ours:ty, $theirs:ty, $($field:ident),+) => {
        const _: () = assert!(size_of::<$ours>() == size_of::<$theirs>());
        $(const _: () = assert!(offset_of!($ours, $field) == offset_of!($theirs, $field));)+
    };
}

// Revision 2's C layouts (64-bit targets, as every driver the layer runs on).
const _: () = assert!(size_of::<PhysicalDeviceShaderEnqueueFeatures>() == 24);
const _: () = assert!(offset_of!(PhysicalDeviceShaderEnqueueFeatures, shader_mesh_enqueue) == 20);
const _: () = assert!(size_of::<PhysicalDeviceShaderEnqueueProperties>() == 56);
const _: () = assert!(offset_of!(PhysicalDeviceShaderEnqueueProperties, max_execution_graph_workgroups) == 48);
const _: () = assert!(size_of::<ExecutionGraphPipelineScratchSize>() == 40);
const _: () = assert!(offset_of!(ExecutionGraphPipelineScratchSize, size_granularity) == 32);
// What revision 2 kept from revision 1: ash's structures are the same.
same_layout!(
    ExecutionGraphPipelineCreateInfo,
    vk::ExecutionGraphPipelineCreateInfoAMDX<'static>,
    p_next,
    flags,
    stage_count,
    p_stages,
    p_library_info,
    layout,
    base_pipeline_handle,
    base_pipeline_index
);
same_layout!(PipelineShaderStageNodeCreateInfo, vk::PipelineShaderStageNodeCreateInfoAMDX<'static>, p_name, index);
same_layout!(DispatchGraphInfo, vk::DispatchGraphInfoAMDX, node_index, payload_count, payloads, payload_stride);
same_layout!(DispatchGraphCountInfo, vk::DispatchGraphCountInfoAMDX, count, infos, stride);
