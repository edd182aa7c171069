//! The demo's device: a logical device with `VK_AMDX_shader_enqueue` and
//! buffer device addresses on one compute queue (or, for mesh nodes, a
//! graphics queue with `shaderMeshEnqueue`), a command pool, buffers
//! (host-visible or device-local, optionally with a device address) and a
//! timed submit, on `vk_host`'s plumbing. Every object is destroyed by
//! `Drop`, also on error paths.

use std::time::Duration;

use ash::vk;
use vk_host::timer::timestamp_info;
use vk_host::{render, submit};

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
    /// The instance's function table (graphs load their commands through it).
    pub instance: ash::Instance,
    /// The physical device it was created on.
    pub physical: vk::PhysicalDevice,
}

impl Gpu {
    /// Creates the device the way an AMDX application does: the extension,
    /// `shaderEnqueue` and `bufferDeviceAddress` (for the scratch address).
    pub fn new(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Result<Self, String> {
        let family = submit::compute_family(instance, pd)?;
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
        let names = [vk_amdx::EXTENSION_NAME.as_ptr()];
        let mut features =
            vk_amdx::PhysicalDeviceShaderEnqueueFeatures { shader_enqueue: vk::TRUE, ..Default::default() };
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().buffer_device_address(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&names)
            .push_next(&mut features)
            .push_next(&mut v12);
        Self::create(instance, pd, family, &info)
    }

    /// A device for mesh nodes (`shaderMeshEnqueue`, dynamic rendering,
    /// maintenance5) on a graphics + compute queue.
    pub fn with_mesh_nodes(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Result<Self, String> {
        let family = render::graphics_family(instance, pd)?;
        render::with_mesh_device_info(family, |info| Self::create(instance, pd, family, info))
    }

    fn create(
        instance: &ash::Instance,
        pd: vk::PhysicalDevice,
        family: u32,
        info: &vk::DeviceCreateInfo<'_>,
    ) -> Result<Self, String> {
        // SAFETY: `info` points at the caller's locals, alive for the call.
        let device = unsafe { instance.create_device(pd, info, None) }
            .map_err(|e| format!("vkCreateDevice with VK_AMDX_shader_enqueue: {e:?}"))?;
        let pool = match submit::command_pool(&device, family) {
            Ok(pool) => pool,
            Err(e) => {
                // SAFETY: the device has no children yet.
                unsafe { device.destroy_device(None) };
                return Err(e.into());
            }
        };
        Ok(Self {
            // SAFETY: queue 0 of `family` was requested by the create info.
            queue: unsafe { device.get_device_queue(family, 0) },
            pool,
            // SAFETY: valid physical device.
            memory: unsafe { instance.get_physical_device_memory_properties(pd) },
            timestamps: timestamp_info(instance, pd, family),
            instance: instance.clone(),
            physical: pd,
            // SAFETY: valid physical device.
            is_cpu: unsafe { instance.get_physical_device_properties(pd) }.device_type == vk::PhysicalDeviceType::CPU,
            device,
        })
    }

    /// The device's memory types.
    pub fn memory_properties(&self) -> &vk::PhysicalDeviceMemoryProperties {
        &self.memory
    }

    /// A buffer of `size` bytes with `usage`: host-visible, coherent and
    /// mapped when `host`, else device-local where the device has such memory.
    pub fn buffer(&self, size: u64, usage: vk::BufferUsageFlags, host: bool) -> Result<Buffer<'_>, String> {
        Ok(Buffer { device: &self.device, raw: vk_host::Buffer::new(&self.device, &self.memory, size, usage, host)? })
    }

    /// A primary command buffer (freed with the pool).
    pub fn command_buffer(&self) -> Result<vk::CommandBuffer, String> {
        Ok(submit::command_buffer(&self.device, self.pool)?)
    }

    /// Submits `cb` and waits for it; returns the wall-clock time of both.
    pub fn submit_and_wait(&self, cb: vk::CommandBuffer) -> Result<Duration, String> {
        // SAFETY: `cb` is executable and idle (every submit is waited on);
        // the demo and bench submit from one thread.
        Ok(unsafe { submit::submit_and_wait(&self.device, self.queue, cb) }?)
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

/// A buffer and its memory, destroyed on drop; reads as a [`vk_host::Buffer`].
pub struct Buffer<'d> {
    device: &'d ash::Device,
    raw: vk_host::Buffer,
}

impl std::ops::Deref for Buffer<'_> {
    type Target = vk_host::Buffer;

    fn deref(&self) -> &vk_host::Buffer {
        &self.raw
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        // SAFETY: an idle buffer of this device, dropped once.
        unsafe { self.raw.destroy(self.device) };
    }
}
