// Shared declarations of the meta shaders: mirrors of the kernel <-> runtime
// ABI, version 4 (spirv-lowering/src/abi.rs), and the frame helpers the
// lowered kernels use (spirv-lowering/src/runtime.rs), bit for bit, so that
// the records and grid entries the meta passes leave are where the kernels
// look. tests/mirror.rs checks the offsets and the constants.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_KHR_memory_scope_semantics : require

// abi::NodeDispatch, 64 bytes.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer NodeDispatchRef {
    uint indirect_x;
    uint indirect_y;
    uint indirect_z;
    uint workgroup_count;
    uint record_count;
    uint workgroup_base;   // first workgroup among the level's launches (done groups)
    uint level_workgroups; // workgroups launched at the level by all launches
    uint mode;             // RECORDS_* below
    uint key_node;         // whose records the node reads
    uint status_in;        // status before the level (the entry passes')
    uint64_t records;      // contiguous records (not used by framed ones)
    uint64_t starts;       // contiguous dynamic grids' starts (idem)
    uint64_t status;       // host-visible status words (0: none)
};

// abi::GraphContext, 168 bytes (the per-parity arrays as pairs of members).
layout(buffer_reference, std430, buffer_reference_align = 8) buffer GraphContextRef {
    uint64_t pool;         // frame pool
    uint64_t keys;         // u64 key per frame
    uint frame_count;
    uint frame_shift;      // log2 of a frame's bytes
    uint node_count;
    uint tag;              // tag of the frames the current level reads
    uint64_t rank_counts0;
    uint64_t rank_counts1;
    uint64_t grid_counts0;
    uint64_t grid_counts1;
    uint64_t dispatches0;  // [NodeDispatch; node_count] of level parity 0
    uint64_t dispatches1;
    uint64_t schedules;    // [NodeSchedule; node_count]
    uint64_t links;
    uint64_t nodes;        // [NodeInfo; node_count]
    uint64_t sink;
    uint status0;
    uint status1;
    uint done0;
    uint done1;
    uint carried;
    uint homes;            // home frames per parity (pool slots 0 .. 2 * homes)
    uint64_t done_groups;
    uint64_t entry_counts; // [u32; node_count + 1]: the entry ranks, then their status
    uint claimed0;         // frames claimed at a level of parity 0 (statistics)
    uint claimed1;
    uint pinned;           // the running dispatch's pin (keys PIN_TAG | pinned)
    uint _reserved;
};

// abi::NodeSchedule, 64 bytes.
layout(buffer_reference, std430, buffer_reference_align = 4) buffer NodeScheduleRef {
    uint mode;                  // SCHEDULE_* below
    uint records_per_workgroup; // coalescing P / packed thread W
    uint static_groups;         // static broadcast: workgroups per record
    uint grid_offset;           // dynamic broadcast: byte offset of the grid member
    uint grid_bytes;            // 2 or 4
    uint grid_components;       // 1..3
    uint input_stride;          // bytes between records of one allocation
    uint share_base;            // SharesInputWithAMDX: base slot + 1 (0: none)
    uint flags;                 // SCHEDULE_FLAG_* below
    uint per_frame;             // records a frame holds by rank (P)
    uint tail;                  // records an allocation may run past P
    uint input_size;            // bytes of a record's payload as declared
    uint max_grid[3];           // dynamic broadcast: the largest grid a record may ask for
    uint _reserved;
};

// abi::GridEntry, 8 bytes.
layout(buffer_reference, std430, buffer_reference_align = 4) buffer GridEntryRef {
    uint start; // first workgroup of the record's grid among the node's
    uint rank;
};

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint w[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Keys { uint64_t k[]; };

const uint SCHEDULE_STATIC = 0u;
const uint SCHEDULE_DYNAMIC = 1u;
const uint SCHEDULE_BATCHED = 2u;
const uint SCHEDULE_FLAG_API_ENTRY = 1u;
const uint SCHEDULE_FLAG_MESH = 2u;      // drawn, not launched: no done-group numbers
const uint SCHEDULE_FLAG_META = 4u;      // a u32 per record after the records
const uint SCHEDULE_FLAG_FRAMELESS = 8u; // records counted, never stored
const uint RECORDS_FRAMED = 1u;
const uint PIN_TAG = 1u << 31;           // tag bit of pinned frames (abi::PIN_TAG)

// abi::STATUS_* bits the meta passes raise, and the host's status words.
const uint STATUS_PAYLOAD_OVERFLOW = 1u << 0;
const uint STATUS_FRAME_RANGE = 1u << 1;
const uint STATUS_INVALID_ENTRY = 1u << 6;
const uint STATUS_GRID_LIMIT = 1u << 7;
const uint STATUS_LEVEL_WORKGROUPS = 1u << 8;
const uint STATUS_WORDS = 34u;
// abi::MAX_RECORD_WORKGROUPS and abi::MAX_LEVEL_WORKGROUPS: the most
// workgroups one record's grid and one level may ask for.
const uint MAX_RECORD_WORKGROUPS = 16777215u;
const uint MAX_LEVEL_WORKGROUPS = 1u << 31;

const uint FRAME_MAX_PROBES = 256u;
const uint NO_FRAME = 0xffffffffu; // abi::NO_NODE, as the kernels' helpers return it

// Splits `groups` linear workgroups over x and y (65535 per dimension,
// VkPhysicalDeviceLimits::maxComputeWorkGroupCount on lavapipe) with fewer
// than y wasted groups; kernels linearise with NumWorkgroups.
uvec3 split_groups(uint groups) {
    if (groups <= 65535u) {
        return uvec3(groups, 1u, 1u);
    }
    uint y = (groups + 65534u) / 65535u;
    uint x = (groups + y - 1u) / y;
    return uvec3(x, y, 1u);
}

// abi::fmix32 (MurmurHash3's finaliser).
uint fmix32(uint h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    return h ^ (h >> 16);
}

// abi::frame_home: the first slot probed for key (tag, low).
uint frame_home(uint tag, uint low, uint frame_count) {
    uint h = fmix32(low ^ (tag * 0x9e3779b9u));
    return uint((uint64_t(h) * uint64_t(frame_count)) >> 32);
}

// abi::frame_key_low of frame k of namespace ns (2 * node_count
// namespaces); false when it does not fit 32 bits (the kernels then raise
// STATUS_FRAME_RANGE, as the meta passes do).
bool frame_key_low(uint ns, uint k, uint node_count, out uint low) {
    uint64_t wide = uint64_t(k) * uint64_t(2u * node_count) + uint64_t(ns);
    low = uint(wide);
    return wide <= 0xfffffffful;
}

uint64_t frame_key(uint tag, uint low) {
    return (uint64_t(tag) << 32) | uint64_t(low);
}

// runtime::frame_fn: the pool slot of the frame keyed (tag, low): its home
// (abi::home_slot) when it has one, else one of the hashed slots after the
// homes, or NO_FRAME when it is not within FRAME_MAX_PROBES of them
// (abi::probe_start, wrapping to the first hashed slot). Claiming takes the
// first free slot on the way (one compare-and-swap of its key; a slot is
// free when its tag is neither `tag` nor `tag - 1`, the two live ones)
// unless the frame is found first, so that everyone who claims the same
// frame gets the same slot; a winner counts the frame in claimed0 (the meta
// passes fill level 0's frames: level parity 0's). Finding only compares keys.
uint frame_probe(GraphContextRef ctx, uint tag, uint low, bool claim, bool opens) {
    uint homes = ctx.homes;
    if (low < homes) {
        if (claim && opens) {
            atomicAdd(ctx.claimed0, 1u); // never claimed, counted all the same
        }
        return (tag & 1u) * homes + low;
    }
    Keys keys = Keys(ctx.keys);
    uint count = ctx.frame_count;
    uint first = 2u * homes;
    uint64_t want = frame_key(tag, low);
    uint i = first + frame_home(tag, low, count - first);
    uint found = NO_FRAME;
    for (uint probe = 0u; probe < FRAME_MAX_PROBES && found == NO_FRAME; ++probe) {
        if (claim) {
            // Atomic: another workgroup may be claiming the slot right now.
            uint64_t seen = atomicLoad(keys.k[i], gl_ScopeDevice, gl_StorageSemanticsNone, gl_SemanticsRelaxed);
            uint seen_tag = uint(seen >> 32);
            if (seen_tag != tag && seen_tag != tag - 1u && seen_tag != (PIN_TAG | ctx.pinned)) {
                uint64_t old = atomicCompSwap(keys.k[i], seen, want);
                if (old == seen) {
                    atomicAdd(ctx.claimed0, 1u);
                }
                // Someone else may have claimed this very frame meanwhile.
                found = (old == seen || old == want) ? i : NO_FRAME;
            }
            if (seen == want) {
                found = i;
            }
        } else if (keys.k[i] == want) {
            found = i;
        }
        i = i + 1u == count ? first : i + 1u;
    }
    return found;
}

// `opens`: the caller writes the frame's first record (who counts a home).
uint frame_claim(GraphContextRef ctx, uint tag, uint low, bool opens) {
    return frame_probe(ctx, tag, low, true, opens);
}

uint frame_find(GraphContextRef ctx, uint tag, uint low) {
    return frame_probe(ctx, tag, low, false, false);
}

// Device address of byte `offset` of pool frame `slot`.
uint64_t frame_address(GraphContextRef ctx, uint slot, uint offset) {
    return ctx.pool + (uint64_t(slot) << ctx.frame_shift) + uint64_t(offset);
}
