//! The kernel <-> runtime ABI, version 5: the one definition the runtime (the
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
//! `push_offset + 24` exceeds `LowerOptions::max_push_constants_size`.
//!
//! # Records stored per node, in frames
//! A record enqueued for node `n` at a level gets a *rank*: its number among
//! the records of `n` at that level, from one atomic on `n`'s rank counter
//! when it is allocated (one per subgroup and target where the device has
//! subgroup operations). The payload is written where its consumer reads
//! it, found from (node, rank) alone: rank `r` lives in *frame* `r / P` of
//! `n`, at record `r % P`, where `P` is the records a frame of `n` holds
//! ([`FrameGeometry`]). Frames are `1 << frame_shift` bytes of one pool in
//! scratch, found through a hash table of [`frame keys`](frame_key): the key
//! of (level tag, namespace, frame number) sits in the table slot whose
//! index is also the frame's index in the pool, so claiming a frame is one
//! compare-and-swap of its key and everyone who asks for the same frame gets
//! the same one without waiting for anybody. In a small graph
//! ([`homes_for`]) frame 0 of every namespace has a *home* instead: a pool
//! slot of its own per tag parity ([`home_slot`]), reached without a key or
//! a claim (a level of few records, the common small level, then touches no
//! key at all); the hashed frames take the slots after the homes
//! ([`probe_start`]). A hashed slot is free when its tag is
//! neither the tag the level reads (`GraphContext::tag`) nor the one it
//! writes (`tag + 1`) nor the running dispatch's pin (see "Mesh nodes drawn
//! once"): the frames of earlier levels and dispatches need no
//! clearing. A consumer finds its record with the same hash and (almost
//! always) one probe.
//!
//! An allocation of `c` records must be contiguous; when its ranks run past
//! the frame's `P` records they go on into the frame's *tail* (`tail` more
//! records after the `P`), and the allocation that holds a frame's last rank
//! writes how far it ran into the tail in the frame's last word. A consumer
//! of one of the first `tail` ranks of frame `k` looks there first.
//!
//! Targets whose records carry more than their payload (recursion levels, or
//! the count of an allocation its producer may ask for later: see
//! [`FrameGeometry::meta`]) keep one `u32` per record after the records.
//! Broadcast targets whose grid comes from the payload also get, when a
//! record is enqueued, a [`GridEntry`] (the first workgroup of its grid and
//! its rank) in enqueue order, in frames of namespace `node_count + n`: the
//! entries' workgroup starts grow with their number, so a workgroup finds its
//! record by binary search. The grid counter's line also keeps the largest
//! grid enqueued ([`GRID_MAX_OFFSET_BYTES`]): when every grid of a level is
//! that large (largest times entries is the workgroups) the finisher says so
//! in `NodeDispatch::starts`, and a workgroup finds its entry by division.
//!
//! # Execution model: one dispatch per node and one barrier per level
//! No pass runs between two levels. Every workgroup, when done, counts itself
//! in its done group (linear workgroup id plus `NodeDispatch::workgroup_base`,
//! modulo [`DONE_GROUPS`]); the workgroup that completes a group resets the
//! group's counter and counts the group in `GraphContext::done`; the last
//! workgroup of a level (`done` reaching the number of groups that had
//! workgroups, `min(level_workgroups, DONE_GROUPS)`) is the *finisher*: it
//! turns the rank counters into the next level's [`NodeDispatch`]es, clears
//! what this level counted with (so that every counter, done counter and
//! status word is zero again when a dispatch ends: the next dispatch starts
//! without any transfer), advances the tag, and writes the status after this
//! level straight into the host-visible words `NodeDispatch::status` names.
//! (One counter for every workgroup would serialize a level of two million
//! small workgroups on one address: about a millisecond on an H100.) A group
//! with a single workgroup is complete without its counter, and a level of
//! one workgroup needs no `done` count at all. The finisher reads only
//! counters, so a workgroup counts itself done once it has changed its last
//! counter (and the prologue has read what the finisher changes): a node
//! without outputs before its code runs, a node whose last allocation or
//! grid enqueue every invocation passes once right after it, others at
//! their end. Payload index faults, which may come later, go straight into
//! the final host status word, which finishers OR their status into. A
//! dispatch's last level of nodes without outputs counts nothing and has no
//! finisher ([`LEVEL_UNCOUNTED`]): the finisher before it ends the dispatch.
//!
//! # Mesh nodes drawn once
//! Where no mesh node shares input and no output mixes mesh and compute
//! targets, the runtime draws each mesh node's records from levels after 0
//! once, after the last level, in the application's render pass instance
//! ([`SCHEDULE_FLAG_PINNED`]). Records for such a node are *pinned*: their
//! ranks and grid entries come from its parity-0 rank and grid counters at
//! every level (they count on from level to level), their frames and the
//! entries' are keyed with tag `PIN_TAG | GraphContext::pinned`, which
//! claims leave alone for the whole dispatch (and a claim of a pinned frame
//! leaves the level's own two live tags alone, as every claim does: the
//! live tags are the level's, not the claimed key's), and every finisher
//! writes the
//! node's parity-1 `NodeDispatch` from the running counts
//! ([`RECORDS_PINNED`]; parity 0's is level 0's, for a mesh node that is an
//! API entry). The last finisher (nothing launched next) clears the
//! counters and advances `pinned`: the next dispatch's claims may take the
//! frames once the draw has read them.
//!
//! Level 0 of a host dispatch reads its records where the host put them
//! ([`RECORDS_CONTIGUOUS`]: the payloads side by side at the node's input
//! stride, in the layer's staging memory); level 0 of an indirect dispatch
//! and every later level read frames ([`RECORDS_FRAMED`]).
//!
//! # Scratch layout (all inside the application's scratch buffer)
//! * one [`GraphContext`];
//! * per node two [`NodeDispatch`]es (level parity 0 and 1; the
//!   `vkCmdDispatchIndirect` arguments come first), per parity a `u32` rank
//!   counter and a `u64` grid counter (entries in the low word, dynamic-grid
//!   workgroups in the high word) per node, [`COUNTER_STRIDE_BYTES`] apart;
//! * per node a [`NodeSchedule`], a [`NodeInfo`], its [`OutputLink`]s and the
//!   `u32` slot tables they point to;
//! * the frame pool and its keys (`u64` each);
//! * the sink: where failed allocations point (sized for the largest
//!   allocation of the graph, and the largest input record); never read
//!   back. A kernel clamps every record index of an allocation to its
//!   output's `NodeMaxPayloadsAMDX` less one, so no write passes the sink
//!   (nor the frame, for an allocation that was placed).
//!
//! # Bad values from node shaders
//! Nothing a node shader enqueues can wrap a count or hang the GPU: a
//! record's grid is checked, in 64-bit arithmetic, against its target's
//! `NodeSchedule::max_grid` and [`MAX_RECORD_WORKGROUPS`] when it is
//! enqueued (past them it is dropped: it gets no workgroups,
//! [`STATUS_GRID_LIMIT`]); a node's workgroups at a level are held to
//! [`MAX_LEVEL_WORKGROUPS`] by the finisher (past it the node's records of
//! the level are dropped, [`STATUS_LEVEL_WORKGROUPS`]), and launches that
//! pass it only together are all dropped;
//! node-array indexes are checked after the base index is added, without
//! wrapping; a rank range that would wrap is lost like a record with no
//! frame ([`STATUS_FRAME_RANGE`]).

use core::mem::{offset_of, size_of};

/// ABI version; bump on any layout change.
pub const ABI_VERSION: u32 = 5;
/// `OutputLink.slots` entry for "no node at this index".
pub const NO_NODE: u32 = 0xFFFF_FFFF;
/// Status bit: no frame was free for records within [`FRAME_MAX_PROBES`]
/// (their ranks were taken, so later levels stop: the records are lost).
pub const STATUS_PAYLOAD_OVERFLOW: u32 = 1 << 0;
/// Status bit: a frame number or key did not fit its 32 bits (records lost).
pub const STATUS_FRAME_RANGE: u32 = 1 << 1;
/// Status bit: an allocation named a missing node or index.
pub const STATUS_INVALID_NODE: u32 = 1 << 2;
/// Status bit: a self-enqueue with no recursion levels left.
pub const STATUS_RECURSION_LIMIT: u32 = 1 << 3;
/// Status bit: an allocation asked for more than NodeMaxPayloadsAMDX.
pub const STATUS_TOO_MANY_PAYLOADS: u32 = 1 << 4;
/// Status bit (meta passes): more level-0 records than frames hold.
pub const STATUS_RECORD_OVERFLOW: u32 = 1 << 5;
/// Status bit (meta passes): an entry info named a node out of range or one
/// that is not an API entry (the info is dropped).
pub const STATUS_INVALID_ENTRY: u32 = 1 << 6;
/// Status bit: a record's dynamic grid was past its target's
/// `NodeSchedule::max_grid` or [`MAX_RECORD_WORKGROUPS`] (the record is
/// dropped: it gets no workgroups).
pub const STATUS_GRID_LIMIT: u32 = 1 << 7;
/// Status bit: the records enqueued at a level for a node asked for more
/// workgroups than [`MAX_LEVEL_WORKGROUPS`] (that node's records of the
/// level are dropped), or the level's launches did together (all of them
/// are dropped).
pub const STATUS_LEVEL_WORKGROUPS: u32 = 1 << 8;
/// Status bit (`checked_payloads`): a payload or input record index was past
/// its allocation or the records the node received (the access was
/// clamped to the last one).
pub const STATUS_PAYLOAD_BOUNDS: u32 = 1 << 9;
/// Status bits after which later levels do not run (records went missing).
pub const STATUS_FATAL: u32 = STATUS_PAYLOAD_OVERFLOW | STATUS_FRAME_RANGE | STATUS_RECORD_OVERFLOW;
/// Status words a dispatch leaves for the host at `NodeDispatch::status`:
/// word 0 after its inputs, word `d + 1` after level `d` (up to the 32
/// levels a graph may have), the last one the final status. The host zeroes
/// them; only a nonzero status is written (a clean level writes nothing
/// across the bus).
pub const STATUS_WORDS: u32 = 34;
/// Words after a dispatch's [`STATUS_WORDS`]: the first fault a kernel met,
/// for the host's message (which node, at which level, with which value).
/// A kernel claims word [`FAULT_KIND`] with a compare-exchange from 0 and,
/// when it won, writes the others; later faults leave the record alone. The
/// host zeroes the words when it reads them.
pub const FAULT_WORDS: u32 = 8;
/// Fault word: what went wrong (`FAULT_*` kinds below; 0: none).
pub const FAULT_KIND: u32 = 0;
/// Fault word: the node slot that met it (for [`FAULT_LEVEL_WORKGROUPS`],
/// the node whose launch was dropped).
pub const FAULT_NODE: u32 = 1;
/// Fault word: the level the node ran at (the level it was to run at for
/// [`FAULT_LEVEL_WORKGROUPS`]).
pub const FAULT_LEVEL: u32 = 2;
/// Fault word: the node's output (its index among the node's outputs), or
/// [`NO_NODE`] for a fault about no output.
pub const FAULT_OUTPUT: u32 = 3;
/// Fault words `FAULT_VALUES..FAULT_VALUES + 4`: the values, by kind.
pub const FAULT_VALUES: u32 = 4;
/// Fault kind: a record's grid past its target's limits; values: the grid.
pub const FAULT_GRID: u32 = 1;
/// Fault kind: an allocation past NodeMaxPayloadsAMDX; values: the count
/// (and the node-array index).
pub const FAULT_TOO_MANY_PAYLOADS: u32 = 2;
/// Fault kind: an allocation for a node-array index with no node (after
/// the output's base index); values: the count, the index the shader gave.
pub const FAULT_NODE_INDEX: u32 = 3;
/// Fault kind: a self-enqueue with no recursion levels left.
pub const FAULT_RECURSION: u32 = 4;
/// Fault kind: a launch past [`MAX_LEVEL_WORKGROUPS`]; values: its
/// workgroups (low and high word), and 1 when the enqueues saw the count
/// pass the limit (it may then have wrapped), 2 when it passes the limit
/// only with the level's other launches.
pub const FAULT_LEVEL_WORKGROUPS: u32 = 5;
/// Fault kind (`checked_payloads`): an output record index past its
/// allocation; values: the index, the allocation's records.
pub const FAULT_PAYLOAD_INDEX: u32 = 6;
/// Fault kind (`checked_payloads`): an input record index past the records
/// the workgroup received; values: the index, the records.
pub const FAULT_INPUT_INDEX: u32 = 7;
/// The most workgroups one record's grid may ask for:
/// `maxExecutionGraphWorkgroups` as the layer advertises it (2^24 - 1, which
/// DXC also holds `NodeMaxDispatchGrid` to).
pub const MAX_RECORD_WORKGROUPS: u32 = (1 << 24) - 1;
/// The most workgroups a level launches, all its nodes together: level
/// numbers, done groups and the grid counter's workgroup word stay far from
/// wrapping (an allocation adds at most 256 grids of
/// [`MAX_RECORD_WORKGROUPS`], under 2^32, to a word at most this large),
/// and `vkCmdDispatchIndirect` arguments split over x and y (65535 each)
/// hold it.
pub const MAX_LEVEL_WORKGROUPS: u32 = 1 << 31;
/// The largest-grid word of a grid counter ([`GRID_MAX_OFFSET_BYTES`]) once
/// the node's workgroups at the level passed [`MAX_LEVEL_WORKGROUPS`]: the
/// finisher then drops the node's records of the level.
pub const GRID_PAST_LEVEL: u32 = u32::MAX;
/// [`NodeDispatch::mode`]: the records lie side by side at `records`.
pub const RECORDS_CONTIGUOUS: u32 = 0;
/// [`NodeDispatch::mode`]: the records are in frames (see the module doc).
pub const RECORDS_FRAMED: u32 = 1;
/// [`NodeDispatch::mode`]: the records are in pinned frames, drawn after the
/// last level (see the module doc): keyed with tag `PIN_TAG | (pinned - 1)`.
pub const RECORDS_PINNED: u32 = 2;
/// The tag bit of pinned frames' keys (level tags stay below it).
pub const PIN_TAG: u32 = 1 << 31;
/// The `phase_clock` diagnostic's table (`LowerOptions::phase_clock`):
/// for each level (the last slot takes every level from it on) and phase,
/// a `u64` sum of SM clock cycles since a workgroup's start and a `u64`
/// count of the workgroups that added to it (their invocation 0).
pub const PHASE_LEVELS: u32 = 64;
/// Slots per level: one per [`Phase`], the rest unused (a power of two).
pub const PHASE_SLOTS: u32 = 8;
/// Bytes of the table.
pub const PHASE_TABLE_BYTES: u64 = (PHASE_LEVELS * PHASE_SLOTS * 16) as u64;

/// The moments of a workgroup's life the `phase_clock` diagnostic times,
/// each from the workgroup's start (the slot index within its level).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Phase {
    /// Its records found and its builtins set: the node's code is next.
    Fetched = 0,
    /// Invocation 0 has run the node's code.
    CodeDone = 1,
    /// It counted itself done (before, inside or after the code).
    Counted = 2,
    /// The level's last workgroup starts the finisher.
    FinisherStart = 3,
    /// The level's last workgroup has run the finisher.
    FinisherEnd = 4,
    /// Its end.
    End = 5,
}

impl Phase {
    /// Every phase, in slot order.
    pub const ALL: [Phase; 6] =
        [Phase::Fetched, Phase::CodeDone, Phase::Counted, Phase::FinisherStart, Phase::FinisherEnd, Phase::End];

    /// What a report calls it.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Fetched => "records found",
            Phase::CodeDone => "code done",
            Phase::Counted => "counted done",
            Phase::FinisherStart => "finisher start",
            Phase::FinisherEnd => "finisher end",
            Phase::End => "end",
        }
    }
}

/// Groups the workgroups of a level are counted done in (see the module doc).
pub const DONE_GROUPS: u32 = 64;
/// Words between two done-group counters: 256 bytes, so that they fall in
/// different cache lines (and memory partitions) instead of queueing on one.
pub const DONE_GROUP_STRIDE_WORDS: u32 = 64;
/// Bytes of the done-group counters of both parities.
pub const DONE_GROUPS_BYTES: u64 = 2 * DONE_GROUPS as u64 * DONE_GROUP_STRIDE_WORDS as u64 * 4;
/// Slots a frame lookup or claim probes at most.
pub const FRAME_MAX_PROBES: u32 = 256;
/// Bytes between two nodes' rank counters (and grid counters) of a parity:
/// counters in one cache line are served one after another by one L2
/// slice, and every producer of a level counts on them at once (64 bins'
/// counters side by side made classify's 4M records queue on two lines:
/// 0.8 ms on an H200).
pub const COUNTER_STRIDE_BYTES: u32 = 256;
/// Where the `u32` largest grid (workgroups) enqueued at a level for a node
/// lies, in bytes after its grid counter (in the counter's own line).
pub const GRID_MAX_OFFSET_BYTES: u32 = 8;
/// The most scratch the home frames of a graph take (both parities): small
/// graphs get homes, large ones (whose levels are rarely small) do not.
pub const HOME_FRAMES_BYTES: u64 = 256 << 10;
/// Frames are at least this many bytes (see [`FrameGeometry::frame_shift_for`]).
pub const MIN_FRAME_BYTES: u32 = 4096;
/// The tag scratch initialisation starts from: tags 0 and 1 are never live,
/// so that zeroed keys read as free.
pub const FIRST_TAG: u32 = 2;

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
/// the runtime draws them, and they never count a level done.
pub const SCHEDULE_FLAG_MESH: u32 = 2;
/// [`NodeSchedule::flags`]: a mesh node drawn once after the last level
/// (with [`SCHEDULE_FLAG_MESH`]): its records are pinned (see the module doc).
pub const SCHEDULE_FLAG_PINNED: u32 = 16;
/// [`NodeSchedule::flags`]: the node's frames keep a `u32` per record
/// ([`FrameGeometry::meta`]).
pub const SCHEDULE_FLAG_META: u32 = 4;
/// [`NodeSchedule::flags`]: the node's records have no bytes to keep: they
/// are counted, never stored ([`FrameGeometry::frameless`]).
pub const SCHEDULE_FLAG_FRAMELESS: u32 = 8;

/// A 32-bit finaliser (MurmurHash3's `fmix32`).
pub fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h = h.wrapping_mul(0xC2B2_AE35);
    h ^ (h >> 16)
}

/// The low word of a frame key: frame `k` of namespace `ns` (a node's
/// records: its slot; its grid entries: `node_count + slot`), with
/// `namespaces = 2 * node_count`. `None` when it does not fit 32 bits.
pub fn frame_key_low(ns: u32, k: u32, namespaces: u32) -> Option<u32> {
    k.checked_mul(namespaces)?.checked_add(ns)
}

/// The full key of a frame: the level tag in the high word.
pub fn frame_key(tag: u32, low: u32) -> u64 {
    (u64::from(tag) << 32) | u64::from(low)
}

/// The slot a key's probe sequence starts at, of `frame_count`: the tag is
/// hashed in, so that one node's frames of consecutive levels do not probe
/// the same slots. The kernels compute the same.
pub fn frame_home(tag: u32, low: u32, frame_count: u32) -> u32 {
    let h = fmix32(low ^ tag.wrapping_mul(0x9E37_79B9));
    ((u64::from(h) * u64::from(frame_count)) >> 32) as u32
}

/// The pool slot of the frame keyed (`tag`, `low`) when it has a home
/// (`GraphContext::homes` per parity): frame 0 of every namespace, in the
/// homes of the tag's parity. The kernels compute the same.
pub fn home_slot(tag: u32, low: u32, homes: u32) -> Option<u32> {
    (low < homes).then(|| (tag & 1) * homes + low)
}

/// The first slot the hashed frames' probe sequence of (`tag`, `low`)
/// visits: [`frame_home`] over the slots after the homes (it wraps to the
/// first of them, `2 * homes`, after the last).
pub fn probe_start(tag: u32, low: u32, frame_count: u32, homes: u32) -> u32 {
    2 * homes + frame_home(tag, low, frame_count - 2 * homes)
}

/// Home frames a graph of `node_count` nodes with frames of `frame_bytes`
/// gets per parity: one for each namespace, when both parities' homes fit
/// [`HOME_FRAMES_BYTES`]; else none.
pub fn homes_for(node_count: u32, frame_bytes: u64) -> u32 {
    let namespaces = 2 * node_count;
    if 2 * u64::from(namespaces) * frame_bytes <= HOME_FRAMES_BYTES {
        namespaces
    } else {
        0
    }
}

/// How one node's records sit in its frames (the same for every producer
/// and the consumer; the runtime decides it when the graph is linked).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FrameGeometry {
    /// Bytes between records (the consumer's input stride).
    pub stride: u32,
    /// Records a frame holds by rank (`P`).
    pub per_frame: u32,
    /// Records an allocation may run past `P` into the frame (the largest
    /// allocation into the node, less one).
    pub tail: u32,
    /// A `u32` per record after the records: the recursion levels left
    /// (low 16 bits) and, on an allocation's first record, its count
    /// (high 16 bits). Without it, a recursive node's records have their
    /// limit less the level left (the runtime leaves it out only for nodes
    /// whose records' depth is their level: enqueued to by themselves only).
    pub meta: bool,
    /// Nothing is stored: the records are empty and carry no meta word.
    pub frameless: bool,
}

impl FrameGeometry {
    /// Bytes of a frame's records (by rank and tail).
    pub fn records_bytes(&self) -> u32 {
        (self.per_frame + self.tail) * self.stride
    }

    /// Offset of the meta words in a frame.
    pub fn meta_offset(&self) -> u32 {
        self.records_bytes()
    }

    /// Bytes of a frame this geometry uses, the tail word included.
    pub fn bytes(&self) -> u32 {
        self.records_bytes() + if self.meta { 4 * (self.per_frame + self.tail) } else { 0 } + 4
    }

    /// The geometry of records of `stride` bytes in frames of `1 << shift`
    /// bytes, allocations of at most `max_count` records.
    pub fn new(stride: u32, max_count: u32, meta: bool, frameless: bool, shift: u32) -> FrameGeometry {
        let slot = stride + if meta { 4 } else { 0 };
        let fits = ((1u32 << shift) - 4) / slot.max(1);
        let tail = max_count.max(1) - 1;
        FrameGeometry { stride, per_frame: fits.saturating_sub(tail), tail, meta, frameless }
    }

    /// The smallest frame shift (at least [`MIN_FRAME_BYTES`]) at which a
    /// frame holds as many records by rank as the largest allocation, so that
    /// an allocation runs into at most one tail.
    pub fn frame_shift_for(stride: u32, max_count: u32, meta: bool) -> u32 {
        let slot = u64::from(stride + if meta { 4 } else { 0 });
        let need = (2 * u64::from(max_count.max(1)) - 1) * slot + 4;
        need.max(u64::from(MIN_FRAME_BYTES)).next_power_of_two().trailing_zeros()
    }
}

/// [`NodePush::level`]'s bits that number the level.
pub const LEVEL_MASK: u32 = (1 << 30) - 1;
/// [`NodePush::level`]: this level counts nothing and has no finisher. The
/// layer sets it on a dispatch's last level when that is not level 0 and
/// every node that can have records there is a compute node without
/// outputs: such a level changes no counter and raises no status into
/// `GraphContext::status` (its index faults go to the host's words), so
/// the finisher before it ends the dispatch instead (see
/// [`LEVEL_NEXT_UNCOUNTED`]). Its kernels read the tag as it was before
/// that finisher moved it on by two.
pub const LEVEL_UNCOUNTED: u32 = 1 << 31;
/// [`NodePush::level`]: the next level is [`LEVEL_UNCOUNTED`], so this
/// level's finisher does what that level's would have: it advances the tag
/// by two, clears this parity's launches and advances the pin, as when
/// nothing is launched next. Nothing is launched after the next level (it
/// is the dispatch's last, and nothing reuses its launches).
pub const LEVEL_NEXT_UNCOUNTED: u32 = 1 << 30;

/// The push-constant member block of every lowered kernel.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodePush {
    /// Device address of this node's [`NodeDispatch`] for the level.
    pub dispatch: u64,
    /// Device address of the [`GraphContext`].
    pub ctx: u64,
    /// The level being run (its parity picks the per-parity tables), in
    /// the bits of [`LEVEL_MASK`], with [`LEVEL_UNCOUNTED`] and
    /// [`LEVEL_NEXT_UNCOUNTED`].
    pub level: u32,
    /// This node's slot.
    pub slot: u32,
}

/// Bytes past its `NodeDispatch` at which a kernel loads a word when it
/// starts, to request the rest of the dispatch's 128-byte line (a host
/// dispatch's level-0 payloads and grid starts follow its `NodeDispatch`es
/// in staging memory): whatever holds a `NodeDispatch` must be readable
/// there.
pub const LAUNCH_LINE_WORDS: [u32; 2] = [64, 96];
/// Bytes a staging block of `NodeDispatch`es holds past its data, so that
/// the loads of [`LAUNCH_LINE_WORDS`] stay inside it.
pub const LAUNCH_LINE_PAD: u64 = 128;

/// Per node and level parity: how the node runs at a level. Written by the
/// host (level 0 of a host dispatch, in staging memory), the entry passes
/// (level 0 of an indirect dispatch) and by the finisher of the level before.
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
    /// in `[0, level_workgroups)`): the workgroups' done groups.
    pub workgroup_base: u32,
    /// Workgroups launched at this level by all its launches.
    pub level_workgroups: u32,
    /// [`RECORDS_CONTIGUOUS`] or [`RECORDS_FRAMED`].
    pub mode: u32,
    /// Whose records the node reads: its own slot, or for a
    /// `SharesInputWithAMDX` node its base node's.
    pub key_node: u32,
    /// Status bits raised before this level that the finisher of level 0
    /// starts from (the entry passes' findings); 0 at later levels.
    pub status_in: u32,
    /// Contiguous: device address of record 0 (records at the input stride).
    pub records: u64,
    /// Dynamic grids. Contiguous: device address of a `u32` per record, the
    /// first workgroup of its grid (an exclusive prefix sum). Framed: the
    /// workgroups of every record's grid when they are all the same (entry
    /// `e` then starts at workgroup `e * starts`), else 0.
    pub starts: u64,
    /// Device address of the dispatch's [`STATUS_WORDS`] host-visible status
    /// words (0: none), passed on from level to level.
    pub status: u64,
}

/// One slot of a dynamic-grid node's grid entries (see the module doc).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GridEntry {
    /// The first workgroup of the record's grid among the node's workgroups.
    pub start: u32,
    /// The record's rank.
    pub rank: u32,
}

/// One per graph dispatch.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GraphContext {
    /// Device address of the frame pool.
    pub pool: u64,
    /// Device address of the frame keys (`u64` per frame).
    pub keys: u64,
    /// Frames in the pool.
    pub frame_count: u32,
    /// log2 of a frame's bytes.
    pub frame_shift: u32,
    /// Number of node slots.
    pub node_count: u32,
    /// Tag of the frames the current level reads (it writes `tag + 1`); kept
    /// across dispatches: the host never writes it after scratch initialisation.
    pub tag: u32,
    /// Device address of the `u32` rank counters of a parity: records
    /// allocated for each node at a level of that parity (their ranks),
    /// node `n`'s at byte `n * COUNTER_STRIDE_BYTES`.
    pub rank_counts: [u64; 2],
    /// Device address of the `u64` grid counters of a parity: grid entries
    /// (low word) and dynamic-grid workgroups (high word) enqueued for each
    /// node, node `n`'s at byte `n * COUNTER_STRIDE_BYTES`.
    pub grid_counts: [u64; 2],
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
    /// `STATUS_*` bits raised by the kernels of a level of parity p (atomic;
    /// the level's finisher takes and clears them).
    pub status: [u32; 2],
    /// Workgroups of a level of parity p that have finished (atomic).
    pub done: [u32; 2],
    /// The status of the dispatch up to the last level that finished.
    pub carried: u32,
    /// Home frames per parity (0 or `2 * node_count`, see the module doc):
    /// pool slots `0 .. 2 * homes` are homes, the hashed frames the rest.
    pub homes: u32,
    /// Device address of the done-group counters: per parity p,
    /// [`DONE_GROUPS`] `u32` counters, counter g at word
    /// `(p * DONE_GROUPS + g) * DONE_GROUP_STRIDE_WORDS` (see the module doc).
    pub done_groups: u64,
    /// Device address of `[u32; node_count + 1]`: the entry passes' rank
    /// counters, then their status word.
    pub entry_counts: u64,
    /// Frames claimed at a level of parity p (atomic; for the `statistics`
    /// setting, which reads and clears them: nothing else does).
    pub claimed: [u32; 2],
    /// The pin of the running dispatch's pinned records (keys of tag
    /// `PIN_TAG | pinned`, see the module doc); the last finisher of a
    /// dispatch advances it, so a draw after the levels reads `pinned - 1`.
    pub pinned: u32,
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
    /// Equal to the slot's own index.
    pub self_slot: u32,
    /// The node's index (what its `ShaderIndexAMDX` reads), so that the
    /// members of a node array can share one kernel.
    pub shader_index: u32,
}

/// How one node's launches are sized and its records kept (one per node slot, static).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
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
    /// [`FrameGeometry::per_frame`] of the node's records.
    pub per_frame: u32,
    /// [`FrameGeometry::tail`] of the node's records.
    pub tail: u32,
    /// Bytes of a record's payload as declared (at most `input_stride`).
    pub input_size: u32,
    /// Dynamic broadcast: the largest grid a record may ask for, per
    /// dimension (`MaxNumWorkgroupsAMDX`, else `maxExecutionGraphWorkgroupCount`);
    /// a record past it, or past [`MAX_RECORD_WORKGROUPS`] in all, is dropped.
    pub max_grid: [u32; 3],
    /// Zero.
    pub _reserved: u32,
}

impl NodeSchedule {
    /// The frame geometry this schedule describes.
    pub fn geometry(&self) -> FrameGeometry {
        FrameGeometry {
            stride: self.input_stride,
            per_frame: self.per_frame,
            tail: self.tail,
            meta: self.flags & SCHEDULE_FLAG_META != 0,
            frameless: self.flags & SCHEDULE_FLAG_FRAMELESS != 0,
        }
    }
}

const _: () = assert!(size_of::<NodePush>() == 24);
const _: () = assert!(offset_of!(NodePush, ctx) == 8);
const _: () = assert!(offset_of!(NodePush, level) == 16);
const _: () = assert!(offset_of!(NodePush, slot) == 20);
const _: () = assert!(size_of::<NodeDispatch>() == 64);
const _: () = assert!(offset_of!(NodeDispatch, workgroup_count) == 12);
const _: () = assert!(offset_of!(NodeDispatch, record_count) == 16);
const _: () = assert!(offset_of!(NodeDispatch, workgroup_base) == 20);
const _: () = assert!(offset_of!(NodeDispatch, level_workgroups) == 24);
const _: () = assert!(offset_of!(NodeDispatch, mode) == 28);
const _: () = assert!(offset_of!(NodeDispatch, key_node) == 32);
const _: () = assert!(offset_of!(NodeDispatch, status_in) == 36);
const _: () = assert!(offset_of!(NodeDispatch, records) == 40);
const _: () = assert!(offset_of!(NodeDispatch, starts) == 48);
const _: () = assert!(offset_of!(NodeDispatch, status) == 56);
const _: () = assert!(size_of::<GridEntry>() == 8);
const _: () = assert!(offset_of!(GraphContext, keys) == 8);
const _: () = assert!(offset_of!(GraphContext, frame_count) == 16);
const _: () = assert!(offset_of!(GraphContext, frame_shift) == 20);
const _: () = assert!(offset_of!(GraphContext, node_count) == 24);
const _: () = assert!(offset_of!(GraphContext, tag) == 28);
const _: () = assert!(offset_of!(GraphContext, rank_counts) == 32);
const _: () = assert!(offset_of!(GraphContext, grid_counts) == 48);
const _: () = assert!(offset_of!(GraphContext, dispatches) == 64);
const _: () = assert!(offset_of!(GraphContext, schedules) == 80);
const _: () = assert!(offset_of!(GraphContext, links) == 88);
const _: () = assert!(offset_of!(GraphContext, nodes) == 96);
const _: () = assert!(offset_of!(GraphContext, sink) == 104);
const _: () = assert!(offset_of!(GraphContext, status) == 112);
const _: () = assert!(offset_of!(GraphContext, done) == 120);
const _: () = assert!(offset_of!(GraphContext, carried) == 128);
const _: () = assert!(offset_of!(GraphContext, done_groups) == 136);
const _: () = assert!(offset_of!(GraphContext, entry_counts) == 144);
const _: () = assert!(offset_of!(GraphContext, claimed) == 152);
const _: () = assert!(offset_of!(GraphContext, pinned) == 160);
const _: () = assert!(size_of::<GraphContext>() == 168);
const _: () = assert!(size_of::<OutputLink>() == 16);
const _: () = assert!(offset_of!(OutputLink, slot_count) == 8);
const _: () = assert!(offset_of!(OutputLink, record_stride) == 12);
const _: () = assert!(size_of::<NodeInfo>() == 16);
const _: () = assert!(offset_of!(NodeInfo, max_recursion) == 4);
const _: () = assert!(offset_of!(NodeInfo, shader_index) == 12);
const _: () = assert!(size_of::<NodeSchedule>() == 64);
const _: () = assert!(offset_of!(NodeSchedule, max_grid) == 48);
const _: () = assert!(offset_of!(NodeSchedule, input_stride) == 24);
const _: () = assert!(offset_of!(NodeSchedule, share_base) == 28);
const _: () = assert!(offset_of!(NodeSchedule, per_frame) == 36);
const _: () = assert!(offset_of!(NodeSchedule, tail) == 40);

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
    pub const NODE_DISPATCH: &[(Field, u32)] = &[
        (U32x3, 0),
        (U32, 12),
        (U32, 16),
        (U32, 20),
        (U32, 24),
        (U32, 28),
        (U32, 32),
        (U32, 36),
        (U64, 40),
        (U64, 48),
        (U64, 56),
    ];
    pub const GRID_ENTRY: &[(Field, u32)] = &[(U32, 0), (U32, 4)];
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
        (U64, 104),
        (U32, 112),
        (U32, 116),
        (U32, 120),
        (U32, 124),
        (U32, 128),
        (U32, 132),
        (U64, 136),
        (U64, 144),
        (U32, 152),
        (U32, 156),
        (U32, 160),
        (U32, 164),
    ];
    pub const OUTPUT_LINK: &[(Field, u32)] = &[(U64, 0), (U32, 8), (U32, 12)];
    pub const NODE_INFO: &[(Field, u32)] = &[(U32, 0), (U32, 4), (U32, 8), (U32, 12)];
    pub const NODE_SCHEDULE: &[(Field, u32)] = &[
        (U32, 0),
        (U32, 4),
        (U32, 8),
        (U32, 12),
        (U32, 16),
        (U32, 20),
        (U32, 24),
        (U32, 28),
        (U32, 32),
        (U32, 36),
        (U32, 40),
        (U32, 44),
        (U32, 48),
        (U32, 52),
        (U32, 56),
        (U32, 60),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_leaves_room_for_the_tail_and_the_tail_word() {
        for (stride, max, meta) in [(8, 1, false), (12, 4, true), (20, 16, false), (128, 256, true), (4, 1, true)] {
            let shift = FrameGeometry::frame_shift_for(stride, max, meta);
            let g = FrameGeometry::new(stride, max, meta, false, shift);
            assert!(g.per_frame >= max, "{stride} {max}: {g:?}");
            assert!(g.bytes() <= 1 << shift, "{stride} {max}: {} > {}", g.bytes(), 1u32 << shift);
            assert!(shift >= MIN_FRAME_BYTES.trailing_zeros());
        }
    }

    #[test]
    fn homes_spread_over_the_pool() {
        let count = 1000;
        let mut seen = vec![0u32; count as usize];
        for k in 0..4000 {
            let low = frame_key_low(3, k, 10).unwrap();
            seen[frame_home(7, low, count) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n < 16), "no slot takes a crowd");
        assert!(frame_key_low(5, u32::MAX / 4, 10).is_none());
    }
}
