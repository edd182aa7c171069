// The bench's deferred-shading work graph (bench/src/workloads/deferred.rs),
// modeled on the published deferred-shading work-graph case studies:
//
//   classify (entry)  one 8x8 workgroup per screen tile, the grid from the
//                     record: finds the tile's materials (the G-buffer's low
//                     4 bits), leaves their count in Remaining[tile] and
//                     sends one TileRecord per material to shade[material]
//     -> shade[16]    a node array, one node per material: shades the
//                     tile's pixels of its material into Color; the last
//                     material of a tile to finish sends the tile on
//     -> compose      combines the tile's shaded pixels into Final
//
// Bindings: G-buffer, Color, Remaining (a word per tile), Final.

RWStructuredBuffer<uint> GBuffer : register(u0);
RWStructuredBuffer<uint> Color : register(u1);
RWStructuredBuffer<uint> Remaining : register(u2);
RWStructuredBuffer<uint> Final : register(u3);

#define MATERIALS 16
#define TILE 8

struct ScreenRecord {
    uint2 grid : SV_DispatchGrid; // tiles across and down
    uint width;                   // pixels a row
};

struct TileRecord {
    uint tile;     // tile x | tile y << 16
    uint material;
    uint width;
};

struct ComposeRecord {
    uint tile;
    uint width;
};

uint pixel_of(uint tile, uint2 local, uint width) {
    uint2 p = uint2(tile & 0xffff, tile >> 16) * TILE + local;
    return p.y * width + p.x;
}

// Per-material shading: costlier for the rarer materials.
uint shade_pixel(uint g, uint m) {
    uint x = g;
    for (uint j = 0; j < 16 + 2 * m; ++j) {
        x = (x * 1664525u + 1013904223u) ^ m;
    }
    return x;
}

uint compose_pixel(uint c, uint g) {
    return (c ^ (c >> 15)) * 0x9E3779B1u + (g >> 4);
}

groupshared uint tile_mask;

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeIsProgramEntry]
[NodeMaxDispatchGrid(512, 512, 1)]
[NumThreads(TILE, TILE, 1)]
void classify(DispatchNodeInputRecord<ScreenRecord> screen,
              uint3 gid : SV_GroupID,
              uint2 local : SV_GroupThreadID,
              uint t : SV_GroupIndex,
              [MaxRecords(MATERIALS)] [NodeArraySize(MATERIALS)] NodeOutputArray<TileRecord> shade)
{
    uint width = screen.Get().width;
    uint tile = gid.x | gid.y << 16;
    if (t == 0) {
        tile_mask = 0;
    }
    GroupMemoryBarrierWithGroupSync();
    InterlockedOr(tile_mask, 1u << (GBuffer[pixel_of(tile, local, width)] & (MATERIALS - 1)));
    GroupMemoryBarrierWithGroupSync();
    uint mask = tile_mask;
    if (t == 0) {
        Remaining[gid.y * screen.Get().grid.x + gid.x] = countbits(mask);
    }
    // Invocation m sends the tile to material m when the tile has it.
    uint m = t % MATERIALS;
    bool present = t < MATERIALS && (mask >> m & 1) != 0;
    ThreadNodeOutputRecords<TileRecord> rec = shade[m].GetThreadNodeOutputRecords(present ? 1 : 0);
    if (present) {
        rec.Get().tile = tile;
        rec.Get().material = m;
        rec.Get().width = width;
    }
    rec.OutputComplete();
}

groupshared uint tile_done;

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeDispatchGrid(1, 1, 1)]
[NumThreads(TILE, TILE, 1)]
void shade(DispatchNodeInputRecord<TileRecord> input,
           uint2 local : SV_GroupThreadID,
           uint t : SV_GroupIndex,
           [MaxRecords(1)] NodeOutput<ComposeRecord> compose)
{
    TileRecord r = input.Get();
    uint p = pixel_of(r.tile, local, r.width);
    uint g = GBuffer[p];
    if ((g & (MATERIALS - 1)) == r.material) {
        Color[p] = shade_pixel(g, r.material);
    }
    // The tile's last material sends it on (its Color writes made visible first).
    DeviceMemoryBarrierWithGroupSync();
    if (t == 0) {
        uint tiles_across = (r.width + TILE - 1) / TILE;
        uint before;
        InterlockedAdd(Remaining[(r.tile >> 16) * tiles_across + (r.tile & 0xffff)], 0xffffffffu, before);
        tile_done = before == 1 ? 1 : 0;
    }
    GroupMemoryBarrierWithGroupSync();
    bool last = tile_done != 0;
    GroupNodeOutputRecords<ComposeRecord> sent = compose.GetGroupNodeOutputRecords(last ? 1 : 0);
    if (last && t == 0) {
        sent.Get().tile = r.tile;
        sent.Get().width = r.width;
    }
    sent.OutputComplete();
}

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeDispatchGrid(1, 1, 1)]
[NumThreads(TILE, TILE, 1)]
void compose(DispatchNodeInputRecord<ComposeRecord> input, uint2 local : SV_GroupThreadID)
{
    ComposeRecord r = input.Get();
    uint p = pixel_of(r.tile, local, r.width);
    Final[p] = compose_pixel(Color[p], GBuffer[p]);
}
