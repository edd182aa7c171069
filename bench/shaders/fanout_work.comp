#version 450
// fanout baseline, pass 2 of 2: one indirect dispatch of all the records'
// workgroups (rows of p.y); each workgroup finds its record by binary search
// over the starts, then does the node's work: thread t adds (id ^ w) + t to
// out[off + w]. p.x = record count, p.y = workgroups per row.
// b0 out, b1 records { grid, id, off }, b2 starts (+ total).
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uvec4 p; };
layout(set = 0, binding = 0, std430) buffer Out { uint outv[]; };
layout(set = 0, binding = 1, std430) readonly buffer Records { uint records[]; };
layout(set = 0, binding = 2, std430) readonly buffer Starts { uint starts[]; };
void main() {
    uint wg = gl_WorkGroupID.y * p.y + gl_WorkGroupID.x;
    if (wg >= starts[p.x]) return;
    uint lo = 0u, hi = p.x - 1u;
    while (lo < hi) {
        uint mid = (lo + hi + 1u) >> 1;
        if (starts[mid] <= wg) lo = mid; else hi = mid - 1u;
    }
    uint w = wg - starts[lo];
    uint id = records[lo * 3u + 1u], off = records[lo * 3u + 2u];
    atomicAdd(outv[off + w], (id ^ w) + gl_LocalInvocationIndex);
}
