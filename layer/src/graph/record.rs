//! Recording of scratch initialisation and graph dispatches into the
//! application's command buffer. Every step is an ordinary (indirect)
//! dispatch or buffer update a capture tool can step through:
//!
//! 1. transfer: the graph context, level 0's records and payloads (host
//!    dispatch: known on the host; indirect dispatches: the entry meta
//!    passes build them) and cleared counters;
//! 2. per level: each node that can have records at that level, as an
//!    indirect dispatch whose arguments the previous level's last workgroup
//!    wrote (see `spirv_lowering::abi`), then one barrier;
//! 3. the status words copied for the host, and the application's compute
//!    state (pipeline, descriptor sets, push descriptors, push constants)
//!    bound again.
//!
//! A graph with mesh nodes is dispatched inside a render pass instance
//! (dynamic rendering, or a render pass object of one subpass), where no
//! compute work may run. The layer ends the
//! application's instance before step 1; at each level with mesh nodes it
//! draws them (`vkCmdDrawMeshTasksIndirectEXT` on their `NodeDispatch`)
//! in a part of the instance it begins and ends with `LOAD`/`STORE`,
//! before the level's compute dispatches (mesh nodes read their records
//! where that level's nodes do, and the next level overwrites them); after
//! the last level it begins the part the application goes on recording in,
//! with its own store operations and resolves, and binds its graphics
//! state again.

use super::commands::{restore_compute_state, restore_graphics_state, Recorder};
use super::entry::{entry_level, EntryLevel};
use super::errors::RecordError;
use super::gpu::Gpu;
use super::pipeline::{GraphPipeline, MetaPipelines};
use super::profile::{self, Pass, Recording};
use super::scratch::{context_words, dispatch_words, words_of, DynamicLayout, ScratchTarget, FIRST_TAG, STATUS_WORDS};
use super::statistics::{self, Statistics};
use crate::state::command_buffer::{OpenPass, Shadow};
use ash::vk;
use meta_shaders::{EntryPush, GridscanPush, PlanPush, SCHEDULE_DYNAMIC};
use spirv_lowering::abi::{GraphContext, NodeDispatch, NodePush, DONE_GROUPS_BYTES, NO_NODE};
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

/// `vkCmdInitializeGraphScratchMemoryAMDX`: the graph's static tables, an
/// empty record index, zeroed done groups, the sink's header and the first tag.
pub fn initialize(
    device: &Gpu,
    cb: vk::CommandBuffer,
    graph: &GraphPipeline,
    target: ScratchTarget,
) -> Result<(), RecordError> {
    let dynamic = layout_for(graph, &target)?;
    let r = Recorder { device, cb, target, profile: None, draws: false };
    r.label(
        || format!("initialize scratch for graph {:?}", graph.handle),
        || {
            r.before_transfer();
            let tables = graph.fixed.static_tables(&graph.graph, &graph.schedules, target.address);
            r.update(graph.fixed.schedules, &tables);
            r.fill_zero(dynamic.index, dynamic.end() - dynamic.index);
            // Every level leaves them at zero again (each group's completer
            // resets its counter), so dispatches do not clear them.
            r.fill_zero(graph.fixed.done_groups, DONE_GROUPS_BYTES);
            // The sink's allocation header, which kernels never write: no node, no records.
            r.update(graph.fixed.sink, &words_of(&[NO_NODE, 0, 0, 0]));
            let tag = graph.fixed.context + std::mem::offset_of!(GraphContext, tag) as u64;
            r.update(tag, &words_of(&[FIRST_TAG]));
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

/// Workgroups of the entry passes when the host does not know the count.
const ENTRY_GROUPS_UNKNOWN_COUNT: u32 = 256;

/// State shared by the steps of one graph dispatch.
struct Dispatch<'a> {
    r: Recorder<'a>,
    graph: &'a GraphPipeline,
    meta: &'a MetaPipelines,
    cb_state: &'a Shadow,
    dynamic: DynamicLayout,
    /// Where the final status goes for the host: (buffer, slot).
    status: Option<(vk::Buffer, u32)>,
    /// Where the per-level counts go, when the `statistics` setting is on.
    stats: Option<(vk::Buffer, Statistics)>,
    /// The application's render pass instance, which a graph with mesh
    /// nodes suspends (see the module doc).
    rendering: Option<OpenPass<'a>>,
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

    /// Writes the graph context (all but its tag) and clears the per-level
    /// tables (transfer); `launched` is level 0's workgroup count when the
    /// host knows it.
    fn begin(&self, launched: u32) {
        let (base, fixed, dynamic) = (self.base(), &self.graph.fixed, &self.dynamic);
        let n = self.graph.graph.nodes.len() as u64;
        let context = GraphContext {
            ring: [base + dynamic.halves[0], base + dynamic.halves[1]],
            ring_top: [0, 0],
            ring_capacity: dynamic.half_size.min(u64::from(u32::MAX)) as u32,
            node_count: n as u32,
            counts: [base + fixed.counts[0], base + fixed.counts[1]],
            dispatches: [base + fixed.dispatches[0], base + fixed.dispatches[1]],
            schedules: base + fixed.schedules,
            links: base + fixed.links,
            nodes: base + fixed.node_infos,
            sink: base + fixed.sink,
            index: base + dynamic.index,
            index_mask: (dynamic.index_slots - 1).min(u64::from(u32::MAX)) as u32,
            status: 0,
            done: [0, 0],
            launched: [launched, 0],
            level_status: base + fixed.level_status,
            tag: 0,
            _reserved: 0,
            done_groups: base + fixed.done_groups,
        };
        self.r.update(fixed.context, &words_of(&context_words(&context)));
        let done_groups = std::mem::offset_of!(GraphContext, done_groups) as u64;
        let address = context.done_groups;
        self.r.update(fixed.context + done_groups, &words_of(&[address as u32, (address >> 32) as u32]));
        // Both parities' dispatches are adjacent, and so are the counters
        // (with the entry passes' counters after them).
        self.r.fill_zero(fixed.dispatches[0], 2 * n * std::mem::size_of::<NodeDispatch>() as u64);
        self.r.fill_zero(fixed.counts[0], 2 * 8 * n + 4 * n);
        self.r.fill_zero(fixed.level_status, 4 * u64::from(STATUS_WORDS));
    }

    /// Level 0 from host payloads: everything written by transfers.
    fn host_entries(&self, entry: &EntryLevel) {
        let dynamic = &self.dynamic;
        self.r.pass(
            || Pass::new("upload", None),
            || {
                self.r.before_transfer();
                self.begin(entry.launched);
                for (&slot, d) in &entry.dispatches {
                    self.r.update(self.dispatch_offset(0, slot), &words_of(&dispatch_words(d)));
                }
                self.r.upload(&[(dynamic.records, &entry.records), (dynamic.halves[1], &entry.payloads)]);
                self.r.after_transfer();
            },
        );
    }

    /// Level 0 from infos in device memory: `entry_rank`, `plan`,
    /// `entry_records` (and `gridscan`) build it on the GPU.
    fn device_entries(&self, source: IndirectSource) {
        let (base, fixed, dynamic, r) = (self.base(), &self.graph.fixed, &self.dynamic, &self.r);
        r.pass(
            || Pass::new("upload", None),
            || {
                r.before_transfer();
                self.begin(0);
                r.after_transfer();
            },
        );
        // The rank array borrows ring half 1, which level 0 does not use.
        let rank_capacity = (dynamic.half_size / 8).min(u64::from(u32::MAX)) as u32;
        let mut push = EntryPush {
            ctx: self.context(),
            dispatches: base + fixed.dispatches[0],
            schedules: base + fixed.schedules,
            rank_capacity,
            ranks: base + dynamic.halves[1],
            counts: base + fixed.entry_counts,
            ..Default::default()
        };
        let groups = match source {
            IndirectSource::HostCount { count, infos, stride } => {
                (push.count, push.infos, push.info_stride) = (count, infos, stride);
                count.min(rank_capacity).div_ceil(meta_shaders::ENTRY_WORKGROUP).clamp(1, 65535)
            }
            IndirectSource::DeviceCount { count_info } => {
                push.count_info = count_info;
                ENTRY_GROUPS_UNKNOWN_COUNT
            }
        };
        r.pass(
            || Pass::new("entry_rank", None),
            || {
                r.bind(self.meta.entry_rank);
                r.push(self.meta.layout, 0, &push);
                r.dispatch(groups);
            },
        );
        r.level_barrier(None);
        self.plan();
        r.pass(
            || Pass::new("entry_records", None),
            || {
                r.bind(self.meta.entry_records);
                r.push(self.meta.layout, 0, &push);
                r.dispatch(groups.max(ENTRY_GROUPS_UNKNOWN_COUNT));
            },
        );
        r.level_barrier(None);
        let entries: BTreeSet<usize> = self.api_entries();
        self.gridscan_if_needed(&entries, None);
    }

    fn api_entries(&self) -> BTreeSet<usize> {
        (0..self.graph.graph.nodes.len()).filter(|&n| self.graph.graph.nodes[n].decl.info.is_api_entry).collect()
    }

    /// `plan.comp`: record slices and arguments of level 0 from the
    /// counts `entry_rank` left; the status goes to the first status word.
    fn plan(&self) {
        let (base, fixed, dynamic, r) = (self.base(), &self.graph.fixed, &self.dynamic, &self.r);
        let push = PlanPush {
            ctx: self.context(),
            dispatches: base + fixed.dispatches[0],
            schedules: base + fixed.schedules,
            records: base + dynamic.records,
            level_status: base + fixed.level_status,
            record_capacity: dynamic.record_capacity,
            reserved: 0,
            counts: base + fixed.entry_counts,
        };
        r.pass(
            || Pass::new("plan", None),
            || {
                r.bind(self.meta.plan);
                r.push(self.meta.layout, 0, &push);
                r.dispatch(1);
            },
        );
        r.level_barrier(None);
    }

    /// `gridscan.comp` when a node of level 0 takes its grid from the payload.
    fn gridscan_if_needed(&self, level: &BTreeSet<usize>, after: Option<usize>) {
        let (base, fixed, r) = (self.base(), &self.graph.fixed, &self.r);
        if level.iter().any(|&s| self.graph.schedules[s].mode == SCHEDULE_DYNAMIC) {
            let push = GridscanPush {
                dispatches: base + fixed.dispatches[0],
                schedules: base + fixed.schedules,
                ctx: self.context(),
            };
            r.pass(
                || Pass::new("gridscan", after),
                || {
                    r.bind(self.meta.gridscan);
                    r.push(self.meta.layout, 0, &push);
                    r.dispatch(self.graph.graph.nodes.len() as u32);
                },
            );
            r.level_barrier(after);
        }
    }

    /// Ends the application's rendering instance before a graph with mesh
    /// nodes runs its compute work.
    fn suspend_rendering(&self) {
        if let Some(pass) = self.rendering {
            self.r.end_part(pass);
            self.r.after_rendering();
        }
    }

    /// Level `d`'s mesh nodes `slots`, drawn in a part of the application's
    /// rendering instance.
    fn draw_mesh_nodes(&self, d: usize, slots: &[usize]) {
        let (r, graph) = (&self.r, self.graph);
        let Some(rendering) = self.rendering else { return };
        // The barrier before (the previous level's, or the inputs') orders
        // the records and arguments before the draws (see `compute_barrier`).
        r.begin_part(rendering, false);
        for &slot in slots {
            let node = &graph.nodes[slot];
            let Some(mesh) = &node.mesh else { continue };
            let pass = || Pass { kind: "mesh", level: Some(d as u32), node: Some((node.name.clone(), node.index)) };
            r.label(
                || format!("mesh node \"{}\" [{}]", node.name, node.index),
                || {
                    r.pass(pass, || {
                        let dispatch = self.dispatch_offset(d % 2, slot);
                        r.bind_at(vk::PipelineBindPoint::GRAPHICS, mesh.pipeline);
                        r.bind_sets_at(vk::PipelineBindPoint::GRAPHICS, &self.cb_state.graph, Some(mesh.layout));
                        r.push_app_constants(self.cb_state, mesh.layout, false);
                        let push = NodePush {
                            dispatch: self.base() + dispatch,
                            ctx: self.context(),
                            level: d as u32,
                            slot: slot as u32,
                        };
                        r.push_to(mesh.layout, mesh.push_stages, mesh.push_offset, &push);
                        r.draw_mesh_indirect(dispatch);
                    })
                },
            );
        }
        // The level's barrier, after its compute dispatches, orders the
        // draws before the next level (see `compute_barrier`).
        r.end_part(rendering);
    }

    /// Every level: the node dispatches, then a barrier (the level's last
    /// workgroup has set up the next level by then).
    fn run_levels(&self, levels: &[BTreeSet<usize>]) {
        let (base, r, graph) = (self.base(), &self.r, self.graph);
        self.copy_counts(None, levels.first().map(|l| (0, l)));
        for (d, level) in levels.iter().enumerate() {
            r.label(
                || format!("level {d}"),
                || {
                    let (drawn, launched): (Vec<usize>, Vec<usize>) =
                        level.iter().partition(|&&slot| graph.nodes[slot].mesh.is_some());
                    if !drawn.is_empty() {
                        self.draw_mesh_nodes(d, &drawn);
                    }
                    r.bind_sets(&self.cb_state.graph, Some(graph.layout));
                    r.push_app_constants(self.cb_state, graph.layout, true);
                    for &slot in &launched {
                        let node = &graph.nodes[slot];
                        let pass = || Pass {
                            kind: "node",
                            level: Some(d as u32),
                            node: Some((node.name.clone(), node.index)),
                        };
                        r.label(
                            || format!("node \"{}\" [{}]", node.name, node.index),
                            || {
                                r.pass(pass, || {
                                    let dispatch = self.dispatch_offset(d % 2, slot);
                                    r.bind(node.pipeline);
                                    let push = NodePush {
                                        dispatch: base + dispatch,
                                        ctx: self.context(),
                                        level: d as u32,
                                        slot: slot as u32,
                                    };
                                    r.push(graph.layout, graph.push_offset, &push);
                                    r.dispatch_indirect(dispatch);
                                })
                            },
                        );
                    }
                    r.level_barrier(Some(d));
                    self.copy_counts(Some(d), levels.get(d + 1).map(|l| (d + 1, l)));
                },
            );
        }
        self.copy_status();
        restore_compute_state(r, self.cb_state);
        if let Some(rendering) = self.rendering {
            r.begin_part(rendering, true);
            restore_graphics_state(r, self.cb_state);
        }
    }

    /// With the `statistics` setting, copies for the host (see
    /// `statistics`): the ring use of level `after` (which has just run) and
    /// the workgroup and record counts of each node of level `next` (about to
    /// run: its arguments are final, and the last level's finisher zeroes
    /// them once it has run).
    fn copy_counts(&self, after: Option<usize>, next: Option<(usize, &BTreeSet<usize>)>) {
        let Some((buffer, stats)) = &self.stats else { return };
        let r = &self.r;
        let mut regions = Vec::new();
        if let Some(d) = after {
            regions.push(vk::BufferCopy {
                src_offset: r.target.offset + self.graph.fixed.context + statistics::CONTEXT_OFFSET,
                dst_offset: statistics::level_offset(&stats.levels, d),
                size: statistics::LEVEL_HEADER,
            });
        }
        if let Some((d, level)) = next {
            let at = statistics::level_offset(&stats.levels, d) + statistics::LEVEL_HEADER;
            regions.extend(level.iter().enumerate().map(|(i, &slot)| vk::BufferCopy {
                src_offset: r.target.offset + self.dispatch_offset(d % 2, slot) + statistics::DISPATCH_OFFSET,
                dst_offset: at + statistics::NODE_COUNTS * i as u64,
                size: statistics::NODE_COUNTS,
            }));
        }
        if regions.is_empty() {
            return;
        }
        r.barrier(
            vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_READ,
        );
        r.pass(
            || Pass::new("statistics", after),
            // SAFETY: recording; every range lies inside its buffer.
            || unsafe {
                (r.fp().cmd_copy_buffer)(r.cb, r.target.buffer, *buffer, regions.len() as u32, regions.as_ptr())
            },
        );
        r.barrier(
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE,
            vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::HOST,
            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::HOST_READ,
        );
    }

    /// Copies the dispatch's status words (after the inputs, after each
    /// level, final: from the context of the last level) to its host slot.
    fn copy_status(&self) {
        let Some((buffer, slot)) = self.status else { return };
        let r = &self.r;
        r.barrier(
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::AccessFlags::SHADER_WRITE,
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_READ,
        );
        let fixed = &self.graph.fixed;
        let slot_offset = u64::from(slot) * 4 * u64::from(STATUS_WORDS);
        let snapshots = 4 * u64::from(STATUS_WORDS - 1);
        let regions = [
            vk::BufferCopy {
                src_offset: r.target.offset + fixed.level_status,
                dst_offset: slot_offset,
                size: snapshots,
            },
            vk::BufferCopy {
                src_offset: r.target.offset + fixed.context + std::mem::offset_of!(GraphContext, status) as u64,
                dst_offset: slot_offset + snapshots,
                size: 4,
            },
        ];
        r.pass(
            || Pass::new("status", None),
            // SAFETY: recording; every range lies inside its buffer.
            || unsafe {
                (r.fp().cmd_copy_buffer)(r.cb, r.target.buffer, buffer, regions.len() as u32, regions.as_ptr())
            },
        );
        r.barrier(
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_WRITE,
            vk::PipelineStageFlags::HOST,
            vk::AccessFlags::HOST_READ,
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
    /// Where the dispatch's status words go for the host: (buffer, slot).
    pub status: Option<(vk::Buffer, u32)>,
}

impl<'a> DispatchArgs<'a> {
    fn begin(&self, profile: Option<&'a Recording>, levels: &[BTreeSet<usize>]) -> Result<Dispatch<'a>, RecordError> {
        let DispatchArgs { device, cb, cb_state, graph, meta, target, status } = *self;
        let dynamic = layout_for(graph, &target)?;
        let rendering = cb_state.open_pass().filter(|_| graph.has_mesh_nodes());
        let r = Recorder { device, cb, target, profile, draws: rendering.is_some() };
        let stats = self.statistics(levels);
        Ok(Dispatch { r, graph, meta, cb_state, dynamic, status, stats, rendering })
    }

    /// Memory for the per-level counts of a dispatch running `levels`, when
    /// the `statistics` setting is on (and the dispatch has a status slot,
    /// which is how the host finds out that it finished).
    fn statistics(&self, levels: &[BTreeSet<usize>]) -> Option<(vk::Buffer, Statistics)> {
        self.device.instance.settings.statistics.as_ref()?;
        self.status?;
        let named: Vec<Vec<(String, u32)>> = levels
            .iter()
            .map(|l| l.iter().map(|&n| (self.graph.nodes[n].name.clone(), self.graph.nodes[n].index)).collect())
            .collect();
        let bytes = statistics::bytes(named.iter().map(Vec::len));
        let (buffer, host) = self.device.staging.lock().reserve(
            &self.device.dispatch,
            &self.device.physical.memory_properties,
            self.cb,
            bytes,
        )?;
        Some((buffer, Statistics { host: host as usize, levels: named }))
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
    pub levels: Vec<BTreeSet<usize>>,
    /// Its timestamps, when profiled.
    pub profile: Option<profile::Slot>,
    /// Its per-level counts, with the `statistics` setting.
    pub statistics: Option<Statistics>,
}

/// `vkCmdDispatchGraphAMDX` with host payloads.
pub fn dispatch(args: &DispatchArgs<'_>, inputs: &[EntryInput]) -> Result<Recorded, RecordError> {
    let layout = layout_for(args.graph, &args.target)?;
    let (graph, dynamic) = (args.graph, &layout);
    let entry = entry_level(graph, dynamic, args.target.address, inputs)?;
    let entry_slots: BTreeSet<usize> = entry.dispatches.keys().copied().collect();
    let levels = graph.graph.levels(&entry_slots);
    let recording = args.profile(&levels);
    let run = args.begin(recording.as_ref(), &levels)?;
    run.r.label(
        || format!("dispatch graph {:?}", graph.handle),
        || {
            if let Some(p) = &recording {
                p.begin(run.r.fp(), run.r.cb);
            }
            run.suspend_rendering();
            run.r.label(|| "graph inputs".into(), || run.host_entries(&entry));
            run.run_levels(&levels);
        },
    );
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
    let entries: BTreeSet<usize> =
        (0..graph.graph.nodes.len()).filter(|&n| graph.graph.nodes[n].decl.info.is_api_entry).collect();
    let levels = graph.graph.levels(&entries);
    let recording = args.profile(&levels);
    let run = args.begin(recording.as_ref(), &levels)?;
    run.r.label(
        || format!("dispatch graph {:?} (indirect)", graph.handle),
        || {
            if let Some(p) = &recording {
                p.begin(run.r.fp(), run.r.cb);
            }
            run.suspend_rendering();
            run.r.label(|| "graph inputs".into(), || run.device_entries(source));
            run.run_levels(&levels);
        },
    );
    let statistics = run.stats.map(|(_, s)| s);
    Ok(Recorded { levels, profile: recording.map(Recording::finish), statistics })
}
