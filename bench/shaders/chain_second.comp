#version 450
// chain baseline, pass 2 of 3 (secondNode by hand): one thread per pair adds
// its increment to uav[record] and forwards the record index.
// p.x = pair count. b0 uav, b2 pairs, b3 forwarded indices.
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uvec4 p; };
layout(set = 0, binding = 0, std430) buffer Uav { uint uav[]; };
layout(set = 0, binding = 2, std430) readonly buffer Pairs { uvec2 pairs[]; };
layout(set = 0, binding = 3, std430) writeonly buffer Fwd { uint fwd[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.x) return;
    uvec2 pr = pairs[i];
    atomicAdd(uav[pr.x], pr.y);
    fwd[i] = pr.x;
}
