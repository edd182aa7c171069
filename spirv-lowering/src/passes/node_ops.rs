//! The AMDX instructions.
//!
//! Matches: `OpAllocateNodePayloadsAMDX`, `OpEnqueueNodePayloadsAMDX`,
//! `OpIsNodePayloadValidAMDX`, `OpNodePayloadArrayLengthAMDX` and
//! `OpFinishWritingNodePayloadAMDX` in every function.
//! Emits helper functions (one allocation and one validity helper per output,
//! one enqueue and one finish-writing helper) and replaces each instruction by a
//! call or a few plain instructions:
//! * allocate: look up the target slot in the output's `OutputLink` (index =
//!   base + node index; out of range, `NO_NODE`, self-target without recursion
//!   levels, or a count above NodeMaxPayloadsAMDX -> status bit and the sink),
//!   bump `out_payload_top` by `16 + count * stride` rounded to 16 (overflow ->
//!   status bit and the sink), write the `AllocHeader`, zero TrackFinishWriting
//!   counters; Workgroup visibility: invocation 0 allocates, the address is
//!   broadcast through a Workgroup variable between two barriers (thread-packed
//!   nodes allocate per invocation);
//! * allocate of empty records: also enqueues them (see
//!   `enqueued_on_allocation`); their enqueue instruction is dropped;
//! * enqueue: one invocation (all for Invocation visibility) bumps
//!   `node_counts[slot]` and writes a bounds-checked `OutputEntry`; every
//!   `ADVANCE_ENTRIES_PER_GROUP`-th entry also raises the workgroup count of
//!   the meta pass after the level (`GraphContext::advance_groups`);
//! * is-valid: the same slot lookup without allocating;
//! * array length: the input's record count, or the allocation header's count;
//! * finish writing: invocation 0 bumps the record's hidden counter; true for
//!   the whole workgroup when it was the grid's last workgroup.
//!
//! Afterwards no AMDX instruction is left in any function.

use super::payload::InputLowering;
use super::Ctx;
use crate::abi::{
    ADVANCE_ENTRIES_PER_GROUP, ADVANCE_MAX_GROUPS, ALLOC_ALIGN, ALLOC_FLAG_WORKGROUP, NO_NODE, STATUS_ENTRY_OVERFLOW,
    STATUS_INVALID_NODE, STATUS_PAYLOAD_OVERFLOW, STATUS_RECURSION_LIMIT, STATUS_TOO_MANY_PAYLOADS,
};
use crate::analyze::finish_counter_offset;
use crate::codegen::{f, Body};
use crate::consts::eval_u32;
use crate::error::LowerError;
use crate::ir::{id, inst, lit, op_id, Ir};
use rspirv::dr::{Function, Instruction, Operand};
use spirv::{FunctionControl, MemoryAccess, Op, Scope, StorageClass, Word};
use std::collections::HashMap;

const BARRIER_SEMANTICS: u32 = 0x8 | 0x100; // AcquireRelease | WorkgroupMemory

struct Helpers {
    alloc_inv: HashMap<usize, Word>,
    alloc_wg: HashMap<usize, Word>,
    valid: HashMap<usize, Word>,
    enqueue: Option<Word>,
    finish: Option<Word>,
    shared_u64: Option<Word>,
    shared_u32: Option<Word>,
    new_fns: Vec<Function>,
}

pub fn run(ir: &mut Ir, cx: &Ctx, input: InputLowering) -> Result<(), LowerError> {
    let mut h = Helpers {
        alloc_inv: HashMap::new(),
        alloc_wg: HashMap::new(),
        valid: HashMap::new(),
        enqueue: None,
        finish: None,
        shared_u64: None,
        shared_u32: None,
        new_fns: vec![],
    };
    let types = ir.type_map();
    let a = cx.abi;
    let out_index = |t: Word| cx.facts.info.outputs.iter().position(|o| o.type_id == t);
    let fcount = ir.m.functions.len();
    for fi in 0..fcount {
        let nb = ir.m.functions.get(fi).map(|f| f.blocks.len()).unwrap_or(0);
        for bi in 0..nb {
            let old = match ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)) {
                Some(b) => std::mem::take(&mut b.instructions),
                None => continue,
            };
            let mut out: Vec<Instruction> = Vec::with_capacity(old.len());
            for i in old {
                let err = |d: &str| LowerError::Invalid {
                    entry: cx.entry(),
                    opcode: format!("Op{:?}", i.class.opcode),
                    result_id: i.result_id,
                    detail: d.into(),
                };
                match i.class.opcode {
                    Op::AllocateNodePayloadsAMDX => {
                        let (Some(rt), Some(rid), Some(scope), Some(count), Some(nidx)) =
                            (i.result_type, i.result_id, op_id(&i, 0), op_id(&i, 1), op_id(&i, 2))
                        else {
                            return Err(err("missing operands"));
                        };
                        let arr =
                            cx.facts.info.outputs.iter().position(|o| Some(o.type_id) == ir_pointee_before(cx, rt));
                        let k = arr.ok_or_else(|| err("result type is not a known output payload array"))?;
                        let wg =
                            eval_u32(ir, &cx.opts.specialization, scope) == Some(Scope::Workgroup as u32) && !cx.packed;
                        let fun = if wg { alloc_wg(ir, cx, &mut h, k) } else { alloc_inv(ir, cx, &mut h, k) };
                        let addr = ir.id();
                        out.push(inst(Op::FunctionCall, Some(a.u64), Some(addr), vec![id(fun), id(count), id(nidx)]));
                        out.push(inst(Op::ConvertUToPtr, Some(rt), Some(rid), vec![id(addr)]));
                        if enqueued_on_allocation(cx, k) {
                            let fun = enqueue(ir, cx, &mut h);
                            let r = ir.id();
                            out.push(inst(Op::FunctionCall, Some(a.void), Some(r), vec![id(fun), id(addr)]));
                        }
                    }
                    Op::EnqueueNodePayloadsAMDX => {
                        let p = op_id(&i, 0).ok_or_else(|| err("missing operand"))?;
                        let ptype = types.get(&p).copied();
                        let k =
                            ptype.and_then(|t| out_index(t).or_else(|| ir_pointee_before(cx, t).and_then(out_index)));
                        if k.is_some_and(|k| enqueued_on_allocation(cx, k)) {
                            continue;
                        }
                        let fun = enqueue(ir, cx, &mut h);
                        let addr = ir.id();
                        let r = ir.id();
                        out.push(inst(Op::ConvertPtrToU, Some(a.u64), Some(addr), vec![id(p)]));
                        out.push(inst(Op::FunctionCall, Some(a.void), Some(r), vec![id(fun), id(addr)]));
                    }
                    Op::IsNodePayloadValidAMDX => {
                        let (Some(rt), Some(rid), Some(t), Some(nidx)) =
                            (i.result_type, i.result_id, op_id(&i, 0), op_id(&i, 1))
                        else {
                            return Err(err("missing operands"));
                        };
                        let k = out_index(t).ok_or_else(|| err("payload type is not a known output"))?;
                        let fun = valid(ir, cx, &mut h, k);
                        out.push(inst(Op::FunctionCall, Some(rt), Some(rid), vec![id(fun), id(nidx)]));
                    }
                    Op::NodePayloadArrayLengthAMDX => {
                        let (Some(rt), Some(rid), Some(p)) = (i.result_type, i.result_id, op_id(&i, 0)) else {
                            return Err(err("missing operands"));
                        };
                        let pty = types.get(&p).copied();
                        if pty == cx.facts.input_ptr_type && pty.is_some() {
                            out.push(inst(Op::Load, Some(rt), Some(rid), vec![id(cx.vars.rec_count)]));
                        } else {
                            let (addr, ha, hp, cp) = (ir.id(), ir.id(), ir.id(), ir.id());
                            let c16 = ir.c_u64(16);
                            let k = ir.c_u32(f::H_COUNT);
                            out.push(inst(Op::ConvertPtrToU, Some(a.u64), Some(addr), vec![id(p)]));
                            out.push(inst(Op::ISub, Some(a.u64), Some(ha), vec![id(addr), id(c16)]));
                            out.push(inst(Op::ConvertUToPtr, Some(a.p_header), Some(hp), vec![id(ha)]));
                            out.push(inst(Op::AccessChain, Some(a.p_u32), Some(cp), vec![id(hp), id(k)]));
                            out.push(inst(
                                Op::Load,
                                Some(rt),
                                Some(rid),
                                vec![id(cp), Operand::MemoryAccess(MemoryAccess::ALIGNED), lit(4)],
                            ));
                        }
                    }
                    Op::FinishWritingNodePayloadAMDX => {
                        let (Some(rt), Some(rid), Some(p)) = (i.result_type, i.result_id, op_id(&i, 0)) else {
                            return Err(err("missing operands"));
                        };
                        if !cx.facts.info.track_finish_writing {
                            return Err(err("the input payload is not decorated TrackFinishWritingAMDX"));
                        }
                        let fun = finish(ir, cx, &mut h);
                        let addr = ir.id();
                        if input.plain {
                            out.push(inst(Op::ConvertPtrToU, Some(a.u64), Some(addr), vec![id(p)]));
                        } else {
                            let pa = ir.id();
                            let zero = ir.c_u32(0);
                            out.push(inst(Op::AccessChain, Some(a.p_u64), Some(pa), vec![id(p), id(zero)]));
                            out.push(inst(
                                Op::Load,
                                Some(a.u64),
                                Some(addr),
                                vec![id(pa), Operand::MemoryAccess(MemoryAccess::ALIGNED), lit(8)],
                            ));
                        }
                        out.push(inst(Op::FunctionCall, Some(rt), Some(rid), vec![id(fun), id(addr)]));
                    }
                    _ => out.push(i),
                }
            }
            if let Some(b) = ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)) {
                b.instructions = out;
            }
        }
    }
    ir.m.functions.extend(h.new_fns);
    Ok(())
}

/// Empty records are enqueued when they are allocated (and their
/// `OpEnqueueNodePayloadsAMDX` is a no-op): nothing can be written to them, so
/// the two are equivalent, and DXC emits `ThreadIncrementOutputCount` and
/// `GroupIncrementOutputCount` as an allocation with no enqueue after it.
fn enqueued_on_allocation(cx: &Ctx, k: usize) -> bool {
    cx.facts.info.outputs.get(k).is_some_and(|o| o.payload_size == 0)
}

/// The output array type a (retyped) allocation result type pointed to.
fn ir_pointee_before(cx: &Ctx, ptr_ty: Word) -> Option<Word> {
    cx.facts.output_ptr_types.get(&ptr_ty).copied()
}

fn begin_fn(ir: &mut Ir, ret: Word, params: &[Word]) -> (Word, Vec<Word>, Function, Body) {
    let fty = ir.t_fn(ret, params);
    let fid = ir.id();
    let mut func = Function::new();
    func.def =
        Some(inst(Op::Function, Some(ret), Some(fid), vec![Operand::FunctionControl(FunctionControl::NONE), id(fty)]));
    let mut ps = vec![];
    for p in params {
        let w = ir.id();
        func.parameters.push(inst(Op::FunctionParameter, Some(*p), Some(w), vec![]));
        ps.push(w);
    }
    func.end = Some(inst(Op::FunctionEnd, None, None, vec![]));
    let l = ir.id();
    (fid, ps, func, Body::new(l))
}

fn finish_fn(h: &mut Helpers, mut func: Function, body: Body) {
    func.blocks = body.finish();
    h.new_fns.push(func);
}

/// Loads the dispatch and context pointers from the push block.
pub(super) fn push_ptrs(ir: &mut Ir, cx: &Ctx, b: &mut Body) -> (Word, Word) {
    let a = cx.abi;
    let m0 = ir.c_u32(cx.push.member);
    let m1 = ir.c_u32(cx.push.member + 1);
    let p0 = b.op(ir, Op::AccessChain, cx.push.ptr_u64, vec![id(cx.push.var), id(m0)]);
    let p1 = b.op(ir, Op::AccessChain, cx.push.ptr_u64, vec![id(cx.push.var), id(m1)]);
    let d = b.op(ir, Op::Load, a.u64, vec![id(p0)]);
    let c = b.op(ir, Op::Load, a.u64, vec![id(p1)]);
    let dp = b.addr_ptr(ir, a.p_dispatch, d);
    let cp = b.addr_ptr(ir, a.p_ctx, c);
    (dp, cp)
}

/// Slot lookup shared by allocation and validity.
struct Lookup {
    /// Target slot (garbage unless `present`).
    slot: Word,
    /// Index in range and a node linked there.
    present: Word,
    /// The target is this node (self-recursion).
    is_self: Word,
    /// Not self, or recursion levels left.
    rec_ok: Word,
    /// Pointer to `NodeInfo[0]`.
    nodes: Word,
}

fn lookup(ir: &mut Ir, cx: &Ctx, b: &mut Body, k: usize, nidx: Word, disp: Word, ctx: Word) -> Lookup {
    let a = cx.abi;
    let o = cx.facts.info.outputs.get(k).cloned();
    let base = o.as_ref().map(|o| o.base_index).unwrap_or(0);
    let self_slot = b.load_field(ir, &a, a.s_dispatch(), disp, f::D_NODE_SLOT);
    let nodes_addr = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_NODES);
    let nodes = b.addr_ptr(ir, a.p_node, nodes_addr);
    let me = b.elem(ir, a.p_node, nodes, self_slot);
    let first = b.load_field(ir, &a, a.s_node(), me, f::N_FIRST_LINK);
    let kc = ir.c_u32(k as u32);
    let li = b.bin(ir, Op::IAdd, a.u32, first, kc);
    let links_addr = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_LINKS);
    let links = b.addr_ptr(ir, a.p_link, links_addr);
    let link = b.elem(ir, a.p_link, links, li);
    let slots_addr = b.load_field(ir, &a, a.s_link(), link, f::L_SLOTS);
    let slots = b.addr_ptr(ir, a.p_u32, slots_addr);
    let n = b.load_field(ir, &a, a.s_link(), link, f::L_SLOT_COUNT);
    let basec = ir.c_u32(base);
    let i = b.bin(ir, Op::IAdd, a.u32, nidx, basec);
    let inr = b.bin(ir, Op::ULessThan, a.bool_, i, n);
    let zero = ir.c_u32(0);
    let ci = b.op(ir, Op::Select, a.u32, vec![id(inr), id(i), id(zero)]);
    let sp = b.elem(ir, a.p_u32, slots, ci);
    let slot = b.load(ir, a.u32, sp, 4);
    let none = ir.c_u32(NO_NODE);
    let has = b.bin(ir, Op::INotEqual, a.bool_, slot, none);
    let present = b.bin(ir, Op::LogicalAnd, a.bool_, inr, has);
    let is_self = b.bin(ir, Op::IEqual, a.bool_, slot, self_slot);
    let rem = b.op(ir, Op::Load, a.u32, vec![id(cx.vars.remaining)]);
    let left = b.bin(ir, Op::UGreaterThan, a.bool_, rem, zero);
    let not_self = b.op(ir, Op::LogicalNot, a.bool_, vec![id(is_self)]);
    let rec_ok = b.bin(ir, Op::LogicalOr, a.bool_, not_self, left);
    Lookup { slot, present, is_self, rec_ok, nodes }
}

fn valid(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, k: usize) -> Word {
    if let Some(w) = h.valid.get(&k) {
        return *w;
    }
    let a = cx.abi;
    let (fid, ps, func, mut b) = begin_fn(ir, a.bool_, &[a.u32]);
    let (disp, ctx) = push_ptrs(ir, cx, &mut b);
    let nidx = ps.first().copied().unwrap_or(0);
    let lk = lookup(ir, cx, &mut b, k, nidx, disp, ctx);
    let r = b.bin(ir, Op::LogicalAnd, a.bool_, lk.present, lk.rec_ok);
    b.end(inst(Op::ReturnValue, None, None, vec![id(r)]), None);
    finish_fn(h, func, b);
    ir.name(fid, &format!("node_output{k}_is_valid"));
    h.valid.insert(k, fid);
    fid
}

fn alloc_inv(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, k: usize) -> Word {
    if let Some(w) = h.alloc_inv.get(&k) {
        return *w;
    }
    let a = cx.abi;
    let o = cx.facts.info.outputs.get(k).cloned();
    let (maxp, stride, track, size) = o
        .as_ref()
        .map(|o| (o.max_payloads, o.record_stride, o.track_finish_writing, o.payload_size))
        .unwrap_or((0, 4, false, 0));
    let (fid, ps, func, mut b) = begin_fn(ir, a.u64, &[a.u32, a.u32]);
    let (count, nidx) = (ps.first().copied().unwrap_or(0), ps.get(1).copied().unwrap_or(0));
    let (disp, ctx) = push_ptrs(ir, cx, &mut b);
    let lk = lookup(ir, cx, &mut b, k, nidx, disp, ctx);
    let zero = ir.c_u32(0);
    let maxc = ir.c_u32(maxp);
    let cnt_ok = b.bin(ir, Op::ULessThanEqual, a.bool_, count, maxc);
    let v1 = b.bin(ir, Op::LogicalAnd, a.bool_, lk.present, lk.rec_ok);
    let valid = b.bin(ir, Op::LogicalAnd, a.bool_, v1, cnt_ok);
    let cc = b.op(ir, Op::Select, a.u32, vec![id(cnt_ok), id(count), id(maxc)]);
    // bytes = round_up(16 + cc * stride, 16); cc <= maxp keeps this in range.
    let sc = ir.c_u32(stride);
    let body_bytes = b.bin(ir, Op::IMul, a.u32, cc, sc);
    let extra = ir.c_u32(16 + ALLOC_ALIGN - 1);
    let t = b.bin(ir, Op::IAdd, a.u32, body_bytes, extra);
    let mask = ir.c_u32(!(ALLOC_ALIGN - 1));
    let bytes = b.bin(ir, Op::BitwiseAnd, a.u32, t, mask);
    let req = b.op(ir, Op::Select, a.u32, vec![id(valid), id(bytes), id(zero)]);
    let top = b.field_ptr(ir, &a, a.s_ctx(), ctx, f::C_OUT_TOP);
    let off = b.atomic(ir, Op::AtomicIAdd, a.u32, top, req);
    let cap = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_OUT_CAPACITY);
    let under = b.bin(ir, Op::ULessThanEqual, a.bool_, off, cap);
    let room0 = b.bin(ir, Op::ISub, a.u32, cap, off);
    let room = b.op(ir, Op::Select, a.u32, vec![id(under), id(room0), id(zero)]);
    let fits = b.bin(ir, Op::ULessThanEqual, a.bool_, bytes, room);
    let ok = b.bin(ir, Op::LogicalAnd, a.bool_, valid, fits);
    // Status bits.
    let bit = |ir: &mut Ir, b: &mut Body, good: Word, v: u32| {
        let c = ir.c_u32(v);
        b.op(ir, Op::Select, a.u32, vec![id(good), id(zero), id(c)])
    };
    // Allocating zero records (a recursion leaf, an unused output) is no error.
    let none_asked = b.bin(ir, Op::IEqual, a.bool_, count, zero);
    let present_or_none = b.bin(ir, Op::LogicalOr, a.bool_, lk.present, none_asked);
    let rec_or_none = b.bin(ir, Op::LogicalOr, a.bool_, lk.rec_ok, none_asked);
    let s1 = bit(ir, &mut b, present_or_none, STATUS_INVALID_NODE);
    let s2 = bit(ir, &mut b, rec_or_none, STATUS_RECURSION_LIMIT);
    let s3 = bit(ir, &mut b, cnt_ok, STATUS_TOO_MANY_PAYLOADS);
    let nv = b.op(ir, Op::LogicalNot, a.bool_, vec![id(valid)]);
    let fits_or = b.bin(ir, Op::LogicalOr, a.bool_, nv, fits);
    let s4 = bit(ir, &mut b, fits_or, STATUS_PAYLOAD_OVERFLOW);
    let s12 = b.bin(ir, Op::BitwiseOr, a.u32, s1, s2);
    let s34 = b.bin(ir, Op::BitwiseOr, a.u32, s3, s4);
    let st = b.bin(ir, Op::BitwiseOr, a.u32, s12, s34);
    let bad = b.bin(ir, Op::INotEqual, a.bool_, st, zero);
    let m = b.begin_if(ir, bad);
    let sp = b.field_ptr(ir, &a, a.s_ctx(), ctx, f::C_STATUS);
    b.atomic(ir, Op::AtomicOr, a.u32, sp, st);
    b.end_if(m);
    let base = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_OUT_BASE);
    let off64 = b.op(ir, Op::UConvert, a.u64, vec![id(off)]);
    let good_addr = b.bin(ir, Op::IAdd, a.u64, base, off64);
    let sink = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_SINK);
    let addr = b.op(ir, Op::Select, a.u64, vec![id(ok), id(good_addr), id(sink)]);
    let hp = b.addr_ptr(ir, a.p_header, addr);
    // Remaining recursion of the records: parent's - 1 for self, else the target's limit.
    let tslot = b.op(ir, Op::Select, a.u32, vec![id(lk.present), id(lk.slot), id(zero)]);
    let tn = b.elem(ir, a.p_node, lk.nodes, tslot);
    let tmax = b.load_field(ir, &a, a.s_node(), tn, f::N_MAX_RECURSION);
    let rem = b.op(ir, Op::Load, a.u32, vec![id(cx.vars.remaining)]);
    let one = ir.c_u32(1);
    let rem1 = b.bin(ir, Op::ISub, a.u32, rem, one);
    let trem = b.op(ir, Op::Select, a.u32, vec![id(lk.is_self), id(rem1), id(tmax)]);
    let none = ir.c_u32(NO_NODE);
    let hslot = b.op(ir, Op::Select, a.u32, vec![id(ok), id(lk.slot), id(none)]);
    for (fk, v) in [(f::H_SLOT, hslot), (f::H_COUNT, cc), (f::H_REMAINING, trem), (f::H_FLAGS, zero)] {
        let p = b.field_ptr(ir, &a, a.s_header(), hp, fk);
        b.store(p, v, 4);
    }
    let c16 = ir.c_u64(16);
    let rec = b.bin(ir, Op::IAdd, a.u64, addr, c16);
    if track {
        // for (j = 0; j < cc; j++) counter(j) = 0
        let jv = ir.id();
        let fp = ir.t_ptr(StorageClass::Function, a.u32, None);
        b.blocks_first_var(inst(Op::Variable, Some(fp), Some(jv), vec![Operand::StorageClass(StorageClass::Function)]));
        b.store_plain(jv, zero);
        let (hd, cond, body, cont, merge) = (ir.id(), ir.id(), ir.id(), ir.id(), ir.id());
        b.end(inst(Op::Branch, None, None, vec![id(hd)]), Some(hd));
        b.push(inst(
            Op::LoopMerge,
            None,
            None,
            vec![id(merge), id(cont), Operand::LoopControl(spirv::LoopControl::NONE)],
        ));
        b.end(inst(Op::Branch, None, None, vec![id(cond)]), Some(cond));
        let j = b.op(ir, Op::Load, a.u32, vec![id(jv)]);
        let lt = b.bin(ir, Op::ULessThan, a.bool_, j, cc);
        b.end(inst(Op::BranchConditional, None, None, vec![id(lt), id(body), id(merge)]), Some(body));
        let j64 = b.op(ir, Op::UConvert, a.u64, vec![id(j)]);
        let s64 = ir.c_u64(u64::from(stride));
        let o64 = b.bin(ir, Op::IMul, a.u64, j64, s64);
        let co = ir.c_u64(u64::from(finish_counter_offset(size)));
        let r1 = b.bin(ir, Op::IAdd, a.u64, rec, o64);
        let r2 = b.bin(ir, Op::IAdd, a.u64, r1, co);
        let cp = b.addr_ptr(ir, a.p_u32, r2);
        b.store(cp, zero, 4);
        b.end(inst(Op::Branch, None, None, vec![id(cont)]), Some(cont));
        let j1 = b.bin(ir, Op::IAdd, a.u32, j, one);
        b.store_plain(jv, j1);
        b.end(inst(Op::Branch, None, None, vec![id(hd)]), Some(merge));
    }
    b.end(inst(Op::ReturnValue, None, None, vec![id(rec)]), None);
    finish_fn(h, func, b);
    ir.name(fid, &format!("node_output{k}_allocate"));
    h.alloc_inv.insert(k, fid);
    fid
}

fn shared(ir: &mut Ir, slot: &mut Option<Word>, ty: Word, name: &str) -> Word {
    if let Some(w) = slot {
        return *w;
    }
    let v = ir.global_var(StorageClass::Workgroup, ty, name);
    *slot = Some(v);
    v
}

fn barrier(ir: &mut Ir, b: &mut Body) {
    let wg = ir.c_u32(Scope::Workgroup as u32);
    let sem = ir.c_u32(BARRIER_SEMANTICS);
    b.push(inst(Op::ControlBarrier, None, None, vec![id(wg), id(wg), id(sem)]));
}

fn alloc_wg(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, k: usize) -> Word {
    if let Some(w) = h.alloc_wg.get(&k) {
        return *w;
    }
    let a = cx.abi;
    let inner = alloc_inv(ir, cx, h, k);
    let sh = shared(ir, &mut h.shared_u64, a.u64, "node_alloc_broadcast");
    let (fid, ps, func, mut b) = begin_fn(ir, a.u64, &[a.u32, a.u32]);
    let lidx = b.op(ir, Op::Load, a.u32, vec![id(cx.real.lidx)]);
    let zero = ir.c_u32(0);
    let first = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    let m = b.begin_if(ir, first);
    let r = b.op(
        ir,
        Op::FunctionCall,
        a.u64,
        vec![id(inner), id(ps.first().copied().unwrap_or(0)), id(ps.get(1).copied().unwrap_or(0))],
    );
    let hdr = {
        let c16 = ir.c_u64(16);
        let ha = b.bin(ir, Op::ISub, a.u64, r, c16);
        b.addr_ptr(ir, a.p_header, ha)
    };
    let fp = b.field_ptr(ir, &a, a.s_header(), hdr, f::H_FLAGS);
    let flag = ir.c_u32(ALLOC_FLAG_WORKGROUP);
    b.store(fp, flag, 4);
    b.store_plain(sh, r);
    b.end_if(m);
    barrier(ir, &mut b);
    let v = b.op(ir, Op::Load, a.u64, vec![id(sh)]);
    barrier(ir, &mut b);
    b.end(inst(Op::ReturnValue, None, None, vec![id(v)]), None);
    finish_fn(h, func, b);
    ir.name(fid, &format!("node_output{k}_allocate_workgroup"));
    h.alloc_wg.insert(k, fid);
    fid
}

fn enqueue(ir: &mut Ir, cx: &Ctx, h: &mut Helpers) -> Word {
    if let Some(w) = h.enqueue {
        return w;
    }
    let a = cx.abi;
    let (fid, ps, func, mut b) = begin_fn(ir, a.void, &[a.u64]);
    let addr = ps.first().copied().unwrap_or(0);
    let c16 = ir.c_u64(16);
    let ha = b.bin(ir, Op::ISub, a.u64, addr, c16);
    let hp = b.addr_ptr(ir, a.p_header, ha);
    let slot = b.load_field(ir, &a, a.s_header(), hp, f::H_SLOT);
    let cnt = b.load_field(ir, &a, a.s_header(), hp, f::H_COUNT);
    let rem = b.load_field(ir, &a, a.s_header(), hp, f::H_REMAINING);
    let flags = b.load_field(ir, &a, a.s_header(), hp, f::H_FLAGS);
    let zero = ir.c_u32(0);
    let one = ir.c_u32(1);
    let wgf = ir.c_u32(ALLOC_FLAG_WORKGROUP);
    let fl = b.bin(ir, Op::BitwiseAnd, a.u32, flags, wgf);
    let inv = b.bin(ir, Op::IEqual, a.bool_, fl, zero);
    let lidx = b.op(ir, Op::Load, a.u32, vec![id(cx.real.lidx)]);
    let l0 = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    let mine = b.bin(ir, Op::LogicalOr, a.bool_, inv, l0);
    let none = ir.c_u32(NO_NODE);
    let real = b.bin(ir, Op::INotEqual, a.bool_, slot, none);
    let some = b.bin(ir, Op::INotEqual, a.bool_, cnt, zero);
    let g1 = b.bin(ir, Op::LogicalAnd, a.bool_, mine, real);
    let go = b.bin(ir, Op::LogicalAnd, a.bool_, g1, some);
    let m = b.begin_if(ir, go);
    let (_, ctx) = push_ptrs(ir, cx, &mut b);
    let counts_addr = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_NODE_COUNTS);
    let counts = b.addr_ptr(ir, a.p_u32, counts_addr);
    let cp = b.elem(ir, a.p_u32, counts, slot);
    let rank = b.atomic(ir, Op::AtomicIAdd, a.u32, cp, cnt);
    let ecp = b.field_ptr(ir, &a, a.s_ctx(), ctx, f::C_ENTRY_COUNT);
    let e = b.atomic(ir, Op::AtomicIAdd, a.u32, ecp, one);
    let cap = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_ENTRY_CAPACITY);
    let fits = b.bin(ir, Op::ULessThan, a.bool_, e, cap);
    let m2 = b.begin_if(ir, fits);
    let ents_addr = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_ENTRIES);
    let ents = b.addr_ptr(ir, a.p_entry, ents_addr);
    let ep = b.elem(ir, a.p_entry, ents, e);
    let p0 = b.field_ptr(ir, &a, a.s_entry(), ep, 0);
    b.store(p0, addr, 8);
    for (k, v) in [(1, slot), (2, rank), (3, cnt), (4, rem)] {
        let p = b.field_ptr(ir, &a, a.s_entry(), ep, k);
        b.store(p, v, 4);
    }
    // Size the meta pass after this level: the entry that starts a group of
    // ADVANCE_ENTRIES_PER_GROUP raises its workgroup count (abi::GraphContext::advance_groups).
    let per_group = ir.c_u32(ADVANCE_ENTRIES_PER_GROUP);
    let within = b.bin(ir, Op::UMod, a.u32, e, per_group);
    let starts = b.bin(ir, Op::IEqual, a.bool_, within, zero);
    let m4 = b.begin_if(ir, starts);
    let group = b.bin(ir, Op::UDiv, a.u32, e, per_group);
    let groups = b.bin(ir, Op::IAdd, a.u32, group, one);
    let max_groups = ir.c_u32(ADVANCE_MAX_GROUPS);
    let lt_max = b.bin(ir, Op::ULessThan, a.bool_, groups, max_groups);
    let groups = b.op(ir, Op::Select, a.u32, vec![id(lt_max), id(groups), id(max_groups)]);
    let gp = b.field_ptr(ir, &a, a.s_ctx(), ctx, f::C_ADVANCE_X);
    b.atomic(ir, Op::AtomicUMax, a.u32, gp, groups);
    b.end_if(m4);
    b.end_if(m2);
    let full = b.op(ir, Op::LogicalNot, a.bool_, vec![id(fits)]);
    let m3 = b.begin_if(ir, full);
    let sp = b.field_ptr(ir, &a, a.s_ctx(), ctx, f::C_STATUS);
    let bit = ir.c_u32(STATUS_ENTRY_OVERFLOW);
    b.atomic(ir, Op::AtomicOr, a.u32, sp, bit);
    b.end_if(m3);
    b.end_if(m);
    b.end(inst(Op::Return, None, None, vec![]), None);
    finish_fn(h, func, b);
    ir.name(fid, "node_enqueue");
    h.enqueue = Some(fid);
    fid
}

fn finish(ir: &mut Ir, cx: &Ctx, h: &mut Helpers) -> Word {
    if let Some(w) = h.finish {
        return w;
    }
    let a = cx.abi;
    let sh = shared(ir, &mut h.shared_u32, a.u32, "node_finish_broadcast");
    let size = cx.facts.info.input.as_ref().map(|i| i.size).unwrap_or(0);
    let (fid, ps, func, mut b) = begin_fn(ir, a.bool_, &[a.u64]);
    let addr = ps.first().copied().unwrap_or(0);
    let zero = ir.c_u32(0);
    let one = ir.c_u32(1);
    let lidx = b.op(ir, Op::Load, a.u32, vec![id(cx.real.lidx)]);
    let l0 = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    let m = b.begin_if(ir, l0);
    let co = ir.c_u64(u64::from(finish_counter_offset(size)));
    let ca = b.bin(ir, Op::IAdd, a.u64, addr, co);
    let cp = b.addr_ptr(ir, a.p_u32, ca);
    let old = b.atomic(ir, Op::AtomicIAdd, a.u32, cp, one);
    let total = b.op(ir, Op::Load, a.u32, vec![id(cx.vars.wg_total)]);
    let n = b.bin(ir, Op::IAdd, a.u32, old, one);
    let last = b.bin(ir, Op::IEqual, a.bool_, n, total);
    let v = b.op(ir, Op::Select, a.u32, vec![id(last), id(one), id(zero)]);
    b.store_plain(sh, v);
    b.end_if(m);
    barrier(ir, &mut b);
    let r = b.op(ir, Op::Load, a.u32, vec![id(sh)]);
    barrier(ir, &mut b);
    let res = b.bin(ir, Op::INotEqual, a.bool_, r, zero);
    b.end(inst(Op::ReturnValue, None, None, vec![id(res)]), None);
    finish_fn(h, func, b);
    ir.name(fid, "node_finish_writing");
    h.finish = Some(fid);
    fid
}
