// A first work graph: the squares of 1..1000, summed in four bins by n % 4.
// One node of each launch mode, fed by records the host dispatches:
//
//   numbers (broadcasting, the entry): one record per range of numbers; its
//            grid (SV_DispatchGrid) is ceil(count / 32) workgroups of 32
//            threads; each thread with a number sends one Number record
//   -> square (thread): one invocation per record; sends n * n to "tally"
//   -> tally (coalescing): up to 32 Square records a workgroup, added up in
//            groupshared memory, then one atomic add per bin into Bins
//
// Bins (set 0, binding 0): words 0..3 the sums of n * n with n % 4 == bin,
// words 4..7 how many numbers fell into each bin.
//
// Names: DXC names each SPIR-V entry point after its HLSL function. An
// output targets the node named after its parameter (`square` below) or its
// [NodeID]. On an entry function DXC drops [NodeID]'s name and keeps only
// the index, so the entry point `tallyBins` carries no name "tally": the
// application names it with VkPipelineShaderStageNodeCreateInfoAMDX::pName.

RWStructuredBuffer<uint> Bins : register(u0);

struct Range {
    uint groups : SV_DispatchGrid; // workgroups to launch (x)
    uint first;                    // first number of the range
    uint count;                    // how many numbers
};

struct Number {
    uint n;
};

struct Square {
    uint bin;
    uint value;
};

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeIsProgramEntry]
[NodeMaxDispatchGrid(64, 1, 1)]
[NumThreads(32, 1, 1)]
void numbers(DispatchNodeInputRecord<Range> range,
             uint i : SV_DispatchThreadID,
             [MaxRecords(32)] NodeOutput<Number> square)
{
    bool live = i < range.Get().count;
    // Every thread asks (for 0 or 1 records): the call is group-uniform.
    ThreadNodeOutputRecords<Number> rec = square.GetThreadNodeOutputRecords(live ? 1 : 0);
    if (live) {
        rec.Get().n = range.Get().first + i;
    }
    rec.OutputComplete();
}

[Shader("node")]
[NodeLaunch("thread")]
void square(ThreadNodeInputRecord<Number> number,
            [MaxRecords(1)] [NodeID("tally")] NodeOutput<Square> tally)
{
    uint n = number.Get().n;
    ThreadNodeOutputRecords<Square> rec = tally.GetThreadNodeOutputRecords(1);
    rec.Get().bin = n % 4;
    rec.Get().value = n * n;
    rec.OutputComplete();
}

groupshared uint sums[4];
groupshared uint counts[4];

[Shader("node")]
[NodeLaunch("coalescing")]
[NodeID("tally")]
[NumThreads(32, 1, 1)]
void tallyBins([MaxRecords(32)] GroupNodeInputRecords<Square> squares,
               uint j : SV_GroupIndex)
{
    if (j < 4) {
        sums[j] = 0;
        counts[j] = 0;
    }
    GroupMemoryBarrierWithGroupSync();
    if (j < squares.Count()) {
        InterlockedAdd(sums[squares[j].bin], squares[j].value);
        InterlockedAdd(counts[squares[j].bin], 1);
    }
    GroupMemoryBarrierWithGroupSync();
    // A batch of records costs 8 device atomics, not 2 per record.
    if (j < 4) {
        InterlockedAdd(Bins[j], sums[j]);
        InterlockedAdd(Bins[4 + j], counts[j]);
    }
}
