#version 450
#extension GL_GOOGLE_include_directive : require
// classify baseline, pass 4: bin p.x's work, one indirect dispatch per bin
// (64 threads a group), each thread one item of the bin's list.
#include "classify_common.glsl"
layout(local_size_x = 64) in;
void main() {
    uint b = p.x, j = gl_GlobalInvocationID.x;
    if (j >= meta[b]) return;
    uint i = list[meta[64u + b] + j];
    outv[i] = shade(items[i], b);
}
