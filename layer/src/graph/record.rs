//! Recording of scratch initialisation and graph dispatches into the
//! application's command buffer. Every step is an ordinary (indirect)
//! dispatch a capture tool can step through:
//!
//! 1. level 0: for a host dispatch, one direct dispatch per entry node
//!    whose records the host staged (see `entry`: no transfer, no barrier
//!    before it), or, where a node has many dynamic-grid records, the two
//!    phases of `grids.comp` and indirect dispatches; for an indirect
//!    dispatch, the entry passes (`entry.comp` puts the records in frames,
//!    `plan.comp` sizes the launches) and then indirect dispatches;
//! 2. per level: each node that can have records at that level, as an
//!    indirect dispatch whose arguments the previous level's last workgroup
//!    wrote (see `spirv_lowering::abi`), then one barrier; the finishers
//!    write the status words straight into the host's memory; a last level
//!    of nodes without outputs counts nothing and has no finisher (see
//!    `Dispatch::uncounted_level`);
//! 3. the application's compute state (pipeline, descriptor sets, push
//!    descriptors, push constants) bound again.
//!
//! Every counter a dispatch uses is zero again when it ends (the finishers
//! clear what their level counted with), so a dispatch writes nothing into
//! scratch before it runs: the context and tables are written once, when
//! the scratch is initialised.
//!
//! A graph with mesh nodes is dispatched inside a render pass instance
//! (dynamic rendering, or a render pass object of one subpass), where no
//! compute work may run. The layer ends the application's instance before
//! step 1 and, after the last level, begins the part the application goes
//! on recording in, with its own store operations and resolves, and binds
//! its graphics state again. Where the graph allows it (`spirv_lowering::
//! abi`, "Mesh nodes drawn once") the mesh nodes are drawn once, in that
//! last part (`vkCmdDrawMeshTasksIndirectEXT` on their pinned
//! `NodeDispatch`; a host dispatch's level-0 mesh records directly): one
//! suspension, and the levels' barriers are compute barriers. Otherwise,
//! and for an indirect dispatch's level 0 (its entries may be mesh nodes),
//! each level with mesh nodes draws them in a part of the instance the
//! layer begins and ends with `LOAD`/`STORE`, before the level's compute
//! dispatches (mesh nodes read their records where that level's nodes do,
//! and the next level overwrites them).

use super::commands::{restore_compute_state, restore_graphics_state, Recorder};
use super::entry::{host_level, HostLevel};
use super::errors::RecordError;
use super::gpu::Gpu;
use super::levels::Levels;
use super::pipeline::{GraphPipeline, MetaPipelines};
use super::profile::{self, Pass, Recording};
use super::scratch::{context_words, words_of, DynamicLayout, ScratchTarget};
use super::staging::Reserved;
use super::statistics::{self, Statistics};
use super::status::StatusTarget;
use crate::state::command_buffer::{OpenPass, Shadow};
use ash::vk;
use meta_shaders::{EntryPush, GridsPush, PlanPush};
use spirv_lowering::abi::{
    NodeDispatch, NodePush, DONE_GROUPS_BYTES, FIRST_TAG, LEVEL_NEXT_UNCOUNTED, LEVEL_UNCOUNTED,
};
use std::cell::Cell;
use std::collections::BTreeSet;

pub use super::entry::EntryInput;

/// Checks the scratch range and returns its dynamic layout.
fn layout_for(graph: &GraphPipeline, target: &ScratchTarget) -> Result<DynamicLayout, RecordError> {
    if target.address % 16 != 0 {
        return Err(RecordError::Misaligned(target.address));
    }
    graph
        .fixed
        .dynamic(target.size)
        .ok_or(RecordError::ScratchTooSmall { size: target.size, min: graph.fixed.sizes().0 })
}

/// `vkCmdInitializeGraphScratchMemoryAMDX`: the graph context and static
/// tables, zeroed counters and dispatches (every dispatch leaves them so),
/// free frames, the first tag.
pub fn initialize(
    device: &Gpu,
    cb: vk::CommandBuffer,
    graph: &GraphPipeline,
    target: ScratchTarget,
) -> Result<(), RecordError> {
    let dynamic = layout_for(graph, &target)?;
    let r = Recorder { device, cb, target, profile: None, draws: false };
    let fixed = &graph.fixed;
    r.label(
        || format!("initialize scratch for graph {:?}", graph.handle),
        || {
            r.before_transfer();
            let mut context = fixed.context(&graph.graph, &dynamic, target.address);
            context.tag = FIRST_TAG;
            r.update(fixed.context, &words_of(&context_words(&context)));
            let tables = fixed.static_tables(&graph.graph, &graph.schedules, target.address);
            r.update(fixed.schedules, &tables);
            // Both parities' dispatches are adjacent, and so are the
            // counters (rank, grid, entry: up to the done groups).
            r.fill_zero(fixed.dispatches[0], fixed.schedules - fixed.dispatches[0]);
            r.fill_zero(fixed.rank_counts[0], fixed.done_groups - fixed.rank_counts[0]);
            r.fill_zero(fixed.done_groups, DONE_GROUPS_BYTES);
            r.fill_zero(dynamic.keys, dynamic.end() - dynamic.keys);
            r.after_transfer();
        },
    );
    Ok(())
}

/// Where level 0 of a dispatch comes from.
#[derive(Clone, Copy, Debug)]
pub enum IndirectSource {
    /// `vkCmdDispatchGraphIndirectAMDX`: count and stride on the host, the
    /// infos (and their payloads) in device memory.
    HostCount { count: u32, infos: vk::DeviceAddress, stride: u64 },
    /// `vkCmdDispatchGraphIndirectCountAMDX`: a `VkDispatchGraphCountInfoAMDX`
    /// in device memory.
    DeviceCount { count_info: vk::DeviceAddress },
}

/// Workgroups of the entry pass when the host does not know the count.
const ENTRY_GROUPS_UNKNOWN_COUNT: u32 = 256;

/// How one node is launched at a level.
#[derive(Clone, Copy, Debug)]
enum Launch {
    /// Its `NodeDispatch` at this scratch offset, arguments and all.
    Indirect(u64),
    /// Level 0 of a host dispatch: its `NodeDispatch` at this device
    /// address (staging memory), its workgroups known.
    Direct { dispatch: u64, groups: [u32; 3] },
    /// Level 0 of a host dispatch sized by `grids.comp`: its `NodeDispatch`
    /// at this device address, at `offset` in the staging `buffer`.
    Staged { dispatch: u64, buffer: vk::Buffer, offset: u64 },
}

/// State shared by the steps of one graph dispatch.
struct Dispatch<'a> {
    r: Recorder<'a>,
    graph: &'a GraphPipeline,
    meta: &'a MetaPipelines,
    cb_state: &'a Shadow,
    dynamic: DynamicLayout,
    /// Where the status words go for the host.
    status: Option<StatusTarget>,
    /// Where the per-level counts go, when the `statistics` setting is on.
    stats: Option<(Reserved, Statistics)>,
    /// The application's render pass instance, which a graph with mesh
    /// nodes suspends (see the module doc).
    rendering: Option<OpenPass<'a>>,
    /// Level 0 of a host dispatch.
    host: Option<HostLevel>,
    /// See [`DispatchArgs::after_graph`].
    after_graph: bool,
    /// The node kernel bound at the compute bind point since the levels
    /// began (`None`: the application's sets and constants are not bound
    /// with the graph's layout yet): consecutive levels of one node bind
    /// nothing again.
    bound: Cell<Option<vk::Pipeline>>,
}

impl Dispatch<'_> {
    fn base(&self) -> u64 {
        self.r.target.address
    }

    /// Offset of node `slot`'s `NodeDispatch` for a level of `parity`.
    fn dispatch_offset(&self, parity: usize, slot: usize) -> u64 {
        self.graph.fixed.dispatches[parity] + slot as u64 * std::mem::size_of::<NodeDispatch>() as u64
    }

    /// Address of the graph context.
    fn context(&self) -> u64 {
        self.base() + self.graph.fixed.context
    }

    /// How node `slot` runs at level `d` (`None`: it has no records there).
    fn launch(&self, d: usize, slot: usize) -> Option<Launch> {
        match (&self.host, d) {
            (Some(host), 0) => {
                let (address, dispatch) = host.launches.get(&slot)?;
                Some(match host.staged_offset(*address) {
                    Some((buffer, offset)) => Launch::Staged { dispatch: *address, buffer, offset },
                    None => Launch::Direct { dispatch: *address, groups: dispatch.indirect },
                })
            }
            _ => Some(Launch::Indirect(self.dispatch_offset(d % 2, slot))),
        }
    }

    /// The `NodePush` of node `slot` at level `d` launched by `launch`, the
    /// level's number carrying `flags` (`abi::LEVEL_UNCOUNTED`,
    /// `abi::LEVEL_NEXT_UNCOUNTED`).
    fn node_push(&self, d: usize, slot: usize, launch: Launch, flags: u32) -> NodePush {
        let dispatch = match launch {
            Launch::Indirect(offset) => self.base() + offset,
            Launch::Direct { dispatch, .. } | Launch::Staged { dispatch, .. } => dispatch,
        };
        NodePush { dispatch, ctx: self.context(), level: d as u32 | flags, slot: slot as u32 }
    }

    /// The level that counts nothing and has no finisher
    /// (`abi::LEVEL_UNCOUNTED`), if any: the last, when it is not level 0
    /// and every node that can have records there is a compute node without
    /// outputs (whose kernels skip their count in such a level). Not where
    /// mesh nodes are drawn once after the levels: the finisher that moves
    /// their pin on stays the last one (kept as it was; no test has that
    /// shape with a last level of compute nodes).
    fn uncounted_level(&self, levels: &[BTreeSet<usize>]) -> Option<usize> {
        if self.graph.mesh_drawn_once() {
            return None;
        }
        let d = levels.len().checked_sub(1).filter(|&d| d > 0)?;
        let leaf = |&slot: &usize| spirv_lowering::counts_before_code(&self.graph.graph.nodes[slot].decl.info);
        levels[d].iter().all(leaf).then_some(d)
    }

    /// Level 0 from infos in device memory: `entry.comp` puts the records in
    /// their nodes' frames, `plan.comp` sizes the launches.
    fn device_entries(&self, source: IndirectSource) {
        let r = &self.r;
        let mut push = EntryPush { ctx: self.context(), ..Default::default() };
        let groups = match source {
            IndirectSource::HostCount { count, infos, stride } => {
                (push.count, push.infos, push.info_stride) = (count, infos, stride);
                count.clamp(1, 65535)
            }
            IndirectSource::DeviceCount { count_info } => {
                push.count_info = count_info;
                ENTRY_GROUPS_UNKNOWN_COUNT
            }
        };
        r.pass(
            || Pass::new("entry", None),
            || {
                r.bind(self.meta.entry);
                r.push(self.meta.layout, 0, &push);
                r.dispatch(groups);
            },
        );
        r.level_barrier(None);
        let plan = PlanPush { ctx: self.context(), status: self.status.map_or(0, |s| s.address) };
        r.pass(
            || Pass::new("plan", None),
            || {
                r.bind(self.meta.plan);
                r.push(self.meta.layout, 0, &plan);
                r.dispatch(1);
            },
        );
        r.level_barrier(None);
    }

    /// A host dispatch's level 0 sized on the GPU (`entry::GpuGrids`):
    /// `grids.comp`'s two phases, each a workgroup a chunk of records, and
    /// their barriers.
    fn gpu_grids(&self) {
        let Some(grids) = self.host.as_ref().and_then(|h| h.grids) else { return };
        let r = &self.r;
        r.label(
            || "graph inputs".into(),
            || {
                for phase in 0..2 {
                    r.pass(
                        || Pass::new("grids", None),
                        || {
                            r.bind(grids.pipeline);
                            r.push(self.meta.layout, 0, &GridsPush { phase, ..grids.push });
                            r.dispatch(grids.push.chunks);
                        },
                    );
                    r.level_barrier(None);
                }
            },
        );
    }

    /// The dispatch's first commands: the application's rendering instance
    /// suspended, then, after an earlier graph dispatch of the command
    /// buffer, the compute barrier that orders this one after it (outside
    /// the instance, where barriers are allowed).
    fn open(&self) {
        if let Some(pass) = self.rendering {
            self.r.end_part(pass);
            self.r.after_rendering();
        }
        if self.after_graph {
            self.r.compute_barrier();
        }
    }

    /// Level `d`'s mesh nodes `slots`, drawn in a part of the application's
    /// rendering instance.
    fn draw_mesh_nodes(&self, d: usize, slots: &[usize]) {
        let Some(rendering) = self.rendering else { return };
        // The barrier before (the previous level's, or the inputs') orders
        // the records and arguments before the draws (see `compute_barrier`).
        self.r.begin_part(rendering, false);
        let draws: Vec<(usize, usize, Launch)> =
            slots.iter().filter_map(|&slot| Some((d, slot, self.launch(d, slot)?))).collect();
        self.mesh_draws(&draws);
        // The level's barrier, after its compute dispatches, orders the
        // draws before the next level (see `compute_barrier`).
        self.r.end_part(rendering);
    }

    /// Draws mesh nodes, each `(level, slot, launch)`, inside a part of the
    /// application's rendering instance.
    fn mesh_draws(&self, draws: &[(usize, usize, Launch)]) {
        let (r, graph) = (&self.r, self.graph);
        for &(d, slot, launch) in draws {
            let node = &graph.nodes[slot];
            let Some(mesh) = &node.mesh else { continue };
            let pass = || Pass { kind: "mesh", level: Some(d as u32), node: Some((node.name.clone(), node.index)) };
            r.label_named(&graph.labels.nodes[slot], || {
                r.pass(pass, || {
                    r.bind_at(vk::PipelineBindPoint::GRAPHICS, mesh.pipeline);
                    r.bind_sets_at(vk::PipelineBindPoint::GRAPHICS, &self.cb_state.graph, Some(mesh.layout));
                    r.push_app_constants(self.cb_state, mesh.layout, false);
                    let push = self.node_push(d, slot, launch, 0);
                    r.push_to(mesh.layout, mesh.push_stages, mesh.push_offset, &push);
                    match launch {
                        Launch::Indirect(offset) => r.draw_mesh_indirect(offset),
                        Launch::Direct { groups, .. } => r.draw_mesh(groups),
                        // Never: `grids.comp` sizes no level with mesh nodes.
                        Launch::Staged { buffer, offset, .. } => r.draw_mesh_indirect_in(buffer, offset),
                    }
                })
            });
        }
    }

    /// With mesh nodes drawn once (see `abi`'s "Mesh nodes drawn once"),
    /// the draws after the last level: a host dispatch's level-0 records of
    /// mesh nodes, then each mesh node's pinned records of the later levels
    /// (its parity-1 `NodeDispatch`).
    fn draws_after_levels(&self, levels: &[BTreeSet<usize>]) -> Vec<(usize, usize, Launch)> {
        let mesh = |slot: &usize| self.graph.nodes[*slot].mesh.is_some();
        let mut draws = Vec::new();
        if let Some(first) = levels.first().filter(|_| self.host.is_some()) {
            draws.extend(first.iter().filter(|s| mesh(s)).filter_map(|&slot| Some((0, slot, self.launch(0, slot)?))));
        }
        let pinned: BTreeSet<usize> = levels.iter().skip(1).flatten().copied().filter(|s| mesh(s)).collect();
        let after = levels.len();
        draws.extend(pinned.into_iter().map(|slot| (after, slot, Launch::Indirect(self.dispatch_offset(1, slot)))));
        draws
    }

    /// Whether level `d`'s mesh nodes are drawn at that level: always,
    /// unless they are drawn once after the levels (then only an indirect
    /// dispatch's level 0, whose records the entry passes did not pin).
    fn draws_at_level(&self, d: usize) -> bool {
        !self.graph.mesh_drawn_once() || (d == 0 && self.host.is_none())
    }

    /// Level `d`'s compute nodes `slots`, one dispatch each. The
    /// application's sets and push constants are bound with the graph's
    /// layout before the first (nothing the levels record disturbs them).
    fn launch_nodes(&self, d: usize, slots: &[usize], flags: u32) {
        let (r, graph) = (&self.r, self.graph);
        for &slot in slots {
            let node = &graph.nodes[slot];
            let Some(launch) = self.launch(d, slot) else { continue };
            if self.bound.get().is_none() {
                r.bind_sets(&self.cb_state.graph, Some(graph.layout));
                r.push_app_constants(self.cb_state, graph.layout, true);
            }
            let pass = || Pass { kind: "node", level: Some(d as u32), node: Some((node.name.clone(), node.index)) };
            r.label_named(&graph.labels.nodes[slot], || {
                r.pass(pass, || {
                    if self.bound.replace(Some(node.pipeline)) != Some(node.pipeline) {
                        r.bind(node.pipeline);
                    }
                    r.push(graph.layout, graph.push_offset, &self.node_push(d, slot, launch, flags));
                    match launch {
                        Launch::Indirect(offset) => r.dispatch_indirect(offset),
                        Launch::Direct { groups: [x, y, z], .. } => r.dispatch_xyz(x, y, z),
                        Launch::Staged { buffer, offset, .. } => r.dispatch_indirect_in(buffer, offset),
                    }
                })
            });
        }
    }

    /// Every level: the node dispatches, then a barrier (the level's last
    /// workgroup has set up the next level by then).
    fn run_levels(&self, levels: &[BTreeSet<usize>]) {
        let (r, graph) = (&self.r, self.graph);
        self.copy_counts(None, levels.first().map(|l| (0, l)));
        let uncounted = self.uncounted_level(levels);
        for (d, level) in levels.iter().enumerate() {
            let flags = match uncounted {
                Some(u) if u == d => LEVEL_UNCOUNTED,
                Some(u) if u == d + 1 => LEVEL_NEXT_UNCOUNTED,
                _ => 0,
            };
            let name = graph.labels.levels.get(d).map(|l| l.as_c_str()).unwrap_or_default();
            r.label_named(name, || {
                let (drawn, launched): (Vec<usize>, Vec<usize>) =
                    level.iter().partition(|&&slot| graph.nodes[slot].mesh.is_some());
                if !drawn.is_empty() && self.draws_at_level(d) {
                    self.draw_mesh_nodes(d, &drawn);
                }
                self.launch_nodes(d, &launched, flags);
                if d + 1 == levels.len() {
                    r.last_level_barrier(d, graph.mesh_drawn_once());
                } else {
                    r.level_barrier(Some(d));
                }
                self.copy_counts(Some(d), levels.get(d + 1).map(|l| (d + 1, l)));
            });
        }
        restore_compute_state(r, self.cb_state);
        if let Some(rendering) = self.rendering {
            r.begin_part(rendering, true);
            if graph.mesh_drawn_once() {
                // In the part the application goes on in: one suspension.
                self.mesh_draws(&self.draws_after_levels(levels));
            }
            restore_graphics_state(r, self.cb_state);
        }
    }

    /// With the `statistics` setting, copies for the host (see
    /// `statistics`): the frames level `after` (which has just run) claimed,
    /// and the workgroup and record counts of each node of level `next`
    /// (about to run: its arguments are final, and the last level's finisher
    /// zeroes them once it has run). Level 0 of a host dispatch is known
    /// here and written directly.
    fn copy_counts(&self, after: Option<usize>, next: Option<(usize, &BTreeSet<usize>)>) {
        let Some((block, stats)) = &self.stats else { return };
        let r = &self.r;
        let mut regions = Vec::new();
        // Copies from the staging block of a host dispatch whose level 0
        // `grids.comp` sized.
        let mut staged = Vec::new();
        let claimed = |d: usize| self.graph.fixed.context + statistics::CLAIMED_OFFSET + 4 * (d as u64 % 2);
        if let Some(d) = after {
            regions.push(vk::BufferCopy {
                src_offset: r.target.offset + claimed(d),
                dst_offset: statistics::level_offset(&stats.levels, d),
                size: 4,
            });
        }
        if let Some((d, level)) = next {
            let at = statistics::level_offset(&stats.levels, d);
            let frames = [self.dynamic.frame_count, 1 << self.graph.fixed.frames.shift, 0];
            block.write(at + 4, &words_of(&frames));
            for (i, &slot) in level.iter().enumerate() {
                let dst = at + statistics::LEVEL_HEADER + statistics::NODE_COUNTS * i as u64;
                match self.host.as_ref().filter(|_| d == 0) {
                    Some(host) => {
                        let launch = host.launches.get(&slot);
                        match launch.and_then(|(address, _)| host.staged_offset(*address)) {
                            // Sized by `grids.comp`: copied once it ran.
                            Some((_, offset)) => staged.push(vk::BufferCopy {
                                src_offset: offset + statistics::DISPATCH_OFFSET,
                                dst_offset: dst,
                                size: statistics::NODE_COUNTS,
                            }),
                            None => {
                                let counts = launch.map_or([0, 0], |(_, n)| [n.workgroup_count, n.record_count]);
                                block.write(dst, &words_of(&counts));
                            }
                        }
                    }
                    None => regions.push(vk::BufferCopy {
                        src_offset: r.target.offset + self.dispatch_offset(d % 2, slot) + statistics::DISPATCH_OFFSET,
                        dst_offset: dst,
                        size: statistics::NODE_COUNTS,
                    }),
                }
            }
        }
        if regions.is_empty() && staged.is_empty() {
            return;
        }
        r.barrier(
            vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE,
        );
        r.pass(
            || Pass::new("statistics", after),
            || {
                r.copy_to(block.buffer, &regions);
                if let Some(grids) = self.host.as_ref().and_then(|h| h.grids) {
                    r.copy_between(grids.buffer, block.buffer, &staged);
                }
                if let Some(d) = after {
                    // Only the statistics read the claimed frames: they clear them.
                    r.barrier(
                        vk::PipelineStageFlags::TRANSFER,
                        vk::AccessFlags::TRANSFER_READ,
                        vk::PipelineStageFlags::TRANSFER,
                        vk::AccessFlags::TRANSFER_WRITE,
                    );
                    r.fill_zero(claimed(d), 4);
                }
            },
        );
        r.barrier(
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE,
            vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::HOST,
            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::HOST_READ,
        );
    }
}

/// What every graph dispatch is recorded with.
pub struct DispatchArgs<'a> {
    pub device: &'a Gpu,
    pub cb: vk::CommandBuffer,
    /// The command buffer's shadow state when the dispatch is recorded.
    pub cb_state: &'a Shadow,
    pub graph: &'a GraphPipeline,
    pub meta: &'a MetaPipelines,
    pub target: ScratchTarget,
    /// Where the dispatch's status words go for the host.
    pub status: Option<StatusTarget>,
    /// The command buffer recorded a graph dispatch before this one. A
    /// dispatch ends without a compute barrier of its own (revision 2,
    /// "Dispatch a graph": scratch is synchronized by the application with
    /// the compute stage and shader writes, as outputs are), but two in one
    /// command buffer are ordered by the layer all the same: the second
    /// starts with the barrier, where the first's last level may still run
    /// on scratch they share.
    pub after_graph: bool,
}

impl<'a> DispatchArgs<'a> {
    fn begin(
        &self,
        profile: Option<&'a Recording>,
        levels: &[BTreeSet<usize>],
        host: Option<HostLevel>,
    ) -> Result<Dispatch<'a>, RecordError> {
        let DispatchArgs { device, cb, cb_state, graph, meta, target, status, after_graph } = *self;
        let dynamic = layout_for(graph, &target)?;
        let rendering = cb_state.open_pass().filter(|_| graph.has_mesh_nodes());
        // Mesh nodes drawn once are drawn after the levels' barriers (but
        // an indirect dispatch's level 0 draws at once: its entries may be
        // mesh nodes).
        let drawn_once = graph.mesh_drawn_once() && host.is_some();
        let r = Recorder { device, cb, target, profile, draws: rendering.is_some() && !drawn_once };
        let stats = self.statistics(levels);
        Ok(Dispatch {
            r,
            graph,
            meta,
            cb_state,
            dynamic,
            status,
            stats,
            rendering,
            host,
            after_graph,
            bound: Cell::new(None),
        })
    }

    /// Memory for the per-level counts of a dispatch running `levels`, when
    /// the `statistics` setting is on (and the dispatch has a status slot,
    /// which is how the host finds out that it finished).
    fn statistics(&self, levels: &[BTreeSet<usize>]) -> Option<(Reserved, Statistics)> {
        self.device.instance.settings.statistics.as_ref()?;
        self.status?;
        let named: Vec<Vec<(String, u32)>> = levels
            .iter()
            .map(|l| l.iter().map(|&n| (self.graph.nodes[n].name.clone(), self.graph.nodes[n].index)).collect())
            .collect();
        let bytes = statistics::bytes(named.iter().map(Vec::len));
        let block = self
            .device
            .staging
            .lock()
            .reserve(&self.device.dispatch, &self.device.physical.memory_properties, self.cb, bytes)
            .map_err(|e| tracing::warn!("statistics memory unavailable ({e:?}): this dispatch is not counted"))
            .ok()?;
        block.zero(0, bytes);
        Some((block, Statistics { host: block.host, levels: named }))
    }

    /// Timestamps for a dispatch running `levels`, when the `profile`
    /// setting is on (the inputs take at most 8 passes, a level its node
    /// dispatches and 5 more).
    fn profile(&self, levels: &[BTreeSet<usize>]) -> Option<Recording> {
        self.device.instance.settings.profile.as_ref()?;
        let passes: usize = 8 + levels.iter().map(|l| l.len() + 5).sum::<usize>();
        Recording::reserve(&self.device.dispatch, &self.device.profile_queries, passes as u32 + 1)
    }
}

/// What a recorded dispatch ran, for the host's reports.
pub struct Recorded {
    /// The nodes dispatched at each level.
    pub levels: Levels,
    /// Its timestamps, when profiled.
    pub profile: Option<profile::Slot>,
    /// Its per-level counts, with the `statistics` setting.
    pub statistics: Option<Statistics>,
}

/// `vkCmdDispatchGraphAMDX` with host payloads.
pub fn dispatch(args: &DispatchArgs<'_>, inputs: &[EntryInput<'_>]) -> Result<Recorded, RecordError> {
    layout_for(args.graph, &args.target)?;
    let graph = args.graph;
    let status = args.status.map_or(0, |s| s.address);
    let host = host_level(args.device, args.cb, (graph, args.meta), inputs, status)?;
    let entry_slots: BTreeSet<usize> = host.launches.keys().copied().collect();
    let levels = graph.level_cache.entered_at(&graph.graph, &entry_slots);
    let recording = args.profile(&levels);
    let run = args.begin(recording.as_ref(), &levels, Some(host))?;
    run.r.label_named(&graph.labels.dispatch, || {
        if let Some(p) = &recording {
            p.begin(run.r.vk(), run.r.cb);
        }
        run.open();
        run.gpu_grids();
        run.run_levels(&levels);
    });
    let statistics = run.stats.map(|(_, s)| s);
    Ok(Recorded { levels, profile: recording.map(Recording::finish), statistics })
}

/// `vkCmdDispatchGraphIndirectAMDX` / `vkCmdDispatchGraphIndirectCountAMDX`:
/// level 0 is built on the GPU from infos in device memory; every node that
/// is an API entry is dispatched at level 0 (those without records get no
/// workgroups).
pub fn dispatch_indirect(args: &DispatchArgs<'_>, source: IndirectSource) -> Result<Recorded, RecordError> {
    layout_for(args.graph, &args.target)?;
    let graph = args.graph;
    let levels = graph.level_cache.at_api_entries(&graph.graph);
    let recording = args.profile(&levels);
    let run = args.begin(recording.as_ref(), &levels, None)?;
    run.r.label_named(&graph.labels.indirect, || {
        if let Some(p) = &recording {
            p.begin(run.r.vk(), run.r.cb);
        }
        run.open();
        run.r.label(|| "graph inputs".into(), || run.device_entries(source));
        run.run_levels(&levels);
    });
    let statistics = run.stats.map(|(_, s)| s);
    Ok(Recorded { levels, profile: recording.map(Recording::finish), statistics })
}
