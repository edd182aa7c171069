#version 460
// Level 0 of an indirect graph dispatch, between entry_rank.comp and
// entry_records.comp: turns the per-node record counts into each node's
// record slice and dispatch arguments (except for dynamic-grid broadcast
// nodes, see gridscan.comp) and resets the counters. One workgroup.
// Sums the workgroups launched at level 0 for the kernels' level finisher,
// each node's range of them its workgroup base (gridscan.comp adds those of
// dynamic-grid nodes).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#define SCAN_SIZE 256u
#include "scan.glsl"
#include "slices.glsl"
layout(local_size_x = SCAN_SIZE) in;

layout(push_constant) uniform Push {
    GraphContextRef ctx;
    NodeDispatchRef dispatches;  // [node_count]
    NodeScheduleRef schedules;   // [node_count]
    RecordRefs records;          // [record_capacity]
    uint64_t level_status;       // where the status after this pass goes
    uint record_capacity;
    uint reserved;
    uint64_t counts;             // [node_count] u32 records per node (entry_rank.comp)
} pc;

void main() {
    uint t = gl_LocalInvocationIndex;
    uint node_count = pc.ctx.node_count;
    uint capacity = pc.record_capacity;
    Words counts = Words(pc.counts);
    uint running_total = 0u;
    for (uint chunk = 0u; chunk < node_count; chunk += SCAN_SIZE) {
        uint n = chunk + t;
        uint count = n < node_count ? counts.w[n] : 0u;
        uint chunk_total;
        uint base = running_total + workgroup_inclusive_scan(count, chunk_total) - count;
        if (n < node_count) {
            uint fitting = base >= capacity ? 0u : min(count, capacity - base);
            NodeDispatchRef d = pc.dispatches[n];
            write_dispatch(d, pc.schedules[n], n, uint64_t(pc.records) + uint64_t(base) * 16ul, fitting);
            counts.w[n] = 0u;
        }
        running_total += chunk_total;
    }
    copy_shared_slices(pc.dispatches, pc.schedules, node_count);
    memoryBarrierBuffer();
    barrier();
    for (uint n = t; n < node_count; n += SCAN_SIZE) {
        NodeDispatchRef d = pc.dispatches[n];
        if (pc.schedules[n].mode != SCHEDULE_DYNAMIC && (pc.schedules[n].flags & SCHEDULE_FLAG_MESH) == 0u) {
            // Disjoint workgroup numbers for the node kernels' done groups.
            d.workgroup_base = atomicAdd(pc.ctx.launched0, d.indirect_x * d.indirect_y * d.indirect_z);
        }
    }
    barrier();
    if (t == 0u) {
        if (running_total > capacity) {
            atomicOr(pc.ctx.status, STATUS_RECORD_OVERFLOW);
        }
        Words(pc.level_status).w[0] = pc.ctx.status;
    }
}
