//! The end of every compute node workgroup, for the `prologue` pass: after a
//! barrier (every invocation has finished), the workgroup counts itself done
//! in its done group (by its number among the level's workgroups,
//! `NodeDispatch::workgroup_base` + its linear id, see `abi`); the workgroup
//! completing a group resets the group's counter and counts the group in
//! `GraphContext::done`; the one completing the level calls the level
//! finisher. A level of one workgroup needs no count at all. Invocation 0
//! counts; it calls the unrolled finisher itself, which it runs alone, and
//! tells the workgroup through Workgroup memory and a barrier only for the
//! looped one, which every invocation runs.

use super::context::Ctx;
use super::finisher;
use crate::abi::{DONE_GROUPS, DONE_GROUP_STRIDE_WORDS};
use crate::codegen::{f, Body};
use crate::ir::{id, inst, Ir};
use crate::runtime::{ctx_parity_ptr, Push};
use spirv::{Op, Scope, StorageClass, Word};

/// Acquire-release of device and workgroup memory.
const ACQ_REL_ALL: u32 = 0x8 | 0x40 | 0x100; // AcquireRelease | UniformMemory | WorkgroupMemory
/// Acquire-release of device memory (the done counters).
const ACQ_REL_UNIFORM: u32 = 0x8 | 0x40; // AcquireRelease | UniformMemory

/// This workgroup's number among the level's workgroups and their count,
/// loaded before the node's code runs (fixed for the level: off the path
/// from the code's end to the finisher).
pub(super) struct Numbering {
    number: Word,
    launched: Word,
    /// Device address of the done-group counters.
    counters: Word,
}

impl Numbering {
    pub fn load(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, l: Word) -> Numbering {
        let a = cx.abi;
        let base = b.load_field(ir, &a, a.s_dispatch(), push.dispatch, f::D_WORKGROUP_BASE);
        let launched = b.load_field(ir, &a, a.s_dispatch(), push.dispatch, f::D_LEVEL_WORKGROUPS);
        let counters = b.load_field(ir, &a, a.s_ctx(), push.ctx, f::C_DONE_GROUPS);
        Numbering { number: b.bin(ir, Op::IAdd, a.u32, base, l), launched, counters }
    }
}

/// Counts the workgroup done; the level's last workgroup runs `finisher`.
pub(super) fn run(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, n: Numbering, finisher: Word) {
    let a = cx.abi;
    let u = a.u32;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    // A finisher that invocation 0 runs alone needs nobody told: its flag
    // stays in a Function variable, and no second barrier stands between
    // the count and the finisher.
    let alone_finisher = finisher::one_invocation(cx.opts);
    let last_var = match alone_finisher {
        true => b.local(ir, u, zero),
        false => ir.global_var(StorageClass::Workgroup, u, "node_level_last"),
    };
    // Every invocation's writes (records, counters) before the count, which
    // releases them to the other workgroups.
    let wg = ir.c_u32(Scope::Workgroup as u32);
    let sem = ir.c_u32(ACQ_REL_ALL);
    b.push(inst(Op::ControlBarrier, None, None, vec![id(wg), id(wg), id(sem)]));
    let lidx = b.op(ir, Op::Load, u, vec![id(cx.real.lidx)]);
    let l0 = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    let m = b.begin_if(ir, l0);
    let alone = b.bin(ir, Op::IEqual, a.bool_, n.launched, one);
    let flag = b.select(ir, u, alone, one, zero);
    b.store_plain(last_var, flag);
    let crowd = b.op(ir, Op::LogicalNot, a.bool_, vec![id(alone)]);
    let mc = b.begin_if(ir, crowd);
    count_done(ir, cx, b, push, &n, last_var);
    b.end_if(mc);
    if alone_finisher {
        call_if_last(ir, cx, b, last_var, finisher);
        b.end_if(m);
        return;
    }
    b.end_if(m);
    b.workgroup_barrier(ir);
    call_if_last(ir, cx, b, last_var, finisher);
}

/// Calls `finisher` where `last_var` holds 1.
fn call_if_last(ir: &mut Ir, cx: &Ctx, b: &mut Body, last_var: Word, finisher: Word) {
    let a = cx.abi;
    let u = a.u32;
    let zero = ir.c_u32(0);
    let flag = b.op(ir, Op::Load, u, vec![id(last_var)]);
    let last = b.bin(ir, Op::INotEqual, a.bool_, flag, zero);
    let m = b.begin_if(ir, last);
    let r = ir.id();
    b.push(inst(Op::FunctionCall, Some(a.void), Some(r), vec![id(finisher)]));
    b.end_if(m);
}

/// Invocation 0 of a level of several workgroups: the done-group count and
/// the level's `done` count; leaves 1 in `last_var` in the last workgroup.
fn count_done(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, n: &Numbering, last_var: Word) {
    let a = cx.abi;
    let u = a.u32;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let groups = ir.c_u32(DONE_GROUPS);
    let g = b.bin(ir, Op::UMod, u, n.number, groups);
    let full = b.bin(ir, Op::UDiv, u, n.launched, groups);
    let rest = b.bin(ir, Op::UMod, u, n.launched, groups);
    let extra = b.bin(ir, Op::ULessThan, a.bool_, g, rest);
    let extra = b.select(ir, u, extra, one, zero);
    let in_group = b.bin(ir, Op::IAdd, u, full, extra);
    let parity = b.select(ir, u, push.odd, one, zero);
    let pg = b.bin(ir, Op::IMul, u, parity, groups);
    let word = b.bin(ir, Op::IAdd, u, pg, g);
    let stride = ir.c_u32(DONE_GROUP_STRIDE_WORDS);
    let word = b.bin(ir, Op::IMul, u, word, stride);
    let counters = b.addr_ptr(ir, a.p_u32, n.counters);
    let gp = b.elem(ir, a.p_u32, counters, word);
    // A group of one is complete without its counter (levels of at most
    // DONE_GROUPS workgroups: one atomic fewer on their critical path).
    let alone = b.bin(ir, Op::IEqual, a.bool_, in_group, one);
    let completes_v = b.local(ir, a.bool_, alone);
    let crowd = b.op(ir, Op::LogicalNot, a.bool_, vec![id(alone)]);
    let mc = b.begin_if(ir, crowd);
    let before = b.atomic_sem(ir, Op::AtomicIAdd, u, gp, one, ACQ_REL_UNIFORM);
    let now = b.bin(ir, Op::IAdd, u, before, one);
    let completes = b.bin(ir, Op::IEqual, a.bool_, now, in_group);
    b.store_plain(completes_v, completes);
    let mz = b.begin_if(ir, completes);
    // Nobody else touches the counter at this level: ready for the next
    // level of this parity.
    b.store(gp, zero, 4);
    b.end_if(mz);
    b.end_if(mc);
    let completes = b.op(ir, Op::Load, a.bool_, vec![id(completes_v)]);
    let m2 = b.begin_if(ir, completes);
    let done_p = ctx_parity_ptr(ir, &a, b, push.ctx, f::C_DONE, push.odd, false);
    let before = b.atomic_sem(ir, Op::AtomicIAdd, u, done_p, one, ACQ_REL_UNIFORM);
    let now = b.bin(ir, Op::IAdd, u, before, one);
    let few = b.bin(ir, Op::ULessThan, a.bool_, n.launched, groups);
    let used = b.select(ir, u, few, n.launched, groups);
    let last = b.bin(ir, Op::IEqual, a.bool_, now, used);
    let flag = b.select(ir, u, last, one, zero);
    b.store_plain(last_var, flag);
    b.end_if(m2);
}
