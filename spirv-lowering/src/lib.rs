//! Lowering of `SPV_AMDX_shader_enqueue` node shaders (2024 form) into plain
//! `GLCompute` kernels plus the [`NodeShaderInfo`] the runtime needs.
//! Pure Rust, no Vulkan: see the crate README for the constructs covered.
//!
//! * [`analyze()`] / [`analyze_with`]: one [`NodeShaderInfo`] per GLCompute entry point;
//! * [`lower`]: one entry point -> a module with no AMDX left that talks to the
//!   runtime through the ABI in [`abi`].
#![forbid(unsafe_code)]

pub mod abi;
mod analyze;
mod codegen;
pub mod consts;
mod error;
mod ir;
mod layout;
mod loader;
mod passes;
mod runtime;
mod uniform;

pub use analyze::{DispatchGrid, InputPayload, LaunchMode, NodeShaderInfo, OutputInfo, Visibility};
pub use consts::SpecMap;
pub use error::LowerError;

use ir::Ir;

/// What the runtime decides for one lowered node.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LowerOptions {
    /// The GLCompute entry point to lower.
    pub entry_point: String,
    /// Byte offset of [`abi::NodePush`] in the push-constant range (multiple of 8).
    pub push_offset: u32,
    /// `VkPhysicalDeviceLimits::maxPushConstantsSize`.
    pub max_push_constants_size: u32,
    /// Lanes per workgroup for packable thread nodes (1 = no packing).
    pub thread_pack_width: u32,
    /// The value the `ShaderIndexAMDX` builtin reads (the node's final index).
    pub shader_index: u32,
    /// The application's specialization constants (SpecId -> value).
    pub specialization: SpecMap,
    /// Where the linked graph's tables lie (the layer lowers a node once its
    /// graph is linked): outputs then find their targets with one load, or
    /// none, instead of four dependent ones. `None`: read from the tables.
    pub tables: Option<GraphTables>,
    /// The device runs subgroup arithmetic and ballot operations in compute
    /// shaders (`VkPhysicalDeviceSubgroupProperties`): output allocations are
    /// then made with one atomic per subgroup instead of one per invocation.
    pub subgroup_ops: bool,
    /// Payload bounds (the layer's `checked_payloads` setting): every output
    /// record index is clamped to its allocation and every input record
    /// index to the records received, and the first violation is recorded
    /// for the host (`abi::FAULT_PAYLOAD_INDEX`, `abi::FAULT_INPUT_INDEX`).
    /// Without it, indexes are still held to `NodeMaxPayloadsAMDX` and
    /// `MaxRecords`, so no access leaves the node's own records.
    pub checked_payloads: bool,
}

impl LowerOptions {
    /// Options for `entry` with a 128-byte push space, push block at 0, no
    /// packing, subgroup operations on.
    pub fn new(entry: &str) -> Self {
        LowerOptions {
            entry_point: entry.to_string(),
            push_offset: 0,
            max_push_constants_size: 128,
            thread_pack_width: 1,
            shader_index: 0,
            specialization: SpecMap::new(),
            subgroup_ops: true,
            tables: None,
            checked_payloads: false,
        }
    }
}

/// The scratch tables of the graph a kernel is lowered for, as byte offsets
/// from the `GraphContext` (see `abi`'s scratch layout), the graph's frames,
/// and the targets of each of the node's outputs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct GraphTables {
    /// `[NodeSchedule; node_count]`.
    pub schedules: u64,
    /// `[NodeInfo; node_count]`.
    pub nodes: u64,
    /// log2 of the bytes of a frame (`GraphContext::frame_shift`).
    pub frame_shift: u32,
    /// Node slots of the graph.
    pub node_count: u32,
    /// Home frames per parity (`GraphContext::homes`: 0, or `2 * node_count`).
    pub homes: u32,
    /// How the records this node reads (its key node's) sit in their frames.
    pub input: abi::FrameGeometry,
    /// Per output, in `NodeShaderInfo::outputs` order.
    pub outputs: Vec<OutputTargets>,
    /// Byte offsets from the `GraphContext` of the fixed tables of each
    /// level parity: `[NodeDispatch; node_count]`, the rank counters and
    /// the grid counters (`abi::COUNTER_STRIDE_BYTES` apart). Constants
    /// spare the kernel a load of their address from the context.
    pub dispatches: [u64; 2],
    pub rank_counts: [u64; 2],
    pub grid_counts: [u64; 2],
    /// Every slot that can have records after level 0 (a target of some
    /// output, or a node sharing input with one) with its schedule: the
    /// level finisher sizes their launches from constants. Slots not listed
    /// are only ever launched at level 0.
    pub launched: Vec<(u32, abi::NodeSchedule)>,
}

impl GraphTables {
    /// What the kernel's frame code may take as constants.
    pub(crate) fn pool_facts(&self) -> runtime::PoolFacts {
        runtime::PoolFacts { frame_shift: self.frame_shift, node_count: self.node_count, homes: self.homes }
    }
}

/// One output's targets: its `OutputLink` slot table and how their records
/// are kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct OutputTargets {
    /// Byte offset of the `u32` slot table from the `GraphContext`.
    pub table: u64,
    /// Node slot per array index (`abi::NO_NODE`: none), as in the table.
    pub slots: Vec<u32>,
    /// The frame geometry of every target (the runtime gives all targets of
    /// one output the same).
    pub geometry: abi::FrameGeometry,
    /// Some target takes its grid from the payload (enqueueing writes its
    /// grid entries).
    pub dynamic: bool,
    /// The targets are mesh nodes drawn once after the last level: their
    /// records are pinned (`abi`'s "Mesh nodes drawn once").
    pub pinned: bool,
}

impl OutputTargets {
    /// The first slot when the slots are `first, first + 1, ...` with none
    /// missing (a node array, or a single target): no table needed.
    pub fn consecutive(&self) -> Option<u32> {
        let first = *self.slots.first()?;
        let run =
            self.slots.iter().enumerate().all(|(i, &s)| s != abi::NO_NODE && s.checked_sub(first) == Some(i as u32));
        run.then_some(first)
    }
}

/// Input records one workgroup of `info`'s kernel consumes, lowered with
/// `thread_pack_width` (what [`LoweredNode::records_per_workgroup`] will be).
pub fn records_per_workgroup(info: &NodeShaderInfo, thread_pack_width: u32) -> u32 {
    match info.launch {
        LaunchMode::Coalescing { max_payloads } => max_payloads,
        LaunchMode::Thread if passes::packs_threads(info, thread_pack_width) => thread_pack_width,
        _ => 1,
    }
}

/// A lowered node kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoweredNode {
    /// SPIR-V words of the GLCompute module (one entry point, same name).
    pub words: Vec<u32>,
    /// Analysis of the node (as with [`analyze_with`]).
    pub info: NodeShaderInfo,
    /// Workgroup size the kernel is compiled with (differs from
    /// `info.workgroup_size` when thread packing applies).
    pub dispatch_workgroup_size: [u32; 3],
    /// Input records one workgroup consumes: 1 for broadcast (per grid cell
    /// group), P for coalescing, W for packed thread nodes.
    pub records_per_workgroup: u32,
    /// Byte range of [`abi::NodePush`] in the push constants.
    pub push_range: (u32, u32),
    /// The kernel reads [`LowerOptions::shader_index`]; when false it is the
    /// same kernel for every shader index (a runtime may share it between
    /// the members of a node array). Kernels lowered against their graph
    /// read the index from the node's `NodeInfo` instead.
    pub reads_shader_index: bool,
}

/// A node-shader module parsed once, for analyzing and lowering several of
/// its entry points without re-parsing (the runtime's pipeline-creation path).
#[derive(Debug, Clone)]
pub struct ParsedModule {
    module: rspirv::dr::Module,
}

impl ParsedModule {
    /// Checks and parses `words` (the same errors as [`analyze()`]).
    pub fn parse(words: &[u32]) -> Result<Self, LowerError> {
        Ok(ParsedModule { module: loader::load(words)? })
    }

    /// As [`analyze_with`].
    pub fn analyze(&self, spec: &SpecMap) -> Result<Vec<NodeShaderInfo>, LowerError> {
        let ir = Ir::new(self.module.clone());
        analyze::entry_names(&ir)
            .into_iter()
            .map(|(f, name)| analyze::entry_facts(&ir, spec, f, &name).map(|x| x.info))
            .collect()
    }

    /// As [`lower`].
    pub fn lower(&self, opts: &LowerOptions) -> Result<LoweredNode, LowerError> {
        lower_ir(Ir::new(self.module.clone()), opts)
    }
}

/// One [`NodeShaderInfo`] per GLCompute entry point, without specialization.
pub fn analyze(words: &[u32]) -> Result<Vec<NodeShaderInfo>, LowerError> {
    analyze_with(words, &SpecMap::new())
}

/// One [`NodeShaderInfo`] per GLCompute entry point, after specialization.
pub fn analyze_with(words: &[u32], spec: &SpecMap) -> Result<Vec<NodeShaderInfo>, LowerError> {
    let ir = Ir::new(loader::load(words)?);
    analyze::entry_names(&ir)
        .into_iter()
        .map(|(f, name)| analyze::entry_facts(&ir, spec, f, &name).map(|x| x.info))
        .collect()
}

/// Lowers one entry point (see the crate README and [`abi`]).
pub fn lower(words: &[u32], opts: &LowerOptions) -> Result<LoweredNode, LowerError> {
    lower_ir(Ir::new(loader::load(words)?), opts)
}

fn lower_ir(mut ir: Ir, opts: &LowerOptions) -> Result<LoweredNode, LowerError> {
    let (entry_fn, _) = analyze::entry_names(&ir)
        .into_iter()
        .find(|(_, n)| *n == opts.entry_point)
        .ok_or_else(|| LowerError::EntryPointNotFound(opts.entry_point.clone()))?;
    let facts = analyze::entry_facts(&ir, &opts.specialization, entry_fn, &opts.entry_point)?;
    let out = passes::run(&mut ir, &facts, opts)?;
    let words = ir.finish();
    Ok(LoweredNode {
        words,
        info: facts.info,
        dispatch_workgroup_size: out.workgroup_size,
        records_per_workgroup: out.records_per_workgroup,
        reads_shader_index: out.reads_shader_index,
        push_range: (opts.push_offset, opts.push_offset.saturating_add(std::mem::size_of::<abi::NodePush>() as u32)),
    })
}
