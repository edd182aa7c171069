//! The level finisher: what used to be a meta pass between two levels, run
//! by the last workgroup of a level (see `epilogue` and the execution model
//! in `abi`).
//!
//! Matches: nothing. Emits `node_level_finish()`, which every invocation of
//! that workgroup calls, in uniform control flow. In named steps:
//! 1. **status**: the bits this level raised, with those before it (the
//!    `status_in` of level 0's dispatch, or `GraphContext::carried`); after a
//!    fatal status (records lost) nothing more is launched;
//! 2. **next launches**: for every node slot (the invocations stride over
//!    them) the next level's `NodeDispatch` from the rank counter of the
//!    records enqueued for it at this level (its `SharesInputWithAMDX`
//!    base's, for a sharer): record count, workgroups per `NodeSchedule`
//!    (a dynamic grid's from the grid counter), `vkCmdDispatchIndirect`
//!    arguments split over x and y, framed records, the status words'
//!    address passed on, and its first number among the next level's
//!    workgroups (a mesh node's workgroups are drawn, never counted);
//! 3. **clear**: this level's rank and grid counters, status and done
//!    counter go back to zero (so a dispatch ends with all of them zero and
//!    the next needs no transfer), the next level's total goes into every
//!    next `NodeDispatch`, the tag advances, and the status after this level
//!    goes to the host's words (after this level, and final);
//! 4. **nothing next**: when nothing is launched next, this parity's
//!    arguments, which the level after next would otherwise reuse (no
//!    finisher runs for an empty level), are zeroed.
//!
//! Afterwards the module has the function; the prologue pass calls it.

use super::Ctx;
use crate::abi::{RECORDS_FRAMED, SCHEDULE_DYNAMIC, SCHEDULE_FLAG_MESH, SCHEDULE_STATIC, STATUS_FATAL, STATUS_WORDS};
use crate::codegen::{f, Body};
use crate::ir::{id, inst, Ir};
use crate::runtime::{self, ctx_parity_ptr, Push};
use spirv::{Op, StorageClass, Word};

/// `maxComputeWorkGroupCount` per dimension that every device has.
const MAX_GROUPS_X: u32 = 65535;

/// What the steps share.
struct Level {
    push: Push,
    lidx: Word,
    /// Invocations of the workgroup (the slot loops' step).
    step: Word,
    node_count: Word,
    /// Addresses of this level's rank and grid counters (see
    /// `runtime::counter`), and the `PSB NodeDispatch*` tables of this
    /// level's parity (`now`) and the next one's.
    ranks_now: Word,
    grids_now: Word,
    disp_now: Word,
    disp_next: Word,
    scheds: Word,
}

pub fn run(ir: &mut Ir, cx: &Ctx, workgroup_size: u32) -> Word {
    let a = cx.abi;
    let u = a.u32;
    let (fid, _, func, mut b) = runtime::begin_fn(ir, a.void, &[]);
    let push = runtime::push(ir, &a, &cx.push, &mut b);
    let ctx = push.ctx;
    let zero = ir.c_u32(0);
    let total = ir.global_var(StorageClass::Workgroup, u, "node_finish_launched");
    let lidx = b.op(ir, Op::Load, u, vec![id(cx.real.lidx)]);
    let l0 = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    let m = b.begin_if(ir, l0);
    b.store_plain(total, zero);
    b.end_if(m);
    b.workgroup_barrier(ir);
    let table = |ir: &mut Ir, b: &mut Body, base: u32, other: bool, ty: Word| {
        let p = ctx_parity_ptr(ir, &a, b, ctx, base, push.odd, other);
        let addr = b.load(ir, a.u64, p, 8);
        b.addr_ptr(ir, ty, addr)
    };
    let address = |ir: &mut Ir, b: &mut Body, base: u32| {
        let p = ctx_parity_ptr(ir, &a, b, ctx, base, push.odd, false);
        b.load(ir, a.u64, p, 8)
    };
    let sched_addr = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_SCHEDULES);
    let lv = Level {
        push,
        lidx,
        step: ir.c_u32(workgroup_size.max(1)),
        node_count: b.load_field(ir, &a, a.s_ctx(), ctx, f::C_NODE_COUNT),
        ranks_now: address(ir, &mut b, f::C_RANK_COUNTS),
        grids_now: address(ir, &mut b, f::C_GRID_COUNTS),
        disp_now: table(ir, &mut b, f::C_DISPATCHES, false, a.p_dispatch),
        disp_next: table(ir, &mut b, f::C_DISPATCHES, true, a.p_dispatch),
        scheds: b.addr_ptr(ir, a.p_schedule, sched_addr),
    };
    let (status, fatal) = status(ir, cx, &mut b, &lv);
    let words = b.load_field(ir, &a, a.s_dispatch(), push.dispatch, f::D_STATUS);
    for_each_slot(ir, cx, &mut b, &lv, |ir, b, n| next_launch(ir, cx, b, &lv, n, fatal, words, total));
    b.workgroup_barrier(ir);
    let launched = b.op(ir, Op::Load, u, vec![id(total)]);
    for_each_slot(ir, cx, &mut b, &lv, |ir, b, n| clear_slot(ir, cx, b, &lv, n, launched));
    let m = b.begin_if(ir, l0);
    close_level(ir, cx, &mut b, &lv, status, words);
    b.end_if(m);
    let none = b.bin(ir, Op::IEqual, a.bool_, launched, zero);
    let m = b.begin_if(ir, none);
    for_each_slot(ir, cx, &mut b, &lv, |ir, b, n| {
        let dp = b.elem(ir, a.p_dispatch, lv.disp_now, n);
        let zeros = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(zero), id(zero), id(zero)]);
        let ip = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_INDIRECT);
        b.store(ip, zeros, 4);
        let wp = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_WORKGROUP_COUNT);
        b.store(wp, zero, 4);
    });
    b.end_if(m);
    b.end(inst(Op::Return, None, None, vec![]), None);
    runtime::finish_fn(ir, func, b, "node_level_finish");
    fid
}

/// Runs `body(slot)` for every node slot, the invocations striding over them.
fn for_each_slot(ir: &mut Ir, cx: &Ctx, b: &mut Body, lv: &Level, mut body: impl FnMut(&mut Ir, &mut Body, Word)) {
    let u = cx.abi.u32;
    let nv = b.local(ir, u, lv.lidx);
    let lp = b.begin_loop(ir);
    let n = b.op(ir, Op::Load, u, vec![id(nv)]);
    let more = b.bin(ir, Op::ULessThan, cx.abi.bool_, n, lv.node_count);
    b.loop_test(&lp, more);
    body(ir, b, n);
    let n1 = b.bin(ir, Op::IAdd, u, n, lv.step);
    b.store_plain(nv, n1);
    b.end_loop(&lp);
}

/// Step 1: (the dispatch's status after this level, `bool` fatal).
fn status(ir: &mut Ir, cx: &Ctx, b: &mut Body, lv: &Level) -> (Word, Word) {
    let a = cx.abi;
    let u = a.u32;
    let ctx = lv.push.ctx;
    let zero = ir.c_u32(0);
    let mine = ctx_parity_ptr(ir, &a, b, ctx, f::C_STATUS, lv.push.odd, false);
    let raised = b.atomic_load(ir, u, mine);
    let first = b.bin(ir, Op::IEqual, a.bool_, lv.push.level, zero);
    let given = b.load_field(ir, &a, a.s_dispatch(), lv.push.dispatch, f::D_STATUS_IN);
    let carried = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_CARRIED);
    let before = b.select(ir, u, first, given, carried);
    let status = b.bin(ir, Op::BitwiseOr, u, before, raised);
    let fatal_bits = ir.c_u32(STATUS_FATAL);
    let fatal = b.bin(ir, Op::BitwiseAnd, u, status, fatal_bits);
    (status, b.bin(ir, Op::INotEqual, a.bool_, fatal, zero))
}

/// Step 2 for slot `n`: its `NodeDispatch` for the next level.
#[allow(clippy::too_many_arguments)]
fn next_launch(ir: &mut Ir, cx: &Ctx, b: &mut Body, lv: &Level, n: Word, fatal: Word, words: Word, total: Word) {
    let a = cx.abi;
    let u = a.u32;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let sp = b.elem(ir, a.p_schedule, lv.scheds, n);
    let share = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_SHARE_BASE);
    let shares = b.bin(ir, Op::INotEqual, a.bool_, share, zero);
    let base = b.bin(ir, Op::ISub, u, share, one);
    let src = b.select(ir, u, shares, base, n);
    let rp = runtime::counter(ir, &a, b, lv.ranks_now, src, false);
    let records = b.load(ir, u, rp, 4);
    let gp = runtime::counter(ir, &a, b, lv.grids_now, src, true);
    let grid = b.load(ir, a.u64, gp, 8);
    let c32 = ir.c_u32(32);
    let hi = b.bin(ir, Op::ShiftRightLogical, a.u64, grid, c32);
    let dyn_groups = b.op(ir, Op::UConvert, u, vec![id(hi)]);
    let mode = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_MODE);
    let per = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_PER_WORKGROUP);
    let statics = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_STATIC_GROUPS);
    let per_safe = {
        let is0 = b.bin(ir, Op::IEqual, a.bool_, per, zero);
        b.select(ir, u, is0, one, per)
    };
    let batched_num = b.bin(ir, Op::IAdd, u, records, per_safe);
    let batched_num = b.bin(ir, Op::ISub, u, batched_num, one);
    let batched = b.bin(ir, Op::UDiv, u, batched_num, per_safe);
    let static_groups = b.bin(ir, Op::IMul, u, records, statics);
    let (m_static, m_dyn) = (ir.c_u32(SCHEDULE_STATIC), ir.c_u32(SCHEDULE_DYNAMIC));
    let is_static = b.bin(ir, Op::IEqual, a.bool_, mode, m_static);
    let is_dyn = b.bin(ir, Op::IEqual, a.bool_, mode, m_dyn);
    let groups = b.select(ir, u, is_dyn, dyn_groups, batched);
    let groups = b.select(ir, u, is_static, static_groups, groups);
    let groups = b.select(ir, u, fatal, zero, groups);
    let records = b.select(ir, u, fatal, zero, records);
    // x, y, z: at most MAX_GROUPS_X a dimension, fewer than y groups wasted.
    let max_x = ir.c_u32(MAX_GROUPS_X);
    let small = b.bin(ir, Op::ULessThanEqual, a.bool_, groups, max_x);
    let max_x1 = ir.c_u32(MAX_GROUPS_X - 1);
    let yn = b.bin(ir, Op::IAdd, u, groups, max_x1);
    let y = b.bin(ir, Op::UDiv, u, yn, max_x);
    let y = b.select(ir, u, small, one, y);
    let xn = b.bin(ir, Op::IAdd, u, groups, y);
    let xn = b.bin(ir, Op::ISub, u, xn, one);
    let x = b.bin(ir, Op::UDiv, u, xn, y);
    let split = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(x), id(y), id(one)]);
    let dp = b.elem(ir, a.p_dispatch, lv.disp_next, n);
    let framed = ir.c_u32(RECORDS_FRAMED);
    let ip = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_INDIRECT);
    b.store(ip, split, 4);
    for (field, v) in [
        (f::D_WORKGROUP_COUNT, groups),
        (f::D_RECORD_COUNT, records),
        (f::D_MODE, framed),
        (f::D_KEY_NODE, src),
        (f::D_STATUS_IN, zero),
    ] {
        let p = b.field_ptr(ir, &a, a.s_dispatch(), dp, field);
        b.store(p, v, 4);
    }
    let wp = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_STATUS);
    b.store(wp, words, 8);
    let xy = b.bin(ir, Op::IMul, u, x, y);
    let launched = b.select(ir, u, small, groups, xy);
    // Mesh nodes are drawn, not launched: their workgroups never count done.
    let flags = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_FLAGS);
    let mesh_bit = ir.c_u32(SCHEDULE_FLAG_MESH);
    let mesh = b.bin(ir, Op::BitwiseAnd, u, flags, mesh_bit);
    let mesh = b.bin(ir, Op::INotEqual, a.bool_, mesh, zero);
    let launched = b.select(ir, u, mesh, zero, launched);
    let wg_scope = ir.c_u32(spirv::Scope::Workgroup as u32);
    let relaxed = ir.c_u32(0);
    // The running total before this node: its workgroups' first number.
    let first = b.op(ir, Op::AtomicIAdd, u, vec![id(total), id(wg_scope), id(relaxed), id(launched)]);
    let fp = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_WORKGROUP_BASE);
    b.store(fp, first, 4);
}

/// Step 3 for slot `n`: its counters of this level back to zero (every slot
/// has been read by now, sharers' bases included), the next level's total
/// workgroups into its next `NodeDispatch`.
fn clear_slot(ir: &mut Ir, cx: &Ctx, b: &mut Body, lv: &Level, n: Word, launched: Word) {
    let a = cx.abi;
    let zero = ir.c_u32(0);
    let zero64 = ir.c_u64(0);
    let rp = runtime::counter(ir, &a, b, lv.ranks_now, n, false);
    b.store(rp, zero, 4);
    let gp = runtime::counter(ir, &a, b, lv.grids_now, n, true);
    b.store(gp, zero64, 8);
    let dp = b.elem(ir, a.p_dispatch, lv.disp_next, n);
    let lp = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_LEVEL_WORKGROUPS);
    b.store(lp, launched, 4);
}

/// Step 3, once (invocation 0): status, done counter, tag, host words.
fn close_level(ir: &mut Ir, cx: &Ctx, b: &mut Body, lv: &Level, status: Word, words: Word) {
    let a = cx.abi;
    let u = a.u32;
    let ctx = lv.push.ctx;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let sp = ctx_parity_ptr(ir, &a, b, ctx, f::C_STATUS, lv.push.odd, false);
    b.store(sp, zero, 4);
    let cp = b.field_ptr(ir, &a, a.s_ctx(), ctx, f::C_CARRIED);
    b.store(cp, status, 4);
    let dp = ctx_parity_ptr(ir, &a, b, ctx, f::C_DONE, lv.push.odd, false);
    b.store(dp, zero, 4);
    let tag_p = b.field_ptr(ir, &a, a.s_ctx(), ctx, f::C_TAG);
    let tag = b.load(ir, u, tag_p, 4);
    let tag1 = b.bin(ir, Op::IAdd, u, tag, one);
    b.store(tag_p, tag1, 4);
    let zero64 = ir.c_u64(0);
    let has = b.bin(ir, Op::INotEqual, a.bool_, words, zero64);
    let m = b.begin_if(ir, has);
    let wp = b.addr_ptr(ir, a.p_u32, words);
    let after = b.bin(ir, Op::IAdd, u, lv.push.level, one);
    let last = ir.c_u32(STATUS_WORDS - 1);
    let inside = b.bin(ir, Op::ULessThan, a.bool_, after, last);
    let after = b.select(ir, u, inside, after, last);
    for at in [after, last] {
        let p = b.elem(ir, a.p_u32, wp, at);
        b.store(p, status, 4);
    }
    b.end_if(m);
}
