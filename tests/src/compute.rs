//! Compute pipelines from SPIR-V words with one storage buffer (set 0,
//! binding 0) and a push-constant range, plus the committed test shaders.

use std::io::Cursor;

use ash::vk;

use crate::buffer::HostBuffer;
use crate::device::{Owned, TestDevice};
use crate::error::{Error, Result};

/// `tests/shaders/scale_add.comp`: `data[i] = data[i] * mul + add` for
/// `i < count`; push constants `{mul, add, count}`; 64 invocations a group.
pub const SCALE_ADD_SPV: &[u8] = include_bytes!("../shaders/scale_add.comp.spv");

/// Decodes a SPIR-V binary into aligned words.
pub fn spirv_words(bytes: &[u8]) -> Result<Vec<u32>> {
    ash::util::read_spv(&mut Cursor::new(bytes)).map_err(Error::io("decode SPIR-V"))
}

/// A compute pipeline with its layout and one descriptor set.
#[derive(Debug, Clone, Copy)]
pub struct StorageCompute {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    pub set: vk::DescriptorSet,
    pub push_constant_size: u32,
}

impl TestDevice<'_> {
    /// Builds a compute pipeline (entry `main`) from `words` whose set 0
    /// binding 0 is `buffer` and whose push constants are `push_constant_size` bytes.
    pub fn create_storage_compute(
        &self,
        words: &[u32],
        push_constant_size: u32,
        buffer: &HostBuffer,
    ) -> Result<StorageCompute> {
        let d = &self.device;
        let module_info = vk::ShaderModuleCreateInfo::default().code(words);
        // SAFETY: valid device and SPIR-V words.
        let module =
            unsafe { d.create_shader_module(&module_info, None) }.map_err(Error::vk("vkCreateShaderModule"))?;
        self.own(Owned::ShaderModule(module));

        let bindings = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        let set_layout_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        // SAFETY: valid device.
        let set_layout = unsafe { d.create_descriptor_set_layout(&set_layout_info, None) }
            .map_err(Error::vk("vkCreateDescriptorSetLayout"))?;
        self.own(Owned::SetLayout(set_layout));

        let set_layouts = [set_layout];
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(push_constant_size)];
        let mut layout_info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if push_constant_size > 0 {
            layout_info = layout_info.push_constant_ranges(&ranges);
        }
        // SAFETY: valid device.
        let layout =
            unsafe { d.create_pipeline_layout(&layout_info, None) }.map_err(Error::vk("vkCreatePipelineLayout"))?;
        self.own(Owned::PipelineLayout(layout));

        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout);
        // SAFETY: valid device, module and layout.
        let pipeline = unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &[info], None) }
            .map_err(|(_, e)| Error::vk("vkCreateComputePipelines")(e))?[0];
        self.own(Owned::Pipeline(pipeline));

        let sizes = [vk::DescriptorPoolSize::default().ty(vk::DescriptorType::STORAGE_BUFFER).descriptor_count(1)];
        let pool_info = vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes);
        // SAFETY: valid device.
        let pool =
            unsafe { d.create_descriptor_pool(&pool_info, None) }.map_err(Error::vk("vkCreateDescriptorPool"))?;
        self.own(Owned::DescriptorPool(pool));
        let alloc = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&set_layouts);
        // SAFETY: pool has room for one set of this layout.
        let set = unsafe { d.allocate_descriptor_sets(&alloc) }.map_err(Error::vk("vkAllocateDescriptorSets"))?[0];
        let buffer_infos = [vk::DescriptorBufferInfo::default().buffer(buffer.buffer).offset(0).range(vk::WHOLE_SIZE)];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&buffer_infos);
        // SAFETY: set and buffer are valid; nothing uses the set yet.
        unsafe { d.update_descriptor_sets(&[write], &[]) };
        Ok(StorageCompute { pipeline, layout, set, push_constant_size })
    }

    /// Records bind pipeline + descriptor set + push constants + dispatch of
    /// `groups` workgroups, followed by a compute-to-host barrier.
    pub fn record_dispatch(&self, cb: vk::CommandBuffer, p: &StorageCompute, push: &[u8], groups: u32) {
        let d = &self.device;
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ);
        // SAFETY: cb is recording; all handles belong to this device.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, p.pipeline);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, p.layout, 0, &[p.set], &[]);
            if !push.is_empty() {
                d.cmd_push_constants(cb, p.layout, vk::ShaderStageFlags::COMPUTE, 0, push);
            }
            d.cmd_dispatch(cb, groups, 1, 1);
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            );
        }
    }
}

/// Push-constant bytes for `scale_add.comp`.
pub fn scale_add_push(mul: u32, add: u32, count: u32) -> [u8; 12] {
    let mut out = [0u8; 12];
    out[0..4].copy_from_slice(&mul.to_ne_bytes());
    out[4..8].copy_from_slice(&add.to_ne_bytes());
    out[8..12].copy_from_slice(&count.to_ne_bytes());
    out
}

/// Runs `scale_add.comp` over `input` on `dev` and returns the result.
pub fn run_scale_add(dev: &TestDevice<'_>, input: &[u32], mul: u32, add: u32) -> Result<Vec<u32>> {
    let bytes = std::mem::size_of_val(input).max(4) as vk::DeviceSize;
    let buf = dev.create_host_buffer(bytes, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    buf.write_u32(input)?;
    let words = spirv_words(SCALE_ADD_SPV)?;
    let p = dev.create_storage_compute(&words, 12, &buf)?;
    let push = scale_add_push(mul, add, input.len() as u32);
    let groups = (input.len() as u32).div_ceil(64).max(1);
    dev.submit_once(|cb| dev.record_dispatch(cb, &p, &push, groups))?;
    buf.read_u32(input.len())
}
