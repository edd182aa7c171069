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
//!
//! The finisher needs only the level's counters final, not its records
//! (the barrier after the level orders those), so a workgroup may count
//! itself done as soon as it has changed its last counter. A node without
//! outputs changes none (and its only status, a payload index past its
//! records, goes straight to the host's words: `status::report_bounds`), so
//! it counts before its code runs ([`DonePoint::BeforeCode`]): the count and
//! the finisher overlap the level's work instead of following it, behind a
//! barrier that waits for every store.

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
/// Acquire of device memory (the finisher of a count made before the code).
const ACQUIRE_UNIFORM: u32 = 0x2 | 0x40; // Acquire | UniformMemory
/// Release of device memory: a count before the code releases the
/// prologue's reads, and acquires nothing, since an acquire there would
/// hold every later access of the node's code behind the count's round
/// trip; the paths that pass others' counts on, or read them, fence.
const RELEASE_UNIFORM: u32 = 0x4 | 0x40; // Release | UniformMemory

/// Where a workgroup counts itself done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DonePoint {
    /// Before the node's code: a node without outputs changes no counter.
    BeforeCode,
    /// After every invocation has finished the node's code.
    AfterCode,
}

impl DonePoint {
    /// The point for the entry being lowered.
    pub fn of(cx: &Ctx) -> DonePoint {
        match cx.facts.info.outputs.is_empty() {
            true => DonePoint::BeforeCode,
            false => DonePoint::AfterCode,
        }
    }
}

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

/// Counts the workgroup done at `point`; the level's last workgroup runs
/// `finisher`.
pub(super) fn run(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, n: Numbering, finisher: Word, point: DonePoint) {
    let a = cx.abi;
    let u = a.u32;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let early = point == DonePoint::BeforeCode;
    // A finisher that invocation 0 runs alone needs nobody told: its flag
    // stays in a Function variable, and no second barrier stands between
    // the count and the finisher.
    let alone_finisher = finisher::one_invocation(cx.opts);
    let last_var = match alone_finisher {
        true => b.local(ir, u, zero),
        false => ir.global_var(StorageClass::Workgroup, u, "node_level_last"),
    };
    // Every invocation's accesses before the count, which releases them to
    // the other workgroups: after the code, its writes (records, counters);
    // before it, the prologue's reads of what the finisher changes (the
    // tag, this level's launch), which must not see its stores.
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
    count_done(ir, cx, b, push, &n, last_var, early);
    b.end_if(mc);
    if alone_finisher {
        call_if_last(ir, cx, b, last_var, finisher, early);
        b.end_if(m);
        return;
    }
    b.end_if(m);
    b.workgroup_barrier(ir);
    call_if_last(ir, cx, b, last_var, finisher, early);
}

/// Calls `finisher` where `last_var` holds 1; after a count that did not
/// acquire (`early`), behind an acquire fence that makes every other
/// workgroup's released accesses visible to it.
fn call_if_last(ir: &mut Ir, cx: &Ctx, b: &mut Body, last_var: Word, finisher: Word, early: bool) {
    let a = cx.abi;
    let u = a.u32;
    let zero = ir.c_u32(0);
    let flag = b.op(ir, Op::Load, u, vec![id(last_var)]);
    let last = b.bin(ir, Op::INotEqual, a.bool_, flag, zero);
    let m = b.begin_if(ir, last);
    if early {
        device_fence(ir, b, ACQUIRE_UNIFORM);
    }
    let r = ir.id();
    b.push(inst(Op::FunctionCall, Some(a.void), Some(r), vec![id(finisher)]));
    b.end_if(m);
}

/// `OpMemoryBarrier` at Device scope with `semantics`.
fn device_fence(ir: &mut Ir, b: &mut Body, semantics: u32) {
    let scope = ir.c_u32(Scope::Device as u32);
    let sem = ir.c_u32(semantics);
    b.push(inst(Op::MemoryBarrier, None, None, vec![id(scope), id(sem)]));
}

/// Invocation 0 of a level of several workgroups: the done-group count and
/// the level's `done` count; leaves 1 in `last_var` in the last workgroup.
/// `early` (a count before the node's code) counts with release only: the
/// group's completer fences before it passes the group's counts on.
fn count_done(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, n: &Numbering, last_var: Word, early: bool) {
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
    let sem = if early { RELEASE_UNIFORM } else { ACQ_REL_UNIFORM };
    let before = b.atomic_sem(ir, Op::AtomicIAdd, u, gp, one, sem);
    let now = b.bin(ir, Op::IAdd, u, before, one);
    let completes = b.bin(ir, Op::IEqual, a.bool_, now, in_group);
    b.store_plain(completes_v, completes);
    let mz = b.begin_if(ir, completes);
    if early {
        // Acquires the group's counts and releases them with the count below.
        device_fence(ir, b, ACQ_REL_UNIFORM);
    }
    // Nobody else touches the counter at this level: ready for the next
    // level of this parity.
    b.store(gp, zero, 4);
    b.end_if(mz);
    b.end_if(mc);
    let completes = b.op(ir, Op::Load, a.bool_, vec![id(completes_v)]);
    let m2 = b.begin_if(ir, completes);
    let done_p = ctx_parity_ptr(ir, &a, b, push.ctx, f::C_DONE, push.odd, false);
    let before = b.atomic_sem(ir, Op::AtomicIAdd, u, done_p, one, sem);
    let now = b.bin(ir, Op::IAdd, u, before, one);
    let few = b.bin(ir, Op::ULessThan, a.bool_, n.launched, groups);
    let used = b.select(ir, u, few, n.launched, groups);
    let last = b.bin(ir, Op::IEqual, a.bool_, now, used);
    let flag = b.select(ir, u, last, one, zero);
    b.store_plain(last_var, flag);
    b.end_if(m2);
}
