//! The kernel <-> runtime ABI, version 1: the one definition the runtime (the
//! layer) and the meta shaders mirror. Everything is little-endian and reached
//! through 64-bit device addresses (`PhysicalStorageBuffer64`).
//!
//! # Push constants
//! A lowered kernel reads [`NodePush`] at byte offset `LowerOptions::push_offset`
//! of the push-constant range (the runtime uses the application's range end
//! rounded up to 8). Vulkan allows one push-constant block per entry point: when
//! the application's shader declares one, the lowering extends a copy of its
//! struct with two members at `push_offset` and `push_offset + 8`; otherwise it
//! declares a new `Block` struct whose members sit at those offsets. The lowering
//! fails cleanly when the application's block reaches past `push_offset`, when
//! `push_offset` is not a multiple of 8, or when `push_offset + 16` exceeds
//! `LowerOptions::max_push_constants_size`. Push constants (not an extra
//! descriptor set) because they need no descriptor pool, set layout or binding
//! slot (lavapipe has 8 sets, and apps may use them all), and two addresses are
//! all a kernel needs.
//!
//! # Scratch layout (all inside the application's scratch buffer)
//! * one [`GraphContext`] per graph dispatch;
//! * per node and level one [`NodeDispatch`] (the `vkCmdDispatchIndirect`
//!   arguments come first), with its [`RecordRef`] list;
//! * the link tables: [`NodeInfo`] per node slot, [`OutputLink`] per (node,
//!   output) and the `u32` slot tables they point to;
//! * the payload ring: two halves, inputs of level d and outputs of level d,
//!   flipped per level. Every allocation in the output half is one
//!   [`AllocHeader`] followed by `count` records of `record_stride` bytes; sizes
//!   are rounded up to [`ALLOC_ALIGN`], so headers and records are 16-aligned;
//! * the output entries ([`OutputEntry`], one per enqueued allocation) and one
//!   `u32` counter per node slot (`node_counts`);
//! * the sink: `max(16 + NodeMaxPayloadsAMDX * record_stride)` bytes over all
//!   outputs of the graph; failed allocations point into it (never read back).
//!
//! # Deviations from the proposal in `briefs/abi.md`
//! * `NodeDispatch._reserved` is now `node_slot`: the kernel needs its own slot
//!   to find its `NodeInfo` (first link) and to recognise self-recursion.
//! * New [`AllocHeader`] in front of every allocation: `OpEnqueueNodePayloadsAMDX`
//!   and `OpNodePayloadArrayLengthAMDX` receive only a pointer, which may have
//!   crossed function calls, so slot, count, remaining recursion and visibility
//!   travel with the allocation instead of in SSA side tables.
//! * `record_stride` = payload size rounded up to 4, plus 4 for the
//!   TrackFinishWritingAMDX counter, then rounded up to the payload's largest
//!   scalar (8 for 64-bit members); at least 4 (empty payloads).
//! * The input payload is reached through the record's [`RecordRef`], one per
//!   record, also for coalescing nodes: records of one workgroup need not be
//!   contiguous, so the runtime never copies payloads. Exception: a node whose
//!   code steps between input records with `OpPtrAccessChain`
//!   (`NodeShaderInfo::input_needs_contiguous_records`) reads record i of its
//!   workgroup at `records[first].payload + i * stride`; the runtime must lay
//!   those records out contiguously (compact them) for that node.
//! * `NodeInfo.self_slot` is not read by kernels (they use `NodeDispatch.node_slot`).
//! * Status bits 3 (recursion limit) and 4 (count above NodeMaxPayloadsAMDX) added.
//!
//! # Kernel side of the launch modes
//! Linear workgroup `L = wg.x + wg.y*nwg.x + wg.z*nwg.x*nwg.y` from the real
//! builtins; the kernel returns when `L >= workgroup_count` (uniform).
//! * broadcast, static grid G: record `L / |G|`, id `L % |G|` decomposed x-fastest;
//! * broadcast, dynamic grid: record = last r with `records[r].workgroup_start <= L`
//!   (binary search); id `L - start` decomposed with the grid read from the payload;
//! * coalescing with P payloads: records `[L*P, min(L*P+P, record_count))`;
//!   WorkgroupId reads 0;
//! * thread-packed (W lanes): lane i of workgroup L takes record `L*W + i`; all
//!   id builtins read 0 for the application's code.

use core::mem::{offset_of, size_of};

/// ABI version; bump on any layout change.
pub const ABI_VERSION: u32 = 2;
/// Output entries one workgroup of the meta pass between levels handles
/// (see [`GraphContext::advance_groups`]).
pub const ADVANCE_ENTRIES_PER_GROUP: u32 = 512;
/// The most workgroups the kernels ask for the meta pass after a level
/// (`maxComputeWorkGroupCount[0]`'s guaranteed minimum); the pass loops
/// over any entries beyond.
pub const ADVANCE_MAX_GROUPS: u32 = 65535;
/// Alignment of every allocation in the payload ring.
pub const ALLOC_ALIGN: u32 = 16;
/// `OutputLink.slots` entry for "no node at this index".
pub const NO_NODE: u32 = 0xFFFF_FFFF;
/// `GraphContext.status` bit: the payload ring overflowed.
pub const STATUS_PAYLOAD_OVERFLOW: u32 = 1 << 0;
/// `GraphContext.status` bit: the entry list overflowed.
pub const STATUS_ENTRY_OVERFLOW: u32 = 1 << 1;
/// `GraphContext.status` bit: an allocation named a missing node or index.
pub const STATUS_INVALID_NODE: u32 = 1 << 2;
/// `GraphContext.status` bit: a self-enqueue with no recursion levels left.
pub const STATUS_RECURSION_LIMIT: u32 = 1 << 3;
/// `GraphContext.status` bit: an allocation asked for more than NodeMaxPayloadsAMDX.
pub const STATUS_TOO_MANY_PAYLOADS: u32 = 1 << 4;
/// `AllocHeader.flags` bit: the allocation has Workgroup visibility.
pub const ALLOC_FLAG_WORKGROUP: u32 = 1;

/// The push-constant member block of every lowered kernel.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodePush {
    /// Device address of this node's [`NodeDispatch`] for the level.
    pub dispatch: u64,
    /// Device address of the [`GraphContext`].
    pub ctx: u64,
}

/// Per node and level, written by the meta shaders.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeDispatch {
    /// x, y, z for `vkCmdDispatchIndirect` (at most 65535 each; the rest goes to y/z).
    pub indirect: [u32; 3],
    /// Linear workgroups of this launch; kernels exit for ids at or above it.
    pub workgroup_count: u32,
    /// Input records of this node at this level.
    pub record_count: u32,
    /// This node's slot (index into `GraphContext.nodes` and `node_counts`).
    pub node_slot: u32,
    /// Device address of `[RecordRef; record_count]`.
    pub records: u64,
}

/// One input record of a node at a level.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordRef {
    /// Address of the payload bytes (API entry records: the app's memory or a copy).
    pub payload: u64,
    /// Dynamic-grid broadcast only: exclusive prefix sum of the grid sizes of
    /// this node's records, in list order.
    pub workgroup_start: u32,
    /// `RemainingRecursionLevelsAMDX` for this record.
    pub remaining_recursion: u32,
}

/// One per graph dispatch.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GraphContext {
    /// Base of the output half of the payload ring for the level being executed.
    pub out_payload_base: u64,
    /// Bytes in the output half.
    pub out_payload_capacity: u32,
    /// Atomic bump pointer (bytes) into the output half.
    pub out_payload_top: u32,
    /// Device address of `[OutputEntry; entry_capacity]`.
    pub entries: u64,
    /// Capacity of `entries`.
    pub entry_capacity: u32,
    /// Atomic count of written entries (may exceed the capacity: then status bit 1).
    pub entry_count: u32,
    /// Device address of one atomic `u32` per node slot: records enqueued for the next level.
    pub node_counts: u64,
    /// Device address of `[OutputLink]` for the whole graph.
    pub links: u64,
    /// Device address of `[NodeInfo; node_count]`.
    pub nodes: u64,
    /// Device address of the sink (see the module doc for its size).
    pub sink: u64,
    /// Atomic `STATUS_*` flags.
    pub status: u32,
    /// Number of node slots.
    pub node_count: u32,
    /// `vkCmdDispatchIndirect` arguments of the meta pass that follows the
    /// level (one workgroup per [`ADVANCE_ENTRIES_PER_GROUP`] entries). The
    /// runtime sets them to (1, 1, 1) before the level; the enqueue that takes
    /// entry `e < entry_capacity` with `e % ADVANCE_ENTRIES_PER_GROUP == 0`
    /// raises x to at least `min(e / ADVANCE_ENTRIES_PER_GROUP + 1,
    /// ADVANCE_MAX_GROUPS)` (`AtomicUMax`),
    /// so the pass is sized on the GPU without a pass of its own.
    pub advance_groups: [u32; 3],
    /// Zero.
    pub _reserved: u32,
}

/// One per (node, output declared in its SPIR-V), in `NodeShaderInfo::outputs` order.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputLink {
    /// Device address of one `u32` node slot per array index ([`NO_NODE`]: none).
    /// Must point at readable memory even when `slot_count` is 0.
    pub slots: u64,
    /// Valid indices are `[0, slot_count)` (after adding the base index);
    /// unbounded arrays get the highest linked index + 1.
    pub slot_count: u32,
    /// Bytes one allocated record occupies (`OutputInfo::record_stride`).
    pub record_stride: u32,
}

/// One per node slot.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeInfo {
    /// Index of this node's first [`OutputLink`].
    pub first_link: u32,
    /// The node's MaxNodeRecursionAMDX (0 if none): the remaining recursion
    /// given to records enqueued for it by other nodes.
    pub max_recursion: u32,
    /// Equal to the slot's own index (for the meta shaders).
    pub self_slot: u32,
    /// Zero.
    pub _reserved: u32,
}

/// Written by `OpEnqueueNodePayloadsAMDX`, one per enqueued allocation.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputEntry {
    /// Address of the first record.
    pub payload: u64,
    /// Target node slot.
    pub node_slot: u32,
    /// `atomicAdd(node_counts[node_slot], count)`: where these records start in
    /// the target's record list for the next level.
    pub rank: u32,
    /// Records in the allocation.
    pub count: u32,
    /// `RemainingRecursionLevelsAMDX` of the records: parent's - 1 for a
    /// self-enqueue, else the target's `NodeInfo.max_recursion`.
    pub remaining_recursion: u32,
}

/// In front of every allocation (16 bytes; records follow).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocHeader {
    /// Target slot, [`NO_NODE`] when the allocation failed (enqueue is then a no-op).
    pub node_slot: u32,
    /// Records allocated.
    pub count: u32,
    /// Remaining recursion for the records (copied into the [`OutputEntry`]).
    pub remaining_recursion: u32,
    /// `ALLOC_FLAG_*`.
    pub flags: u32,
}

const _: () = assert!(size_of::<NodePush>() == 16);
const _: () = assert!(offset_of!(NodePush, ctx) == 8);
const _: () = assert!(size_of::<NodeDispatch>() == 32);
const _: () = assert!(offset_of!(NodeDispatch, workgroup_count) == 12);
const _: () = assert!(offset_of!(NodeDispatch, record_count) == 16);
const _: () = assert!(offset_of!(NodeDispatch, node_slot) == 20);
const _: () = assert!(offset_of!(NodeDispatch, records) == 24);
const _: () = assert!(size_of::<RecordRef>() == 16);
const _: () = assert!(offset_of!(RecordRef, workgroup_start) == 8);
const _: () = assert!(offset_of!(RecordRef, remaining_recursion) == 12);
const _: () = assert!(size_of::<GraphContext>() == 88);
const _: () = assert!(offset_of!(GraphContext, advance_groups) == 72);
const _: () = assert!(offset_of!(GraphContext, out_payload_capacity) == 8);
const _: () = assert!(offset_of!(GraphContext, out_payload_top) == 12);
const _: () = assert!(offset_of!(GraphContext, entries) == 16);
const _: () = assert!(offset_of!(GraphContext, entry_capacity) == 24);
const _: () = assert!(offset_of!(GraphContext, entry_count) == 28);
const _: () = assert!(offset_of!(GraphContext, node_counts) == 32);
const _: () = assert!(offset_of!(GraphContext, links) == 40);
const _: () = assert!(offset_of!(GraphContext, nodes) == 48);
const _: () = assert!(offset_of!(GraphContext, sink) == 56);
const _: () = assert!(offset_of!(GraphContext, status) == 64);
const _: () = assert!(offset_of!(GraphContext, node_count) == 68);
const _: () = assert!(size_of::<OutputLink>() == 16);
const _: () = assert!(offset_of!(OutputLink, slot_count) == 8);
const _: () = assert!(offset_of!(OutputLink, record_stride) == 12);
const _: () = assert!(size_of::<NodeInfo>() == 16);
const _: () = assert!(offset_of!(NodeInfo, max_recursion) == 4);
const _: () = assert!(size_of::<OutputEntry>() == 24);
const _: () = assert!(offset_of!(OutputEntry, node_slot) == 8);
const _: () = assert!(offset_of!(OutputEntry, rank) == 12);
const _: () = assert!(offset_of!(OutputEntry, count) == 16);
const _: () = assert!(offset_of!(OutputEntry, remaining_recursion) == 20);
const _: () = assert!(size_of::<AllocHeader>() == 16);
const _: () = assert!(offset_of!(AllocHeader, flags) == 12);

/// A field of an ABI struct as the lowering declares it in SPIR-V.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    U32,
    U64,
    U32x3,
}

/// SPIR-V member lists (field kind, byte offset) mirroring the structs above;
/// the tests check them against `offset_of!`.
pub mod spirv_layout {
    use super::Field::{self, *};
    pub const NODE_PUSH: &[(Field, u32)] = &[(U64, 0), (U64, 8)];
    pub const NODE_DISPATCH: &[(Field, u32)] = &[(U32x3, 0), (U32, 12), (U32, 16), (U32, 20), (U64, 24)];
    pub const RECORD_REF: &[(Field, u32)] = &[(U64, 0), (U32, 8), (U32, 12)];
    pub const GRAPH_CONTEXT: &[(Field, u32)] = &[
        (U64, 0),
        (U32, 8),
        (U32, 12),
        (U64, 16),
        (U32, 24),
        (U32, 28),
        (U64, 32),
        (U64, 40),
        (U64, 48),
        (U64, 56),
        (U32, 64),
        (U32, 68),
        (U32, 72),
        (U32, 76),
        (U32, 80),
        (U32, 84),
    ];
    pub const OUTPUT_LINK: &[(Field, u32)] = &[(U64, 0), (U32, 8), (U32, 12)];
    pub const NODE_INFO: &[(Field, u32)] = &[(U32, 0), (U32, 4), (U32, 8), (U32, 12)];
    pub const OUTPUT_ENTRY: &[(Field, u32)] = &[(U64, 0), (U32, 8), (U32, 12), (U32, 16), (U32, 20)];
    pub const ALLOC_HEADER: &[(Field, u32)] = &[(U32, 0), (U32, 4), (U32, 8), (U32, 12)];
}
