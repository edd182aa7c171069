//! Buffers with their own memory: host-visible, coherent and mapped, or
//! device-local; with a device address when the usage asks for one.

use std::ffi::c_void;

use ash::vk;

use crate::{vk_err, Error, Result};

/// A buffer, its memory and (host-visible ones) the mapping. Plain handles:
/// the creator destroys it with [`Buffer::destroy`].
#[derive(Debug, Clone, Copy)]
pub struct Buffer {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub size: vk::DeviceSize,
    /// Set when the usage contained `SHADER_DEVICE_ADDRESS`.
    pub address: Option<vk::DeviceAddress>,
    /// Null unless host-visible.
    mapped: *mut c_void,
}

/// A memory type allowed by `bits` with all of `flags`.
pub fn memory_type(
    props: &vk::PhysicalDeviceMemoryProperties,
    bits: u32,
    flags: vk::MemoryPropertyFlags,
) -> Option<u32> {
    (0..props.memory_type_count)
        .find(|&i| bits & (1 << i) != 0 && props.memory_types[i as usize].property_flags.contains(flags))
}

impl Buffer {
    /// A buffer of `size` bytes with `usage` (passed to the driver as given,
    /// extension bits included): host-visible, coherent and mapped when
    /// `host`, else device-local where the device has such memory.
    pub fn new(
        d: &ash::Device,
        props: &vk::PhysicalDeviceMemoryProperties,
        size: vk::DeviceSize,
        usage: vk::BufferUsageFlags,
        host: bool,
    ) -> Result<Self> {
        let info = vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        let buffer = unsafe { d.create_buffer(&info, None) }.map_err(vk_err("vkCreateBuffer"))?;
        let mut out =
            Buffer { buffer, memory: vk::DeviceMemory::null(), size, address: None, mapped: std::ptr::null_mut() };
        let bound = out.bind(d, props, usage, host);
        if bound.is_err() {
            // SAFETY: nothing uses the new buffer; null memory is ignored.
            unsafe { out.destroy(d) };
        }
        bound.map(|()| out)
    }

    /// Allocates, binds and maps the memory; queries the address.
    fn bind(
        &mut self,
        d: &ash::Device,
        props: &vk::PhysicalDeviceMemoryProperties,
        usage: vk::BufferUsageFlags,
        host: bool,
    ) -> Result<()> {
        // SAFETY: the buffer was just created.
        let req = unsafe { d.get_buffer_memory_requirements(self.buffer) };
        let host_flags = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let type_index = if host {
            memory_type(props, req.memory_type_bits, host_flags)
        } else {
            memory_type(props, req.memory_type_bits, vk::MemoryPropertyFlags::DEVICE_LOCAL)
                .or_else(|| memory_type(props, req.memory_type_bits, vk::MemoryPropertyFlags::empty()))
        }
        .ok_or_else(|| Error::Missing(format!("no suitable memory type (host-visible: {host})")))?;
        let wants_address = usage.contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS);
        let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let mut alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(type_index);
        if wants_address {
            alloc = alloc.push_next(&mut flags);
        }
        // SAFETY: valid allocate info; `destroy` frees the memory.
        self.memory = unsafe { d.allocate_memory(&alloc, None) }.map_err(vk_err("vkAllocateMemory"))?;
        // SAFETY: the memory satisfies the buffer's requirements; offset 0.
        unsafe { d.bind_buffer_memory(self.buffer, self.memory, 0) }.map_err(vk_err("vkBindBufferMemory"))?;
        if host {
            // SAFETY: host-visible memory, whole range, not mapped yet.
            self.mapped = unsafe { d.map_memory(self.memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
                .map_err(vk_err("vkMapMemory"))?;
        }
        if wants_address {
            let info = vk::BufferDeviceAddressInfo::default().buffer(self.buffer);
            // SAFETY: the buffer has SHADER_DEVICE_ADDRESS usage and bound memory.
            self.address = Some(unsafe { d.get_buffer_device_address(&info) });
        }
        Ok(())
    }

    /// Destroys the buffer and frees (so unmaps) its memory.
    ///
    /// # Safety
    /// `d` made the buffer, the GPU no longer uses it, and no copy of it is used afterwards.
    pub unsafe fn destroy(&self, d: &ash::Device) {
        // SAFETY: the caller's contract; null handles are ignored.
        unsafe {
            d.destroy_buffer(self.buffer, None);
            d.free_memory(self.memory, None);
        }
    }

    /// Copies `bytes` to byte `offset` of the mapping (must fit).
    pub fn write_bytes(&self, offset: usize, bytes: &[u8]) -> Result<()> {
        self.check_mapped(offset, bytes.len())?;
        // SAFETY: inside the coherent mapping (checked); no GPU access in flight.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.mapped.cast::<u8>().add(offset), bytes.len()) };
        Ok(())
    }

    /// Copies `words` to the start of the mapping (must fit).
    pub fn write_u32(&self, words: &[u32]) -> Result<()> {
        self.check_mapped(0, std::mem::size_of_val(words))?;
        // SAFETY: as in write_bytes.
        unsafe { std::ptr::copy_nonoverlapping(words.as_ptr(), self.mapped.cast::<u32>(), words.len()) };
        Ok(())
    }

    /// Reads `count` words from the start of the mapping (must fit).
    pub fn read_u32(&self, count: usize) -> Result<Vec<u32>> {
        self.check_mapped(0, count * 4)?;
        let mut out = vec![0u32; count];
        // SAFETY: as in write_bytes; the GPU work was waited on.
        unsafe { std::ptr::copy_nonoverlapping(self.mapped.cast::<u32>(), out.as_mut_ptr(), count) };
        Ok(out)
    }

    fn check_mapped(&self, offset: usize, bytes: usize) -> Result<()> {
        if self.mapped.is_null() || (offset + bytes) as vk::DeviceSize > self.size {
            return Err(Error::Missing(format!(
                "{bytes} bytes at {offset} do not fit the mapped buffer of {} bytes",
                self.size
            )));
        }
        Ok(())
    }
}
