#version 450
#extension GL_GOOGLE_include_directive : require
// refine baseline, the tile pass of level p.x (one indirect dispatch a
// level, one thread a tile of the level's list): corners equal -> fill list
// (and the fill pass's workgroups), s == 2 -> leaf list, else 4 children into
// the next level's list (and its workgroup count).
#include "refine_common.glsl"
layout(local_size_x = 64) in;
void main() {
    uint l = p.x, cap = p.z, i = gl_GlobalInvocationID.x;
    if (i >= state[4u * l + 3u]) return;
    uvec4 tl = lists[(l & 1u) * cap + i];
    uint x = tl.x, y = tl.y, s = tl.z, x1 = x + s - 1u, y1 = y + s - 1u;
    uint c0 = mandel(x, y), c1 = mandel(x1, y), c2 = mandel(x, y1), c3 = mandel(x1, y1);
    if (c0 == c1 && c0 == c2 && c0 == c3) {
        uint slot = atomicAdd(state[64u + 4u * l + 3u], 1u);
        if (slot < cap) lists[(2u + (l & 1u)) * cap + slot] = uvec4(x, y, s, c0);
        atomicAdd(state[64u + 4u * l], max(1u, s * s / 256u));
    } else if (s == 2u) {
        uint slot = atomicAdd(state[131], 1u);
        if (slot < cap) lists[4u * cap + slot] = uvec4(x, y, 0u, 0u);
        if (slot % 8u == 0u) atomicAdd(state[128], 1u);
    } else {
        uint h = s >> 1, nl = l + 1u;
        uint s0 = atomicAdd(state[4u * nl + 3u], 4u);
        uint base = (nl & 1u) * cap;
        for (uint k = 0u; k < 4u; ++k) {
            uint slot = s0 + k;
            if (slot < cap) lists[base + slot] = uvec4(x + (k & 1u) * h, y + (k >> 1) * h, h, 0u);
            if (slot % 64u == 0u) atomicAdd(state[4u * nl], 1u);
        }
    }
}
