#version 460
// Level 0 of an indirect graph dispatch, second pass (after entry.comp put
// the records in their frames): each node's parity-0 NodeDispatch, as a
// level finisher would write it for the next level (spirv-lowering's
// passes/finisher.rs), from the entry counters. One workgroup, in phases:
// 1. dynamic grids: for each broadcast node whose grid comes from the
//    payload (and that reads its own records), a workgroup prefix sum of its
//    records' grids in rank order, left as GridEntry e = rank e in the
//    frames of namespace node_count + n, where its kernels (and those of the
//    nodes sharing its input) binary-search them; the sum is its workgroups;
//    A record's grid past the node's max_grid or MAX_RECORD_WORKGROUPS
//    gets no workgroups (STATUS_GRID_LIMIT), a node whose grids together
//    pass MAX_LEVEL_WORKGROUPS none at all (STATUS_LEVEL_WORKGROUPS): the
//    records come from the application's device memory, unchecked;
// 2. launches: records, workgroups and split of every node (a
//    SharesInputWithAMDX node takes its base's records and grid), framed
//    records of its key node, and its first number among level 0's launched
//    workgroups (mesh nodes are drawn: none); a node past
//    MAX_LEVEL_WORKGROUPS launches nothing, and launches that pass it
//    together are all dropped (STATUS_LEVEL_WORKGROUPS), as a level
//    finisher does;
// 3. the level's total workgroups and the entry status into every dispatch,
//    the status into the host's words (after the inputs, and final: a level
//    0 that launches nothing has no finisher), the entry counters zeroed
//    (so that the next dispatch starts from zero without a transfer).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#define SCAN_SIZE 256u
#include "scan.glsl"
layout(local_size_x = SCAN_SIZE) in; // meta_shaders::PLAN_WORKGROUP

// meta_shaders::PlanPush.
layout(push_constant) uniform PlanPush {
    GraphContextRef ctx;
    uint64_t status;       // host-visible status words (0: none)
} pc;

// Records each invocation takes per round of the scan.
const uint PER_INVOCATION = 4u;

shared uint launched;      // running total of level 0's launched workgroups
shared uint over;          // nonzero once a running total passed a limit or wrapped
shared uint plan_status;   // the entry status, with what this pass raises
shared uint dynamic_count; // dynamic-grid nodes of the current chunk
shared uint node_total;    // phase 1: the current node's workgroups so far
shared uint dynamic_nodes[SCAN_SIZE];

// The word holding the component is found from the component's own address
// (the records are word-aligned anyway: strides are multiples of 4,
// spirv-lowering's analyze::record::record_stride).
uint grid_component(uint64_t payload, uint offset, uint bytes, uint index) {
    uint64_t at = payload + uint64_t(offset + index * bytes);
    uint word = Words(at & ~3ul).w[0];
    return bytes == 2u ? ((word >> (uint(at & 2ul) * 8u)) & 0xffffu) : word;
}

// Workgroups of the record at `payload` (components past grid_components
// count 1), as the kernels' enqueue reads them: 0 for a grid past the node's
// max_grid or MAX_RECORD_WORKGROUPS (raising STATUS_GRID_LIMIT in `raised`).
uint grid_size(NodeScheduleRef s, uint64_t payload, inout uint raised) {
    uint64_t groups = 1ul;
    bool within = true;
    for (uint c = 0u; c < 3u; ++c) {
        uint v = c < s.grid_components ? grid_component(payload, s.grid_offset, s.grid_bytes, c) : 1u;
        within = within && v <= s.max_grid[c];
        // Each factor at most 65535 once within: no 64-bit overflow.
        groups *= within ? uint64_t(v) : 1ul;
    }
    within = within && groups <= uint64_t(MAX_RECORD_WORKGROUPS);
    raised |= within ? 0u : STATUS_GRID_LIMIT;
    return within ? uint(groups) : 0u;
}

// After `value` was added to a running total that was `before`: marks
// `over` when the sum passes MAX_LEVEL_WORKGROUPS or wraps; returns `before`.
uint held(uint before, uint value) {
    uint after = before + value;
    if (after < before || after > MAX_LEVEL_WORKGROUPS) {
        atomicOr(over, 1u);
    }
    return before;
}

bool reads_own_dynamic_grid(NodeScheduleRef s) {
    return s.mode == SCHEDULE_DYNAMIC && s.share_base == 0u;
}

// Phase 1 for node n (the whole workgroup, in uniform control flow): its
// grid entries; its workgroups go to its dispatch's workgroup_count.
void grid_entries(GraphContextRef ctx, uint n) {
    uint t = gl_LocalInvocationIndex;
    NodeScheduleRef s = NodeScheduleRef(ctx.schedules)[n];
    uint count = Words(ctx.entry_counts).w[n];
    uint node_count = ctx.node_count;
    uint tag = ctx.tag;
    uint per_frame = max(s.per_frame, 1u);
    uint record_stride = s.input_stride;
    bool stored = (s.flags & SCHEDULE_FLAG_FRAMELESS) == 0u;
    uint entries_per_frame = ((1u << ctx.frame_shift) - 4u) / 8u;
    uint raised = 0u;
    // Frames an invocation looked up last (its records are consecutive).
    uint record_k = 0xffffffffu;
    uint record_slot = NO_FRAME;
    uint entry_k = 0xffffffffu;
    uint entry_slot = NO_FRAME;
    uint running_total = 0u;
    if (t == 0u) {
        node_total = 0u;
        over = 0u;
    }
    barrier();
    for (uint chunk = 0u; chunk < count; chunk += SCAN_SIZE * PER_INVOCATION) {
        uint first = chunk + t * PER_INVOCATION;
        uint groups[PER_INVOCATION];
        uint mine = 0u;
        for (uint i = 0u; i < PER_INVOCATION; ++i) {
            uint r = first + i;
            groups[i] = 0u;
            if (r >= count || !stored) {
                continue;
            }
            uint k = r / per_frame;
            if (k != record_k) {
                record_k = k;
                uint low;
                record_slot = frame_key_low(n, k, node_count, low) ? frame_find(ctx, tag, low) : NO_FRAME;
            }
            // A record that is not there (entry.comp said why) gets no workgroups.
            if (record_slot != NO_FRAME) {
                groups[i] = grid_size(s, frame_address(ctx, record_slot, (r % per_frame) * record_stride), raised);
            }
            mine += groups[i];
        }
        // The scan below may wrap; this total says when it did.
        held(atomicAdd(node_total, mine), mine);
        uint chunk_total;
        uint start = running_total + workgroup_inclusive_scan(mine, chunk_total) - mine;
        for (uint i = 0u; i < PER_INVOCATION; ++i) {
            uint r = first + i;
            if (r >= count) {
                break;
            }
            uint k = r / entries_per_frame;
            if (k != entry_k) {
                entry_k = k;
                uint low;
                if (frame_key_low(node_count + n, k, node_count, low)) {
                    entry_slot = frame_claim(ctx, tag, low, r % entries_per_frame == 0u);
                    raised |= entry_slot == NO_FRAME ? STATUS_PAYLOAD_OVERFLOW : 0u;
                } else {
                    entry_slot = NO_FRAME;
                    raised |= STATUS_FRAME_RANGE;
                }
            }
            if (entry_slot != NO_FRAME) {
                GridEntryRef e = GridEntryRef(frame_address(ctx, entry_slot, 8u * (r % entries_per_frame)));
                e.start = start;
                e.rank = r;
            }
            start += groups[i];
        }
        running_total += chunk_total;
    }
    barrier();
    bool past = over != 0u;
    raised |= past ? STATUS_LEVEL_WORKGROUPS : 0u;
    if (raised != 0u) {
        atomicOr(plan_status, raised);
    }
    if (t == 0u) {
        NodeDispatchRef(ctx.dispatches0)[n].workgroup_count = past ? 0u : running_total;
    }
    // The next node resets `over`.
    barrier();
}

void main() {
    GraphContextRef ctx = pc.ctx;
    uint t = gl_LocalInvocationIndex;
    uint node_count = ctx.node_count;
    Words counts = Words(ctx.entry_counts);
    NodeScheduleRef schedules = NodeScheduleRef(ctx.schedules);
    NodeDispatchRef dispatches = NodeDispatchRef(ctx.dispatches0);
    if (t == 0u) {
        launched = 0u;
        plan_status = counts.w[node_count];
    }
    // Phase 1: the dynamic-grid nodes of each chunk of SCAN_SIZE nodes are
    // listed, then scanned one after the other by the whole workgroup.
    for (uint chunk = 0u; chunk < node_count; chunk += SCAN_SIZE) {
        if (t == 0u) {
            dynamic_count = 0u;
        }
        barrier();
        uint n = chunk + t;
        if (n < node_count && reads_own_dynamic_grid(schedules[n])) {
            dynamic_nodes[atomicAdd(dynamic_count, 1u)] = n;
        }
        barrier();
        uint listed = dynamic_count;
        for (uint i = 0u; i < listed; ++i) {
            grid_entries(ctx, dynamic_nodes[i]);
        }
        // The next chunk's list overwrites this one.
        barrier();
    }
    // Phase 2 reads the workgroup counts of dynamic-grid bases, and counts
    // the level's total afresh.
    if (t == 0u) {
        over = 0u;
    }
    memoryBarrierBuffer();
    barrier();
    for (uint n = t; n < node_count; n += SCAN_SIZE) {
        NodeScheduleRef s = schedules[n];
        NodeDispatchRef d = dispatches[n];
        uint src = s.share_base != 0u ? s.share_base - 1u : n;
        uint records = counts.w[src];
        uint groups = 0u;
        if (s.mode == SCHEDULE_STATIC) {
            uint64_t wide = uint64_t(records) * uint64_t(s.static_groups);
            bool within = wide <= uint64_t(MAX_LEVEL_WORKGROUPS);
            if (!within) {
                atomicOr(plan_status, STATUS_LEVEL_WORKGROUPS);
            }
            groups = within ? uint(wide) : 0u;
        } else if (s.mode == SCHEDULE_BATCHED) {
            uint per = max(s.records_per_workgroup, 1u);
            groups = records / per + (records % per != 0u ? 1u : 0u);
        } else if (s.mode == SCHEDULE_DYNAMIC) {
            // Written by phase 1 for n itself, or for the base it shares
            // with (whose entries it reads); a base that is not a dynamic
            // grid has no entries, as at later levels.
            groups = reads_own_dynamic_grid(schedules[src]) ? dispatches[src].workgroup_count : 0u;
        }
        if (!reads_own_dynamic_grid(s)) {
            d.workgroup_count = groups; // a dynamic-grid base's already is
        }
        uvec3 split = split_groups(groups);
        d.indirect_x = split.x;
        d.indirect_y = split.y;
        d.indirect_z = split.z;
        d.record_count = records;
        d.mode = RECORDS_FRAMED;
        d.key_node = src;
        d.records = 0ul;
        d.starts = 0ul;
        d.status = pc.status;
        // Mesh nodes are drawn, not launched: their workgroups never count done.
        uint mine = (s.flags & SCHEDULE_FLAG_MESH) != 0u ? 0u : split.x * split.y * split.z;
        d.workgroup_base = held(atomicAdd(launched, mine), mine);
    }
    // Every count has been read (sharers' bases included), the level's total
    // and the status are final.
    memoryBarrierBuffer();
    barrier();
    // Launches that together pass what a level launches: none of them runs.
    bool past = over != 0u;
    if (past) {
        for (uint n = t; n < node_count; n += SCAN_SIZE) {
            NodeDispatchRef d = dispatches[n];
            d.indirect_x = 0u;
            d.workgroup_count = 0u;
            d.record_count = 0u;
        }
        if (t == 0u) {
            plan_status |= STATUS_LEVEL_WORKGROUPS;
        }
        barrier();
    }
    uint total = past ? 0u : launched;
    uint status = plan_status;
    for (uint n = t; n < node_count; n += SCAN_SIZE) {
        NodeDispatchRef d = dispatches[n];
        d.level_workgroups = total;
        d.status_in = status;
        counts.w[n] = 0u;
    }
    if (t == 0u) {
        counts.w[node_count] = 0u;
        // The host's words start zero: a clean start writes nothing there.
        if (pc.status != 0ul && status != 0u) {
            Words words = Words(pc.status);
            words.w[0] = status;
            words.w[STATUS_WORDS - 1u] = status;
        }
    }
}
