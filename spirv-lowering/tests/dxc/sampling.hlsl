// A thread node that samples a texture through a sampler of its own set
// (set 1 binding 0), the shape of an embedded immutable sampler in a
// descriptor buffer: Out[i] = the red channel at the centre, times 255.
// Used by tests/tests/graph_descriptor_buffer.rs
// (embedded_samplers_reach_the_graph).
[[vk::binding(0, 0)]] Texture2D<float4> Tex;
[[vk::binding(1, 0)]] RWStructuredBuffer<uint> Out;
[[vk::binding(0, 1)]] SamplerState Smp;

struct Rec {
    uint slot;
};

[Shader("node")]
[NodeLaunch("thread")]
[NodeIsProgramEntry]
void sampleNode(ThreadNodeInputRecord<Rec> r) {
    float4 c = Tex.SampleLevel(Smp, float2(0.5, 0.5), 0);
    Out[r.Get().slot] = uint(c.x * 255.0 + 0.5);
}
