// HLSL scalar record layouts and a `uint16_t3` dispatch grid (compiled with
// -enable-16bit-types). Two nodes in one library module.
//
//   layouts (entry, thread launch)  reads a Wide record from the host
//     -> grid16  [NodeMaxDispatchGrid(4, 2, 2)], SV_DispatchGrid as `uint16_t3`
//
// Wide (44 bytes; offsets as DXC lays them out, checked in README.md):
//   h  uint16_t  @0
//   k  uint16_t  @2
//   a  uint      @4
//   s  uint3     @8   (8..20: straddles the 16-byte boundary)
//   c  uint2     @20
//   d  uint3     @28  (28..40: straddles the 32-byte boundary)
//   e  uint16_t2 @40
// layouts, per record (atomics, so records accumulate):
//   Out[0] += h, Out[1] += k, Out[2] += a, Out[3..6] += s, Out[6..8] += c,
//   Out[8..11] += d, Out[11] += e.x, Out[12] += e.y, Out[13] += 1
//   then one G16 { tag = h + k, grid = (s.x % 4 + 1, c.y % 2 + 1, d.z % 2 + 1),
//   value = a } to grid16.
// G16 (12 bytes): tag uint16_t @0, grid uint16_t3 @2, value uint @8.
// grid16, group (x, y, z), thread t (0..3), l = x + 4 * (y + 2 * z) (0..15):
//   Out[64 + l * 4 + t] += value + tag                        (words 64..127)

RWStructuredBuffer<uint> Out : register(u0);

struct Wide {
    uint16_t h;
    uint16_t k;
    uint a;
    uint3 s;
    uint2 c;
    uint3 d;
    uint16_t2 e;
};

struct G16 {
    uint16_t tag;
    uint16_t3 grid : SV_DispatchGrid;
    uint value;
};

[Shader("node")]
[NodeLaunch("thread")]
[NodeIsProgramEntry]
void layouts(ThreadNodeInputRecord<Wide> input, [MaxRecords(1)] NodeOutput<G16> grid16)
{
    Wide w = input.Get();
    InterlockedAdd(Out[0], (uint)w.h);
    InterlockedAdd(Out[1], (uint)w.k);
    InterlockedAdd(Out[2], w.a);
    InterlockedAdd(Out[3], w.s.x);
    InterlockedAdd(Out[4], w.s.y);
    InterlockedAdd(Out[5], w.s.z);
    InterlockedAdd(Out[6], w.c.x);
    InterlockedAdd(Out[7], w.c.y);
    InterlockedAdd(Out[8], w.d.x);
    InterlockedAdd(Out[9], w.d.y);
    InterlockedAdd(Out[10], w.d.z);
    InterlockedAdd(Out[11], (uint)w.e.x);
    InterlockedAdd(Out[12], (uint)w.e.y);
    InterlockedAdd(Out[13], 1);

    ThreadNodeOutputRecords<G16> o = grid16.GetThreadNodeOutputRecords(1);
    o.Get().tag = w.h + w.k;
    o.Get().grid = uint16_t3(w.s.x % 4 + 1, w.c.y % 2 + 1, w.d.z % 2 + 1);
    o.Get().value = w.a;
    o.OutputComplete();
}

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeMaxDispatchGrid(4, 2, 2)]
[NumThreads(4, 1, 1)]
void grid16(DispatchNodeInputRecord<G16> input, uint3 gid : SV_GroupID, uint t : SV_GroupIndex)
{
    uint l = gid.x + 4 * (gid.y + 2 * gid.z);
    InterlockedAdd(Out[64 + l * 4 + t], input.Get().value + (uint)input.Get().tag);
}
