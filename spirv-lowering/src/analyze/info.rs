//! What the runtime needs to know about one node entry point
//! ([`NodeShaderInfo`]) and the parts it is made of: the launch mode, the
//! input payload and the outputs.

use spirv::Word;

/// How a node's workgroups map to its input records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchMode {
    /// Broadcast with `StaticNumWorkgroupsAMDX` (x, y, z).
    BroadcastStatic { grid: [u32; 3] },
    /// Broadcast whose grid comes from the payload: `max_grid` is
    /// `MaxNumWorkgroupsAMDX`, `None` when neither grid mode is declared.
    BroadcastDynamic { max_grid: Option<[u32; 3]> },
    /// `CoalescingAMDX` with up to `max_payloads` records per workgroup.
    Coalescing { max_payloads: u32 },
    /// Thread launch: coalescing, workgroup size 1, one payload.
    Thread,
}

/// Where the dispatch grid sits in the input payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchGrid {
    /// Byte offset of the `PayloadDispatchIndirectAMDX` member.
    pub offset: u32,
    /// 2 (u16) or 4 (u32).
    pub component_bytes: u32,
    /// 1 to 3; missing components are 1.
    pub components: u32,
    /// Struct member index (None for the implicit uvec3 payload).
    pub member: Option<u32>,
}

/// The input payload as the node reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputPayload {
    /// Bytes of one record as declared (0 for empty records).
    pub size: u32,
    /// Bytes between records as the producer allocates them (see `abi`).
    pub stride: u32,
    /// The dispatch grid member, for dynamic broadcast.
    pub dispatch_grid: Option<DispatchGrid>,
    /// Records per workgroup (NodeMaxPayloadsAMDX on the input; 1 if absent).
    pub max_payloads: u32,
    /// The payload struct is decorated TrackFinishWritingAMDX.
    pub track_finish_writing: bool,
    /// No payload variable is declared (the spec's implicit payload applies).
    pub implicit: bool,
}

/// Allocation visibility used by `OpAllocateNodePayloadsAMDX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Visibility {
    Invocation,
    Workgroup,
}

/// One output (an `OpTypeNodePayloadArrayAMDX` with `PayloadNodeNameAMDX`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputInfo {
    /// The payload array type's id in the input module.
    pub type_id: Word,
    /// Target node name (the default value for a spec string).
    pub name: String,
    /// SpecId when the name is an `OpSpecConstantStringAMDX` with one.
    pub name_spec_id: Option<u32>,
    /// `PayloadNodeBaseIndexAMDX` (0 if absent).
    pub base_index: u32,
    /// `PayloadNodeArraySizeAMDX`; `None` = unbounded.
    pub array_size: Option<u32>,
    /// `PayloadNodeSparseArrayAMDX`.
    pub sparse: bool,
    /// `NodeMaxPayloadsAMDX`.
    pub max_payloads: u32,
    /// Index (into `outputs`) named by `NodeSharesPayloadLimitsWithAMDX`.
    pub shares_limits_with: Option<usize>,
    /// Bytes of one payload as declared.
    pub payload_size: u32,
    /// Bytes one allocated record occupies (see `abi`).
    pub record_stride: u32,
    /// The payload struct is decorated TrackFinishWritingAMDX.
    pub track_finish_writing: bool,
    /// Visibilities used by the allocations of this output (sorted, unique).
    pub visibilities: Vec<Visibility>,
    /// The code asks `OpNodePayloadArrayLengthAMDX` of this output's records
    /// through a handle that is not an allocation's own result (a variable,
    /// a phi, a parameter), so the runtime keeps each allocation's count with
    /// its records.
    pub length_queried: bool,
}

/// What the runtime needs to know about one node entry point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeShaderInfo {
    /// Entry point name (the node name unless the app overrides it).
    pub name: String,
    /// `ShaderIndexAMDX` (0 if absent).
    pub shader_index: u32,
    pub launch: LaunchMode,
    /// After specialization.
    pub workgroup_size: [u32; 3],
    /// `None` for a node without any input payload (empty input).
    pub input: Option<InputPayload>,
    pub outputs: Vec<OutputInfo>,
    /// `MaxNodeRecursionAMDX`.
    pub max_recursion: Option<u32>,
    /// `SharesInputWithAMDX` (name, index).
    pub shares_input_with: Option<(String, u32)>,
    /// `IsApiEntryAMDX` (default true).
    pub is_api_entry: bool,
    /// The input payload is TrackFinishWritingAMDX (OpFinishWritingNodePayloadAMDX usable).
    pub track_finish_writing: bool,
    pub uses_workgroup_memory: bool,
    pub uses_control_barriers: bool,
    /// The code steps between input records with `OpPtrAccessChain` on a record
    /// pointer, so the records of one coalesced workgroup must lie contiguously
    /// at `input.stride` (the runtime compacts them for this node).
    pub input_needs_contiguous_records: bool,
    /// A `MeshEXT` entry point (a mesh node: drawn, never enqueues).
    pub mesh: bool,
}

impl NodeShaderInfo {
    /// Thread-style node whose records can be packed many to a workgroup.
    pub fn thread_packable(&self) -> bool {
        self.launch == LaunchMode::Thread && !self.uses_workgroup_memory && !self.uses_control_barriers && !self.mesh
    }
}
