//! Command-buffer hooks on emulated devices: lifetime (allocate, begin,
//! reset, free, pool reset/destroy) and the shadow state of what is bound at
//! the compute and execution-graph bind points. Binds at the graph bind point
//! never reach the driver, which does not know it.

use super::guard::{guard_command, guard_result, guard_value};
use super::lookup::device_of;
use super::slice;
use crate::amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH;
use crate::device::DeviceState;
use crate::state::command_buffer::{PushedDescriptor, PushedSet};
use ash::vk;
use std::ffi::c_void;

pub(super) unsafe extern "system" fn allocate_command_buffers(
    device: vk::Device,
    info: *const vk::CommandBufferAllocateInfo<'static>,
    out: *mut vk::CommandBuffer,
) -> vk::Result {
    guard_result("vkAllocateCommandBuffers", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: forwarding the application's arguments.
        let result = unsafe { (state.dispatch.fp.fp_v1_0().allocate_command_buffers)(device, info, out) };
        if result == vk::Result::SUCCESS {
            // SAFETY: valid on success: `command_buffer_count` handles were written.
            let (info, buffers) = unsafe { (&*info, slice(out, (*info).command_buffer_count)) };
            let mut map = state.command_buffers.write();
            let secondary = info.level == vk::CommandBufferLevel::SECONDARY;
            for &cb in buffers {
                let cb_state = map.entry(cb).or_default().get_mut();
                cb_state.pool = info.command_pool;
                cb_state.secondary = secondary;
            }
        }
        result
    })
}

pub(super) unsafe extern "system" fn free_command_buffers(
    device: vk::Device,
    pool: vk::CommandPool,
    count: u32,
    buffers: *const vk::CommandBuffer,
) {
    guard_value("vkFreeCommandBuffers", (), || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return };
        {
            let mut map = state.command_buffers.write();
            let mut staging = state.staging.lock();
            // SAFETY: the application's array.
            for cb in unsafe { slice(buffers, count) } {
                map.remove(cb);
                staging.release(*cb);
            }
        }
        // SAFETY: forwarding the application's arguments.
        unsafe { (state.dispatch.fp.fp_v1_0().free_command_buffers)(device, pool, count, buffers) }
    })
}

pub(super) unsafe extern "system" fn begin_command_buffer(
    cb: vk::CommandBuffer,
    info: *const vk::CommandBufferBeginInfo<'static>,
) -> vk::Result {
    guard_result("vkBeginCommandBuffer", || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        state.with_command_buffer(cb, |s| s.reset());
        state.staging.lock().release(cb);
        // SAFETY: forwarding.
        unsafe { (state.dispatch.fp.fp_v1_0().begin_command_buffer)(cb, info) }
    })
}

pub(super) unsafe extern "system" fn end_command_buffer(cb: vk::CommandBuffer) -> vk::Result {
    guard_result("vkEndCommandBuffer", || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: forwarding; the driver's command buffer is ended either way.
        let result = unsafe { (state.dispatch.fp.fp_v1_0().end_command_buffer)(cb) };
        if state.with_command_buffer(cb, |s| s.poisoned) {
            tracing::error!("vkEndCommandBuffer: {cb:?} failed while recording (see the earlier error)");
            return vk::Result::ERROR_UNKNOWN;
        }
        result
    })
}

pub(super) unsafe extern "system" fn reset_command_buffer(
    cb: vk::CommandBuffer,
    flags: vk::CommandBufferResetFlags,
) -> vk::Result {
    guard_result("vkResetCommandBuffer", || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        state.with_command_buffer(cb, |s| s.reset());
        state.staging.lock().release(cb);
        // SAFETY: forwarding.
        unsafe { (state.dispatch.fp.fp_v1_0().reset_command_buffer)(cb, flags) }
    })
}

pub(super) unsafe extern "system" fn reset_command_pool(
    device: vk::Device,
    pool: vk::CommandPool,
    flags: vk::CommandPoolResetFlags,
) -> vk::Result {
    guard_result("vkResetCommandPool", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        {
            // Lock order everywhere: the command buffers, then staging.
            let mut map = state.command_buffers.write();
            let mut staging = state.staging.lock();
            for (cb, s) in map.iter_mut() {
                let s = s.get_mut();
                if s.pool == pool {
                    s.reset();
                    staging.release(*cb);
                }
            }
        }
        // SAFETY: forwarding.
        unsafe { (state.dispatch.fp.fp_v1_0().reset_command_pool)(device, pool, flags) }
    })
}

pub(super) unsafe extern "system" fn destroy_command_pool(
    device: vk::Device,
    pool: vk::CommandPool,
    allocator: *const vk::AllocationCallbacks<'static>,
) {
    guard_value("vkDestroyCommandPool", (), || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return };
        {
            let mut map = state.command_buffers.write();
            let mut staging = state.staging.lock();
            map.retain(|cb, s| {
                let keep = s.get_mut().pool != pool;
                if !keep {
                    staging.release(*cb);
                }
                keep
            });
        }
        // SAFETY: forwarding.
        unsafe { (state.dispatch.fp.fp_v1_0().destroy_command_pool)(device, pool, allocator) }
    })
}

pub(super) unsafe extern "system" fn cmd_bind_pipeline(
    cb: vk::CommandBuffer,
    bind_point: vk::PipelineBindPoint,
    pipeline: vk::Pipeline,
) {
    guard_command("vkCmdBindPipeline", cb, || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return };
        if state.shadows(bind_point) {
            state.with_command_buffer(cb, |s| {
                if let Some(point) = s.bind_point_mut(bind_point) {
                    point.pipeline = pipeline;
                }
            });
        }
        if bind_point != PIPELINE_BIND_POINT_EXECUTION_GRAPH {
            // SAFETY: forwarding.
            unsafe { (state.dispatch.fp.fp_v1_0().cmd_bind_pipeline)(cb, bind_point, pipeline) }
        }
    })
}

pub(super) unsafe extern "system" fn cmd_bind_descriptor_sets(
    cb: vk::CommandBuffer,
    bind_point: vk::PipelineBindPoint,
    layout: vk::PipelineLayout,
    first_set: u32,
    set_count: u32,
    sets: *const vk::DescriptorSet,
    dynamic_offset_count: u32,
    dynamic_offsets: *const u32,
) {
    guard_command("vkCmdBindDescriptorSets", cb, || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return };
        if state.shadows(bind_point) {
            // SAFETY: the application's arrays.
            let (set_list, offsets) = unsafe { (slice(sets, set_count), slice(dynamic_offsets, dynamic_offset_count)) };
            shadow_sets(&state, cb, &[bind_point], layout, first_set, set_list, offsets);
        }
        if bind_point != PIPELINE_BIND_POINT_EXECUTION_GRAPH {
            // SAFETY: forwarding.
            unsafe {
                (state.dispatch.fp.fp_v1_0().cmd_bind_descriptor_sets)(
                    cb,
                    bind_point,
                    layout,
                    first_set,
                    set_count,
                    sets,
                    dynamic_offset_count,
                    dynamic_offsets,
                )
            }
        }
    })
}

/// Notes a descriptor set binding at each of `bind_points` in the shadow state.
pub(super) fn shadow_sets(
    state: &DeviceState,
    cb: vk::CommandBuffer,
    bind_points: &[vk::PipelineBindPoint],
    layout: vk::PipelineLayout,
    first_set: u32,
    sets: &[vk::DescriptorSet],
    offsets: &[u32],
) {
    let info = if offsets.is_empty() { Default::default() } else { state.pipeline_layout(layout) };
    state.with_command_buffer(cb, |s| {
        for &point in bind_points {
            s.bind_sets(point, layout, first_set, sets, offsets, &info.dynamic_counts);
        }
    });
}

pub(super) unsafe extern "system" fn cmd_push_constants(
    cb: vk::CommandBuffer,
    layout: vk::PipelineLayout,
    stages: vk::ShaderStageFlags,
    offset: u32,
    size: u32,
    values: *const c_void,
) {
    guard_command("vkCmdPushConstants", cb, || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return };
        // SAFETY: the application's `size` bytes.
        let bytes = unsafe { slice(values.cast::<u8>(), size) };
        state.with_command_buffer(cb, |s| s.push_constants(layout, stages, offset, bytes));
        // SAFETY: forwarding.
        unsafe { (state.dispatch.fp.fp_v1_0().cmd_push_constants)(cb, layout, stages, offset, size, values) }
    })
}

/// Deep copy of one `VkWriteDescriptorSet` of a push.
///
/// # Safety
/// `write` must be valid for its descriptor type.
unsafe fn copy_write(write: &vk::WriteDescriptorSet<'_>) -> PushedDescriptor {
    let n = write.descriptor_count;
    // SAFETY: the arrays that the descriptor type says are used are valid.
    unsafe {
        PushedDescriptor {
            binding: write.dst_binding,
            array_element: write.dst_array_element,
            descriptor_type: write.descriptor_type,
            images: slice(write.p_image_info, n).iter().map(|i| (i.sampler, i.image_view, i.image_layout)).collect(),
            buffers: slice(write.p_buffer_info, n).iter().map(|b| (b.buffer, b.offset, b.range)).collect(),
            texel_views: slice(write.p_texel_buffer_view, n).to_vec(),
        }
    }
}

/// Deep copies of the writes of a push the shadow state can replay.
///
/// # Safety
/// Every write must be valid for its descriptor type.
pub(super) unsafe fn copy_writes(command: &str, writes: &[vk::WriteDescriptorSet<'_>]) -> Vec<PushedDescriptor> {
    writes
        .iter()
        .filter(|w| {
            let supported = w.p_next.is_null();
            if !supported {
                tracing::warn!("{command}: extended write {:?} is not shadowed", w.descriptor_type);
            }
            supported
        })
        // SAFETY: valid writes (caller's contract).
        .map(|w| unsafe { copy_write(w) })
        .collect()
}

pub(super) unsafe extern "system" fn cmd_push_descriptor_set(
    cb: vk::CommandBuffer,
    bind_point: vk::PipelineBindPoint,
    layout: vk::PipelineLayout,
    set: u32,
    write_count: u32,
    writes: *const vk::WriteDescriptorSet<'static>,
) {
    guard_command("vkCmdPushDescriptorSetKHR", cb, || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return };
        if state.shadows(bind_point) {
            // SAFETY: the application's array of valid writes.
            let copied = unsafe { copy_writes("vkCmdPushDescriptorSetKHR", slice(writes, write_count)) };
            state.with_command_buffer(cb, |s| s.push_set(bind_point, set, PushedSet { layout, writes: copied }));
        }
        if bind_point != PIPELINE_BIND_POINT_EXECUTION_GRAPH {
            if let Some(f) = &state.dispatch.push_descriptor {
                // SAFETY: forwarding.
                unsafe { (f.cmd_push_descriptor_set_khr)(cb, bind_point, layout, set, write_count, writes) }
            }
        }
    })
}
