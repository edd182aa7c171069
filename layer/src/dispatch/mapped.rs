//! Buffers the layer owns in host-visible, host-coherent memory, mapped for
//! their whole lifetime: the status ring the level finishers write into
//! (`graph::status`) and the staging blocks of host dispatches, which the
//! first level's kernels read in place (`graph::staging`). Both are reached
//! by device address.
//!
//! Part of the driver façade (see [`super`]): the mapping is a raw pointer,
//! reached only through [`HostRange`]'s bounds-checked methods. It takes
//! the device's memory properties as an argument, so that the runtime's
//! pools can hold its buffers without this module naming them.

use super::DeviceDispatch;
use ash::vk;

pub(crate) struct MappedBuffer {
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    /// The mapping of all `size` bytes.
    mapped: *mut u8,
    pub size: u64,
    /// The buffer's device address (0 unless created with
    /// `SHADER_DEVICE_ADDRESS` usage).
    pub address: u64,
}

// SAFETY: the mapping is ordinary host memory owned by the buffer, with no
// tie to the thread that mapped it.
unsafe impl Send for MappedBuffer {}

impl MappedBuffer {
    /// A buffer of `size` bytes with `usage` in host-visible, host-coherent
    /// memory of the device's `memory_properties`, with the `prefer`red
    /// properties too where a memory type has them; on failure nothing is
    /// left behind.
    pub(crate) fn create(
        device: &DeviceDispatch,
        memory_properties: &vk::PhysicalDeviceMemoryProperties,
        size: u64,
        usage: vk::BufferUsageFlags,
        prefer: vk::MemoryPropertyFlags,
    ) -> Result<Self, vk::Result> {
        let fp = device.fp.fp_v1_0();
        let d = device.fp.handle();
        let info = vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        let mut b = MappedBuffer {
            buffer: vk::Buffer::null(),
            memory: vk::DeviceMemory::null(),
            mapped: std::ptr::null_mut(),
            size,
            address: 0,
        };
        // SAFETY: valid device and create info.
        check(unsafe { (fp.create_buffer)(d, &info, std::ptr::null(), &mut b.buffer) })?;
        let mut requirements = vk::MemoryRequirements::default();
        // SAFETY: the buffer was just created.
        unsafe { (fp.get_buffer_memory_requirements)(d, b.buffer, &mut requirements) };
        let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let props = memory_properties;
        let with = |flags: vk::MemoryPropertyFlags| {
            (0..props.memory_type_count).find(|&i| {
                requirements.memory_type_bits & (1 << i) != 0
                    && props.memory_types[i as usize].property_flags.contains(flags)
            })
        };
        let by_address = usage.contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS);
        let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let result = match with(wanted | prefer).or_else(|| with(wanted)) {
            None => Err(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY),
            Some(memory_type) => {
                let mut alloc =
                    vk::MemoryAllocateInfo::default().allocation_size(requirements.size).memory_type_index(memory_type);
                if by_address {
                    alloc = alloc.push_next(&mut flags);
                }
                let mut mapped = std::ptr::null_mut();
                // SAFETY: (block) valid device, allocation info, and objects created here.
                unsafe {
                    check((fp.allocate_memory)(d, &alloc, std::ptr::null(), &mut b.memory))
                        .and_then(|()| check((fp.bind_buffer_memory)(d, b.buffer, b.memory, 0)))
                        .and_then(|()| {
                            check((fp.map_memory)(
                                d,
                                b.memory,
                                0,
                                vk::WHOLE_SIZE,
                                vk::MemoryMapFlags::empty(),
                                &mut mapped,
                            ))
                        })
                }
                .map(|()| b.mapped = mapped.cast())
            }
        };
        if result.is_ok() && by_address {
            let info = vk::BufferDeviceAddressInfo::default().buffer(b.buffer);
            // SAFETY: a buffer with device-address usage, bound to memory allocated with the flag.
            b.address = unsafe { (device.fp.fp_v1_2().get_buffer_device_address)(d, &info) };
        }
        match result {
            Ok(()) => Ok(b),
            Err(e) => {
                b.destroy(device);
                Err(e)
            }
        }
    }

    /// The whole mapping.
    pub(crate) fn host(&self) -> HostRange {
        HostRange { start: self.mapped, size: self.size }
    }

    /// Destroys the buffer and its memory (which unmaps it); the GPU must be
    /// done with it.
    pub(crate) fn destroy(&self, device: &DeviceDispatch) {
        let fp = device.fp.fp_v1_0();
        // SAFETY: ours and idle (null handles are ignored).
        unsafe {
            (fp.destroy_buffer)(device.fp.handle(), self.buffer, std::ptr::null());
            (fp.free_memory)(device.fp.handle(), self.memory, std::ptr::null());
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

/// The mapping of a [`MappedBuffer`], to write or read through
/// bounds-checked methods.
///
/// The façade's invariant for it: a range is used only while its buffer
/// lives (a staging block while the command buffer that reserved it holds
/// it, the status ring for the device's lifetime), the host writes it only
/// where it has what holds it to itself (a command of the command buffer
/// being recorded, which the application synchronises; the device's
/// `status` mutex), and reads what the GPU wrote only once the submission
/// that wrote it has finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HostRange {
    start: *mut u8,
    /// Bytes of the mapping.
    size: u64,
}

// SAFETY: plain host memory; who writes it when is the façade's invariant
// above (the same rules a `usize` address would have been used by).
unsafe impl Send for HostRange {}
// SAFETY: as for `Send`.
unsafe impl Sync for HostRange {}

impl HostRange {
    /// `len` bytes from `offset` lie inside the mapping.
    fn fits(&self, offset: u64, len: u64) -> bool {
        offset.checked_add(len).is_some_and(|end| end <= self.size)
    }

    /// Copies `data` to byte `offset`; false (nothing written) when it does
    /// not fit.
    pub(crate) fn write(&self, offset: u64, data: &[u8]) -> bool {
        if !self.fits(offset, data.len() as u64) {
            return false;
        }
        // SAFETY: `offset + data.len() <= size`, inside the live mapping
        // (the invariant); the GPU reads it only once submitted.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.start.add(offset as usize), data.len()) };
        true
    }

    /// Copies `words` to byte `offset` in the host's byte order (the GPU's:
    /// little-endian); false (nothing written) when they do not fit.
    pub(crate) fn write_words(&self, offset: u64, words: &[u32]) -> bool {
        let len = std::mem::size_of_val(words);
        if !self.fits(offset, len as u64) {
            return false;
        }
        // SAFETY: as for `write`; any bytes may be written, and the source
        // is `len` initialised bytes.
        unsafe { std::ptr::copy_nonoverlapping(words.as_ptr().cast::<u8>(), self.start.add(offset as usize), len) };
        true
    }

    /// Zeroes `len` bytes from `offset` (false when they do not fit).
    pub(crate) fn zero(&self, offset: u64, len: u64) -> bool {
        if !self.fits(offset, len) {
            return false;
        }
        // SAFETY: as for `write`.
        unsafe { std::ptr::write_bytes(self.start.add(offset as usize), 0, len as usize) };
        true
    }

    /// The word at byte `offset` (4-byte aligned, inside the mapping: a
    /// caller's bug otherwise, which panics), read volatile: the GPU wrote it.
    pub(crate) fn read_word(&self, offset: u64) -> u32 {
        let at = self.word_at(offset);
        // SAFETY: inside the mapping and aligned (`word_at`); what the GPU
        // wrote there is final (the invariant).
        unsafe { at.read_volatile() }
    }

    /// Writes the word at byte `offset` (as for [`Self::read_word`]), volatile.
    pub(crate) fn write_word(&self, offset: u64, value: u32) {
        let at = self.word_at(offset);
        // SAFETY: as for `read_word`; the holder's lock orders host writes.
        unsafe { at.write_volatile(value) };
    }

    fn word_at(&self, offset: u64) -> *mut u32 {
        let at = self.start.wrapping_add(offset as usize);
        assert!(self.fits(offset, 4) && at.align_offset(4) == 0, "word {offset} outside the mapping");
        at.cast()
    }
}
