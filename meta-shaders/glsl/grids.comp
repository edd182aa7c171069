#version 460
// Level 0 of a host dispatch with many dynamic-grid records (the layer's
// graph/entry.rs, GPU_GRIDS_FROM): the CPU copied the records into staging
// memory when the command was recorded; this pass, run twice, gives each
// record the first workgroup of its grid among the node's (its start, which
// the node's kernels binary-search) and sizes level 0's launches, instead
// of the CPU walking every record.
// - phase 0: workgroup c sums the grids of chunk c of the records (capped
//   at CAP) and keeps their largest components;
// - phase 1: workgroup c adds up the chunks before its own, and writes the
//   start of each of its records; workgroup 0 also writes every level-0
//   launch's workgroups, split, first workgroup number and the level's
//   total into the NodeDispatches in staging.
// The checks are the CPU's (entry.rs, GridLimits): a grid component past the
// node's max_grid, or grids that together pass MAX_RECORD_WORKGROUPS
// (STATUS_GRID_LIMIT), or launches that together pass MAX_LEVEL_WORKGROUPS
// (STATUS_LEVEL_WORKGROUPS), and the dispatch launches nothing at all, as a
// CPU-checked one records nothing; the status goes to the host's words (no
// finisher runs to write it).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#define SCAN_SIZE 256u
#include "scan.glsl"
layout(local_size_x = SCAN_SIZE) in; // meta_shaders::GRIDS_WORKGROUP

// meta_shaders::GridsPush.
layout(push_constant) uniform GridsPush {
    uint64_t records;      // the node's records, `stride` bytes apart
    uint64_t starts;       // [u32; count]: each record's first workgroup
    uint64_t sums;         // [uvec4; chunks]: phase 0's sums
    uint64_t dispatches;   // [NodeDispatch; launches] of level 0
    uint64_t status;       // host-visible status words (0: none)
    uint count;
    uint stride;
    uint grid_offset;
    uint grid_bytes;
    uint grid_components;
    uint max_grid_x;
    uint max_grid_y;
    uint max_grid_z;
    uint launches;
    uint grid_launches;    // bit i: launch i takes the grids' total
    uint phase;
    uint chunks;           // workgroups of each phase
    uint per_invocation;   // records an invocation takes in a chunk
    uint reserved;
} pc;

// Workgroups past what a node's records may ask for together: sums stop
// here, so that nothing wraps.
const uint CAP = MAX_RECORD_WORKGROUPS + 1u;

// A chunk's (workgroups capped at CAP, largest x, y, z component).
layout(buffer_reference, std430, buffer_reference_align = 16) buffer ChunkSums { uvec4 s[]; };

shared uint shared_sum;
shared uint shared_capped;
shared uint shared_largest[3];

uint component(uint64_t record, uint c) {
    if (c >= pc.grid_components) {
        return 1u;
    }
    // The word is found from the component's own address (the records are
    // word-aligned anyway: strides are multiples of 4, spirv-lowering's
    // analyze::record::record_stride).
    uint64_t at = record + uint64_t(pc.grid_offset + c * pc.grid_bytes);
    uint word = Words(at & ~3ul).w[0];
    return pc.grid_bytes == 2u ? ((word >> (uint(at & 2ul) * 8u)) & 0xffffu) : word;
}

uvec3 grid_of(uint r) {
    uint64_t record = pc.records + uint64_t(r) * uint64_t(pc.stride);
    return uvec3(component(record, 0u), component(record, 1u), component(record, 2u));
}

// A grid's workgroups, capped at CAP (each factor is, so no product wraps).
uint workgroups(uvec3 g) {
    uint64_t p = uint64_t(min(g.x, CAP)) * uint64_t(min(g.y, CAP));
    p = min(p, uint64_t(CAP)) * uint64_t(min(g.z, CAP));
    return uint(min(p, uint64_t(CAP)));
}

uint add_capped(uint a, uint b) {
    return min(a + b, CAP); // both at most CAP: no wrap
}

// The workgroup's sum of `value` (each at most CAP), capped at CAP; and the
// largest of `largest` in each component. Uniform control flow.
uint reduce(uint value, inout uvec3 largest) {
    if (gl_LocalInvocationIndex == 0u) {
        shared_sum = 0u;
        shared_capped = 0u;
        shared_largest[0] = 0u;
        shared_largest[1] = 0u;
        shared_largest[2] = 0u;
    }
    barrier();
    // SCAN_SIZE values below CAP add up below 2^32.
    if (value >= CAP) {
        atomicOr(shared_capped, 1u);
    } else {
        atomicAdd(shared_sum, value);
    }
    atomicMax(shared_largest[0], largest.x);
    atomicMax(shared_largest[1], largest.y);
    atomicMax(shared_largest[2], largest.z);
    barrier();
    uint sum = shared_capped != 0u ? CAP : min(shared_sum, CAP);
    largest = uvec3(shared_largest[0], shared_largest[1], shared_largest[2]);
    // The next call resets them.
    barrier();
    return sum;
}

uint first_record() {
    return (gl_WorkGroupID.x * SCAN_SIZE + gl_LocalInvocationIndex) * pc.per_invocation;
}

uint last_record() {
    return min(first_record() + pc.per_invocation, pc.count);
}

void chunk_sums() {
    uint sum = 0u;
    uvec3 largest = uvec3(0u);
    for (uint r = first_record(); r < last_record(); ++r) {
        uvec3 g = grid_of(r);
        sum = add_capped(sum, workgroups(g));
        largest = max(largest, g);
    }
    uint total = reduce(sum, largest);
    if (gl_LocalInvocationIndex == 0u) {
        ChunkSums(pc.sums).s[gl_WorkGroupID.x] = uvec4(total, largest);
    }
}

// Every launch's workgroups, split, first workgroup number and the level's
// total; or, when the checks failed (`raised`), none at all.
void size_launches(uint total, uint raised) {
    uint64_t launched = 0ul;
    for (uint i = 0u; i < pc.launches; ++i) {
        NodeDispatchRef d = NodeDispatchRef(pc.dispatches)[i];
        uint groups = ((pc.grid_launches >> i) & 1u) != 0u ? total : d.workgroup_count;
        uvec3 split = split_groups(groups);
        d.indirect_x = split.x;
        d.indirect_y = split.y;
        d.indirect_z = split.z;
        d.workgroup_count = groups;
        d.workgroup_base = uint(min(launched, uint64_t(MAX_LEVEL_WORKGROUPS)));
        launched += uint64_t(split.x) * uint64_t(split.y);
    }
    raised |= launched > uint64_t(MAX_LEVEL_WORKGROUPS) ? STATUS_LEVEL_WORKGROUPS : 0u;
    for (uint i = 0u; i < pc.launches; ++i) {
        NodeDispatchRef d = NodeDispatchRef(pc.dispatches)[i];
        d.level_workgroups = raised != 0u ? 0u : uint(launched);
        d.status_in |= raised;
        if (raised != 0u) {
            d.indirect_x = 0u;
            d.workgroup_count = 0u;
            d.record_count = 0u;
        }
    }
    // The host's words start zero; with nothing launched no finisher writes them.
    if (raised != 0u && pc.status != 0ul) {
        Words words = Words(pc.status);
        words.w[0] |= raised;
        words.w[STATUS_WORDS - 1u] |= raised;
    }
}

void starts_and_launches() {
    uint c = gl_WorkGroupID.x;
    // The chunks before this one, and all of them.
    uint before = 0u;
    uint all = 0u;
    uvec3 largest = uvec3(0u);
    for (uint j = gl_LocalInvocationIndex; j < pc.chunks; j += SCAN_SIZE) {
        uvec4 s = ChunkSums(pc.sums).s[j];
        before = j < c ? add_capped(before, s.x) : before;
        all = add_capped(all, s.x);
        largest = max(largest, s.yzw);
    }
    uvec3 unused = uvec3(0u);
    uint base = reduce(before, unused);
    uint total = reduce(all, largest);
    bool within = total < CAP && largest.x <= pc.max_grid_x && largest.y <= pc.max_grid_y &&
                  largest.z <= pc.max_grid_z;
    // Uniform: every invocation of every workgroup has the same `within`.
    if (within) {
        uint mine = 0u;
        for (uint r = first_record(); r < last_record(); ++r) {
            mine += workgroups(grid_of(r));
        }
        uint chunk_total;
        uint start = base + workgroup_inclusive_scan(mine, chunk_total) - mine;
        for (uint r = first_record(); r < last_record(); ++r) {
            Words(pc.starts).w[r] = start;
            start += workgroups(grid_of(r));
        }
    }
    if (c == 0u && gl_LocalInvocationIndex == 0u) {
        size_launches(within ? total : 0u, within ? 0u : STATUS_GRID_LIMIT);
    }
}

void main() {
    if (pc.phase == 0u) {
        chunk_sums();
    } else {
        starts_and_launches();
    }
}
