//! The finisher's general form: the workgroup's invocations stride over
//! every node slot, reading each one's `NodeSchedule` from scratch (see the
//! parent module for the steps).

use super::{
    advance_pin, close_level, held_to_level, next_level, report_drop, split_groups, status, uniform_grid, write_launch,
    zero_launch, Held, NextLaunch,
};
use crate::abi::{
    GRID_PAST_LEVEL, MAX_LEVEL_WORKGROUPS, RECORDS_FRAMED, RECORDS_PINNED, SCHEDULE_DYNAMIC, SCHEDULE_FLAG_MESH,
    SCHEDULE_FLAG_PINNED, SCHEDULE_STATIC, STATUS_LEVEL_WORKGROUPS,
};
use crate::codegen::{f, Body};
use crate::ir::{id, Ir};
use crate::passes::context::Ctx;
use crate::runtime::{self, parity_table_or_field, Push};
use spirv::{Op, StorageClass, Word};

/// What the steps share.
struct Level {
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
    /// Parity 0's rank counters and parity 1's `NodeDispatch`es: a pinned
    /// node's at every level (see `abi`'s "Mesh nodes drawn once"); the
    /// next parity's `NodeDispatch`es' address (a pointer cannot be
    /// selected).
    ranks0: Word,
    grids0: Word,
    disp1: Word,
    disp_next_addr: Word,
    /// The level the launches are for.
    next_level: Word,
}

pub(super) fn emit(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, workgroup_size: u32) {
    let a = cx.abi;
    let u = a.u32;
    let ctx = push.ctx;
    let zero = ir.c_u32(0);
    let total = ir.global_var(StorageClass::Workgroup, u, "node_finish_launched");
    let raised = ir.global_var(StorageClass::Workgroup, u, "node_finish_raised");
    let over = ir.global_var(StorageClass::Workgroup, u, "node_finish_over");
    let lidx = b.op(ir, Op::Load, u, vec![id(cx.real.lidx)]);
    let l0 = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    let m = b.begin_if(ir, l0);
    b.store_plain(total, zero);
    b.store_plain(raised, zero);
    b.store_plain(over, zero);
    b.end_if(m);
    b.workgroup_barrier(ir);
    let t = cx.opts.tables.as_ref();
    let table = |ir: &mut Ir, b: &mut Body, known: Option<[u64; 2]>, base: u32, other: bool| {
        parity_table_or_field(ir, &a, b, push, known, base, other)
    };
    let ranks_now = table(ir, b, t.map(|t| t.rank_counts), f::C_RANK_COUNTS, false);
    let grids_now = table(ir, b, t.map(|t| t.grid_counts), f::C_GRID_COUNTS, false);
    let disp_now = table(ir, b, t.map(|t| t.dispatches), f::C_DISPATCHES, false);
    let disp_next = table(ir, b, t.map(|t| t.dispatches), f::C_DISPATCHES, true);
    let even = ir.c_bool(false);
    let even = Push { odd: even, ..*push };
    let ranks0 = parity_table_or_field(ir, &a, b, &even, t.map(|t| t.rank_counts), f::C_RANK_COUNTS, false);
    let grids0 = parity_table_or_field(ir, &a, b, &even, t.map(|t| t.grid_counts), f::C_GRID_COUNTS, false);
    let disp1 = parity_table_or_field(ir, &a, b, &even, t.map(|t| t.dispatches), f::C_DISPATCHES, true);
    let sched_addr = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_SCHEDULES);
    let lv = Level {
        lidx,
        step: ir.c_u32(workgroup_size.max(1)),
        node_count: b.load_field(ir, &a, a.s_ctx(), ctx, f::C_NODE_COUNT),
        ranks_now,
        grids_now,
        disp_now: b.addr_ptr(ir, a.p_dispatch, disp_now),
        disp_next: b.addr_ptr(ir, a.p_dispatch, disp_next),
        scheds: b.addr_ptr(ir, a.p_schedule, sched_addr),
        ranks0,
        grids0,
        disp1,
        disp_next_addr: disp_next,
        next_level: next_level(ir, cx, b, push),
    };
    let (status, fatal) = status(ir, cx, b, push);
    let words = b.load_field(ir, &a, a.s_dispatch(), push.dispatch, f::D_STATUS);
    let shared = Shared { total, raised, over };
    for_each_slot(ir, cx, b, &lv, |ir, b, n| next_launch(ir, cx, b, &lv, n, fatal, words, &shared));
    b.workgroup_barrier(ir);
    // Launches that together pass what a level launches: none of them runs.
    let past = b.op(ir, Op::Load, u, vec![id(over)]);
    let past = b.bin(ir, Op::INotEqual, a.bool_, past, zero);
    let mp = b.begin_if_rare(ir, past);
    for_each_slot(ir, cx, b, &lv, |ir, b, n| drop_launch(ir, cx, b, &lv, n, words, &shared));
    b.end_if(mp);
    let launched = b.op(ir, Op::Load, u, vec![id(total)]);
    let launched = b.select(ir, u, past, zero, launched);
    for_each_slot(ir, cx, b, &lv, |ir, b, n| clear_slot(ir, cx, b, &lv, n, launched));
    let m = b.begin_if(ir, l0);
    let dropped = b.op(ir, Op::Load, u, vec![id(raised)]);
    let status = b.bin(ir, Op::BitwiseOr, u, status, dropped);
    close_level(ir, cx, b, push, status, words);
    b.end_if(m);
    let none = b.bin(ir, Op::IEqual, a.bool_, launched, zero);
    let none = b.bin(ir, Op::LogicalOr, a.bool_, none, push.next_uncounted);
    let m = b.begin_if(ir, none);
    for_each_slot(ir, cx, b, &lv, |ir, b, n| {
        let pinned = pinned(ir, cx, b, &lv, n);
        let other = b.op(ir, Op::LogicalNot, a.bool_, vec![id(pinned)]);
        let mo = b.begin_if(ir, other);
        let dp = b.elem(ir, a.p_dispatch, lv.disp_now, n);
        zero_launch(ir, cx, b, dp);
        b.end_if(mo);
    });
    let m0 = b.begin_if(ir, l0);
    advance_pin(ir, cx, b, push);
    b.end_if(m0);
    b.end_if(m);
}

/// The finisher's Workgroup variables its invocations count in.
struct Shared {
    /// The next level's workgroups launched so far.
    total: Word,
    /// Status bits the launches raised.
    raised: Word,
    /// Nonzero once `total` passed `MAX_LEVEL_WORKGROUPS` (or wrapped).
    over: Word,
}

/// After launches that together pass `MAX_LEVEL_WORKGROUPS`: slot `n`'s
/// next launch (mesh nodes' aside, which are not counted) runs no
/// workgroups, and its drop is reported.
fn drop_launch(ir: &mut Ir, cx: &Ctx, b: &mut Body, lv: &Level, n: Word, words: Word, sh: &Shared) {
    let a = cx.abi;
    let u = a.u32;
    let zero = ir.c_u32(0);
    let sp = b.elem(ir, a.p_schedule, lv.scheds, n);
    let flags = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_FLAGS);
    let mesh_bit = ir.c_u32(SCHEDULE_FLAG_MESH);
    let mesh = b.bin(ir, Op::BitwiseAnd, u, flags, mesh_bit);
    let counted = b.bin(ir, Op::IEqual, a.bool_, mesh, zero);
    let dp = b.elem(ir, a.p_dispatch, lv.disp_next, n);
    let groups = b.load_field(ir, &a, a.s_dispatch(), dp, f::D_WORKGROUP_COUNT);
    let some = b.bin(ir, Op::INotEqual, a.bool_, groups, zero);
    let dropped = b.bin(ir, Op::LogicalAnd, a.bool_, counted, some);
    let m = b.begin_if_rare(ir, dropped);
    zero_launch(ir, cx, b, dp);
    let rp = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_RECORD_COUNT);
    b.store(rp, zero, 4);
    let bit = ir.c_u32(STATUS_LEVEL_WORKGROUPS);
    let wg_scope = ir.c_u32(spirv::Scope::Workgroup as u32);
    b.op(ir, Op::AtomicOr, u, vec![id(sh.raised), id(wg_scope), id(zero), id(bit)]);
    let yes = ir.c_bool(true);
    let together = ir.c_u32(2);
    report_drop(ir, cx, b, words, yes, [n, lv.next_level], [groups, zero, together]);
    b.end_if(m);
}

/// Whether slot `n` is a pinned node (`SCHEDULE_FLAG_PINNED`).
fn pinned(ir: &mut Ir, cx: &Ctx, b: &mut Body, lv: &Level, n: Word) -> Word {
    let a = cx.abi;
    let sp = b.elem(ir, a.p_schedule, lv.scheds, n);
    let flags = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_FLAGS);
    let bit = ir.c_u32(SCHEDULE_FLAG_PINNED);
    let set = b.bin(ir, Op::BitwiseAnd, a.u32, flags, bit);
    let zero = ir.c_u32(0);
    b.bin(ir, Op::INotEqual, a.bool_, set, zero)
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

/// Step 2 for slot `n`: its `NodeDispatch` for the next level.
#[allow(clippy::too_many_arguments)]
fn next_launch(ir: &mut Ir, cx: &Ctx, b: &mut Body, lv: &Level, n: Word, fatal: Word, words: Word, sh: &Shared) {
    let a = cx.abi;
    let u = a.u32;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let sp = b.elem(ir, a.p_schedule, lv.scheds, n);
    let share = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_SHARE_BASE);
    let shares = b.bin(ir, Op::INotEqual, a.bool_, share, zero);
    let base = b.bin(ir, Op::ISub, u, share, one);
    let src = b.select(ir, u, shares, base, n);
    let flags = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_FLAGS);
    let pin_bit = ir.c_u32(SCHEDULE_FLAG_PINNED);
    let pinned = b.bin(ir, Op::BitwiseAnd, u, flags, pin_bit);
    let pinned = b.bin(ir, Op::INotEqual, a.bool_, pinned, zero);
    let ranks = b.select(ir, a.u64, pinned, lv.ranks0, lv.ranks_now);
    let rp = runtime::counter(ir, &a, b, ranks, src, false);
    let records = b.load(ir, u, rp, 4);
    let grids = b.select(ir, a.u64, pinned, lv.grids0, lv.grids_now);
    let (held, uniform) = slot_groups(ir, cx, b, sp, records, grids, src);
    let groups = b.select(ir, u, fatal, zero, held.groups);
    let (_, launched) = split_groups(ir, cx, b, groups);
    // Mesh nodes are drawn, not launched: their workgroups never count done.
    let mesh_bit = ir.c_u32(SCHEDULE_FLAG_MESH);
    let mesh = b.bin(ir, Op::BitwiseAnd, u, flags, mesh_bit);
    let mesh = b.bin(ir, Op::INotEqual, a.bool_, mesh, zero);
    let launched = b.select(ir, u, mesh, zero, launched);
    // Its first number among the next level's workgroups; a total that
    // passes `MAX_LEVEL_WORKGROUPS` (or wraps) marks the level.
    let (wg_scope, relaxed) = (ir.c_u32(spirv::Scope::Workgroup as u32), ir.c_u32(0));
    let first = b.op(ir, Op::AtomicIAdd, u, vec![id(sh.total), id(wg_scope), id(relaxed), id(launched)]);
    let end = b.bin(ir, Op::IAdd, u, first, launched);
    let wrapped = b.bin(ir, Op::ULessThan, a.bool_, end, first);
    let most = ir.c_u32(MAX_LEVEL_WORKGROUPS);
    let past = b.bin(ir, Op::UGreaterThan, a.bool_, end, most);
    let past = b.bin(ir, Op::LogicalOr, a.bool_, past, wrapped);
    let mo = b.begin_if_rare(ir, past);
    b.op(ir, Op::AtomicOr, u, vec![id(sh.over), id(wg_scope), id(relaxed), id(one)]);
    b.end_if(mo);
    let (split, _) = split_groups(ir, cx, b, groups);
    let alive = b.op(ir, Op::LogicalNot, a.bool_, vec![id(fatal)]);
    let dropped = b.bin(ir, Op::LogicalAnd, a.bool_, held.over, alive);
    let gone = b.bin(ir, Op::LogicalOr, a.bool_, held.over, fatal);
    let records = b.select(ir, u, gone, zero, records);
    let md = b.begin_if_rare(ir, dropped);
    let bit = ir.c_u32(STATUS_LEVEL_WORKGROUPS);
    b.op(ir, Op::AtomicOr, u, vec![id(sh.raised), id(wg_scope), id(relaxed), id(bit)]);
    report_drop(ir, cx, b, words, dropped, [n, lv.next_level], held.counted);
    b.end_if(md);
    // A pinned node's dispatch: drawn after the last level, from parity 1's table.
    let table = b.select(ir, a.u64, pinned, lv.disp1, lv.disp_next_addr);
    let table = b.addr_ptr(ir, a.p_dispatch, table);
    let dp = b.elem(ir, a.p_dispatch, table, n);
    let (framed, pinned_mode) = (ir.c_u32(RECORDS_FRAMED), ir.c_u32(RECORDS_PINNED));
    let mode = b.select(ir, u, pinned, pinned_mode, framed);
    let next = NextLaunch { split, groups, records, mode, key: src, words, starts: uniform, numbers: None };
    write_launch(ir, cx, b, dp, &next);
    let fp = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_WORKGROUP_BASE);
    b.store(fp, first, 4);
}
/// Step 2's workgroups of slot `n` (schedule at `sp`) from its `records`
/// and its grid counter in `grids` (of source `src`), counted in 64 bits:
/// (the workgroups held to `MAX_LEVEL_WORKGROUPS`, `NodeDispatch::starts`).
#[allow(clippy::too_many_arguments)]
fn slot_groups(ir: &mut Ir, cx: &Ctx, b: &mut Body, sp: Word, records: Word, grids: Word, src: Word) -> (Held, Word) {
    let a = cx.abi;
    let u = a.u32;
    let gp = runtime::counter(ir, &a, b, grids, src, true);
    let grid = b.load(ir, a.u64, gp, 8);
    let mp = runtime::grid_max(ir, &a, b, grids, src);
    let largest = b.load(ir, u, mp, 4);
    let uniform = uniform_grid(ir, cx, b, grid, largest);
    let c32 = ir.c_u32(32);
    let dyn_groups = b.bin(ir, Op::ShiftRightLogical, a.u64, grid, c32);
    let marker = ir.c_u32(GRID_PAST_LEVEL);
    let past = b.bin(ir, Op::IEqual, a.bool_, largest, marker);
    let mode = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_MODE);
    let per = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_PER_WORKGROUP);
    let statics = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_STATIC_GROUPS);
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let per_is0 = b.bin(ir, Op::IEqual, a.bool_, per, zero);
    let per = b.select(ir, u, per_is0, one, per);
    // Rounded up without an overflowing sum, in 32 bits (a 64-bit
    // division is a long emulated sequence on GPUs).
    let whole = b.bin(ir, Op::UDiv, u, records, per);
    let rest = b.bin(ir, Op::UMod, u, records, per);
    let partial = b.bin(ir, Op::INotEqual, a.bool_, rest, zero);
    let partial = b.select(ir, u, partial, one, zero);
    let batched = b.bin(ir, Op::IAdd, u, whole, partial);
    let wide = |ir: &mut Ir, b: &mut Body, v: Word| b.op(ir, Op::UConvert, a.u64, vec![id(v)]);
    let batched = wide(ir, b, batched);
    let (records, statics) = (wide(ir, b, records), wide(ir, b, statics));
    let static_groups = b.bin(ir, Op::IMul, a.u64, records, statics);
    let (m_static, m_dyn) = (ir.c_u32(SCHEDULE_STATIC), ir.c_u32(SCHEDULE_DYNAMIC));
    let is_static = b.bin(ir, Op::IEqual, a.bool_, mode, m_static);
    let is_dyn = b.bin(ir, Op::IEqual, a.bool_, mode, m_dyn);
    let groups = b.select(ir, a.u64, is_dyn, dyn_groups, batched);
    let groups = b.select(ir, a.u64, is_static, static_groups, groups);
    let past = b.bin(ir, Op::LogicalAnd, a.bool_, is_dyn, past);
    (held_to_level(ir, cx, b, groups, Some(past)), uniform)
}

/// Step 3 for slot `n`: its counters of this level back to zero (every slot
/// has been read by now, sharers' bases included; a pinned node's only
/// when nothing comes next), the next level's total workgroups into its
/// next `NodeDispatch`.
fn clear_slot(ir: &mut Ir, cx: &Ctx, b: &mut Body, lv: &Level, n: Word, launched: Word) {
    let a = cx.abi;
    let zero = ir.c_u32(0);
    let zero64 = ir.c_u64(0);
    let pinned = pinned(ir, cx, b, lv, n);
    let last = b.bin(ir, Op::IEqual, a.bool_, launched, zero);
    let ranks = b.select(ir, a.u64, pinned, lv.ranks0, lv.ranks_now);
    let counted = b.op(ir, Op::LogicalNot, a.bool_, vec![id(pinned)]);
    let clears = b.bin(ir, Op::LogicalOr, a.bool_, counted, last);
    let grids = b.select(ir, a.u64, pinned, lv.grids0, lv.grids_now);
    let mc = b.begin_if(ir, clears);
    let rp = runtime::counter(ir, &a, b, ranks, n, false);
    b.store(rp, zero, 4);
    let gp = runtime::counter(ir, &a, b, grids, n, true);
    b.store(gp, zero64, 8);
    let mp = runtime::grid_max(ir, &a, b, grids, n);
    b.store(mp, zero, 4);
    b.end_if(mc);
    let dp = b.elem(ir, a.p_dispatch, lv.disp_next, n);
    let lp = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_LEVEL_WORKGROUPS);
    b.store(lp, launched, 4);
}
