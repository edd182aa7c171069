// Plain compute kernel used by the pass-through tests: data[i] = data[i] * mul + add.
// Uses a descriptor set and push constants so that the layer's shadow-state
// interception of vkCmdBindDescriptorSets / vkCmdPushConstants is exercised.
// Rebuild: glslangValidator -V --target-env vulkan1.2 scale_add.comp -o scale_add.comp.spv
// (vulkan1.2, not 1.3: the 1.3 target emits LocalSizeId, which needs the
// maintenance4 feature enabled on the device; validation flags it otherwise.)
#version 450
layout(local_size_x = 64) in;

layout(set = 0, binding = 0, std430) buffer Data {
    uint values[];
} data;

layout(push_constant) uniform Push {
    uint mul;
    uint add;
    uint count;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.count) {
        data.values[i] = data.values[i] * pc.mul + pc.add;
    }
}
