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
//! Every helper reads the node push block (`runtime::push`). This file
//! dispatches the instructions and makes the small helpers; `allocate`,
//! `enqueue` and `bounds` (the record-index helpers) make the others, on
//! what `helpers`, `lookup` and `decode` give them.
//!
//! Afterwards no AMDX instruction is left in any function.

mod allocate;
mod bounds;
mod counters;
mod decode;
mod enqueue;
mod helpers;
mod lookup;

use super::context::Ctx;
use super::payload::{InputLowering, RecordIndexFns};
use crate::analyze::finish_counter_offset;
use crate::error::LowerError;
use crate::ir::{id, inst, op_id, IdMap, Ir};
use crate::runtime::{self, begin_fn};
use decode::decode;
use helpers::{barrier, finish_fn, shared, targets, AllocCache, Helpers};
use lookup::lookup;
use rspirv::dr::Instruction;
use spirv::{Op, Scope, Word};
use std::collections::HashMap;

pub use counters::{last_change, Site};

/// Rewrites every AMDX instruction; after the one at `done`'s site, calls
/// `done`'s function (the workgroup's done count, see `epilogue`).
pub fn run(
    ir: &mut Ir,
    cx: &Ctx,
    input: InputLowering,
    record_index_fns: &RecordIndexFns,
    done: Option<(Site, Word)>,
) -> Result<(), LowerError> {
    let mut h = Helpers::default();
    let types = ir.type_map();
    let fcount = ir.m.functions.len();
    for fi in 0..fcount {
        let is_entry =
            ir.m.functions.get(fi).and_then(|f| f.def.as_ref()).and_then(|d| d.result_id) == Some(cx.facts.entry_fn);
        // Allocation results of this function and their count operands.
        let mut counts: HashMap<Word, Word> = HashMap::new();
        let nb = ir.m.functions.get(fi).map(|f| f.blocks.len()).unwrap_or(0);
        for bi in 0..nb {
            let old = match ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)) {
                Some(b) => std::mem::take(&mut b.instructions),
                None => continue,
            };
            let label = ir.m.functions.get(fi).and_then(|f| f.blocks.get(bi)).and_then(|b| b.label.as_ref());
            let site_here = done.filter(|(site, _)| is_entry && label.and_then(|l| l.result_id) == Some(site.block));
            let mut out: Vec<Instruction> = Vec::with_capacity(old.len());
            for (index, i) in old.into_iter().enumerate() {
                rewrite(ir, cx, &mut h, &types, &input, &mut counts, i, &mut out)?;
                if let Some((_, count_done)) = site_here.filter(|(site, _)| site.index == index) {
                    let r = ir.id();
                    out.push(inst(Op::FunctionCall, Some(cx.abi.void), Some(r), vec![id(count_done)]));
                }
            }
            if let Some(b) = ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)) {
                b.instructions = out;
            }
        }
    }
    for &(k, fid) in record_index_fns {
        bounds::record_index(ir, cx, &mut h, k, fid);
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
    let output_of = |t: Word| output_of(cx, t);
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

/// The output whose payload array is type `t`, or whose (retyped)
/// allocation result type pointed to one.
pub(super) fn output_of(cx: &Ctx, t: Word) -> Option<usize> {
    let of = |t: Word| cx.facts.info.outputs.iter().position(|o| o.type_id == t);
    of(t).or_else(|| ir_pointee_before(cx, t).and_then(of))
}

/// Whether a target of output `k` may take its grid from the payload (its
/// enqueue then has work to do). Unknown without the graph.
pub(super) fn may_target_dynamic(cx: &Ctx, k: usize) -> bool {
    targets(cx, k).is_none_or(|(_, t)| t.dynamic)
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
