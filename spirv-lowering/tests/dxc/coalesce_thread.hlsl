// Coalescing launch with Count(), thread launch, EmptyNodeInput and
// EmptyNodeOutput, in one library module.
//
//   feed (entry, broadcast, 1 group of 32 threads), record FeedRec { n, mul }
//     -> coal  coalescing, 8 threads, up to 8 CoalRec records a group
//     -> thr   thread launch, ThrRec records
//     -> tick  coalescing, 4 threads, EmptyNodeInput (up to 4 records a group)
//     -> tock  broadcast, static grid (2, 1, 1) of 2 threads, no input
//              (DXC allows EmptyNodeInput only on coalescing nodes)
//
// feed, thread i (0..31), per host record (n <= 32):
//   i < n: one CoalRec { slot = 8 + i % 16, value = mul * i + 1 } to coal
//          two ThrRec to thr: { slot = 32 + i, value = mul + i },
//                             { slot = 32 + (i + 5) % 32, value = 1000 }
//          one record to tick (ThreadIncrementOutputCount(1))
//   the group: three records to tock (GroupIncrementOutputCount(3))
// coal, thread j < Count(): Out[slot] += value; thread 0: Out[0] += Count()
// thr:  Out[slot] += value
// tick, thread j < Count(): Out[1] += 1; thread 0: Out[4] += Count()
// tock, each of its 2 x 2 threads: Out[2] += 1
// Word 3 stays 0. Totals: Out[0] = Out[1] = Out[4] = sum of n, Out[2] = 12 per record.
// Layouts: FeedRec n @0, mul @4; CoalRec and ThrRec slot @0, value @4.

RWStructuredBuffer<uint> Out : register(u0);

struct FeedRec {
    uint n;
    uint mul;
};

struct CoalRec {
    uint slot;
    uint value;
};

struct ThrRec {
    uint slot;
    uint value;
};

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeIsProgramEntry]
[NodeDispatchGrid(1, 1, 1)]
[NumThreads(32, 1, 1)]
void feed(DispatchNodeInputRecord<FeedRec> input,
          uint i : SV_GroupIndex,
          [MaxRecords(32)] NodeOutput<CoalRec> coal,
          [MaxRecords(64)] NodeOutput<ThrRec> thr,
          [MaxRecords(32)] EmptyNodeOutput tick,
          [MaxRecords(3)] EmptyNodeOutput tock)
{
    FeedRec f = input.Get();
    bool live = i < f.n;

    ThreadNodeOutputRecords<CoalRec> c = coal.GetThreadNodeOutputRecords(live ? 1 : 0);
    if (live) {
        c.Get().slot = 8 + i % 16;
        c.Get().value = f.mul * i + 1;
    }
    c.OutputComplete();

    ThreadNodeOutputRecords<ThrRec> t = thr.GetThreadNodeOutputRecords(live ? 2 : 0);
    if (live) {
        t.Get(0).slot = 32 + i;
        t.Get(0).value = f.mul + i;
        t.Get(1).slot = 32 + (i + 5) % 32;
        t.Get(1).value = 1000;
    }
    t.OutputComplete();

    tick.ThreadIncrementOutputCount(live ? 1 : 0);
    tock.GroupIncrementOutputCount(3);
}

[Shader("node")]
[NodeLaunch("coalescing")]
[NumThreads(8, 1, 1)]
void coal([MaxRecords(8)] GroupNodeInputRecords<CoalRec> recs, uint j : SV_GroupIndex)
{
    if (j < recs.Count()) {
        InterlockedAdd(Out[recs[j].slot], recs[j].value);
    }
    if (j == 0) {
        InterlockedAdd(Out[0], recs.Count());
    }
}

[Shader("node")]
[NodeLaunch("thread")]
void thr(ThreadNodeInputRecord<ThrRec> rec)
{
    InterlockedAdd(Out[rec.Get().slot], rec.Get().value);
}

[Shader("node")]
[NodeLaunch("coalescing")]
[NumThreads(4, 1, 1)]
void tick([MaxRecords(4)] EmptyNodeInput e, uint j : SV_GroupIndex)
{
    if (j < e.Count()) {
        InterlockedAdd(Out[1], 1);
    }
    if (j == 0) {
        InterlockedAdd(Out[4], e.Count());
    }
}

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeDispatchGrid(2, 1, 1)]
[NumThreads(2, 1, 1)]
void tock(uint t : SV_GroupIndex)
{
    InterlockedAdd(Out[2], 1);
}
