//! The demo's device: a logical device with `VK_AMDX_shader_enqueue` and
//! buffer device addresses on one compute queue, a command pool, buffers
//! (host-visible or device-local, optionally with a device address) and a
//! timed submit. Every object is destroyed by `Drop`, also on error paths.

use std::ffi::CStr;
use std::time::{Duration, Instant};

use ash::vk;

use crate::{amdx, vkutil};

/// A device with the extension enabled, its queue and a command pool.
pub struct Gpu {
    pub device: ash::Device,
    pub queue: vk::Queue,
    pool: vk::CommandPool,
    memory: vk::PhysicalDeviceMemoryProperties,
    /// `(nanoseconds per tick, valid-bit mask)` when the queue writes timestamps.
    pub timestamps: Option<(f64, u64)>,
    /// The device is a CPU driver (lavapipe): its timestamps are CPU time.
    pub is_cpu: bool,
    get_proc: vk::PFN_vkGetDeviceProcAddr,
}

impl Gpu {
    /// Creates the device the way an AMDX application does: the extension,
    /// `shaderEnqueue` and `bufferDeviceAddress` (for the scratch address).
    pub fn new(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Result<Self, String> {
        let family = vkutil::compute_family(instance, pd)?;
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
        let names = [amdx::EXTENSION_NAME.as_ptr()];
        let mut features = amdx::Features { shader_enqueue: vk::TRUE, ..Default::default() };
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().buffer_device_address(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&names)
            .push_next(&mut features)
            .push_next(&mut v12);
        // SAFETY: `info` points at locals alive for the call.
        let device = unsafe { instance.create_device(pd, &info, None) }
            .map_err(|e| format!("vkCreateDevice with VK_AMDX_shader_enqueue: {e:?}"))?;
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: valid device.
        let pool = match unsafe { device.create_command_pool(&pool_info, None) } {
            Ok(pool) => pool,
            Err(e) => {
                // SAFETY: the device has no children yet.
                unsafe { device.destroy_device(None) };
                return Err(format!("vkCreateCommandPool: {e:?}"));
            }
        };
        Ok(Self {
            // SAFETY: queue 0 of `family` was requested above.
            queue: unsafe { device.get_device_queue(family, 0) },
            pool,
            // SAFETY: valid physical device.
            memory: unsafe { instance.get_physical_device_memory_properties(pd) },
            timestamps: timestamp_info(instance, pd, family),
            // SAFETY: valid physical device.
            is_cpu: unsafe { instance.get_physical_device_properties(pd) }.device_type == vk::PhysicalDeviceType::CPU,
            get_proc: instance.fp_v1_0().get_device_proc_addr,
            device,
        })
    }

    /// Resolves a device command through `vkGetDeviceProcAddr` (so through the layer).
    pub fn proc_addr(&self, name: &CStr) -> Result<unsafe extern "system" fn(), String> {
        // SAFETY: valid device handle and NUL-terminated name.
        unsafe { (self.get_proc)(self.device.handle(), name.as_ptr()) }
            .ok_or_else(|| format!("{} does not resolve", name.to_string_lossy()))
    }

    /// A buffer of `size` bytes with `usage`: host-visible, coherent and
    /// mapped when `host`, else device-local where the device has such memory.
    pub fn buffer(&self, size: u64, usage: vk::BufferUsageFlags, host: bool) -> Result<Buffer<'_>, String> {
        let d = &self.device;
        let info = vk::BufferCreateInfo::default().size(size).usage(usage);
        // SAFETY: valid device and create info.
        let buffer = unsafe { d.create_buffer(&info, None) }.map_err(|e| format!("vkCreateBuffer: {e:?}"))?;
        let mut out = Buffer {
            device: d,
            buffer,
            memory: vk::DeviceMemory::null(),
            size,
            address: 0,
            mapped: std::ptr::null_mut(),
        };
        // SAFETY: the buffer was just created.
        let req = unsafe { d.get_buffer_memory_requirements(buffer) };
        let wants_address = usage.contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS);
        let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let mut alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(self.memory_type(req.memory_type_bits, host)?);
        if wants_address {
            alloc = alloc.push_next(&mut flags);
        }
        // SAFETY: valid allocate info; `out` frees the memory on drop.
        out.memory = unsafe { d.allocate_memory(&alloc, None) }.map_err(|e| format!("vkAllocateMemory: {e:?}"))?;
        // SAFETY: the memory satisfies the buffer's requirements.
        unsafe { d.bind_buffer_memory(buffer, out.memory, 0) }.map_err(|e| format!("vkBindBufferMemory: {e:?}"))?;
        if host {
            // SAFETY: host-visible memory, not mapped yet.
            let ptr = unsafe { d.map_memory(out.memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
                .map_err(|e| format!("vkMapMemory: {e:?}"))?;
            out.mapped = ptr.cast::<u32>();
        }
        if wants_address {
            // SAFETY: the buffer has SHADER_DEVICE_ADDRESS usage and bound memory.
            out.address =
                unsafe { d.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer)) };
        }
        Ok(out)
    }

    /// A memory type allowed by `bits`: host-visible and coherent when
    /// `host`, else device-local if any (any allowed type otherwise).
    fn memory_type(&self, bits: u32, host: bool) -> Result<u32, String> {
        let m = &self.memory;
        let find = |flags: vk::MemoryPropertyFlags| {
            (0..m.memory_type_count)
                .find(|&i| bits & (1 << i) != 0 && m.memory_types[i as usize].property_flags.contains(flags))
        };
        let found = if host {
            find(vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT)
        } else {
            find(vk::MemoryPropertyFlags::DEVICE_LOCAL).or_else(|| find(vk::MemoryPropertyFlags::empty()))
        };
        found.ok_or_else(|| format!("no suitable memory type (host-visible: {host})"))
    }

    /// A primary command buffer (freed with the pool).
    pub fn command_buffer(&self) -> Result<vk::CommandBuffer, String> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: valid device and pool.
        let cbs = unsafe { self.device.allocate_command_buffers(&info) }
            .map_err(|e| format!("vkAllocateCommandBuffers: {e:?}"))?;
        cbs.first().copied().ok_or_else(|| "vkAllocateCommandBuffers returned nothing".to_string())
    }

    /// Submits `cb` and waits for it; returns the wall-clock time of both.
    pub fn submit_and_wait(&self, cb: vk::CommandBuffer) -> Result<Duration, String> {
        let d = &self.device;
        // SAFETY: valid device.
        let fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }
            .map_err(|e| format!("vkCreateFence: {e:?}"))?;
        let cbs = [cb];
        let submit = vk::SubmitInfo::default().command_buffers(&cbs);
        let start = Instant::now();
        // SAFETY: `cb` is executable and idle; the fence is unsignalled.
        let result = unsafe { d.queue_submit(self.queue, &[submit], fence) }
            .map_err(|e| format!("vkQueueSubmit: {e:?}"))
            .and_then(|()| {
                // SAFETY: the fence was submitted.
                unsafe { d.wait_for_fences(&[fence], true, u64::MAX) }.map_err(|e| format!("vkWaitForFences: {e:?}"))
            });
        let elapsed = start.elapsed();
        // SAFETY: the fence is signalled or was never submitted.
        unsafe { d.destroy_fence(fence, None) };
        result.map(|()| elapsed)
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: all children (buffers, graph, query pool) are dropped
        // before the `Gpu` they borrow; the device is idle after the wait.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
        }
    }
}

/// `(ns per tick, valid-bit mask)` of `family`, when it has timestamps.
fn timestamp_info(instance: &ash::Instance, pd: vk::PhysicalDevice, family: u32) -> Option<(f64, u64)> {
    // SAFETY: valid physical device.
    let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
    let bits = families.get(family as usize)?.timestamp_valid_bits;
    // SAFETY: as above.
    let period = unsafe { instance.get_physical_device_properties(pd) }.limits.timestamp_period;
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    (bits > 0).then_some((f64::from(period), mask))
}

/// A buffer and its memory, destroyed on drop.
pub struct Buffer<'d> {
    device: &'d ash::Device,
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    pub size: u64,
    /// The device address (0 without `SHADER_DEVICE_ADDRESS` usage).
    pub address: vk::DeviceAddress,
    /// The mapping (null unless host-visible).
    mapped: *mut u32,
}

impl Buffer<'_> {
    /// Copies `words` to the start of the mapped buffer.
    pub fn write_u32(&self, words: &[u32]) -> Result<(), String> {
        self.check_mapped(words.len())?;
        // SAFETY: mapped coherent memory holding `words`; no GPU work in flight.
        unsafe { std::ptr::copy_nonoverlapping(words.as_ptr(), self.mapped, words.len()) };
        Ok(())
    }

    /// Reads `count` words from the start of the mapped buffer.
    pub fn read_u32(&self, count: usize) -> Result<Vec<u32>, String> {
        self.check_mapped(count)?;
        let mut out = vec![0u32; count];
        // SAFETY: as in write_u32; the GPU work was waited on.
        unsafe { std::ptr::copy_nonoverlapping(self.mapped, out.as_mut_ptr(), count) };
        Ok(out)
    }

    fn check_mapped(&self, words: usize) -> Result<(), String> {
        if self.mapped.is_null() || (words as u64) * 4 > self.size {
            return Err(format!("{words} words do not fit the mapped buffer of {} bytes", self.size));
        }
        Ok(())
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        // SAFETY: idle objects of this device (null handles are ignored);
        // freeing the memory unmaps it.
        unsafe {
            self.device.destroy_buffer(self.buffer, None);
            self.device.free_memory(self.memory, None);
        }
    }
}
