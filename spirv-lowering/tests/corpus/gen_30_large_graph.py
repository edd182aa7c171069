#!/usr/bin/env python3
"""Generate 30_large_graph.spvasm: the largest corpus module (many nodes and
outputs in one module), used by the lowering benchmark.

Run from this directory:  python3 gen_30_large_graph.py > 30_large_graph.spvasm
then ./assemble.sh. The generated .spvasm is committed; this script only
documents how it was built and lets it be regrown.
"""

NUM_SHADE = 4  # "shade" node array, indices 0..3 (sparse target of classify)
NUM_BIN = 8    # "bin" node array, indices 0..7 (dense target of entry)

decor = []     # annotation lines
types = []     # payload-array / pointer type lines
funcs = []     # function bodies
eps = []       # (func id, name, interface)
modes = []     # execution-mode lines
names = []     # OpName lines
arr_count = [0]


def payload_array(rec, max_payloads, node_name=None, base=None, size=None,
                  sparse=False, shares=None):
    """Declare one OpTypeNodePayloadArrayAMDX (+ pointer) the way DXC does:
    one type per use, decorated with OpDecorateId."""
    arr_count[0] += 1
    a = f"%_payloadarr_{rec}_{arr_count[0]}"
    p = f"%_ptr_NodePayloadAMDX__payloadarr_{rec}_{arr_count[0]}"
    types.append(f"{a} = OpTypeNodePayloadArrayAMDX %{rec}")
    types.append(f"{p} = OpTypePointer NodePayloadAMDX {a}")
    if node_name is not None:
        decor.append(f"OpDecorateId {a} PayloadNodeNameAMDX %str_{node_name}")
    decor.append(f"OpDecorateId {a} NodeMaxPayloadsAMDX %uint_{max_payloads}")
    if base is not None:
        decor.append(f"OpDecorateId {a} PayloadNodeBaseIndexAMDX %uint_{base}")
    if sparse:
        decor.append(f"OpDecorate {a} PayloadNodeSparseArrayAMDX")
    if size is not None:
        decor.append(f"OpDecorateId {a} PayloadNodeArraySizeAMDX %uint_{size}")
    if shares is not None:
        decor.append(f"OpDecorateId {a} NodeSharesPayloadLimitsWithAMDX {shares}")
    return a, p


def node(fid, name, index, iface, mode_lines, array=False):
    # Entry-point names must be unique in a module, so members of a node
    # array get "<name>_<index>"; the app renames them to (name, index) with
    # VkPipelineShaderStageNodeCreateInfoAMDX::pName at pipeline creation.
    ep = f"{name}_{index}" if array else name
    eps.append((fid, ep, iface))
    names.append(f'OpName {fid} "{name}_{index}"')
    modes.extend(mode_lines)
    modes.append(f"OpExecutionModeId {fid} ShaderIndexAMDX %uint_{index}")


# ---------------------------------------------------------------- entry
in_entry_a, in_entry_p = payload_array("EntryRec", 1)
out_cls_a, out_cls_p = payload_array("WorkRec", 64, "classify")
out_bin_a, out_bin_p = payload_array("BinRec", 1, "bin", size=NUM_BIN)
out_stats_a, out_stats_p = payload_array("Empty", 64, "stats", shares=out_cls_a)
types.append(f"%in_entry = OpVariable {in_entry_p} NodePayloadAMDX")
node("%entry", "entry", 0,
     "%in_entry %gl_LocalInvocationIndex %gl_GlobalInvocationID %gl_WorkGroupID",
     ["OpExecutionMode %entry LocalSize 64 1 1",
      "OpExecutionModeId %entry MaxNumWorkgroupsAMDX %uint_256 %uint_256 %uint_1",
      "OpExecutionModeId %entry IsApiEntryAMDX %true"])
funcs.append(f"""
%entry = OpFunction %void None %fn
%e_lbl = OpLabel
%e_gi = OpLoad %uint %gl_LocalInvocationIndex
%e_dt = OpLoad %v3uint %gl_GlobalInvocationID
%e_dtx = OpCompositeExtract %uint %e_dt 0
%e_seed_p = OpAccessChain %_ptr_NodePayloadAMDX_uint %in_entry %uint_0 %uint_1
%e_seed = OpLoad %uint %e_seed_p
%e_grid_p = OpAccessChain %_ptr_NodePayloadAMDX_v3uint %in_entry %uint_0 %uint_0
%e_grid = OpLoad %v3uint %e_grid_p
%e_gx = OpCompositeExtract %uint %e_grid 0
%e_cls = OpAllocateNodePayloadsAMDX {out_cls_p} %uint_4 %uint_1 %uint_0
%e_c0 = OpAccessChain %_ptr_NodePayloadAMDX_uint %e_cls %uint_0 %uint_0
OpStore %e_c0 %e_dtx
%e_v = OpIAdd %uint %e_seed %e_gx
%e_c1 = OpAccessChain %_ptr_NodePayloadAMDX_uint %e_cls %uint_0 %uint_1
OpStore %e_c1 %e_v
%e_wf = OpConvertUToF %float %e_gi
%e_c2 = OpAccessChain %_ptr_NodePayloadAMDX_float %e_cls %uint_0 %uint_2
OpStore %e_c2 %e_wf
%e_fl = OpBitwiseXor %uint %e_dtx %e_seed
%e_c3 = OpAccessChain %_ptr_NodePayloadAMDX_uint %e_cls %uint_0 %uint_3
OpStore %e_c3 %e_fl
OpEnqueueNodePayloadsAMDX %e_cls
%e_bidx = OpBitwiseAnd %uint %e_seed %uint_7
%e_bin = OpAllocateNodePayloadsAMDX {out_bin_p} %uint_2 %uint_1 %e_bidx
%e_first = OpIEqual %bool %e_gi %uint_0
OpSelectionMerge %e_m1 None
OpBranchConditional %e_first %e_wbin %e_m1
%e_wbin = OpLabel
%e_gid = OpLoad %v3uint %gl_WorkGroupID
%e_gidx = OpCompositeExtract %uint %e_gid 0
%e_b0 = OpAccessChain %_ptr_NodePayloadAMDX_uint %e_bin %uint_0 %uint_0
OpStore %e_b0 %e_gidx
%e_b1 = OpAccessChain %_ptr_NodePayloadAMDX_uint %e_bin %uint_0 %uint_1
OpStore %e_b1 %e_bidx
OpBranch %e_m1
%e_m1 = OpLabel
OpEnqueueNodePayloadsAMDX %e_bin
%e_odd = OpBitwiseAnd %uint %e_gi %uint_1
%e_st = OpAllocateNodePayloadsAMDX {out_stats_p} %uint_4 %e_odd %uint_0
OpEnqueueNodePayloadsAMDX %e_st
OpReturn
OpFunctionEnd""")

# ---------------------------------------------------------------- classify (thread)
in_cls_a, in_cls_p = payload_array("WorkRec", 1)
out_shade_a, out_shade_p = payload_array("WorkRec", 1, "shade", size=NUM_SHADE, sparse=True)
out_count_a, out_count_p = payload_array("ResolveRec", 1, "count")
types.append(f"%in_classify = OpVariable {in_cls_p} NodePayloadAMDX")
node("%classify", "classify", 0, "%in_classify %pc",
     ["OpExecutionMode %classify CoalescingAMDX",
      "OpExecutionMode %classify LocalSize 1 1 1",
      "OpExecutionModeId %classify IsApiEntryAMDX %false"])
funcs.append(f"""
%classify = OpFunction %void None %fn
%c_lbl = OpLabel
%c_id_p = OpAccessChain %_ptr_NodePayloadAMDX_uint %in_classify %uint_0 %uint_0
%c_id = OpLoad %uint %c_id_p
%c_v_p = OpAccessChain %_ptr_NodePayloadAMDX_uint %in_classify %uint_0 %uint_1
%c_v = OpLoad %uint %c_v_p
%c_w_p = OpAccessChain %_ptr_NodePayloadAMDX_float %in_classify %uint_0 %uint_2
%c_w = OpLoad %float %c_w_p
%c_f_p = OpAccessChain %_ptr_NodePayloadAMDX_uint %in_classify %uint_0 %uint_3
%c_f = OpLoad %uint %c_f_p
%c_mul_p = OpAccessChain %_ptr_PushConstant_uint %pc %uint_1
%c_mul = OpLoad %uint %c_mul_p
%c_sidx = OpBitwiseAnd %uint %c_f %uint_3
%c_sh = OpAllocateNodePayloadsAMDX {out_shade_p} %uint_4 %uint_1 %c_sidx
%c_s0 = OpAccessChain %_ptr_NodePayloadAMDX_uint %c_sh %uint_0 %uint_0
OpStore %c_s0 %c_id
%c_vm = OpIMul %uint %c_v %c_mul
%c_s1 = OpAccessChain %_ptr_NodePayloadAMDX_uint %c_sh %uint_0 %uint_1
OpStore %c_s1 %c_vm
%c_w2 = OpFMul %float %c_w %float_0_5
%c_s2 = OpAccessChain %_ptr_NodePayloadAMDX_float %c_sh %uint_0 %uint_2
OpStore %c_s2 %c_w2
%c_s3 = OpAccessChain %_ptr_NodePayloadAMDX_uint %c_sh %uint_0 %uint_3
OpStore %c_s3 %c_f
OpEnqueueNodePayloadsAMDX %c_sh
%c_cn = OpAllocateNodePayloadsAMDX {out_count_p} %uint_4 %uint_1 %uint_0
%c_n0 = OpAccessChain %_ptr_NodePayloadAMDX_uint %c_cn %uint_0 %uint_0
OpStore %c_n0 %c_id
%c_n1 = OpAccessChain %_ptr_NodePayloadAMDX_uint %c_cn %uint_0 %uint_1
OpStore %c_n1 %c_sidx
OpEnqueueNodePayloadsAMDX %c_cn
OpReturn
OpFunctionEnd""")

# ---------------------------------------------------------------- shade[0..3] (coalescing)
for k in range(NUM_SHADE):
    in_a, in_p = payload_array("WorkRec", 32)
    out_a, out_p = payload_array("ResolveRec", 1, "resolve")
    v = f"%in_shade{k}"
    f = f"%shade{k}"
    s = f"s{k}_"
    types.append(f"{v} = OpVariable {in_p} NodePayloadAMDX")
    node(f, "shade", k, f"{v} %gl_LocalInvocationIndex %g_acc{k}",
         [f"OpExecutionMode {f} CoalescingAMDX",
          f"OpExecutionMode {f} LocalSize 32 1 1",
          f"OpExecutionModeId {f} IsApiEntryAMDX %false"], array=True)
    types.append(f"%g_acc{k} = OpVariable %_ptr_Workgroup_uint Workgroup")
    funcs.append(f"""
{f} = OpFunction %void None %fn
%{s}lbl = OpLabel
%{s}gi = OpLoad %uint %gl_LocalInvocationIndex
%{s}n = OpNodePayloadArrayLengthAMDX %uint {v}
%{s}first = OpIEqual %bool %{s}gi %uint_0
OpSelectionMerge %{s}m0 None
OpBranchConditional %{s}first %{s}init %{s}m0
%{s}init = OpLabel
OpStore %g_acc{k} %uint_0
OpBranch %{s}m0
%{s}m0 = OpLabel
OpControlBarrier %uint_2 %uint_2 %uint_264
%{s}has = OpULessThan %bool %{s}gi %{s}n
OpSelectionMerge %{s}m1 None
OpBranchConditional %{s}has %{s}acc %{s}m1
%{s}acc = OpLabel
%{s}v_p = OpAccessChain %_ptr_NodePayloadAMDX_uint {v} %{s}gi %uint_1
%{s}v = OpLoad %uint %{s}v_p
%{s}w_p = OpAccessChain %_ptr_NodePayloadAMDX_float {v} %{s}gi %uint_2
%{s}w = OpLoad %float %{s}w_p
%{s}wu = OpConvertFToU %uint %{s}w
%{s}vw = OpIMul %uint %{s}v %uint_{k + 1}
%{s}add = OpIAdd %uint %{s}vw %{s}wu
%{s}old = OpAtomicIAdd %uint %g_acc{k} %uint_2 %uint_0 %{s}add
OpBranch %{s}m1
%{s}m1 = OpLabel
OpControlBarrier %uint_2 %uint_2 %uint_264
%{s}res = OpAllocateNodePayloadsAMDX {out_p} %uint_2 %uint_1 %uint_0
OpSelectionMerge %{s}m2 None
OpBranchConditional %{s}first %{s}wr %{s}m2
%{s}wr = OpLabel
%{s}sum = OpLoad %uint %g_acc{k}
%{s}r0 = OpAccessChain %_ptr_NodePayloadAMDX_uint %{s}res %uint_0 %uint_0
OpStore %{s}r0 %uint_{k}
%{s}r1 = OpAccessChain %_ptr_NodePayloadAMDX_uint %{s}res %uint_0 %uint_1
OpStore %{s}r1 %{s}sum
OpBranch %{s}m2
%{s}m2 = OpLabel
OpEnqueueNodePayloadsAMDX %{s}res
OpReturn
OpFunctionEnd""")

# ---------------------------------------------------------------- bin[0..7] (thread)
for k in range(NUM_BIN):
    in_a, in_p = payload_array("BinRec", 1)
    v = f"%in_bin{k}"
    f = f"%bin{k}"
    s = f"b{k}_"
    types.append(f"{v} = OpVariable {in_p} NodePayloadAMDX")
    node(f, "bin", k, f"{v} %gShaderIndex %Out",
         [f"OpExecutionMode {f} CoalescingAMDX",
          f"OpExecutionMode {f} LocalSize 1 1 1",
          f"OpExecutionModeId {f} IsApiEntryAMDX %false"], array=True)
    funcs.append(f"""
{f} = OpFunction %void None %fn
%{s}lbl = OpLabel
%{s}id_p = OpAccessChain %_ptr_NodePayloadAMDX_uint {v} %uint_0 %uint_0
%{s}id = OpLoad %uint %{s}id_p
%{s}si = OpLoad %uint %gShaderIndex
%{s}row = OpIMul %uint %{s}si %uint_256
%{s}idx0 = OpIAdd %uint %{s}row %{s}id
%{s}idx = OpIAdd %uint %{s}idx0 %uint_4096
%{s}val = OpIAdd %uint %{s}id %uint_{k + 100}
%{s}o_p = OpAccessChain %_ptr_StorageBuffer_uint %Out %uint_0 %{s}idx
OpStore %{s}o_p %{s}val
OpReturn
OpFunctionEnd""")

# ---------------------------------------------------------------- count (coalescing)
in_a, in_p = payload_array("ResolveRec", 64)
types.append(f"%in_count = OpVariable {in_p} NodePayloadAMDX")
node("%count", "count", 0, "%in_count %gl_LocalInvocationIndex %Out",
     ["OpExecutionMode %count CoalescingAMDX",
      "OpExecutionMode %count LocalSize 64 1 1",
      "OpExecutionModeId %count IsApiEntryAMDX %false"])
funcs.append("""
%count = OpFunction %void None %fn
%k_lbl = OpLabel
%k_gi = OpLoad %uint %gl_LocalInvocationIndex
%k_n = OpNodePayloadArrayLengthAMDX %uint %in_count
%k_has = OpULessThan %bool %k_gi %k_n
OpSelectionMerge %k_end None
OpBranchConditional %k_has %k_add %k_end
%k_add = OpLabel
%k_s_p = OpAccessChain %_ptr_NodePayloadAMDX_uint %in_count %k_gi %uint_1
%k_s = OpLoad %uint %k_s_p
%k_o_p = OpAccessChain %_ptr_StorageBuffer_uint %Out %uint_0 %k_s
%k_old = OpAtomicIAdd %uint %k_o_p %uint_1 %uint_0 %uint_1
OpBranch %k_end
%k_end = OpLabel
OpReturn
OpFunctionEnd""")

# ---------------------------------------------------------------- resolve (broadcast static)
in_a, in_p = payload_array("ResolveRec", 1)
out_ref_a, out_ref_p = payload_array("ResolveRec", 1, "refine")
types.append(f"%in_resolve = OpVariable {in_p} NodePayloadAMDX")
node("%resolve", "resolve", 0, "%in_resolve %gl_LocalInvocationIndex %pc %Out",
     ["OpExecutionMode %resolve LocalSize 32 1 1",
      "OpExecutionModeId %resolve StaticNumWorkgroupsAMDX %uint_2 %uint_1 %uint_1",
      "OpExecutionModeId %resolve IsApiEntryAMDX %false"])
funcs.append(f"""
%resolve = OpFunction %void None %fn
%r_lbl = OpLabel
%r_gi = OpLoad %uint %gl_LocalInvocationIndex
%r_id_p = OpAccessChain %_ptr_NodePayloadAMDX_uint %in_resolve %uint_0 %uint_0
%r_id = OpLoad %uint %r_id_p
%r_v_p = OpAccessChain %_ptr_NodePayloadAMDX_uint %in_resolve %uint_0 %uint_1
%r_v = OpLoad %uint %r_v_p
%r_base_p = OpAccessChain %_ptr_PushConstant_uint %pc %uint_0
%r_base = OpLoad %uint %r_base_p
%r_i0 = OpIAdd %uint %r_base %r_id
%r_i = OpIAdd %uint %r_i0 %r_gi
%r_o_p = OpAccessChain %_ptr_StorageBuffer_uint %Out %uint_0 %r_i
OpStore %r_o_p %r_v
%r_first = OpIEqual %bool %r_gi %uint_0
%r_cnt = OpSelect %uint %r_first %uint_1 %uint_0
%r_ref = OpAllocateNodePayloadsAMDX {out_ref_p} %uint_4 %r_cnt %uint_0
OpSelectionMerge %r_m None
OpBranchConditional %r_first %r_w %r_m
%r_w = OpLabel
%r_f0 = OpAccessChain %_ptr_NodePayloadAMDX_uint %r_ref %uint_0 %uint_0
OpStore %r_f0 %r_id
%r_f1 = OpAccessChain %_ptr_NodePayloadAMDX_uint %r_ref %uint_0 %uint_1
OpStore %r_f1 %r_v
OpBranch %r_m
%r_m = OpLabel
OpEnqueueNodePayloadsAMDX %r_ref
OpReturn
OpFunctionEnd""")

# ---------------------------------------------------------------- refine (recursive)
in_a, in_p = payload_array("ResolveRec", 1)
out_self_a, out_self_p = payload_array("ResolveRec", 1, "refine")
types.append(f"%in_refine = OpVariable {in_p} NodePayloadAMDX")
node("%refine", "refine", 0, "%in_refine %gl_RemainingRecursionLevels %Out",
     ["OpExecutionMode %refine LocalSize 1 1 1",
      "OpExecutionModeId %refine StaticNumWorkgroupsAMDX %uint_1 %uint_1 %uint_1",
      "OpExecutionModeId %refine MaxNodeRecursionAMDX %uint_3",
      "OpExecutionModeId %refine IsApiEntryAMDX %false"])
funcs.append(f"""
%refine = OpFunction %void None %fn
%f_lbl = OpLabel
%f_rem = OpLoad %uint %gl_RemainingRecursionLevels
%f_v_p = OpAccessChain %_ptr_NodePayloadAMDX_uint %in_refine %uint_0 %uint_1
%f_v = OpLoad %uint %f_v_p
%f_i = OpIAdd %uint %f_rem %uint_8192
%f_o_p = OpAccessChain %_ptr_StorageBuffer_uint %Out %uint_0 %f_i
%f_old = OpAtomicIAdd %uint %f_o_p %uint_1 %uint_0 %f_v
%f_more = OpUGreaterThan %bool %f_rem %uint_0
%f_cnt = OpSelect %uint %f_more %uint_1 %uint_0
%f_self = OpAllocateNodePayloadsAMDX {out_self_p} %uint_2 %f_cnt %uint_0
OpSelectionMerge %f_m None
OpBranchConditional %f_more %f_w %f_m
%f_w = OpLabel
%f_half = OpShiftRightLogical %uint %f_v %uint_1
%f_s1 = OpAccessChain %_ptr_NodePayloadAMDX_uint %f_self %uint_0 %uint_1
OpStore %f_s1 %f_half
OpBranch %f_m
%f_m = OpLabel
OpEnqueueNodePayloadsAMDX %f_self
OpReturn
OpFunctionEnd""")

# ---------------------------------------------------------------- stats (coalescing, empty input)
in_a, in_p = payload_array("Empty", 64)
types.append(f"%in_stats = OpVariable {in_p} NodePayloadAMDX")
node("%stats", "stats", 0, "%in_stats %gl_LocalInvocationIndex %Out",
     ["OpExecutionMode %stats CoalescingAMDX",
      "OpExecutionMode %stats LocalSize 64 1 1",
      "OpExecutionModeId %stats IsApiEntryAMDX %false"])
funcs.append("""
%stats = OpFunction %void None %fn
%t_lbl = OpLabel
%t_gi = OpLoad %uint %gl_LocalInvocationIndex
%t_n = OpNodePayloadArrayLengthAMDX %uint %in_stats
%t_first = OpIEqual %bool %t_gi %uint_0
OpSelectionMerge %t_end None
OpBranchConditional %t_first %t_add %t_end
%t_add = OpLabel
%t_o_p = OpAccessChain %_ptr_StorageBuffer_uint %Out %uint_0 %uint_8191
%t_old = OpAtomicIAdd %uint %t_o_p %uint_1 %uint_0 %t_n
OpBranch %t_end
%t_end = OpLabel
OpReturn
OpFunctionEnd""")

# ---------------------------------------------------------------- emit
consts = [0, 1, 2, 3, 4, 5, 6, 7, 8, 32, 64, 100, 101, 102, 103, 104, 105, 106,
          107, 256, 264, 4096, 8191, 8192]
out = []
w = out.append
w("; 30_large_graph.spvasm  (GENERATED by gen_30_large_graph.py; edit the script)")
w(";")
w("; The largest corpus module: one module holding a whole graph, the input")
w("; for the lowering benchmark (\"lowering time per node\"). 18 entry points:")
w(";   entry      broadcast, dynamic uint3 grid (MaxNumWorkgroupsAMDX 256 256 1),")
w(";              IsApiEntryAMDX true; outputs: classify (Invocation, 1/thread),")
w(";              bin[] (node array size 8, Workgroup, dynamic index), stats")
w(";              (empty records, NodeSharesPayloadLimitsWithAMDX -> classify)")
w(";   classify   thread node; push constants; outputs: shade[] (sparse array,")
w(";              size 4, dynamic index), count")
w(";   shade 0..3 coalescing 32 threads / 32 records, Workgroup accumulator +")
w(";              barriers, output resolve (Workgroup visibility)")
w(";   bin 0..7   thread nodes (same name, ShaderIndexAMDX 0..7), read the")
w(";              ShaderIndexAMDX builtin, write the storage buffer")
w(";   count      coalescing 64 threads / 64 records, atomics on the buffer")
w(";   resolve    broadcast StaticNumWorkgroupsAMDX 2 1 1, push constants,")
w(";              output refine (Invocation visibility, count 0/1)")
w(";   refine     recursive (MaxNodeRecursionAMDX 3), RemainingRecursionLevelsAMDX")
w(";   stats      coalescing, EmptyNodeInput (64)")
w("; Entry-point names must be unique in a module, so the node-array members")
w("; are entry points \"shade_0\"..\"shade_3\" and \"bin_0\"..\"bin_7\" with")
w("; ShaderIndexAMDX k; to link them as (\"shade\", k) / (\"bin\", k) the app")
w("; passes VkPipelineShaderStageNodeCreateInfoAMDX{pName = \"shade\", index = k}.")
w("; Every node but entry has IsApiEntryAMDX false. Shape as DXC emits")
w("; (one OpTypeNodePayloadArrayAMDX per use, OpDecorateId, Offset decorations).")
w(";")
w("; HLSL outline (bodies elided; see the SPIR-V):")
w(";   [NodeLaunch(\"broadcasting\")] [NodeMaxDispatchGrid(256,256,1)] [NumThreads(64,1,1)]")
w(";   void entry(DispatchNodeInputRecord<EntryRec> in,")
w(";              [MaxRecords(64)] NodeOutput<WorkRec> classify,")
w(";              [MaxRecords(1)] [NodeArraySize(8)] NodeOutputArray<BinRec> bin,")
w(";              [MaxRecordsSharedWith(classify)] EmptyNodeOutput stats);")
w(";   [NodeLaunch(\"thread\")] void classify(ThreadNodeInputRecord<WorkRec> in,")
w(";              [MaxRecords(1)] [AllowSparseNodes] [NodeArraySize(4)] NodeOutputArray<WorkRec> shade,")
w(";              [MaxRecords(1)] NodeOutput<ResolveRec> count);")
w(";   [NodeLaunch(\"coalescing\")] [NumThreads(32,1,1)] [NodeID(\"shade\", k)]")
w(";   void shade_k([MaxRecords(32)] GroupNodeInputRecords<WorkRec> in,")
w(";              [MaxRecords(1)] NodeOutput<ResolveRec> resolve);      // k = 0..3")
w(";   [NodeLaunch(\"thread\")] [NodeID(\"bin\", k)] void bin_k(ThreadNodeInputRecord<BinRec> in);")
w(";   [NodeLaunch(\"coalescing\")] [NumThreads(64,1,1)]")
w(";   void count([MaxRecords(64)] GroupNodeInputRecords<ResolveRec> in);")
w(";   [NodeLaunch(\"broadcasting\")] [NodeDispatchGrid(2,1,1)] [NumThreads(32,1,1)]")
w(";   void resolve(DispatchNodeInputRecord<ResolveRec> in, [MaxRecords(1)] NodeOutput<ResolveRec> refine);")
w(";   [NodeLaunch(\"broadcasting\")] [NodeDispatchGrid(1,1,1)] [NumThreads(1,1,1)] [NodeMaxRecursionDepth(3)]")
w(";   void refine(DispatchNodeInputRecord<ResolveRec> in, [MaxRecords(1)] NodeOutput<ResolveRec> refine);")
w(";   [NodeLaunch(\"coalescing\")] [NumThreads(64,1,1)] void stats([MaxRecords(64)] EmptyNodeInput in);")
w(";   struct EntryRec   { uint3 grid : SV_DispatchGrid; uint seed; };")
w(";   struct WorkRec    { uint id; uint value; float weight; uint flags; };")
w(";   struct BinRec     { uint id; uint bin; };")
w(";   struct ResolveRec { uint id; uint value; };")
w(";   struct PC { uint base; uint mul; };  [[vk::push_constant]] PC pc;")
w(";   RWStructuredBuffer<uint> Out : register(u0);")
I = "               "
w(I + "OpCapability Shader")
w(I + "OpCapability ShaderEnqueueAMDX")
w(I + 'OpExtension "SPV_AMDX_shader_enqueue"')
w(I + "OpMemoryModel Logical GLSL450")
for fid, name, iface in eps:
    w(I + f'OpEntryPoint GLCompute {fid} "{name}" {iface}')
for m in modes:
    w(I + m)
w(I + "OpSource HLSL 680")
for n in names:
    w(I + n)
for rec, members in [("EntryRec", ["grid", "seed"]),
                     ("WorkRec", ["id", "value", "weight", "flags"]),
                     ("BinRec", ["id", "bin"]),
                     ("ResolveRec", ["id", "value"])]:
    w(I + f'OpName %{rec} "{rec}"')
    for i, m in enumerate(members):
        w(I + f'OpMemberName %{rec} {i} "{m}"')
w(I + 'OpName %Out "Out"')
w(I + 'OpName %pc "pc"')
w(I + "OpDecorate %gl_LocalInvocationIndex BuiltIn LocalInvocationIndex")
w(I + "OpDecorate %gl_GlobalInvocationID BuiltIn GlobalInvocationId")
w(I + "OpDecorate %gl_WorkGroupID BuiltIn WorkgroupId")
w(I + "OpDecorate %gShaderIndex BuiltIn ShaderIndexAMDX")
w(I + "OpDecorate %gl_RemainingRecursionLevels BuiltIn RemainingRecursionLevelsAMDX")
w(I + "OpDecorate %Out DescriptorSet 0")
w(I + "OpDecorate %Out Binding 0")
w(I + "OpDecorate %_runtimearr_uint ArrayStride 4")
w(I + "OpMemberDecorate %type_RWStructuredBuffer_uint 0 Offset 0")
w(I + "OpDecorate %type_RWStructuredBuffer_uint Block")
w(I + "OpMemberDecorate %type_PushConstant_PC 0 Offset 0")
w(I + "OpMemberDecorate %type_PushConstant_PC 1 Offset 4")
w(I + "OpDecorate %type_PushConstant_PC Block")
w(I + "OpMemberDecorate %EntryRec 0 Offset 0")
w(I + "OpMemberDecorate %EntryRec 0 PayloadDispatchIndirectAMDX")
w(I + "OpMemberDecorate %EntryRec 1 Offset 12")
for i in range(4):
    w(I + f"OpMemberDecorate %WorkRec {i} Offset {4 * i}")
for rec in ("BinRec", "ResolveRec"):
    w(I + f"OpMemberDecorate %{rec} 0 Offset 0")
    w(I + f"OpMemberDecorate %{rec} 1 Offset 4")
for d in decor:
    w(I + d)
w("%uint = OpTypeInt 32 0")
w("%float = OpTypeFloat 32")
for c in consts:
    w(f"%uint_{c} = OpConstant %uint {c}")
w("%float_0_5 = OpConstant %float 0.5")
w("%bool = OpTypeBool")
w("%true = OpConstantTrue %bool")
w("%false = OpConstantFalse %bool")
for n in ["classify", "bin", "stats", "shade", "count", "resolve", "refine"]:
    w(f'%str_{n} = OpConstantStringAMDX "{n}"')
w("%void = OpTypeVoid")
w("%fn = OpTypeFunction %void")
w("%v3uint = OpTypeVector %uint 3")
w("%_runtimearr_uint = OpTypeRuntimeArray %uint")
w("%type_RWStructuredBuffer_uint = OpTypeStruct %_runtimearr_uint")
w("%_ptr_StorageBuffer_type_RWStructuredBuffer_uint = OpTypePointer StorageBuffer %type_RWStructuredBuffer_uint")
w("%_ptr_StorageBuffer_uint = OpTypePointer StorageBuffer %uint")
w("%Out = OpVariable %_ptr_StorageBuffer_type_RWStructuredBuffer_uint StorageBuffer")
w("%type_PushConstant_PC = OpTypeStruct %uint %uint")
w("%_ptr_PushConstant_type_PushConstant_PC = OpTypePointer PushConstant %type_PushConstant_PC")
w("%_ptr_PushConstant_uint = OpTypePointer PushConstant %uint")
w("%pc = OpVariable %_ptr_PushConstant_type_PushConstant_PC PushConstant")
w("%_ptr_Input_uint = OpTypePointer Input %uint")
w("%_ptr_Input_v3uint = OpTypePointer Input %v3uint")
w("%gl_LocalInvocationIndex = OpVariable %_ptr_Input_uint Input")
w("%gl_GlobalInvocationID = OpVariable %_ptr_Input_v3uint Input")
w("%gl_WorkGroupID = OpVariable %_ptr_Input_v3uint Input")
w("%gShaderIndex = OpVariable %_ptr_Input_uint Input")
w("%gl_RemainingRecursionLevels = OpVariable %_ptr_Input_uint Input")
w("%_ptr_Workgroup_uint = OpTypePointer Workgroup %uint")
w("%EntryRec = OpTypeStruct %v3uint %uint")
w("%WorkRec = OpTypeStruct %uint %uint %float %uint")
w("%BinRec = OpTypeStruct %uint %uint")
w("%ResolveRec = OpTypeStruct %uint %uint")
w("%Empty = OpTypeStruct")
w("%_ptr_NodePayloadAMDX_uint = OpTypePointer NodePayloadAMDX %uint")
w("%_ptr_NodePayloadAMDX_float = OpTypePointer NodePayloadAMDX %float")
w("%_ptr_NodePayloadAMDX_v3uint = OpTypePointer NodePayloadAMDX %v3uint")
for t in types:
    w(t)
for f in funcs:
    for line in f.strip("\n").split("\n"):
        if " = " in line or line.startswith("%"):
            w(line)
        else:
            w(I + line)
print("\n".join(out))
