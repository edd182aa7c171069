// Shared by the classify baseline passes: bindings, the bin hash and the
// per-bin work (the same as classify.spvasm's nodes).
layout(push_constant) uniform P { uvec4 p; };            // p.x = items (or the bin)
layout(set = 0, binding = 0, std430) readonly buffer Items { uint items[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Out { uint outv[]; };
// counts [0, 64), offsets [64, 128), cursors [128, 192), indirect args [192, 384)
layout(set = 0, binding = 2, std430) buffer Meta { uint meta[]; };
layout(set = 0, binding = 3, std430) buffer List { uint list[]; };
uint bin_of(uint item) { return (item * 2654435761u) >> 26; }
uint shade(uint item, uint k) {
    uint x = item;
    for (uint j = 0u; j < 16u; ++j) x = (x * 1664525u + 1013904223u) ^ k;
    return x;
}
