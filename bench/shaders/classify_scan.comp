#version 450
#extension GL_GOOGLE_include_directive : require
// classify baseline, pass 2: exclusive prefix sum of the 64 counts into the
// offsets and cursors, and each bin's indirect arguments (64 threads a group).
#include "classify_common.glsl"
layout(local_size_x = 64) in;
shared uint s[64];
void main() {
    uint t = gl_LocalInvocationIndex, c = meta[t];
    s[t] = c;
    barrier();
    for (uint d = 1u; d < 64u; d <<= 1) {
        uint v = t >= d ? s[t - d] : 0u;
        barrier();
        s[t] += v;
        barrier();
    }
    uint off = s[t] - c;
    meta[64u + t] = off;
    meta[128u + t] = off;
    meta[192u + 3u * t] = (c + 63u) / 64u;
    meta[193u + 3u * t] = 1u;
    meta[194u + 3u * t] = 1u;
}
