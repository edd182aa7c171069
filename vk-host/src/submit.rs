//! Queues and command buffers: the compute family, a resettable command
//! pool, a primary command buffer, a fenced submit that waits, and the
//! global memory barrier every recording ends or joins passes with.

use std::time::{Duration, Instant};

use ash::vk;

use crate::{vk_err, Error, Result};

/// The first queue family of `pd` with compute.
pub fn compute_family(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Result<u32> {
    // SAFETY: valid physical device.
    let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
    families
        .iter()
        .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
        .map(|i| i as u32)
        .ok_or_else(|| Error::Missing("no compute queue family".into()))
}

/// A command pool of `family` whose buffers can be reset one by one.
pub fn command_pool(d: &ash::Device, family: u32) -> Result<vk::CommandPool> {
    let info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(family)
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    // SAFETY: valid device and create info.
    unsafe { d.create_command_pool(&info, None) }.map_err(vk_err("vkCreateCommandPool"))
}

/// A primary command buffer of `pool` (freed with the pool).
pub fn command_buffer(d: &ash::Device, pool: vk::CommandPool) -> Result<vk::CommandBuffer> {
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(1);
    // SAFETY: valid device and pool.
    let cbs = unsafe { d.allocate_command_buffers(&info) }.map_err(vk_err("vkAllocateCommandBuffers"))?;
    cbs.first().copied().ok_or_else(|| Error::Missing("vkAllocateCommandBuffers returned nothing".into()))
}

/// Submits `cb` to `queue` and waits for it; returns the wall-clock time
/// of submit and wait.
///
/// # Safety
/// `cb` is executable and not pending; the caller owns `queue` (external
/// synchronization) for the call.
pub unsafe fn submit_and_wait(d: &ash::Device, queue: vk::Queue, cb: vk::CommandBuffer) -> Result<Duration> {
    // SAFETY: valid device.
    let fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }.map_err(vk_err("vkCreateFence"))?;
    let cbs = [cb];
    let submit = vk::SubmitInfo::default().command_buffers(&cbs);
    let start = Instant::now();
    // SAFETY: the caller's contract; the fence is unsignalled.
    let result = unsafe { d.queue_submit(queue, &[submit], fence) }.map_err(vk_err("vkQueueSubmit")).and_then(|()| {
        // SAFETY: the fence was submitted.
        unsafe { d.wait_for_fences(&[fence], true, u64::MAX) }.map_err(vk_err("vkWaitForFences"))
    });
    let elapsed = start.elapsed();
    // SAFETY: the fence is signalled or was never submitted.
    unsafe { d.destroy_fence(fence, None) };
    result.map(|()| elapsed)
}

/// Records a global memory barrier: `src` accesses of `src_stage` made
/// visible to `dst` accesses of `dst_stage`.
pub fn memory_barrier(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    (src_stage, src): (vk::PipelineStageFlags, vk::AccessFlags),
    (dst_stage, dst): (vk::PipelineStageFlags, vk::AccessFlags),
) {
    let barrier = vk::MemoryBarrier::default().src_access_mask(src).dst_access_mask(dst);
    // SAFETY: `cb` is recording outside a render pass (the caller's recording).
    unsafe { d.cmd_pipeline_barrier(cb, src_stage, dst_stage, vk::DependencyFlags::empty(), &[barrier], &[], &[]) };
}
