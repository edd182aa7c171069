#version 460
// Level 0 of an indirect graph dispatch, first pass: checks each
// VkDispatchGraphInfoAMDX (node index in range and an API entry; otherwise
// the info is dropped and STATUS_INVALID_ENTRY raised) and reserves its
// records' places in the node's record list, as a kernel's enqueue does.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "entry.glsl"

void main() {
    uint count;
    uint64_t infos;
    uint64_t stride;
    entry_infos(count, infos, stride);
    Words ranks = Words(pc.ranks);
    Words counts = Words(pc.counts);
    uint threads = gl_NumWorkGroups.x * 64u;
    for (uint i = gl_GlobalInvocationID.x; i < count; i += threads) {
        Words info = Words(infos + uint64_t(i) * stride);
        uint node = info.w[0];
        uint payloads = info.w[1];
        if (node >= pc.ctx.node_count || (pc.schedules[node].flags & SCHEDULE_FLAG_API_ENTRY) == 0u) {
            atomicOr(pc.ctx.status, STATUS_INVALID_ENTRY);
            ranks.w[2u * i] = NO_ENTRY;
            continue;
        }
        ranks.w[2u * i] = node;
        ranks.w[2u * i + 1u] = atomicAdd(counts.w[node], payloads);
    }
}
