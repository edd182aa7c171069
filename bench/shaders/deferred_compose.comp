#version 450
// Every tile: the shaded pixels combined into the final image.
#extension GL_GOOGLE_include_directive : require
#include "deferred_common.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
void main() {
    uint q = pixel_of(gl_WorkGroupID.x | gl_WorkGroupID.y << 16, gl_LocalInvocationID.xy);
    final_[q] = compose_pixel(color[q], gbuf[q]);
}
