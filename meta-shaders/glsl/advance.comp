#version 460
// Between two levels, after the producing level ran, in one pass: turns the
// per-node record counts into each node's record slice, lists every record
// the level enqueued in its target's slice (rank order, with its payload
// address and remaining recursion), writes the next level's dispatch
// arguments (except for dynamic-grid broadcast nodes, see gridscan.comp)
// and resets the next level's context.
//
// Level d runs with GraphContext d % 2 (`ctx`); this pass reads it and
// resets the other one (`next_ctx`), which nothing reads until level d + 1,
// so no workgroup has to wait for another. Sized on the GPU: the kernels'
// enqueues raise ctx.advance_x to one workgroup per 512 entries (at least
// one, at most 65535; the workgroups loop over the entries). Every
// workgroup computes the slices itself (node counts are few); workgroup 0
// also writes the dispatch arguments and the resets. Workgroups of 64 hide
// the chains of dependent loads best on the H100; 8 entries an invocation
// keep the slice computation's share small (on lavapipe, one workgroup per
// 64 entries made a 64k-entry level cost 20 ms more).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#define SCAN_SIZE 64u
#include "scan.glsl"
#include "slices.glsl"
layout(local_size_x = SCAN_SIZE) in;

layout(push_constant) uniform Push {
    GraphContextRef ctx;         // the level that ran
    GraphContextRef next_ctx;    // the level that runs next
    NodeDispatchRef dispatches;  // [node_count]
    NodeScheduleRef schedules;   // [node_count]
    RecordRefs records;          // [record_capacity]
    uint64_t level_status;       // where the status after this pass goes
    uint record_capacity;
} pc;

// Node slots whose slice bases one round keeps in shared memory (8 KiB);
// larger graphs take several rounds over the entries.
const uint WINDOW = 2048u;
shared uint slice_base[WINDOW];

void main() {
    uint t = gl_LocalInvocationIndex;
    bool leader = gl_WorkGroupID.x == 0u;
    uint node_count = pc.ctx.node_count;
    uint capacity = pc.record_capacity;
    Words counts = Words(pc.ctx.node_counts);
    // An overflow that left holes in a record list: everything after it is
    // a no-op. (Failed allocations went to the sink: no holes.)
    bool failed = (pc.ctx.status & STATUS_FATAL) != 0u;
    uint entry_total = failed ? 0u : min(pc.ctx.entry_count, pc.ctx.entry_capacity);
    OutputEntryRef entries = OutputEntryRef(pc.ctx.entries);
    uint threads = gl_NumWorkGroups.x * SCAN_SIZE;
    uint running_total = 0u;
    for (uint window = 0u; window < node_count; window += WINDOW) {
        uint window_end = min(window + WINDOW, node_count);
        for (uint chunk = window; chunk < window_end; chunk += SCAN_SIZE) {
            uint n = chunk + t;
            uint count = (n < window_end && !failed) ? counts.w[n] : 0u;
            uint chunk_total;
            uint base = running_total + workgroup_inclusive_scan(count, chunk_total) - count;
            if (n < window_end) {
                slice_base[n - window] = base;
                if (leader) {
                    uint fitting = base >= capacity ? 0u : min(count, capacity - base);
                    uint64_t slice = uint64_t(pc.records) + uint64_t(base) * 16ul;
                    write_dispatch(pc.dispatches[n], pc.schedules[n], slice, fitting);
                }
            }
            running_total += chunk_total;
        }
        barrier();
        for (uint e = gl_GlobalInvocationID.x; e < entry_total; e += threads) {
            OutputEntryRef entry = entries[e];
            uint slot = entry.node_slot;
            if (slot < window || slot >= window_end) {
                continue;
            }
            uint first = slice_base[slot - window] + entry.rank;
            uint64_t stride = uint64_t(pc.schedules[slot].input_stride);
            uint64_t payload = entry.payload;
            uint recursion = entry.remaining_recursion;
            uint count = min(entry.count, first >= capacity ? 0u : capacity - first);
            for (uint i = 0u; i < count; ++i) {
                RecordRefs r = pc.records[first + i];
                r.payload = payload + uint64_t(i) * stride;
                r.workgroup_start = 0u;
                r.remaining_recursion = recursion;
            }
        }
        // The next window overwrites slice_base.
        barrier();
    }
    if (!leader) {
        return;
    }
    copy_shared_slices(pc.dispatches, pc.schedules, node_count);
    Words next_counts = Words(pc.next_ctx.node_counts);
    for (uint n = t; n < node_count; n += SCAN_SIZE) {
        next_counts.w[n] = 0u;
    }
    if (t == 0u) {
        uint status = pc.ctx.status;
        if (running_total > capacity) {
            status |= STATUS_RECORD_OVERFLOW;
        }
        // Statuses only accumulate: the next context already holds every
        // bit up to the level before this one.
        atomicOr(pc.next_ctx.status, status);
        pc.next_ctx.entry_count = 0u;
        pc.next_ctx.out_payload_top = 0u;
        pc.next_ctx.advance_x = 1u;
        Words(pc.level_status).w[0] = status;
    }
}
