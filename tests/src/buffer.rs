//! Host-visible, coherent, persistently mapped buffers, optionally with a
//! device address (`vk_host`'s), owned (and destroyed) by their [`TestDevice`].

use ash::vk;

use crate::device::{Owned, TestDevice};
use crate::error::Result;

/// A mapped buffer. Handles are plain copies; the device destroys them.
pub type HostBuffer = vk_host::Buffer;

impl TestDevice<'_> {
    /// Creates a host-visible coherent buffer of `size` bytes with `usage`
    /// (passed to the driver as given, extension bits included), maps it, and
    /// queries its device address when the usage asks for one.
    pub fn create_host_buffer(&self, size: vk::DeviceSize, usage: vk::BufferUsageFlags) -> Result<HostBuffer> {
        let buffer = HostBuffer::new(&self.device, &self.memory_properties, size, usage, true)?;
        self.own(Owned::Buffer(buffer.buffer, buffer.memory));
        Ok(buffer)
    }
}
