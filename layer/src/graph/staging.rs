//! Staging memory for the host data of `vkCmdDispatchGraphAMDX` (the entry
//! records and their payloads): copied into host-visible buffers the layer
//! owns when the dispatch is recorded, and into scratch by a
//! `vkCmdCopyBuffer` when it runs. `vkCmdUpdateBuffer` moves that data
//! through the command stream instead: on an H100, 1.8 MiB of it took
//! 212 µs of GPU time and most of a millisecond and a half of recording.
//!
//! A command buffer keeps the blocks it used until it is reset, begun
//! again, freed, or its pool is reset or destroyed (the application may not
//! do any of these while it is pending); then they go back to the device's
//! free list for the next recording.

use crate::state::DeviceState;
use ash::vk;
use std::collections::HashMap;

/// Smallest block (a multiple keeps the free list short).
const MIN_BLOCK: u64 = 64 << 10;

/// One host-visible, host-coherent buffer, mapped for its lifetime.
pub(crate) struct Block {
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    mapped: *mut u8,
    pub size: u64,
}

/// The device's blocks: free ones, and those held by command buffers.
#[derive(Default)]
pub(crate) struct StagingPool {
    free: Vec<Block>,
    held: HashMap<vk::CommandBuffer, Vec<Block>>,
}

// SAFETY: the mappings are only touched under the device's `staging` mutex
// (writes while recording) or by the GPU.
unsafe impl Send for StagingPool {}

impl StagingPool {
    /// Copies `parts` one after the other (each at a 16-byte aligned
    /// offset) into a block that `cb` holds from now on; the block's buffer
    /// and the offset of each part. `None` when no memory can be had (the
    /// caller falls back to `vkCmdUpdateBuffer`).
    pub(crate) fn stage(
        &mut self,
        device: &DeviceState,
        cb: vk::CommandBuffer,
        parts: &[&[u8]],
    ) -> Option<(vk::Buffer, Vec<u64>)> {
        let mut offsets = Vec::with_capacity(parts.len());
        let mut total = 0u64;
        for part in parts {
            offsets.push(total);
            total = (total + part.len() as u64).next_multiple_of(16);
        }
        let block = match self.free.iter().position(|b| b.size >= total) {
            Some(i) => self.free.swap_remove(i),
            None => Block::create(device, total.max(MIN_BLOCK).next_power_of_two())
                .map_err(|e| tracing::warn!("staging memory unavailable ({e:?}): host records go inline"))
                .ok()?,
        };
        for (part, &offset) in parts.iter().zip(&offsets) {
            // SAFETY: `offset + part.len() <= total <= block.size`, inside the mapping.
            unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), block.mapped.add(offset as usize), part.len()) };
        }
        let buffer = block.buffer;
        self.held.entry(cb).or_default().push(block);
        Some((buffer, offsets))
    }

    /// `cb` no longer needs its blocks (reset, begun again or freed).
    pub(crate) fn release(&mut self, cb: vk::CommandBuffer) {
        if let Some(blocks) = self.held.remove(&cb) {
            self.free.extend(blocks);
        }
    }

    /// Destroys every block (device destruction: nothing is pending).
    pub(crate) fn destroy(&mut self, device: &DeviceState) {
        for block in self.free.drain(..).chain(self.held.drain().flat_map(|(_, b)| b)) {
            block.destroy(device);
        }
    }
}

impl Block {
    fn create(device: &DeviceState, size: u64) -> Result<Block, vk::Result> {
        let fp = device.dispatch.fp.fp_v1_0();
        let d = device.handle();
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(vk::BufferUsageFlags::TRANSFER_SRC)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        let mut block =
            Block { buffer: vk::Buffer::null(), memory: vk::DeviceMemory::null(), mapped: std::ptr::null_mut(), size };
        // SAFETY: valid device and create info.
        check(unsafe { (fp.create_buffer)(d, &info, std::ptr::null(), &mut block.buffer) })?;
        let mut requirements = vk::MemoryRequirements::default();
        // SAFETY: the buffer was just created.
        unsafe { (fp.get_buffer_memory_requirements)(d, block.buffer, &mut requirements) };
        let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let props = &device.physical.memory_properties;
        let memory_type = (0..props.memory_type_count).find(|&i| {
            requirements.memory_type_bits & (1 << i) != 0
                && props.memory_types[i as usize].property_flags.contains(wanted)
        });
        let result = match memory_type {
            None => Err(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY),
            Some(memory_type) => {
                let alloc =
                    vk::MemoryAllocateInfo::default().allocation_size(requirements.size).memory_type_index(memory_type);
                let mut mapped = std::ptr::null_mut();
                // SAFETY: (block) valid device, allocation info, and objects created here.
                unsafe {
                    check((fp.allocate_memory)(d, &alloc, std::ptr::null(), &mut block.memory))
                        .and_then(|()| check((fp.bind_buffer_memory)(d, block.buffer, block.memory, 0)))
                        .and_then(|()| {
                            check((fp.map_memory)(
                                d,
                                block.memory,
                                0,
                                vk::WHOLE_SIZE,
                                vk::MemoryMapFlags::empty(),
                                &mut mapped,
                            ))
                        })
                }
                .map(|()| block.mapped = mapped.cast())
            }
        };
        match result {
            Ok(()) => Ok(block),
            Err(e) => {
                block.destroy(device);
                Err(e)
            }
        }
    }

    fn destroy(&self, device: &DeviceState) {
        let fp = device.dispatch.fp.fp_v1_0();
        // SAFETY: ours and idle (null handles are ignored; freeing memory unmaps it).
        unsafe {
            (fp.destroy_buffer)(device.handle(), self.buffer, std::ptr::null());
            (fp.free_memory)(device.handle(), self.memory, std::ptr::null());
        }
    }
}

fn check(result: vk::Result) -> Result<(), vk::Result> {
    if result == vk::Result::SUCCESS {
        Ok(())
    } else {
        Err(result)
    }
}
