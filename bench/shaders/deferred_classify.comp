#version 450
// One workgroup per tile: the tile's materials, each appended to its list.
#extension GL_GOOGLE_include_directive : require
#include "deferred_common.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
shared uint mask;
void main() {
    uint t = gl_LocalInvocationIndex;
    uint tile = gl_WorkGroupID.x | gl_WorkGroupID.y << 16;
    if (t == 0u) mask = 0u;
    barrier();
    atomicOr(mask, 1u << (gbuf[pixel_of(tile, gl_LocalInvocationID.xy)] & (MATERIALS - 1u)));
    barrier();
    if (t < MATERIALS && (mask >> t & 1u) != 0u) {
        uint at = atomicAdd(meta[3u * t], 1u);
        meta[LISTS + t * p.z + at] = tile;
    }
    if (tile == 0u && t < MATERIALS) {
        meta[3u * t + 1u] = 1u;
        meta[3u * t + 2u] = 1u;
    }
}
