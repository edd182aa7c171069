//! A minimal Vulkan harness (ash) for running one lowered node kernel against
//! a hand-built ABI state (version 5) in one host-visible buffer with a
//! device address: [`at`] is the buffer's memory map, [`frames`] the CPU
//! mirror of the frame pool, [`state`] the graph state a test builds and
//! reads back. Every unsafe block is a plain Vulkan call on handles this
//! harness created.
#![allow(dead_code)]

pub mod frames;
pub mod state;

use ash::vk;
use spirv_lowering::abi::NodePush;
use std::ffi::CString;

pub struct Gpu {
    _entry: ash::Entry,
    instance: ash::Instance,
    pub device: ash::Device,
    queue: vk::Queue,
    qf: u32,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    ptr: *mut u8,
    pub size: usize,
    pub base: u64,
    pub name: String,
    pub has16: bool,
}

/// Byte offsets of the scratch areas inside the one buffer (ABI version 5;
/// see `spirv_lowering::abi`'s scratch layout). Tables hold [`MAX_NODES`]
/// node slots.
pub mod at {
    /// Node slots the tables below hold.
    pub const MAX_NODES: usize = 16;
    /// Output links the tables below hold, and slots per link.
    pub const MAX_LINKS: usize = 16;
    pub const MAX_LINK_SLOTS: usize = 16;
    /// The `GraphContext`.
    pub const CTX: usize = 0;
    /// The host's `abi::STATUS_WORDS` status words (`NodeDispatch::status`).
    pub const STATUS_WORDS: usize = 256;
    /// `[NodeDispatch; MAX_NODES]` of level parity 0 and 1.
    pub const DISPATCHES: [usize; 2] = [1024, 2048];
    /// `[NodeSchedule; MAX_NODES]`.
    pub const SCHEDULES: usize = 3072;
    /// `[NodeInfo; MAX_NODES]`.
    pub const NODES: usize = 4096;
    /// `[OutputLink; MAX_LINKS]`.
    pub const LINKS: usize = 4352;
    /// One `u32` slot table of `MAX_LINK_SLOTS` per link.
    pub const SLOTS: usize = 4608;
    /// The `u32` rank counters of level parity 0 and 1, one per node
    /// `abi::COUNTER_STRIDE_BYTES` apart (room for `MAX_NODES`).
    pub const RANKS: [usize; 2] = [13 << 20, (13 << 20) + 4096];
    /// The `u64` grid counters of level parity 0 and 1, as the rank counters.
    pub const GRIDS: [usize; 2] = [(13 << 20) + 8192, (13 << 20) + 12288];
    /// `[u32; MAX_NODES + 1]`: the entry passes' counters and status.
    pub const ENTRY_COUNTS: usize = 5760;
    /// Contiguous level-0 records of a dynamic grid: each one's first workgroup.
    pub const STARTS: usize = 6144;
    /// Contiguous level-0 payloads (side by side at the input stride).
    pub const INPUTS: usize = 8192;
    pub const INPUTS_SIZE: usize = 57344;
    /// Where failed allocations point.
    pub const SINK: usize = 65536;
    pub const SINK_SIZE: usize = 65536;
    /// `abi::DONE_GROUPS_BYTES` of done-group counters.
    pub const DONE_GROUPS: usize = 131072;
    /// The frame keys (`u64` each).
    pub const KEYS: usize = 196608;
    pub const MAX_FRAMES: usize = 4096;
    /// The frame pool.
    pub const POOL: usize = 262144;
    pub const POOL_SIZE: usize = 786432;
    /// The application's storage buffer (set 0 binding 0).
    pub const UAV: usize = 1 << 20;
    pub const UAV_SIZE: usize = 12 << 20;
    pub const SIZE: usize = 14 << 20;

    const _: () = assert!(SCHEDULES + MAX_NODES * size_of::<spirv_lowering::abi::NodeSchedule>() <= NODES);
    const _: () = assert!(SLOTS + MAX_LINKS * MAX_LINK_SLOTS * 4 <= ENTRY_COUNTS);
}

impl Gpu {
    /// Err says why no Vulkan 1.3 device with buffer device address and int64 was usable.
    pub fn new() -> Result<Gpu, String> {
        // SAFETY: loading the system Vulkan loader.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("step 1: {e:?}"))?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
        // SAFETY: valid create info.
        let instance =
            unsafe { entry.create_instance(&vk::InstanceCreateInfo::default().application_info(&app), None) }
                .map_err(|e| format!("step 2: {e:?}"))?;
        // SAFETY: valid instance.
        let pds = unsafe { instance.enumerate_physical_devices() }.map_err(|e| format!("step 3: {e:?}"))?;
        let mut names = vec![];
        for pd in pds {
            // SAFETY: valid physical device.
            let props = unsafe { instance.get_physical_device_properties(pd) };
            names.push(format!("{:?} api {:#x}", props.device_name_as_c_str(), props.api_version));
            if props.api_version < vk::API_VERSION_1_3 {
                continue;
            }
            let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
            let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
            let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f12).push_next(&mut f11);
            // SAFETY: valid physical device and chain.
            unsafe { instance.get_physical_device_features2(pd, &mut f2) };
            let base = f2.features;
            if base.shader_int64 == 0 || f12.buffer_device_address == 0 {
                continue;
            }
            // SAFETY: valid physical device.
            let qfs = unsafe { instance.get_physical_device_queue_family_properties(pd) };
            let Some(qf) = qfs.iter().position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE)) else { continue };
            let qf = qf as u32;
            if f12.shader_buffer_int64_atomics == 0 || f12.scalar_block_layout == 0 {
                continue;
            }
            let mm = f12.vulkan_memory_model != 0 && f12.vulkan_memory_model_device_scope != 0;
            let mut e12 = vk::PhysicalDeviceVulkan12Features::default()
                .buffer_device_address(true)
                .shader_buffer_int64_atomics(true)
                .scalar_block_layout(true)
                .vulkan_memory_model(mm)
                .vulkan_memory_model_device_scope(mm);
            // 16-bit payload members (u16 dispatch grids) where the device has them.
            let has16 = base.shader_int16 != 0 && f11.storage_buffer16_bit_access != 0;
            let mut e11 = vk::PhysicalDeviceVulkan11Features::default().storage_buffer16_bit_access(has16);
            let features = vk::PhysicalDeviceFeatures::default().shader_int64(true).shader_int16(has16);
            let prio = [1.0f32];
            let qci = [vk::DeviceQueueCreateInfo::default().queue_family_index(qf).queue_priorities(&prio)];
            let dci = vk::DeviceCreateInfo::default()
                .queue_create_infos(&qci)
                .enabled_features(&features)
                .push_next(&mut e12)
                .push_next(&mut e11);
            // SAFETY: valid create info.
            let device = unsafe { instance.create_device(pd, &dci, None) }.map_err(|e| format!("step 4: {e:?}"))?;
            // SAFETY: queue family and index exist.
            let queue = unsafe { device.get_device_queue(qf, 0) };
            let bci = vk::BufferCreateInfo::default()
                .size(at::SIZE as u64)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS);
            // SAFETY: valid device and create info.
            let buffer = unsafe { device.create_buffer(&bci, None) }.map_err(|e| format!("step 5: {e:?}"))?;
            // SAFETY: valid buffer.
            let req = unsafe { device.get_buffer_memory_requirements(buffer) };
            // SAFETY: valid physical device.
            let mp = unsafe { instance.get_physical_device_memory_properties(pd) };
            let want = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let mt = (0..mp.memory_type_count)
                .find(|&i| {
                    req.memory_type_bits & (1 << i) != 0 && mp.memory_types[i as usize].property_flags.contains(want)
                })
                .ok_or("no host-visible coherent memory type")?;
            let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
            let mai =
                vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(mt).push_next(&mut flags);
            // SAFETY: valid allocate info.
            let memory = unsafe { device.allocate_memory(&mai, None) }.map_err(|e| format!("step 6: {e:?}"))?;
            // SAFETY: fresh buffer and memory of the required size.
            unsafe { device.bind_buffer_memory(buffer, memory, 0) }.map_err(|e| format!("step 7: {e:?}"))?;
            // SAFETY: host-visible memory, mapped once.
            let ptr = unsafe { device.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
                .map_err(|e| format!("step 8: {e:?}"))? as *mut u8;
            // SAFETY: buffer created with SHADER_DEVICE_ADDRESS.
            let base =
                unsafe { device.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer)) };
            let name = props.device_name_as_c_str().map(|c| c.to_string_lossy().into_owned()).unwrap_or_default();
            let mut gpu = Gpu {
                _entry: entry,
                instance,
                device,
                queue,
                qf,
                buffer,
                memory,
                ptr,
                size: at::SIZE,
                base,
                name,
                has16,
            };
            gpu.bytes().fill(0);
            return Ok(gpu);
        }
        Err(format!(
            "no physical device with Vulkan 1.3 + bufferDeviceAddress + shaderInt64 + shaderBufferInt64Atomics \
             + scalarBlockLayout among {names:?}"
        ))
    }

    /// The mapped buffer.
    pub fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` maps `size` bytes for the lifetime of `self`; the GPU is idle between calls.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.size) }
    }
    /// The mapped buffer, read-only.
    pub fn view(&self) -> &[u8] {
        // SAFETY: as in `bytes`, read-only.
        unsafe { std::slice::from_raw_parts(self.ptr, self.size) }
    }
    pub fn put32(&mut self, off: usize, v: u32) {
        self.bytes()[off..off + 4].copy_from_slice(&v.to_le_bytes());
    }
    pub fn put64(&mut self, off: usize, v: u64) {
        self.bytes()[off..off + 8].copy_from_slice(&v.to_le_bytes());
    }
    pub fn get32(&self, off: usize) -> u32 {
        u32::from_le_bytes(self.view()[off..off + 4].try_into().unwrap())
    }
    pub fn get64(&self, off: usize) -> u64 {
        u64::from_le_bytes(self.view()[off..off + 8].try_into().unwrap())
    }
    pub fn put_bytes(&mut self, off: usize, data: &[u8]) {
        self.bytes()[off..off + data.len()].copy_from_slice(data);
    }
    /// `count` words from `off`.
    pub fn words(&self, off: usize, count: usize) -> Vec<u32> {
        (0..count).map(|k| self.get32(off + 4 * k)).collect()
    }
    pub fn addr(&self, off: usize) -> u64 {
        self.base + off as u64
    }
    pub fn off(&self, addr: u64) -> usize {
        (addr - self.base) as usize
    }

    /// Runs `entry` of `words` once: set 0 binding 0 = the UAV area, `push`
    /// at `push_offset` of the push constants, `groups` workgroups.
    pub fn run(&self, words: &[u32], entry: &str, push_offset: u32, groups: [u32; 3], push: &NodePush) {
        let d = &self.device;
        let c = CString::new(entry).unwrap();
        // SAFETY: straightforward object creation and one submission on handles created here.
        unsafe {
            let module = d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(words), None).unwrap();
            let binding = [vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)];
            let dsl = d
                .create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding), None)
                .unwrap();
            let ranges = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .offset(0)
                .size(push_offset + 24)];
            let layouts = [dsl];
            let pl = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts).push_constant_ranges(&ranges),
                    None,
                )
                .unwrap();
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(&c);
            let pipe = d
                .create_compute_pipelines(
                    vk::PipelineCache::null(),
                    &[vk::ComputePipelineCreateInfo::default().stage(stage).layout(pl)],
                    None,
                )
                .unwrap()[0];
            let sizes = [vk::DescriptorPoolSize::default().ty(vk::DescriptorType::STORAGE_BUFFER).descriptor_count(1)];
            let pool = d
                .create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None)
                .unwrap();
            let set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts),
                )
                .unwrap()[0];
            let bi = [vk::DescriptorBufferInfo::default()
                .buffer(self.buffer)
                .offset(at::UAV as u64)
                .range(at::UAV_SIZE as u64)];
            let w = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&bi);
            d.update_descriptor_sets(&[w], &[]);
            let cp =
                d.create_command_pool(&vk::CommandPoolCreateInfo::default().queue_family_index(self.qf), None).unwrap();
            let cb = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default().command_pool(cp).command_buffer_count(1),
                )
                .unwrap()[0];
            d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default()).unwrap();
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipe);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, pl, 0, &[set], &[]);
            let mut bytes = vec![];
            bytes.extend(push.dispatch.to_le_bytes());
            bytes.extend(push.ctx.to_le_bytes());
            bytes.extend(push.level.to_le_bytes());
            bytes.extend(push.slot.to_le_bytes());
            d.cmd_push_constants(cb, pl, vk::ShaderStageFlags::COMPUTE, push_offset, &bytes);
            d.cmd_dispatch(cb, groups[0], groups[1], groups[2]);
            d.end_command_buffer(cb).unwrap();
            let fence = d.create_fence(&vk::FenceCreateInfo::default(), None).unwrap();
            let cbs = [cb];
            d.queue_submit(self.queue, &[vk::SubmitInfo::default().command_buffers(&cbs)], fence).unwrap();
            d.wait_for_fences(&[fence], true, u64::MAX).unwrap();
            d.destroy_fence(fence, None);
            d.destroy_command_pool(cp, None);
            d.destroy_descriptor_pool(pool, None);
            d.destroy_pipeline(pipe, None);
            d.destroy_pipeline_layout(pl, None);
            d.destroy_descriptor_set_layout(dsl, None);
            d.destroy_shader_module(module, None);
        }
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: the device is idle (every run waits on its fence); objects created in `new`.
        unsafe {
            self.device.destroy_buffer(self.buffer, None);
            self.device.free_memory(self.memory, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}
