//! Execution graphs through the layer: node shader modules, a descriptor
//! set of storage buffers, graph pipeline creation, scratch memory, and a
//! host dispatch recorded and run in one submission. Everything goes
//! through the real loader and the application-facing AMDX entry points.

use std::ffi::{CStr, CString};

use ash::vk;
use vk_amdx::{Commands, PIPELINE_BIND_POINT_EXECUTION_GRAPH, SHADER_INDEX_UNUSED};
use vk_host::graph::{self, GraphStage};
use vk_host::pipeline::{shader_module, spirv_words};
use vk_host::StorageBindings;

use crate::buffer::HostBuffer;
use crate::device::TestDevice;
use crate::error::{Error, Result};

/// A graph pipeline with a set 0 of storage buffers, owned by the test.
pub struct TestGraph<'d> {
    dev: &'d TestDevice<'d>,
    pub fns: Commands,
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
        let fns = dev.amdx_commands()?;
        let d = &dev.device;
        let mut shader_modules = Vec::with_capacity(modules.len());
        let mut made = Ok(());
        for (spv, _) in modules {
            made = spirv_words(spv).and_then(|w| shader_module(d, &w)).map(|m| shader_modules.push(m));
            if made.is_err() {
                break;
            }
        }
        let bindings = match made.and_then(|()| StorageBindings::new(d, buffers.len() as u32, push_bytes)) {
            Ok(b) => b,
            Err(e) => {
                for &m in &shader_modules {
                    // SAFETY: the modules are unused.
                    unsafe { d.destroy_shader_module(m, None) };
                }
                return Err(e.into());
            }
        };
        let handles: Vec<vk::Buffer> = buffers.iter().map(|b| b.buffer).collect();
        bindings.write(d, &handles);
        // From here `graph` destroys everything on drop, also on error paths.
        let mut graph = TestGraph {
            dev,
            fns,
            pipeline: vk::Pipeline::null(),
            layout: bindings.layout,
            set_layout: bindings.set_layout,
            pool: bindings.pool,
            set: bindings.set,
            module: shader_modules.first().copied().unwrap_or_default(),
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
        let graph_stages: Vec<GraphStage<'_>> = module_stages
            .iter()
            .zip(names.iter().zip(&node_names))
            .zip(&spec_infos)
            .map(|((ms, (name, node_name)), spec)| GraphStage {
                module: self.modules.get(ms.module).copied().unwrap_or(self.module),
                entry: name,
                node_name: node_name.as_deref(),
                node_index: ms.stage.node.map_or(SHADER_INDEX_UNUSED, |(_, i)| i),
                specialization: (!ms.spec.is_empty()).then_some(spec),
            })
            .collect();
        let mut first = 0;
        let lists: Vec<&[GraphStage<'_>]> = graphs
            .iter()
            .map(|g| {
                let list = &graph_stages[first..first + g.len()];
                first += g.len();
                list
            })
            .collect();
        graph::create_graphs(&self.fns, &self.dev.device, vk::PipelineCache::null(), self.layout, &lists)
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
        let size = graph::scratch_size(&self.fns, &self.dev.device, pipeline)?;
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
            vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
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

    /// Records binding `pipeline` (this graph or one sharing its layout) and set 0.
    pub fn bind(&self, cb: vk::CommandBuffer, pipeline: vk::Pipeline) {
        let (d, bind) = (&self.dev.device, PIPELINE_BIND_POINT_EXECUTION_GRAPH);
        // SAFETY: `cb` is recording on this graph's device; the handles are ours.
        unsafe {
            d.cmd_bind_pipeline(cb, bind, pipeline);
            d.cmd_bind_descriptor_sets(cb, bind, self.layout, 0, &[self.set], &[]);
        }
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
        let address = scratch.address.unwrap_or(0);
        let infos: Vec<vk::DispatchGraphInfoAMDX> = dispatches
            .iter()
            .map(|&(node, bytes, count, stride)| graph::host_payloads(node, bytes, count, stride))
            .collect();
        self.bind(cb, pipeline);
        // SAFETY: recording valid commands; every array lives across the calls.
        unsafe {
            if init {
                (self.fns.init_scratch)(cb, pipeline, address, scratch.size);
                self.dev.compute_barrier(cb);
            }
            graph::record_host_dispatch(&self.fns, cb, address, scratch.size, &infos);
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
    Ok(graph::node_index(&graph.fns, &graph.dev.device, pipeline, &name, index)?)
}

/// The hello chain's entry records `(grid, index)` as little-endian bytes,
/// 8 bytes each.
pub fn hello_chain_records(records: &[(u32, u32)]) -> Vec<u8> {
    records.iter().flat_map(|&(g, i)| [g, i]).flat_map(u32::to_le_bytes).collect()
}

/// Runs the hello chain `dispatches` times on a device: one graph, one
/// scratch buffer of `scratch_size(min, max, granularity)` bytes (initialised by the
/// first dispatch), `records` as its entry records, the UAV cleared before
/// each dispatch. Returns the UAV's 8 words after each one. The graph is
/// destroyed before it returns.
pub fn run_hello_chain(
    dev: &TestDevice<'_>,
    records: &[(u32, u32)],
    dispatches: usize,
    scratch_size: impl FnOnce(u64, u64, u64) -> u64,
) -> Result<Vec<Vec<u32>>> {
    let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let graph = TestGraph::hello_chain(dev, &uav)?;
    let (min, max, granularity) = graph.scratch_sizes()?;
    let scratch = graph.scratch(scratch_size(min, max, granularity))?;
    let entry = graph.node_index("firstNode", 0)?;
    let bytes = hello_chain_records(records);
    let count = records.len() as u32;
    let mut uavs = Vec::with_capacity(dispatches);
    for run in 0..dispatches {
        uav.write_u32(&[0; 8])?;
        dev.submit_once(|cb| graph.record(cb, &scratch, run == 0, &[(entry, &bytes, count, 8)]))?;
        uavs.push(uav.read_u32(8)?);
    }
    Ok(uavs)
}

/// The hello chain the way an API translator makes it: from a new shader
/// module, on the caller's `layout`, with `flags`, the application's `cache`
/// and `p_next` chained to the create info. The caller destroys both handles.
pub fn raw_hello_chain(
    dev: &TestDevice<'_>,
    fns: &Commands,
    layout: vk::PipelineLayout,
    flags: vk::PipelineCreateFlags,
    cache: vk::PipelineCache,
    p_next: *const std::ffi::c_void,
) -> Result<(vk::Pipeline, vk::ShaderModule)> {
    let d = &dev.device;
    let module = shader_module(d, &spirv_words(HELLO_CHAIN_SPV)?)?;
    let names: Vec<CString> = HELLO_CHAIN_STAGES.iter().map(|s| CString::new(s.entry).unwrap_or_default()).collect();
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
    node: u32,
    count: u32,
    stride: u64,
}

impl RawDispatch {
    pub fn new(dev: &TestDevice<'_>, fns: &Commands, graph: vk::Pipeline, records: &[(u32, u32)]) -> Result<Self> {
        Self::with_records(dev, fns, graph, c"firstNode", hello_chain_records(records), records.len() as u32, 8)
    }

    /// `count` records of `stride` bytes in `bytes` for node `(node, 0)`.
    pub fn with_records(
        dev: &TestDevice<'_>,
        fns: &Commands,
        graph: vk::Pipeline,
        node: &CStr,
        bytes: Vec<u8>,
        count: u32,
        stride: u64,
    ) -> Result<Self> {
        let min = graph::scratch_size(fns, &dev.device, graph)?.min_size;
        let scratch = dev.create_host_buffer(
            min,
            vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
        )?;
        let node = graph::node_index(fns, &dev.device, graph, node, 0)?;
        Ok(RawDispatch { graph, scratch, min, records: bytes, node, count, stride })
    }

    /// Records scratch initialisation, a barrier and the dispatch into `cb`
    /// (the graph must be bound, its resources too).
    pub fn record(&mut self, dev: &TestDevice<'_>, fns: &Commands, cb: vk::CommandBuffer) {
        let infos = [graph::host_payloads(self.node, &self.records, self.count, self.stride)];
        let address = self.scratch.address.unwrap_or(0);
        // SAFETY: recording valid commands; every array lives across the calls.
        unsafe { (fns.init_scratch)(cb, self.graph, address, self.min) };
        dev.compute_barrier(cb);
        // SAFETY: as above.
        unsafe { graph::record_host_dispatch(fns, cb, address, self.min, &infos) };
    }
}
