#version 450
// The mesh-node benchmark's hand-written baseline, one pass a level: every
// triangle of `src` becomes its three corner triangles in `dst` (the
// demo's sierpinski.hlsl `split`, without the graph). The last pass also
// writes the mesh-task arguments for the draw.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_scalar_block_layout : require

struct Tri { ivec2 a; ivec2 b; ivec2 c; uint level; };
layout(buffer_reference, scalar) buffer Tris { Tri t[]; };
layout(buffer_reference, std430) buffer Args { uint xyz[3]; };

layout(push_constant) uniform Push {
    Tris src;
    Tris dst;
    Args args;
    uint count;  // triangles in src
    uint last;   // 1: the last pass (it writes `args`)
};

layout(local_size_x = 64) in;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i == 0u && last != 0u) {
        args.xyz[0] = 3u * count;
        args.xyz[1] = 1u;
        args.xyz[2] = 1u;
    }
    if (i >= count) {
        return;
    }
    Tri t = src.t[i];
    ivec2 ab = (t.a + t.b) / 2;
    ivec2 bc = (t.b + t.c) / 2;
    ivec2 ca = (t.c + t.a) / 2;
    uint l = t.level - 1u;
    dst.t[3u * i] = Tri(t.a, ab, ca, l);
    dst.t[3u * i + 1u] = Tri(ab, t.b, bc, l);
    dst.t[3u * i + 2u] = Tri(ca, bc, t.c, l);
}
