#version 450
// empty-levels baseline: the kernel of level p.x, run by an indirect dispatch
// whose arguments the previous level wrote (1x1x1 or 0x0x0). Writes
// out[level] = level + 1 and, while level < p.y (stop), the next level's
// arguments 1x1x1. b0 out, b1 indirect arguments (3 words a level).
layout(local_size_x = 1) in;
layout(push_constant) uniform P { uvec4 p; };
layout(set = 0, binding = 0, std430) buffer Out { uint outv[]; };
layout(set = 0, binding = 1, std430) buffer Args { uint args[]; };
void main() {
    uint level = p.x;
    outv[level] = level + 1u;
    if (level < p.y) {
        uint n = (level + 1u) * 3u;
        args[n] = 1u;
        args[n + 1u] = 1u;
        args[n + 2u] = 1u;
    }
}
