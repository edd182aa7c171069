//! The host's view of graph dispatch status: a small host-visible buffer
//! per device with one slot of `STATUS_WORDS` words per recorded graph
//! dispatch (a ring). The finisher of each level writes the dispatch's
//! status into its slot by device address (after the inputs, after each
//! level, and the final status); `ffi::report` reads and clears the slot
//! once the submission is known to have finished.
//!
//! Moved from `ffi` so that `crate::device`, which holds each device's
//! buffer, imports nothing from the tier above it; it is created on first
//! use by `DeviceState::reserve_status_slot`.

use super::gpu::Gpu;
use super::scratch::STATUS_WORDS;
use crate::mapped::MappedBuffer;
use ash::vk;

/// Where one recorded dispatch leaves its status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusTarget {
    /// The slot of the device's ring (what the host reads).
    pub slot: u32,
    /// The device address of the slot's words (what the finishers write).
    pub address: u64,
}

/// Slots per device; a slot is reused after this many recorded dispatches.
pub(crate) const SLOTS: u32 = 1024;
/// Words of the mapping.
const WORDS: u32 = SLOTS * STATUS_WORDS;

pub(crate) struct StatusBuffer {
    /// `SLOTS` slots of `STATUS_WORDS` words.
    pub memory: MappedBuffer,
    next: u32,
}

// SAFETY: the mapping is only touched under the device's `status` mutex.
unsafe impl Send for StatusBuffer {}

impl StatusBuffer {
    /// Creates the buffer in host-visible, host-coherent memory, zeroed.
    pub(crate) fn create(device: &Gpu) -> Result<Self, vk::Result> {
        let memory = MappedBuffer::create(
            &device.dispatch,
            &device.physical.memory_properties,
            u64::from(WORDS) * 4,
            vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
            // Read by the host, written by a few GPU stores a level.
            vk::MemoryPropertyFlags::HOST_CACHED,
        )?;
        let status = StatusBuffer { memory, next: 0 };
        for word in 0..WORDS {
            status.write(word, 0);
        }
        Ok(status)
    }

    /// The device address of `slot`'s words (the level finishers write them).
    pub(crate) fn address(&self, slot: u32) -> u64 {
        self.memory.address + u64::from((slot % SLOTS) * STATUS_WORDS) * 4
    }

    /// The next slot of the ring.
    pub(crate) fn allocate_slot(&mut self) -> u32 {
        let slot = self.next;
        self.next = (self.next + 1) % SLOTS;
        slot
    }

    /// Reads a slot's status words (finished submissions only) and clears them.
    pub(crate) fn take(&self, slot: u32) -> Vec<u32> {
        let first = (slot % SLOTS) * STATUS_WORDS;
        (first..first + STATUS_WORDS)
            .map(|word| {
                let value = self.read(word);
                self.write(word, 0);
                value
            })
            .collect()
    }

    fn read(&self, word: u32) -> u32 {
        // SAFETY: `word % WORDS` lies inside the mapping; host-coherent
        // memory the GPU no longer writes for a finished submission.
        unsafe { self.words().add((word % WORDS) as usize).read_volatile() }
    }

    fn write(&self, word: u32, value: u32) {
        // SAFETY: `word % WORDS` lies inside the mapping.
        unsafe { self.words().add((word % WORDS) as usize).write_volatile(value) };
    }

    fn words(&self) -> *mut u32 {
        self.memory.ptr().cast()
    }

    pub(crate) fn destroy(&self, device: &Gpu) {
        self.memory.destroy(&device.dispatch);
    }
}
