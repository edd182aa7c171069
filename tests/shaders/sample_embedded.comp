// Compute kernel of graph_restore_state.rs's embedded-sampler test: samples
// a 2x1 texture through set 1's sampler (an embedded immutable sampler) at
// u = 0.3 and stores the red channel, 0..255, in result.values[0]. Nearest
// filtering reads texel 0 alone; linear filtering mixes in a tenth of texel
// 1, so the value tells which sampler was bound.
// Rebuild: glslangValidator -V --target-env vulkan1.2 sample_embedded.comp -o sample_embedded.comp.spv
#version 450
layout(local_size_x = 1) in;

layout(set = 0, binding = 0) uniform texture2D tex;
layout(set = 0, binding = 1, std430) buffer Result {
    uint values[];
} result;
layout(set = 1, binding = 0) uniform sampler smp;

void main() {
    vec4 texel = textureLod(sampler2D(tex, smp), vec2(0.3, 0.5), 0.0);
    result.values[0] = uint(round(texel.r * 255.0));
}
