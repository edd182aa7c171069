// Shared declarations of the meta shaders: mirrors of the kernel <-> runtime
// ABI (spirv-lowering/src/abi.rs). A test in meta-shaders checks the offsets.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

// abi::NodeDispatch, 48 bytes.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer NodeDispatchRef {
    uint indirect_x;
    uint indirect_y;
    uint indirect_z;
    uint workgroup_count;
    uint record_count;
    uint workgroup_base;  // first workgroup among the level's launches (done groups)
    uint mode;            // RECORDS_* below
    uint key_node;        // whose records the node reads
    uint64_t records;     // listed: [RecordRef; record_count]
    uint64_t input_base;  // indexed: base of the payload offsets
};

// abi::RecordRef, 16 bytes.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer RecordRefs {
    uint64_t payload;
    uint workgroup_start;
    uint remaining_recursion;
};

// abi::GraphContext, 144 bytes (the per-parity arrays as pairs of members).
layout(buffer_reference, std430, buffer_reference_align = 8) buffer GraphContextRef {
    uint64_t ring0;
    uint64_t ring1;
    uint ring_top0;
    uint ring_top1;
    uint ring_capacity;
    uint node_count;
    uint64_t counts0;
    uint64_t counts1;
    uint64_t dispatches0;
    uint64_t dispatches1;
    uint64_t schedules;
    uint64_t links;
    uint64_t nodes;
    uint64_t sink;
    uint64_t index;
    uint index_mask;
    uint status;
    uint done0;
    uint done1;
    uint launched0;       // workgroups launched at level 0 (the entry passes sum them)
    uint launched1;
    uint64_t level_status;
    uint tag;
    uint reserved;
    uint64_t done_groups; // the node kernels' done-group counters
};

// abi::NodeSchedule, 40 bytes.
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
    uint reserved;
};

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint w[]; };

const uint SCHEDULE_STATIC = 0u;
const uint SCHEDULE_DYNAMIC = 1u;
const uint SCHEDULE_BATCHED = 2u;
const uint SCHEDULE_FLAG_API_ENTRY = 1u;
const uint SCHEDULE_FLAG_MESH = 2u;     // drawn, not launched: no done-group numbers
const uint RECORDS_LISTED = 0u;

// abi::STATUS_* bits the meta passes raise.
const uint STATUS_RECORD_OVERFLOW = 1u << 5;
const uint STATUS_INVALID_ENTRY = 1u << 6;

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
