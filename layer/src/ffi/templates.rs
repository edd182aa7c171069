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

use super::commands::{descriptor_array, DescriptorArray};
use super::guard::guard_command;
use super::lookup::{recording, Recording, ValidCommandBuffer};
use super::objects::{forget_then_forward, forward_then_record};
use super::slice;
use crate::amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH;
use crate::device::{DeviceState, PushTemplate};
use crate::state::command_buffer::{latest_entry, PushedDescriptor};
use ash::vk;
use std::ffi::c_void;

pub(super) unsafe extern "system" fn create_descriptor_update_template(
    device: vk::Device,
    info: *const vk::DescriptorUpdateTemplateCreateInfo<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
    out: *mut vk::DescriptorUpdateTemplate,
) -> vk::Result {
    // SAFETY: valid when non-null (the command's valid usage).
    let create = unsafe { info.as_ref() };
    let forward = |state: &DeviceState| {
        let Some(create) = create else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        let push = create.template_type == vk::DescriptorUpdateTemplateType::PUSH_DESCRIPTORS_KHR;
        let mut below = *create;
        if push && create.pipeline_bind_point == PIPELINE_BIND_POINT_EXECUTION_GRAPH {
            below.pipeline_bind_point = vk::PipelineBindPoint::COMPUTE;
        }
        // SAFETY: forwarding (with the bind point the driver knows).
        unsafe { (state.dispatch.fp.fp_v1_1().create_descriptor_update_template)(device, &below, allocator, out) }
    };
    let record = |state: &DeviceState, handle| {
        // `forward` succeeded, so the create info is there.
        let Some(create) = create else { return };
        if create.template_type != vk::DescriptorUpdateTemplateType::PUSH_DESCRIPTORS_KHR {
            return;
        }
        // SAFETY: the application's entry array.
        let entries = unsafe { slice(create.p_descriptor_update_entries, create.descriptor_update_entry_count) };
        let template = PushTemplate { bind_point: create.pipeline_bind_point, entries: entries.to_vec() };
        state.resources.lock().push_templates.insert(handle, std::sync::Arc::new(template));
    };
    // SAFETY: a valid device and output pointer.
    unsafe { forward_then_record("vkCreateDescriptorUpdateTemplate", device, out, forward, record) }
}

pub(super) unsafe extern "system" fn destroy_descriptor_update_template(
    device: vk::Device,
    template: vk::DescriptorUpdateTemplate,
    allocator: *const vk::AllocationCallbacks<'static>,
) {
    // SAFETY: a valid device; forwarding the application's arguments.
    unsafe {
        forget_then_forward(
            "vkDestroyDescriptorUpdateTemplate",
            device,
            |state| {
                state.resources.lock().push_templates.remove(&template);
            },
            |state| (state.dispatch.fp.fp_v1_1().destroy_descriptor_update_template)(device, template, allocator),
        )
    }
}

/// Keeps the writes a push with `template` makes from the application's
/// `data` in `list` (the set's pushed writes), in place.
///
/// # Safety
/// `data` must hold what the template's entries read (the command's valid usage).
unsafe fn decode_into(list: &mut Vec<PushedDescriptor>, template: &PushTemplate, data: *const c_void) {
    for e in &template.entries {
        let Some(array) = descriptor_array(e.descriptor_type) else {
            tracing::warn!("vkCmdPushDescriptorSetWithTemplateKHR: {:?} entries are not shadowed", e.descriptor_type);
            continue;
        };
        let w = latest_entry(list, e.dst_binding, e.dst_array_element);
        w.reset(e.dst_binding, e.dst_array_element, e.descriptor_type);
        let at = |i: u32| data.cast::<u8>().wrapping_add(e.offset + i as usize * e.stride);
        for i in 0..e.descriptor_count {
            // SAFETY: the entry's element `i` lies in `data` (caller's contract);
            // the application's data need not be aligned.
            unsafe {
                match array {
                    DescriptorArray::Images => {
                        let info = at(i).cast::<vk::DescriptorImageInfo>().read_unaligned();
                        w.images.push((info.sampler, info.image_view, info.image_layout));
                    }
                    DescriptorArray::Buffers => {
                        let info = at(i).cast::<vk::DescriptorBufferInfo>().read_unaligned();
                        w.buffers.push((info.buffer, info.offset, info.range));
                    }
                    DescriptorArray::TexelViews => w.texel_views.push(at(i).cast::<vk::BufferView>().read_unaligned()),
                }
            }
        }
    }
}

/// Keeps a push with `template` in the shadow state when it is a push
/// template of the compute or graph bind point; returns its bind point
/// (`None` for a template the layer does not know).
///
/// # Safety
/// `data` must hold what the template's entries read.
pub(super) unsafe fn shadow_template_push(
    state: &mut Recording<'_>,
    template: vk::DescriptorUpdateTemplate,
    layout: vk::PipelineLayout,
    set: u32,
    data: *const c_void,
) -> Option<vk::PipelineBindPoint> {
    let kept = state.resources.lock().push_templates.get(&template).cloned()?;
    let point = kept.bind_point;
    if point == PIPELINE_BIND_POINT_EXECUTION_GRAPH || point == vk::PipelineBindPoint::COMPUTE {
        state.shadow(|s| {
            if let Some(list) = s.pushed_writes(point, set, layout) {
                // SAFETY: the template's data (caller's contract).
                unsafe { decode_into(list, &kept, data) };
            }
        });
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
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdPushDescriptorSetWithTemplateKHR", valid, || {
        recording(valid, |state| {
            // SAFETY: the template's data (the command's valid usage).
            let point = unsafe { shadow_template_push(state, template, layout, set, data) };
            if point != Some(PIPELINE_BIND_POINT_EXECUTION_GRAPH) {
                if let Some(f) = &state.dispatch.push_descriptor {
                    // SAFETY: forwarding.
                    unsafe { (f.cmd_push_descriptor_set_with_template_khr)(cb, template, layout, set, data) }
                }
            }
        });
    })
}
