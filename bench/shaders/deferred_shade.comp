#version 450
// Material p.w: one workgroup per tile of its list.
#extension GL_GOOGLE_include_directive : require
#include "deferred_common.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
void main() {
    uint tile = meta[LISTS + p.w * p.z + gl_WorkGroupID.x];
    uint q = pixel_of(tile, gl_LocalInvocationID.xy);
    uint g = gbuf[q];
    if ((g & (MATERIALS - 1u)) == p.w) color[q] = shade_pixel(g, p.w);
}
