// Shared declarations of the meta shaders: mirrors of the kernel <-> runtime
// ABI (spirv-lowering/src/abi.rs) and of the layer's per-node schedule
// (layer/src/graph/scratch.rs). A test in meta-shaders checks the offsets.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

// abi::NodeDispatch, 32 bytes.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer NodeDispatchRef {
    uint indirect_x;
    uint indirect_y;
    uint indirect_z;
    uint workgroup_count;
    uint record_count;
    uint node_slot;
    uint64_t records;
};

// abi::RecordRef, 16 bytes.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer RecordRefs {
    uint64_t payload;
    uint workgroup_start;
    uint remaining_recursion;
};

// abi::GraphContext, 88 bytes.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer GraphContextRef {
    uint64_t out_payload_base;
    uint out_payload_capacity;
    uint out_payload_top;
    uint64_t entries;
    uint entry_capacity;
    uint entry_count;
    uint64_t node_counts;
    uint64_t links;
    uint64_t nodes;
    uint64_t sink;
    uint status;
    uint node_count;
    uint advance_x;       // vkCmdDispatchIndirect arguments of advance.comp,
    uint advance_y;       // raised by the kernels' enqueues
    uint advance_z;
    uint reserved;
};

// abi::OutputEntry, 24 bytes.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer OutputEntryRef {
    uint64_t payload;
    uint node_slot;
    uint rank;
    uint count;
    uint remaining_recursion;
};

// meta_shaders::NodeSchedule, 40 bytes.
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

// abi::STATUS_* bits: those that leave holes in record lists stop the graph.
const uint STATUS_ENTRY_OVERFLOW = 1u << 1;
// Bits owned by the meta passes.
const uint STATUS_RECORD_OVERFLOW = 1u << 5;
const uint STATUS_INVALID_ENTRY = 1u << 6;
const uint STATUS_FATAL = STATUS_ENTRY_OVERFLOW | STATUS_RECORD_OVERFLOW;

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
