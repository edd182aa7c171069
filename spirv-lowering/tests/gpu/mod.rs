//! A minimal Vulkan harness (ash) for running one lowered node kernel against
//! a hand-built ABI state in one host-visible buffer with a device address.
//! Every unsafe block is a plain Vulkan call on handles this harness created.
#![allow(dead_code)]

use ash::vk;
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

/// Offsets of the scratch areas inside the one buffer (ABI version 3).
pub mod at {
    pub const CTX: usize = 0;
    pub const LEVEL_STATUS: usize = 256;
    /// `NodeDispatch`es of level parity 0 (8 node slots at most), then parity 1.
    pub const DISPATCH: usize = 512;
    pub const DISPATCH1: usize = 1024;
    pub const RECORDS: usize = 2048;
    pub const INPUTS: usize = 8192;
    /// `u64` record counters of parity 0, then parity 1.
    pub const COUNTS: usize = 16384;
    pub const COUNTS1: usize = 16384 + 128;
    pub const SCHEDULES: usize = 16640;
    pub const LINKS: usize = 17152;
    pub const NODES: usize = 17408;
    pub const SLOTS: usize = 17664;
    /// The record index: [`INDEX_SLOTS`] slots of 24 bytes.
    pub const INDEX: usize = 32768;
    pub const INDEX_SLOTS: usize = 1024;
    pub const SINK: usize = 65536;
    pub const RING: usize = 131072;
    pub const UAV: usize = 1 << 20;
    pub const UAV_SIZE: usize = 12 << 20;
    /// `abi::DONE_GROUPS_BYTES` of done-group counters.
    pub const DONE_GROUPS: usize = 13 << 20;
    pub const SIZE: usize = 14 << 20;
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
    fn view(&self) -> &[u8] {
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
    pub fn addr(&self, off: usize) -> u64 {
        self.base + off as u64
    }
    pub fn off(&self, addr: u64) -> usize {
        (addr - self.base) as usize
    }

    /// Runs `entry` of `words` once with set 0 binding 0 = the UAV area,
    /// `NodePush` at `push_offset` (the `NodeDispatch` at `at::DISPATCH`,
    /// level 0), and `groups` workgroups.
    pub fn run(&self, words: &[u32], entry: &str, push_offset: u32, groups: [u32; 3]) {
        self.run_at(words, entry, push_offset, groups, at::DISPATCH, 0);
    }

    /// [`Self::run`] with the node's `NodeDispatch` at `dispatch` and `level` pushed.
    pub fn run_at(&self, words: &[u32], entry: &str, push_offset: u32, groups: [u32; 3], dispatch: usize, level: u32) {
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
            // NodePush: this node's dispatch, the context, level 0, its slot.
            let mut push = vec![];
            push.extend(self.addr(dispatch).to_le_bytes());
            push.extend(self.addr(at::CTX).to_le_bytes());
            push.extend(level.to_le_bytes());
            // The slot: the dispatch's key node (the same but for sharers).
            push.extend(self.get32(dispatch + 28).to_le_bytes());
            d.cmd_push_constants(cb, pl, vk::ShaderStageFlags::COMPUTE, push_offset, &push);
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
