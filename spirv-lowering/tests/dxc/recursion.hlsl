// Recursion: [NodeMaxRecursionDepth(3)], GetRemainingRecursionLevels(),
// IsValid() on the self output, and a leaf node reached from the last level.
//
//   deepen (entry, broadcast, 1 group of 2 threads), record Rec { id, tag }
//     -> deepen  (itself) while levels remain: a binary tree of records
//     -> leaf    coalescing, once per group of the last level
//
// deepen at recursion depth d sees r = GetRemainingRecursionLevels() = 3 - d.
// Per group (record { id, tag }):
//   thread 0: Out[3 - r] += 1                       (groups per depth, words 0..3)
//             Out[8 + 3 - r] |= 1 << (r * 2 + (self.IsValid() ? 1 : 0))
//             Out[16 + id] += tag                   (tree node ids 0..14)
//   thread t (0..1), while r > 0: one record { id * 2 + 1 + t, tag * 2 + t } to itself
//   when r == 0: one LeafRec { value = id } to leaf (group records)
// leaf, thread j < Count(): Out[40] += value; thread 0: Out[41] += Count()
// Layouts: Rec id @0, tag @4; LeafRec value @0.

RWStructuredBuffer<uint> Out : register(u0);

struct Rec {
    uint id;
    uint tag;
};

struct LeafRec {
    uint value;
};

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeIsProgramEntry]
[NodeDispatchGrid(1, 1, 1)]
[NumThreads(2, 1, 1)]
[NodeMaxRecursionDepth(3)]
void deepen(DispatchNodeInputRecord<Rec> input,
            uint t : SV_GroupIndex,
            [MaxRecords(2)] [NodeID("deepen")] NodeOutput<Rec> self,
            [MaxRecords(1)] NodeOutput<LeafRec> leaf)
{
    Rec r = input.Get();
    uint levels = GetRemainingRecursionLevels();
    uint depth = 3 - levels;
    if (t == 0) {
        InterlockedAdd(Out[depth], 1);
        InterlockedOr(Out[8 + depth], 1u << (levels * 2 + (self.IsValid() ? 1 : 0)));
        InterlockedAdd(Out[16 + r.id], r.tag);
    }

    ThreadNodeOutputRecords<Rec> child = self.GetThreadNodeOutputRecords(levels > 0 ? 1 : 0);
    if (levels > 0) {
        child.Get().id = r.id * 2 + 1 + t;
        child.Get().tag = r.tag * 2 + t;
    }
    child.OutputComplete();

    GroupNodeOutputRecords<LeafRec> l = leaf.GetGroupNodeOutputRecords(levels == 0 ? 1 : 0);
    if (levels == 0 && t == 0) {
        l.Get().value = r.id;
    }
    l.OutputComplete();
}

[Shader("node")]
[NodeLaunch("coalescing")]
[NumThreads(4, 1, 1)]
void leaf([MaxRecords(4)] GroupNodeInputRecords<LeafRec> recs, uint j : SV_GroupIndex)
{
    if (j < recs.Count()) {
        InterlockedAdd(Out[40], recs[j].value);
    }
    if (j == 0) {
        InterlockedAdd(Out[41], recs.Count());
    }
}
