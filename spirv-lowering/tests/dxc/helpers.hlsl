// GetThreadNodeOutputRecords and GetGroupNodeOutputRecords with helper
// functions, in the form DXC 1.9 compiles correctly: helpers take the
// *record* by `inout` (e.g. `fill(rec.Get(), v)`) or return a record by
// value; never the NodeOutput / *NodeOutputRecords object itself (DXC 1.9
// miscompiles that: see README.md).
//
//   start (entry, broadcast, static grid (2, 1, 1) of 8 threads), StartRec { seed }
//     -> each   thread launch, ItemRec: two records per thread, per-thread alloc
//     -> batch  coalescing (4 threads, up to 4 records), BatchRec: one per group
//
// start, group g (0..1), thread t (0..7), per host record:
//   k = g * 8 + t (0..15)
//   ItemRec 0 = fill(k, seed):       { slot = k,      value = seed + k }
//   ItemRec 1 = fill(k + 16, seed * 2): { slot = k + 16, value = seed * 2 + k + 16 }
//   BatchRec = make_batch(g, seed) (returned by value, stored by thread 0):
//              { slot = 40 + g, value = seed * 3 + g, weight = 5 }
// each:  Out[slot] += value
// batch, thread j < Count(): Out[slot] += value * weight (via a helper taking
//        the input record by value); thread 0: Out[48] += Count()
// Layouts: StartRec seed @0; ItemRec slot @0, value @4;
//          BatchRec slot @0, value @4, weight @8.

RWStructuredBuffer<uint> Out : register(u0);

struct StartRec {
    uint seed;
};

struct ItemRec {
    uint slot;
    uint value;
};

struct BatchRec {
    uint slot;
    uint value;
    uint weight;
};

void fill(inout ItemRec r, uint slot, uint seed)
{
    r.slot = slot;
    r.value = seed + slot;
}

BatchRec make_batch(uint g, uint seed)
{
    BatchRec b;
    b.slot = 40 + g;
    b.value = seed * 3 + g;
    b.weight = 5;
    return b;
}

void accumulate(BatchRec b)
{
    InterlockedAdd(Out[b.slot], b.value * b.weight);
}

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeIsProgramEntry]
[NodeDispatchGrid(2, 1, 1)]
[NumThreads(8, 1, 1)]
void start(DispatchNodeInputRecord<StartRec> input,
           uint3 gid : SV_GroupID,
           uint t : SV_GroupIndex,
           [MaxRecords(16)] NodeOutput<ItemRec> each,
           [MaxRecords(1)] NodeOutput<BatchRec> batch)
{
    uint seed = input.Get().seed;
    uint k = gid.x * 8 + t;

    ThreadNodeOutputRecords<ItemRec> items = each.GetThreadNodeOutputRecords(2);
    fill(items.Get(0), k, seed);
    fill(items.Get(1), k + 16, seed * 2);
    items.OutputComplete();

    GroupNodeOutputRecords<BatchRec> b = batch.GetGroupNodeOutputRecords(1);
    if (t == 0) {
        b.Get() = make_batch(gid.x, seed);
    }
    b.OutputComplete();
}

[Shader("node")]
[NodeLaunch("thread")]
void each(ThreadNodeInputRecord<ItemRec> rec)
{
    InterlockedAdd(Out[rec.Get().slot], rec.Get().value);
}

[Shader("node")]
[NodeLaunch("coalescing")]
[NumThreads(4, 1, 1)]
void batch([MaxRecords(4)] GroupNodeInputRecords<BatchRec> recs, uint j : SV_GroupIndex)
{
    if (j < recs.Count()) {
        accumulate(recs[j]);
    }
    if (j == 0) {
        InterlockedAdd(Out[48], recs.Count());
    }
}
