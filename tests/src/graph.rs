//! Execution graphs through the layer: node shader modules, a descriptor
//! set of storage buffers, graph pipeline creation, scratch memory, and a
//! host dispatch recorded and run in one submission. Everything goes
//! through the real loader and the application-facing AMDX entry points.

use std::ffi::{c_void, CStr, CString};

use ash::vk;

use crate::amdx::{
    ExecutionGraphPipelineScratchSize, PfnCmdDispatchGraph, PfnCmdInitializeGraphScratchMemory,
    PfnGetExecutionGraphPipelineScratchSize, BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH,
};
use crate::buffer::HostBuffer;
use crate::compute::spirv_words;
use crate::device::TestDevice;
use crate::error::{Error, Result};

/// `VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX`.
pub const BIND_POINT: vk::PipelineBindPoint = vk::PipelineBindPoint::from_raw(1_000_134_000);

/// The loader's generic function pointer type.
type Pfn = unsafe extern "system" fn();

/// The AMDX entry points of a device.
pub struct GraphFns {
    pub create: vk::PFN_vkCreateExecutionGraphPipelinesAMDX,
    pub scratch_size: PfnGetExecutionGraphPipelineScratchSize,
    pub node_index: vk::PFN_vkGetExecutionGraphPipelineNodeIndexAMDX,
    pub init_scratch: PfnCmdInitializeGraphScratchMemory,
    pub dispatch: PfnCmdDispatchGraph,
}

impl GraphFns {
    pub fn load(dev: &TestDevice<'_>) -> Result<Self> {
        let get = |name: &CStr| dev.proc_addr(name).ok_or_else(|| Error::Setup(format!("{name:?} does not resolve")));
        // SAFETY: each pointer is the entry point of the name it was asked for.
        unsafe {
            Ok(GraphFns {
                create: std::mem::transmute::<Pfn, vk::PFN_vkCreateExecutionGraphPipelinesAMDX>(get(
                    c"vkCreateExecutionGraphPipelinesAMDX",
                )?),
                scratch_size: std::mem::transmute::<Pfn, PfnGetExecutionGraphPipelineScratchSize>(get(
                    c"vkGetExecutionGraphPipelineScratchSizeAMDX",
                )?),
                node_index: std::mem::transmute::<Pfn, vk::PFN_vkGetExecutionGraphPipelineNodeIndexAMDX>(get(
                    c"vkGetExecutionGraphPipelineNodeIndexAMDX",
                )?),
                init_scratch: std::mem::transmute::<Pfn, PfnCmdInitializeGraphScratchMemory>(get(
                    c"vkCmdInitializeGraphScratchMemoryAMDX",
                )?),
                dispatch: std::mem::transmute::<Pfn, PfnCmdDispatchGraph>(get(c"vkCmdDispatchGraphAMDX")?),
            })
        }
    }
}

/// A graph pipeline with a set 0 of storage buffers, owned by the test.
pub struct TestGraph<'d> {
    dev: &'d TestDevice<'d>,
    pub fns: GraphFns,
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    pub set: vk::DescriptorSet,
    /// The node shader module the stages come from (the first module of
    /// [`Self::from_modules`]).
    pub module: vk::ShaderModule,
    /// Every module of the graph, in the order given ([`Self::module`] first).
    pub modules: Vec<vk::ShaderModule>,
}

/// Corpus module 01: the D3D12HelloWorkGraphs chain (firstNode -> secondNode
/// -> thirdNode); `models::hello_chain` is its CPU model.
pub const HELLO_CHAIN_SPV: &[u8] = include_bytes!("../../spirv-lowering/tests/corpus/01_hello_chain.spv");

/// The hello chain's stages, in node-index order.
pub const HELLO_CHAIN_STAGES: [Stage<'static>; 3] = [
    Stage { entry: "firstNode", node: None },
    Stage { entry: "secondNode", node: None },
    Stage { entry: "thirdNode", node: None },
];

/// One node stage: entry point and optional (name, index) override.
pub struct Stage<'a> {
    pub entry: &'a str,
    pub node: Option<(&'a str, u32)>,
}

/// Specialization data of one stage: `(constantID, bytes)` map entries; the
/// data of all entries is packed back to back in one `VkSpecializationInfo`.
pub type SpecEntries<'a> = &'a [(u32, &'a [u8])];

/// A stage of a multi-module graph: which module, the stage, its specialization.
struct ModuleStage<'s> {
    module: usize,
    stage: &'s Stage<'s>,
    spec: SpecEntries<'s>,
}

impl<'d> TestGraph<'d> {
    /// The hello chain, writing its sums and counts into `uav` (8 words).
    pub fn hello_chain(dev: &'d TestDevice<'d>, uav: &HostBuffer) -> Result<Self> {
        Self::new(dev, HELLO_CHAIN_SPV, &HELLO_CHAIN_STAGES, &[uav], 0)
    }

    /// Creates the graph from one SPIR-V module's entry points, binding
    /// `buffers` as storage buffers 0.. of set 0 (push constants: `push_bytes`).
    pub fn new(
        dev: &'d TestDevice<'d>,
        spv: &[u8],
        stages: &[Stage<'_>],
        buffers: &[&HostBuffer],
        push_bytes: u32,
    ) -> Result<Self> {
        Self::from_modules(dev, &[(spv, stages)], buffers, push_bytes)
    }

    /// Creates the graph from several SPIR-V modules: `modules` lists each
    /// module with the stages taken from it (a module may serve several
    /// stages, e.g. one entry point renamed to several node-array members).
    /// The order of `pStages`, and so the node index order, is the order of
    /// the stages as given, module by module.
    pub fn from_modules(
        dev: &'d TestDevice<'d>,
        modules: &[(&[u8], &[Stage<'_>])],
        buffers: &[&HostBuffer],
        push_bytes: u32,
    ) -> Result<Self> {
        Self::from_modules_specialized(dev, modules, &[], buffers, push_bytes)
    }

    /// [`Self::from_modules`] with specialization data: `specs` gives, for
    /// a stage position (counted over all modules' stages in order), the map
    /// entries of its `VkSpecializationInfo`.
    pub fn from_modules_specialized(
        dev: &'d TestDevice<'d>,
        modules: &[(&[u8], &[Stage<'_>])],
        specs: &[(usize, SpecEntries<'_>)],
        buffers: &[&HostBuffer],
        push_bytes: u32,
    ) -> Result<Self> {
        let fns = GraphFns::load(dev)?;
        let d = &dev.device;
        let words: Vec<Vec<u32>> = modules.iter().map(|(spv, _)| spirv_words(spv)).collect::<Result<_>>()?;
        // SAFETY: (whole function) valid device and create infos; every
        // object is destroyed in Drop (or here when creation fails).
        unsafe {
            let mut shader_modules = Vec::with_capacity(words.len());
            for w in &words {
                match d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(w), None) {
                    Ok(m) => shader_modules.push(m),
                    Err(e) => {
                        for &m in &shader_modules {
                            d.destroy_shader_module(m, None);
                        }
                        return Err(Error::vk("vkCreateShaderModule")(e));
                    }
                }
            }
            let module = shader_modules.first().copied().unwrap_or_default();
            let bindings: Vec<_> = (0..buffers.len() as u32)
                .map(|b| {
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(b)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .descriptor_count(1)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                })
                .collect();
            let set_layout = d
                .create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)
                .map_err(Error::vk("vkCreateDescriptorSetLayout"))?;
            let ranges =
                [vk::PushConstantRange { stage_flags: vk::ShaderStageFlags::COMPUTE, offset: 0, size: push_bytes }];
            let set_layouts = [set_layout];
            let mut layout_info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
            if push_bytes > 0 {
                layout_info = layout_info.push_constant_ranges(&ranges);
            }
            let layout = d.create_pipeline_layout(&layout_info, None).map_err(Error::vk("vkCreatePipelineLayout"))?;
            let sizes = [vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_BUFFER,
                descriptor_count: buffers.len().max(1) as u32,
            }];
            let pool = d
                .create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None)
                .map_err(Error::vk("vkCreateDescriptorPool"))?;
            let set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&set_layouts),
                )
                .map_err(Error::vk("vkAllocateDescriptorSets"))?[0];
            let infos: Vec<[vk::DescriptorBufferInfo; 1]> = buffers
                .iter()
                .map(|b| [vk::DescriptorBufferInfo { buffer: b.buffer, offset: 0, range: vk::WHOLE_SIZE }])
                .collect();
            let writes: Vec<_> = infos
                .iter()
                .enumerate()
                .map(|(i, info)| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(set)
                        .dst_binding(i as u32)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(info)
                })
                .collect();
            d.update_descriptor_sets(&writes, &[]);
            let mut graph = TestGraph {
                dev,
                fns,
                pipeline: vk::Pipeline::null(),
                layout,
                set_layout,
                pool,
                set,
                module,
                modules: shader_modules,
            };
            let mut stages = Vec::new();
            for (m, (_, list)) in modules.iter().enumerate() {
                for stage in list.iter() {
                    let spec = specs.iter().rev().find(|(at, _)| *at == stages.len()).map_or(&[][..], |(_, e)| *e);
                    stages.push(ModuleStage { module: m, stage, spec });
                }
            }
            let (result, pipelines) = graph.create_module_pipelines(&[&stages]);
            if result != vk::Result::SUCCESS {
                return Err(Error::vk("vkCreateExecutionGraphPipelinesAMDX")(result));
            }
            graph.pipeline = pipelines[0];
            Ok(graph)
        }
    }

    /// One `vkCreateExecutionGraphPipelinesAMDX` call with a create info per
    /// entry of `graphs` (stages of this graph's first module, its layout); the
    /// caller owns (and destroys) the pipelines returned.
    pub fn create_pipelines(&self, graphs: &[&[Stage<'_>]]) -> (vk::Result, Vec<vk::Pipeline>) {
        let lists: Vec<Vec<ModuleStage<'_>>> = graphs
            .iter()
            .map(|g| g.iter().map(|stage| ModuleStage { module: 0, stage, spec: &[] }).collect())
            .collect();
        let refs: Vec<&[ModuleStage<'_>]> = lists.iter().map(Vec::as_slice).collect();
        self.create_module_pipelines(&refs)
    }

    /// [`Self::create_pipelines`] for stages of any of this graph's modules.
    fn create_module_pipelines(&self, graphs: &[&[ModuleStage<'_>]]) -> (vk::Result, Vec<vk::Pipeline>) {
        let module_stages: Vec<&ModuleStage<'_>> = graphs.iter().flat_map(|g| g.iter()).collect();
        let stages: Vec<&Stage<'_>> = module_stages.iter().map(|s| s.stage).collect();
        let spec_entries: Vec<Vec<vk::SpecializationMapEntry>> = module_stages
            .iter()
            .map(|s| {
                let mut offset = 0u32;
                s.spec
                    .iter()
                    .map(|&(constant_id, bytes)| {
                        let entry = vk::SpecializationMapEntry { constant_id, offset, size: bytes.len() };
                        offset += bytes.len() as u32;
                        entry
                    })
                    .collect()
            })
            .collect();
        let spec_data: Vec<Vec<u8>> =
            module_stages.iter().map(|s| s.spec.iter().flat_map(|(_, b)| b.iter().copied()).collect()).collect();
        let spec_infos: Vec<vk::SpecializationInfo<'_>> = spec_entries
            .iter()
            .zip(&spec_data)
            .map(|(entries, data)| vk::SpecializationInfo::default().map_entries(entries).data(data))
            .collect();
        let names: Vec<CString> = stages.iter().map(|s| CString::new(s.entry).unwrap_or_default()).collect();
        let node_names: Vec<Option<CString>> =
            stages.iter().map(|s| s.node.map(|(n, _)| CString::new(n).unwrap_or_default())).collect();
        let node_infos: Vec<vk::PipelineShaderStageNodeCreateInfoAMDX> = stages
            .iter()
            .zip(&node_names)
            .map(|(s, name)| {
                let mut info =
                    vk::PipelineShaderStageNodeCreateInfoAMDX::default().index(s.node.map_or(u32::MAX, |(_, i)| i));
                info.p_name = name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr());
                info
            })
            .collect();
        let stage_infos: Vec<vk::PipelineShaderStageCreateInfo> = names
            .iter()
            .zip(&node_infos)
            .zip(module_stages.iter().zip(&spec_infos))
            .map(|((name, node), (ms, spec))| {
                let mut stage = vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::COMPUTE)
                    .module(self.modules.get(ms.module).copied().unwrap_or(self.module))
                    .name(name);
                if !ms.spec.is_empty() {
                    stage = stage.specialization_info(spec);
                }
                stage.p_next = (node as *const vk::PipelineShaderStageNodeCreateInfoAMDX).cast::<c_void>();
                stage
            })
            .collect();
        let mut first = 0;
        let infos: Vec<vk::ExecutionGraphPipelineCreateInfoAMDX> = graphs
            .iter()
            .map(|g| {
                let info = vk::ExecutionGraphPipelineCreateInfoAMDX::default()
                    .stages(&stage_infos[first..first + g.len()])
                    .layout(self.layout);
                first += g.len();
                info
            })
            .collect();
        let mut pipelines = vec![vk::Pipeline::null(); infos.len()];
        // SAFETY: valid create infos whose arrays live across the call.
        let result = unsafe {
            (self.fns.create)(
                self.dev.device.handle(),
                vk::PipelineCache::null(),
                infos.len() as u32,
                infos.as_ptr(),
                std::ptr::null(),
                pipelines.as_mut_ptr(),
            )
        };
        (result, pipelines)
    }

    /// A view of another graph `pipeline` created with this graph's module
    /// and layout (see [`Self::create_pipelines`]); destroys only the pipeline.
    pub fn adopt(&self, pipeline: vk::Pipeline) -> AdoptedGraph<'_, 'd> {
        AdoptedGraph { base: self, pipeline }
    }

    /// `(minSize, maxSize, sizeGranularity)`.
    pub fn scratch_sizes(&self) -> Result<(u64, u64, u64)> {
        self.scratch_sizes_of(self.pipeline)
    }

    /// `(minSize, maxSize, sizeGranularity)` of another graph `pipeline` of this device.
    pub fn scratch_sizes_of(&self, pipeline: vk::Pipeline) -> Result<(u64, u64, u64)> {
        let mut size = ExecutionGraphPipelineScratchSize {
            s_type: vk::StructureType::EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX,
            p_next: std::ptr::null_mut(),
            min_size: 0,
            max_size: 0,
            size_granularity: 0,
        };
        // SAFETY: valid graph and output structure.
        let result = unsafe { (self.fns.scratch_size)(self.dev.device.handle(), pipeline, &mut size) };
        if result != vk::Result::SUCCESS {
            return Err(Error::vk("vkGetExecutionGraphPipelineScratchSizeAMDX")(result));
        }
        Ok((size.min_size, size.max_size, size.size_granularity))
    }

    /// The node index of (name, index).
    pub fn node_index(&self, name: &str, index: u32) -> Result<u32> {
        query_node_index(self, self.pipeline, name, index)
    }

    /// A scratch buffer of `size` bytes.
    pub fn scratch(&self, size: u64) -> Result<HostBuffer> {
        self.dev.create_host_buffer(
            size,
            BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
        )
    }

    /// Records binding, scratch initialisation (when `init`) and one host
    /// dispatch per entry of `dispatches` (node index, payload bytes,
    /// payload count, stride) into `cb`.
    pub fn record(
        &self,
        cb: vk::CommandBuffer,
        scratch: &HostBuffer,
        init: bool,
        dispatches: &[(u32, &[u8], u32, u64)],
    ) {
        self.record_pipeline(cb, self.pipeline, scratch, init, dispatches);
    }

    /// [`Self::record`] for another graph `pipeline` sharing this graph's layout and set.
    pub fn record_pipeline(
        &self,
        cb: vk::CommandBuffer,
        pipeline: vk::Pipeline,
        scratch: &HostBuffer,
        init: bool,
        dispatches: &[(u32, &[u8], u32, u64)],
    ) {
        let d = &self.dev.device;
        let address = scratch.address.unwrap_or(0);
        let infos: Vec<vk::DispatchGraphInfoAMDX> = dispatches
            .iter()
            .map(|&(node, bytes, count, stride)| vk::DispatchGraphInfoAMDX {
                node_index: node,
                payload_count: count,
                payloads: vk::DeviceOrHostAddressConstAMDX { host_address: bytes.as_ptr().cast() },
                payload_stride: stride,
            })
            .collect();
        let count_info = vk::DispatchGraphCountInfoAMDX {
            count: infos.len() as u32,
            infos: vk::DeviceOrHostAddressConstAMDX { host_address: infos.as_ptr().cast() },
            stride: std::mem::size_of::<vk::DispatchGraphInfoAMDX>() as u64,
        };
        // SAFETY: recording valid commands; every array lives across the calls.
        unsafe {
            d.cmd_bind_pipeline(cb, BIND_POINT, pipeline);
            d.cmd_bind_descriptor_sets(cb, BIND_POINT, self.layout, 0, &[self.set], &[]);
            if init {
                (self.fns.init_scratch)(cb, pipeline, address, scratch.size);
                self.dev.compute_barrier(cb);
            }
            (self.fns.dispatch)(cb, address, scratch.size, &count_info);
            self.dev.host_read_barrier(cb);
        }
    }
}

impl Drop for TestGraph<'_> {
    fn drop(&mut self) {
        let d = &self.dev.device;
        // SAFETY: the device is idle after `submit_once`; all objects are ours.
        unsafe {
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_descriptor_pool(self.pool, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            for &m in &self.modules {
                d.destroy_shader_module(m, None);
            }
        }
    }
}

/// A graph pipeline sharing a [`TestGraph`]'s module and layout.
pub struct AdoptedGraph<'g, 'd> {
    base: &'g TestGraph<'d>,
    pub pipeline: vk::Pipeline,
}

impl AdoptedGraph<'_, '_> {
    /// The node index of (name, index) in this pipeline.
    pub fn node_index(&self, name: &str, index: u32) -> Result<u32> {
        query_node_index(self.base, self.pipeline, name, index)
    }
}

impl Drop for AdoptedGraph<'_, '_> {
    fn drop(&mut self) {
        // SAFETY: the pipeline is idle and owned by this view.
        unsafe { self.base.dev.device.destroy_pipeline(self.pipeline, None) };
    }
}

/// `vkGetExecutionGraphPipelineNodeIndexAMDX` on `pipeline` of `graph`'s device.
fn query_node_index(graph: &TestGraph<'_>, pipeline: vk::Pipeline, name: &str, index: u32) -> Result<u32> {
    let name = CString::new(name).unwrap_or_default();
    let mut info = vk::PipelineShaderStageNodeCreateInfoAMDX::default().index(index);
    info.p_name = name.as_ptr();
    let mut out = 0;
    // SAFETY: valid graph, info and output.
    let result = unsafe { (graph.fns.node_index)(graph.dev.device.handle(), pipeline, &info, &mut out) };
    if result != vk::Result::SUCCESS {
        return Err(Error::vk("vkGetExecutionGraphPipelineNodeIndexAMDX")(result));
    }
    Ok(out)
}

/// The hello chain's entry records `(grid, index)` as little-endian bytes,
/// 8 bytes each.
pub fn hello_chain_records(records: &[(u32, u32)]) -> Vec<u8> {
    records.iter().flat_map(|&(g, i)| [g, i]).flat_map(u32::to_le_bytes).collect()
}

/// The hello chain the way an API translator makes it: from a new shader
/// module, on the caller's `layout`, with `flags`, the application's `cache`
/// and `p_next` chained to the create info. The caller destroys both handles.
pub fn raw_hello_chain(
    dev: &TestDevice<'_>,
    fns: &GraphFns,
    layout: vk::PipelineLayout,
    flags: vk::PipelineCreateFlags,
    cache: vk::PipelineCache,
    p_next: *const std::ffi::c_void,
) -> Result<(vk::Pipeline, vk::ShaderModule)> {
    let d = &dev.device;
    let words = spirv_words(HELLO_CHAIN_SPV)?;
    // SAFETY: valid device and SPIR-V.
    let module = unsafe { d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None) }
        .map_err(Error::vk("vkCreateShaderModule"))?;
    let names: Vec<std::ffi::CString> =
        HELLO_CHAIN_STAGES.iter().map(|s| std::ffi::CString::new(s.entry).unwrap_or_default()).collect();
    let stages: Vec<_> = names
        .iter()
        .map(|n| {
            vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(n)
        })
        .collect();
    let mut info = vk::ExecutionGraphPipelineCreateInfoAMDX::default().flags(flags).stages(&stages).layout(layout);
    info.p_next = p_next;
    let mut pipeline = vk::Pipeline::null();
    // SAFETY: valid create info whose arrays live across the call.
    let result = unsafe { (fns.create)(d.handle(), cache, 1, &info, std::ptr::null(), &mut pipeline) };
    if result != vk::Result::SUCCESS {
        // SAFETY: the module is unused.
        unsafe { d.destroy_shader_module(module, None) };
        return Err(Error::vk("vkCreateExecutionGraphPipelinesAMDX")(result));
    }
    Ok((pipeline, module))
}

/// A host dispatch of hello-chain entry records `(grid, record index)` on
/// `graph`, with its own minSize scratch buffer.
pub struct RawDispatch {
    pub graph: vk::Pipeline,
    scratch: HostBuffer,
    min: u64,
    records: Vec<u8>,
    infos: [vk::DispatchGraphInfoAMDX; 1],
}

impl RawDispatch {
    pub fn new(dev: &TestDevice<'_>, fns: &GraphFns, graph: vk::Pipeline, records: &[(u32, u32)]) -> Result<Self> {
        Self::with_records(dev, fns, graph, c"firstNode", hello_chain_records(records), records.len() as u32, 8)
    }

    /// `count` records of `stride` bytes in `bytes` for node `(node, 0)`.
    pub fn with_records(
        dev: &TestDevice<'_>,
        fns: &GraphFns,
        graph: vk::Pipeline,
        node: &CStr,
        bytes: Vec<u8>,
        count: u32,
        stride: u64,
    ) -> Result<Self> {
        let mut size = crate::amdx::ExecutionGraphPipelineScratchSize {
            s_type: vk::StructureType::EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX,
            p_next: std::ptr::null_mut(),
            min_size: 0,
            max_size: 0,
            size_granularity: 0,
        };
        // SAFETY: valid device and graph.
        let result = unsafe { (fns.scratch_size)(dev.device.handle(), graph, &mut size) };
        if result != vk::Result::SUCCESS {
            return Err(Error::vk("vkGetExecutionGraphPipelineScratchSizeAMDX")(result));
        }
        let scratch = dev.create_host_buffer(
            size.min_size,
            BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
        )?;
        let node = vk::PipelineShaderStageNodeCreateInfoAMDX::default().name(node).index(0);
        let mut index = 0;
        // SAFETY: valid device, graph and node info.
        let result = unsafe { (fns.node_index)(dev.device.handle(), graph, &node, &mut index) };
        if result != vk::Result::SUCCESS {
            return Err(Error::vk("vkGetExecutionGraphPipelineNodeIndexAMDX")(result));
        }
        let infos = [vk::DispatchGraphInfoAMDX {
            node_index: index,
            payload_count: count,
            payloads: vk::DeviceOrHostAddressConstAMDX { host_address: std::ptr::null() },
            payload_stride: stride,
        }];
        Ok(RawDispatch { graph, scratch, min: size.min_size, records: bytes, infos })
    }

    /// Records scratch initialisation, a barrier and the dispatch into `cb`
    /// (the graph must be bound, its resources too).
    pub fn record(&mut self, dev: &TestDevice<'_>, fns: &GraphFns, cb: vk::CommandBuffer) {
        self.infos[0].payloads = vk::DeviceOrHostAddressConstAMDX { host_address: self.records.as_ptr().cast() };
        let count = vk::DispatchGraphCountInfoAMDX {
            count: 1,
            infos: vk::DeviceOrHostAddressConstAMDX { host_address: self.infos.as_ptr().cast() },
            stride: std::mem::size_of::<vk::DispatchGraphInfoAMDX>() as u64,
        };
        let address = self.scratch.address.unwrap_or(0);
        // SAFETY: recording valid commands; every array lives across the calls.
        unsafe { (fns.init_scratch)(cb, self.graph, address, self.min) };
        dev.compute_barrier(cb);
        // SAFETY: as above.
        unsafe { (fns.dispatch)(cb, address, self.min, &count) };
    }
}
