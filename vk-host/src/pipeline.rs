//! Compute plumbing: SPIR-V words, shader modules, a descriptor set of
//! storage buffers with its pipeline layout ([`StorageBindings`]), and
//! compute pipelines.

use std::ffi::CStr;
use std::io::Cursor;

use ash::vk;

use crate::{vk_err, Error, Result};

/// Decodes a SPIR-V binary into aligned words.
pub fn spirv_words(bytes: &[u8]) -> Result<Vec<u32>> {
    ash::util::read_spv(&mut Cursor::new(bytes)).map_err(|e| Error::Missing(format!("bad SPIR-V: {e}")))
}

/// A shader module of `words`.
pub fn shader_module(d: &ash::Device, words: &[u32]) -> Result<vk::ShaderModule> {
    // SAFETY: valid device and code.
    unsafe { d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(words), None) }
        .map_err(vk_err("vkCreateShaderModule"))
}

/// A compute pipeline of `entry` in `module` on `layout`.
pub fn compute_pipeline(
    d: &ash::Device,
    module: vk::ShaderModule,
    entry: &CStr,
    layout: vk::PipelineLayout,
) -> Result<vk::Pipeline> {
    let stage =
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(entry);
    let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout);
    // SAFETY: valid create info of locals.
    let pipelines = unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &[info], None) }
        .map_err(|(_, e)| Error::Vk { call: "vkCreateComputePipelines", result: e })?;
    pipelines.first().copied().ok_or_else(|| Error::Missing("vkCreateComputePipelines returned nothing".into()))
}

/// `bindings` compute-visible storage buffers at bindings `0..bindings` of
/// set 0: the set layout, a pipeline layout with it (and `push_bytes` of
/// compute push constants when non-zero), a pool and the one set. Plain
/// handles: the creator destroys them with [`StorageBindings::destroy`].
#[derive(Debug, Clone, Copy, Default)]
pub struct StorageBindings {
    pub set_layout: vk::DescriptorSetLayout,
    pub layout: vk::PipelineLayout,
    pub pool: vk::DescriptorPool,
    pub set: vk::DescriptorSet,
}

impl StorageBindings {
    /// Creates the layouts, the pool and the set (not written yet).
    pub fn new(d: &ash::Device, bindings: u32, push_bytes: u32) -> Result<Self> {
        let mut out = Self::default();
        let made = out.create(d, bindings, push_bytes);
        if made.is_err() {
            // SAFETY: nothing uses the new objects; null handles are ignored.
            unsafe { out.destroy(d) };
        }
        made.map(|()| out)
    }

    fn create(&mut self, d: &ash::Device, bindings: u32, push_bytes: u32) -> Result<()> {
        let list: Vec<_> = (0..bindings)
            .map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let ranges =
            [vk::PushConstantRange { stage_flags: vk::ShaderStageFlags::COMPUTE, offset: 0, size: push_bytes }];
        // SAFETY: (whole block) valid device and create infos of locals;
        // each object is stored in `self` at once.
        unsafe {
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&list);
            self.set_layout =
                d.create_descriptor_set_layout(&info, None).map_err(vk_err("vkCreateDescriptorSetLayout"))?;
            let set_layouts = [self.set_layout];
            let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
            if push_bytes > 0 {
                info = info.push_constant_ranges(&ranges);
            }
            self.layout = d.create_pipeline_layout(&info, None).map_err(vk_err("vkCreatePipelineLayout"))?;
            let sizes =
                [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: bindings.max(1) }];
            let info = vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes);
            self.pool = d.create_descriptor_pool(&info, None).map_err(vk_err("vkCreateDescriptorPool"))?;
            let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(self.pool).set_layouts(&set_layouts);
            let sets = d.allocate_descriptor_sets(&info).map_err(vk_err("vkAllocateDescriptorSets"))?;
            self.set = sets
                .first()
                .copied()
                .ok_or_else(|| Error::Missing("vkAllocateDescriptorSets returned nothing".into()))?;
        }
        Ok(())
    }

    /// Points binding `i` at the whole of `buffers[i]`.
    pub fn write(&self, d: &ash::Device, buffers: &[vk::Buffer]) {
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = buffers
            .iter()
            .map(|&buffer| [vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE }])
            .collect();
        let writes: Vec<_> = infos
            .iter()
            .enumerate()
            .map(|(i, info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(self.set)
                    .dst_binding(i as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info)
            })
            .collect();
        // SAFETY: valid set and buffers; the set is not in use while written.
        unsafe { d.update_descriptor_sets(&writes, &[]) };
    }

    /// Destroys the pool (and so the set) and both layouts.
    ///
    /// # Safety
    /// `d` made them and nothing in flight uses them.
    pub unsafe fn destroy(&self, d: &ash::Device) {
        // SAFETY: the caller's contract; null handles are ignored.
        unsafe {
            d.destroy_descriptor_pool(self.pool, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}
