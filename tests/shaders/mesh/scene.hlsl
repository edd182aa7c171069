// Compute nodes of the mesh-node tests (tests/tests/graph_mesh_nodes.rs):
//   scene (entry, one group of 8): one Row record per row y < tiles_y
//   row: one Quad record per tile x < tiles_x, to tile[(x + y) % 3] (a mesh node array)
// Quad.grid is the mesh node's dispatch grid (grid x grid workgroups a tile).
struct Scene { uint tiles_x; uint tiles_y; uint grid; };
struct Row { uint y; uint tiles_x; uint grid; };
struct Quad { uint tile; uint2 grid : SV_DispatchGrid; uint color; };

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeIsProgramEntry]
[NodeDispatchGrid(1, 1, 1)]
[NumThreads(8, 1, 1)]
void scene(DispatchNodeInputRecord<Scene> input, uint t : SV_GroupIndex,
           [MaxRecords(8)] NodeOutput<Row> row)
{
    Scene s = input.Get();
    bool live = t < s.tiles_y;
    ThreadNodeOutputRecords<Row> o = row.GetThreadNodeOutputRecords(live ? 1 : 0);
    if (live) {
        o.Get().y = t;
        o.Get().tiles_x = s.tiles_x;
        o.Get().grid = s.grid;
    }
    o.OutputComplete();
}

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeDispatchGrid(1, 1, 1)]
[NumThreads(8, 1, 1)]
void row(DispatchNodeInputRecord<Row> input, uint t : SV_GroupIndex,
         [MaxRecords(8)] [NodeArraySize(3)] NodeOutputArray<Quad> tile)
{
    Row r = input.Get();
    bool live = t < r.tiles_x;
    ThreadNodeOutputRecords<Quad> o = tile[(t + r.y) % 3].GetThreadNodeOutputRecords(live ? 1 : 0);
    if (live) {
        o.Get().tile = t | (r.y << 16);
        o.Get().grid = uint2(r.grid, r.grid);
        o.Get().color = 1 + t + 8 * r.y;
    }
    o.OutputComplete();
}
