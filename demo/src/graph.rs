//! An execution graph pipeline as an application builds one: a shader
//! module of node shaders, one descriptor set of storage buffers (set 0),
//! `vkCreateExecutionGraphPipelinesAMDX`, the node-index and scratch-size
//! queries, and the recording of scratch initialisation and a host dispatch.

use std::ffi::CStr;

use ash::vk;

use crate::amdx::{self, PfnCmdDispatchGraph, PfnCmdInitializeScratch, PfnGetScratchSize, ScratchSize};
use crate::gpu::{Buffer, Gpu};
use crate::vkutil;

/// The loader's generic function pointer type.
type Pfn = unsafe extern "system" fn();

/// The AMDX entry points the binaries call, resolved through the layer.
pub struct GraphFns {
    create: vk::PFN_vkCreateExecutionGraphPipelinesAMDX,
    scratch_size: PfnGetScratchSize,
    node_index: vk::PFN_vkGetExecutionGraphPipelineNodeIndexAMDX,
    init_scratch: PfnCmdInitializeScratch,
    dispatch: PfnCmdDispatchGraph,
}

impl GraphFns {
    /// Resolves the five commands (revision-2 signatures); an error names a missing one.
    pub fn load(gpu: &Gpu) -> Result<Self, String> {
        let create = gpu.proc_addr(c"vkCreateExecutionGraphPipelinesAMDX")?;
        let scratch_size = gpu.proc_addr(c"vkGetExecutionGraphPipelineScratchSizeAMDX")?;
        let node_index = gpu.proc_addr(c"vkGetExecutionGraphPipelineNodeIndexAMDX")?;
        let init_scratch = gpu.proc_addr(c"vkCmdInitializeGraphScratchMemoryAMDX")?;
        let dispatch = gpu.proc_addr(c"vkCmdDispatchGraphAMDX")?;
        // SAFETY: each pointer is the entry point of the name it was asked
        // for, whose revision-2 signature is the target type.
        unsafe {
            Ok(Self {
                create: std::mem::transmute::<Pfn, vk::PFN_vkCreateExecutionGraphPipelinesAMDX>(create),
                scratch_size: std::mem::transmute::<Pfn, PfnGetScratchSize>(scratch_size),
                node_index: std::mem::transmute::<Pfn, vk::PFN_vkGetExecutionGraphPipelineNodeIndexAMDX>(node_index),
                init_scratch: std::mem::transmute::<Pfn, PfnCmdInitializeScratch>(init_scratch),
                dispatch: std::mem::transmute::<Pfn, PfnCmdDispatchGraph>(dispatch),
            })
        }
    }
}

/// A graph pipeline and the objects it was made from; destroyed on drop.
pub struct Graph<'d> {
    device: &'d ash::Device,
    fns: GraphFns,
    module: vk::ShaderModule,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    pub pipeline: vk::Pipeline,
}

impl<'d> Graph<'d> {
    /// Creates a graph whose nodes are the entry points `entries` of `spv`
    /// (each `(entry, index)`: `index` overrides the node index through
    /// `VkPipelineShaderStageNodeCreateInfoAMDX`, `u32::MAX` keeps the shader's)
    /// (no name/index overrides), with `storage` bound at set 0.
    pub fn new(gpu: &'d Gpu, spv: &[u8], entries: &[(&CStr, u32)], storage: &[&Buffer<'_>]) -> Result<Self, String> {
        let mut g = Graph {
            device: &gpu.device,
            fns: GraphFns::load(gpu)?,
            module: vk::ShaderModule::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            pool: vk::DescriptorPool::null(),
            set: vk::DescriptorSet::null(),
            pipeline: vk::Pipeline::null(),
        };
        let words = vkutil::spirv_words(spv)?;
        // SAFETY: valid device and create info; `g` destroys the module.
        g.module = unsafe { g.device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None) }
            .map_err(|e| format!("vkCreateShaderModule: {e:?}"))?;
        g.create_layouts(storage.len() as u32)?;
        g.write_set(storage);
        g.create_pipeline(entries)?;
        Ok(g)
    }

    /// Set 0 with `count` storage buffers, the pipeline layout, a pool and the set.
    fn create_layouts(&mut self, count: u32) -> Result<(), String> {
        let d = self.device;
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
        // SAFETY: (whole block) valid device and create infos of locals;
        // every object is stored in `self` at once and destroyed on drop.
        unsafe {
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
            self.set_layout =
                d.create_descriptor_set_layout(&info, None).map_err(err("vkCreateDescriptorSetLayout"))?;
            let set_layouts = [self.set_layout];
            let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
            self.layout = d.create_pipeline_layout(&info, None).map_err(err("vkCreatePipelineLayout"))?;
            let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: count }];
            let info = vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes);
            self.pool = d.create_descriptor_pool(&info, None).map_err(err("vkCreateDescriptorPool"))?;
            let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(self.pool).set_layouts(&set_layouts);
            let sets = d.allocate_descriptor_sets(&info).map_err(err("vkAllocateDescriptorSets"))?;
            self.set = sets.first().copied().ok_or("vkAllocateDescriptorSets returned nothing")?;
        }
        Ok(())
    }

    /// Points binding i of the set at `storage[i]` (whole buffer).
    fn write_set(&self, storage: &[&Buffer<'_>]) {
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
        unsafe { self.device.update_descriptor_sets(&writes, &[]) };
    }

    /// `vkCreateExecutionGraphPipelinesAMDX` with one compute stage per entry point.
    fn create_pipeline(&mut self, entries: &[(&CStr, u32)]) -> Result<(), String> {
        let nodes: Vec<vk::PipelineShaderStageNodeCreateInfoAMDX> = entries
            .iter()
            .map(|&(_, index)| vk::PipelineShaderStageNodeCreateInfoAMDX::default().index(index))
            .collect();
        let stages: Vec<_> = entries
            .iter()
            .zip(&nodes)
            .map(|(&(name, _), node)| {
                let mut stage = vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::COMPUTE)
                    .module(self.module)
                    .name(name);
                // pName stays null: the entry point's name is the node name.
                stage.p_next = (node as *const vk::PipelineShaderStageNodeCreateInfoAMDX).cast();
                stage
            })
            .collect();
        let info = vk::ExecutionGraphPipelineCreateInfoAMDX::default().stages(&stages).layout(self.layout);
        // SAFETY: valid create info whose arrays live across the call; one output.
        let result = unsafe {
            (self.fns.create)(
                self.device.handle(),
                vk::PipelineCache::null(),
                1,
                &info,
                std::ptr::null(),
                &mut self.pipeline,
            )
        };
        if result != vk::Result::SUCCESS {
            return Err(format!("vkCreateExecutionGraphPipelinesAMDX: {result:?}"));
        }
        Ok(())
    }

    /// `vkGetExecutionGraphPipelineNodeIndexAMDX` of the node (name, index).
    pub fn node_index(&self, name: &CStr, index: u32) -> Result<u32, String> {
        let mut info = vk::PipelineShaderStageNodeCreateInfoAMDX::default().index(index);
        info.p_name = name.as_ptr();
        let mut out = 0;
        // SAFETY: valid graph, info and output.
        let result = unsafe { (self.fns.node_index)(self.device.handle(), self.pipeline, &info, &mut out) };
        match result {
            vk::Result::SUCCESS => Ok(out),
            e => Err(format!("vkGetExecutionGraphPipelineNodeIndexAMDX({name:?}, {index}): {e:?}")),
        }
    }

    /// `vkGetExecutionGraphPipelineScratchSizeAMDX` (revision 2).
    pub fn scratch_size(&self) -> Result<ScratchSize, String> {
        let mut size = ScratchSize::default();
        // SAFETY: valid graph and output structure.
        let result = unsafe { (self.fns.scratch_size)(self.device.handle(), self.pipeline, &mut size) };
        match result {
            vk::Result::SUCCESS => Ok(size),
            e => Err(format!("vkGetExecutionGraphPipelineScratchSizeAMDX: {e:?}")),
        }
    }

    /// Records: bind the graph and set 0, initialise `scratch`, barrier.
    pub fn record_setup(&self, cb: vk::CommandBuffer, scratch: &Buffer<'_>) {
        let d = self.device;
        // SAFETY: `cb` is recording; graph, set and scratch are valid.
        unsafe {
            d.cmd_bind_pipeline(cb, amdx::BIND_POINT, self.pipeline);
            d.cmd_bind_descriptor_sets(cb, amdx::BIND_POINT, self.layout, 0, &[self.set], &[]);
            (self.fns.init_scratch)(cb, self.pipeline, scratch.address, scratch.size);
        }
        let write = vk::AccessFlags::SHADER_WRITE;
        barrier(d, cb, write, vk::AccessFlags::SHADER_READ | write, vk::PipelineStageFlags::COMPUTE_SHADER);
    }

    /// Records `vkCmdDispatchGraphAMDX` of `count` host records of `stride`
    /// bytes (`records`) into node `node`. The layer copies the payloads
    /// while recording, as the extension allows.
    pub fn record_dispatch(&self, cb: vk::CommandBuffer, scratch: &Buffer<'_>, node: u32, records: &[u8], count: u32) {
        let info = vk::DispatchGraphInfoAMDX {
            node_index: node,
            payload_count: count,
            payloads: vk::DeviceOrHostAddressConstAMDX { host_address: records.as_ptr().cast() },
            payload_stride: records.len() as u64 / u64::from(count.max(1)),
        };
        let count_info = vk::DispatchGraphCountInfoAMDX {
            count: 1,
            infos: vk::DeviceOrHostAddressConstAMDX {
                host_address: (&info as *const vk::DispatchGraphInfoAMDX).cast(),
            },
            stride: std::mem::size_of::<vk::DispatchGraphInfoAMDX>() as u64,
        };
        // SAFETY: `cb` is recording with the graph bound; `info` and `records`
        // live across the call.
        unsafe { (self.fns.dispatch)(cb, scratch.address, scratch.size, &count_info) };
    }

    /// Records the barrier that makes the graph's writes visible to the host.
    pub fn record_host_barrier(&self, cb: vk::CommandBuffer) {
        let (write, read) = (vk::AccessFlags::SHADER_WRITE, vk::AccessFlags::HOST_READ);
        barrier(self.device, cb, write, read, vk::PipelineStageFlags::HOST);
    }
}

/// A global memory barrier from compute shaders to `dst_stage`.
fn barrier(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    src: vk::AccessFlags,
    dst: vk::AccessFlags,
    dst_stage: vk::PipelineStageFlags,
) {
    let barrier = vk::MemoryBarrier::default().src_access_mask(src).dst_access_mask(dst);
    let src_stage = vk::PipelineStageFlags::COMPUTE_SHADER;
    // SAFETY: `cb` is recording outside a render pass.
    unsafe { d.cmd_pipeline_barrier(cb, src_stage, dst_stage, vk::DependencyFlags::empty(), &[barrier], &[], &[]) };
}

impl Drop for Graph<'_> {
    fn drop(&mut self) {
        let d = self.device;
        // SAFETY: idle objects of this device (null handles are ignored); the
        // set is freed with its pool.
        unsafe {
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_descriptor_pool(self.pool, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            d.destroy_shader_module(self.module, None);
        }
    }
}
