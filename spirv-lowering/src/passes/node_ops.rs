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
//!   bump the ring half's top by `16 + count * stride` rounded to 16, one
//!   atomic per subgroup where the device has subgroup arithmetic (overflow ->
//!   status bit and the sink; zero records -> the sink, no ring space), write
//!   the `AllocHeader` (and keep a Private copy for enqueue), zero
//!   TrackFinishWriting counters; Workgroup visibility: invocation 0
//!   allocates, the address is broadcast through a Workgroup variable between
//!   two barriers (thread-packed nodes allocate per invocation);
//! * allocate of empty records: also enqueues them (see
//!   `enqueued_on_allocation`); their enqueue instruction is dropped;
//! * enqueue: one invocation (all for Invocation visibility) numbers the
//!   records for their target with one 64-bit atomic on the target's counter
//!   (adding the workgroups of their grids when the target takes its grid
//!   from the payload) and publishes each in the record index (see `abi`);
//! * is-valid: the same slot lookup without allocating;
//! * array length: the input's record count, or the allocation header's count;
//! * finish writing: invocation 0 bumps the record's hidden counter; true for
//!   the whole workgroup when it was the grid's last workgroup.
//!
//! Every helper reads the node push block (`runtime::push`).
//!
//! Afterwards no AMDX instruction is left in any function.

use super::payload::InputLowering;
use super::Ctx;
use crate::abi::{
    ALLOC_ALIGN, ALLOC_FLAG_WORKGROUP, NO_NODE, SCHEDULE_DYNAMIC, STATUS_INVALID_NODE, STATUS_PAYLOAD_OVERFLOW,
    STATUS_RECURSION_LIMIT, STATUS_TOO_MANY_PAYLOADS,
};
use crate::analyze::finish_counter_offset;
use crate::codegen::{f, Body};
use crate::consts::eval_u32;
use crate::error::LowerError;
use crate::ir::{id, inst, lit, op_id, Ir};
use crate::runtime::{self, begin_fn, ctx_parity_ptr};
use crate::{GraphTables, OutputTargets};
use rspirv::dr::{Function, Instruction, Operand};
use spirv::{Capability, GroupOperation, MemoryAccess, Op, Scope, StorageClass, Word};
use std::collections::HashMap;

const BARRIER_SEMANTICS: u32 = 0x8 | 0x100; // AcquireRelease | WorkgroupMemory

struct Helpers {
    alloc_inv: HashMap<usize, Word>,
    alloc_wg: HashMap<usize, Word>,
    valid: HashMap<usize, Word>,
    enqueue: Option<Word>,
    insert: Option<Word>,
    finish: Option<Word>,
    shared_u64: Option<Word>,
    shared_u32: Option<Word>,
    cache: Option<AllocCache>,
    new_fns: Vec<Function>,
}

/// `Private` copies of the last allocation's header, so that enqueueing
/// what was just allocated (the usual case) does not read the header back
/// from memory: a round trip on the path to the next level.
#[derive(Clone, Copy)]
struct AllocCache {
    /// Address of the first record (`u64`; 0: nothing cached).
    addr: Word,
    slot: Word,
    count: Word,
    remaining: Word,
    flags: Word,
}

impl AllocCache {
    fn get(ir: &mut Ir, cx: &Ctx, h: &mut Helpers) -> AllocCache {
        if let Some(c) = h.cache {
            return c;
        }
        let a = cx.abi;
        let none = ir.c_u64(0);
        let addr = ir.private_var_init(a.u64, none, "node_alloc_cached_address");
        let mut var = |ty: Word, name: &str| ir.global_var(StorageClass::Private, ty, name);
        let c = AllocCache {
            addr,
            slot: var(a.u32, "node_alloc_cached_slot"),
            count: var(a.u32, "node_alloc_cached_count"),
            remaining: var(a.u32, "node_alloc_cached_remaining"),
            flags: var(a.u32, "node_alloc_cached_flags"),
        };
        h.cache = Some(c);
        c
    }
}

pub fn run(ir: &mut Ir, cx: &Ctx, input: InputLowering) -> Result<(), LowerError> {
    let mut h = Helpers {
        alloc_inv: HashMap::new(),
        alloc_wg: HashMap::new(),
        valid: HashMap::new(),
        enqueue: None,
        insert: None,
        finish: None,
        shared_u64: None,
        shared_u32: None,
        cache: None,
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
                        // The input handle became a u32 (see the payload pass).
                        let input_handle = pty == Some(a.u32) || (pty == cx.facts.input_ptr_type && pty.is_some());
                        if input_handle {
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
                        match input.address_fn {
                            None => out.push(inst(Op::ConvertPtrToU, Some(a.u64), Some(addr), vec![id(p)])),
                            Some(address_of) => {
                                let zero = ir.c_u32(0);
                                out.push(inst(
                                    Op::FunctionCall,
                                    Some(a.u64),
                                    Some(addr),
                                    vec![id(address_of), id(zero)],
                                ));
                            }
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

fn finish_fn(h: &mut Helpers, mut func: Function, body: Body) {
    func.blocks = body.finish();
    h.new_fns.push(func);
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

fn lookup(ir: &mut Ir, cx: &Ctx, b: &mut Body, k: usize, nidx: Word, push: &runtime::Push) -> Lookup {
    let o = cx.facts.info.outputs.get(k).cloned();
    let base = o.as_ref().map(|o| o.base_index).unwrap_or(0);
    if let Some((tables, targets)) = cx.opts.tables.as_ref().and_then(|t| Some((t, t.outputs.get(k)?))) {
        return lookup_linked(ir, cx, b, tables, targets, base, nidx, push);
    }
    let a = cx.abi;
    let ctx = push.ctx;
    let self_slot = push.slot;
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

/// [`lookup`] for a kernel lowered against its linked graph: the output's
/// slot table at a known offset from the context (one load), or no load at
/// all when the targets are consecutive slots.
#[allow(clippy::too_many_arguments)]
fn lookup_linked(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    tables: &GraphTables,
    targets: &OutputTargets,
    base: u32,
    nidx: Word,
    push: &runtime::Push,
) -> Lookup {
    let a = cx.abi;
    let ctx_addr = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(push.ctx)]);
    let basec = ir.c_u32(base);
    let i = b.bin(ir, Op::IAdd, a.u32, nidx, basec);
    let n = ir.c_u32(targets.slots.len() as u32);
    let inr = b.bin(ir, Op::ULessThan, a.bool_, i, n);
    let zero = ir.c_u32(0);
    let ci = b.select(ir, a.u32, inr, i, zero);
    let none = ir.c_u32(NO_NODE);
    let (slot, has) = match targets.consecutive() {
        Some(first) => {
            let first = ir.c_u32(first);
            (b.bin(ir, Op::IAdd, a.u32, first, ci), ir.c_bool(true))
        }
        None => {
            let four = ir.c_u32(4);
            let at = b.bin(ir, Op::IMul, a.u32, ci, four);
            let at = b.op(ir, Op::UConvert, a.u64, vec![id(at)]);
            let table = ir.c_u64(targets.table);
            let addr = b.bin(ir, Op::IAdd, a.u64, ctx_addr, table);
            let addr = b.bin(ir, Op::IAdd, a.u64, addr, at);
            let p = b.addr_ptr(ir, a.p_u32, addr);
            let slot = b.load(ir, a.u32, p, 4);
            (slot, b.bin(ir, Op::INotEqual, a.bool_, slot, none))
        }
    };
    let present = b.bin(ir, Op::LogicalAnd, a.bool_, inr, has);
    let is_self = b.bin(ir, Op::IEqual, a.bool_, slot, push.slot);
    let rem = b.op(ir, Op::Load, a.u32, vec![id(cx.vars.remaining)]);
    let left = b.bin(ir, Op::UGreaterThan, a.bool_, rem, zero);
    let not_self = b.op(ir, Op::LogicalNot, a.bool_, vec![id(is_self)]);
    let rec_ok = b.bin(ir, Op::LogicalOr, a.bool_, not_self, left);
    let nodes = ir.c_u64(tables.nodes);
    let nodes = b.bin(ir, Op::IAdd, a.u64, ctx_addr, nodes);
    let nodes = b.addr_ptr(ir, a.p_node, nodes);
    Lookup { slot, present, is_self, rec_ok, nodes }
}

fn valid(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, k: usize) -> Word {
    if let Some(w) = h.valid.get(&k) {
        return *w;
    }
    let a = cx.abi;
    let (fid, ps, func, mut b) = begin_fn(ir, a.bool_, &[a.u32]);
    let push = runtime::push(ir, &a, &cx.push, &mut b);
    let nidx = ps.first().copied().unwrap_or(0);
    let lk = lookup(ir, cx, &mut b, k, nidx, &push);
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
    let push = runtime::push(ir, &a, &cx.push, &mut b);
    let ctx = push.ctx;
    let lk = lookup(ir, cx, &mut b, k, nidx, &push);
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
    // Zero records take no ring space (DXC's `GetThreadNodeOutputRecords(present ?
    // 1 : 0)` in every invocation would otherwise take 16 bytes each): their
    // header goes to the sink, and enqueueing them does nothing.
    let none_asked = b.bin(ir, Op::IEqual, a.bool_, count, zero);
    let some = b.op(ir, Op::LogicalNot, a.bool_, vec![id(none_asked)]);
    let takes_room = b.bin(ir, Op::LogicalAnd, a.bool_, valid, some);
    let req = b.op(ir, Op::Select, a.u32, vec![id(takes_room), id(bytes), id(zero)]);
    // A level of parity p allocates in ring half p.
    let top = ctx_parity_ptr(ir, &a, &mut b, ctx, f::C_RING_TOP, push.odd, false);
    let off = if subgroup_ops(ir, cx) {
        bump_per_subgroup(ir, cx, &mut b, top, req)
    } else {
        b.atomic(ir, Op::AtomicIAdd, a.u32, top, req)
    };
    let cap = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_RING_CAPACITY);
    let under = b.bin(ir, Op::ULessThanEqual, a.bool_, off, cap);
    let room0 = b.bin(ir, Op::ISub, a.u32, cap, off);
    let room = b.op(ir, Op::Select, a.u32, vec![id(under), id(room0), id(zero)]);
    let fits = b.bin(ir, Op::ULessThanEqual, a.bool_, bytes, room);
    let ok = b.bin(ir, Op::LogicalAnd, a.bool_, takes_room, fits);
    // Status bits.
    let bit = |ir: &mut Ir, b: &mut Body, good: Word, v: u32| {
        let c = ir.c_u32(v);
        b.op(ir, Op::Select, a.u32, vec![id(good), id(zero), id(c)])
    };
    // Allocating zero records (a recursion leaf, an unused output) is no error.
    let present_or_none = b.bin(ir, Op::LogicalOr, a.bool_, lk.present, none_asked);
    let rec_or_none = b.bin(ir, Op::LogicalOr, a.bool_, lk.rec_ok, none_asked);
    let s1 = bit(ir, &mut b, present_or_none, STATUS_INVALID_NODE);
    let s2 = bit(ir, &mut b, rec_or_none, STATUS_RECURSION_LIMIT);
    let s3 = bit(ir, &mut b, cnt_ok, STATUS_TOO_MANY_PAYLOADS);
    let nv = b.op(ir, Op::LogicalNot, a.bool_, vec![id(takes_room)]);
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
    let base_p = ctx_parity_ptr(ir, &a, &mut b, ctx, f::C_RING, push.odd, false);
    let base = b.load(ir, a.u64, base_p, 8);
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
    // Only an allocation in the ring writes its header: the sink's keeps the
    // "nothing" written at scratch initialisation (NO_NODE, no records).
    // Every invocation that allocates nothing would otherwise store to that
    // one line (deferred-1080p's tile classification: 1.5 million times).
    let mh = b.begin_if(ir, ok);
    for (fk, v) in [(f::H_SLOT, hslot), (f::H_COUNT, cc), (f::H_REMAINING, trem), (f::H_FLAGS, zero)] {
        let p = b.field_ptr(ir, &a, a.s_header(), hp, fk);
        b.store(p, v, 4);
    }
    b.end_if(mh);
    let c16 = ir.c_u64(16);
    let rec = b.bin(ir, Op::IAdd, a.u64, addr, c16);
    let cache = AllocCache::get(ir, cx, h);
    for (var, v) in
        [(cache.addr, rec), (cache.slot, hslot), (cache.count, cc), (cache.remaining, trem), (cache.flags, zero)]
    {
        b.store_plain(var, v);
    }
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

/// Whether the allocation may use subgroup operations (the device runs them
/// and the module's SPIR-V version, 1.3 or later, has them).
fn subgroup_ops(ir: &Ir, cx: &Ctx) -> bool {
    let version = ir.m.header.as_ref().map(|h| h.version()).unwrap_or((1, 0));
    cx.opts.subgroup_ops && version >= (1, 3)
}

/// `atomicAdd(top, req)` made once per subgroup: the active invocations'
/// requests are summed, one of them adds the sum, and each gets its own
/// offset from the result and the exclusive prefix sum of the requests.
/// When every invocation allocates (thread nodes emitting one record each),
/// this is 32 or 64 times fewer atomics on the one bump pointer of the level.
fn bump_per_subgroup(ir: &mut Ir, cx: &Ctx, b: &mut Body, top: Word, req: Word) -> Word {
    let a = cx.abi;
    for cap in [Capability::GroupNonUniform, Capability::GroupNonUniformArithmetic, Capability::GroupNonUniformBallot] {
        ir.require_capability(cap);
    }
    let sg = ir.c_u32(Scope::Subgroup as u32);
    let scan = |ir: &mut Ir, b: &mut Body, op: GroupOperation| {
        b.op(ir, Op::GroupNonUniformIAdd, a.u32, vec![id(sg), Operand::GroupOperation(op), id(req)])
    };
    let before = scan(ir, b, GroupOperation::ExclusiveScan);
    let total = scan(ir, b, GroupOperation::Reduce);
    let zero = ir.c_u32(0);
    let base_v = b.local(ir, a.u32, zero);
    let elected = b.op(ir, Op::GroupNonUniformElect, a.bool_, vec![id(sg)]);
    let m = b.begin_if(ir, elected);
    let base = b.atomic(ir, Op::AtomicIAdd, a.u32, top, total);
    b.store_plain(base_v, base);
    b.end_if(m);
    let base = b.op(ir, Op::Load, a.u32, vec![id(base_v)]);
    let base = b.op(ir, Op::GroupNonUniformBroadcastFirst, a.u32, vec![id(sg), id(base)]);
    b.bin(ir, Op::IAdd, a.u32, base, before)
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
    // (Not in the sink: see `alloc_inv`; the cached slot says where it went.)
    let cache = AllocCache::get(ir, cx, h);
    let slot = b.op(ir, Op::Load, a.u32, vec![id(cache.slot)]);
    let none = ir.c_u32(NO_NODE);
    let in_ring = b.bin(ir, Op::INotEqual, a.bool_, slot, none);
    let mf = b.begin_if(ir, in_ring);
    let fp = b.field_ptr(ir, &a, a.s_header(), hdr, f::H_FLAGS);
    let flag = ir.c_u32(ALLOC_FLAG_WORKGROUP);
    b.store(fp, flag, 4);
    b.end_if(mf);
    b.store_plain(sh, r);
    b.end_if(m);
    barrier(ir, &mut b);
    let v = b.op(ir, Op::Load, a.u64, vec![id(sh)]);
    barrier(ir, &mut b);
    // Invocation 0 cached the header; the others only need to know it is
    // not theirs to enqueue.
    b.store_plain(cache.addr, v);
    b.store_plain(cache.flags, flag);
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
    let insert = *h.insert.get_or_insert_with(|| runtime::insert_fn(ir, &a));
    let (fid, ps, func, mut b) = begin_fn(ir, a.void, &[a.u64]);
    let addr = ps.first().copied().unwrap_or(0);
    let [slot, cnt, rem, flags] = header(ir, cx, h, &mut b, addr);
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
    let push = runtime::push(ir, &a, &cx.push, &mut b);
    let ctx = push.ctx;
    // The target's schedule: its record stride and, for a grid read from the
    // payload, where the grid lies.
    let sched_addr = match &cx.opts.tables {
        Some(t) => {
            let ctx_addr = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(ctx)]);
            let off = ir.c_u64(t.schedules);
            b.bin(ir, Op::IAdd, a.u64, ctx_addr, off)
        }
        None => b.load_field(ir, &a, a.s_ctx(), ctx, f::C_SCHEDULES),
    };
    let scheds = b.addr_ptr(ir, a.p_schedule, sched_addr);
    let sp = b.elem(ir, a.p_schedule, scheds, slot);
    let mode = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_MODE);
    let stride = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_INPUT_STRIDE);
    let goff = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_GRID_OFFSET);
    let gbytes = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_GRID_BYTES);
    let gcomps = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_GRID_COMPONENTS);
    let dyn_mode = ir.c_u32(SCHEDULE_DYNAMIC);
    let dynamic = b.bin(ir, Op::IEqual, a.bool_, mode, dyn_mode);
    let grid = GridReader { offset: goff, bytes: gbytes, components: gcomps };
    // Workgroups of the records' grids (dynamic-grid targets only).
    let jv = b.local(ir, a.u32, zero);
    let sum = b.local(ir, a.u32, zero);
    let gv = b.local(ir, a.u32, zero);
    let md = b.begin_if(ir, dynamic);
    let lp = b.begin_loop(ir);
    let j = b.op(ir, Op::Load, a.u32, vec![id(jv)]);
    let more = b.bin(ir, Op::ULessThan, a.bool_, j, cnt);
    b.loop_test(&lp, more);
    let rec = record_address(ir, cx, &mut b, addr, j, stride);
    let g = grid.groups(ir, cx, &mut b, rec);
    let s0 = b.op(ir, Op::Load, a.u32, vec![id(sum)]);
    let s1 = b.bin(ir, Op::IAdd, a.u32, s0, g);
    b.store_plain(sum, s1);
    let j1 = b.bin(ir, Op::IAdd, a.u32, j, one);
    b.store_plain(jv, j1);
    b.end_loop(&lp);
    b.end_if(md);
    // One atomic numbers the records and places their workgroups (same order).
    let total = b.op(ir, Op::Load, a.u32, vec![id(sum)]);
    let counts_p = ctx_parity_ptr(ir, &a, &mut b, ctx, f::C_COUNTS, push.odd, false);
    let counts_addr = b.load(ir, a.u64, counts_p, 8);
    let counts = b.addr_ptr(ir, a.p_u64, counts_addr);
    let cp = b.elem(ir, a.p_u64, counts, slot);
    let hi = b.op(ir, Op::UConvert, a.u64, vec![id(total)]);
    let c32 = ir.c_u64(32);
    let hi = b.bin(ir, Op::ShiftLeftLogical, a.u64, hi, c32);
    let lo = b.op(ir, Op::UConvert, a.u64, vec![id(cnt)]);
    let add = b.bin(ir, Op::BitwiseOr, a.u64, hi, lo);
    let old = b.atomic(ir, Op::AtomicIAdd, a.u64, cp, add);
    let rank = b.op(ir, Op::UConvert, a.u32, vec![id(old)]);
    let old_hi = b.bin(ir, Op::ShiftRightLogical, a.u64, old, c32);
    let wg_base = b.op(ir, Op::UConvert, a.u32, vec![id(old_hi)]);
    // Publish: key (tag + 1, slot, rank + j), offset from this level's ring half.
    let tag = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_TAG);
    let tag = b.bin(ir, Op::IAdd, a.u32, tag, one);
    let base_p = ctx_parity_ptr(ir, &a, &mut b, ctx, f::C_RING, push.odd, false);
    let base = b.load(ir, a.u64, base_p, 8);
    let ctx_addr = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(ctx)]);
    b.store_plain(jv, zero);
    b.store_plain(sum, wg_base);
    let lp = b.begin_loop(ir);
    let j = b.op(ir, Op::Load, a.u32, vec![id(jv)]);
    let more = b.bin(ir, Op::ULessThan, a.bool_, j, cnt);
    b.loop_test(&lp, more);
    let rec = record_address(ir, cx, &mut b, addr, j, stride);
    let off64 = b.bin(ir, Op::ISub, a.u64, rec, base);
    let off = b.op(ir, Op::UConvert, a.u32, vec![id(off64)]);
    let r = b.bin(ir, Op::IAdd, a.u32, rank, j);
    let start = b.op(ir, Op::Load, a.u32, vec![id(sum)]);
    let void_r = ir.id();
    b.push(inst(
        Op::FunctionCall,
        Some(a.void),
        Some(void_r),
        vec![id(insert), id(ctx_addr), id(tag), id(slot), id(r), id(off), id(start), id(rem)],
    ));
    let md = b.begin_if(ir, dynamic);
    let g = grid.groups(ir, cx, &mut b, rec);
    b.store_plain(gv, g);
    b.end_if(md);
    let g = b.op(ir, Op::Load, a.u32, vec![id(gv)]);
    let s1 = b.bin(ir, Op::IAdd, a.u32, start, g);
    b.store_plain(sum, s1);
    let j1 = b.bin(ir, Op::IAdd, a.u32, j, one);
    b.store_plain(jv, j1);
    b.end_loop(&lp);
    b.end_if(m);
    b.end(inst(Op::Return, None, None, vec![]), None);
    finish_fn(h, func, b);
    ir.name(fid, "node_enqueue");
    h.enqueue = Some(fid);
    fid
}

/// The allocation header of the records at `addr`: (slot, count, remaining,
/// flags), from the cache when `addr` is the last allocation's, else from memory.
fn header(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, b: &mut Body, addr: Word) -> [Word; 4] {
    let a = cx.abi;
    let cache = AllocCache::get(ir, cx, h);
    let fields = [
        (cache.slot, f::H_SLOT),
        (cache.count, f::H_COUNT),
        (cache.remaining, f::H_REMAINING),
        (cache.flags, f::H_FLAGS),
    ];
    let vals = fields.map(|(var, _)| {
        let v = b.op(ir, Op::Load, a.u32, vec![id(var)]);
        b.local(ir, a.u32, v)
    });
    let cached = b.op(ir, Op::Load, a.u64, vec![id(cache.addr)]);
    let hit = b.bin(ir, Op::IEqual, a.bool_, cached, addr);
    let miss = b.op(ir, Op::LogicalNot, a.bool_, vec![id(hit)]);
    let m = b.begin_if(ir, miss);
    let c16 = ir.c_u64(16);
    let ha = b.bin(ir, Op::ISub, a.u64, addr, c16);
    let hp = b.addr_ptr(ir, a.p_header, ha);
    for (local, (_, field)) in vals.iter().zip(fields) {
        let v = b.load_field(ir, &a, a.s_header(), hp, field);
        b.store_plain(*local, v);
    }
    b.end_if(m);
    vals.map(|local| b.op(ir, Op::Load, a.u32, vec![id(local)]))
}

/// `addr + j * stride` as a u64 address.
fn record_address(ir: &mut Ir, cx: &Ctx, b: &mut Body, addr: Word, j: Word, stride: Word) -> Word {
    let a = cx.abi;
    let j64 = b.op(ir, Op::UConvert, a.u64, vec![id(j)]);
    let s64 = b.op(ir, Op::UConvert, a.u64, vec![id(stride)]);
    let o = b.bin(ir, Op::IMul, a.u64, j64, s64);
    b.bin(ir, Op::IAdd, a.u64, addr, o)
}

/// Reads a record's dispatch grid as the target's schedule describes it.
struct GridReader {
    offset: Word,
    bytes: Word,
    components: Word,
}

impl GridReader {
    /// Workgroups of the record at `rec` (product of its grid components).
    fn groups(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, rec: Word) -> Word {
        let a = cx.abi;
        let (one, two) = (ir.c_u32(1), ir.c_u32(2));
        let (eight, mask16) = (ir.c_u32(8), ir.c_u32(0xffff));
        let mut product = one;
        for c in 0..3u32 {
            let cc = ir.c_u32(c);
            let at = b.bin(ir, Op::IMul, a.u32, cc, self.bytes);
            let at = b.bin(ir, Op::IAdd, a.u32, self.offset, at);
            let not3 = ir.c_u32(!3);
            let aligned = b.bin(ir, Op::BitwiseAnd, a.u32, at, not3);
            let a64 = b.op(ir, Op::UConvert, a.u64, vec![id(aligned)]);
            let wa = b.bin(ir, Op::IAdd, a.u64, rec, a64);
            let wp = b.addr_ptr(ir, a.p_u32, wa);
            let word = b.load(ir, a.u32, wp, 4);
            let lane = b.bin(ir, Op::BitwiseAnd, a.u32, at, two);
            let shift = b.bin(ir, Op::IMul, a.u32, lane, eight);
            let shifted = b.bin(ir, Op::ShiftRightLogical, a.u32, word, shift);
            let half = b.bin(ir, Op::BitwiseAnd, a.u32, shifted, mask16);
            let is16 = b.bin(ir, Op::IEqual, a.bool_, self.bytes, two);
            let v = b.select(ir, a.u32, is16, half, word);
            let present = b.bin(ir, Op::ULessThan, a.bool_, cc, self.components);
            let v = b.select(ir, a.u32, present, v, one);
            product = b.bin(ir, Op::IMul, a.u32, product, v);
        }
        product
    }
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
