//! `OpEnqueueNodePayloadsAMDX`, for the `node_ops` pass. Records are placed
//! by rank, and counted, when they are allocated, so enqueueing is a no-op,
//! except for a target that takes its grid from the payload: its records'
//! grids are only written by now. `node_output{k}_enqueue(addr)` then adds
//! up the grids of the allocation's records, takes their entries and first
//! workgroups with one 64-bit atomic on the target's grid counter (entries
//! in the low word, workgroups in the high word, so both come in the same
//! order), and writes each record's [`GridEntry`](crate::abi::GridEntry) in
//! the target's entry frames. One invocation does it for an allocation of
//! Workgroup visibility.
//!
//! Each record's grid is checked first, in 64-bit arithmetic, against the
//! target's `NodeSchedule::max_grid` and `abi::MAX_RECORD_WORKGROUPS`: a
//! record past them is dropped (it gets no workgroups: its entry covers
//! none, as an empty grid's does) and raises `STATUS_GRID_LIMIT`. An
//! allocation that takes the target's workgroups at the level past
//! `abi::MAX_LEVEL_WORKGROUPS` marks the counter's largest-grid word
//! (`abi::GRID_PAST_LEVEL`): the finisher drops the level's records of the
//! target. These few operations act on values already in registers.

use super::decode::decode;
use super::helpers::{self, claim_or_raise, finish_fn, AllocCache, Helpers};
use crate::abi::{
    FAULT_GRID, GRID_PAST_LEVEL, MAX_LEVEL_WORKGROUPS, MAX_RECORD_WORKGROUPS, NO_NODE, SCHEDULE_DYNAMIC,
    STATUS_GRID_LIMIT,
};
use crate::analyze::Visibility;
use crate::codegen::{f, Body};
use crate::ir::{id, inst, Ir};
use crate::passes::context::Ctx;
use crate::passes::fault::{self, Fault};
use crate::passes::status::raise;
use crate::runtime::{self, begin_fn, frame_fn, Pool, Push};
use spirv::{Op, Word};

/// `node_output{k}_enqueue(addr)` (see the module doc).
pub(super) fn output(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, k: usize) -> Word {
    if let Some(w) = h.enqueue.get(&k) {
        return *w;
    }
    let a = cx.abi;
    let u = a.u32;
    let cache = AllocCache::get(ir, cx, h, k);
    let (fid, ps, func, mut b) = begin_fn(ir, a.void, &[a.u64]);
    let addr = ps.first().copied().unwrap_or(0);
    let push = runtime::push(ir, &a, &cx.push, &mut b);
    let load = |ir: &mut Ir, b: &mut Body, v: Word| b.op(ir, Op::Load, u, vec![id(v)]);
    let slot = load(ir, &mut b, cache.slot);
    let slot = b.local(ir, u, slot);
    let count = load(ir, &mut b, cache.count);
    let count = b.local(ir, u, count);
    let rank = load(ir, &mut b, cache.rank);
    let rank = b.local(ir, u, rank);
    let wg = load(ir, &mut b, cache.workgroup);
    let wg = b.local(ir, u, wg);
    let cached = b.op(ir, Op::Load, a.u64, vec![id(cache.addr)]);
    let hit = b.bin(ir, Op::IEqual, a.bool_, cached, addr);
    let miss = b.op(ir, Op::LogicalNot, a.bool_, vec![id(hit)]);
    let m = b.begin_if(ir, miss);
    let d = decode(ir, cx, &mut b, k, &push, addr);
    // An older allocation of the output: its visibility is the output's
    // (invocation when it uses both).
    let only_workgroup =
        cx.facts.info.outputs.get(k).is_some_and(|o| o.visibilities == [Visibility::Workgroup]) && !cx.packed;
    let wgv = ir.c_u32(u32::from(only_workgroup));
    for (var, v) in [(slot, d.slot), (count, d.count), (rank, d.rank), (wg, wgv)] {
        b.store_plain(var, v);
    }
    b.end_if(m);
    let (slot, count, rank, wg) =
        (load(ir, &mut b, slot), load(ir, &mut b, count), load(ir, &mut b, rank), load(ir, &mut b, wg));
    let zero = ir.c_u32(0);
    let inv = b.bin(ir, Op::IEqual, a.bool_, wg, zero);
    let lidx = b.op(ir, Op::Load, u, vec![id(cx.real.lidx)]);
    let l0 = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    let mine = b.bin(ir, Op::LogicalOr, a.bool_, inv, l0);
    let none = ir.c_u32(NO_NODE);
    let real = b.bin(ir, Op::INotEqual, a.bool_, slot, none);
    let some = b.bin(ir, Op::UGreaterThan, a.bool_, count, zero);
    let go = b.bin(ir, Op::LogicalAnd, a.bool_, mine, real);
    let go = b.bin(ir, Op::LogicalAnd, a.bool_, go, some);
    let m = b.begin_if(ir, go);
    let sched = schedule(ir, cx, &mut b, &push, slot);
    let mode = b.load_field(ir, &a, a.s_schedule(), sched, f::SC_MODE);
    let dyn_mode = ir.c_u32(SCHEDULE_DYNAMIC);
    let dynamic = b.bin(ir, Op::IEqual, a.bool_, mode, dyn_mode);
    let md = b.begin_if(ir, dynamic);
    let grid = GridReader::load(ir, cx, &mut b, sched);
    let pinned = helpers::pinned(cx, k);
    let first = number(ir, cx, &mut b, (&push, pinned, k), &grid, slot, addr, count);
    write_entries(ir, cx, h, &mut b, (&push, pinned), &grid, Entries { slot, addr, count, rank, first });
    b.end_if(md);
    b.end_if(m);
    b.end(inst(Op::Return, None, None, vec![]), None);
    finish_fn(h, func, b);
    ir.name(fid, &format!("node_output{k}_enqueue"));
    h.enqueue.insert(k, fid);
    fid
}

/// `PSB NodeSchedule*` of `slot`.
fn schedule(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, slot: Word) -> Word {
    let a = cx.abi;
    let sched_addr = match &cx.opts.tables {
        Some(t) => {
            let ctx_addr = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(push.ctx)]);
            let off = ir.c_u64(t.schedules);
            b.bin(ir, Op::IAdd, a.u64, ctx_addr, off)
        }
        None => b.load_field(ir, &a, a.s_ctx(), push.ctx, f::C_SCHEDULES),
    };
    let scheds = b.addr_ptr(ir, a.p_schedule, sched_addr);
    b.elem(ir, a.p_schedule, scheds, slot)
}

/// The entry number and first workgroup of the allocation's first record:
/// one 64-bit atomic adds its records and their workgroups to the target's
/// grid counter.
#[allow(clippy::too_many_arguments)]
fn number(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    (push, pinned, k): (&Push, bool, usize),
    grid: &GridReader,
    slot: Word,
    addr: Word,
    count: Word,
) -> (Word, Word) {
    let a = cx.abi;
    let u = a.u32;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let jv = b.local(ir, u, zero);
    let sum = b.local(ir, u, zero);
    let largest = b.local(ir, u, zero);
    let no = ir.c_bool(false);
    let faulty = b.local(ir, a.bool_, no);
    let bad_grid = [0; 3].map(|_| b.local(ir, u, zero));
    let lp = b.begin_loop(ir);
    let j = b.op(ir, Op::Load, u, vec![id(jv)]);
    let more = b.bin(ir, Op::ULessThan, a.bool_, j, count);
    b.loop_test(&lp, more);
    let rec = record_address(ir, cx, b, addr, j, grid.stride);
    let checked = grid.read(ir, cx, b, rec);
    let g = checked.groups;
    // The first grid past its limits, reported after the loop.
    let bad = b.op(ir, Op::LogicalNot, a.bool_, vec![id(checked.valid)]);
    let seen = b.op(ir, Op::Load, a.bool_, vec![id(faulty)]);
    let first_bad = b.op(ir, Op::LogicalNot, a.bool_, vec![id(seen)]);
    let first_bad = b.bin(ir, Op::LogicalAnd, a.bool_, bad, first_bad);
    for (&var, &dim) in bad_grid.iter().zip(&checked.dims) {
        let old = b.op(ir, Op::Load, u, vec![id(var)]);
        let v = b.select(ir, u, first_bad, dim, old);
        b.store_plain(var, v);
    }
    let any = b.bin(ir, Op::LogicalOr, a.bool_, seen, bad);
    b.store_plain(faulty, any);
    let s0 = b.op(ir, Op::Load, u, vec![id(sum)]);
    let s1 = b.bin(ir, Op::IAdd, u, s0, g);
    b.store_plain(sum, s1);
    let m0 = b.op(ir, Op::Load, u, vec![id(largest)]);
    let gt = b.bin(ir, Op::UGreaterThan, a.bool_, g, m0);
    let m1 = b.select(ir, u, gt, g, m0);
    b.store_plain(largest, m1);
    let j1 = b.bin(ir, Op::IAdd, u, j, one);
    b.store_plain(jv, j1);
    b.end_loop(&lp);
    let faulty = b.op(ir, Op::Load, a.bool_, vec![id(faulty)]);
    let limit = ir.c_u32(STATUS_GRID_LIMIT);
    let bits = b.select(ir, u, faulty, limit, zero);
    raise(ir, cx, b, push, bits);
    let dims = bad_grid.map(|var| b.op(ir, Op::Load, u, vec![id(var)]));
    let kind = ir.c_u32(FAULT_GRID);
    let report = Fault::of_node(ir, push, kind, Some(k), &dims);
    fault::record(ir, cx, b, push, faulty, &report);
    let total = b.op(ir, Op::Load, u, vec![id(sum)]);
    // A pinned target counts on at parity 0 from level to level (see `abi`).
    let known = cx.opts.tables.as_ref().map(|t| if pinned { [t.grid_counts[0]; 2] } else { t.grid_counts });
    let counts = runtime::parity_table_or_field(ir, &a, b, push, known, f::C_GRID_COUNTS, false);
    // The largest grid: whether the finisher can tell that all are equal.
    let mp = runtime::grid_max(ir, &a, b, counts, slot);
    let largest = b.op(ir, Op::Load, u, vec![id(largest)]);
    b.atomic(ir, Op::AtomicUMax, u, mp, largest);
    let cp = runtime::counter(ir, &a, b, counts, slot, true);
    let total64 = b.op(ir, Op::UConvert, a.u64, vec![id(total)]);
    let c32 = ir.c_u32(32);
    let hi = b.bin(ir, Op::ShiftLeftLogical, a.u64, total64, c32);
    let lo = b.op(ir, Op::UConvert, a.u64, vec![id(count)]);
    let add = b.bin(ir, Op::BitwiseOr, a.u64, hi, lo);
    let old = b.atomic(ir, Op::AtomicIAdd, a.u64, cp, add);
    let entry = b.op(ir, Op::UConvert, u, vec![id(old)]);
    let old_hi = b.bin(ir, Op::ShiftRightLogical, a.u64, old, c32);
    // Past what a level launches: the finisher drops the level's records
    // of the target (the word is exact until then: see `abi`).
    let end = b.bin(ir, Op::IAdd, a.u64, old_hi, total64);
    let most = ir.c_u64(u64::from(MAX_LEVEL_WORKGROUPS));
    let past = b.bin(ir, Op::UGreaterThan, a.bool_, end, most);
    let m = b.begin_if_rare(ir, past);
    let marker = ir.c_u32(GRID_PAST_LEVEL);
    b.atomic(ir, Op::AtomicUMax, u, mp, marker);
    b.end_if(m);
    (entry, b.op(ir, Op::UConvert, u, vec![id(old_hi)]))
}

/// An allocation being enqueued: its target, records, first rank, and its
/// first (entry, workgroup) from [`number`].
struct Entries {
    slot: Word,
    addr: Word,
    count: Word,
    rank: Word,
    first: (Word, Word),
}

/// Writes each record's grid entry (first workgroup, rank) in the target's
/// entry frames (namespace `node_count + slot`).
fn write_entries(
    ir: &mut Ir,
    cx: &Ctx,
    h: &mut Helpers,
    b: &mut Body,
    (push, pinned): (&Push, bool),
    grid: &GridReader,
    e: Entries,
) {
    let a = cx.abi;
    let u = a.u32;
    let pool = helpers::pool(ir, cx, b, push);
    let claim = *h.frame_claim.get_or_insert_with(|| frame_fn(ir, &a, true));
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    // Entries are read with their records: at the next level, or pinned.
    let wtag = if pinned {
        cx.vars.ctx.pin(ir, &a, b)
    } else {
        let tag = cx.vars.ctx.tag(ir, &a, b);
        b.bin(ir, Op::IAdd, u, tag, one)
    };
    let two = ir.c_u32(2);
    let nodes = b.bin(ir, Op::UDiv, u, pool.namespaces, two);
    let ns = b.bin(ir, Op::IAdd, u, nodes, e.slot);
    let (entry0, start0) = e.first;
    let jv = b.local(ir, u, zero);
    let start = b.local(ir, u, start0);
    let lp = b.begin_loop(ir);
    let j = b.op(ir, Op::Load, u, vec![id(jv)]);
    let more = b.bin(ir, Op::ULessThan, a.bool_, j, e.count);
    b.loop_test(&lp, more);
    let n = b.bin(ir, Op::IAdd, u, entry0, j);
    let s = b.op(ir, Op::Load, u, vec![id(start)]);
    let r = b.bin(ir, Op::IAdd, u, e.rank, j);
    put_entry(ir, cx, b, &pool, push, claim, [wtag, ns, n], [s, r]);
    let rec = record_address(ir, cx, b, e.addr, j, grid.stride);
    let g = grid.read(ir, cx, b, rec).groups;
    let s1 = b.bin(ir, Op::IAdd, u, s, g);
    b.store_plain(start, s1);
    let j1 = b.bin(ir, Op::IAdd, u, j, one);
    b.store_plain(jv, j1);
    b.end_loop(&lp);
}

/// Entry `n` of namespace `ns` (frames tagged `wtag`) := (start, rank).
#[allow(clippy::too_many_arguments)]
fn put_entry(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    pool: &Pool,
    push: &Push,
    claim: Word,
    [wtag, ns, n]: [Word; 3],
    values: [Word; 2],
) {
    let a = cx.abi;
    let u = a.u32;
    let fk = b.bin(ir, Op::UDiv, u, n, pool.entries_per_frame);
    let within = b.bin(ir, Op::UMod, u, n, pool.entries_per_frame);
    let (low, fits) = pool.key_low(ir, &a, b, ns, fk);
    let (frame, ok) = claim_or_raise(ir, cx, b, (pool, push), claim, [wtag, low, fits, within]);
    let m = b.begin_if(ir, ok);
    let eight = ir.c_u32(8);
    let off = b.bin(ir, Op::IMul, u, within, eight);
    let at = pool.address(ir, &a, b, frame, off);
    let ep = b.addr_ptr(ir, a.p_entry, at);
    for (field, v) in [(f::E_START, values[0]), (f::E_RANK, values[1])] {
        let p = b.field_ptr(ir, &a, a.s_entry(), ep, field);
        b.store(p, v, 4);
    }
    b.end_if(m);
}

/// `addr + j * stride` as a u64 address.
fn record_address(ir: &mut Ir, cx: &Ctx, b: &mut Body, addr: Word, j: Word, stride: Word) -> Word {
    let a = cx.abi;
    let j64 = b.op(ir, Op::UConvert, a.u64, vec![id(j)]);
    let s64 = b.op(ir, Op::UConvert, a.u64, vec![id(stride)]);
    let o = b.bin(ir, Op::IMul, a.u64, j64, s64);
    b.bin(ir, Op::IAdd, a.u64, addr, o)
}

/// Reads a record's dispatch grid as the target's schedule describes it.
struct GridReader {
    offset: Word,
    bytes: Word,
    components: Word,
    stride: Word,
    /// `NodeSchedule::max_grid`.
    max: [Word; 3],
}

/// A record's grid: its workgroups (0 when it is past its limits) and
/// whether it is within them.
struct Grid {
    groups: Word,
    valid: Word,
    /// The components as read (1 for those the grid lacks).
    dims: [Word; 3],
}

impl GridReader {
    /// The fields of the target's schedule at `sched`.
    fn load(ir: &mut Ir, cx: &Ctx, b: &mut Body, sched: Word) -> GridReader {
        let a = cx.abi;
        let mut field = |ir: &mut Ir, k: u32| b.load_field(ir, &a, a.s_schedule(), sched, k);
        GridReader {
            offset: field(ir, f::SC_GRID_OFFSET),
            bytes: field(ir, f::SC_GRID_BYTES),
            components: field(ir, f::SC_GRID_COMPONENTS),
            stride: field(ir, f::SC_INPUT_STRIDE),
            max: [0, 1, 2].map(|d| field(ir, f::SC_MAX_GRID + d)),
        }
    }

    /// The grid of the record at `rec`, checked: every dimension within
    /// `max`, the product (in 64 bits) within `MAX_RECORD_WORKGROUPS`.
    fn read(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, rec: Word) -> Grid {
        let a = cx.abi;
        let dims = [0, 1, 2].map(|c| self.component(ir, cx, b, rec, c));
        let mut valid = ir.c_bool(true);
        for (&d, &max) in dims.iter().zip(&self.max) {
            let within = b.bin(ir, Op::ULessThanEqual, a.bool_, d, max);
            valid = b.bin(ir, Op::LogicalAnd, a.bool_, valid, within);
        }
        // Two factors of 32 bits fit 64; past the limit after them, the
        // third product is not looked at.
        let wide = dims.map(|d| b.op(ir, Op::UConvert, a.u64, vec![id(d)]));
        let most = ir.c_u64(u64::from(MAX_RECORD_WORKGROUPS));
        let xy = b.bin(ir, Op::IMul, a.u64, wide[0], wide[1]);
        let xyz = b.bin(ir, Op::IMul, a.u64, xy, wide[2]);
        for p in [xy, xyz] {
            let within = b.bin(ir, Op::ULessThanEqual, a.bool_, p, most);
            valid = b.bin(ir, Op::LogicalAnd, a.bool_, valid, within);
        }
        let groups = b.op(ir, Op::UConvert, a.u32, vec![id(xyz)]);
        let zero = ir.c_u32(0);
        Grid { groups: b.select(ir, a.u32, valid, groups, zero), valid, dims }
    }

    /// Grid component `c` of the record at `rec` (1 when the grid has fewer).
    fn component(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, rec: Word, c: u32) -> Word {
        let a = cx.abi;
        let (one, two) = (ir.c_u32(1), ir.c_u32(2));
        let (eight, mask16) = (ir.c_u32(8), ir.c_u32(0xffff));
        let cc = ir.c_u32(c);
        let at = b.bin(ir, Op::IMul, a.u32, cc, self.bytes);
        let at = b.bin(ir, Op::IAdd, a.u32, self.offset, at);
        let not3 = ir.c_u32(!3);
        let aligned = b.bin(ir, Op::BitwiseAnd, a.u32, at, not3);
        let a64 = b.op(ir, Op::UConvert, a.u64, vec![id(aligned)]);
        let wa = b.bin(ir, Op::IAdd, a.u64, rec, a64);
        let wp = b.addr_ptr(ir, a.p_u32, wa);
        let word = b.load(ir, a.u32, wp, 4);
        let lane = b.bin(ir, Op::BitwiseAnd, a.u32, at, two);
        let shift = b.bin(ir, Op::IMul, a.u32, lane, eight);
        let shifted = b.bin(ir, Op::ShiftRightLogical, a.u32, word, shift);
        let half = b.bin(ir, Op::BitwiseAnd, a.u32, shifted, mask16);
        let is16 = b.bin(ir, Op::IEqual, a.bool_, self.bytes, two);
        let v = b.select(ir, a.u32, is16, half, word);
        let present = b.bin(ir, Op::ULessThan, a.bool_, cc, self.components);
        b.select(ir, a.u32, present, v, one)
    }
}
