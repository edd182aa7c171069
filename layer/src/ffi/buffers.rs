//! Buffers on emulated devices: execution-graph scratch buffers get the
//! usage the runtime needs in place of the AMDX scratch bit, and their
//! device addresses are tracked (the runtime finds scratch by address).

use super::chain::{find_in_chain, OwnedChain};
use super::guard::{guard_result, guard_value};
use super::lookup::device_of;
use super::objects::forget_then_forward;
use crate::amdx;
use crate::device::ScratchBuffer;
use ash::vk;

/// Usages the runtime needs on scratch memory: storage (payload ring and
/// bookkeeping), indirect (dispatch arguments), transfer dst (fills and host
/// payload uploads), transfer src (the status word copied out for the
/// host), device address (kernels reach scratch by pointer).
const SCRATCH_USAGE: u64 = vk::BufferUsageFlags::STORAGE_BUFFER.as_raw() as u64
    | vk::BufferUsageFlags::INDIRECT_BUFFER.as_raw() as u64
    | vk::BufferUsageFlags::TRANSFER_DST.as_raw() as u64
    | vk::BufferUsageFlags::TRANSFER_SRC.as_raw() as u64
    | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS.as_raw() as u64;

/// The usage the driver sees for an application usage.
pub(crate) fn translated_usage(usage: u64) -> u64 {
    if usage & amdx::BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH != 0 {
        (usage & !amdx::BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH) | SCRATCH_USAGE
    } else {
        usage
    }
}

pub(super) unsafe extern "system" fn create_buffer(
    device: vk::Device,
    create_info: *const vk::BufferCreateInfo<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
    buffer: *mut vk::Buffer,
) -> vk::Result {
    guard_result("vkCreateBuffer", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        let create = state.dispatch.fp.fp_v1_0().create_buffer;
        // SAFETY: valid create info.
        let info = unsafe { &*create_info };
        // SAFETY: valid chain.
        let usage2 =
            unsafe { find_in_chain::<vk::BufferUsageFlags2CreateInfoKHR>(info.p_next) }.map(|u| u.usage.as_raw());
        let usage = usage2.unwrap_or(info.usage.as_raw() as u64);
        let scratch = usage & amdx::BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH != 0;
        let keep_usage2 = state.physical.has_maintenance5;
        if !scratch && (usage2.is_none() || keep_usage2) {
            // SAFETY: forwarding.
            return unsafe { create(device, create_info, allocator, buffer) };
        }
        let driver_usage = translated_usage(usage);
        // SAFETY: valid chain.
        let mut chain = unsafe { OwnedChain::copy_from(info.p_next) };
        match chain.get_mut::<vk::BufferUsageFlags2CreateInfoKHR>() {
            Some(u2) if keep_usage2 => u2.usage = vk::BufferUsageFlags2KHR::from_raw(driver_usage),
            _ => {
                // maintenance5 missing below: the 64-bit usage becomes the 32-bit one.
                if driver_usage >> 32 != 0 {
                    tracing::warn!("vkCreateBuffer: usage bits {:#x} need maintenance5; dropped", driver_usage >> 32);
                }
                chain.remove(vk::StructureType::BUFFER_USAGE_FLAGS_2_CREATE_INFO_KHR);
            }
        }
        let mut copy = *info;
        copy.usage = vk::BufferUsageFlags::from_raw(driver_usage as u32);
        copy.p_next = chain.link();
        // SAFETY: `copy` and its chain live across the call.
        let result = unsafe { create(device, &copy, allocator, buffer) };
        if result == vk::Result::SUCCESS && scratch {
            // SAFETY: written on success.
            let handle = unsafe { *buffer };
            let tracked = ScratchBuffer { size: info.size, address: None };
            state.resources.lock().scratch_buffers.insert(handle, tracked);
        }
        result
    })
}

pub(super) unsafe extern "system" fn destroy_buffer(
    device: vk::Device,
    buffer: vk::Buffer,
    allocator: *const vk::AllocationCallbacks<'static>,
) {
    // SAFETY: a valid device; forwarding the application's arguments.
    unsafe {
        forget_then_forward(
            "vkDestroyBuffer",
            device,
            |state| {
                let mut resources = state.resources.lock();
                if let Some(ScratchBuffer { address: Some(address), .. }) = resources.scratch_buffers.remove(&buffer) {
                    resources.scratch_by_address.remove(&address);
                }
            },
            |state| (state.dispatch.fp.fp_v1_0().destroy_buffer)(device, buffer, allocator),
        )
    }
}

/// `vkGetBufferDeviceAddress` and its KHR/EXT aliases (the device is 1.3, so
/// the core entry point serves all three).
pub(super) unsafe extern "system" fn get_buffer_device_address(
    device: vk::Device,
    info: *const vk::BufferDeviceAddressInfo<'static>,
) -> vk::DeviceAddress {
    guard_value("vkGetBufferDeviceAddress", 0, || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return 0 };
        // SAFETY: forwarding.
        let address = unsafe { (state.dispatch.fp.fp_v1_2().get_buffer_device_address)(device, info) };
        // SAFETY: valid info.
        let buffer = unsafe { (*info).buffer };
        let mut resources = state.resources.lock();
        if let Some(scratch) = resources.scratch_buffers.get_mut(&buffer) {
            scratch.address = Some(address);
            resources.scratch_by_address.insert(address, buffer);
        }
        address
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_usage_is_translated() {
        let app =
            amdx::BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS.as_raw() as u64;
        let driver = translated_usage(app);
        assert_eq!(driver & amdx::BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH, 0);
        assert_eq!(driver & SCRATCH_USAGE, SCRATCH_USAGE);
        let plain = vk::BufferUsageFlags::UNIFORM_BUFFER.as_raw() as u64;
        assert_eq!(translated_usage(plain), plain);
    }
}
