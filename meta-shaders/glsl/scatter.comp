#version 460
// Lists every record enqueued by the last level in its target node's record
// slice (rank order), with its payload address and remaining recursion.
// One invocation per output entry (indirect, arguments from plan.comp).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
    GraphContextRef ctx;
    NodeDispatchRef dispatches;
    NodeScheduleRef schedules;
    LevelStateRef level;
} pc;

void main() {
    uint e = gl_GlobalInvocationID.x;
    if (e >= pc.level.scatter_count) {
        return;
    }
    OutputEntryRef entry = OutputEntryRef(pc.ctx.entries)[e];
    uint slot = entry.node_slot;
    if (slot >= pc.ctx.node_count) {
        return;
    }
    NodeDispatchRef d = pc.dispatches[slot];
    uint stride = pc.schedules[slot].input_stride;
    RecordRefs list = RecordRefs(d.records);
    uint limit = d.record_count;
    for (uint i = 0u; i < entry.count; ++i) {
        uint r = entry.rank + i;
        if (r >= limit) {
            break;
        }
        list[r].payload = entry.payload + uint64_t(i) * uint64_t(stride);
        list[r].workgroup_start = 0u;
        list[r].remaining_recursion = entry.remaining_recursion;
    }
}
