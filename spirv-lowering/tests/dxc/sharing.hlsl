// Input sharing: [NodeShareInputOf] and [NodeTrackRWInputSharing] with
// RWDispatchNodeInputRecord and FinishedCrossGroupSharing(), in one library.
//
//   split (entry, broadcast, 1 group of 4 threads), record SplitRec { base }
//     -> first   thread launch, PairRec; every record it gets also runs
//     -> second  [NodeShareInputOf("first")], thread launch, same record
//     -> gather  broadcast, static grid (8, 1, 1) of 1 thread,
//                RWDispatchNodeInputRecord<SumRec>, SumRec is
//                [NodeTrackRWInputSharing]
//
// split, thread t (0..3), per host record: one PairRec { slot = 4 * t, value = base + t }
//   to first; thread 0: one SumRec { slot = base % 4, parts = 0 } to gather.
// first:  Out[slot] += value
// second: Out[slot + 1] += value * 10 (runs on first's records: never sent to directly)
// gather, group g (0..7): parts[g] = g * 10 + 1 (written into
//   the shared record), then exactly one group (the last to finish) adds the
//   sum of parts to Out[32 + slot] and 1 to Out[36 + slot].
// Layouts: SplitRec base @0; PairRec slot @0, value @4;
//          SumRec slot @0, parts uint[8] @4 (36 bytes).

RWStructuredBuffer<uint> Out : register(u0);

struct SplitRec {
    uint base;
};

struct PairRec {
    uint slot;
    uint value;
};

struct [NodeTrackRWInputSharing] SumRec {
    uint slot;
    uint parts[8];
};

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeIsProgramEntry]
[NodeDispatchGrid(1, 1, 1)]
[NumThreads(4, 1, 1)]
void split(DispatchNodeInputRecord<SplitRec> input,
           uint t : SV_GroupIndex,
           [MaxRecords(4)] NodeOutput<PairRec> first,
           [MaxRecords(1)] NodeOutput<SumRec> gather)
{
    uint base = input.Get().base;
    ThreadNodeOutputRecords<PairRec> p = first.GetThreadNodeOutputRecords(1);
    p.Get().slot = 4 * t;
    p.Get().value = base + t;
    p.OutputComplete();

    GroupNodeOutputRecords<SumRec> s = gather.GetGroupNodeOutputRecords(1);
    if (t == 0) {
        s.Get().slot = base % 4;
        for (uint i = 0; i < 8; i++) {
            s.Get().parts[i] = 0;
        }
    }
    s.OutputComplete();
}

[Shader("node")]
[NodeLaunch("thread")]
void first(ThreadNodeInputRecord<PairRec> rec)
{
    InterlockedAdd(Out[rec.Get().slot], rec.Get().value);
}

[Shader("node")]
[NodeLaunch("thread")]
[NodeShareInputOf("first")]
void second(ThreadNodeInputRecord<PairRec> rec)
{
    InterlockedAdd(Out[rec.Get().slot + 1], rec.Get().value * 10);
}

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeDispatchGrid(8, 1, 1)]
[NumThreads(1, 1, 1)]
void gather(RWDispatchNodeInputRecord<SumRec> input, uint3 gid : SV_GroupID)
{
    input.Get().parts[gid.x] = gid.x * 10 + 1;
    Barrier(input, DEVICE_SCOPE);
    if (input.FinishedCrossGroupSharing()) {
        uint sum = 0;
        for (uint i = 0; i < 8; i++) {
            sum += input.Get().parts[i];
        }
        InterlockedAdd(Out[32 + input.Get().slot], sum);
        InterlockedAdd(Out[36 + input.Get().slot], 1);
    }
}
