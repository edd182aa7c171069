//! Plain-compute baselines: compute pipelines from GLSL-compiled SPIR-V that
//! share one layout (set 0: up to four storage buffers at bindings 0..3, a
//! 16-byte push-constant block `uvec4 p`), and the few commands they record.

use ash::vk;

use demo::gpu::{Buffer, Gpu};
use demo::vkutil;

/// Compute pipelines, their shared layout and descriptor set; destroyed on drop.
pub struct Kernels<'d> {
    device: &'d ash::Device,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    modules: Vec<vk::ShaderModule>,
    pipelines: Vec<vk::Pipeline>,
}

impl<'d> Kernels<'d> {
    /// One pipeline per SPIR-V blob of `spvs` (entry `main`), with
    /// `storage[i]` bound at binding `i` of set 0.
    pub fn new(gpu: &'d Gpu, spvs: &[&[u8]], storage: &[&Buffer<'_>]) -> Result<Self, String> {
        let mut k = Kernels {
            device: &gpu.device,
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            pool: vk::DescriptorPool::null(),
            set: vk::DescriptorSet::null(),
            modules: Vec::new(),
            pipelines: Vec::new(),
        };
        k.create_layout(storage)?;
        for spv in spvs {
            k.create_pipeline(spv)?;
        }
        Ok(k)
    }

    fn create_layout(&mut self, storage: &[&Buffer<'_>]) -> Result<(), String> {
        let d = self.device;
        let count = storage.len() as u32;
        let bindings: Vec<_> = (0..count)
            .map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let err = |what: &'static str| move |e: vk::Result| format!("{what}: {e:?}");
        let ranges = [vk::PushConstantRange { stage_flags: vk::ShaderStageFlags::COMPUTE, offset: 0, size: 16 }];
        // SAFETY: (whole block) valid device and create infos of locals;
        // every object is stored in `self` at once and destroyed on drop.
        unsafe {
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
            self.set_layout =
                d.create_descriptor_set_layout(&info, None).map_err(err("vkCreateDescriptorSetLayout"))?;
            let set_layouts = [self.set_layout];
            let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts).push_constant_ranges(&ranges);
            self.layout = d.create_pipeline_layout(&info, None).map_err(err("vkCreatePipelineLayout"))?;
            let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: count }];
            let info = vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes);
            self.pool = d.create_descriptor_pool(&info, None).map_err(err("vkCreateDescriptorPool"))?;
            let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(self.pool).set_layouts(&set_layouts);
            let sets = d.allocate_descriptor_sets(&info).map_err(err("vkAllocateDescriptorSets"))?;
            self.set = sets.first().copied().ok_or("vkAllocateDescriptorSets returned nothing")?;
        }
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = storage
            .iter()
            .map(|b| [vk::DescriptorBufferInfo { buffer: b.buffer, offset: 0, range: vk::WHOLE_SIZE }])
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
        // SAFETY: valid set and buffers; the set is not in use.
        unsafe { d.update_descriptor_sets(&writes, &[]) };
        Ok(())
    }

    fn create_pipeline(&mut self, spv: &[u8]) -> Result<(), String> {
        let d = self.device;
        let words = vkutil::spirv_words(spv)?;
        // SAFETY: valid device and code; the module is destroyed on drop.
        let module = unsafe { d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None) }
            .map_err(|e| format!("vkCreateShaderModule: {e:?}"))?;
        self.modules.push(module);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(self.layout);
        // SAFETY: valid create info of locals.
        let pipelines = unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &[info], None) }
            .map_err(|(_, e)| format!("vkCreateComputePipelines: {e:?}"))?;
        self.pipelines.extend(pipelines);
        Ok(())
    }

    /// Binds pipeline `index` and the set, and pushes `p`.
    pub fn bind(&self, cb: vk::CommandBuffer, index: usize, p: [u32; 4]) {
        let d = self.device;
        let bytes: Vec<u8> = p.iter().flat_map(|w| w.to_le_bytes()).collect();
        // SAFETY: `cb` is recording; pipeline, layout and set are valid.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, self.pipelines[index]);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, self.layout, 0, &[self.set], &[]);
            d.cmd_push_constants(cb, self.layout, vk::ShaderStageFlags::COMPUTE, 0, &bytes);
        }
    }

    /// `vkCmdDispatch(x, 1, 1)` of the bound pipeline.
    pub fn dispatch(&self, cb: vk::CommandBuffer, x: u32) {
        // SAFETY: `cb` is recording with a compute pipeline bound.
        unsafe { self.device.cmd_dispatch(cb, x, 1, 1) };
    }

    /// `vkCmdDispatch(x, y, 1)` of the bound pipeline.
    pub fn dispatch_2d(&self, cb: vk::CommandBuffer, x: u32, y: u32) {
        // SAFETY: `cb` is recording with a compute pipeline bound.
        unsafe { self.device.cmd_dispatch(cb, x, y, 1) };
    }

    /// `vkCmdDispatchIndirect` reading `args` at `offset`.
    pub fn dispatch_indirect(&self, cb: vk::CommandBuffer, args: &Buffer<'_>, offset: u64) {
        // SAFETY: `cb` is recording; `args` has INDIRECT_BUFFER usage.
        unsafe { self.device.cmd_dispatch_indirect(cb, args.buffer, offset) };
    }
}

impl Drop for Kernels<'_> {
    fn drop(&mut self) {
        let d = self.device;
        // SAFETY: idle objects of this device (null handles are ignored).
        unsafe {
            for &p in &self.pipelines {
                d.destroy_pipeline(p, None);
            }
            for &m in &self.modules {
                d.destroy_shader_module(m, None);
            }
            d.destroy_descriptor_pool(self.pool, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}
