#version 450
// chain baseline, pass 3 of 3 (thirdNode by hand): 32 indices a workgroup,
// counted per record in shared memory, then added to uav[4 + record].
// p.x = index count. b0 uav, b3 forwarded indices.
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uvec4 p; };
layout(set = 0, binding = 0, std430) buffer Uav { uint uav[]; };
layout(set = 0, binding = 3, std430) readonly buffer Fwd { uint fwd[]; };
shared uint sums[4];
void main() {
    uint t = gl_LocalInvocationIndex, i = gl_GlobalInvocationID.x;
    if (t < 4u) sums[t] = 0u;
    barrier();
    if (i < p.x) atomicAdd(sums[fwd[i]], 1u);
    barrier();
    if (t < 4u) atomicAdd(uav[4u + t], sums[t]);
}
