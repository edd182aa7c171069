// Shared by the deferred baseline passes: bindings and the per-pixel work
// (the same as deferred.hlsl's nodes).
layout(push_constant) uniform P { uvec4 p; };  // p.x = width, p.y = tiles across, p.z = tiles, p.w = material
layout(set = 0, binding = 0, std430) readonly buffer G { uint gbuf[]; };
layout(set = 0, binding = 1, std430) buffer C { uint color[]; };
// [0, 48): indirect arguments per material; [64, 64 + 16 * tiles): tile lists
layout(set = 0, binding = 2, std430) buffer M { uint meta[]; };
layout(set = 0, binding = 3, std430) writeonly buffer F { uint final_[]; };
#define MATERIALS 16u
#define TILE 8u
#define LISTS 64u
uint pixel_of(uint tile, uvec2 local) {
    uvec2 q = uvec2(tile & 0xffffu, tile >> 16) * TILE + local;
    return q.y * p.x + q.x;
}
uint shade_pixel(uint g, uint m) {
    uint x = g;
    for (uint j = 0u; j < 16u + 2u * m; ++j) x = (x * 1664525u + 1013904223u) ^ m;
    return x;
}
uint compose_pixel(uint c, uint g) { return (c ^ (c >> 15)) * 0x9E3779B1u + (g >> 4); }
