//! Descriptor update templates for push descriptors at the execution-graph
//! bind point (`vkCmdPushDescriptorSetWithTemplateKHR`), on emulated devices.
//!
//! A push-descriptor template names its bind point at creation. The driver
//! does not know the graph bind point, so such a template is created below
//! for `VK_PIPELINE_BIND_POINT_COMPUTE` (the layer replays graph pushes at
//! the compute bind point anyway), and the layer keeps every push template's
//! entries. A push with a graph template is decoded into ordinary writes
//! and kept in the shadow state, like `vkCmdPushDescriptorSetKHR` at the
//! graph bind point; a push with a compute template also goes to the driver
//! and is kept for the state restored after graph dispatches. Templates for
//! descriptor sets (not pushes) pass through untouched.

use super::guard::{guard_command, guard_result, guard_value};
use super::lookup::device_of;
use super::slice;
use crate::amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH;
use crate::device::{DeviceState, PushTemplate};
use crate::state::command_buffer::{PushedDescriptor, PushedSet};
use ash::vk;
use std::ffi::c_void;

pub(super) unsafe extern "system" fn create_descriptor_update_template(
    device: vk::Device,
    info: *const vk::DescriptorUpdateTemplateCreateInfo<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
    out: *mut vk::DescriptorUpdateTemplate,
) -> vk::Result {
    guard_result("vkCreateDescriptorUpdateTemplate", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: valid when non-null (the command's valid usage).
        let Some(create) = (unsafe { info.as_ref() }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        let push = create.template_type == vk::DescriptorUpdateTemplateType::PUSH_DESCRIPTORS_KHR;
        let graph = push && create.pipeline_bind_point == PIPELINE_BIND_POINT_EXECUTION_GRAPH;
        let mut below = *create;
        if graph {
            below.pipeline_bind_point = vk::PipelineBindPoint::COMPUTE;
        }
        // SAFETY: forwarding (with the bind point the driver knows).
        let result =
            unsafe { (state.dispatch.fp.fp_v1_1().create_descriptor_update_template)(device, &below, allocator, out) };
        if result == vk::Result::SUCCESS && push {
            // SAFETY: the application's entry array; the handle was written.
            let (entries, handle) =
                unsafe { (slice(create.p_descriptor_update_entries, create.descriptor_update_entry_count), *out) };
            let template = PushTemplate { bind_point: create.pipeline_bind_point, entries: entries.to_vec() };
            state.resources.lock().push_templates.insert(handle, template);
        }
        result
    })
}

pub(super) unsafe extern "system" fn destroy_descriptor_update_template(
    device: vk::Device,
    template: vk::DescriptorUpdateTemplate,
    allocator: *const vk::AllocationCallbacks<'static>,
) {
    guard_value("vkDestroyDescriptorUpdateTemplate", (), || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return };
        state.resources.lock().push_templates.remove(&template);
        // SAFETY: forwarding.
        unsafe { (state.dispatch.fp.fp_v1_1().destroy_descriptor_update_template)(device, template, allocator) }
    })
}

/// The writes a push with `template` makes from the application's `data`.
///
/// # Safety
/// `data` must hold what the template's entries read (the command's valid usage).
unsafe fn decode(template: &PushTemplate, data: *const c_void) -> Vec<PushedDescriptor> {
    let mut writes = Vec::new();
    for e in &template.entries {
        let at = |i: u32| data.cast::<u8>().wrapping_add(e.offset + i as usize * e.stride);
        let mut w = PushedDescriptor {
            binding: e.dst_binding,
            array_element: e.dst_array_element,
            descriptor_type: e.descriptor_type,
            images: Vec::new(),
            buffers: Vec::new(),
            texel_views: Vec::new(),
        };
        for i in 0..e.descriptor_count {
            // SAFETY: the entry's element `i` lies in `data` (caller's contract);
            // the application's data need not be aligned.
            unsafe {
                match e.descriptor_type {
                    vk::DescriptorType::SAMPLER
                    | vk::DescriptorType::COMBINED_IMAGE_SAMPLER
                    | vk::DescriptorType::SAMPLED_IMAGE
                    | vk::DescriptorType::STORAGE_IMAGE
                    | vk::DescriptorType::INPUT_ATTACHMENT => {
                        let info = at(i).cast::<vk::DescriptorImageInfo>().read_unaligned();
                        w.images.push((info.sampler, info.image_view, info.image_layout));
                    }
                    vk::DescriptorType::UNIFORM_BUFFER
                    | vk::DescriptorType::STORAGE_BUFFER
                    | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
                    | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC => {
                        let info = at(i).cast::<vk::DescriptorBufferInfo>().read_unaligned();
                        w.buffers.push((info.buffer, info.offset, info.range));
                    }
                    vk::DescriptorType::UNIFORM_TEXEL_BUFFER | vk::DescriptorType::STORAGE_TEXEL_BUFFER => {
                        w.texel_views.push(at(i).cast::<vk::BufferView>().read_unaligned());
                    }
                    other => {
                        tracing::warn!("vkCmdPushDescriptorSetWithTemplateKHR: {other:?} entries are not shadowed");
                        break;
                    }
                }
            }
        }
        writes.push(w);
    }
    writes
}

/// Keeps a push with `template` in the shadow state when it is a push
/// template of the compute or graph bind point; returns its bind point
/// (`None` for a template the layer does not know).
///
/// # Safety
/// `data` must hold what the template's entries read.
pub(super) unsafe fn shadow_template_push(
    state: &DeviceState,
    cb: vk::CommandBuffer,
    template: vk::DescriptorUpdateTemplate,
    layout: vk::PipelineLayout,
    set: u32,
    data: *const c_void,
) -> Option<vk::PipelineBindPoint> {
    let kept = state.resources.lock().push_templates.get(&template).cloned()?;
    let point = kept.bind_point;
    if point == PIPELINE_BIND_POINT_EXECUTION_GRAPH || point == vk::PipelineBindPoint::COMPUTE {
        // SAFETY: the template's data (caller's contract).
        let writes = unsafe { decode(&kept, data) };
        state.with_command_buffer(cb, |s| s.push_set(point, set, PushedSet { layout, writes }));
    }
    Some(point)
}

pub(super) unsafe extern "system" fn cmd_push_descriptor_set_with_template(
    cb: vk::CommandBuffer,
    template: vk::DescriptorUpdateTemplate,
    layout: vk::PipelineLayout,
    set: u32,
    data: *const c_void,
) {
    guard_command("vkCmdPushDescriptorSetWithTemplateKHR", cb, || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return };
        // SAFETY: the template's data (the command's valid usage).
        let point = unsafe { shadow_template_push(&state, cb, template, layout, set, data) };
        if point != Some(PIPELINE_BIND_POINT_EXECUTION_GRAPH) {
            if let Some(f) = &state.dispatch.push_descriptor {
                // SAFETY: forwarding.
                unsafe { (f.cmd_push_descriptor_set_with_template_khr)(cb, template, layout, set, data) }
            }
        }
    })
}
