// One node per module, entry named `main` (renamed by the application with
// VkPipelineShaderStageNodeCreateInfoAMDX::pName): intended node ("fanout", 0).
// Node output arrays: dense [NodeArraySize], [AllowSparseNodes] and
// [UnboundedSparseNodes], with IsValid(). The array members are
// renamed_sink.hlsl's `main`, renamed ("dense", 2..5), ("sparse", k),
// ("unbounded", k) by the application.
//
// fanout (entry, broadcast, 1 group of 32 threads), FanRec { bias }; thread t:
//   dense   ([NodeID("dense", 2)], [NodeArraySize(4)]: nodes ("dense", 2..5)):
//           t < 4: one SinkRec { slot = t, value = bias + 100 + t } to member t
//   sparse  ([NodeArraySize(8)], [AllowSparseNodes]):
//           t < 8: v = sparse[t].IsValid(); Out[64 + t] = v ? 2 : 1;
//                  if v, one SinkRec { slot = 8 + t, value = bias + 200 + t } to member t
//   unbounded ([UnboundedSparseNodes]):
//           v = unbounded[t].IsValid(); Out[96 + t] = v ? 2 : 1;
//           if v, one SinkRec { slot = 32 + t, value = bias + 300 + t } to member t
//   thread 0: Out[72] = unbounded[1000000].IsValid() ? 2 : 1
// Each sink adds value * 256 + its specialization constant (the test sets
// it to the member's index) to Out[slot].
// Layouts: FanRec bias @0; SinkRec slot @0, value @4.

RWStructuredBuffer<uint> Out : register(u0);

struct FanRec {
    uint bias;
};

struct SinkRec {
    uint slot;
    uint value;
};

uint answer(bool valid)
{
    return valid ? 2 : 1;
}

[Shader("node")]
[NodeLaunch("broadcasting")]
[NodeIsProgramEntry]
[NodeDispatchGrid(1, 1, 1)]
[NumThreads(32, 1, 1)]
void main(DispatchNodeInputRecord<FanRec> input,
          uint t : SV_GroupIndex,
          [MaxRecords(4)] [NodeID("dense", 2)] [NodeArraySize(4)] NodeOutputArray<SinkRec> dense,
          [MaxRecords(8)] [NodeArraySize(8)] [AllowSparseNodes] NodeOutputArray<SinkRec> sparse,
          [MaxRecords(32)] [UnboundedSparseNodes] NodeOutputArray<SinkRec> unbounded)
{
    uint bias = input.Get().bias;

    ThreadNodeOutputRecords<SinkRec> d = dense[t % 4].GetThreadNodeOutputRecords(t < 4 ? 1 : 0);
    if (t < 4) {
        d.Get().slot = t;
        d.Get().value = bias + 100 + t;
    }
    d.OutputComplete();

    bool sv = t < 8 && sparse[t % 8].IsValid();
    if (t < 8) {
        Out[64 + t] = answer(sv);
    }
    ThreadNodeOutputRecords<SinkRec> s = sparse[t % 8].GetThreadNodeOutputRecords(sv ? 1 : 0);
    if (sv) {
        s.Get().slot = 8 + t;
        s.Get().value = bias + 200 + t;
    }
    s.OutputComplete();

    bool uv = unbounded[t].IsValid();
    Out[96 + t] = answer(uv);
    ThreadNodeOutputRecords<SinkRec> u = unbounded[t].GetThreadNodeOutputRecords(uv ? 1 : 0);
    if (uv) {
        u.Get().slot = 32 + t;
        u.Get().value = bias + 300 + t;
    }
    u.OutputComplete();

    if (t == 0) {
        Out[72] = answer(unbounded[1000000].IsValid());
    }
}
