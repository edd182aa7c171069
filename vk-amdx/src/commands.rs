//! The seven device commands: revision-2 function pointer types, their names
//! and [`Commands`], a table of them resolved through `vkGetDeviceProcAddr`.
//!
//! The types are the application's view. Where revision 2 kept revision 1's
//! structures (create info, node info, dispatch count info) they take ash's,
//! so callers keep ash's builders; the layer's entry points take the
//! lifetime-free twins in [`crate::structs`], asserted to share the layout.

use ash::vk;
use std::ffi::CStr;

use crate::structs::ExecutionGraphPipelineScratchSize;

/// `vkCreateExecutionGraphPipelinesAMDX` (unchanged in revision 2).
pub type PfnCreateExecutionGraphPipelines = unsafe extern "system" fn(
    device: vk::Device,
    pipeline_cache: vk::PipelineCache,
    create_info_count: u32,
    p_create_infos: *const vk::ExecutionGraphPipelineCreateInfoAMDX<'_>,
    p_allocator: *const vk::AllocationCallbacks<'_>,
    p_pipelines: *mut vk::Pipeline,
) -> vk::Result;
/// Revision-2 `vkGetExecutionGraphPipelineScratchSizeAMDX` (min/max/granularity).
pub type PfnGetExecutionGraphPipelineScratchSize = unsafe extern "system" fn(
    device: vk::Device,
    execution_graph: vk::Pipeline,
    p_size_info: *mut ExecutionGraphPipelineScratchSize,
) -> vk::Result;
/// `vkGetExecutionGraphPipelineNodeIndexAMDX` (unchanged in revision 2).
pub type PfnGetExecutionGraphPipelineNodeIndex = unsafe extern "system" fn(
    device: vk::Device,
    execution_graph: vk::Pipeline,
    p_node_info: *const vk::PipelineShaderStageNodeCreateInfoAMDX<'_>,
    p_node_index: *mut u32,
) -> vk::Result;
/// Revision-2 `vkCmdInitializeGraphScratchMemoryAMDX` (takes `scratchSize`).
pub type PfnCmdInitializeGraphScratchMemory = unsafe extern "system" fn(
    command_buffer: vk::CommandBuffer,
    execution_graph: vk::Pipeline,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
);
/// Revision-2 `vkCmdDispatchGraphAMDX` / `vkCmdDispatchGraphIndirectAMDX`
/// (take `scratchSize`).
pub type PfnCmdDispatchGraph = unsafe extern "system" fn(
    command_buffer: vk::CommandBuffer,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
    p_count_info: *const vk::DispatchGraphCountInfoAMDX,
);
/// Revision-2 `vkCmdDispatchGraphIndirectCountAMDX` (takes `scratchSize`).
pub type PfnCmdDispatchGraphIndirectCount = unsafe extern "system" fn(
    command_buffer: vk::CommandBuffer,
    scratch: vk::DeviceAddress,
    scratch_size: vk::DeviceSize,
    count_info: vk::DeviceAddress,
);

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

/// The seven commands of one device (field order: [`COMMANDS`]).
#[derive(Clone, Copy, Debug)]
pub struct Commands {
    pub create: PfnCreateExecutionGraphPipelines,
    pub scratch_size: PfnGetExecutionGraphPipelineScratchSize,
    pub node_index: PfnGetExecutionGraphPipelineNodeIndex,
    pub init_scratch: PfnCmdInitializeGraphScratchMemory,
    pub dispatch: PfnCmdDispatchGraph,
    pub dispatch_indirect: PfnCmdDispatchGraph,
    pub dispatch_indirect_count: PfnCmdDispatchGraphIndirectCount,
}

impl Commands {
    /// Resolves the commands of `device` through `instance`'s
    /// `vkGetDeviceProcAddr` (so through every enabled layer). The error is
    /// the name of the first command that does not resolve.
    pub fn load(instance: &ash::Instance, device: &ash::Device) -> Result<Self, &'static CStr> {
        let get_proc = instance.fp_v1_0().get_device_proc_addr;
        // SAFETY: a live device handle (ash's wrapper owns one) and NUL-terminated names.
        let get = |name: &'static CStr| unsafe { get_proc(device.handle(), name.as_ptr()) }.ok_or(name);
        let [create, scratch_size, node_index, init_scratch, dispatch, indirect, indirect_count] = COMMANDS;
        // SAFETY: each pointer is the entry point of the name it was asked
        // for, whose revision-2 prototype is the target type.
        unsafe {
            Ok(Self {
                create: std::mem::transmute::<Pfn, PfnCreateExecutionGraphPipelines>(get(create)?),
                scratch_size: std::mem::transmute::<Pfn, PfnGetExecutionGraphPipelineScratchSize>(get(scratch_size)?),
                node_index: std::mem::transmute::<Pfn, PfnGetExecutionGraphPipelineNodeIndex>(get(node_index)?),
                init_scratch: std::mem::transmute::<Pfn, PfnCmdInitializeGraphScratchMemory>(get(init_scratch)?),
                dispatch: std::mem::transmute::<Pfn, PfnCmdDispatchGraph>(get(dispatch)?),
                dispatch_indirect: std::mem::transmute::<Pfn, PfnCmdDispatchGraph>(get(indirect)?),
                dispatch_indirect_count: std::mem::transmute::<Pfn, PfnCmdDispatchGraphIndirectCount>(get(
                    indirect_count,
                )?),
            })
        }
    }
}

/// The loader's generic function pointer type.
type Pfn = unsafe extern "system" fn();
