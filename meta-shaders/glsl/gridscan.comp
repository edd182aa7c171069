#version 460
// Level 0 of an indirect dispatch, for broadcast nodes whose grid comes
// from the payload: the exclusive
// prefix sum of the records' grid sizes (RecordRef.workgroup_start, which
// kernels binary-search) and the node's dispatch arguments. One workgroup
// per node slot (others exit); each invocation takes 4 consecutive records,
// so one round of the workgroup scan covers 1024 records.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#define SCAN_SIZE 256u
#include "scan.glsl"
layout(local_size_x = SCAN_SIZE) in;

layout(push_constant) uniform Push {
    NodeDispatchRef dispatches;
    NodeScheduleRef schedules;
    GraphContextRef ctx;       // launched0 gets this node's workgroups
} pc;

const uint PER_INVOCATION = 4u;

uint grid_component(uint64_t payload, uint offset, uint bytes, uint index) {
    uint at = offset + index * bytes;
    uint word = Words(payload + uint64_t(at & ~3u)).w[0];
    return bytes == 2u ? ((word >> ((at & 2u) * 8u)) & 0xffffu) : word;
}

uint grid_size(NodeScheduleRef s, uint64_t payload) {
    uint groups = 1u;
    for (uint c = 0u; c < s.grid_components; ++c) {
        groups *= grid_component(payload, s.grid_offset, s.grid_bytes, c);
    }
    return groups;
}

void main() {
    uint n = gl_WorkGroupID.x;
    NodeScheduleRef s = pc.schedules[n];
    if (s.mode != SCHEDULE_DYNAMIC) {
        return;
    }
    NodeDispatchRef d = pc.dispatches[n];
    uint t = gl_LocalInvocationIndex;
    uint count = d.record_count;
    RecordRefs list = RecordRefs(d.records);
    uint running_total = 0u;
    for (uint chunk = 0u; chunk < count; chunk += SCAN_SIZE * PER_INVOCATION) {
        uint first = chunk + t * PER_INVOCATION;
        uint groups[PER_INVOCATION];
        uint mine = 0u;
        for (uint k = 0u; k < PER_INVOCATION; ++k) {
            uint r = first + k;
            groups[k] = r < count ? grid_size(s, list[r].payload) : 0u;
            mine += groups[k];
        }
        uint chunk_total;
        uint start = running_total + workgroup_inclusive_scan(mine, chunk_total) - mine;
        for (uint k = 0u; k < PER_INVOCATION; ++k) {
            uint r = first + k;
            if (r < count) {
                list[r].workgroup_start = start;
            }
            start += groups[k];
        }
        running_total += chunk_total;
    }
    if (t == 0u) {
        d.workgroup_count = running_total;
        uvec3 split = split_groups(running_total);
        d.indirect_x = split.x;
        d.indirect_y = split.y;
        d.indirect_z = split.z;
        if ((s.flags & SCHEDULE_FLAG_MESH) == 0u) {
            d.workgroup_base = atomicAdd(pc.ctx.launched0, split.x * split.y * split.z);
        }
    }
}
