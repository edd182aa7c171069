//! The kernel <-> runtime ABI, version 3: the one definition the runtime (the
//! layer) and the meta shaders mirror. Everything is little-endian and reached
//! through 64-bit device addresses (`PhysicalStorageBuffer64`).
//!
//! # Push constants
//! A lowered kernel reads [`NodePush`] at byte offset `LowerOptions::push_offset`
//! of the push-constant range (the runtime uses the application's range end
//! rounded up to 8). Vulkan allows one push-constant block per entry point: when
//! the application's shader declares one, the lowering extends a copy of its
//! struct with the four members of [`NodePush`] from `push_offset` on;
//! otherwise it declares a new `Block` struct whose members sit at those
//! offsets. The lowering fails cleanly when the application's block reaches
//! past `push_offset`, when `push_offset` is not a multiple of 8, or when
//! `push_offset + 24` exceeds `LowerOptions::max_push_constants_size`. Push
//! constants (not an extra descriptor set) because they need no descriptor
//! pool, set layout or binding slot (lavapipe has 8 sets, and apps may use
//! them all), and two addresses and two words are all a kernel needs.
//!
//! # Scratch layout (all inside the application's scratch buffer)
//! * one [`GraphContext`] per graph dispatch;
//! * per node two [`NodeDispatch`]es (level parity 0 and 1; the
//!   `vkCmdDispatchIndirect` arguments come first) and two `u64` counters
//!   (records in the low word, dynamic-grid workgroups in the high word) of
//!   the records enqueued for it at a level of that parity;
//! * per node a [`NodeSchedule`] (how its launches are sized), a
//!   [`NodeInfo`], its [`OutputLink`]s and the `u32` slot tables they point to;
//! * the payload ring: two halves; a level of parity p allocates its outputs
//!   in half p (the next level reads them there). Every allocation is one
//!   [`AllocHeader`] followed by `count` records of `record_stride` bytes;
//!   sizes are rounded up to [`ALLOC_ALIGN`];
//! * the record index: a hash table of [`IndexSlot`]s mapping (level tag,
//!   node, rank) to a record's payload (see below);
//! * the sink: `max(16 + NodeMaxPayloadsAMDX * record_stride)` bytes over all
//!   outputs of the graph; failed and empty allocations point into it. Its
//!   header, written at scratch initialisation, reads "no node, no records";
//!   kernels never write it (their records after it are never read back).
//!
//! # Execution model: one dispatch per node and one barrier per level
//! No pass runs between two levels. `OpEnqueueNodePayloadsAMDX` numbers the
//! records it enqueues for their target node (one 64-bit atomic on the
//! target's counter, so dynamic-grid workgroup offsets come in the same
//! order) and publishes each in the record index under the key
//! (`GraphContext::tag` + 1, node, rank). The node kernels of the next level
//! find record `i` of their node by looking up (tag, node, i). Every
//! workgroup, when done, counts itself in its done group (linear workgroup id
//! plus `NodeDispatch::workgroup_base`, modulo [`DONE_GROUPS`]); the workgroup that completes a group resets the
//! group's counter (scratch initialisation zeroes them, and every level
//! leaves them at zero) and counts the group in `GraphContext::done`; the last
//! workgroup of a level (`done` reaching the number of groups that had
//! workgroups, `min(launched, DONE_GROUPS)`) is the *finisher*: it
//! turns the counters into the next level's [`NodeDispatch`]es, resets what
//! the next level counts with, and advances the tag. (One counter for every
//! workgroup would serialize a level of two million small workgroups on one
//! address: about a millisecond on an H100.) A group with a single
//! workgroup (every group of a level of at most [`DONE_GROUPS`]) is
//! complete without its counter. Level 0 of a dispatch is
//! written by the host or the entry meta passes, in list mode (a
//! [`RecordRef`] per record).
//!
//! # Record index
//! Linear probing from `hash(node, rank) & index_mask`, at most
//! [`INDEX_MAX_PROBES`] slots. A slot is claimed by a compare-and-swap of its
//! `tag` word from any value other than the tags live at that moment (the
//! records being read, tag `t`, and those being published, `t + 1`); stale
//! slots of earlier levels and dispatches need no clearing. Tags are 32 bits
//! and grow by one a level, so a stale slot can only be mistaken for a live
//! one after 2^32 levels.

use core::mem::{offset_of, size_of};

/// ABI version; bump on any layout change.
pub const ABI_VERSION: u32 = 3;
/// Alignment of every allocation in the payload ring.
pub const ALLOC_ALIGN: u32 = 16;
/// `OutputLink.slots` entry for "no node at this index".
pub const NO_NODE: u32 = 0xFFFF_FFFF;
/// `GraphContext.status` bit: the payload ring overflowed.
pub const STATUS_PAYLOAD_OVERFLOW: u32 = 1 << 0;
/// `GraphContext.status` bit: the record index had no free slot within
/// [`INDEX_MAX_PROBES`] (the record was dropped; later levels stop).
pub const STATUS_INDEX_OVERFLOW: u32 = 1 << 1;
/// `GraphContext.status` bit: an allocation named a missing node or index.
pub const STATUS_INVALID_NODE: u32 = 1 << 2;
/// `GraphContext.status` bit: a self-enqueue with no recursion levels left.
pub const STATUS_RECURSION_LIMIT: u32 = 1 << 3;
/// `GraphContext.status` bit: an allocation asked for more than NodeMaxPayloadsAMDX.
pub const STATUS_TOO_MANY_PAYLOADS: u32 = 1 << 4;
/// `GraphContext.status` bit (meta passes): more level-0 records than the record list holds.
pub const STATUS_RECORD_OVERFLOW: u32 = 1 << 5;
/// `GraphContext.status` bit (meta passes): an entry info named a node out
/// of range or one that is not an API entry (the info is dropped).
pub const STATUS_INVALID_ENTRY: u32 = 1 << 6;
/// Status bits after which later levels do not run (records went missing).
pub const STATUS_FATAL: u32 = STATUS_INDEX_OVERFLOW | STATUS_RECORD_OVERFLOW;
/// `AllocHeader.flags` bit: the allocation has Workgroup visibility.
pub const ALLOC_FLAG_WORKGROUP: u32 = 1;
/// [`NodeDispatch::mode`]: records are listed as [`RecordRef`]s at `records`.
pub const RECORDS_LISTED: u32 = 0;
/// [`NodeDispatch::mode`]: records are found in the record index.
pub const RECORDS_INDEXED: u32 = 1;
/// Groups the workgroups of a level are counted done in (see the module doc).
pub const DONE_GROUPS: u32 = 64;
/// Words between two done-group counters: 256 bytes, so that they fall in
/// different cache lines (and memory partitions) instead of queueing on one.
pub const DONE_GROUP_STRIDE_WORDS: u32 = 64;
/// Bytes of the done-group counters of both parities.
pub const DONE_GROUPS_BYTES: u64 = 2 * DONE_GROUPS as u64 * DONE_GROUP_STRIDE_WORDS as u64 * 4;

/// Slots a lookup or an insertion into the record index probes at most.
pub const INDEX_MAX_PROBES: u32 = 256;
/// [`NodeSchedule::mode`]: broadcast with a static grid.
pub const SCHEDULE_STATIC: u32 = 0;
/// [`NodeSchedule::mode`]: broadcast with the grid in the payload.
pub const SCHEDULE_DYNAMIC: u32 = 1;
/// [`NodeSchedule::mode`]: coalescing or thread nodes, `records_per_workgroup` a workgroup.
pub const SCHEDULE_BATCHED: u32 = 2;
/// [`NodeSchedule::flags`]: the node may be dispatched by the API (`IsApiEntryAMDX`).
pub const SCHEDULE_FLAG_API_ENTRY: u32 = 1;
/// [`NodeSchedule::flags`]: a mesh node. Its [`NodeDispatch`] is written like
/// any other (the `indirect` words are `VkDrawMeshTasksIndirectCommandEXT`'s
/// layout too), but its workgroups are not among a level's launched ones:
/// the runtime draws them before the level's compute dispatches, and they
/// never count a level done.
pub const SCHEDULE_FLAG_MESH: u32 = 2;

/// The record index's hash of (node, rank): a 32-bit finaliser (MurmurHash3's
/// `fmix32`) of `rank ^ node * 0x9E3779B9`, so the ranks of one node spread
/// over the table. The kernels compute the same.
pub fn index_hash(node: u32, rank: u32) -> u32 {
    let mut h = rank ^ node.wrapping_mul(0x9E37_79B9);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h = h.wrapping_mul(0xC2B2_AE35);
    h ^ (h >> 16)
}

/// The push-constant member block of every lowered kernel.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodePush {
    /// Device address of this node's [`NodeDispatch`] for the level.
    pub dispatch: u64,
    /// Device address of the [`GraphContext`].
    pub ctx: u64,
    /// The level being run (its parity picks the per-parity tables).
    pub level: u32,
    /// This node's slot.
    pub slot: u32,
}

/// Per node and level parity: how the node runs at a level. Written by the
/// host or the entry passes (level 0, listed records) and by the finisher of
/// the level before (indexed records).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeDispatch {
    /// x, y, z for `vkCmdDispatchIndirect` (at most 65535 each; the rest goes to y/z).
    pub indirect: [u32; 3],
    /// Linear workgroups of this launch; kernels exit for ids at or above it.
    pub workgroup_count: u32,
    /// Input records of this node at this level.
    pub record_count: u32,
    /// Number of this launch's first workgroup among all the workgroups
    /// launched at the level (every launch of a level gets a disjoint range
    /// in `[0, GraphContext::launched)`): the workgroups' done groups.
    pub workgroup_base: u32,
    /// [`RECORDS_LISTED`] or [`RECORDS_INDEXED`].
    pub mode: u32,
    /// Whose records the node reads: its own slot, or for a
    /// `SharesInputWithAMDX` node its base node's.
    pub key_node: u32,
    /// Listed: device address of `[RecordRef; record_count]`.
    pub records: u64,
    /// Indexed: the ring half the records' payload offsets count from.
    pub input_base: u64,
}

/// One input record of a node at level 0 (listed records).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordRef {
    /// Address of the payload bytes (the app's memory or a copy).
    pub payload: u64,
    /// Dynamic-grid broadcast only: exclusive prefix sum of the grid sizes of
    /// this node's records, in list order.
    pub workgroup_start: u32,
    /// `RemainingRecursionLevelsAMDX` for this record.
    pub remaining_recursion: u32,
}

/// One slot of the record index (see the module doc).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexSlot {
    /// Level tag of the record (claimed by compare-and-swap).
    pub tag: u32,
    /// Target node slot.
    pub node: u32,
    /// The record's number among its node's records at that level.
    pub rank: u32,
    /// Byte offset of the payload from the producing level's ring half.
    pub offset: u32,
    /// Dynamic-grid targets: exclusive prefix sum of the grid sizes in rank order.
    pub workgroup_start: u32,
    /// `RemainingRecursionLevelsAMDX` for this record.
    pub remaining_recursion: u32,
}

/// One per graph dispatch.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GraphContext {
    /// Base of each payload ring half (a level of parity p allocates in half p).
    pub ring: [u64; 2],
    /// Atomic bump pointers (bytes) into each half.
    pub ring_top: [u32; 2],
    /// Bytes in each half.
    pub ring_capacity: u32,
    /// Number of node slots.
    pub node_count: u32,
    /// Device address of `[u64; node_count]` per parity: records enqueued for
    /// each node at a level of that parity (low word), and the workgroups of
    /// their dynamic grids (high word).
    pub counts: [u64; 2],
    /// Device address of `[NodeDispatch; node_count]` per parity.
    pub dispatches: [u64; 2],
    /// Device address of `[NodeSchedule; node_count]`.
    pub schedules: u64,
    /// Device address of `[OutputLink]` for the whole graph.
    pub links: u64,
    /// Device address of `[NodeInfo; node_count]`.
    pub nodes: u64,
    /// Device address of the sink (see the module doc).
    pub sink: u64,
    /// Device address of `[IndexSlot; index_mask + 1]`.
    pub index: u64,
    /// Index capacity - 1 (a power of two minus one).
    pub index_mask: u32,
    /// Atomic `STATUS_*` flags.
    pub status: u32,
    /// Workgroups of a level of parity p that have finished (atomic).
    pub done: [u32; 2],
    /// Workgroups launched at the current level of parity p.
    pub launched: [u32; 2],
    /// Device address of the status words: word d + 1 is the status after level d.
    pub level_status: u64,
    /// Tag of the records the current level reads (see the module doc). Kept
    /// across dispatches: the host never writes it after scratch initialisation.
    pub tag: u32,
    /// Zero.
    pub _reserved: u32,
    /// Device address of the done-group counters: per parity p,
    /// [`DONE_GROUPS`] `u32` counters, counter g at word
    /// `(p * DONE_GROUPS + g) * DONE_GROUP_STRIDE_WORDS` (see the module doc).
    pub done_groups: u64,
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
    /// Equal to the slot's own index.
    pub self_slot: u32,
    /// Zero.
    pub _reserved: u32,
}

/// How one node's launches are sized (one per node slot, static).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeSchedule {
    /// `SCHEDULE_*`.
    pub mode: u32,
    /// Coalescing P, or W for packed thread nodes (1 otherwise).
    pub records_per_workgroup: u32,
    /// Static broadcast: workgroups per record.
    pub static_groups: u32,
    /// Dynamic broadcast: byte offset of the grid member in the payload.
    pub grid_offset: u32,
    /// Dynamic broadcast: 2 (u16) or 4 (u32) bytes per component.
    pub grid_bytes: u32,
    /// Dynamic broadcast: 1 to 3 components.
    pub grid_components: u32,
    /// Bytes between consecutive records of one allocation.
    pub input_stride: u32,
    /// `SharesInputWithAMDX`: the base node's slot + 1 (0: shares nothing).
    /// Such a node reads its base's records.
    pub share_base: u32,
    /// `SCHEDULE_FLAG_*`.
    pub flags: u32,
    /// Zero.
    pub reserved: u32,
}

/// In front of every allocation (16 bytes; records follow).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocHeader {
    /// Target slot, [`NO_NODE`] when the allocation failed (enqueue is then a no-op).
    pub node_slot: u32,
    /// Records allocated.
    pub count: u32,
    /// Remaining recursion for the records.
    pub remaining_recursion: u32,
    /// `ALLOC_FLAG_*`.
    pub flags: u32,
}

const _: () = assert!(size_of::<NodePush>() == 24);
const _: () = assert!(offset_of!(NodePush, ctx) == 8);
const _: () = assert!(offset_of!(NodePush, level) == 16);
const _: () = assert!(offset_of!(NodePush, slot) == 20);
const _: () = assert!(size_of::<NodeDispatch>() == 48);
const _: () = assert!(offset_of!(NodeDispatch, workgroup_count) == 12);
const _: () = assert!(offset_of!(NodeDispatch, record_count) == 16);
const _: () = assert!(offset_of!(NodeDispatch, workgroup_base) == 20);
const _: () = assert!(offset_of!(NodeDispatch, mode) == 24);
const _: () = assert!(offset_of!(NodeDispatch, key_node) == 28);
const _: () = assert!(offset_of!(NodeDispatch, records) == 32);
const _: () = assert!(offset_of!(NodeDispatch, input_base) == 40);
const _: () = assert!(size_of::<RecordRef>() == 16);
const _: () = assert!(offset_of!(RecordRef, workgroup_start) == 8);
const _: () = assert!(offset_of!(RecordRef, remaining_recursion) == 12);
const _: () = assert!(size_of::<IndexSlot>() == 24);
const _: () = assert!(offset_of!(IndexSlot, offset) == 12);
const _: () = assert!(offset_of!(IndexSlot, remaining_recursion) == 20);
const _: () = assert!(size_of::<GraphContext>() == 152);
const _: () = assert!(offset_of!(GraphContext, done_groups) == 144);
const _: () = assert!(offset_of!(GraphContext, ring_top) == 16);
const _: () = assert!(offset_of!(GraphContext, ring_capacity) == 24);
const _: () = assert!(offset_of!(GraphContext, node_count) == 28);
const _: () = assert!(offset_of!(GraphContext, counts) == 32);
const _: () = assert!(offset_of!(GraphContext, dispatches) == 48);
const _: () = assert!(offset_of!(GraphContext, schedules) == 64);
const _: () = assert!(offset_of!(GraphContext, links) == 72);
const _: () = assert!(offset_of!(GraphContext, nodes) == 80);
const _: () = assert!(offset_of!(GraphContext, sink) == 88);
const _: () = assert!(offset_of!(GraphContext, index) == 96);
const _: () = assert!(offset_of!(GraphContext, index_mask) == 104);
const _: () = assert!(offset_of!(GraphContext, status) == 108);
const _: () = assert!(offset_of!(GraphContext, done) == 112);
const _: () = assert!(offset_of!(GraphContext, launched) == 120);
const _: () = assert!(offset_of!(GraphContext, level_status) == 128);
const _: () = assert!(offset_of!(GraphContext, tag) == 136);
const _: () = assert!(size_of::<OutputLink>() == 16);
const _: () = assert!(offset_of!(OutputLink, slot_count) == 8);
const _: () = assert!(offset_of!(OutputLink, record_stride) == 12);
const _: () = assert!(size_of::<NodeInfo>() == 16);
const _: () = assert!(offset_of!(NodeInfo, max_recursion) == 4);
const _: () = assert!(size_of::<NodeSchedule>() == 40);
const _: () = assert!(offset_of!(NodeSchedule, input_stride) == 24);
const _: () = assert!(offset_of!(NodeSchedule, share_base) == 28);
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
    pub const NODE_PUSH: &[(Field, u32)] = &[(U64, 0), (U64, 8), (U32, 16), (U32, 20)];
    pub const NODE_DISPATCH: &[(Field, u32)] =
        &[(U32x3, 0), (U32, 12), (U32, 16), (U32, 20), (U32, 24), (U32, 28), (U64, 32), (U64, 40)];
    pub const RECORD_REF: &[(Field, u32)] = &[(U64, 0), (U32, 8), (U32, 12)];
    pub const INDEX_SLOT: &[(Field, u32)] = &[(U32, 0), (U32, 4), (U32, 8), (U32, 12), (U32, 16), (U32, 20)];
    pub const GRAPH_CONTEXT: &[(Field, u32)] = &[
        (U64, 0),
        (U64, 8),
        (U32, 16),
        (U32, 20),
        (U32, 24),
        (U32, 28),
        (U64, 32),
        (U64, 40),
        (U64, 48),
        (U64, 56),
        (U64, 64),
        (U64, 72),
        (U64, 80),
        (U64, 88),
        (U64, 96),
        (U32, 104),
        (U32, 108),
        (U32, 112),
        (U32, 116),
        (U32, 120),
        (U32, 124),
        (U64, 128),
        (U32, 136),
        (U32, 140),
        (U64, 144),
    ];
    pub const OUTPUT_LINK: &[(Field, u32)] = &[(U64, 0), (U32, 8), (U32, 12)];
    pub const NODE_INFO: &[(Field, u32)] = &[(U32, 0), (U32, 4), (U32, 8), (U32, 12)];
    pub const NODE_SCHEDULE: &[(Field, u32)] =
        &[(U32, 0), (U32, 4), (U32, 8), (U32, 12), (U32, 16), (U32, 20), (U32, 24), (U32, 28), (U32, 32), (U32, 36)];
    pub const ALLOC_HEADER: &[(Field, u32)] = &[(U32, 0), (U32, 4), (U32, 8), (U32, 12)];
}
