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
//! itself done as soon as it has changed its last counter
//! ([`DonePoint`]): a node without outputs changes none, so it counts
//! before its code runs; a node whose last counter change (an allocation,
//! or an enqueue with grid entries) is at a site every invocation passes
//! once counts there (`node_ops::last_change`), before it writes its
//! records; any other node counts at the end. An early count releases the
//! prologue's reads of what the finisher changes (the tag, this level's
//! launch) and the workgroup's counter changes, without waiting for any
//! record store to drain. The last workgroup runs the finisher at its end
//! either way. (A payload index fault, which can come after the finisher
//! has cleared the level's status, goes straight to the host's words:
//! `status::report_bounds`.)

use super::context::Ctx;
use super::finisher;
use super::node_ops::{self, Site};
use super::phases;
use crate::abi::{Phase, DONE_GROUPS, DONE_GROUP_STRIDE_WORDS};
use crate::codegen::{f, Body};
use crate::ir::{id, inst, Ir};
use crate::runtime::{self, ctx_parity_ptr, Push};
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
    /// Inside the node's code, right after its last counter change (see
    /// `node_ops::last_change`), by a call to the function with this id.
    AtSite(Site, Word),
    /// After every invocation has finished the node's code.
    AfterCode,
}

impl DonePoint {
    /// The point for the entry being lowered (before `node_ops` rewrites
    /// the instructions `node_ops::last_change` looks for).
    pub fn choose(ir: &mut Ir, cx: &Ctx) -> DonePoint {
        if cx.facts.info.mesh {
            // Drawn, never counted (see `prologue`).
            return DonePoint::AfterCode;
        }
        if crate::options::counts_before_code(&cx.facts.info) {
            return DonePoint::BeforeCode;
        }
        match node_ops::last_change(ir, cx) {
            Some(site) => DonePoint::AtSite(site, ir.id()),
            None => DonePoint::AfterCode,
        }
    }

    /// The site and the function `node_ops` calls there.
    pub fn site(self) -> Option<(Site, Word)> {
        match self {
            DonePoint::AtSite(site, fid) => Some((site, fid)),
            _ => None,
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

/// Runs `code` (the node's code, for the whole workgroup) and counts the
/// workgroup done at `point`; the level's last workgroup runs `finisher`
/// after its code, wherever it counted: the finisher's loads then overlap
/// the drain of its record stores instead of holding back its code (H200,
/// over two A/B calls against finishing right after an early count:
/// classify 1.25 -> 1.19, classify-4m 1.15 -> 1.10, fanout 1.04 -> 1.02,
/// deferred about even).
#[allow(clippy::too_many_arguments)]
pub(super) fn around_code(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    push: &Push,
    n: Numbering,
    finisher: Word,
    point: DonePoint,
    code: impl FnOnce(&mut Ir, &mut Body),
) {
    match point {
        DonePoint::BeforeCode => {
            // In a level that counts nothing (`abi::LEVEL_UNCOUNTED`, the
            // same for the whole level) only the code runs.
            let counted = b.op(ir, Op::LogicalNot, cx.abi.bool_, vec![id(push.uncounted)]);
            let last = Last::declare(ir, cx, b, false);
            let m = b.begin_if(ir, counted);
            count(ir, cx, b, push, &n, last, true);
            b.end_if(m);
            code(ir, b);
            let m = b.begin_if(ir, counted);
            finish_if_last(ir, cx, b, &n, last, finisher, true);
            b.end_if(m);
        }
        DonePoint::AfterCode => {
            code(ir, b);
            let last = Last::declare(ir, cx, b, false);
            count(ir, cx, b, push, &n, last, false);
            finish_if_last(ir, cx, b, &n, last, finisher, false);
        }
        DonePoint::AtSite(_, fid) => {
            // Counted in the site's function (or here, where the code did
            // not run), read here.
            let last = Last::declare(ir, cx, b, true);
            let counted = at_site(ir, cx, b, &n, last, fid);
            code(ir, b);
            let a = cx.abi;
            let zero = ir.c_u32(0);
            let flag = b.op(ir, Op::Load, a.u32, vec![id(counted)]);
            let yes = b.bin(ir, Op::INotEqual, a.bool_, flag, zero);
            let m = b.begin_if(ir, yes);
            finish_if_last(ir, cx, b, &n, last, finisher, true);
            b.end_if(m);
            // A workgroup whose code did not run has not counted.
            let not_yet = b.op(ir, Op::LogicalNot, a.bool_, vec![id(yes)]);
            let m = b.begin_if(ir, not_yet);
            count(ir, cx, b, push, &n, last, false);
            finish_if_last(ir, cx, b, &n, last, finisher, false);
            b.end_if(m);
        }
    }
}

/// Where the workgroup keeps whether it is the level's last: a Function
/// variable of invocation 0 when it runs the finisher alone (a Private
/// one when the count is in another function than the finisher), else
/// Workgroup memory, which every invocation reads after a barrier.
#[derive(Clone, Copy)]
struct Last {
    var: Word,
    alone_finisher: bool,
}

impl Last {
    fn declare(ir: &mut Ir, cx: &Ctx, b: &mut Body, across_functions: bool) -> Last {
        let u = cx.abi.u32;
        let alone_finisher = finisher::one_invocation(cx.opts);
        let var = match (alone_finisher, across_functions) {
            (true, false) => {
                let zero = ir.c_u32(0);
                b.local(ir, u, zero)
            }
            (true, true) => ir.global_var(StorageClass::Private, u, "node_level_last_here"),
            (false, _) => ir.global_var(StorageClass::Workgroup, u, "node_level_last"),
        };
        Last { var, alone_finisher }
    }
}

/// Emits `fid`, the count at the node's last counter change (every
/// invocation calls it once, see `node_ops::last_change`), leaving the
/// verdict in `last`, with `n` handed over in Private variables, which the
/// caller's `b` fills; returns the Private flag that says the workgroup has
/// counted.
fn at_site(ir: &mut Ir, cx: &Ctx, b: &mut Body, n: &Numbering, last: Last, fid: Word) -> Word {
    let a = cx.abi;
    let var = |ir: &mut Ir, b: &mut Body, ty: Word, v: Word, name: &str| {
        let p = ir.global_var(StorageClass::Private, ty, name);
        b.store_plain(p, v);
        p
    };
    let zero = ir.c_u32(0);
    let counted = var(ir, b, a.u32, zero, "node_counted_done");
    let number = var(ir, b, a.u32, n.number, "node_done_number");
    let launched = var(ir, b, a.u32, n.launched, "node_done_launched");
    let counters = var(ir, b, a.u64, n.counters, "node_done_counters");
    let (_, _, mut func, mut fb) = runtime::begin_fn(ir, a.void, &[]);
    if let Some(def) = func.def.as_mut() {
        def.result_id = Some(fid);
    }
    let push = runtime::push(ir, &a, &cx.push, &mut fb);
    let load = |ir: &mut Ir, fb: &mut Body, ty: Word, p: Word| fb.op(ir, Op::Load, ty, vec![id(p)]);
    let n = Numbering {
        number: load(ir, &mut fb, a.u32, number),
        launched: load(ir, &mut fb, a.u32, launched),
        counters: load(ir, &mut fb, a.u64, counters),
    };
    count(ir, cx, &mut fb, &push, &n, last, true);
    let one = ir.c_u32(1);
    fb.store_plain(counted, one);
    fb.end(inst(Op::Return, None, None, vec![]), None);
    runtime::finish_fn(ir, func, fb, "node_count_done_at_last_change");
    counted
}

/// Counts the workgroup done, leaving 1 in `last` in the level's last
/// workgroup (invocation 0's; a level of one workgroup needs no count).
/// `early`: before the workgroup's code has ended (it has changed its last
/// counter), so the count releases without acquiring.
fn count(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, n: &Numbering, last: Last, early: bool) {
    let a = cx.abi;
    let u = a.u32;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    // Every invocation's accesses before the count, which releases them to
    // the other workgroups: its writes (records, counters) and the
    // prologue's reads of what the finisher changes (the tag, this level's
    // launch), which must not see its stores.
    let wg = ir.c_u32(Scope::Workgroup as u32);
    let sem = ir.c_u32(ACQ_REL_ALL);
    b.push(inst(Op::ControlBarrier, None, None, vec![id(wg), id(wg), id(sem)]));
    let lidx = b.op(ir, Op::Load, u, vec![id(cx.real.lidx)]);
    let l0 = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    let m = b.begin_if(ir, l0);
    let alone = b.bin(ir, Op::IEqual, a.bool_, n.launched, one);
    let flag = b.select(ir, u, alone, one, zero);
    b.store_plain(last.var, flag);
    let crowd = b.op(ir, Op::LogicalNot, a.bool_, vec![id(alone)]);
    let mc = b.begin_if(ir, crowd);
    count_done(ir, cx, b, push, n, last.var, early);
    b.end_if(mc);
    b.end_if(m);
    phases::mark(ir, cx, b, Phase::Counted);
}

/// Calls `finisher` in the level's last workgroup (by invocation 0 alone,
/// without telling the others, or by every invocation after a barrier);
/// after a count that did not acquire (`early`) and that others took part
/// in, behind an acquire fence that makes every other workgroup's released
/// accesses visible to it.
fn finish_if_last(ir: &mut Ir, cx: &Ctx, b: &mut Body, n: &Numbering, last: Last, finisher: Word, early: bool) {
    let a = cx.abi;
    let u = a.u32;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let m = match last.alone_finisher {
        true => {
            let lidx = b.op(ir, Op::Load, u, vec![id(cx.real.lidx)]);
            let l0 = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
            Some(b.begin_if(ir, l0))
        }
        false => {
            b.workgroup_barrier(ir);
            None
        }
    };
    let flag = b.op(ir, Op::Load, u, vec![id(last.var)]);
    let is_last = b.bin(ir, Op::INotEqual, a.bool_, flag, zero);
    let ml = b.begin_if(ir, is_last);
    if early {
        let crowd = b.bin(ir, Op::INotEqual, a.bool_, n.launched, one);
        let mf = b.begin_if(ir, crowd);
        device_fence(ir, b, ACQUIRE_UNIFORM);
        b.end_if(mf);
    }
    phases::mark(ir, cx, b, Phase::FinisherStart);
    let r = ir.id();
    b.push(inst(Op::FunctionCall, Some(a.void), Some(r), vec![id(finisher)]));
    phases::mark(ir, cx, b, Phase::FinisherEnd);
    b.end_if(ml);
    if let Some(m) = m {
        b.end_if(m);
    }
}

/// `OpMemoryBarrier` at Device scope with `semantics`.
fn device_fence(ir: &mut Ir, b: &mut Body, semantics: u32) {
    let scope = ir.c_u32(Scope::Device as u32);
    let sem = ir.c_u32(semantics);
    b.push(inst(Op::MemoryBarrier, None, None, vec![id(scope), id(sem)]));
}

/// Invocation 0 of a level of several workgroups: the done-group count and
/// the level's `done` count; leaves 1 in `last_var` in the last workgroup.
/// `early` (a count before the workgroup's code has ended) counts with
/// release only: the group's completer fences before it passes the
/// group's counts on.
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
