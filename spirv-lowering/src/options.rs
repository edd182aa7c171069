//! What the runtime decides for one lowered node ([`LowerOptions`]), the
//! linked graph's tables it may lower against ([`GraphTables`]), and what
//! follows from them before any lowering: the records one workgroup takes.

use crate::abi;
use crate::analyze::{LaunchMode, NodeShaderInfo};
use crate::consts::SpecMap;

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
    /// The `phase_clock` diagnostic: the device address of the graph's
    /// table ([`abi::PHASE_TABLE_BYTES`]), where invocation 0 of every
    /// workgroup adds the SM clock cycles from its start to each
    /// [`abi::Phase`] (the device must have `shaderSubgroupClock`). `None`:
    /// nothing of it is emitted.
    pub phase_clock: Option<u64>,
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
            phase_clock: None,
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
    /// Byte offset of the frame pool from the `GraphContext`.
    pub pool: u64,
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
/// `thread_pack_width` (what `LoweredNode::records_per_workgroup` will be).
pub fn records_per_workgroup(info: &NodeShaderInfo, thread_pack_width: u32) -> u32 {
    match info.launch {
        LaunchMode::Coalescing { max_payloads } => max_payloads,
        LaunchMode::Thread if packs_threads(info, thread_pack_width) => thread_pack_width,
        _ => 1,
    }
}

/// Whether `info`'s kernel counts its workgroups done before its code: a
/// compute node without outputs changes no counter. Only such kernels can
/// run in a level that counts nothing (`abi::LEVEL_UNCOUNTED`), so the
/// layer marks a level so by the same test.
pub fn counts_before_code(info: &NodeShaderInfo) -> bool {
    !info.mesh && info.outputs.is_empty()
}

/// Whether a thread node's invocations are packed `width` to a workgroup.
pub(crate) fn packs_threads(info: &NodeShaderInfo, width: u32) -> bool {
    info.thread_packable() && width > 1
}
