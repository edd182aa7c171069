//! Execution graph pipelines: the nodes are lowered (spirv-lowering), linked
//! ([`link`]), and each becomes an ordinary compute pipeline
//! with a copy of the application's layout whose push-constant range is
//! extended by the runtime's block. The handle the application holds is a
//! real driver pipeline (an empty kernel), so debug names and the like work.
//! The meta pipelines are created once per device.

use super::driver::{compiled_pipeline, node_layout, placeholder_pipeline, vulkan, NodeLayout};
use super::errors::GraphError;
use super::gpu::Gpu;
use super::kernels::KernelCache;
use super::levels::LevelCache;
use super::link::{self, Graph, NodeDecl};
use super::phases::PhaseTable;
use super::scratch::FixedLayout;
use super::stage::{spec_map, MeshNode, NodeStage};
use super::status::GraphNames;
use crate::amdx;
use crate::state::pipeline_layout::PipelineLayoutInfo;
use ash::vk;
use meta_shaders::NodeSchedule;
use parking_lot::Mutex;
use spirv_lowering::abi::{FrameGeometry, SCHEDULE_FLAG_PINNED};
use spirv_lowering::{LaunchMode, LowerOptions};
use std::ffi::CString;
use std::sync::Arc;

/// Lanes a packed thread-node workgroup runs (a multiple of every common
/// subgroup size: lavapipe 8, NVIDIA 32, AMD 64).
pub const THREAD_PACK_WIDTH: u32 = 64;

/// One node's driver pipeline.
#[derive(Debug)]
pub struct NodePipeline {
    /// A compute pipeline, or a mesh node's graphics pipeline.
    pub pipeline: vk::Pipeline,
    pub name: String,
    pub index: u32,
    /// A mesh node: its graphics pipeline, layout and push block.
    pub mesh: Option<Arc<MeshNode>>,
}

/// An execution graph pipeline the application created.
#[derive(Debug)]
pub struct GraphPipeline {
    /// The handle given to the application (an empty driver pipeline).
    pub handle: vk::Pipeline,
    pub graph: Graph,
    pub fixed: FixedLayout,
    pub schedules: Vec<NodeSchedule>,
    /// Per node, in slot order; nodes with the same kernel share a pipeline.
    pub nodes: Vec<NodePipeline>,
    /// The distinct compute node pipelines (see [`super::kernels`]); mesh
    /// nodes' pipelines belong to their libraries.
    pub kernels: Vec<vk::Pipeline>,
    /// Per stage (node slot order), what creating its kernel took, for
    /// `VK_EXT_pipeline_creation_feedback` (zero time for a shared kernel).
    pub stage_feedback: Vec<vk::PipelineCreationFeedback>,
    /// The application's layout, extended by the runtime's push block.
    pub layout: vk::PipelineLayout,
    pub push_offset: u32,
    /// What its dispatches' fault reports name (shared by their status
    /// slots, so a report outlives the graph).
    pub names: Arc<GraphNames>,
    /// The `phase_clock` setting's table, reported when the graph goes.
    pub phases: Option<PhaseTable>,
    /// Its dispatches' levels, computed once each.
    pub level_cache: LevelCache,
    /// The debug-utils labels its dispatches record.
    pub labels: GraphLabels,
}

/// The debug-utils labels of a graph's dispatches, made once with the graph
/// (formatting them took about a quarter of recording a small dispatch
/// where the device has `VK_EXT_debug_utils`: 8k of 32k instructions).
#[derive(Debug)]
pub struct GraphLabels {
    /// Around a dispatch from host records.
    pub dispatch: CString,
    /// Around a dispatch from infos in device memory.
    pub indirect: CString,
    /// Per level, `level d`.
    pub levels: Vec<CString>,
    /// Per node slot, `node "name" [index]` (`mesh node` for a mesh node).
    pub nodes: Vec<CString>,
}

impl GraphLabels {
    fn new(handle: vk::Pipeline, nodes: &[NodePipeline]) -> GraphLabels {
        let label = |text: String| CString::new(text).unwrap_or_default();
        GraphLabels {
            dispatch: label(format!("dispatch graph {handle:?}")),
            indirect: label(format!("dispatch graph {handle:?} (indirect)")),
            levels: (0..link::MAX_DEPTH).map(|d| label(format!("level {d}"))).collect(),
            nodes: nodes
                .iter()
                .map(|n| {
                    let kind = if n.mesh.is_some() { "mesh node" } else { "node" };
                    label(format!("{kind} \"{}\" [{}]", n.name, n.index))
                })
                .collect(),
        }
    }
}

/// The layer's own pipelines on one device.
#[derive(Debug)]
pub struct MetaPipelines {
    pub layout: vk::PipelineLayout,
    pub entry: vk::Pipeline,
    pub plan: vk::Pipeline,
    /// `grids.comp`, created when a dispatch first needs it: with one more
    /// pipeline on the device, busy-levels' node kernels ran 5% slower on
    /// the H200 (166 against 175 µs, chain 22.1 against 22.6; the node
    /// kernels themselves unchanged), so a device that never has its grids
    /// summed on the GPU does not make it.
    grids: Mutex<Option<vk::Pipeline>>,
}

/// How a node's launches are sized and its records kept (`geometry`, see `frames`).
fn schedule(
    info: &spirv_lowering::NodeShaderInfo,
    records_per_workgroup: u32,
    geometry: FrameGeometry,
) -> NodeSchedule {
    let mut s = launches(info, records_per_workgroup);
    s.input_size = info.input.as_ref().map_or(0, |i| i.size);
    s.per_frame = geometry.per_frame;
    s.tail = geometry.tail;
    if geometry.meta {
        s.flags |= spirv_lowering::abi::SCHEDULE_FLAG_META;
    }
    if geometry.frameless {
        s.flags |= spirv_lowering::abi::SCHEDULE_FLAG_FRAMELESS;
    }
    s
}

/// Whether `graph`'s mesh nodes can be drawn once, after the last level
/// (`abi`'s "Mesh nodes drawn once"): no mesh node shares input, and no
/// output mixes mesh and compute targets (an output's targets share how
/// records are placed).
fn mesh_drawn_once(stages: &[NodeStage], graph: &Graph) -> bool {
    let mesh = |slot: usize| stages.get(slot).is_some_and(|s| s.mesh.is_some());
    let mesh_nodes_fit = graph
        .nodes
        .iter()
        .enumerate()
        .filter(|&(slot, _)| mesh(slot))
        .all(|(_, node)| node.shares_with.is_none() && node.sharers.is_empty());
    let outputs_unmixed = graph.nodes.iter().flat_map(|n| &n.outputs).all(|out| {
        let mut targets = out.slots.iter().filter(|&&t| t != spirv_lowering::abi::NO_NODE).map(|&t| mesh(t as usize));
        let first = targets.next();
        targets.all(|m| Some(m) == first)
    });
    (0..graph.nodes.len()).any(mesh) && mesh_nodes_fit && outputs_unmixed
}

/// Every node's schedule, known before any is lowered (the level finishers
/// are lowered with them): from the node's analysis, or its mesh library's.
fn node_schedules(stages: &[NodeStage], graph: &Graph, fixed: &FixedLayout) -> Vec<NodeSchedule> {
    let drawn_once = mesh_drawn_once(stages, graph);
    stages
        .iter()
        .zip(&graph.nodes)
        .enumerate()
        .map(|(slot, (stage, node))| {
            let (info, per_workgroup) = match &stage.mesh {
                Some(mesh) => (&mesh.info, mesh.records_per_workgroup),
                None => {
                    let info = &node.decl.info;
                    (info, spirv_lowering::records_per_workgroup(info, THREAD_PACK_WIDTH))
                }
            };
            let mut s = schedule(info, per_workgroup, fixed.frames.geometry[slot]);
            s.share_base = node.shares_with.map_or(0, |base| base as u32 + 1);
            if stage.mesh.is_some() {
                s.flags |= spirv_lowering::abi::SCHEDULE_FLAG_MESH;
                if drawn_once {
                    s.flags |= SCHEDULE_FLAG_PINNED;
                }
            }
            if node.decl.info.is_api_entry {
                s.flags |= meta_shaders::SCHEDULE_FLAG_API_ENTRY;
            }
            s
        })
        .collect()
}

/// How the finisher and the meta shaders size a node's launches.
fn launches(info: &spirv_lowering::NodeShaderInfo, records_per_workgroup: u32) -> NodeSchedule {
    let input_stride = link::input_stride(info);
    match &info.launch {
        LaunchMode::BroadcastStatic { grid } => NodeSchedule {
            mode: meta_shaders::SCHEDULE_STATIC,
            records_per_workgroup: 1,
            static_groups: grid.iter().product(),
            input_stride,
            ..Default::default()
        },
        LaunchMode::BroadcastDynamic { max_grid } => {
            let grid = info.input.as_ref().and_then(|i| i.dispatch_grid);
            NodeSchedule {
                mode: meta_shaders::SCHEDULE_DYNAMIC,
                records_per_workgroup: 1,
                grid_offset: grid.map_or(0, |g| g.offset),
                grid_bytes: grid.map_or(4, |g| g.component_bytes),
                grid_components: grid.map_or(3, |g| g.components),
                input_stride,
                // Records past it are dropped when they are enqueued.
                max_grid: max_grid.unwrap_or(crate::advertise::properties().max_execution_graph_workgroup_count),
                ..Default::default()
            }
        }
        LaunchMode::Coalescing { .. } | LaunchMode::Thread => NodeSchedule {
            mode: meta_shaders::SCHEDULE_BATCHED,
            records_per_workgroup: records_per_workgroup.max(1),
            input_stride,
            ..Default::default()
        },
    }
}

/// Creates an execution graph pipeline from its node stages (in node-index
/// order: stages, then library stages) and the application's layout
/// (`app_layout`, of which the layer recorded `layout_info`); `flags` go to
/// every driver pipeline of it. On error nothing is left behind.
pub fn create_graph(
    device: &Gpu,
    cache: vk::PipelineCache,
    stages: &[NodeStage],
    app_layout: vk::PipelineLayout,
    layout_info: &PipelineLayoutInfo,
    flags: vk::PipelineCreateFlags,
) -> Result<GraphPipeline, GraphError> {
    let NodeLayout { layout, push_offset, .. } = node_layout(device, layout_info, vk::ShaderStageFlags::COMPUTE)?;
    // The layout is destroyed with the graph, or here if creation fails
    // (after the kernels, which are dropped first).
    let layout_guard = LayoutGuard { device, layout };
    let mut kernels = KernelCache::new(device, cache, layout, flags);
    let mut decls = Vec::with_capacity(stages.len());
    for (i, stage) in stages.iter().enumerate() {
        let infos = kernels.analyze(stage, &spec_map(stage))?;
        let mut info = infos.iter().find(|n| n.name == stage.entry_point).cloned().ok_or_else(|| {
            GraphError::Stage { stage: i, what: format!("no GLCompute entry point named \"{}\"", stage.entry_point) }
        })?;
        if info.mesh != stage.mesh.is_some() {
            return Err(GraphError::Stage {
                stage: i,
                what: format!(
                    "node \"{}\" is a {} shader; mesh nodes join a graph as graphics pipeline libraries \
                     (VK_AMDX_shader_enqueue revision 2), compute nodes as compute stages",
                    stage.entry_point,
                    if info.mesh { "MeshEXT" } else { "GLCompute" }
                ),
            });
        }
        if info.input_needs_contiguous_records {
            // The runtime lists records by reference; it does not yet copy a
            // workgroup's records side by side for code that steps between them.
            return Err(GraphError::Stage {
                stage: i,
                what: format!(
                    "node \"{}\" steps between its input records with OpPtrAccessChain, which the runtime does \
                     not support yet (index the input array instead)",
                    stage.entry_point
                ),
            });
        }
        link::specialize_output_names(&mut info, &stage.specialization);
        let name = stage.node_name.clone().unwrap_or_else(|| stage.entry_point.clone());
        let index = if stage.node_index == amdx::SHADER_INDEX_UNUSED { info.shader_index } else { stage.node_index };
        decls.push(NodeDecl { name, index, info });
    }
    check_mesh_dynamic_states(stages)?;
    let graph = link::link(decls)?;
    for note in &graph.notes {
        tracing::warn!("vkCreateExecutionGraphPipelinesAMDX: {note}");
    }
    let mut nodes = Vec::with_capacity(stages.len());
    let mut stage_feedback = Vec::with_capacity(stages.len());
    let fixed = FixedLayout::new(&graph);
    let schedules = node_schedules(stages, &graph, &fixed);
    let dump_dir = device.instance.settings.dump_spirv.as_deref();
    let graph_dir = device.instance.settings.dump_graph.as_deref();
    let graph_number = if dump_dir.is_some() || graph_dir.is_some() { super::dump::next_graph_number() } else { 0 };
    let phases = PhaseGuard { device, table: PhaseTable::create(device)? };
    for (slot, (stage, node)) in stages.iter().zip(&graph.nodes).enumerate() {
        let dump = |kind: &str, words: &[u32]| {
            if let Some(dir) = dump_dir {
                super::dump::write(dir, graph_number, slot, &node.decl.name, node.decl.index, kind, words);
            }
        };
        dump("input", &stage.words);
        if let Some(mesh) = &stage.mesh {
            // Lowered and compiled with the library (see `mesh`).
            stage_feedback
                .push(vk::PipelineCreationFeedback { flags: vk::PipelineCreationFeedbackFlags::VALID, duration: 0 });
            nodes.push(NodePipeline {
                pipeline: mesh.pipeline,
                name: node.decl.name.clone(),
                index: node.decl.index,
                mesh: Some(mesh.clone()),
            });
            continue;
        }
        let options = LowerOptions {
            entry_point: stage.entry_point.clone(),
            push_offset,
            max_push_constants_size: device.physical.max_push_constants_size,
            thread_pack_width: THREAD_PACK_WIDTH,
            shader_index: node.decl.index,
            specialization: spec_map(stage),
            subgroup_ops: device.physical.subgroup_ops,
            tables: Some(fixed.tables_for(&graph, slot, &schedules)),
            checked_payloads: device.instance.settings.checked_payloads,
            phase_clock: phases.table.as_ref().map(PhaseTable::address),
        };
        let entries: Vec<vk::SpecializationMapEntry> = stage
            .specialization
            .iter()
            .scan(0usize, |offset, (id, bytes)| {
                let entry = vk::SpecializationMapEntry { constant_id: *id, offset: *offset as u32, size: bytes.len() };
                *offset += bytes.len();
                Some(entry)
            })
            .collect();
        let data: Vec<u8> = stage.specialization.iter().flat_map(|(_, b)| b.iter().copied()).collect();
        let spec = vk::SpecializationInfo::default().map_entries(&entries).data(&data);
        let entry = std::ffi::CString::new(stage.entry_point.clone())
            .map_err(|_| GraphError::Stage { stage: slot, what: "entry point name contains NUL".into() })?;
        let started = std::time::Instant::now();
        let kernel =
            kernels.kernel(stage, options, &node.decl.name, (&entry, (!entries.is_empty()).then_some(&spec)))?;
        let mut flags = vk::PipelineCreationFeedbackFlags::VALID;
        if kernel.cache_hit {
            flags |= vk::PipelineCreationFeedbackFlags::APPLICATION_PIPELINE_CACHE_HIT;
        }
        let duration = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        stage_feedback.push(vk::PipelineCreationFeedback { flags, duration });
        let (lowered, pipeline) = (kernel.lowered, kernel.pipeline);
        dump("lowered", &lowered.words);
        if lowered.records_per_workgroup != schedules[slot].records_per_workgroup {
            // The finishers were lowered with the schedule: it must be the kernel's.
            return Err(GraphError::Stage {
                stage: slot,
                what: format!(
                    "internal: node \"{}\" was lowered for {} records a workgroup, scheduled for {}",
                    node.decl.name, lowered.records_per_workgroup, schedules[slot].records_per_workgroup
                ),
            });
        }
        nodes.push(NodePipeline { pipeline, name: node.decl.name.clone(), index: node.decl.index, mesh: None });
    }
    let handle = placeholder_pipeline(device, cache, app_layout, flags)?;
    // Success: the graph owns them now.
    let kernels = kernels.into_pipelines();
    std::mem::forget(layout_guard);
    let names = Arc::new(GraphNames::new(&graph, &schedules));
    let phases = phases.keep();
    let level_cache = LevelCache::new(graph.nodes.len());
    let labels = GraphLabels::new(handle, &nodes);
    let created = GraphPipeline {
        handle,
        graph,
        fixed,
        schedules,
        nodes,
        kernels,
        stage_feedback,
        layout,
        push_offset,
        names,
        phases,
        level_cache,
        labels,
    };
    if let Some(dir) = graph_dir {
        super::describe::write(dir, graph_number, created.handle, &created.graph, &created.fixed);
    }
    Ok(created)
}

/// Revision 2: "All graphics pipelines in an execution graph must use the
/// same set of dynamic states".
fn check_mesh_dynamic_states(stages: &[NodeStage]) -> Result<(), GraphError> {
    let mut meshes = stages.iter().enumerate().filter_map(|(i, s)| Some((i, s.mesh.as_ref()?)));
    let Some((_, first)) = meshes.next() else { return Ok(()) };
    let sorted = |m: &MeshNode| {
        let mut d: Vec<i32> = m.dynamic_states.iter().map(|s| s.as_raw()).collect();
        d.sort_unstable();
        d.dedup();
        d
    };
    let want = sorted(first);
    for (i, mesh) in meshes {
        if sorted(mesh) != want {
            return Err(GraphError::Stage {
                stage: i,
                what: format!(
                    "mesh node pipeline {:?} has the dynamic states {:?}, another mesh node of the graph {:?}; \
                     every graphics pipeline of a graph must use the same set",
                    mesh.pipeline, mesh.dynamic_states, first.dynamic_states
                ),
            });
        }
    }
    Ok(())
}

/// The node layout of a graph under construction, destroyed if creation fails.
struct LayoutGuard<'a> {
    device: &'a Gpu,
    layout: vk::PipelineLayout,
}

impl Drop for LayoutGuard<'_> {
    fn drop(&mut self) {
        // Created for this graph, never handed out.
        self.device.dispatch.destroy_pipeline_layout(self.layout);
    }
}

/// The phase table of a graph being created, destroyed unless kept.
struct PhaseGuard<'a> {
    device: &'a Gpu,
    table: Option<PhaseTable>,
}

impl PhaseGuard<'_> {
    fn keep(mut self) -> Option<PhaseTable> {
        self.table.take()
    }
}

impl Drop for PhaseGuard<'_> {
    fn drop(&mut self) {
        if let Some(table) = self.table.take() {
            table.destroy(self.device);
        }
    }
}

impl GraphPipeline {
    /// The graph has mesh nodes (it must be dispatched inside dynamic rendering).
    pub fn has_mesh_nodes(&self) -> bool {
        self.nodes.iter().any(|n| n.mesh.is_some())
    }

    /// The graph's mesh nodes are drawn once, after the last level (see
    /// `mesh_drawn_once`).
    pub fn mesh_drawn_once(&self) -> bool {
        self.schedules.iter().any(|s| s.flags & SCHEDULE_FLAG_PINNED != 0)
    }

    /// Destroys every driver object of the graph (the handle included).
    pub fn destroy(&self, device: &Gpu) {
        if let Some(table) = &self.phases {
            for line in table.report(self.handle) {
                tracing::info!("{line}");
            }
            table.destroy(device);
        }
        let vk = &device.dispatch;
        for &kernel in &self.kernels {
            vk.destroy_pipeline(kernel);
        }
        vk.destroy_pipeline_layout(self.layout);
        vk.destroy_pipeline(self.handle);
    }
}

impl MetaPipelines {
    /// Push-constant bytes of the largest meta-shader push block (at most
    /// 128, Vulkan's least maxPushConstantsSize).
    const PUSH_SIZE: u32 = std::mem::size_of::<meta_shaders::GridsPush>() as u32;

    pub fn create(device: &Gpu) -> Result<Self, GraphError> {
        let range =
            vk::PushConstantRange { stage_flags: vk::ShaderStageFlags::COMPUTE, offset: 0, size: Self::PUSH_SIZE };
        let create = vk::PipelineLayoutCreateInfo::default().push_constant_ranges(std::slice::from_ref(&range));
        let layout = device
            .dispatch
            .create_pipeline_layout(&create)
            .map_err(|result| vulkan("vkCreatePipelineLayout", result))?;
        let null = vk::Pipeline::null();
        let mut made = MetaPipelines { layout, entry: null, plan: null, grids: Mutex::new(None) };
        let cache = vk::PipelineCache::null();
        let result = (|| {
            let meta = |words: &[u32]| {
                compiled_pipeline(device, cache, vk::PipelineCreateFlags::empty(), words, c"main", layout, None)
                    .map(|c| c.pipeline)
            };
            made.entry = meta(&meta_shaders::ENTRY)?;
            made.plan = meta(&meta_shaders::PLAN)?;
            Ok(())
        })();
        match result {
            Ok(()) => Ok(made),
            Err(e) => {
                made.destroy(device);
                Err(e)
            }
        }
    }

    /// `grids.comp`'s pipeline, created on first use.
    pub fn grids(&self, device: &Gpu) -> Result<vk::Pipeline, GraphError> {
        let mut grids = self.grids.lock();
        if let Some(pipeline) = *grids {
            return Ok(pipeline);
        }
        let flags = vk::PipelineCreateFlags::empty();
        let made = compiled_pipeline(
            device,
            vk::PipelineCache::null(),
            flags,
            &meta_shaders::GRIDS,
            c"main",
            self.layout,
            None,
        )?;
        *grids = Some(made.pipeline);
        Ok(made.pipeline)
    }

    pub fn destroy(&self, device: &Gpu) {
        // The layer's own objects (null handles are ignored).
        let grids = self.grids.lock().unwrap_or_default();
        for p in [self.entry, self.plan, grids] {
            device.dispatch.destroy_pipeline(p);
        }
        device.dispatch.destroy_pipeline_layout(self.layout);
    }
}
