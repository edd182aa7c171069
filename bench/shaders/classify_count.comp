#version 450
#extension GL_GOOGLE_include_directive : require
// classify baseline, pass 1: per-bin counts (a workgroup histogram in shared
// memory, then one global atomic per bin and workgroup).
#include "classify_common.glsl"
layout(local_size_x = 256) in;
shared uint hist[64];
void main() {
    uint t = gl_LocalInvocationIndex, i = gl_GlobalInvocationID.x;
    if (t < 64u) hist[t] = 0u;
    barrier();
    if (i < p.x) atomicAdd(hist[bin_of(items[i])], 1u);
    barrier();
    if (t < 64u && hist[t] != 0u) atomicAdd(meta[t], hist[t]);
}
