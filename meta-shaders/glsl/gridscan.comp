#version 460
// For broadcast nodes whose grid comes from the payload: the exclusive
// prefix sum of the records' grid sizes (RecordRef.workgroup_start, which
// kernels binary-search) and the node's dispatch arguments. One workgroup
// per node slot (others exit); records are scanned 256 at a time.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
    NodeDispatchRef dispatches;
    NodeScheduleRef schedules;
} pc;

shared uint partial[256];
shared uint running_total;

uint grid_component(uint64_t payload, uint offset, uint bytes, uint index) {
    uint at = offset + index * bytes;
    uint word = Words(payload + uint64_t(at & ~3u)).w[0];
    return bytes == 2u ? ((word >> ((at & 2u) * 8u)) & 0xffffu) : word;
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
    if (t == 0u) {
        running_total = 0u;
    }
    barrier();
    for (uint chunk = 0u; chunk < count; chunk += 256u) {
        uint r = chunk + t;
        uint groups = 0u;
        if (r < count) {
            uint64_t p = list[r].payload;
            groups = 1u;
            for (uint c = 0u; c < s.grid_components; ++c) {
                groups *= grid_component(p, s.grid_offset, s.grid_bytes, c);
            }
        }
        partial[t] = groups;
        barrier();
        for (uint step = 1u; step < 256u; step <<= 1u) {
            uint add = t >= step ? partial[t - step] : 0u;
            barrier();
            partial[t] += add;
            barrier();
        }
        if (r < count) {
            list[r].workgroup_start = running_total + partial[t] - groups;
        }
        barrier();
        if (t == 255u) {
            running_total += partial[255];
        }
        barrier();
    }
    if (t == 0u) {
        uint groups = running_total;
        d.workgroup_count = groups;
        uvec3 split = split_groups(groups);
        d.indirect_x = split.x;
        d.indirect_y = split.y;
        d.indirect_z = split.z;
    }
}
