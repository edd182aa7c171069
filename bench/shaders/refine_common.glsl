// Shared by the refine baseline passes: bindings, the Q12 Mandelbrot
// iteration count (bit-identical to refine.spvasm's), the state layout.
layout(push_constant) uniform P { uvec4 p; };   // p.x = level, p.z = list capacity
layout(set = 0, binding = 0, std430) writeonly buffer Image { uint image[]; };
layout(set = 0, binding = 1, std430) readonly buffer Params { uint n; uint step; };
// tile args of level l at 4l { x, y, z, count }, fill args at 64 + 4l,
// leaf args at 128
layout(set = 0, binding = 2, std430) buffer State { uint state[]; };
// tile lists (ping, pong) at 0 and cap, fill lists at 2 cap and 3 cap, leaves at 4 cap
layout(set = 0, binding = 3, std430) buffer Lists { uvec4 lists[]; };
uint mandel(uint px, uint py) {
    int cx = int(px * step) - 9216, cy = int(py * step) - 6144;
    int zx = 0, zy = 0;
    uint it = 0u;
    for (; it < 64u; ++it) {
        int x2 = (zx * zx) >> 12, y2 = (zy * zy) >> 12;
        if (x2 + y2 > 16384) break;
        int nzy = (((zx * zy) * 2) >> 12) + cy;
        zx = x2 - y2 + cx;
        zy = nzy;
    }
    return it;
}
