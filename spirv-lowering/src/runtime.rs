//! SPIR-V for the runtime's shared structures, used by several passes: the
//! node push block's members, per-parity fields of the `GraphContext`, and
//! the record index (`abi::IndexSlot` table) with its hash, insertion and
//! lookup helper functions. Everything here mirrors `abi`.

use crate::abi::{INDEX_MAX_PROBES, STATUS_INDEX_OVERFLOW};
use crate::codegen::{f, Abi, Body};
use crate::ir::{id, inst, Ir};
use crate::passes::push_block::PushVar;
use rspirv::dr::{Function, Operand};
use spirv::{FunctionControl, Op, Word};

/// The members of `abi::NodePush`, loaded.
#[derive(Debug, Clone, Copy)]
pub struct Push {
    /// `PSB NodeDispatch*` of this node at this level.
    pub dispatch: Word,
    /// `PSB GraphContext*`.
    pub ctx: Word,
    pub level: Word,
    pub slot: Word,
    /// `bool`: the level is odd (parity 1).
    pub odd: Word,
}

/// Loads the node push block.
pub fn push(ir: &mut Ir, a: &Abi, pv: &PushVar, b: &mut Body) -> Push {
    let member = |ir: &mut Ir, b: &mut Body, k: u32, ptr: Word, ty: Word| {
        let m = ir.c_u32(pv.member + k);
        let p = b.op(ir, Op::AccessChain, ptr, vec![id(pv.var), id(m)]);
        b.op(ir, Op::Load, ty, vec![id(p)])
    };
    let d = member(ir, b, 0, pv.ptr_u64, a.u64);
    let c = member(ir, b, 1, pv.ptr_u64, a.u64);
    let level = member(ir, b, 2, pv.ptr_u32, a.u32);
    let slot = member(ir, b, 3, pv.ptr_u32, a.u32);
    let dispatch = b.addr_ptr(ir, a.p_dispatch, d);
    let ctx = b.addr_ptr(ir, a.p_ctx, c);
    let one = ir.c_u32(1);
    let bit = b.bin(ir, Op::BitwiseAnd, a.u32, level, one);
    let zero = ir.c_u32(0);
    let odd = b.bin(ir, Op::INotEqual, a.bool_, bit, zero);
    Push { dispatch, ctx, level, slot, odd }
}

/// Pointer to the `GraphContext` array field starting at member `base` (two
/// members, one per parity), element `odd` (or its other one when `other`).
/// Computed from the address: a pointer select would need VariablePointers.
pub fn ctx_parity_ptr(ir: &mut Ir, a: &Abi, b: &mut Body, ctx: Word, base: u32, odd: Word, other: bool) -> Word {
    let fields = a.s_ctx().fields;
    let (kind, offset) = fields.get(base as usize).copied().unwrap_or((crate::abi::Field::U32, 0));
    let (ty, size) = match kind {
        crate::abi::Field::U64 => (a.p_u64, 8u64),
        _ => (a.p_u32, 4u64),
    };
    let addr = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(ctx)]);
    let (first, second) = (ir.c_u64(u64::from(offset)), ir.c_u64(u64::from(offset) + size));
    let (x, y) = if other { (first, second) } else { (second, first) };
    let off = b.select(ir, a.u64, odd, x, y);
    let at = b.bin(ir, Op::IAdd, a.u64, addr, off);
    b.addr_ptr(ir, ty, at)
}

/// `abi::index_hash(node, rank)`.
pub fn hash(ir: &mut Ir, a: &Abi, b: &mut Body, node: Word, rank: Word) -> Word {
    let golden = ir.c_u32(0x9E37_79B9);
    let m1 = ir.c_u32(0x85EB_CA6B);
    let m2 = ir.c_u32(0xC2B2_AE35);
    let (s16, s13) = (ir.c_u32(16), ir.c_u32(13));
    let nm = b.bin(ir, Op::IMul, a.u32, node, golden);
    let mut h = b.bin(ir, Op::BitwiseXor, a.u32, rank, nm);
    for (shift, mul) in [(s16, Some(m1)), (s13, Some(m2)), (s16, None)] {
        let sh = b.bin(ir, Op::ShiftRightLogical, a.u32, h, shift);
        h = b.bin(ir, Op::BitwiseXor, a.u32, h, sh);
        if let Some(m) = mul {
            h = b.bin(ir, Op::IMul, a.u32, h, m);
        }
    }
    h
}

/// Starts a helper function `ret name(params)`; returns (id, params, function, body).
pub fn begin_fn(ir: &mut Ir, ret: Word, params: &[Word]) -> (Word, Vec<Word>, Function, Body) {
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

/// Finishes a helper function started with [`begin_fn`] and adds it to the module.
pub fn finish_fn(ir: &mut Ir, mut func: Function, body: Body, name: &str) {
    let fid = func.def.as_ref().and_then(|d| d.result_id);
    func.blocks = body.finish();
    ir.m.functions.push(func);
    if let Some(fid) = fid {
        ir.name(fid, name);
    }
}

/// `node_index_insert(ctx, tag, node, rank, offset, workgroup_start, remaining)`:
/// claims a slot for the record (see `abi`'s record index) and fills it;
/// when none is free within `INDEX_MAX_PROBES`, raises
/// `STATUS_INDEX_OVERFLOW` (the record is dropped).
pub fn insert_fn(ir: &mut Ir, a: &Abi) -> Word {
    let u = a.u32;
    let (fid, ps, func, mut b) = begin_fn(ir, a.void, &[a.u64, u, u, u, u, u, u]);
    let (ctx_addr, tag, node, rank, offset, wgs, rem) = (ps[0], ps[1], ps[2], ps[3], ps[4], ps[5], ps[6]);
    let ctx = b.addr_ptr(ir, a.p_ctx, ctx_addr);
    let table_addr = b.load_field(ir, a, a.s_ctx(), ctx, f::C_INDEX);
    let table = b.addr_ptr(ir, a.p_slot, table_addr);
    let mask = b.load_field(ir, a, a.s_ctx(), ctx, f::C_INDEX_MASK);
    let one = ir.c_u32(1);
    let zero = ir.c_u32(0);
    let reading = b.bin(ir, Op::ISub, u, tag, one);
    let h0 = hash(ir, a, &mut b, node, rank);
    let h0 = b.bin(ir, Op::BitwiseAnd, u, h0, mask);
    let hv = b.local(ir, u, h0);
    let kv = b.local(ir, u, zero);
    let fls = ir.c_bool(false);
    let done = b.local(ir, a.bool_, fls);
    let lp = b.begin_loop(ir);
    let k = b.op(ir, Op::Load, u, vec![id(kv)]);
    let max = ir.c_u32(INDEX_MAX_PROBES);
    let more = b.bin(ir, Op::ULessThan, a.bool_, k, max);
    let d = b.op(ir, Op::Load, a.bool_, vec![id(done)]);
    let nd = b.op(ir, Op::LogicalNot, a.bool_, vec![id(d)]);
    let go = b.bin(ir, Op::LogicalAnd, a.bool_, more, nd);
    b.loop_test(&lp, go);
    let h = b.op(ir, Op::Load, u, vec![id(hv)]);
    let sp = b.elem(ir, a.p_slot, table, h);
    let tp = b.field_ptr(ir, a, a.s_slot(), sp, f::S_TAG);
    let seen = b.atomic_load(ir, u, tp);
    let live_in = b.bin(ir, Op::IEqual, a.bool_, seen, reading);
    let live_out = b.bin(ir, Op::IEqual, a.bool_, seen, tag);
    let live = b.bin(ir, Op::LogicalOr, a.bool_, live_in, live_out);
    let free = b.op(ir, Op::LogicalNot, a.bool_, vec![id(live)]);
    let m = b.begin_if(ir, free);
    let old = b.atomic_cas(ir, u, tp, tag, seen);
    let won = b.bin(ir, Op::IEqual, a.bool_, old, seen);
    let m2 = b.begin_if(ir, won);
    for (field, v) in [(f::S_NODE, node), (f::S_RANK, rank), (f::S_OFFSET, offset), (f::S_WORKGROUP_START, wgs)] {
        let p = b.field_ptr(ir, a, a.s_slot(), sp, field);
        b.store(p, v, 4);
    }
    let p = b.field_ptr(ir, a, a.s_slot(), sp, f::S_REMAINING);
    b.store(p, rem, 4);
    let tru = ir.c_bool(true);
    b.store_plain(done, tru);
    b.end_if(m2);
    b.end_if(m);
    let h1 = b.bin(ir, Op::IAdd, u, h, one);
    let h1 = b.bin(ir, Op::BitwiseAnd, u, h1, mask);
    b.store_plain(hv, h1);
    let k1 = b.bin(ir, Op::IAdd, u, k, one);
    b.store_plain(kv, k1);
    b.end_loop(&lp);
    let d = b.op(ir, Op::Load, a.bool_, vec![id(done)]);
    let failed = b.op(ir, Op::LogicalNot, a.bool_, vec![id(d)]);
    let m = b.begin_if(ir, failed);
    let sp = b.field_ptr(ir, a, a.s_ctx(), ctx, f::C_STATUS);
    let bit = ir.c_u32(STATUS_INDEX_OVERFLOW);
    b.atomic(ir, Op::AtomicOr, u, sp, bit);
    b.end_if(m);
    b.end(inst(Op::Return, None, None, vec![]), None);
    finish_fn(ir, func, b, "node_index_insert");
    fid
}

/// `node_index_lookup(table, mask, tag, node, rank) -> u32`: the slot index
/// holding the record, or `0xFFFFFFFF` when it is not within
/// `INDEX_MAX_PROBES`. `table` and `mask` are `GraphContext::index` and
/// `index_mask` (loaded once by the caller).
pub fn lookup_fn(ir: &mut Ir, a: &Abi) -> Word {
    let u = a.u32;
    let (fid, ps, func, mut b) = begin_fn(ir, u, &[a.u64, u, u, u, u]);
    let (table_addr, mask, tag, node, rank) = (ps[0], ps[1], ps[2], ps[3], ps[4]);
    let table = b.addr_ptr(ir, a.p_slot, table_addr);
    let one = ir.c_u32(1);
    let zero = ir.c_u32(0);
    let none = ir.c_u32(u32::MAX);
    let h0 = hash(ir, a, &mut b, node, rank);
    let h0 = b.bin(ir, Op::BitwiseAnd, u, h0, mask);
    let hv = b.local(ir, u, h0);
    let kv = b.local(ir, u, zero);
    let found = b.local(ir, u, none);
    let lp = b.begin_loop(ir);
    let k = b.op(ir, Op::Load, u, vec![id(kv)]);
    let max = ir.c_u32(INDEX_MAX_PROBES);
    let more = b.bin(ir, Op::ULessThan, a.bool_, k, max);
    let fv = b.op(ir, Op::Load, u, vec![id(found)]);
    let missing = b.bin(ir, Op::IEqual, a.bool_, fv, none);
    let go = b.bin(ir, Op::LogicalAnd, a.bool_, more, missing);
    b.loop_test(&lp, go);
    let h = b.op(ir, Op::Load, u, vec![id(hv)]);
    let sp = b.elem(ir, a.p_slot, table, h);
    let t = b.load_field(ir, a, a.s_slot(), sp, f::S_TAG);
    let n = b.load_field(ir, a, a.s_slot(), sp, f::S_NODE);
    let r = b.load_field(ir, a, a.s_slot(), sp, f::S_RANK);
    let e1 = b.bin(ir, Op::IEqual, a.bool_, t, tag);
    let e2 = b.bin(ir, Op::IEqual, a.bool_, n, node);
    let e3 = b.bin(ir, Op::IEqual, a.bool_, r, rank);
    let e12 = b.bin(ir, Op::LogicalAnd, a.bool_, e1, e2);
    let hit = b.bin(ir, Op::LogicalAnd, a.bool_, e12, e3);
    let nf = b.select(ir, u, hit, h, none);
    b.store_plain(found, nf);
    let h1 = b.bin(ir, Op::IAdd, u, h, one);
    let h1 = b.bin(ir, Op::BitwiseAnd, u, h1, mask);
    b.store_plain(hv, h1);
    let k1 = b.bin(ir, Op::IAdd, u, k, one);
    b.store_plain(kv, k1);
    b.end_loop(&lp);
    let result = b.op(ir, Op::Load, u, vec![id(found)]);
    b.end(inst(Op::ReturnValue, None, None, vec![id(result)]), None);
    finish_fn(ir, func, b, "node_index_lookup");
    fid
}
