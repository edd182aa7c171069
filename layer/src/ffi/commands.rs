//! Command-buffer hooks on emulated devices: lifetime (allocate, begin,
//! reset, free, pool reset/destroy) and the shadow state of what is bound at
//! the compute and execution-graph bind points. Binds at the graph bind point
//! never reach the driver, which does not know it.

use super::guard::guard_result;
use super::hook::{general, short};
use super::lookup::{device_of, with_command_buffer, with_entry, Recording, ValidCommandBuffer};
use super::objects::forget_then_forward;
use super::slice;
use crate::amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH;
use crate::device::{retire_command_buffers, CommandBufferEntry, DeviceState};
use crate::state::command_buffer::{latest_entry, BindPointState, Shadow};
use ash::vk;
use std::ffi::c_void;
use std::sync::Arc;

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
                map.insert(cb, Arc::new(CommandBufferEntry::new(info.command_pool, secondary)));
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
    let forget = |state: &DeviceState| {
        retire_command_buffers();
        let mut map = state.command_buffers.write();
        let mut staging = state.staging.lock();
        // SAFETY: the application's array.
        for cb in unsafe { slice(buffers, count) } {
            map.remove(cb);
            staging.release(*cb);
        }
    };
    // SAFETY: a valid device; forwarding the application's arguments.
    unsafe {
        forget_then_forward("vkFreeCommandBuffers", device, forget, |state| {
            (state.dispatch.fp.fp_v1_0().free_command_buffers)(device, pool, count, buffers)
        })
    }
}

pub(super) unsafe extern "system" fn begin_command_buffer(
    cb: vk::CommandBuffer,
    info: *const vk::CommandBufferBeginInfo<'static>,
) -> vk::Result {
    guard_result("vkBeginCommandBuffer", || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: the command's own command buffer.
        unsafe { with_command_buffer(&state, cb, |s| s.reset()) };
        state.staging.lock().release(cb);
        // SAFETY: forwarding.
        unsafe { (state.dispatch.fp.fp_v1_0().begin_command_buffer)(cb, info) }
    })
}

pub(super) unsafe extern "system" fn end_command_buffer(cb: vk::CommandBuffer) -> vk::Result {
    guard_result("vkEndCommandBuffer", || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: the command's own command buffer.
        let (poisoned, statuses) =
            unsafe { with_command_buffer(&state, cb, |s| (s.poisoned, !s.status_slots.is_empty())) };
        if statuses && !poisoned {
            // The status words the finishers (and entry passes) of its graph
            // dispatches may write, before the host reads them once the
            // submission has finished: one barrier for all of them, where
            // the GPU has nothing left to run behind it (one after each
            // dispatch cost each about 1 µs on the H200: chain 23.2 -> 22.0).
            let barrier = vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ);
            state.dispatch.cmd_memory_barrier(
                cb,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                &barrier,
            );
        }
        // SAFETY: forwarding; the driver's command buffer is ended either way.
        let result = unsafe { (state.dispatch.fp.fp_v1_0().end_command_buffer)(cb) };
        if poisoned {
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
        // SAFETY: the command's own command buffer.
        unsafe { with_command_buffer(&state, cb, |s| s.reset()) };
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
            for (cb, entry) in map.iter_mut() {
                if entry.pool == pool {
                    // SAFETY: the application synchronises the pool's use
                    // with this command, and so every command of its
                    // command buffers (each one's "Host Synchronization").
                    unsafe { with_entry(entry, |s| s.reset()) };
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
    // SAFETY: a valid device; forwarding the application's arguments.
    unsafe {
        forget_then_forward(
            "vkDestroyCommandPool",
            device,
            |state| {
                retire_command_buffers();
                let mut map = state.command_buffers.write();
                let mut staging = state.staging.lock();
                map.retain(|cb, entry| {
                    let keep = entry.pool != pool;
                    if !keep {
                        staging.release(*cb);
                    }
                    keep
                });
            },
            |state| (state.dispatch.fp.fp_v1_0().destroy_command_pool)(device, pool, allocator),
        )
    }
}

pub(super) unsafe extern "system" fn cmd_bind_pipeline(
    cb: vk::CommandBuffer,
    bind_point: vk::PipelineBindPoint,
    pipeline: vk::Pipeline,
) {
    let bind = move |state: &mut Recording<'_>| {
        if state.shadows(bind_point) {
            state.shadow(|s| {
                if let Some(point) = s.bind_point_mut(bind_point) {
                    point.pipeline = pipeline;
                }
            });
        }
        if bind_point != PIPELINE_BIND_POINT_EXECUTION_GRAPH {
            // SAFETY: forwarding.
            unsafe { (state.dispatch.fp.fp_v1_0().cmd_bind_pipeline)(cb, bind_point, pipeline) }
        }
        true
    };
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    if !short(valid, bind) {
        general("vkCmdBindPipeline", valid, |state| {
            bind(state);
        });
    }
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
    let call = BindSets { cb, bind_point, layout, first_set, set_count, sets, dynamic_offset_count, dynamic_offsets };
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    let kept = short(valid, |state| {
        let kept = !state.shadows(bind_point)
            || (dynamic_offset_count == 0
                // SAFETY: the application's array.
                && state.shadow(|s| s.rebind(bind_point, layout, first_set, unsafe { call.sets() })));
        if kept {
            // SAFETY: the application's arguments.
            unsafe { call.forward(state) };
        }
        kept
    });
    if !kept {
        general("vkCmdBindDescriptorSets", valid, move |state| {
            if state.shadows(bind_point) {
                // SAFETY: the application's arrays.
                let (set_list, offsets) = unsafe { (call.sets(), slice(dynamic_offsets, dynamic_offset_count)) };
                shadow_sets(state, &[bind_point], layout, first_set, set_list, offsets);
            }
            // SAFETY: the application's arguments.
            unsafe { call.forward(state) };
        });
    }
}

/// The arguments of a `vkCmdBindDescriptorSets`.
#[derive(Clone, Copy)]
struct BindSets {
    cb: vk::CommandBuffer,
    bind_point: vk::PipelineBindPoint,
    layout: vk::PipelineLayout,
    first_set: u32,
    set_count: u32,
    sets: *const vk::DescriptorSet,
    dynamic_offset_count: u32,
    dynamic_offsets: *const u32,
}

impl BindSets {
    /// # Safety
    /// The application's arguments.
    #[inline(always)]
    unsafe fn sets<'a>(self) -> &'a [vk::DescriptorSet] {
        // SAFETY: the application's array.
        unsafe { slice(self.sets, self.set_count) }
    }

    /// Forwards the call to the driver, but for the execution-graph bind
    /// point, which only the layer knows.
    ///
    /// # Safety
    /// The application's arguments.
    #[inline(always)]
    unsafe fn forward(self, state: &DeviceState) {
        if self.bind_point != PIPELINE_BIND_POINT_EXECUTION_GRAPH {
            // SAFETY: forwarding.
            unsafe {
                (state.dispatch.fp.fp_v1_0().cmd_bind_descriptor_sets)(
                    self.cb,
                    self.bind_point,
                    self.layout,
                    self.first_set,
                    self.set_count,
                    self.sets,
                    self.dynamic_offset_count,
                    self.dynamic_offsets,
                )
            }
        }
    }
}

/// Notes a descriptor set binding at each of `bind_points` in the shadow
/// state (the hooks' general path: their short one rebinds handles).
pub(super) fn shadow_sets(
    state: &mut Recording<'_>,
    bind_points: &[vk::PipelineBindPoint],
    layout: vk::PipelineLayout,
    first_set: u32,
    sets: &[vk::DescriptorSet],
    offsets: &[u32],
) {
    if offsets.is_empty() {
        state.shadow(|s| {
            for &point in bind_points {
                s.bind_sets(point, layout, first_set, sets, offsets, &[]);
            }
        });
        return;
    }
    // The layout's dynamic counts, from the command buffer's last one when
    // it is the same (no lock of the device's resources, no reference count).
    let known = state.shadow(|s| s.last_layout.take()).filter(|(l, _)| *l == layout);
    let (_, counts) = known.unwrap_or_else(|| (layout, state.pipeline_layout(layout).dynamic_counts.clone()));
    state.shadow(|s| {
        for &point in bind_points {
            s.bind_sets(point, layout, first_set, sets, offsets, &counts);
        }
        s.last_layout = Some((layout, counts));
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
    let forward = move |state: &Recording<'_>| {
        // SAFETY: forwarding.
        unsafe { (state.dispatch.fp.fp_v1_0().cmd_push_constants)(cb, layout, stages, offset, size, values) }
    };
    // SAFETY: the application's `size` bytes.
    let bytes = move || unsafe { slice(values.cast::<u8>(), size) };
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    let kept = short(valid, |state| {
        let kept = state.shadow(|s| s.push_constants_again(layout, stages, offset, bytes()));
        if kept {
            forward(state);
        }
        kept
    });
    if !kept {
        general("vkCmdPushConstants", valid, move |state| {
            state.shadow(|s| s.push_constants(layout, stages, offset, bytes()));
            forward(state);
        });
    }
}

/// Which array of a descriptor write its type reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DescriptorArray {
    Images,
    Buffers,
    TexelViews,
}

/// The array a write of `t` reads (`None`: a type the shadow state does not
/// keep, such as inline uniform blocks).
pub(super) fn descriptor_array(t: vk::DescriptorType) -> Option<DescriptorArray> {
    match t {
        vk::DescriptorType::SAMPLER
        | vk::DescriptorType::COMBINED_IMAGE_SAMPLER
        | vk::DescriptorType::SAMPLED_IMAGE
        | vk::DescriptorType::STORAGE_IMAGE
        | vk::DescriptorType::INPUT_ATTACHMENT => Some(DescriptorArray::Images),
        vk::DescriptorType::UNIFORM_BUFFER
        | vk::DescriptorType::STORAGE_BUFFER
        | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
        | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC => Some(DescriptorArray::Buffers),
        vk::DescriptorType::UNIFORM_TEXEL_BUFFER | vk::DescriptorType::STORAGE_TEXEL_BUFFER => {
            Some(DescriptorArray::TexelViews)
        }
        _ => None,
    }
}

/// Keeps the writes of a push to set `set` of `layout` at `point` in the
/// shadow state, in place: once a set's entries exist, a push allocates
/// nothing.
///
/// # Safety
/// Every write must be valid for its descriptor type.
pub(super) unsafe fn shadow_writes(
    s: &mut Shadow,
    command: &str,
    (point, layout, set): (vk::PipelineBindPoint, vk::PipelineLayout, u32),
    writes: &[vk::WriteDescriptorSet<'_>],
) {
    // SAFETY: valid writes (caller's contract).
    if unsafe { repush(s, (point, layout, set), writes) } {
        return;
    }
    let Some(list) = s.pushed_writes(point, set, layout) else { return };
    for w in writes {
        let Some(array) = descriptor_array(w.descriptor_type).filter(|_| w.p_next.is_null()) else {
            tracing::warn!("{command}: write {:?} (extended or unkept) is not shadowed", w.descriptor_type);
            continue;
        };
        let e = latest_entry(list, w.dst_binding, w.dst_array_element);
        e.reset(w.dst_binding, w.dst_array_element, w.descriptor_type);
        let n = w.descriptor_count;
        // SAFETY: the array the write's type reads holds `n` elements
        // (caller's contract); the others may be garbage and are not read.
        unsafe {
            match array {
                DescriptorArray::Images => {
                    e.images.extend(slice(w.p_image_info, n).iter().map(|i| (i.sampler, i.image_view, i.image_layout)))
                }
                DescriptorArray::Buffers => {
                    e.buffers.extend(slice(w.p_buffer_info, n).iter().map(|b| (b.buffer, b.offset, b.range)))
                }
                DescriptorArray::TexelViews => e.texel_views.extend_from_slice(slice(w.p_texel_buffer_view, n)),
            }
        }
    }
}

/// [`shadow_writes`] where a push repeats the set's last one in shape (the
/// common case): the same layout, and each write the entry at its place,
/// of the same binding, element, type and count. Its elements are
/// overwritten where they lie, one pass, which is what the general path
/// leaves (it moves each entry to the end in turn, keeping their order).
/// False where the shapes differ; the general path then writes every
/// write again, those already overwritten with the same values. Also the
/// hooks' short path: it cannot panic (see [`super::hook`]). False too
/// while a push is mirrored (`Shadow::mirror`): the general path settles
/// it.
///
/// # Safety
/// Every write must be valid for its descriptor type.
#[inline(always)]
pub(super) unsafe fn repush(
    s: &mut Shadow,
    (point, layout, set): (vk::PipelineBindPoint, vk::PipelineLayout, u32),
    writes: &[vk::WriteDescriptorSet<'_>],
) -> bool {
    // SAFETY: caller's contract.
    s.sets_if_settled(point).is_some_and(|state| unsafe { repush_at(state, layout, set, writes) })
}

/// [`repush`] at one bind point's state.
///
/// # Safety
/// Every write must be valid for its descriptor type.
#[inline(always)]
pub(super) unsafe fn repush_at(
    state: &mut BindPointState,
    layout: vk::PipelineLayout,
    set: u32,
    writes: &[vk::WriteDescriptorSet<'_>],
) -> bool {
    let Some(Some(pushed)) = state.pushed_sets.get_mut(set as usize) else {
        return false;
    };
    if pushed.layout != layout || pushed.writes.len() != writes.len() {
        return false;
    }
    for (e, w) in pushed.writes.iter_mut().zip(writes) {
        let n = w.descriptor_count as usize;
        if !w.p_next.is_null()
            || (e.binding, e.array_element, e.descriptor_type)
                != (w.dst_binding, w.dst_array_element, w.descriptor_type)
        {
            return false;
        }
        // SAFETY: the array the write's type reads holds `n` elements
        // (caller's contract).
        unsafe {
            match descriptor_array(w.descriptor_type) {
                Some(DescriptorArray::Buffers) if e.buffers.len() == n => {
                    for (kept, b) in e.buffers.iter_mut().zip(slice(w.p_buffer_info, w.descriptor_count)) {
                        *kept = (b.buffer, b.offset, b.range);
                    }
                }
                Some(DescriptorArray::Images) if e.images.len() == n => {
                    for (kept, i) in e.images.iter_mut().zip(slice(w.p_image_info, w.descriptor_count)) {
                        *kept = (i.sampler, i.image_view, i.image_layout);
                    }
                }
                Some(DescriptorArray::TexelViews) if e.texel_views.len() == n => {
                    for (kept, &v) in e.texel_views.iter_mut().zip(slice(w.p_texel_buffer_view, w.descriptor_count)) {
                        *kept = v;
                    }
                }
                _ => return false,
            }
        }
    }
    true
}

pub(super) unsafe extern "system" fn cmd_push_descriptor_set(
    cb: vk::CommandBuffer,
    bind_point: vk::PipelineBindPoint,
    layout: vk::PipelineLayout,
    set: u32,
    write_count: u32,
    writes: *const vk::WriteDescriptorSet<'static>,
) {
    let forward = move |state: &Recording<'_>| {
        if bind_point != PIPELINE_BIND_POINT_EXECUTION_GRAPH {
            if let Some(f) = &state.dispatch.push_descriptor {
                // SAFETY: forwarding.
                unsafe { (f.cmd_push_descriptor_set_khr)(cb, bind_point, layout, set, write_count, writes) }
            }
        }
    };
    // SAFETY: the application's array of valid writes.
    let list = move || unsafe { slice(writes, write_count) };
    let key = (bind_point, layout, set);
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    let kept = short(valid, |state| {
        // SAFETY: valid writes.
        let kept = !state.shadows(bind_point) || state.shadow(|s| unsafe { repush(s, key, list()) });
        if kept {
            forward(state);
        }
        kept
    });
    if !kept {
        general("vkCmdPushDescriptorSetKHR", valid, move |state| {
            if state.shadows(bind_point) {
                // SAFETY: valid writes.
                state.shadow(|s| unsafe { shadow_writes(s, "vkCmdPushDescriptorSetKHR", key, list()) });
            }
            forward(state);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    /// (binding, buffer) of each pushed entry of set 0 at the compute bind point, in order.
    fn entries(s: &Shadow) -> Vec<(u32, u64)> {
        let pushed = s.compute.pushed_sets[0].as_ref().unwrap();
        pushed.writes.iter().map(|w| (w.binding, w.buffers[0].0.as_raw())).collect()
    }

    /// Pushes storage buffers `(binding, buffer)` to set 0 with layout 1.
    fn push(s: &mut Shadow, writes: &[(u32, u64)]) {
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = writes
            .iter()
            .map(|&(_, b)| [vk::DescriptorBufferInfo { buffer: vk::Buffer::from_raw(b), offset: 0, range: 16 }])
            .collect();
        let list: Vec<vk::WriteDescriptorSet<'_>> = writes
            .iter()
            .zip(&infos)
            .map(|(&(binding, _), info)| {
                vk::WriteDescriptorSet::default()
                    .dst_binding(binding)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info)
            })
            .collect();
        let key = (vk::PipelineBindPoint::COMPUTE, vk::PipelineLayout::from_raw(1), 0);
        // SAFETY: every write names one valid buffer info.
        unsafe { shadow_writes(s, "test", key, &list) };
    }

    /// A push of the same shape overwrites in place; one that differs
    /// part-way leaves what the general path alone would, in its order.
    #[test]
    fn a_repeated_push_keeps_what_the_general_path_would() {
        let mut s = Shadow::default();
        push(&mut s, &[(0, 7), (1, 8)]);
        push(&mut s, &[(0, 9), (1, 10)]);
        assert_eq!(entries(&s), [(0, 9), (1, 10)], "same shape: in place");
        push(&mut s, &[(0, 11), (2, 5)]);
        assert_eq!(entries(&s), [(1, 10), (0, 11), (2, 5)], "binding 1 kept, the pushed ones last in push order");
        push(&mut s, &[(1, 3)]);
        assert_eq!(entries(&s), [(0, 11), (2, 5), (1, 3)], "fewer writes: the general path");
    }
}
