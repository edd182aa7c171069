//! Host-visible, coherent, persistently mapped buffers, optionally with a
//! device address; owned (and destroyed) by their [`TestDevice`].

use std::ffi::c_void;

use ash::vk;

use crate::device::{Owned, TestDevice};
use crate::error::{Error, Result};

/// A mapped buffer. Handles are plain copies; the device destroys them.
#[derive(Debug, Clone, Copy)]
pub struct HostBuffer {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub size: vk::DeviceSize,
    /// Set when `usage` contained `SHADER_DEVICE_ADDRESS`.
    pub address: Option<vk::DeviceAddress>,
    mapped: *mut c_void,
}

impl TestDevice<'_> {
    /// Creates a host-visible coherent buffer of `size` bytes with `usage`
    /// (passed to the driver as given, extension bits included), maps it, and
    /// queries its device address when the usage asks for one.
    pub fn create_host_buffer(&self, size: vk::DeviceSize, usage: vk::BufferUsageFlags) -> Result<HostBuffer> {
        let d = &self.device;
        let info = vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        let buffer = unsafe { d.create_buffer(&info, None) }.map_err(Error::vk("vkCreateBuffer"))?;
        // SAFETY: buffer was just created.
        let req = unsafe { d.get_buffer_memory_requirements(buffer) };
        let wants_address = usage.contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS);
        let type_index = match self.memory_type(
            req.memory_type_bits,
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
        ) {
            Ok(t) => t,
            Err(e) => {
                // SAFETY: unbound, unused buffer.
                unsafe { d.destroy_buffer(buffer, None) };
                return Err(e);
            }
        };
        let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let mut alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(type_index);
        if wants_address {
            alloc = alloc.push_next(&mut flags);
        }
        // SAFETY: valid allocate info.
        let memory = match unsafe { d.allocate_memory(&alloc, None) } {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: unbound, unused buffer.
                unsafe { d.destroy_buffer(buffer, None) };
                return Err(Error::vk("vkAllocateMemory")(e));
            }
        };
        self.own(Owned::Buffer(buffer, memory));
        // SAFETY: memory satisfies the buffer's requirements; offset 0.
        unsafe { d.bind_buffer_memory(buffer, memory, 0) }.map_err(Error::vk("vkBindBufferMemory"))?;
        // SAFETY: host-visible memory, whole range, not mapped yet.
        let mapped = unsafe { d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
            .map_err(Error::vk("vkMapMemory"))?;
        let address = wants_address.then(|| {
            let info = vk::BufferDeviceAddressInfo::default().buffer(buffer);
            // SAFETY: the buffer has SHADER_DEVICE_ADDRESS usage and bound memory.
            unsafe { d.get_buffer_device_address(&info) }
        });
        Ok(HostBuffer { buffer, memory, size, address, mapped })
    }
}

impl HostBuffer {
    /// Copies `words` to the start of the buffer (must fit).
    pub fn write_u32(&self, words: &[u32]) -> Result<()> {
        let bytes = std::mem::size_of_val(words) as vk::DeviceSize;
        if bytes > self.size {
            return Err(Error::Setup(format!("{bytes} bytes do not fit in {}", self.size)));
        }
        // SAFETY: mapped coherent memory of at least `size` bytes, no GPU access in flight.
        unsafe { std::ptr::copy_nonoverlapping(words.as_ptr(), self.mapped.cast::<u32>(), words.len()) };
        Ok(())
    }

    /// Reads `count` u32 words from the start of the buffer (must fit).
    /// Copies `bytes` to byte `offset` of the mapping.
    pub fn write_bytes(&self, offset: usize, bytes: &[u8]) -> Result<()> {
        if (offset + bytes.len()) as vk::DeviceSize > self.size {
            return Err(Error::Setup(format!("{} bytes at {offset} do not fit in {}", bytes.len(), self.size)));
        }
        // SAFETY: inside the mapping (checked above).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.mapped.cast::<u8>().add(offset), bytes.len()) };
        Ok(())
    }

    pub fn read_u32(&self, count: usize) -> Result<Vec<u32>> {
        let bytes = (count * 4) as vk::DeviceSize;
        if bytes > self.size {
            return Err(Error::Setup(format!("{bytes} bytes exceed {}", self.size)));
        }
        let mut out = vec![0u32; count];
        // SAFETY: as in write_u32; the GPU work was waited on by submit_once.
        unsafe { std::ptr::copy_nonoverlapping(self.mapped.cast::<u32>(), out.as_mut_ptr(), count) };
        Ok(out)
    }
}
