// One node per module, entry named `main`: the member of every node array
// of renamed_fanout.hlsl, renamed by the application to ("dense", 2..5),
// ("sparse", 1/3/4/6) and ("unbounded", 0/5/9/17/31). Its own index is not
// visible in HLSL, so the application gives it as specialization constant 0.
// [NodeID("sink", 7)] on the entry: DXC drops the name (the entry point stays
// `main`) and keeps the index (ShaderIndexAMDX 7); the application overrides both.
//
// Thread launch, SinkRec { slot @0, value @4 }: Out[slot] += value * 256 + kIndex.

RWStructuredBuffer<uint> Out : register(u0);

[[vk::constant_id(0)]] const uint kIndex = 0;

struct SinkRec {
    uint slot;
    uint value;
};

[Shader("node")]
[NodeLaunch("thread")]
[NodeID("sink", 7)]
void main(ThreadNodeInputRecord<SinkRec> rec)
{
    InterlockedAdd(Out[rec.Get().slot], rec.Get().value * 256 + kIndex);
}
