//! Staging memory for the host data of `vkCmdDispatchGraphAMDX` (level 0:
//! the entry nodes' `NodeDispatch`es, payloads and grid starts): written
//! into host-visible buffers the layer owns when the dispatch is recorded,
//! and read in place, by device address, by the first level's kernels (in
//! device-local memory where the device has host-visible device-local
//! memory, as NVIDIA's with resizable BAR). Copying it into scratch first
//! cost a transfer and a barrier; moving it through the command stream
//! (`vkCmdUpdateBuffer`) cost 212 µs of GPU time for 1.8 MiB on an H100.
//!
//! A command buffer keeps the blocks it used until it is reset, begun
//! again, freed, or its pool is reset or destroyed (the application may not
//! do any of these while it is pending); then they go back to the device's
//! free list for the next recording.

use crate::dispatch::mapped::{HostRange, MappedBuffer};
use crate::dispatch::DeviceDispatch;
use ash::vk;
use std::collections::HashMap;

/// Smallest block; blocks are powers of two, so that freed ones fit later requests.
const MIN_BLOCK: u64 = 64 << 10;

/// A block a command buffer holds: its buffer, mapping and device address.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reserved {
    pub buffer: vk::Buffer,
    /// The mapping, which the command buffer holds; the GPU reads it only
    /// once submitted.
    pub host: HostRange,
    pub address: u64,
}

impl Reserved {
    /// Copies `data` to byte `offset` of the block; false (nothing written)
    /// when it does not fit.
    pub(crate) fn write(&self, offset: u64, data: &[u8]) -> bool {
        self.host.write(offset, data)
    }

    /// Copies `words` to byte `offset` (false when they do not fit).
    pub(crate) fn write_words(&self, offset: u64, words: &[u32]) -> bool {
        self.host.write_words(offset, words)
    }

    /// Zeroes `len` bytes from `offset` (false when they do not fit).
    pub(crate) fn zero(&self, offset: u64, len: u64) -> bool {
        self.host.zero(offset, len)
    }
}

/// The device's blocks: free ones, and those held by command buffers.
#[derive(Default)]
pub(crate) struct StagingPool {
    free: Vec<MappedBuffer>,
    held: HashMap<vk::CommandBuffer, Vec<MappedBuffer>>,
}

impl StagingPool {
    /// A block of at least `bytes` that `cb` holds from now on (host data
    /// the GPU reads, or the GPU's writes for the host to read); the error
    /// when no memory can be had. New blocks are made on `device` in memory
    /// of its `memory_properties`.
    pub(crate) fn reserve(
        &mut self,
        device: &DeviceDispatch,
        memory_properties: &vk::PhysicalDeviceMemoryProperties,
        cb: vk::CommandBuffer,
        bytes: u64,
    ) -> Result<Reserved, vk::Result> {
        let block = self.take(device, memory_properties, bytes)?;
        let found = Reserved { buffer: block.buffer, host: block.host(), address: block.address };
        self.held.entry(cb).or_default().push(block);
        Ok(found)
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
                // Indirect: level 0's launches when `grids.comp` sizes them.
                vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST
                    | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
                    | vk::BufferUsageFlags::INDIRECT_BUFFER,
                vk::MemoryPropertyFlags::DEVICE_LOCAL,
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
