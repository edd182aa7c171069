//! A logical device with one compute queue and a command pool; it owns the
//! resources created through its helpers and destroys them (and itself) on drop.

use std::ffi::{c_char, CStr};
use std::sync::Mutex;

use ash::vk;
use vk_host::submit::memory_barrier;

use crate::error::{Error, Result};
use crate::instance::TestInstance;
use crate::skip::{skip, Lane};

static QUEUE_PRIORITY: [f32; 1] = [1.0];

/// The queue create info the harness uses: one queue of `family`.
pub fn queue_info(family: u32) -> vk::DeviceQueueCreateInfo<'static> {
    vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&QUEUE_PRIORITY)
}

/// The first queue family of `pd` with compute support.
pub fn compute_queue_family(instance: &TestInstance, pd: vk::PhysicalDevice) -> Result<u32> {
    Ok(vk_host::submit::compute_family(&instance.instance, pd)?)
}

/// A queue family of `pd` with compute but not graphics (async compute), if any.
pub fn compute_only_queue_family(instance: &TestInstance, pd: vk::PhysicalDevice) -> Option<u32> {
    // SAFETY: valid physical device.
    let families = unsafe { instance.instance.get_physical_device_queue_family_properties(pd) };
    families
        .iter()
        .position(|f| {
            f.queue_flags.contains(vk::QueueFlags::COMPUTE) && !f.queue_flags.contains(vk::QueueFlags::GRAPHICS)
        })
        .map(|i| i as u32)
}

/// Device extensions a test may ask for beside `VK_AMDX_shader_enqueue`,
/// each with its feature turned on (see [`TestDevice::with_amdx_extras`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Extras {
    pub push_descriptor: bool,
    pub descriptor_buffer: bool,
    pub maintenance6: bool,
}

/// What validation 1.3.239 says of `VkPhysicalDeviceMaintenance6FeaturesKHR`,
/// which it does not know.
pub const MAINTENANCE6_UNKNOWN_TO_VALIDATION: &str = "unknown VkStructureType (1000545000)";

/// Something a [`TestDevice`] destroys when dropped.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Owned {
    Buffer(vk::Buffer, vk::DeviceMemory),
    ShaderModule(vk::ShaderModule),
    Pipeline(vk::Pipeline),
    PipelineLayout(vk::PipelineLayout),
    SetLayout(vk::DescriptorSetLayout),
    DescriptorPool(vk::DescriptorPool),
    CommandPool(vk::CommandPool),
}

/// A device created through the loader (and so through the layers).
pub struct TestDevice<'i> {
    pub instance: &'i TestInstance,
    pub physical: vk::PhysicalDevice,
    pub device: ash::Device,
    pub queue: vk::Queue,
    pub queue_family: u32,
    pub pool: vk::CommandPool,
    pub memory_properties: vk::PhysicalDeviceMemoryProperties,
    owned: Mutex<Vec<Owned>>,
    /// `vkQueueSubmit` needs the queue externally synchronized: threads
    /// submitting through [`Self::submit_once_in`] take turns here.
    queue_lock: Mutex<()>,
}

impl<'i> TestDevice<'i> {
    /// A device with `extensions` enabled and nothing in pNext.
    pub fn new(instance: &'i TestInstance, physical: vk::PhysicalDevice, extensions: &[&CStr]) -> Result<Self> {
        let family = compute_queue_family(instance, physical)?;
        let queues = [queue_info(family)];
        let names: Vec<*const c_char> = extensions.iter().map(|e| e.as_ptr()).collect();
        let info = vk::DeviceCreateInfo::default().queue_create_infos(&queues).enabled_extension_names(&names);
        Self::create(instance, physical, &info)
    }

    /// A device the way an AMDX application makes one: `VK_AMDX_shader_enqueue`
    /// enabled, `VkPhysicalDeviceShaderEnqueueFeaturesAMDX { shaderEnqueue }`
    /// and `Vulkan12Features { bufferDeviceAddress }` chained (the app needs
    /// device addresses for scratch memory itself).
    pub fn with_amdx(instance: &'i TestInstance, physical: vk::PhysicalDevice) -> Result<Self> {
        Self::with_amdx_features(instance, physical, vk::PhysicalDeviceFeatures::default())
    }

    /// [`Self::with_amdx`] with core features the test's shaders need (e.g. `shaderInt16`).
    pub fn with_amdx_features(
        instance: &'i TestInstance,
        physical: vk::PhysicalDevice,
        features: vk::PhysicalDeviceFeatures,
    ) -> Result<Self> {
        let family = compute_queue_family(instance, physical)?;
        let queues = [queue_info(family)];
        let names = [vk_amdx::EXTENSION_NAME.as_ptr()];
        let mut amdx = vk_amdx::PhysicalDeviceShaderEnqueueFeatures { shader_enqueue: vk::TRUE, ..Default::default() };
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().buffer_device_address(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&names)
            .enabled_features(&features)
            .push_next(&mut amdx)
            .push_next(&mut v12);
        Self::create(instance, physical, &info)
    }

    /// A device with `VK_AMDX_shader_enqueue` (`shaderEnqueue`,
    /// `bufferDeviceAddress`), `queues` queues of `family`, and `extras`.
    /// `None` (a [`skip`]) when the driver lacks an extra (Mesa 22.3 lacks
    /// the Vulkan 1.4 ones); on the modern and GPU lanes that is a failure.
    pub fn with_amdx_extras(
        instance: &'i TestInstance,
        physical: vk::PhysicalDevice,
        family: u32,
        queues: u32,
        extras: Extras,
    ) -> Option<Self> {
        let wanted: Vec<&CStr> = [
            (extras.push_descriptor, ash::khr::push_descriptor::NAME),
            (extras.descriptor_buffer, ash::ext::descriptor_buffer::NAME),
            (extras.maintenance6, ash::khr::maintenance6::NAME),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        let listed = instance.device_extensions(physical).expect("extensions");
        for ext in &wanted {
            if !listed.iter().any(|(n, _)| n.as_bytes() == ext.to_bytes()) {
                skip(&[Lane::Modern, Lane::Gpu], &format!("the driver lacks {}", ext.to_string_lossy()));
                return None;
            }
        }
        if extras.maintenance6 {
            instance.log().tolerate(MAINTENANCE6_UNKNOWN_TO_VALIDATION);
        }
        let priorities = vec![1.0f32; queues as usize];
        let queue_infos =
            [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
        let mut names = vec![vk_amdx::EXTENSION_NAME.as_ptr()];
        names.extend(wanted.iter().map(|e| e.as_ptr()));
        let mut enqueue =
            vk_amdx::PhysicalDeviceShaderEnqueueFeatures { shader_enqueue: vk::TRUE, ..Default::default() };
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().buffer_device_address(true);
        let mut db = vk::PhysicalDeviceDescriptorBufferFeaturesEXT::default().descriptor_buffer(true);
        let mut m6 = vk::PhysicalDeviceMaintenance6FeaturesKHR::default().maintenance6(true);
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_infos)
            .enabled_extension_names(&names)
            .push_next(&mut enqueue)
            .push_next(&mut v12);
        if extras.descriptor_buffer {
            info = info.push_next(&mut db);
        }
        if extras.maintenance6 {
            info = info.push_next(&mut m6);
        }
        Some(Self::create(instance, physical, &info).expect("device with the extras"))
    }

    /// A device from a caller-built create info. It must have exactly one
    /// queue create info (use [`queue_info`] with [`compute_queue_family`]).
    pub fn create(
        instance: &'i TestInstance,
        physical: vk::PhysicalDevice,
        info: &vk::DeviceCreateInfo<'_>,
    ) -> Result<Self> {
        if info.queue_create_info_count != 1 || info.p_queue_create_infos.is_null() {
            return Err(Error::Setup("TestDevice::create needs one queue create info".into()));
        }
        // SAFETY: checked non-null above; the caller built it with ash builders.
        let family = unsafe { (*info.p_queue_create_infos).queue_family_index };
        // SAFETY: the create info and its chain are valid for the call.
        let device =
            unsafe { instance.instance.create_device(physical, info, None) }.map_err(Error::vk("vkCreateDevice"))?;
        // SAFETY: queue 0 of `family` was requested above.
        let queue = unsafe { device.get_device_queue(family, 0) };
        let pool = match vk_host::submit::command_pool(&device, family) {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: the device has no children yet.
                unsafe { device.destroy_device(None) };
                return Err(e.into());
            }
        };
        // SAFETY: valid physical device.
        let memory_properties = unsafe { instance.instance.get_physical_device_memory_properties(physical) };
        Ok(Self {
            instance,
            physical,
            device,
            queue,
            queue_family: family,
            pool,
            memory_properties,
            owned: Mutex::new(Vec::new()),
            queue_lock: Mutex::new(()),
        })
    }

    /// The seven `VK_AMDX_shader_enqueue` commands, resolved through the layers.
    pub fn amdx_commands(&self) -> Result<vk_amdx::Commands> {
        vk_amdx::Commands::load(&self.instance.instance, &self.device)
            .map_err(|name| Error::Setup(format!("{name:?} does not resolve")))
    }

    /// Resolves a device command through `vkGetDeviceProcAddr` (through the layers).
    pub fn proc_addr(&self, name: &CStr) -> vk::PFN_vkVoidFunction {
        // SAFETY: valid device handle and NUL-terminated name.
        unsafe { (self.instance.instance.fp_v1_0().get_device_proc_addr)(self.device.handle(), name.as_ptr()) }
    }

    /// Records with `record`, submits once, waits for completion. An error
    /// from `vkEndCommandBuffer` (e.g. a poisoned command buffer) is returned.
    pub fn submit_once(&self, record: impl FnOnce(vk::CommandBuffer)) -> Result<()> {
        self.submit_once_in(self.pool, record)
    }

    /// A command pool of the queue's family, destroyed with the device: one
    /// per thread for tests that record on several threads at once.
    pub fn create_command_pool(&self) -> Result<vk::CommandPool> {
        let info = vk::CommandPoolCreateInfo::default().queue_family_index(self.queue_family);
        // SAFETY: valid device.
        let pool = unsafe { self.device.create_command_pool(&info, None) }.map_err(Error::vk("vkCreateCommandPool"))?;
        self.own(Owned::CommandPool(pool));
        Ok(pool)
    }

    /// [`Self::submit_once`] with a command buffer from `pool`, which the
    /// calling thread must own; the submission itself holds the queue lock.
    pub fn submit_once_in(&self, pool: vk::CommandPool, record: impl FnOnce(vk::CommandBuffer)) -> Result<()> {
        self.submit_once_to(None, pool, record)
    }

    /// [`Self::submit_once_in`] to `queue` when given (another queue of this
    /// device, which the calling thread must own), else to [`Self::queue`].
    pub fn submit_once_to(
        &self,
        queue: Option<vk::Queue>,
        pool: vk::CommandPool,
        record: impl FnOnce(vk::CommandBuffer),
    ) -> Result<()> {
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: valid device and pool.
        let cb =
            unsafe { self.device.allocate_command_buffers(&alloc) }.map_err(Error::vk("vkAllocateCommandBuffers"))?[0];
        let result = self.record_and_submit(queue, cb, record);
        // SAFETY: the command buffer is idle (waited on) or was never submitted.
        unsafe { self.device.free_command_buffers(pool, &[cb]) };
        result
    }

    fn record_and_submit(
        &self,
        queue: Option<vk::Queue>,
        cb: vk::CommandBuffer,
        record: impl FnOnce(vk::CommandBuffer),
    ) -> Result<()> {
        let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: cb is a fresh primary command buffer of this device.
        unsafe { self.device.begin_command_buffer(cb, &begin) }.map_err(Error::vk("vkBeginCommandBuffer"))?;
        record(cb);
        // SAFETY: cb is recording.
        unsafe { self.device.end_command_buffer(cb) }.map_err(Error::vk("vkEndCommandBuffer"))?;
        // SAFETY: valid device.
        let fence = unsafe { self.device.create_fence(&vk::FenceCreateInfo::default(), None) }
            .map_err(Error::vk("vkCreateFence"))?;
        let cbs = [cb];
        let submit = vk::SubmitInfo::default().command_buffers(&cbs);
        let submitted = match queue {
            // SAFETY: cb is executable; fence is unsignalled; the caller owns the queue.
            Some(queue) => unsafe { self.device.queue_submit(queue, &[submit], fence) },
            None => {
                let _queue = self.queue_lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                // SAFETY: as above; the queue is ours while locked.
                unsafe { self.device.queue_submit(self.queue, &[submit], fence) }
            }
        };
        let res = submitted.map_err(Error::vk("vkQueueSubmit")).and_then(|()| {
            // SAFETY: the fence was submitted above.
            unsafe { self.device.wait_for_fences(&[fence], true, u64::MAX) }.map_err(Error::vk("vkWaitForFences"))
        });
        // SAFETY: the fence is signalled or was never submitted.
        unsafe { self.device.destroy_fence(fence, None) };
        res
    }

    /// Makes compute-shader writes recorded before it in `cb` visible to the
    /// compute shaders after it (scratch initialisation, then a dispatch).
    pub fn compute_barrier(&self, cb: vk::CommandBuffer) {
        let (stage, write) = (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE);
        memory_barrier(&self.device, cb, (stage, write), (stage, vk::AccessFlags::SHADER_READ | write));
    }

    /// Makes compute-shader and transfer writes recorded before it in `cb`
    /// visible to the host (to read results after the submission's fence).
    pub fn host_read_barrier(&self, cb: vk::CommandBuffer) {
        let src = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER;
        let writes = vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE;
        memory_barrier(&self.device, cb, (src, writes), (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ));
    }

    /// Index of a memory type allowed by `type_bits` with all of `flags`.
    pub fn memory_type(&self, type_bits: u32, flags: vk::MemoryPropertyFlags) -> Result<u32> {
        vk_host::buffer::memory_type(&self.memory_properties, type_bits, flags)
            .ok_or_else(|| Error::Setup(format!("no memory type with {flags:?}")))
    }

    pub(crate) fn own(&self, o: Owned) {
        if let Ok(mut v) = self.owned.lock() {
            v.push(o);
        }
    }
}

impl Drop for TestDevice<'_> {
    fn drop(&mut self) {
        let d = &self.device;
        // SAFETY: everything below was created from this device and is idle
        // after the wait; destroyed newest first, then the pool and device.
        unsafe {
            let _ = d.device_wait_idle();
            let owned = self.owned.get_mut().map(std::mem::take).unwrap_or_default();
            for o in owned.into_iter().rev() {
                match o {
                    Owned::Buffer(b, m) => {
                        d.destroy_buffer(b, None);
                        d.free_memory(m, None);
                    }
                    Owned::ShaderModule(s) => d.destroy_shader_module(s, None),
                    Owned::Pipeline(p) => d.destroy_pipeline(p, None),
                    Owned::PipelineLayout(l) => d.destroy_pipeline_layout(l, None),
                    Owned::SetLayout(l) => d.destroy_descriptor_set_layout(l, None),
                    Owned::DescriptorPool(p) => d.destroy_descriptor_pool(p, None),
                    Owned::CommandPool(p) => d.destroy_command_pool(p, None),
                }
            }
            d.destroy_command_pool(self.pool, None);
            d.destroy_device(None);
        }
    }
}
