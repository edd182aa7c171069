//! Buffers the layer owns in host-visible, host-coherent memory, mapped for
//! their whole lifetime: the status ring the level finishers write into
//! (`graph::status`) and the staging blocks of host dispatches, which the
//! first level's kernels read in place (`graph::staging`). Both are reached
//! by device address.
//!
//! Bottom tier: it takes the device's entry points ([`DeviceDispatch`]) and
//! memory properties as arguments, so that the runtime's pools can hold its
//! buffers without this module naming them.

use crate::dispatch::DeviceDispatch;
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

    /// The start of the mapping (`size` bytes).
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.mapped
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
