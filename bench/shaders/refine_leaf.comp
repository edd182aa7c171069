#version 450
#extension GL_GOOGLE_include_directive : require
// refine baseline, the leaf pass (one indirect dispatch after all levels):
// 8 leaves of 2 x 2 pixels a workgroup of 32, one pixel a thread.
#include "refine_common.glsl"
layout(local_size_x = 32) in;
void main() {
    uint t = gl_LocalInvocationIndex, r = gl_WorkGroupID.x * 8u + (t >> 2);
    if (r >= state[131]) return;
    uvec4 lf = lists[4u * p.z + r];
    uint px = lf.x + (t & 1u), py = lf.y + ((t >> 1) & 1u);
    image[py * n + px] = mandel(px, py);
}
