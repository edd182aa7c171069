//! The host's view of graph dispatch status: a small host-visible buffer
//! per device with one `u32` slot per recorded graph dispatch (a ring). At
//! the end of each dispatch the recorder copies the dispatch's
//! `GraphContext.status` into its slot; [`report`](super::report) reads and
//! clears the slot once the submission is known to have finished.

use crate::graph::scratch::STATUS_WORDS;
use crate::state::DeviceState;
use ash::vk;

/// Slots per device; a slot is reused after this many recorded dispatches.
pub(crate) const SLOTS: u32 = 1024;
/// Words of the mapping.
const WORDS: u32 = SLOTS * STATUS_WORDS;

pub(crate) struct StatusBuffer {
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    /// `SLOTS` slots of `STATUS_WORDS` words, mapped for the buffer's
    /// lifetime (host-coherent).
    mapped: *mut u32,
    next: u32,
}

// SAFETY: the mapping is only touched under the device's `status` mutex.
unsafe impl Send for StatusBuffer {}

impl StatusBuffer {
    /// Creates the buffer in host-visible, host-coherent memory.
    pub(crate) fn create(device: &DeviceState) -> Result<Self, vk::Result> {
        let fp = device.dispatch.fp.fp_v1_0();
        let d = device.handle();
        let info = vk::BufferCreateInfo::default()
            .size(u64::from(WORDS) * 4)
            .usage(vk::BufferUsageFlags::TRANSFER_DST)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        let mut buffer = vk::Buffer::null();
        // SAFETY: valid device and create info.
        check(unsafe { (fp.create_buffer)(d, &info, std::ptr::null(), &mut buffer) })?;
        let mut requirements = vk::MemoryRequirements::default();
        // SAFETY: the buffer was just created.
        unsafe { (fp.get_buffer_memory_requirements)(d, buffer, &mut requirements) };
        let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let props = &device.physical.memory_properties;
        let Some(memory_type) = (0..props.memory_type_count).find(|&i| {
            requirements.memory_type_bits & (1 << i) != 0
                && props.memory_types[i as usize].property_flags.contains(wanted)
        }) else {
            // SAFETY: ours, unused.
            unsafe { (fp.destroy_buffer)(d, buffer, std::ptr::null()) };
            return Err(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
        };
        let alloc = vk::MemoryAllocateInfo::default().allocation_size(requirements.size).memory_type_index(memory_type);
        let mut memory = vk::DeviceMemory::null();
        let mut mapped = std::ptr::null_mut();
        // SAFETY: (block) valid device, allocation info, and objects created here.
        let result = unsafe {
            check((fp.allocate_memory)(d, &alloc, std::ptr::null(), &mut memory))
                .and_then(|()| check((fp.bind_buffer_memory)(d, buffer, memory, 0)))
                .and_then(|()| {
                    check((fp.map_memory)(d, memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty(), &mut mapped))
                })
        };
        if let Err(e) = result {
            // SAFETY: ours, unused (null handles are ignored).
            unsafe {
                (fp.destroy_buffer)(d, buffer, std::ptr::null());
                (fp.free_memory)(d, memory, std::ptr::null());
            }
            return Err(e);
        }
        let status = StatusBuffer { buffer, memory, mapped: mapped.cast(), next: 0 };
        for word in 0..WORDS {
            status.write(word, 0);
        }
        Ok(status)
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
        unsafe { self.mapped.add((word % WORDS) as usize).read_volatile() }
    }

    fn write(&self, word: u32, value: u32) {
        // SAFETY: `word % WORDS` lies inside the mapping.
        unsafe { self.mapped.add((word % WORDS) as usize).write_volatile(value) };
    }

    pub(crate) fn destroy(&self, device: &DeviceState) {
        let fp = device.dispatch.fp.fp_v1_0();
        // SAFETY: the device is idle at destruction; the objects are ours.
        unsafe {
            (fp.unmap_memory)(device.handle(), self.memory);
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

/// Reserves a status slot for a dispatch about to be recorded (creating the
/// buffer on first use); `None` when no buffer can be had (then the
/// dispatch still runs, unreported).
pub(crate) fn reserve_slot(device: &DeviceState) -> Option<(vk::Buffer, u32)> {
    let mut status = device.status.lock();
    if status.is_none() {
        match StatusBuffer::create(device) {
            Ok(created) => *status = Some(created),
            Err(e) => {
                tracing::warn!("graph status readback unavailable ({e:?}): overflows will not be reported");
                return None;
            }
        }
    }
    let status = status.as_mut()?;
    Some((status.buffer, status.allocate_slot()))
}
