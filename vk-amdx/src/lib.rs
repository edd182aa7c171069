//! `VK_AMDX_shader_enqueue` revision 2, declared once for the whole
//! workspace: the layer implements it, the tests, the demo and the bench
//! call it.
//!
//! ash 0.38 (the newest release) only carries revision 1 (no `scratchSize`
//! parameters, no min/max/granularity scratch sizes, no `shaderMeshEnqueue`),
//! so the revision-2 structures ([`structs`]) and entry points ([`commands`])
//! are declared here. Every layout is asserted at compile time (sizes and
//! offsets of the C definitions, and equality with ash's revision-1 structure
//! wherever revision 2 kept it) and cross-checked against `vulkanalia-sys`
//! 0.35, which has revision 2, in `tests/layouts.rs`.
//!
//! Depends on ash only; no Vulkan calls happen here except the loader's
//! `vkGetDeviceProcAddr` lookups.

use ash::vk;
use std::ffi::CStr;

pub mod commands;
pub mod structs;

pub use commands::*;
pub use structs::*;

/// Extension name as listed by `vkEnumerateDeviceExtensionProperties`.
pub const EXTENSION_NAME: &CStr = c"VK_AMDX_shader_enqueue";
/// The revision this workspace implements.
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
/// 32-bit and the 64-bit (`VkBufferUsageFlags2KHR`) usage flags; as typed
/// 32-bit flags it is ash's `vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX`.
pub const BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH: u64 = 0x0200_0000;
/// `VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX`.
pub const PIPELINE_CREATE_2_EXECUTION_GRAPH: u64 = 0x1_0000_0000;
/// `VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR` (same value as the 32-bit flag).
pub const PIPELINE_CREATE_2_LIBRARY: u64 = 0x800;
/// `VK_SHADER_INDEX_UNUSED_AMDX`.
pub const SHADER_INDEX_UNUSED: u32 = u32::MAX;

const _: () =
    assert!(vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX.as_raw() as u64 == BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH);
const _: () =
    assert!(vk::BufferUsageFlags2KHR::EXECUTION_GRAPH_SCRATCH_AMDX.as_raw() == BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH);
