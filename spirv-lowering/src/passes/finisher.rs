//! The level finisher: what used to be a meta pass between two levels, run
//! by the last workgroup of a level (see `prologue`'s epilogue and the
//! execution model in `abi`).
//!
//! Matches: nothing. Emits `node_level_finish()`, which every invocation of
//! that workgroup calls, in uniform control flow. For every node slot (the
//! invocations stride over them) it turns the counter of records enqueued at
//! this level (its `SharesInputWithAMDX` base's, for a sharer) into the next
//! level's `NodeDispatch` (record count, workgroups per `NodeSchedule`,
//! `vkCmdDispatchIndirect` arguments split over x and y, indexed records from
//! this level's ring half) and clears the counter the next level counts
//! with (a mesh node's workgroups are left out of the launched total: they
//! are drawn, and never count a level done); then it records the workgroups launched next, clears the next
//! level's done counter and ring top, advances the record-index tag and
//! leaves the status after this level for the host. When nothing is launched
//! next, it also zeroes this parity's arguments, which the level after next
//! would otherwise reuse (no finisher runs for an empty level). After a fatal
//! status (records lost) nothing more is launched.
//! Afterwards the module has the function; the prologue pass calls it.

use super::Ctx;
use crate::abi::{RECORDS_INDEXED, SCHEDULE_DYNAMIC, SCHEDULE_FLAG_MESH, SCHEDULE_STATIC, STATUS_FATAL};
use crate::codegen::{f, Body};
use crate::ir::{id, inst, Ir};
use crate::runtime::{self, ctx_parity_ptr};
use spirv::{Op, StorageClass, Word};

/// `maxComputeWorkGroupCount` per dimension that every device has.
const MAX_GROUPS_X: u32 = 65535;

pub fn run(ir: &mut Ir, cx: &Ctx, workgroup_size: u32) -> Word {
    let a = cx.abi;
    let u = a.u32;
    let (fid, _, func, mut b) = runtime::begin_fn(ir, a.void, &[]);
    let push = runtime::push(ir, &a, &cx.push, &mut b);
    let ctx = push.ctx;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let total = ir.global_var(StorageClass::Workgroup, u, "node_finish_launched");
    let empty = ir.global_var(StorageClass::Workgroup, u, "node_finish_empty");
    let lidx = b.op(ir, Op::Load, u, vec![id(cx.real.lidx)]);
    let l0 = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    let m = b.begin_if(ir, l0);
    b.store_plain(total, zero);
    b.end_if(m);
    b.workgroup_barrier(ir);

    let node_count = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_NODE_COUNT);
    let status_p = b.field_ptr(ir, &a, a.s_ctx(), ctx, f::C_STATUS);
    let status = b.atomic_load(ir, u, status_p);
    let fatal_bits = ir.c_u32(STATUS_FATAL);
    let fatal = b.bin(ir, Op::BitwiseAnd, u, status, fatal_bits);
    let fatal = b.bin(ir, Op::INotEqual, a.bool_, fatal, zero);
    let ptr = |ir: &mut Ir, b: &mut Body, base: u32, other: bool| {
        let p = ctx_parity_ptr(ir, &a, b, ctx, base, push.odd, other);
        b.load(ir, a.u64, p, 8)
    };
    let counts_now = ptr(ir, &mut b, f::C_COUNTS, false);
    let counts_next = ptr(ir, &mut b, f::C_COUNTS, true);
    let disp_now = ptr(ir, &mut b, f::C_DISPATCHES, false);
    let disp_next = ptr(ir, &mut b, f::C_DISPATCHES, true);
    let ring_now = ptr(ir, &mut b, f::C_RING, false);
    let sched_addr = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_SCHEDULES);
    let scheds = b.addr_ptr(ir, a.p_schedule, sched_addr);
    let counts_now = b.addr_ptr(ir, a.p_u64, counts_now);
    let counts_next = b.addr_ptr(ir, a.p_u64, counts_next);
    let disp_now = b.addr_ptr(ir, a.p_dispatch, disp_now);
    let disp_next = b.addr_ptr(ir, a.p_dispatch, disp_next);
    let step = ir.c_u32(workgroup_size.max(1));

    // Every node's next launch.
    let nv = b.local(ir, u, lidx);
    let lp = b.begin_loop(ir);
    let n = b.op(ir, Op::Load, u, vec![id(nv)]);
    let more = b.bin(ir, Op::ULessThan, a.bool_, n, node_count);
    b.loop_test(&lp, more);
    let sp = b.elem(ir, a.p_schedule, scheds, n);
    let share = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_SHARE_BASE);
    let shares = b.bin(ir, Op::INotEqual, a.bool_, share, zero);
    let base = b.bin(ir, Op::ISub, u, share, one);
    let src = b.select(ir, u, shares, base, n);
    let cp = b.elem(ir, a.p_u64, counts_now, src);
    let c = b.atomic_load(ir, a.u64, cp);
    let records = b.op(ir, Op::UConvert, u, vec![id(c)]);
    let c32 = ir.c_u64(32);
    let hi = b.bin(ir, Op::ShiftRightLogical, a.u64, c, c32);
    let dyn_groups = b.op(ir, Op::UConvert, u, vec![id(hi)]);
    let mode = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_MODE);
    let per = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_PER_WORKGROUP);
    let statics = b.load_field(ir, &a, a.s_schedule(), sp, f::SC_STATIC_GROUPS);
    let batched_num = b.bin(ir, Op::IAdd, u, records, per);
    let batched_num = b.bin(ir, Op::ISub, u, batched_num, one);
    let per_safe = {
        let is0 = b.bin(ir, Op::IEqual, a.bool_, per, zero);
        b.select(ir, u, is0, one, per)
    };
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
    let dp = b.elem(ir, a.p_dispatch, disp_next, n);
    let indexed = ir.c_u32(RECORDS_INDEXED);
    let ip = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_INDIRECT);
    b.store(ip, split, 4);
    for (field, v) in
        [(f::D_WORKGROUP_COUNT, groups), (f::D_RECORD_COUNT, records), (f::D_MODE, indexed), (f::D_KEY_NODE, src)]
    {
        let p = b.field_ptr(ir, &a, a.s_dispatch(), dp, field);
        b.store(p, v, 4);
    }
    let bp = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_INPUT_BASE);
    b.store(bp, ring_now, 8);
    let np = b.elem(ir, a.p_u64, counts_next, n);
    let zero64 = ir.c_u64(0);
    b.store(np, zero64, 8);
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
    let wb = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_WORKGROUP_BASE);
    b.store(wb, first, 4);
    let n1 = b.bin(ir, Op::IAdd, u, n, step);
    b.store_plain(nv, n1);
    b.end_loop(&lp);
    b.workgroup_barrier(ir);

    // The next level's counters, the tag, the status after this level.
    let m = b.begin_if(ir, l0);
    let t = b.op(ir, Op::Load, u, vec![id(total)]);
    let lp_next = ctx_parity_ptr(ir, &a, &mut b, ctx, f::C_LAUNCHED, push.odd, true);
    b.store(lp_next, t, 4);
    let dn = ctx_parity_ptr(ir, &a, &mut b, ctx, f::C_DONE, push.odd, true);
    b.store(dn, zero, 4);
    let rt = ctx_parity_ptr(ir, &a, &mut b, ctx, f::C_RING_TOP, push.odd, true);
    b.store(rt, zero, 4);
    let tag_p = b.field_ptr(ir, &a, a.s_ctx(), ctx, f::C_TAG);
    let tag = b.load(ir, u, tag_p, 4);
    let tag1 = b.bin(ir, Op::IAdd, u, tag, one);
    b.store(tag_p, tag1, 4);
    let words = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_LEVEL_STATUS);
    let words = b.addr_ptr(ir, a.p_u32, words);
    let at = b.bin(ir, Op::IAdd, u, push.level, one);
    let wp = b.elem(ir, a.p_u32, words, at);
    let status = b.atomic_load(ir, u, status_p);
    b.store(wp, status, 4);
    let none = b.bin(ir, Op::IEqual, a.bool_, t, zero);
    let flag = b.select(ir, u, none, one, zero);
    b.store_plain(empty, flag);
    b.end_if(m);
    b.workgroup_barrier(ir);

    // Nothing launched next: the level after next must not reuse this
    // parity's arguments.
    let flag = b.op(ir, Op::Load, u, vec![id(empty)]);
    let none = b.bin(ir, Op::INotEqual, a.bool_, flag, zero);
    let m = b.begin_if(ir, none);
    let nv2 = b.local(ir, u, lidx);
    let lp = b.begin_loop(ir);
    let n = b.op(ir, Op::Load, u, vec![id(nv2)]);
    let more = b.bin(ir, Op::ULessThan, a.bool_, n, node_count);
    b.loop_test(&lp, more);
    let dp = b.elem(ir, a.p_dispatch, disp_now, n);
    let zeros = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(zero), id(zero), id(zero)]);
    let ip = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_INDIRECT);
    b.store(ip, zeros, 4);
    let wp = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_WORKGROUP_COUNT);
    b.store(wp, zero, 4);
    let n1 = b.bin(ir, Op::IAdd, u, n, step);
    b.store_plain(nv2, n1);
    b.end_loop(&lp);
    b.end_if(m);
    b.end(inst(Op::Return, None, None, vec![]), None);
    runtime::finish_fn(ir, func, b, "node_level_finish");
    fid
}
