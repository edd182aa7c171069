//! The finisher's form for a known graph with few slots to launch
//! (`GraphTables::launched`): invocation 0 does every step in straight-line
//! code. The slots, their schedules and the tables' offsets are constants,
//! so the counters are its only loads besides the status, all issued
//! before the first is used: one round trip to memory instead of the
//! general form's three dependent ones (context, schedule, counter).

use super::{
    advance_pin, close_level, held, next_level, report_drop, split_groups, status, uniform_grid, write_launch,
    zero_launch, NextLaunch,
};
use crate::abi::{
    NodeSchedule, GRID_PAST_LEVEL, MAX_LEVEL_WORKGROUPS, RECORDS_FRAMED, RECORDS_PINNED, SCHEDULE_DYNAMIC,
    SCHEDULE_FLAG_MESH, SCHEDULE_FLAG_PINNED, SCHEDULE_STATIC, STATUS_LEVEL_WORKGROUPS,
};
use crate::codegen::{f, Body};
use crate::ir::{id, Ir};
use crate::options::GraphTables;
use crate::passes::context::Ctx;
use crate::runtime::{self, parity_table, Push};
use spirv::{Op, Word};

/// What a slot's launch is made of.
struct Launch {
    slot: u32,
    /// The slot whose counters hold its records (its share base, or itself).
    src: u32,
    schedule: NodeSchedule,
}

impl Launch {
    fn dynamic(&self) -> bool {
        self.schedule.mode == SCHEDULE_DYNAMIC
    }

    /// A mesh node drawn once after the last level (see `abi`).
    fn pinned(&self) -> bool {
        self.schedule.flags & SCHEDULE_FLAG_PINNED != 0
    }
}

/// A source slot's counts of this level.
struct Counts {
    records: Word,
    /// Dynamic-grid nodes only.
    grid: Option<GridCounts>,
}

/// A dynamic-grid source's grid counter, read.
#[derive(Clone, Copy)]
struct GridCounts {
    /// The workgroups of its records' grids (the counter's high word).
    groups: Word,
    /// `NodeDispatch::starts` (`u64`, see `uniform_grid`).
    starts: Word,
    /// `bool`: the enqueues saw the workgroups pass `MAX_LEVEL_WORKGROUPS`.
    past: Word,
}

/// One launch, sized (see [`size`]).
struct Sized {
    split: Word,
    groups: Word,
    records: Word,
    /// The workgroups the arguments launch (none for a mesh node: drawn).
    launched: Word,
    /// `bool`: dropped for `MAX_LEVEL_WORKGROUPS`.
    dropped: Word,
    /// What a drop reports (see `Held::counted`).
    counted: [Word; 3],
}

pub(super) fn emit(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, t: &GraphTables) {
    let a = cx.abi;
    let u = a.u32;
    let zero = ir.c_u32(0);
    let zero64 = ir.c_u64(0);
    let launches: Vec<Launch> = t
        .launched
        .iter()
        .map(|&(slot, schedule)| Launch { slot, src: schedule.share_base.checked_sub(1).unwrap_or(slot), schedule })
        .collect();
    let lidx = b.op(ir, Op::Load, u, vec![id(cx.real.lidx)]);
    let l0 = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    let m = b.begin_if(ir, l0);
    let (status, fatal) = status(ir, cx, b, push);
    let words = b.load_field(ir, &a, a.s_dispatch(), push.dispatch, f::D_STATUS);
    let ranks = parity_table(ir, &a, b, push.ctx, t.rank_counts, push.odd, false);
    let grids = parity_table(ir, &a, b, push.ctx, t.grid_counts, push.odd, false);
    let [ranks0, grids0, disp1] = [t.rank_counts[0], t.grid_counts[0], t.dispatches[1]].map(|offset| {
        let ctx = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(push.ctx)]);
        let offset = ir.c_u64(offset);
        b.bin(ir, Op::IAdd, a.u64, ctx, offset)
    });
    let counts = load_counts(ir, cx, b, &launches, [ranks, ranks0], [grids, grids0]);
    let sizes: Vec<Sized> = launches.iter().map(|l| size(ir, cx, b, l, &counts[&l.src], fatal)).collect();
    // Each launch's first number among the next level's workgroups (sums
    // of values already at hand: no launch waits on the one before).
    let mut total = zero;
    let mut total64 = zero64;
    let mut firsts = Vec::with_capacity(sizes.len());
    for (l, sized) in launches.iter().zip(&sizes) {
        firsts.push(total);
        if l.schedule.flags & SCHEDULE_FLAG_MESH == 0 {
            total = b.bin(ir, Op::IAdd, u, total, sized.launched);
            let wide = b.op(ir, Op::UConvert, a.u64, vec![id(sized.launched)]);
            total64 = b.bin(ir, Op::IAdd, a.u64, total64, wide);
        }
    }
    let next = parity_table(ir, &a, b, push.ctx, t.dispatches, push.odd, true);
    let next = b.addr_ptr(ir, a.p_dispatch, next);
    let drawn_last = b.addr_ptr(ir, a.p_dispatch, disp1);
    for ((l, sized), &first) in launches.iter().zip(&sizes).zip(&firsts) {
        let slot = ir.c_u32(l.slot);
        // A pinned node's dispatch: drawn after the last level, from
        // parity 1's table.
        let table = if l.pinned() { drawn_last } else { next };
        let dp = b.elem(ir, a.p_dispatch, table, slot);
        let mode = ir.c_u32(if l.pinned() { RECORDS_PINNED } else { RECORDS_FRAMED });
        let starts = counts[&l.src].grid.filter(|_| l.dynamic()).map_or(zero64, |g| g.starts);
        let key = ir.c_u32(l.src);
        let (split, groups, records) = (sized.split, sized.groups, sized.records);
        let next = NextLaunch { split, groups, records, mode, key, words, starts, numbers: Some([first, total]) };
        write_launch(ir, cx, b, dp, &next);
    }
    let status = with_dropped(ir, cx, b, status, &sizes);
    let next_level = next_level(ir, cx, b, push);
    for (l, sized) in launches.iter().zip(&sizes) {
        let slot = ir.c_u32(l.slot);
        report_drop(ir, cx, b, words, sized.dropped, [slot, next_level], sized.counted);
    }
    // Launches that together pass what a level launches: none of them runs
    // (checked after the launches are written, off their path).
    let most = ir.c_u64(u64::from(MAX_LEVEL_WORKGROUPS));
    let over = b.bin(ir, Op::UGreaterThan, a.bool_, total64, most);
    let mo = b.begin_if_rare(ir, over);
    for (l, sized) in launches.iter().zip(&sizes).filter(|(l, _)| l.schedule.flags & SCHEDULE_FLAG_MESH == 0) {
        let slot = ir.c_u32(l.slot);
        let dp = b.elem(ir, a.p_dispatch, next, slot);
        drop_launch(ir, cx, b, (dp, words), [slot, next_level], sized.launched);
    }
    b.end_if(mo);
    let (bit, total) = (ir.c_u32(STATUS_LEVEL_WORKGROUPS), b.select(ir, u, over, zero, total));
    let bits = b.select(ir, u, over, bit, zero);
    let status = b.bin(ir, Op::BitwiseOr, u, status, bits);
    clear_counts(ir, cx, b, launches.iter().filter(|l| !l.pinned()), ranks, grids);
    close_level(ir, cx, b, push, status, words);
    let none = b.bin(ir, Op::IEqual, a.bool_, total, zero);
    let none = b.bin(ir, Op::LogicalOr, a.bool_, none, push.next_uncounted);
    let mn = b.begin_if(ir, none);
    let now = parity_table(ir, &a, b, push.ctx, t.dispatches, push.odd, false);
    let now = b.addr_ptr(ir, a.p_dispatch, now);
    for l in launches.iter().filter(|l| !l.pinned()) {
        let slot = ir.c_u32(l.slot);
        let dp = b.elem(ir, a.p_dispatch, now, slot);
        zero_launch(ir, cx, b, dp);
    }
    // The dispatch ends: pinned counts start again, and so does the pin.
    clear_counts(ir, cx, b, launches.iter().filter(|l| l.pinned()), ranks0, grids0);
    advance_pin(ir, cx, b, push);
    b.end_if(mn);
    b.end_if(m);
}

/// Step 2's loads: every source slot's counters, all issued together (a
/// pinned node's from the parity-0 counters `ranks0` and `grids0`).
fn load_counts(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    launches: &[Launch],
    [ranks, ranks0]: [Word; 2],
    [grids, grids0]: [Word; 2],
) -> std::collections::BTreeMap<u32, Counts> {
    let a = cx.abi;
    let mut counts = std::collections::BTreeMap::new();
    for l in launches {
        if counts.contains_key(&l.src) {
            continue;
        }
        let src = ir.c_u32(l.src);
        let rp = runtime::counter(ir, &a, b, if l.pinned() { ranks0 } else { ranks }, src, false);
        let records = b.load(ir, a.u32, rp, 4);
        let grid = launches.iter().any(|m| m.src == l.src && m.dynamic()).then(|| {
            let grids = if l.pinned() { grids0 } else { grids };
            let gp = runtime::counter(ir, &a, b, grids, src, true);
            let grid = b.load(ir, a.u64, gp, 8);
            let mp = runtime::grid_max(ir, &a, b, grids, src);
            let largest = b.load(ir, a.u32, mp, 4);
            let c32 = ir.c_u32(32);
            let groups = b.bin(ir, Op::ShiftRightLogical, a.u64, grid, c32);
            let groups = b.op(ir, Op::UConvert, a.u32, vec![id(groups)]);
            let marker = ir.c_u32(GRID_PAST_LEVEL);
            let past = b.bin(ir, Op::IEqual, a.bool_, largest, marker);
            GridCounts { groups, starts: uniform_grid(ir, cx, b, grid, largest), past }
        });
        counts.insert(l.src, Counts { records, grid });
    }
    counts
}

/// Step 2 for one launch: its workgroups (held to `MAX_LEVEL_WORKGROUPS`,
/// in 32 bits against constants) and records, none after a fatal status.
fn size(ir: &mut Ir, cx: &Ctx, b: &mut Body, l: &Launch, c: &Counts, fatal: Word) -> Sized {
    let a = cx.abi;
    let u = a.u32;
    let zero = ir.c_u32(0);
    let s = &l.schedule;
    let most = ir.c_u32(MAX_LEVEL_WORKGROUPS);
    let held = match (s.mode, c.grid) {
        (SCHEDULE_STATIC, _) => {
            let per = s.static_groups.max(1);
            // Past the limit exactly when the records are past its quotient.
            let fewest_over = ir.c_u32(MAX_LEVEL_WORKGROUPS / per);
            let over = b.bin(ir, Op::UGreaterThan, a.bool_, c.records, fewest_over);
            let per64 = ir.c_u64(u64::from(per));
            let per = ir.c_u32(per);
            let lo = b.bin(ir, Op::IMul, u, c.records, per);
            // The high word only tells the host (a fault's count).
            let wide = b.op(ir, Op::UConvert, a.u64, vec![id(c.records)]);
            let product = b.bin(ir, Op::IMul, a.u64, wide, per64);
            let c32 = ir.c_u32(32);
            let hi = b.bin(ir, Op::ShiftRightLogical, a.u64, product, c32);
            let hi = b.op(ir, Op::UConvert, u, vec![id(hi)]);
            held(ir, cx, b, [lo, hi], over, None)
        }
        (SCHEDULE_DYNAMIC, Some(g)) => {
            let over = b.bin(ir, Op::UGreaterThan, a.bool_, g.groups, most);
            held(ir, cx, b, [g.groups, zero], over, Some(g.past))
        }
        _ => {
            let per = s.records_per_workgroup.max(1);
            let groups = if per == 1 {
                c.records
            } else {
                // Rounded up without an overflowing sum.
                let (one, per) = (ir.c_u32(1), ir.c_u32(per));
                let whole = b.bin(ir, Op::UDiv, u, c.records, per);
                let rest = b.bin(ir, Op::UMod, u, c.records, per);
                let partial = b.bin(ir, Op::INotEqual, a.bool_, rest, zero);
                let partial = b.select(ir, u, partial, one, zero);
                b.bin(ir, Op::IAdd, u, whole, partial)
            };
            let over = b.bin(ir, Op::UGreaterThan, a.bool_, groups, most);
            held(ir, cx, b, [groups, zero], over, None)
        }
    };
    let (dropped, groups) = (held.over, held.groups);
    let gone = b.bin(ir, Op::LogicalOr, a.bool_, fatal, dropped);
    let groups = b.select(ir, u, fatal, zero, groups);
    let records = b.select(ir, u, gone, zero, c.records);
    let fls = ir.c_bool(false);
    let dropped = b.select(ir, a.bool_, fatal, fls, dropped);
    let (split, launched) = split_groups(ir, cx, b, groups);
    Sized { split, groups, records, launched, dropped, counted: held.counted }
}

/// Step 2 after launches that together pass `MAX_LEVEL_WORKGROUPS`: the
/// launch at `dp` (of `launched` workgroups) runs nothing, and is reported.
fn drop_launch(ir: &mut Ir, cx: &Ctx, b: &mut Body, (dp, words): (Word, Word), node: [Word; 2], launched: Word) {
    let a = cx.abi;
    let zero = ir.c_u32(0);
    zero_launch(ir, cx, b, dp);
    let rp = b.field_ptr(ir, &a, a.s_dispatch(), dp, f::D_RECORD_COUNT);
    b.store(rp, zero, 4);
    let some = b.bin(ir, Op::INotEqual, a.bool_, launched, zero);
    let together = ir.c_u32(2);
    report_drop(ir, cx, b, words, some, node, [launched, zero, together]);
}

/// `status` with `STATUS_LEVEL_WORKGROUPS` when a launch was dropped.
fn with_dropped(ir: &mut Ir, cx: &Ctx, b: &mut Body, status: Word, sizes: &[Sized]) -> Word {
    let a = cx.abi;
    let mut any = ir.c_bool(false);
    for s in sizes {
        any = b.bin(ir, Op::LogicalOr, a.bool_, any, s.dropped);
    }
    let (bit, zero) = (ir.c_u32(STATUS_LEVEL_WORKGROUPS), ir.c_u32(0));
    let bits = b.select(ir, a.u32, any, bit, zero);
    b.bin(ir, Op::BitwiseOr, a.u32, status, bits)
}

/// Step 3: the counters `launches` counted in (their sources) back to zero.
fn clear_counts<'l>(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    launches: impl Iterator<Item = &'l Launch> + Clone,
    ranks: Word,
    grids: Word,
) {
    let a = cx.abi;
    let (zero, zero64) = (ir.c_u32(0), ir.c_u64(0));
    let mut cleared = std::collections::BTreeSet::new();
    for l in launches.clone() {
        if !cleared.insert(l.src) {
            continue;
        }
        let src = ir.c_u32(l.src);
        let rp = runtime::counter(ir, &a, b, ranks, src, false);
        b.store(rp, zero, 4);
        if launches.clone().any(|m| m.src == l.src && m.dynamic()) {
            let gp = runtime::counter(ir, &a, b, grids, src, true);
            b.store(gp, zero64, 8);
            let mp = runtime::grid_max(ir, &a, b, grids, src);
            b.store(mp, zero, 4);
        }
    }
}
