//! The AMDX instructions.
//!
//! Matches: `OpAllocateNodePayloadsAMDX`, `OpEnqueueNodePayloadsAMDX`,
//! `OpIsNodePayloadValidAMDX`, `OpNodePayloadArrayLengthAMDX` and
//! `OpFinishWritingNodePayloadAMDX` in every function.
//! Emits helper functions and replaces each instruction by a call or a few
//! plain instructions:
//! * allocate: `allocate` (the records placed by rank in their target's
//!   frames, see `abi`);
//! * enqueue: nothing, unless a target of the output takes its grid from
//!   the payload: then `enqueue` (the records' grid entries);
//! * is-valid: the target lookup of an allocation, without allocating;
//! * array length: the input's record count; an allocation's count (its
//!   operand when the handle is the allocation's result, else the output's
//!   last allocation or the first record's meta word);
//! * finish writing: invocation 0 bumps the record's hidden counter; true for
//!   the whole workgroup when it was the grid's last workgroup.
//!
//! Every helper reads the node push block (`runtime::push`).
//!
//! Afterwards no AMDX instruction is left in any function.

use super::context::Ctx;
use super::payload::{InputLowering, RecordIndexFns};
use super::{allocate, enqueue};
use crate::abi::NO_NODE;
use crate::analyze::finish_counter_offset;
use crate::codegen::{f, Body};
use crate::error::LowerError;
use crate::ir::{id, inst, op_id, IdMap, Ir};
use crate::options::{GraphTables, OutputTargets};
use crate::runtime::{self, begin_fn, Geom, Pool};
use rspirv::dr::{Function, Instruction};
use spirv::{Op, Scope, StorageClass, Word};
use std::collections::HashMap;

const BARRIER_SEMANTICS: u32 = 0x8 | 0x100; // AcquireRelease | WorkgroupMemory

/// The helper functions made so far, and the state they share.
pub(super) struct Helpers {
    pub alloc_inv: HashMap<(usize, super::allocate::Ranks), Word>,
    pub alloc_wg: HashMap<usize, Word>,
    pub valid: HashMap<usize, Word>,
    pub enqueue: HashMap<usize, Word>,
    pub length: HashMap<usize, Word>,
    pub frame_claim: Option<Word>,
    pub finish: Option<Word>,
    pub shared_u64: Option<Word>,
    pub shared_u32: Option<Word>,
    pub caches: HashMap<usize, AllocCache>,
    pub subgroup_lane: Option<Word>,
    /// The Workgroup arrays of `allocate`'s per-target counts and first ranks.
    pub histogram: Option<(Word, Word)>,
    pub new_fns: Vec<Function>,
}

/// `Private` copies of an output's last allocation, so that enqueueing or
/// measuring what was just allocated (the usual case) reads nothing back
/// from memory.
#[derive(Clone, Copy)]
pub(super) struct AllocCache {
    /// Address of the first record (`u64`; 0: nothing cached).
    pub addr: Word,
    /// Target slot (`NO_NODE` when the allocation failed).
    pub slot: Word,
    pub count: Word,
    pub rank: Word,
    /// 1: a Workgroup-visibility allocation (invocation 0 enqueues it).
    pub workgroup: Word,
}

impl AllocCache {
    pub fn get(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, k: usize) -> AllocCache {
        if let Some(c) = h.caches.get(&k) {
            return *c;
        }
        let a = cx.abi;
        let none = ir.c_u64(0);
        let addr = ir.private_var_init(a.u64, none, &format!("node_output{k}_cached_address"));
        let mut var =
            |ty: Word, name: &str| ir.global_var(StorageClass::Private, ty, &format!("node_output{k}_{name}"));
        let c = AllocCache {
            addr,
            slot: var(a.u32, "cached_slot"),
            count: var(a.u32, "cached_count"),
            rank: var(a.u32, "cached_rank"),
            workgroup: var(a.u32, "cached_workgroup"),
        };
        h.caches.insert(k, c);
        c
    }
}

pub fn run(ir: &mut Ir, cx: &Ctx, input: InputLowering, record_index_fns: &RecordIndexFns) -> Result<(), LowerError> {
    let mut h = Helpers {
        alloc_inv: HashMap::new(),
        alloc_wg: HashMap::new(),
        valid: HashMap::new(),
        enqueue: HashMap::new(),
        length: HashMap::new(),
        frame_claim: None,
        finish: None,
        shared_u64: None,
        shared_u32: None,
        caches: HashMap::new(),
        subgroup_lane: None,
        histogram: None,
        new_fns: vec![],
    };
    let types = ir.type_map();
    let fcount = ir.m.functions.len();
    for fi in 0..fcount {
        // Allocation results of this function and their count operands.
        let mut counts: HashMap<Word, Word> = HashMap::new();
        let nb = ir.m.functions.get(fi).map(|f| f.blocks.len()).unwrap_or(0);
        for bi in 0..nb {
            let old = match ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)) {
                Some(b) => std::mem::take(&mut b.instructions),
                None => continue,
            };
            let mut out: Vec<Instruction> = Vec::with_capacity(old.len());
            for i in old {
                rewrite(ir, cx, &mut h, &types, &input, &mut counts, i, &mut out)?;
            }
            if let Some(b) = ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)) {
                b.instructions = out;
            }
        }
    }
    for &(k, fid) in record_index_fns {
        super::bounds::record_index(ir, cx, &mut h, k, fid);
    }
    ir.m.functions.extend(h.new_fns);
    Ok(())
}

/// Rewrites one instruction into `out`.
#[allow(clippy::too_many_arguments)]
fn rewrite(
    ir: &mut Ir,
    cx: &Ctx,
    h: &mut Helpers,
    types: &IdMap<Word>,
    input: &InputLowering,
    counts: &mut HashMap<Word, Word>,
    i: Instruction,
    out: &mut Vec<Instruction>,
) -> Result<(), LowerError> {
    let a = cx.abi;
    let err = |d: &str| LowerError::Invalid {
        entry: cx.entry(),
        opcode: format!("Op{:?}", i.class.opcode),
        result_id: i.result_id,
        detail: d.into(),
    };
    let output_of = |t: Word| {
        let of = |t: Word| cx.facts.info.outputs.iter().position(|o| o.type_id == t);
        of(t).or_else(|| ir_pointee_before(cx, t).and_then(of))
    };
    match i.class.opcode {
        Op::AllocateNodePayloadsAMDX => {
            let (Some(rt), Some(rid), Some(scope), Some(count), Some(nidx)) =
                (i.result_type, i.result_id, op_id(&i, 0), op_id(&i, 1), op_id(&i, 2))
            else {
                return Err(err("missing operands"));
            };
            let k = ir_pointee_before(cx, rt)
                .and_then(|t| cx.facts.info.outputs.iter().position(|o| o.type_id == t))
                .ok_or_else(|| err("result type is not a known output payload array"))?;
            let workgroup = crate::consts::eval_u32(ir, &cx.opts.specialization, scope)
                == Some(Scope::Workgroup as u32)
                && !cx.packed;
            let uniform = cx.facts.uniform_allocations.contains(&rid);
            let fun =
                if workgroup { allocate::workgroup(ir, cx, h, k) } else { allocate::invocation(ir, cx, h, k, uniform) };
            let addr = ir.id();
            out.push(inst(Op::FunctionCall, Some(a.u64), Some(addr), vec![id(fun), id(count), id(nidx)]));
            out.push(inst(Op::ConvertUToPtr, Some(rt), Some(rid), vec![id(addr)]));
            counts.insert(rid, count);
        }
        Op::EnqueueNodePayloadsAMDX => {
            let p = op_id(&i, 0).ok_or_else(|| err("missing operand"))?;
            let k = types.get(&p).copied().and_then(output_of);
            if let Some(k) = k.filter(|&k| may_target_dynamic(cx, k)) {
                let fun = enqueue::output(ir, cx, h, k);
                let (addr, r) = (ir.id(), ir.id());
                out.push(inst(Op::ConvertPtrToU, Some(a.u64), Some(addr), vec![id(p)]));
                out.push(inst(Op::FunctionCall, Some(a.void), Some(r), vec![id(fun), id(addr)]));
            }
        }
        Op::IsNodePayloadValidAMDX => {
            let (Some(rt), Some(rid), Some(t), Some(nidx)) = (i.result_type, i.result_id, op_id(&i, 0), op_id(&i, 1))
            else {
                return Err(err("missing operands"));
            };
            let k = cx
                .facts
                .info
                .outputs
                .iter()
                .position(|o| o.type_id == t)
                .ok_or_else(|| err("payload type is not a known output"))?;
            let fun = valid(ir, cx, h, k);
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
            } else if let Some(&count) = counts.get(&p) {
                out.push(inst(Op::CopyObject, Some(rt), Some(rid), vec![id(count)]));
            } else {
                let k = pty.and_then(output_of).ok_or_else(|| err("operand is not a known payload array"))?;
                let fun = length(ir, cx, h, k);
                let addr = ir.id();
                out.push(inst(Op::ConvertPtrToU, Some(a.u64), Some(addr), vec![id(p)]));
                out.push(inst(Op::FunctionCall, Some(rt), Some(rid), vec![id(fun), id(addr)]));
            }
        }
        Op::FinishWritingNodePayloadAMDX => {
            let (Some(rt), Some(rid), Some(p)) = (i.result_type, i.result_id, op_id(&i, 0)) else {
                return Err(err("missing operands"));
            };
            if !cx.facts.info.track_finish_writing {
                return Err(err("the input payload is not decorated TrackFinishWritingAMDX"));
            }
            let fun = finish(ir, cx, h);
            let addr = ir.id();
            match input.address_fn {
                None => out.push(inst(Op::ConvertPtrToU, Some(a.u64), Some(addr), vec![id(p)])),
                Some(address_of) => {
                    let zero = ir.c_u32(0);
                    out.push(inst(Op::FunctionCall, Some(a.u64), Some(addr), vec![id(address_of), id(zero)]));
                }
            }
            out.push(inst(Op::FunctionCall, Some(rt), Some(rid), vec![id(fun), id(addr)]));
        }
        _ => out.push(i),
    }
    Ok(())
}

/// The output array type a (retyped) allocation result type pointed to.
fn ir_pointee_before(cx: &Ctx, ptr_ty: Word) -> Option<Word> {
    cx.facts.output_ptr_types.get(&ptr_ty).copied()
}

/// Output `k`'s targets as the linked graph gives them.
pub(super) fn targets<'a>(cx: &'a Ctx, k: usize) -> Option<(&'a GraphTables, &'a OutputTargets)> {
    cx.opts.tables.as_ref().and_then(|t| Some((t, t.outputs.get(k)?)))
}

/// Whether output `k`'s targets are pinned mesh nodes (known only with the
/// graph's tables, see `abi`'s "Mesh nodes drawn once").
pub(super) fn pinned(cx: &Ctx, k: usize) -> bool {
    targets(cx, k).is_some_and(|(_, t)| t.pinned)
}

/// Whether a target of output `k` may take its grid from the payload (its
/// enqueue then has work to do). Unknown without the graph.
fn may_target_dynamic(cx: &Ctx, k: usize) -> bool {
    targets(cx, k).is_none_or(|(_, t)| t.dynamic)
}

/// The frame geometry of output `k`'s target `slot`: constants with the
/// graph, else read from the target's schedule.
pub(super) fn output_geometry(ir: &mut Ir, cx: &Ctx, b: &mut Body, k: usize, push: &runtime::Push, slot: Word) -> Geom {
    if let Some((_, t)) = targets(cx, k) {
        return Geom::known(ir, t.geometry);
    }
    let a = cx.abi;
    let sched_addr = b.load_field(ir, &a, a.s_ctx(), push.ctx, f::C_SCHEDULES);
    let scheds = b.addr_ptr(ir, a.p_schedule, sched_addr);
    let sp = b.elem(ir, a.p_schedule, scheds, slot);
    Geom::load(ir, &a, b, sp)
}

/// The frame pool, with the graph's frame shift and node count when known.
pub(super) fn pool(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &runtime::Push) -> Pool {
    let known = cx.opts.tables.as_ref().map(runtime::PoolFacts::of);
    Pool::load(ir, &cx.abi, b, (push.ctx, &cx.vars.ctx), known)
}

pub(super) fn finish_fn(h: &mut Helpers, mut func: Function, body: Body) {
    func.blocks = body.finish();
    h.new_fns.push(func);
}

/// Target lookup shared by allocation and validity.
pub(super) struct Lookup {
    /// Target slot (garbage unless `present`).
    pub slot: Word,
    /// Index in range and a node linked there.
    pub present: Word,
    /// The target is this node (self-recursion).
    pub is_self: Word,
    /// Not self, or recursion levels left.
    pub rec_ok: Word,
    /// Pointer to `NodeInfo[0]`.
    pub nodes: Word,
}

pub(super) fn lookup(ir: &mut Ir, cx: &Ctx, b: &mut Body, k: usize, nidx: Word, push: &runtime::Push) -> Lookup {
    let o = cx.facts.info.outputs.get(k).cloned();
    let base = o.as_ref().map(|o| o.base_index).unwrap_or(0);
    if let Some((tables, targets)) = targets(cx, k) {
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
    let (ci, inr) = array_slot(ir, cx, b, nidx, base, n);
    let sp = b.elem(ir, a.p_u32, slots, ci);
    let slot = b.load(ir, a.u32, sp, 4);
    let none = ir.c_u32(NO_NODE);
    let has = b.bin(ir, Op::INotEqual, a.bool_, slot, none);
    let present = b.bin(ir, Op::LogicalAnd, a.bool_, inr, has);
    let (is_self, rec_ok) = recursion_check(ir, cx, b, slot, self_slot);
    Lookup { slot, present, is_self, rec_ok, nodes }
}

/// Index `nidx` of an output array from `base` among its `n` slot-table
/// entries: (the entry, 0 when out of range; `bool` in range). The sum is
/// checked for wrapping: index 0xFFFFFFFF from base 1 is past the array,
/// not entry 0.
pub(super) fn array_slot(ir: &mut Ir, cx: &Ctx, b: &mut Body, nidx: Word, base: u32, n: Word) -> (Word, Word) {
    let a = cx.abi;
    let basec = ir.c_u32(base);
    let i = b.bin(ir, Op::IAdd, a.u32, nidx, basec);
    let below = b.bin(ir, Op::ULessThan, a.bool_, i, n);
    let unwrapped = b.bin(ir, Op::UGreaterThanEqual, a.bool_, i, nidx);
    let inr = b.bin(ir, Op::LogicalAnd, a.bool_, below, unwrapped);
    let zero = ir.c_u32(0);
    (b.select(ir, a.u32, inr, i, zero), inr)
}

/// Whether `slot` is the node itself, and whether that leaves it allowed.
fn recursion_check(ir: &mut Ir, cx: &Ctx, b: &mut Body, slot: Word, self_slot: Word) -> (Word, Word) {
    let a = cx.abi;
    let zero = ir.c_u32(0);
    let is_self = b.bin(ir, Op::IEqual, a.bool_, slot, self_slot);
    let rem = b.op(ir, Op::Load, a.u32, vec![id(cx.vars.remaining)]);
    let left = b.bin(ir, Op::UGreaterThan, a.bool_, rem, zero);
    let not_self = b.op(ir, Op::LogicalNot, a.bool_, vec![id(is_self)]);
    let rec_ok = b.bin(ir, Op::LogicalOr, a.bool_, not_self, left);
    (is_self, rec_ok)
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
    let n = ir.c_u32(targets.slots.len() as u32);
    let (ci, inr) = array_slot(ir, cx, b, nidx, base, n);
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
    let (is_self, rec_ok) = recursion_check(ir, cx, b, slot, push.slot);
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

/// What an allocation's address says about it when the output's cache
/// holds another: its target slot and rank (from the frame's key and the
/// record's place) and its count (the first record's meta word, which the
/// graph keeps for targets of outputs whose code asks). `NO_NODE` and 0
/// outside the pool or without a meta word.
pub(super) struct Decoded {
    pub slot: Word,
    pub rank: Word,
    pub count: Word,
}

pub(super) fn decode(ir: &mut Ir, cx: &Ctx, b: &mut Body, k: usize, push: &runtime::Push, addr: Word) -> Decoded {
    let a = cx.abi;
    let u = a.u32;
    let pool = pool(ir, cx, b, push);
    let (zero, none) = (ir.c_u32(0), ir.c_u32(NO_NODE));
    let slot_v = b.local(ir, u, none);
    let rank_v = b.local(ir, u, zero);
    let count_v = b.local(ir, u, zero);
    let off = b.bin(ir, Op::ISub, a.u64, addr, pool.pool);
    let c64 = b.op(ir, Op::UConvert, a.u64, vec![id(pool.count)]);
    let span = b.bin(ir, Op::ShiftLeftLogical, a.u64, c64, pool.shift);
    let above = b.bin(ir, Op::UGreaterThanEqual, a.bool_, addr, pool.pool);
    let below = b.bin(ir, Op::ULessThan, a.bool_, off, span);
    let inside = b.bin(ir, Op::LogicalAnd, a.bool_, above, below);
    let m = b.begin_if(ir, inside);
    let frame = b.bin(ir, Op::ShiftRightLogical, a.u64, off, pool.shift);
    let frame = b.op(ir, Op::UConvert, u, vec![id(frame)]);
    let keys = b.addr_ptr(ir, a.p_u64, pool.keys);
    let kp = b.elem(ir, a.p_u64, keys, frame);
    let key = b.load(ir, a.u64, kp, 8);
    let low = b.op(ir, Op::UConvert, u, vec![id(key)]);
    // A home frame has no key: its slot says its namespace (frame 0).
    let homes2 = b.bin(ir, Op::IAdd, u, pool.homes, pool.homes);
    let at_home = b.bin(ir, Op::ULessThan, a.bool_, frame, homes2);
    let odd_home = b.bin(ir, Op::UGreaterThanEqual, a.bool_, frame, pool.homes);
    let home_low = b.bin(ir, Op::ISub, u, frame, pool.homes);
    let home_low = b.select(ir, u, odd_home, home_low, frame);
    let low = b.select(ir, u, at_home, home_low, low);
    let slot = b.bin(ir, Op::UMod, u, low, pool.namespaces);
    let fk = b.bin(ir, Op::UDiv, u, low, pool.namespaces);
    let g = output_geometry(ir, cx, b, k, push, slot);
    let one64 = ir.c_u64(1);
    let bytes = b.bin(ir, Op::ShiftLeftLogical, a.u64, one64, pool.shift);
    let mask = b.bin(ir, Op::ISub, a.u64, bytes, one64);
    let within = b.bin(ir, Op::BitwiseAnd, a.u64, off, mask);
    let within = b.op(ir, Op::UConvert, u, vec![id(within)]);
    let j = b.bin(ir, Op::UDiv, u, within, g.stride);
    let first = b.bin(ir, Op::IMul, u, fk, g.per_frame);
    let rank = b.bin(ir, Op::IAdd, u, first, j);
    b.store_plain(slot_v, slot);
    b.store_plain(rank_v, rank);
    if g.may_have_meta() {
        let mm = b.begin_if(ir, g.meta);
        let four = ir.c_u32(4);
        let jm = b.bin(ir, Op::IMul, u, j, four);
        let at = b.bin(ir, Op::IAdd, u, g.meta_offset, jm);
        let ma = pool.address(ir, &a, b, frame, at);
        let mp = b.addr_ptr(ir, a.p_u32, ma);
        let word = b.load(ir, u, mp, 4);
        let s16 = ir.c_u32(16);
        let count = b.bin(ir, Op::ShiftRightLogical, u, word, s16);
        b.store_plain(count_v, count);
        b.end_if(mm);
    }
    b.end_if(m);
    Decoded {
        slot: b.op(ir, Op::Load, u, vec![id(slot_v)]),
        rank: b.op(ir, Op::Load, u, vec![id(rank_v)]),
        count: b.op(ir, Op::Load, u, vec![id(count_v)]),
    }
}

/// `node_output{k}_length(addr) -> u32`: the count of the allocation at
/// `addr` when the handle cannot be traced to its allocation: the cached
/// last allocation's, else the first record's meta word (0 without one).
fn length(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, k: usize) -> Word {
    if let Some(w) = h.length.get(&k) {
        return *w;
    }
    let a = cx.abi;
    let cache = AllocCache::get(ir, cx, h, k);
    let (fid, ps, func, mut b) = begin_fn(ir, a.u32, &[a.u64]);
    let addr = ps.first().copied().unwrap_or(0);
    let cached = b.op(ir, Op::Load, a.u64, vec![id(cache.addr)]);
    let count = b.op(ir, Op::Load, a.u32, vec![id(cache.count)]);
    let result = b.local(ir, a.u32, count);
    let hit = b.bin(ir, Op::IEqual, a.bool_, cached, addr);
    let miss = b.op(ir, Op::LogicalNot, a.bool_, vec![id(hit)]);
    let m = b.begin_if(ir, miss);
    let push = runtime::push(ir, &a, &cx.push, &mut b);
    let d = decode(ir, cx, &mut b, k, &push, addr);
    b.store_plain(result, d.count);
    b.end_if(m);
    let r = b.op(ir, Op::Load, a.u32, vec![id(result)]);
    b.end(inst(Op::ReturnValue, None, None, vec![id(r)]), None);
    finish_fn(h, func, b);
    ir.name(fid, &format!("node_output{k}_length"));
    h.length.insert(k, fid);
    fid
}

pub(super) fn shared(ir: &mut Ir, slot: &mut Option<Word>, ty: Word, name: &str) -> Word {
    if let Some(w) = slot {
        return *w;
    }
    let v = ir.global_var(StorageClass::Workgroup, ty, name);
    *slot = Some(v);
    v
}

pub(super) fn barrier(ir: &mut Ir, b: &mut Body) {
    let wg = ir.c_u32(Scope::Workgroup as u32);
    let sem = ir.c_u32(BARRIER_SEMANTICS);
    b.push(inst(Op::ControlBarrier, None, None, vec![id(wg), id(wg), id(sem)]));
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
    let v = b.select(ir, a.u32, last, one, zero);
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
