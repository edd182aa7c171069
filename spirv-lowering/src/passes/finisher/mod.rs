//! The level finisher: what used to be a meta pass between two levels, run
//! by the last workgroup of a level (see `epilogue` and the execution model
//! in `abi`).
//!
//! Matches: nothing. Emits `node_level_finish()`, which every invocation of
//! that workgroup calls, in uniform control flow. In named steps:
//! 1. **status**: the bits this level raised, with those before it (the
//!    `status_in` of level 0's dispatch, or `GraphContext::carried`); after a
//!    fatal status (records lost) nothing more is launched;
//! 2. **next launches**: for every node slot that can be launched next, the
//!    next level's `NodeDispatch` from the rank counter of the records
//!    enqueued for it at this level (its `SharesInputWithAMDX` base's, for a
//!    sharer): record count, workgroups per `NodeSchedule` (a dynamic grid's
//!    from the grid counter), `vkCmdDispatchIndirect` arguments split over x
//!    and y, framed records, the status words' address passed on, its first
//!    number among the next level's workgroups (a mesh node's workgroups
//!    are drawn, never counted) and the next level's total; a launch whose
//!    workgroups pass `abi::MAX_LEVEL_WORKGROUPS` is dropped (no
//!    workgroups, no records) and raises `STATUS_LEVEL_WORKGROUPS`, and
//!    when the launches pass it only together (their total, which cannot
//!    wrap, is checked after they are written, off their path) they are all
//!    dropped;
//! 3. **clear**: this level's rank and grid counters, status and done
//!    counter go back to zero (so a dispatch ends with all of them zero and
//!    the next needs no transfer), the tag advances, and a nonzero status
//!    after this level goes to the host's words (after this level, and
//!    final);
//! 4. **nothing next**: when nothing is launched next, or only a level
//!    that counts nothing (`abi::LEVEL_NEXT_UNCOUNTED`: the tag then
//!    advances by two in step 3), this parity's arguments, which the level
//!    after next would otherwise reuse (no finisher runs for an empty
//!    level), are zeroed, and the pin advances.
//!
//! Two forms: with the graph's tables and few slots to launch (`unrolled`),
//! invocation 0 does every step in straight-line code from the slots'
//! schedules as constants, every counter loaded at once; otherwise
//! (`looped`) the invocations stride over all node slots, reading the
//! schedules from scratch.
//!
//! Afterwards the module has the function; the prologue pass calls it.

mod looped;
mod unrolled;

use super::context::Ctx;
use super::fault::{self, Fault};
use super::status::final_word;
use crate::abi::{FAULT_LEVEL_WORKGROUPS, MAX_LEVEL_WORKGROUPS, NO_NODE, STATUS_FATAL, STATUS_WORDS};
use crate::codegen::{f, Body};
use crate::ir::{id, inst, Ir};
use crate::runtime::{self, ctx_parity_ptr, Push};
use spirv::{Op, Word};

/// `maxComputeWorkGroupCount` per dimension that every device has.
const MAX_GROUPS_X: u32 = 65535;
/// The most slots the unrolled form handles (its code grows with them).
const MAX_UNROLLED: usize = 8;

/// Whether the finisher lowered with `opts` is the unrolled form, which
/// invocation 0 runs alone (the looped form needs the whole workgroup).
pub fn one_invocation(opts: &crate::options::LowerOptions) -> bool {
    unrolled_tables(opts).is_some()
}

/// The tables the unrolled form is lowered with, where it is the one.
fn unrolled_tables(opts: &crate::options::LowerOptions) -> Option<&crate::options::GraphTables> {
    opts.tables.as_ref().filter(|t| t.launched.len() <= MAX_UNROLLED)
}

pub fn run(ir: &mut Ir, cx: &Ctx, workgroup_size: u32) -> Word {
    let a = cx.abi;
    let (fid, _, func, mut b) = runtime::begin_fn(ir, a.void, &[]);
    let push = runtime::push(ir, &a, &cx.push, &mut b);
    match unrolled_tables(cx.opts) {
        Some(tables) => unrolled::emit(ir, cx, &mut b, &push, tables),
        None => looped::emit(ir, cx, &mut b, &push, workgroup_size),
    }
    b.end(inst(Op::Return, None, None, vec![]), None);
    runtime::finish_fn(ir, func, b, "node_level_finish");
    fid
}

/// Step 1: (the dispatch's status after this level, `bool` fatal).
fn status(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push) -> (Word, Word) {
    let a = cx.abi;
    let u = a.u32;
    let ctx = push.ctx;
    let zero = ir.c_u32(0);
    let mine = ctx_parity_ptr(ir, &a, b, ctx, f::C_STATUS, push.odd, false);
    let raised = b.atomic_load(ir, u, mine);
    let first = b.bin(ir, Op::IEqual, a.bool_, push.level, zero);
    let given = b.load_field(ir, &a, a.s_dispatch(), push.dispatch, f::D_STATUS_IN);
    let carried = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_CARRIED);
    let before = b.select(ir, u, first, given, carried);
    let status = b.bin(ir, Op::BitwiseOr, u, before, raised);
    let fatal_bits = ir.c_u32(STATUS_FATAL);
    let fatal = b.bin(ir, Op::BitwiseAnd, u, status, fatal_bits);
    (status, b.bin(ir, Op::INotEqual, a.bool_, fatal, zero))
}

/// The `vkCmdDispatchIndirect` arguments of `groups` workgroups: at most
/// `MAX_GROUPS_X` a dimension, fewer than y groups wasted. Returns (the
/// `uvec3`, the workgroups it launches).
fn split_groups(ir: &mut Ir, cx: &Ctx, b: &mut Body, groups: Word) -> (Word, Word) {
    let a = cx.abi;
    let u = a.u32;
    let one = ir.c_u32(1);
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
    let xy = b.bin(ir, Op::IMul, u, x, y);
    (split, b.select(ir, u, small, groups, xy))
}

/// One launch held to `MAX_LEVEL_WORKGROUPS` (see [`held_to_level`]).
#[derive(Clone, Copy)]
struct Held {
    /// `bool`: dropped.
    over: Word,
    /// `u32` workgroups, 0 when dropped.
    groups: Word,
    /// The fault values of a drop (`abi::FAULT_LEVEL_WORKGROUPS`): the
    /// count's low and high words, and whether the enqueues saw it pass.
    counted: [Word; 3],
}

/// Step 2's limit on one launch: its workgroups `groups` (`u64`) against
/// `MAX_LEVEL_WORKGROUPS` (or `past`: the enqueues saw them pass it).
fn held_to_level(ir: &mut Ir, cx: &Ctx, b: &mut Body, groups: Word, past: Option<Word>) -> Held {
    let a = cx.abi;
    let most = ir.c_u64(u64::from(MAX_LEVEL_WORKGROUPS));
    let over = b.bin(ir, Op::UGreaterThan, a.bool_, groups, most);
    let narrow = b.op(ir, Op::UConvert, a.u32, vec![id(groups)]);
    let c32 = ir.c_u32(32);
    let hi = b.bin(ir, Op::ShiftRightLogical, a.u64, groups, c32);
    let hi = b.op(ir, Op::UConvert, a.u32, vec![id(hi)]);
    held(ir, cx, b, [narrow, hi], over, past)
}

/// [`Held`] of a launch of `lo | hi << 32` workgroups that is `over`
/// `MAX_LEVEL_WORKGROUPS` (or `past`: the enqueues saw it pass).
fn held(ir: &mut Ir, cx: &Ctx, b: &mut Body, [lo, hi]: [Word; 2], over: Word, past: Option<Word>) -> Held {
    let a = cx.abi;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let (over, seen) = match past {
        Some(past) => (b.bin(ir, Op::LogicalOr, a.bool_, over, past), b.select(ir, a.u32, past, one, zero)),
        None => (over, zero),
    };
    Held { over, groups: b.select(ir, a.u32, over, zero, lo), counted: [lo, hi, seen] }
}

/// Records the fault of a launch of `node` dropped at level `next` (`counted`:
/// see [`Held`]; 2 as its third word: together with the level's other
/// launches), at the status words `words`.
fn report_drop(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    words: Word,
    dropped: Word,
    [node, next]: [Word; 2],
    counted: [Word; 3],
) {
    let fault = Fault {
        kind: ir.c_u32(FAULT_LEVEL_WORKGROUPS),
        node,
        level: next,
        output: ir.c_u32(NO_NODE),
        values: [counted[0], counted[1], counted[2], ir.c_u32(0)],
    };
    fault::record_at(ir, cx, b, words, dropped, &fault);
}

/// The level after the one `push` runs.
fn next_level(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push) -> Word {
    let one = ir.c_u32(1);
    b.bin(ir, Op::IAdd, cx.abi.u32, push.level, one)
}

/// Step 2's words of one next launch (see `write_launch`).
struct NextLaunch {
    /// The `uvec3` of `vkCmdDispatchIndirect` arguments.
    split: Word,
    groups: Word,
    records: Word,
    /// `RECORDS_FRAMED` or `RECORDS_PINNED`.
    mode: Word,
    key: Word,
    /// The host's status words (`u64` address).
    words: Word,
    /// `NodeDispatch::starts` (`u64`).
    starts: Word,
    /// Its first number among the next level's workgroups and their total,
    /// where known by now.
    numbers: Option<[Word; 2]>,
}

/// Step 2: writes `l` into the `NodeDispatch` at `dp`.
fn write_launch(ir: &mut Ir, cx: &Ctx, b: &mut Body, dp: Word, l: &NextLaunch) {
    let a = cx.abi;
    let zero = ir.c_u32(0);
    let ip = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_INDIRECT);
    b.store(ip, l.split, 4);
    let mut words = vec![
        (f::D_WORKGROUP_COUNT, l.groups),
        (f::D_RECORD_COUNT, l.records),
        (f::D_MODE, l.mode),
        (f::D_KEY_NODE, l.key),
        (f::D_STATUS_IN, zero),
    ];
    if let Some([first, total]) = l.numbers {
        words.extend([(f::D_WORKGROUP_BASE, first), (f::D_LEVEL_WORKGROUPS, total)]);
    }
    for (field, v) in words {
        let p = b.field_ptr(ir, &a, a.s_dispatch(), dp, field);
        b.store(p, v, 4);
    }
    for (field, v) in [(f::D_STATUS, l.words), (f::D_STARTS, l.starts)] {
        let p = b.field_ptr(ir, &a, a.s_dispatch(), dp, field);
        b.store(p, v, 8);
    }
}

/// Step 2 for a dynamic grid: `NodeDispatch::starts` (`u64`), the
/// workgroups of each record's grid when all are equal, else 0. From the
/// level's grid counter (entries low, workgroups high) and its largest
/// grid: equal when the largest times the entries is the workgroups.
fn uniform_grid(ir: &mut Ir, cx: &Ctx, b: &mut Body, grid: Word, largest: Word) -> Word {
    let a = cx.abi;
    let c32 = ir.c_u32(32);
    let lo_mask = ir.c_u64(u64::from(u32::MAX));
    let entries = b.bin(ir, Op::BitwiseAnd, a.u64, grid, lo_mask);
    let groups = b.bin(ir, Op::ShiftRightLogical, a.u64, grid, c32);
    let largest = b.op(ir, Op::UConvert, a.u64, vec![id(largest)]);
    let all = b.bin(ir, Op::IMul, a.u64, largest, entries);
    let equal = b.bin(ir, Op::IEqual, a.bool_, all, groups);
    let zero64 = ir.c_u64(0);
    b.select(ir, a.u64, equal, largest, zero64)
}

/// Step 3, once (invocation 0): status, done counter, tag, host words.
fn close_level(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, status: Word, words: Word) {
    let a = cx.abi;
    let u = a.u32;
    let ctx = push.ctx;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let sp = ctx_parity_ptr(ir, &a, b, ctx, f::C_STATUS, push.odd, false);
    b.store(sp, zero, 4);
    let cp = b.field_ptr(ir, &a, a.s_ctx(), ctx, f::C_CARRIED);
    b.store(cp, status, 4);
    let dp = ctx_parity_ptr(ir, &a, b, ctx, f::C_DONE, push.odd, false);
    b.store(dp, zero, 4);
    let tag_p = b.field_ptr(ir, &a, a.s_ctx(), ctx, f::C_TAG);
    // The tag loaded at the kernel's start: no load on the way out.
    let tag = cx.vars.ctx.tag(ir, &a, b);
    // Past the next level too where that one counts nothing (see
    // `abi::LEVEL_NEXT_UNCOUNTED`).
    let two = ir.c_u32(2);
    let step = b.select(ir, u, push.next_uncounted, two, one);
    let tag1 = b.bin(ir, Op::IAdd, u, tag, step);
    b.store(tag_p, tag1, 4);
    // The host's words start zero (and are cleared when read): a level that
    // raised nothing writes nothing there, so no level waits on a write
    // across the bus to host memory before its end.
    let zero64 = ir.c_u64(0);
    let has = b.bin(ir, Op::INotEqual, a.bool_, words, zero64);
    let raised = b.bin(ir, Op::INotEqual, a.bool_, status, zero);
    let has = b.bin(ir, Op::LogicalAnd, a.bool_, has, raised);
    let m = b.begin_if(ir, has);
    let wp = b.addr_ptr(ir, a.p_u32, words);
    let after = b.bin(ir, Op::IAdd, u, push.level, one);
    let last = ir.c_u32(STATUS_WORDS - 1);
    let inside = b.bin(ir, Op::ULessThan, a.bool_, after, last);
    let mi = b.begin_if(ir, inside);
    let p = b.elem(ir, a.p_u32, wp, after);
    b.store(p, status, 4);
    b.end_if(mi);
    // ORed: a payload index fault may reach the final word from a
    // workgroup still running (`status::report_bounds`).
    let p = final_word(ir, cx, b, words);
    b.atomic(ir, Op::AtomicOr, u, p, status);
    b.end_if(m);
}

/// Step 4, once: the dispatch ends, the next one pins its records with
/// the next `GraphContext::pinned` (see `abi`'s "Mesh nodes drawn once").
fn advance_pin(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push) {
    let a = cx.abi;
    let one = ir.c_u32(1);
    let p = b.field_ptr(ir, &a, a.s_ctx(), push.ctx, f::C_PINNED);
    // Loaded at the kernel's start (only a dispatch's last finisher changes
    // it): no round trip at the dispatch's end.
    let pinned = cx.vars.ctx.pinned(ir, &a, b);
    let next = b.bin(ir, Op::IAdd, a.u32, pinned, one);
    b.store(p, next, 4);
}

/// Step 4 for the `NodeDispatch` at `dp`: no workgroups.
fn zero_launch(ir: &mut Ir, cx: &Ctx, b: &mut Body, dp: Word) {
    let a = cx.abi;
    let zero = ir.c_u32(0);
    let zeros = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(zero), id(zero), id(zero)]);
    let ip = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_INDIRECT);
    b.store(ip, zeros, 4);
    let wp = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_WORKGROUP_COUNT);
    b.store(wp, zero, 4);
}
