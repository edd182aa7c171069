// Broadcasting launch, three ways, in one library module (several nodes).
//
//   spawn  (entry)  static grid: [NodeDispatchGrid(3, 2, 1)], 4x2 threads
//     -> grid1      [NodeMaxDispatchGrid(4, 1, 1)], SV_DispatchGrid as `uint`
//     -> grid3      [NodeMaxDispatchGrid(2, 2, 3)], SV_DispatchGrid as `uint3`
//
// Host record of spawn: SpawnRec { base, scale }. For a record and its
// group g = gid.y * 3 + gid.x (0..5), thread t = SV_GroupIndex (0..7):
//   Out[g * 8 + t]                += base                    (words 0..47)
//   one Grid1Rec { value = base * scale + g, grid = g % 4 + 1 } per group
//   one Grid3Rec { tag = base + 100 * g, grid = (g % 2 + 1, g / 3 + 1, g % 3 + 1) }
// grid1, group x (0..grid-1), thread t (0..15):
//   Out[64 + x * 16 + t]          += value                   (words 64..127)
// grid3, group (x, y, z), thread t (0..7), l = x + 2 * (y + 2 * z) (0..11):
//   Out[128 + l * 8 + t]          += tag                     (words 128..223)
// Record layouts (HLSL scalar layout, as DXC lays them out):
//   SpawnRec: base @0, scale @4 (8 bytes)
//   Grid1Rec: value @0, grid @4 (8 bytes): the grid member is not first
//   Grid3Rec: tag @0, grid @4 (uint3 at offset 4, 16 bytes)

RWStructuredBuffer<uint> Out : register(u0);

struct SpawnRec {
    uint base;
    uint scale;
};

struct Grid1Rec {
    uint value;
    uint grid : SV_DispatchGrid;
};

struct Grid3Rec {
    uint tag;
    uint3 grid : SV_DispatchGrid;
};

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeIsProgramEntry]
[NodeDispatchGrid(3, 2, 1)]
[NumThreads(4, 2, 1)]
void spawn(DispatchNodeInputRecord<SpawnRec> input,
           uint3 gid : SV_GroupID,
           uint t : SV_GroupIndex,
           [MaxRecords(1)] NodeOutput<Grid1Rec> grid1,
           [MaxRecords(1)] NodeOutput<Grid3Rec> grid3)
{
    uint g = gid.y * 3 + gid.x;
    SpawnRec r = input.Get();
    InterlockedAdd(Out[g * 8 + t], r.base);

    GroupNodeOutputRecords<Grid1Rec> o1 = grid1.GetGroupNodeOutputRecords(1);
    GroupNodeOutputRecords<Grid3Rec> o3 = grid3.GetGroupNodeOutputRecords(1);
    if (t == 0) {
        o1.Get().value = r.base * r.scale + g;
        o1.Get().grid = g % 4 + 1;
        o3.Get().tag = r.base + 100 * g;
        o3.Get().grid = uint3(g % 2 + 1, g / 3 + 1, g % 3 + 1);
    }
    o1.OutputComplete();
    o3.OutputComplete();
}

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeMaxDispatchGrid(4, 1, 1)]
[NumThreads(16, 1, 1)]
void grid1(DispatchNodeInputRecord<Grid1Rec> input, uint3 gid : SV_GroupID, uint t : SV_GroupIndex)
{
    InterlockedAdd(Out[64 + gid.x * 16 + t], input.Get().value);
}

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeMaxDispatchGrid(2, 2, 3)]
[NumThreads(2, 2, 2)]
void grid3(DispatchNodeInputRecord<Grid3Rec> input, uint3 gid : SV_GroupID, uint t : SV_GroupIndex)
{
    uint l = gid.x + 2 * (gid.y + 2 * gid.z);
    InterlockedAdd(Out[128 + l * 8 + t], input.Get().tag);
}
