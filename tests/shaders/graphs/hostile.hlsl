// hostile.hlsl: node shaders that send bad values (issue 24), each driven by
// its entry record so that one graph serves every case of
// tests/tests/graph_hostile_shaders.rs. Every node counts what it runs with
// integer atomics into Out (set 0, binding 0), so results do not depend on
// scheduling. Compiled by compile-hlsl.sh (DXC 1.9, lib_6_8, vulkan1.3).
//
//   grids     entry: one record to "open" (capped == 0) or "capped" with
//             the grid and tag it is given.
//   open      grid from the record, NodeMaxDispatchGrid(65535, 256, 1):
//             Out[tag] += 1 per workgroup.
//   capped    the same with NodeMaxDispatchGrid(8, 1, 1).
//   spill     entry: allocates `count` records on "item" (MaxRecords(4)) and
//             writes every one of them: (tag, i).
//   scribble  entry: allocates one record on "item", writes record `index`
//             first (0xBAD), then record 0: (tag, 0).
//   item      thread node: Out[tag + value] += 1.
//   flood     entry: `count` records (MaxRecords(256)) on "wide": (tag, i).
//   wide      NodeDispatchGrid(65535, 256, 1): Out[tag] += 1 per workgroup.
//   pick      entry: one record for member `index` of "member" (an array
//             from index 1, NodeArraySize(2)): (tag, 0).
//   member0..2  ("member", k): Out[tag + k] += 1.
//   deep      thread entry, NodeMaxRecursionDepth(2): Out[tag] += 1, then
//             one record to itself, at every depth (past the limit too).
//   batch     coalescing, MaxRecords(4), 4 threads: Out[inputs[0].tag + t]
//             = inputs[t + 2].value (past Count() from t = Count() - 2).
//   dyn_entry entry with its grid in the record, NodeMaxDispatchGrid(8, 4, 1):
//             Out[tag] += 1 per workgroup (its records come from device
//             memory in the indirect tests, where no host checks them).

RWStructuredBuffer<uint> Out : register(u0);

struct GridCmd { uint3 grid; uint tag; uint capped; };
struct GridRec { uint3 grid : SV_DispatchGrid; uint tag; };
struct SpillCmd { uint count; uint tag; uint index; uint unused; };
struct Item { uint tag; uint value; };
struct PickCmd { uint index; uint tag; };
struct DeepRec { uint tag; };

[Shader("node")] [NodeLaunch("broadcasting")] [NodeIsProgramEntry] [NodeDispatchGrid(1, 1, 1)] [NumThreads(1, 1, 1)]
void grids(DispatchNodeInputRecord<GridCmd> cmd,
           [MaxRecords(1)] [NodeID("open")] NodeOutput<GridRec> open,
           [MaxRecords(1)] [NodeID("capped")] NodeOutput<GridRec> capped) {
    GridCmd c = cmd.Get();
    if (c.capped == 0) {
        ThreadNodeOutputRecords<GridRec> o = open.GetThreadNodeOutputRecords(1);
        o.Get().grid = c.grid;
        o.Get().tag = c.tag;
        o.OutputComplete();
    } else {
        ThreadNodeOutputRecords<GridRec> o = capped.GetThreadNodeOutputRecords(1);
        o.Get().grid = c.grid;
        o.Get().tag = c.tag;
        o.OutputComplete();
    }
}

[Shader("node")] [NodeLaunch("broadcasting")] [NodeMaxDispatchGrid(65535, 256, 1)] [NumThreads(1, 1, 1)]
void open(DispatchNodeInputRecord<GridRec> r) { InterlockedAdd(Out[r.Get().tag], 1); }

[Shader("node")] [NodeLaunch("broadcasting")] [NodeMaxDispatchGrid(8, 1, 1)] [NumThreads(1, 1, 1)]
void capped(DispatchNodeInputRecord<GridRec> r) { InterlockedAdd(Out[r.Get().tag], 1); }

[Shader("node")] [NodeLaunch("broadcasting")] [NodeIsProgramEntry] [NodeDispatchGrid(1, 1, 1)] [NumThreads(1, 1, 1)]
void spill(DispatchNodeInputRecord<SpillCmd> cmd, [MaxRecords(4)] [NodeID("item")] NodeOutput<Item> item) {
    SpillCmd c = cmd.Get();
    ThreadNodeOutputRecords<Item> o = item.GetThreadNodeOutputRecords(c.count);
    for (uint i = 0; i < c.count; i++) {
        o[i].tag = c.tag;
        o[i].value = i;
    }
    o.OutputComplete();
}

[Shader("node")] [NodeLaunch("broadcasting")] [NodeIsProgramEntry] [NodeDispatchGrid(1, 1, 1)] [NumThreads(1, 1, 1)]
void scribble(DispatchNodeInputRecord<SpillCmd> cmd, [MaxRecords(1)] [NodeID("item")] NodeOutput<Item> item) {
    SpillCmd c = cmd.Get();
    ThreadNodeOutputRecords<Item> o = item.GetThreadNodeOutputRecords(1);
    o[c.index].tag = 0xBAD;
    o[c.index].value = 0xBAD;
    o[0].tag = c.tag;
    o[0].value = 0;
    o.OutputComplete();
}

[Shader("node")] [NodeLaunch("thread")]
void item(ThreadNodeInputRecord<Item> r) { InterlockedAdd(Out[r.Get().tag + r.Get().value], 1); }

[Shader("node")] [NodeLaunch("broadcasting")] [NodeIsProgramEntry] [NodeDispatchGrid(1, 1, 1)] [NumThreads(1, 1, 1)]
void flood(DispatchNodeInputRecord<SpillCmd> cmd, [MaxRecords(256)] [NodeID("wide")] NodeOutput<Item> wide) {
    SpillCmd c = cmd.Get();
    ThreadNodeOutputRecords<Item> o = wide.GetThreadNodeOutputRecords(c.count);
    for (uint i = 0; i < c.count; i++) {
        o[i].tag = c.tag;
        o[i].value = i;
    }
    o.OutputComplete();
}

[Shader("node")] [NodeLaunch("broadcasting")] [NodeDispatchGrid(65535, 256, 1)] [NumThreads(1, 1, 1)]
void wide(DispatchNodeInputRecord<Item> r) { InterlockedAdd(Out[r.Get().tag], 1); }

[Shader("node")] [NodeLaunch("broadcasting")] [NodeIsProgramEntry] [NodeDispatchGrid(1, 1, 1)] [NumThreads(1, 1, 1)]
void pick(DispatchNodeInputRecord<PickCmd> cmd,
          [MaxRecords(1)] [NodeID("member", 1)] [NodeArraySize(2)] NodeOutputArray<Item> members) {
    PickCmd c = cmd.Get();
    ThreadNodeOutputRecords<Item> o = members[c.index].GetThreadNodeOutputRecords(1);
    o.Get().tag = c.tag;
    o.Get().value = 0;
    o.OutputComplete();
}

[Shader("node")] [NodeLaunch("thread")] [NodeID("member", 0)]
void member0(ThreadNodeInputRecord<Item> r) { InterlockedAdd(Out[r.Get().tag + 0], 1); }

[Shader("node")] [NodeLaunch("thread")] [NodeID("member", 1)]
void member1(ThreadNodeInputRecord<Item> r) { InterlockedAdd(Out[r.Get().tag + 1], 1); }

[Shader("node")] [NodeLaunch("thread")] [NodeID("member", 2)]
void member2(ThreadNodeInputRecord<Item> r) { InterlockedAdd(Out[r.Get().tag + 2], 1); }

[Shader("node")] [NodeLaunch("thread")] [NodeIsProgramEntry] [NodeMaxRecursionDepth(2)]
void deep(ThreadNodeInputRecord<DeepRec> r, [MaxRecords(1)] [NodeID("deep")] NodeOutput<DeepRec> self) {
    InterlockedAdd(Out[r.Get().tag], 1);
    ThreadNodeOutputRecords<DeepRec> o = self.GetThreadNodeOutputRecords(1);
    o.Get().tag = r.Get().tag;
    o.OutputComplete();
}

[Shader("node")] [NodeLaunch("coalescing")] [NodeIsProgramEntry] [NumThreads(4, 1, 1)]
void batch([MaxRecords(4)] GroupNodeInputRecords<Item> inputs, uint t : SV_GroupIndex) {
    Out[inputs[0].tag + t] = inputs[t + 2].value;
}

[Shader("node")] [NodeLaunch("broadcasting")] [NodeIsProgramEntry] [NodeMaxDispatchGrid(8, 4, 1)] [NumThreads(1, 1, 1)]
void dyn_entry(DispatchNodeInputRecord<GridRec> r) { InterlockedAdd(Out[r.Get().tag], 1); }
