// The demo's mesh-node picture: a Sierpinski triangle. `split` (the entry,
// thread launch) cuts a triangle into its three corner triangles and
// enqueues them to itself until `level` reaches 0, then hands the triangle
// to the mesh node `tri` (sierpinski_tri.spvasm), which draws it. Vertices
// are integer pixel positions of a 512 x 512 picture; with the first
// triangle (256, 0), (0, 512), (512, 512) and at most 7 levels every
// midpoint stays an integer, and no edge (slope 0 or +-2 through integer
// points) passes through a pixel centre, so coverage is exact.

struct Tri {
    int2 a;
    int2 b;
    int2 c;
    uint level;
};

[Shader("node")]
[NodeLaunch("thread")]
[NodeIsProgramEntry]
[NodeMaxRecursionDepth(8)]
void split(ThreadNodeInputRecord<Tri> input,
           [MaxRecords(3)] [NodeId("split")] NodeOutput<Tri> kids,
           [MaxRecords(1)] [NodeId("tri")] NodeOutput<Tri> tri)
{
    Tri t = input.Get();
    bool leaf = t.level == 0 || GetRemainingRecursionLevels() == 0;
    ThreadNodeOutputRecords<Tri> k = kids.GetThreadNodeOutputRecords(leaf ? 0 : 3);
    if (!leaf) {
        int2 ab = (t.a + t.b) / 2;
        int2 bc = (t.b + t.c) / 2;
        int2 ca = (t.c + t.a) / 2;
        k.Get(0).a = t.a; k.Get(0).b = ab;  k.Get(0).c = ca;  k.Get(0).level = t.level - 1;
        k.Get(1).a = ab;  k.Get(1).b = t.b; k.Get(1).c = bc;  k.Get(1).level = t.level - 1;
        k.Get(2).a = ca;  k.Get(2).b = bc;  k.Get(2).c = t.c; k.Get(2).level = t.level - 1;
    }
    k.OutputComplete();
    ThreadNodeOutputRecords<Tri> d = tri.GetThreadNodeOutputRecords(leaf ? 1 : 0);
    if (leaf) {
        d.Get() = t;
    }
    d.OutputComplete();
}
