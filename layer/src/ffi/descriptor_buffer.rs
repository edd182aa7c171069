//! `VK_EXT_descriptor_buffer` at the execution-graph bind point, on
//! emulated devices: `vkCmdSetDescriptorBufferOffsetsEXT` and
//! `vkCmdBindDescriptorBufferEmbeddedSamplersEXT` name a bind point. At the
//! graph bind point the driver never sees them; the shadow state keeps them
//! and a graph dispatch sets them at the compute bind point for its node
//! kernels (which are created with `VK_PIPELINE_CREATE_DESCRIPTOR_BUFFER_BIT_EXT`
//! when the graph is). At the compute bind point they go to the driver and
//! are kept for the state restored after graph dispatches.
//! `vkCmdBindDescriptorBuffersEXT` binds buffers for the whole command
//! buffer; the layer never binds descriptor buffers itself, so it passes
//! through untouched.

use super::guard::guard_command;
use super::lookup::{recording, ValidCommandBuffer};
use super::slice;
use crate::amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH;
use ash::vk;

pub(super) unsafe extern "system" fn cmd_set_descriptor_buffer_offsets(
    cb: vk::CommandBuffer,
    bind_point: vk::PipelineBindPoint,
    layout: vk::PipelineLayout,
    first_set: u32,
    set_count: u32,
    buffer_indices: *const u32,
    offsets: *const vk::DeviceSize,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdSetDescriptorBufferOffsetsEXT", valid, || {
        recording(valid, |state| {
            let Some(db) = &state.device().dispatch.descriptor_buffer else { return };
            // SAFETY: the application's arrays of `set_count` elements.
            let (indices, offs) = unsafe { (slice(buffer_indices, set_count), slice(offsets, set_count)) };
            state.shadow(|s| s.set_buffer_offsets(bind_point, layout, first_set, indices, offs));
            if bind_point != PIPELINE_BIND_POINT_EXECUTION_GRAPH {
                // SAFETY: forwarding.
                unsafe {
                    (db.cmd_set_descriptor_buffer_offsets_ext)(
                        cb,
                        bind_point,
                        layout,
                        first_set,
                        set_count,
                        buffer_indices,
                        offsets,
                    )
                }
            }
        });
    })
}

pub(super) unsafe extern "system" fn cmd_bind_descriptor_buffer_embedded_samplers(
    cb: vk::CommandBuffer,
    bind_point: vk::PipelineBindPoint,
    layout: vk::PipelineLayout,
    set: u32,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdBindDescriptorBufferEmbeddedSamplersEXT", valid, || {
        recording(valid, |state| {
            let Some(db) = &state.device().dispatch.descriptor_buffer else { return };
            state.shadow(|s| s.bind_embedded_samplers(bind_point, layout, set));
            if bind_point != PIPELINE_BIND_POINT_EXECUTION_GRAPH {
                // SAFETY: forwarding.
                unsafe { (db.cmd_bind_descriptor_buffer_embedded_samplers_ext)(cb, bind_point, layout, set) }
            }
        });
    })
}
