#version 460
// Between two levels, after the producing level ran: turns the per-node
// record counts into each node's record list slice and (except for
// dynamic-grid broadcast nodes, see gridscan.comp) its dispatch arguments;
// resets the counters for the next level; prepares the scatter pass.
// One workgroup.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
    GraphContextRef ctx;
    NodeDispatchRef dispatches;  // [node_count]
    NodeScheduleRef schedules;   // [node_count]
    RecordRefs records;          // [record_capacity]
    LevelStateRef level;
    uint64_t next_out_base;      // output half of the next level
    uint64_t level_status;       // where this level's status snapshot goes
} pc;

shared uint partial[256];
shared uint running_total;
shared bool failed;

// Writes node n's record slice and, unless its grid comes from the
// payload (gridscan.comp), its dispatch arguments.
void write_dispatch(uint n, uint64_t records, uint count) {
    NodeDispatchRef d = pc.dispatches[n];
    NodeScheduleRef s = pc.schedules[n];
    d.record_count = count;
    d.records = records;
    uint groups = 0u;
    if (s.mode == SCHEDULE_STATIC) {
        groups = count * s.static_groups;
    } else if (s.mode == SCHEDULE_BATCHED) {
        groups = (count + s.records_per_workgroup - 1u) / s.records_per_workgroup;
    }
    d.workgroup_count = groups;
    uvec3 split = split_groups(groups);
    d.indirect_x = split.x;
    d.indirect_y = split.y;
    d.indirect_z = split.z;
}

void main() {
    uint t = gl_LocalInvocationIndex;
    uint node_count = pc.ctx.node_count;
    uint capacity = pc.level.record_capacity;
    Words counts = Words(pc.ctx.node_counts);
    if (t == 0u) {
        running_total = 0u;
        // An overflow that left holes in a record list: everything after
        // it is a no-op. (Failed allocations went to the sink: no holes.)
        failed = (pc.ctx.status & STATUS_FATAL) != 0u;
    }
    barrier();
    for (uint chunk = 0u; chunk < node_count; chunk += 256u) {
        uint n = chunk + t;
        uint count = (n < node_count && !failed) ? counts.w[n] : 0u;
        partial[t] = count;
        barrier();
        // Inclusive Hillis-Steele scan over the chunk.
        for (uint step = 1u; step < 256u; step <<= 1u) {
            uint add = t >= step ? partial[t - step] : 0u;
            barrier();
            partial[t] += add;
            barrier();
        }
        uint base = running_total + partial[t] - count;
        if (n < node_count) {
            uint fitting = base >= capacity ? 0u : min(count, capacity - base);
            write_dispatch(n, uint64_t(pc.records) + uint64_t(base) * 16ul, fitting);
            counts.w[n] = 0u;
        }
        barrier();
        if (t == 255u) {
            running_total += partial[255];
        }
        barrier();
    }
    // SharesInputWithAMDX: a sharer reads its base node's record slice
    // (written above by another invocation).
    memoryBarrierBuffer();
    barrier();
    for (uint n = t; n < node_count; n += 256u) {
        uint base_slot = pc.schedules[n].share_base;
        if (base_slot != 0u) {
            NodeDispatchRef b = pc.dispatches[base_slot - 1u];
            write_dispatch(n, b.records, b.record_count);
        }
    }
    if (t == 0u) {
        uint total = running_total;
        if (total > capacity) {
            atomicOr(pc.ctx.status, STATUS_RECORD_OVERFLOW);
        }
        uint entries = failed ? 0u : min(pc.ctx.entry_count, pc.ctx.entry_capacity);
        pc.level.scatter_count = entries;
        pc.level.scatter_x = (entries + 63u) / 64u;
        pc.level.scatter_y = 1u;
        pc.level.scatter_z = 1u;
        pc.level.record_total = min(total, capacity);
        pc.ctx.entry_count = 0u;
        pc.ctx.out_payload_top = 0u;
        pc.ctx.out_payload_base = pc.next_out_base;
        Words(pc.level_status).w[0] = pc.ctx.status;
    }
}
