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

use crate::dispatch::DeviceDispatch;
use crate::mapped::MappedBuffer;
use ash::vk;
use std::collections::HashMap;

/// Smallest block; blocks are powers of two, so that freed ones fit later requests.
const MIN_BLOCK: u64 = 64 << 10;

/// The device's blocks: free ones, and those held by command buffers.
#[derive(Default)]
pub(crate) struct StagingPool {
    free: Vec<MappedBuffer>,
    held: HashMap<vk::CommandBuffer, Vec<MappedBuffer>>,
}

// SAFETY: the mappings are only touched under the device's `staging` mutex
// (writes while recording) or by the GPU.
unsafe impl Send for StagingPool {}

impl StagingPool {
    /// Copies `parts` one after the other (each at a 16-byte aligned
    /// offset) into a block that `cb` holds from now on; the block's buffer
    /// and the offset of each part. `None` when no memory can be had (the
    /// caller falls back to `vkCmdUpdateBuffer`). New blocks are made on
    /// `device` in memory of its `memory_properties`.
    pub(crate) fn stage(
        &mut self,
        device: &DeviceDispatch,
        memory_properties: &vk::PhysicalDeviceMemoryProperties,
        cb: vk::CommandBuffer,
        parts: &[&[u8]],
    ) -> Option<(vk::Buffer, Vec<u64>)> {
        let mut offsets = Vec::with_capacity(parts.len());
        let mut total = 0u64;
        for part in parts {
            offsets.push(total);
            total = (total + part.len() as u64).next_multiple_of(16);
        }
        let block = self
            .take(device, memory_properties, total)
            .map_err(|e| tracing::warn!("staging memory unavailable ({e:?}): host records go inline"))
            .ok()?;
        for (part, &offset) in parts.iter().zip(&offsets) {
            // SAFETY: `offset + part.len() <= total <= block.size`, inside the mapping.
            unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), block.ptr().add(offset as usize), part.len()) };
        }
        let buffer = block.buffer;
        self.held.entry(cb).or_default().push(block);
        Some((buffer, offsets))
    }

    /// A block of at least `bytes` that `cb` holds from now on, for the GPU
    /// to write and the host to read (statistics): its buffer and mapping.
    pub(crate) fn reserve(
        &mut self,
        device: &DeviceDispatch,
        memory_properties: &vk::PhysicalDeviceMemoryProperties,
        cb: vk::CommandBuffer,
        bytes: u64,
    ) -> Option<(vk::Buffer, *mut u8)> {
        let block = self
            .take(device, memory_properties, bytes)
            .map_err(|e| tracing::warn!("statistics memory unavailable ({e:?}): this dispatch is not counted"))
            .ok()?;
        let found = (block.buffer, block.ptr());
        self.held.entry(cb).or_default().push(block);
        Some(found)
    }

    /// A free block of at least `bytes`, or a new one (blocks are powers of
    /// two, written by the host or by transfers).
    fn take(
        &mut self,
        device: &DeviceDispatch,
        memory_properties: &vk::PhysicalDeviceMemoryProperties,
        bytes: u64,
    ) -> Result<MappedBuffer, vk::Result> {
        match self.free.iter().position(|b| b.size >= bytes) {
            Some(i) => Ok(self.free.swap_remove(i)),
            None => MappedBuffer::create(
                device,
                memory_properties,
                bytes.max(MIN_BLOCK).next_power_of_two(),
                vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
            ),
        }
    }

    /// `cb` no longer needs its blocks (reset, begun again or freed).
    pub(crate) fn release(&mut self, cb: vk::CommandBuffer) {
        if let Some(blocks) = self.held.remove(&cb) {
            self.free.extend(blocks);
        }
    }

    /// Destroys every block (device destruction: nothing is pending).
    pub(crate) fn destroy(&mut self, device: &DeviceDispatch) {
        for block in self.free.drain(..).chain(self.held.drain().flat_map(|(_, b)| b)) {
            block.destroy(device);
        }
    }
}
