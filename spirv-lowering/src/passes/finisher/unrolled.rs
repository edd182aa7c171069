//! The finisher's form for a known graph with few slots to launch
//! (`GraphTables::launched`): invocation 0 does every step in straight-line
//! code. The slots, their schedules and the tables' offsets are constants,
//! so the counters are its only loads besides the status, all issued
//! before the first is used: one round trip to memory instead of the
//! general form's three dependent ones (context, schedule, counter).

use super::{advance_pin, close_level, split_groups, status, uniform_grid, write_launch, zero_launch, NextLaunch};
use crate::abi::{
    NodeSchedule, RECORDS_FRAMED, RECORDS_PINNED, SCHEDULE_DYNAMIC, SCHEDULE_FLAG_MESH, SCHEDULE_FLAG_PINNED,
    SCHEDULE_STATIC,
};
use crate::codegen::{f, Body};
use crate::ir::{id, Ir};
use crate::passes::Ctx;
use crate::runtime::{self, parity_table, Push};
use crate::GraphTables;
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
    /// Dynamic-grid nodes only: the workgroups of their grids, and the
    /// `u64` `NodeDispatch::starts` (see `uniform_grid`).
    grid: Option<(Word, Word)>,
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
    let sizes: Vec<(Word, Word, Word, Word)> =
        launches.iter().map(|l| size(ir, cx, b, l, &counts[&l.src], fatal)).collect();
    // Each launch's first number among the next level's workgroups.
    let mut total = zero;
    let mut firsts = Vec::with_capacity(sizes.len());
    for (l, &(_, _, _, launched)) in launches.iter().zip(&sizes) {
        firsts.push(total);
        if l.schedule.flags & SCHEDULE_FLAG_MESH == 0 {
            total = b.bin(ir, Op::IAdd, u, total, launched);
        }
    }
    let next = parity_table(ir, &a, b, push.ctx, t.dispatches, push.odd, true);
    let next = b.addr_ptr(ir, a.p_dispatch, next);
    let drawn_last = b.addr_ptr(ir, a.p_dispatch, disp1);
    for ((l, &(split, groups, records, _)), &first) in launches.iter().zip(&sizes).zip(&firsts) {
        let slot = ir.c_u32(l.slot);
        // A pinned node's dispatch: drawn after the last level, from
        // parity 1's table.
        let table = if l.pinned() { drawn_last } else { next };
        let dp = b.elem(ir, a.p_dispatch, table, slot);
        let mode = ir.c_u32(if l.pinned() { RECORDS_PINNED } else { RECORDS_FRAMED });
        let starts = counts[&l.src].grid.filter(|_| l.dynamic()).map_or(zero64, |(_, uniform)| uniform);
        let key = ir.c_u32(l.src);
        let next = NextLaunch { split, groups, records, mode, key, words, starts, numbers: Some([first, total]) };
        write_launch(ir, cx, b, dp, &next);
    }
    clear_counts(ir, cx, b, launches.iter().filter(|l| !l.pinned()), ranks, grids);
    close_level(ir, cx, b, push, status, words);
    let none = b.bin(ir, Op::IEqual, a.bool_, total, zero);
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
            let hi = b.bin(ir, Op::ShiftRightLogical, a.u64, grid, c32);
            let groups = b.op(ir, Op::UConvert, a.u32, vec![id(hi)]);
            (groups, uniform_grid(ir, cx, b, grid, largest))
        });
        counts.insert(l.src, Counts { records, grid });
    }
    counts
}

/// Step 2 for one launch: (indirect arguments, workgroups, records, the
/// workgroups the arguments launch), none after a fatal status.
fn size(ir: &mut Ir, cx: &Ctx, b: &mut Body, l: &Launch, c: &Counts, fatal: Word) -> (Word, Word, Word, Word) {
    let u = cx.abi.u32;
    let zero = ir.c_u32(0);
    let s = &l.schedule;
    let groups = match (s.mode, c.grid) {
        (SCHEDULE_STATIC, _) => {
            let per_record = ir.c_u32(s.static_groups);
            b.bin(ir, Op::IMul, u, c.records, per_record)
        }
        (SCHEDULE_DYNAMIC, Some((groups, _))) => groups,
        _ => {
            let per = s.records_per_workgroup.max(1);
            if per == 1 {
                c.records
            } else {
                let (round, per) = (ir.c_u32(per - 1), ir.c_u32(per));
                let up = b.bin(ir, Op::IAdd, u, c.records, round);
                b.bin(ir, Op::UDiv, u, up, per)
            }
        }
    };
    let groups = b.select(ir, u, fatal, zero, groups);
    let records = b.select(ir, u, fatal, zero, c.records);
    let (split, launched) = split_groups(ir, cx, b, groups);
    (split, groups, records, launched)
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
