//! Descriptor set layouts and pipeline layouts on emulated devices: the
//! layer records each set layout's dynamic-descriptor count and each
//! pipeline layout's sets and push-constant ranges, for the shadow state
//! the graph dispatch saves and restores.

use super::objects::{forget_then_forward, forward_then_record};
use super::slice;
use crate::device::DeviceState;
use crate::state::pipeline_layout::PipelineLayoutInfo;
use ash::vk;
use std::sync::Arc;

pub(super) unsafe extern "system" fn create_descriptor_set_layout(
    device: vk::Device,
    create_info: *const vk::DescriptorSetLayoutCreateInfo<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
    layout: *mut vk::DescriptorSetLayout,
) -> vk::Result {
    let record = |state: &DeviceState, handle| {
        // SAFETY: valid create info and its bindings.
        let bindings = unsafe { slice((*create_info).p_bindings, (*create_info).binding_count) };
        let dynamic: u32 = bindings
            .iter()
            .filter(|b| {
                matches!(
                    b.descriptor_type,
                    vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC
                )
            })
            .map(|b| b.descriptor_count)
            .sum();
        state.resources.lock().set_layout_dynamic_counts.insert(handle, dynamic);
    };
    // SAFETY: a valid device and output pointer; forwarding the application's arguments.
    unsafe {
        forward_then_record(
            "vkCreateDescriptorSetLayout",
            device,
            layout,
            |state| (state.dispatch.fp.fp_v1_0().create_descriptor_set_layout)(device, create_info, allocator, layout),
            record,
        )
    }
}

pub(super) unsafe extern "system" fn destroy_descriptor_set_layout(
    device: vk::Device,
    layout: vk::DescriptorSetLayout,
    allocator: *const vk::AllocationCallbacks<'static>,
) {
    // SAFETY: a valid device; forwarding the application's arguments.
    unsafe {
        forget_then_forward(
            "vkDestroyDescriptorSetLayout",
            device,
            |state| {
                state.resources.lock().set_layout_dynamic_counts.remove(&layout);
            },
            |state| (state.dispatch.fp.fp_v1_0().destroy_descriptor_set_layout)(device, layout, allocator),
        )
    }
}

pub(super) unsafe extern "system" fn create_pipeline_layout(
    device: vk::Device,
    create_info: *const vk::PipelineLayoutCreateInfo<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
    layout: *mut vk::PipelineLayout,
) -> vk::Result {
    let record = |state: &DeviceState, handle| {
        // SAFETY: valid create info and its set layouts.
        let (sets, ranges) = unsafe {
            let info = &*create_info;
            (
                slice(info.p_set_layouts, info.set_layout_count),
                slice(info.p_push_constant_ranges, info.push_constant_range_count),
            )
        };
        let mut resources = state.resources.lock();
        let dynamic_counts =
            sets.iter().map(|s| resources.set_layout_dynamic_counts.get(s).copied().unwrap_or(0)).collect();
        let info = PipelineLayoutInfo { set_layouts: sets.to_vec(), push_ranges: ranges.to_vec(), dynamic_counts };
        resources.pipeline_layouts.insert(handle, Arc::new(info));
    };
    // SAFETY: a valid device and output pointer; forwarding the application's arguments.
    unsafe {
        forward_then_record(
            "vkCreatePipelineLayout",
            device,
            layout,
            |state| (state.dispatch.fp.fp_v1_0().create_pipeline_layout)(device, create_info, allocator, layout),
            record,
        )
    }
}

pub(super) unsafe extern "system" fn destroy_pipeline_layout(
    device: vk::Device,
    layout: vk::PipelineLayout,
    allocator: *const vk::AllocationCallbacks<'static>,
) {
    // SAFETY: a valid device; forwarding the application's arguments.
    unsafe {
        forget_then_forward(
            "vkDestroyPipelineLayout",
            device,
            |state| {
                state.resources.lock().pipeline_layouts.remove(&layout);
            },
            |state| (state.dispatch.fp.fp_v1_0().destroy_pipeline_layout)(device, layout, allocator),
        )
    }
}
