#version 450
#extension GL_GOOGLE_include_directive : require
// refine baseline, the fill pass of level p.x: max(1, s*s/256) workgroups
// per uniform tile of the level (s = n >> level), 4 pixels a thread.
#include "refine_common.glsl"
layout(local_size_x = 64) in;
void main() {
    uint l = p.x, cap = p.z, s = n >> l;
    uint wpt = max(1u, s * s / 256u);
    uint tile = gl_WorkGroupID.x / wpt, w = gl_WorkGroupID.x % wpt;
    if (tile >= state[64u + 4u * l + 3u]) return;
    uvec4 f = lists[(2u + (l & 1u)) * cap + tile];
    uint gid = w * 64u + gl_LocalInvocationIndex;
    for (uint k = 0u; k < 4u; ++k) {
        uint q = gid * 4u + k;
        if (q < s * s) image[(f.y + q / s) * n + f.x + q % s] = f.w;
    }
}
