//! `VK_KHR_maintenance6`'s stage-addressed binding commands on emulated
//! devices: `vkCmdBindDescriptorSets2KHR`, `vkCmdPushConstants2KHR` and
//! `vkCmdPushDescriptorSet2KHR` (and their Vulkan 1.4 core names).
//!
//! They name shader stages, not bind points; a binding affects every bind
//! point whose stages `stageFlags` touches (`VkBindDescriptorSetsInfo`). The
//! execution-graph bind point's node shaders are compute shaders, so
//! `VK_SHADER_STAGE_COMPUTE_BIT` binds at both the compute and the
//! execution-graph bind point: the shadow state notes both (graph dispatches
//! read the one, and restore the other after them), and the driver gets the
//! call as it was. On devices that draw mesh nodes the graphics bind point
//! is shadowed too (a graph's draws bind their own graphics state, and the
//! application's is restored after them), so graphics stages reach it.
//! A push to the compute and the execution-graph bind point that both
//! already hold alike is shadowed once, at the compute point; the graph
//! point mirrors it until its sets are next read or changed
//! (`Shadow::mirror`): the same push written twice cost 238 instructions a
//! call on Mesa 25, about +33 ns on the H200 machine.
//! `vkCmdPushDescriptorSetWithTemplate2KHR` follows its template's bind
//! point (see [`super::templates`]);
//! `vkCmdSetDescriptorBufferOffsets2EXT` and
//! `vkCmdBindDescriptorBufferEmbeddedSamplers2EXT` follow their stage flags
//! like the others (see [`super::descriptor_buffer`]).

use super::commands::{repush_at, shadow_sets, shadow_writes};
use super::guard::guard_command;
use super::hook::{general, short};
use super::lookup::{recording, ValidCommandBuffer};
use super::slice;
use super::templates::shadow_template_push;
use crate::amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH;
use crate::state::command_buffer::Shadow;
use ash::vk;

/// The stages of the graphics bind point's pipelines (Vulkan's
/// `ALL_GRAPHICS` and the mesh shading stages).
const GRAPHICS_STAGES: vk::ShaderStageFlags = vk::ShaderStageFlags::from_raw(
    vk::ShaderStageFlags::ALL_GRAPHICS.as_raw()
        | vk::ShaderStageFlags::TASK_EXT.as_raw()
        | vk::ShaderStageFlags::MESH_EXT.as_raw(),
);

/// Which bind points a stage-addressed binding for `stages` reaches that
/// the layer shadows: (the compute and the execution-graph one, the
/// graphics one where the device draws mesh nodes, `mesh`).
#[inline(always)]
fn reached(stages: vk::ShaderStageFlags, mesh: bool) -> (bool, bool) {
    (stages.contains(vk::ShaderStageFlags::COMPUTE), mesh && stages.intersects(GRAPHICS_STAGES))
}

/// The bind points a stage-addressed binding for `stages` reaches that the
/// layer shadows (see [`reached`]).
fn shadowed_points(stages: vk::ShaderStageFlags, mesh: bool) -> &'static [vk::PipelineBindPoint] {
    const GRAPHICS: vk::PipelineBindPoint = vk::PipelineBindPoint::GRAPHICS;
    match reached(stages, mesh) {
        (true, true) => &[vk::PipelineBindPoint::COMPUTE, PIPELINE_BIND_POINT_EXECUTION_GRAPH, GRAPHICS],
        (true, false) => COMPUTE_AND_GRAPH,
        (false, true) => &[GRAPHICS],
        (false, false) => &[],
    }
}

/// The bind points the compute stage reaches.
const COMPUTE_AND_GRAPH: &[vk::PipelineBindPoint] =
    &[vk::PipelineBindPoint::COMPUTE, PIPELINE_BIND_POINT_EXECUTION_GRAPH];

pub(super) unsafe extern "system" fn cmd_bind_descriptor_sets2(
    cb: vk::CommandBuffer,
    info: *const vk::BindDescriptorSetsInfoKHR<'static>,
) {
    // SAFETY: valid when non-null (the command's valid usage).
    let Some(i) = (unsafe { info.as_ref() }) else { return forward_null(cb, |m6| m6.cmd_bind_descriptor_sets2_khr) };
    // SAFETY: the application's arrays.
    let sets = move || unsafe { slice(i.p_descriptor_sets, i.descriptor_set_count) };
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    let kept = short(valid, |state| {
        let Some(m6) = &state.device().dispatch.maintenance6 else { return true };
        let (compute, graphics) = reached(i.stage_flags, state.mesh_enqueue);
        let kept = !(compute || graphics)
            || (i.dynamic_offset_count == 0
                && state.shadow(|s| s.rebind_stages(compute, graphics, i.layout, i.first_set, sets())));
        if kept {
            // SAFETY: forwarding.
            unsafe { (m6.cmd_bind_descriptor_sets2_khr)(cb, info) }
        }
        kept
    });
    if !kept {
        general("vkCmdBindDescriptorSets2KHR", valid, move |state| {
            let Some(m6) = &state.device().dispatch.maintenance6 else { return };
            // SAFETY: the application's array.
            let offsets = unsafe { slice(i.p_dynamic_offsets, i.dynamic_offset_count) };
            let points = shadowed_points(i.stage_flags, state.mesh_enqueue);
            shadow_sets(state, points, i.layout, i.first_set, sets(), offsets);
            // SAFETY: forwarding.
            unsafe { (m6.cmd_bind_descriptor_sets2_khr)(cb, info) }
        });
    }
}

pub(super) unsafe extern "system" fn cmd_push_constants2(
    cb: vk::CommandBuffer,
    info: *const vk::PushConstantsInfoKHR<'static>,
) {
    // SAFETY: valid when non-null.
    let Some(i) = (unsafe { info.as_ref() }) else { return forward_null(cb, |m6| m6.cmd_push_constants2_khr) };
    // SAFETY: the application's `size` bytes.
    let bytes = move || unsafe { slice(i.p_values.cast::<u8>(), i.size) };
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    let kept = short(valid, |state| {
        let Some(m6) = &state.device().dispatch.maintenance6 else { return true };
        let kept = state.shadow(|s| s.push_constants_again(i.layout, i.stage_flags, i.offset, bytes()));
        if kept {
            // SAFETY: forwarding.
            unsafe { (m6.cmd_push_constants2_khr)(cb, info) }
        }
        kept
    });
    if !kept {
        general("vkCmdPushConstants2KHR", valid, move |state| {
            let Some(m6) = &state.device().dispatch.maintenance6 else { return };
            state.shadow(|s| s.push_constants(i.layout, i.stage_flags, i.offset, bytes()));
            // SAFETY: forwarding.
            unsafe { (m6.cmd_push_constants2_khr)(cb, info) }
        });
    }
}

pub(super) unsafe extern "system" fn cmd_push_descriptor_set2(
    cb: vk::CommandBuffer,
    info: *const vk::PushDescriptorSetInfoKHR<'static>,
) {
    // SAFETY: valid when non-null.
    let Some(i) = (unsafe { info.as_ref() }) else { return forward_null(cb, |m6| m6.cmd_push_descriptor_set2_khr) };
    // SAFETY: the application's array of valid writes.
    let writes = move || unsafe { slice(i.p_descriptor_writes, i.descriptor_write_count) };
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    let kept = short(valid, |state| {
        let Some(m6) = &state.device().dispatch.maintenance6 else { return true };
        let points = shadowed_points(i.stage_flags, state.mesh_enqueue);
        // SAFETY: valid writes.
        let kept = state.shadow(|s| unsafe { repush_points(s, points, (i.layout, i.set), writes()) });
        if kept {
            // SAFETY: forwarding.
            unsafe { (m6.cmd_push_descriptor_set2_khr)(cb, info) }
        }
        kept
    });
    if !kept {
        general("vkCmdPushDescriptorSet2KHR", valid, move |state| {
            let Some(m6) = &state.device().dispatch.maintenance6 else { return };
            let points = shadowed_points(i.stage_flags, state.mesh_enqueue);
            state.shadow(|s| {
                for &point in points {
                    // SAFETY: valid writes.
                    unsafe { shadow_writes(s, "vkCmdPushDescriptorSet2KHR", (point, i.layout, i.set), writes()) };
                }
                if points == COMPUTE_AND_GRAPH {
                    s.mirror(i.set);
                }
            });
            // SAFETY: forwarding.
            unsafe { (m6.cmd_push_descriptor_set2_khr)(cb, info) }
        });
    }
}

/// The short path's shadow of a push to `points` (see `commands::repush`):
/// a push to the compute and the graph bind point whose set the graph
/// point mirrors (`Shadow::mirror`, made by the general path) is written at
/// the compute point alone; any other, at each point. False where a point
/// declines: the general path then writes them all.
///
/// # Safety
/// Every write must be valid for its descriptor type.
#[inline(always)]
unsafe fn repush_points(
    s: &mut Shadow,
    points: &[vk::PipelineBindPoint],
    (layout, set): (vk::PipelineLayout, u32),
    writes: &[vk::WriteDescriptorSet<'_>],
) -> bool {
    if points == COMPUTE_AND_GRAPH {
        if let Some(compute) = s.mirrored_compute(set) {
            // SAFETY: caller's contract.
            return unsafe { repush_at(compute, layout, set, writes) };
        }
    }
    // Each point, where this set is not mirrored (another set may be).
    points.iter().all(|&p| {
        // SAFETY: caller's contract.
        s.push_at_unless_mirrored(p, set).is_some_and(|state| unsafe { repush_at(state, layout, set, writes) })
    })
}

/// Forwards a call whose info pointer is null (invalid usage the driver
/// may report) as it was, unshadowed; `entry` picks its entry point.
#[cold]
fn forward_null<I>(
    cb: vk::CommandBuffer,
    entry: impl FnOnce(&ash::khr::maintenance6::DeviceFn) -> unsafe extern "system" fn(vk::CommandBuffer, *const I),
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("a VK_KHR_maintenance6 command", valid, || {
        recording(valid, |state| {
            if let Some(m6) = &state.dispatch.maintenance6 {
                // SAFETY: forwarding the application's null pointer.
                unsafe { entry(m6)(cb, std::ptr::null()) }
            }
        });
    })
}

pub(super) unsafe extern "system" fn cmd_push_descriptor_set_with_template2(
    cb: vk::CommandBuffer,
    info: *const vk::PushDescriptorSetWithTemplateInfoKHR<'static>,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdPushDescriptorSetWithTemplate2KHR", valid, || {
        recording(valid, |state| {
            let Some(m6) = &state.device().dispatch.maintenance6 else { return };
            // SAFETY: valid when non-null.
            let Some(i) = (unsafe { info.as_ref() }) else { return };
            // SAFETY: the template's data (the command's valid usage).
            let point = unsafe { shadow_template_push(state, i.descriptor_update_template, i.layout, i.set, i.p_data) };
            if point != Some(PIPELINE_BIND_POINT_EXECUTION_GRAPH) {
                // SAFETY: forwarding.
                unsafe { (m6.cmd_push_descriptor_set_with_template2_khr)(cb, info) }
            }
        });
    })
}

pub(super) unsafe extern "system" fn cmd_set_descriptor_buffer_offsets2(
    cb: vk::CommandBuffer,
    info: *const vk::SetDescriptorBufferOffsetsInfoEXT<'static>,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdSetDescriptorBufferOffsets2EXT", valid, || {
        recording(valid, |state| {
            let Some(m6) = &state.device().dispatch.maintenance6 else { return };
            // SAFETY: valid when non-null.
            if let Some(i) = unsafe { info.as_ref() } {
                // SAFETY: the application's arrays of `set_count` elements.
                let (indices, offsets) =
                    unsafe { (slice(i.p_buffer_indices, i.set_count), slice(i.p_offsets, i.set_count)) };
                let points = shadowed_points(i.stage_flags, state.mesh_enqueue);
                state.shadow(|s| {
                    for &point in points {
                        s.set_buffer_offsets(point, i.layout, i.first_set, indices, offsets);
                    }
                });
            }
            // SAFETY: forwarding.
            unsafe { (m6.cmd_set_descriptor_buffer_offsets2_ext)(cb, info) }
        });
    })
}

pub(super) unsafe extern "system" fn cmd_bind_descriptor_buffer_embedded_samplers2(
    cb: vk::CommandBuffer,
    info: *const vk::BindDescriptorBufferEmbeddedSamplersInfoEXT<'static>,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdBindDescriptorBufferEmbeddedSamplers2EXT", valid, || {
        recording(valid, |state| {
            let Some(m6) = &state.device().dispatch.maintenance6 else { return };
            // SAFETY: valid when non-null.
            if let Some(i) = unsafe { info.as_ref() } {
                let points = shadowed_points(i.stage_flags, state.mesh_enqueue);
                state.shadow(|s| {
                    for &point in points {
                        s.bind_embedded_samplers(point, i.layout, i.set);
                    }
                });
            }
            // SAFETY: forwarding.
            unsafe { (m6.cmd_bind_descriptor_buffer_embedded_samplers2_ext)(cb, info) }
        });
    })
}
