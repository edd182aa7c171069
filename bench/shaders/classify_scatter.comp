#version 450
#extension GL_GOOGLE_include_directive : require
// classify baseline, pass 3: scatter item indices into per-bin lists (ranks
// within the workgroup from shared atomics, one global atomic per bin).
#include "classify_common.glsl"
layout(local_size_x = 256) in;
shared uint hist[64];
shared uint base[64];
void main() {
    uint t = gl_LocalInvocationIndex, i = gl_GlobalInvocationID.x;
    if (t < 64u) hist[t] = 0u;
    barrier();
    uint b = 0u, rank = 0u;
    bool live = i < p.x;
    if (live) {
        b = bin_of(items[i]);
        rank = atomicAdd(hist[b], 1u);
    }
    barrier();
    if (t < 64u && hist[t] != 0u) base[t] = atomicAdd(meta[128u + t], hist[t]);
    barrier();
    if (live) list[base[b] + rank] = i;
}
