#version 460
// Level 0 of an indirect graph dispatch, second pass (after plan.comp laid
// out the record lists): lists each info's payloads, in the application's
// memory at its payload stride, in its node's record slice.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "entry.glsl"

void main() {
    uint count;
    uint64_t infos;
    uint64_t stride;
    entry_infos(count, infos, stride);
    Words ranks = Words(pc.ranks);
    Words node_infos = Words(pc.ctx.nodes);
    for (uint i = gl_WorkGroupID.x; i < count; i += gl_NumWorkGroups.x) {
        uint node = ranks.w[2u * i];
        if (node == NO_ENTRY) {
            continue;
        }
        uint rank = ranks.w[2u * i + 1u];
        Words info = Words(infos + uint64_t(i) * stride);
        uint payloads = info.w[1];
        uint64_t base = read_u64(info, 2u);
        uint64_t payload_stride = read_u64(info, 4u);
        // abi::NodeInfo.max_recursion: records start with all levels left.
        uint recursion = node_infos.w[4u * node + 1u];
        NodeDispatchRef d = pc.dispatches[node];
        RecordRefs list = RecordRefs(d.records);
        for (uint j = gl_LocalInvocationIndex; j < payloads; j += 64u) {
            uint r = rank + j;
            if (r >= d.record_count) {
                break;
            }
            list[r].payload = base + uint64_t(j) * payload_stride;
            list[r].workgroup_start = 0u;
            list[r].remaining_recursion = recursion;
        }
    }
}
