//! `OpAllocateNodePayloadsAMDX`, for the `node_ops` pass: the helper
//! functions an allocation becomes. In named steps:
//! 1. **check**: find the target (`lookup`), check index,
//!    recursion and count, raise the status bits of what fails (the
//!    allocation then takes nothing and points at the sink);
//! 2. **take ranks**: one atomic on the target's rank counter for this
//!    level's parity gives the records their ranks; where the device has
//!    subgroup operations, the invocations of a subgroup that allocate for
//!    the same target add up their counts first and one of them takes the
//!    sum for all (so a thread node's records cost one atomic per subgroup
//!    and target, not one each);
//! 3. **place**: claim the frame of the first rank (`runtime::frame_fn`)
//!    and point at the first record's place in it; the allocation that holds
//!    a frame's last rank writes how far it ran into the frame's tail; the
//!    records' meta words (recursion levels left, the count on the first)
//!    and TrackFinishWriting counters are written; a frame that cannot be
//!    had raises a status bit (the records are lost: later levels stop);
//! 4. **remember**: the output's [`AllocCache`] keeps target, count and
//!    rank for the enqueue and array-length helpers.
//!
//! Workgroup visibility: invocation 0 allocates, the address goes to the
//! others through a Workgroup variable between two barriers (thread-packed
//! nodes allocate per invocation).

use super::helpers::{self, barrier, claim_or_raise, finish_fn, shared, AllocCache, Helpers, Ranks};
use super::lookup::{array_slot, lookup, Lookup};
use crate::abi::{
    FAULT_NODE_INDEX, FAULT_RECURSION, FAULT_TOO_MANY_PAYLOADS, NO_NODE, STATUS_INVALID_NODE, STATUS_RECURSION_LIMIT,
    STATUS_TOO_MANY_PAYLOADS,
};
use crate::analyze::finish_counter_offset;
use crate::codegen::{f, Body};
use crate::ir::{id, inst, Ir};
use crate::passes::context::Ctx;
use crate::passes::fault::{self, Fault};
use crate::passes::status::raise;
use crate::runtime::{self, begin_fn, frame_fn, Geom, Pool, Push};
use rspirv::dr::Operand;
use spirv::{BuiltIn, Capability, Decoration, GroupOperation, Op, Scope, StorageClass, Word};

/// `node_output{k}_allocate(count, nidx) -> u64` (Invocation visibility),
/// for a call site every invocation of the workgroup reaches (`uniform`,
/// see `crate::uniform`) or not.
pub(super) fn invocation(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, k: usize, uniform: bool) -> Word {
    let ranks = match helpers::targets(cx, k) {
        Some((_, t)) if uniform && !cx.packed && histogram_fits(cx, t.slots.len()) => Ranks::Workgroup,
        _ if subgroup_ops(ir, cx) => Ranks::Subgroup,
        _ => Ranks::Single,
    };
    allocate(ir, cx, h, k, ranks)
}

/// Node arrays up to this size add up their counts in Workgroup memory.
const HISTOGRAM_TARGETS: usize = 256;

/// Whether output targets of `targets` array indices can be counted in
/// Workgroup memory by this node's workgroups.
fn histogram_fits(cx: &Ctx, targets: usize) -> bool {
    let invocations: u32 = cx.facts.info.workgroup_size.iter().product();
    (1..=HISTOGRAM_TARGETS).contains(&targets) && invocations > 1 && !cx.facts.info.mesh
}

/// `node_output{k}_allocate*(count, nidx) -> u64` with ranks taken `ranks`.
fn allocate(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, k: usize, ranks: Ranks) -> Word {
    if let Some(w) = h.alloc_inv.get(&(k, ranks)) {
        return *w;
    }
    let a = cx.abi;
    let (fid, ps, func, mut b) = begin_fn(ir, a.u64, &[a.u32, a.u32]);
    let (count, nidx) = (ps.first().copied().unwrap_or(0), ps.get(1).copied().unwrap_or(0));
    let push = runtime::push(ir, &a, &cx.push, &mut b);
    let lk = lookup(ir, cx, &mut b, k, nidx, &push);
    let c = check(ir, cx, &mut b, k, [count, nidx], &lk, &push);
    let rank = match ranks {
        Ranks::Workgroup => {
            let index = array_index(ir, cx, &mut b, k, nidx);
            take_ranks_workgroup(ir, cx, h, &mut b, &push, k, [lk.slot, index, c])
        }
        Ranks::Subgroup => take_ranks_subgroup(ir, cx, h, &mut b, &push, k, [lk.slot, c]),
        Ranks::Single => take_ranks_single(ir, cx, &mut b, &push, k, [lk.slot, c]),
    };
    let sink = cx.vars.ctx.sink(ir, &a, &mut b);
    let addr = b.local(ir, a.u64, sink);
    let zero = ir.c_u32(0);
    let takes = b.bin(ir, Op::UGreaterThan, a.bool_, c, zero);
    let m = b.begin_if(ir, takes);
    place(ir, cx, h, &mut b, k, &push, &lk, c, rank, addr);
    b.end_if(m);
    let addr = b.op(ir, Op::Load, a.u64, vec![id(addr)]);
    let none = ir.c_u32(NO_NODE);
    let slot = b.select(ir, a.u32, takes, lk.slot, none);
    let cache = AllocCache::get(ir, cx, h, k);
    // The count asked for: what the array length reports (a failed
    // allocation has no slot, so nothing is enqueued).
    for (var, v) in [(cache.slot, slot), (cache.count, count), (cache.rank, rank), (cache.workgroup, zero)] {
        b.store_plain(var, v);
    }
    b.store_plain(cache.addr, addr);
    b.end(inst(Op::ReturnValue, None, None, vec![id(addr)]), None);
    finish_fn(h, func, b);
    let suffix = match ranks {
        Ranks::Workgroup => "_counted_by_workgroup",
        Ranks::Subgroup => "",
        Ranks::Single => "_single",
    };
    ir.name(fid, &format!("node_output{k}_allocate{suffix}"));
    h.alloc_inv.insert((k, ranks), fid);
    fid
}

/// `node_output{k}_allocate_workgroup(count, nidx) -> u64`: invocation 0
/// allocates; every invocation gets the address.
pub(super) fn workgroup(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, k: usize) -> Word {
    if let Some(w) = h.alloc_wg.get(&k) {
        return *w;
    }
    let a = cx.abi;
    let inner = allocate(ir, cx, h, k, Ranks::Single);
    let sh = shared(ir, &mut h.shared_u64, a.u64, "node_alloc_broadcast");
    let (fid, ps, func, mut b) = begin_fn(ir, a.u64, &[a.u32, a.u32]);
    let lidx = b.op(ir, Op::Load, a.u32, vec![id(cx.real.lidx)]);
    let zero = ir.c_u32(0);
    let first = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    let m = b.begin_if(ir, first);
    let args = vec![id(inner), id(ps.first().copied().unwrap_or(0)), id(ps.get(1).copied().unwrap_or(0))];
    let r = b.op(ir, Op::FunctionCall, a.u64, args);
    b.store_plain(sh, r);
    b.end_if(m);
    barrier(ir, &mut b);
    let v = b.op(ir, Op::Load, a.u64, vec![id(sh)]);
    barrier(ir, &mut b);
    // Invocation 0 holds the allocation; the others need its address and
    // count (uniform in the workgroup), and to know it is not theirs to enqueue.
    let cache = AllocCache::get(ir, cx, h, k);
    let one = ir.c_u32(1);
    b.store_plain(cache.addr, v);
    b.store_plain(cache.count, ps.first().copied().unwrap_or(0));
    b.store_plain(cache.workgroup, one);
    b.end(inst(Op::ReturnValue, None, None, vec![id(v)]), None);
    finish_fn(h, func, b);
    ir.name(fid, &format!("node_output{k}_allocate_workgroup"));
    h.alloc_wg.insert(k, fid);
    fid
}

/// Step 1: the records the allocation takes (`count`, or 0 when the target
/// is missing, out of recursion levels or asked for more than
/// NodeMaxPayloadsAMDX), raising the status bits of what failed. Asking
/// for zero records is no error.
fn check(ir: &mut Ir, cx: &Ctx, b: &mut Body, k: usize, [count, nidx]: [Word; 2], lk: &Lookup, push: &Push) -> Word {
    let a = cx.abi;
    let zero = ir.c_u32(0);
    let maxp = cx.facts.info.outputs.get(k).map_or(0, |o| o.max_payloads);
    let maxc = ir.c_u32(maxp);
    let cnt_ok = b.bin(ir, Op::ULessThanEqual, a.bool_, count, maxc);
    let v1 = b.bin(ir, Op::LogicalAnd, a.bool_, lk.present, lk.rec_ok);
    let valid = b.bin(ir, Op::LogicalAnd, a.bool_, v1, cnt_ok);
    let none_asked = b.bin(ir, Op::IEqual, a.bool_, count, zero);
    let bit = |ir: &mut Ir, b: &mut Body, good: Word, v: u32| {
        let c = ir.c_u32(v);
        b.select(ir, a.u32, good, zero, c)
    };
    let present_or_none = b.bin(ir, Op::LogicalOr, a.bool_, lk.present, none_asked);
    let rec_or_none = b.bin(ir, Op::LogicalOr, a.bool_, lk.rec_ok, none_asked);
    let s1 = bit(ir, b, present_or_none, STATUS_INVALID_NODE);
    let s2 = bit(ir, b, rec_or_none, STATUS_RECURSION_LIMIT);
    let s3 = bit(ir, b, cnt_ok, STATUS_TOO_MANY_PAYLOADS);
    let s12 = b.bin(ir, Op::BitwiseOr, a.u32, s1, s2);
    let st = b.bin(ir, Op::BitwiseOr, a.u32, s12, s3);
    raise(ir, cx, b, push, st);
    // The fault of the first failed check, for the host's message.
    let kind = |ir: &mut Ir, b: &mut Body, good: Word, kind: u32, then: Word| {
        let c = ir.c_u32(kind);
        b.select(ir, a.u32, good, then, c)
    };
    let k3 = kind(ir, b, cnt_ok, FAULT_TOO_MANY_PAYLOADS, zero);
    let k2 = kind(ir, b, rec_or_none, FAULT_RECURSION, k3);
    let k1 = kind(ir, b, present_or_none, FAULT_NODE_INDEX, k2);
    let failed = b.bin(ir, Op::INotEqual, a.bool_, k1, zero);
    let report = Fault::of_node(ir, push, k1, Some(k), &[count, nidx]);
    fault::record(ir, cx, b, push, failed, &report);
    b.select(ir, a.u32, valid, count, zero)
}

/// The rank counter of output `k`'s target `slot` at this level (of
/// parity 0 at every level for pinned targets, see `abi`).
fn rank_counter(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, k: usize, slot: Word) -> Word {
    let a = cx.abi;
    let counts = match cx.opts.tables.as_ref() {
        Some(t) if helpers::pinned(cx, k) => {
            let ctx = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(push.ctx)]);
            let offset = ir.c_u64(t.rank_counts[0]);
            b.bin(ir, Op::IAdd, a.u64, ctx, offset)
        }
        known => {
            let known = known.map(|t| t.rank_counts);
            runtime::parity_table_or_field(ir, &a, b, push, known, f::C_RANK_COUNTS, false)
        }
    };
    runtime::counter(ir, &a, b, counts, slot, false)
}

/// Step 2, each invocation on its own: the first rank of `c` records for
/// `slot` (garbage when `c` is 0).
fn take_ranks_single(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, k: usize, [slot, c]: [Word; 2]) -> Word {
    let a = cx.abi;
    let zero = ir.c_u32(0);
    let takes = b.bin(ir, Op::UGreaterThan, a.bool_, c, zero);
    let rank = b.local(ir, a.u32, zero);
    let m = b.begin_if(ir, takes);
    let cp = rank_counter(ir, cx, b, push, k, slot);
    let r = b.atomic(ir, Op::AtomicIAdd, a.u32, cp, c);
    b.store_plain(rank, r);
    b.end_if(m);
    b.op(ir, Op::Load, a.u32, vec![id(rank)])
}

/// The output's array index `nidx` + base, clamped into the output's
/// targets (its counts' index in Workgroup memory).
fn array_index(ir: &mut Ir, cx: &Ctx, b: &mut Body, k: usize, nidx: Word) -> Word {
    let base = cx.facts.info.outputs.get(k).map_or(0, |o| o.base_index);
    let n = helpers::targets(cx, k).map_or(1, |(_, t)| t.slots.len().max(1)) as u32;
    let nc = ir.c_u32(n);
    array_slot(ir, cx, b, nidx, base, nc).0
}

/// Step 2, the whole workgroup (in uniform control flow): each invocation
/// adds its count to its target's in Workgroup memory, the first of each
/// target takes the ranks of all of them with one atomic, and each gets its
/// own from there. Three barriers, whatever the number of targets.
fn take_ranks_workgroup(
    ir: &mut Ir,
    cx: &Ctx,
    h: &mut Helpers,
    b: &mut Body,
    push: &Push,
    k: usize,
    [slot, index, c]: [Word; 3],
) -> Word {
    let a = cx.abi;
    let u = a.u32;
    let targets = helpers::targets(cx, k).map_or(1, |(_, t)| t.slots.len().max(1)) as u32;
    let (counts, bases) = histogram(ir, cx, h);
    let pw = ir.t_ptr(StorageClass::Workgroup, u, None);
    let zero = ir.c_u32(0);
    // Counts start at zero (Workgroup memory starts undefined).
    let lidx = b.op(ir, Op::Load, u, vec![id(cx.real.lidx)]);
    let invocations = ir.c_u32(cx.facts.info.workgroup_size.iter().product::<u32>().max(1));
    let jv = b.local(ir, u, lidx);
    let lp = b.begin_loop(ir);
    let j = b.op(ir, Op::Load, u, vec![id(jv)]);
    let nt = ir.c_u32(targets);
    let more = b.bin(ir, Op::ULessThan, a.bool_, j, nt);
    b.loop_test(&lp, more);
    let p = b.op(ir, Op::AccessChain, pw, vec![id(counts), id(j)]);
    b.store_plain(p, zero);
    let j1 = b.bin(ir, Op::IAdd, u, j, invocations);
    b.store_plain(jv, j1);
    b.end_loop(&lp);
    barrier(ir, b);
    let takes = b.bin(ir, Op::UGreaterThan, a.bool_, c, zero);
    let local = b.local(ir, u, zero);
    let wg = ir.c_u32(Scope::Workgroup as u32);
    let relaxed = ir.c_u32(0);
    let m = b.begin_if(ir, takes);
    let p = b.op(ir, Op::AccessChain, pw, vec![id(counts), id(index)]);
    let before = b.op(ir, Op::AtomicIAdd, u, vec![id(p), id(wg), id(relaxed), id(c)]);
    b.store_plain(local, before);
    b.end_if(m);
    barrier(ir, b);
    let mine = b.op(ir, Op::Load, u, vec![id(local)]);
    let first = b.bin(ir, Op::IEqual, a.bool_, mine, zero);
    let leads = b.bin(ir, Op::LogicalAnd, a.bool_, takes, first);
    let m = b.begin_if(ir, leads);
    let p = b.op(ir, Op::AccessChain, pw, vec![id(counts), id(index)]);
    let total = b.op(ir, Op::Load, u, vec![id(p)]);
    let cp = rank_counter(ir, cx, b, push, k, slot);
    let base = b.atomic(ir, Op::AtomicIAdd, u, cp, total);
    let bp = b.op(ir, Op::AccessChain, pw, vec![id(bases), id(index)]);
    b.store_plain(bp, base);
    b.end_if(m);
    barrier(ir, b);
    let bp = b.op(ir, Op::AccessChain, pw, vec![id(bases), id(index)]);
    let base = b.op(ir, Op::Load, u, vec![id(bp)]);
    b.bin(ir, Op::IAdd, u, base, mine)
}

/// The Workgroup arrays of per-target counts and first ranks, as long as
/// the largest node array any output of this node counts there.
fn histogram(ir: &mut Ir, cx: &Ctx, h: &mut Helpers) -> (Word, Word) {
    if let Some(&(counts, bases)) = h.histogram.as_ref() {
        return (counts, bases);
    }
    let longest = cx
        .opts
        .tables
        .iter()
        .flat_map(|t| t.outputs.iter().map(|o| o.slots.len()))
        .filter(|&n| histogram_fits(cx, n))
        .max()
        .unwrap_or(1);
    // A type of its own: an interned one could be an application's
    // array with an ArrayStride, which Workgroup memory may not have.
    let size = ir.c_u32(longest as u32);
    let arr = ir.id();
    ir.m.types_global_values.push(inst(Op::TypeArray, None, Some(arr), vec![id(cx.abi.u32), id(size)]));
    let counts = ir.global_var(StorageClass::Workgroup, arr, "node_alloc_counts");
    let bases = ir.global_var(StorageClass::Workgroup, arr, "node_alloc_first_ranks");
    h.histogram = Some((counts, bases));
    (counts, bases)
}

/// Step 2 within a subgroup: the first rank of `c` records for `slot`
/// (garbage when `c` is 0).
fn take_ranks_subgroup(
    ir: &mut Ir,
    cx: &Ctx,
    h: &mut Helpers,
    b: &mut Body,
    push: &Push,
    k: usize,
    [slot, c]: [Word; 2],
) -> Word {
    let a = cx.abi;
    let zero = ir.c_u32(0);
    let takes = b.bin(ir, Op::UGreaterThan, a.bool_, c, zero);
    let lane = subgroup_lane(ir, cx, h);
    let s = Subgroup::group(ir, cx, b, lane, takes, slot, c);
    // The leaders' atomics go out together; each invocation then takes its
    // leader's result.
    let base = b.local(ir, a.u32, zero);
    let m = b.begin_if(ir, s.leader);
    let cp = rank_counter(ir, cx, b, push, k, slot);
    let r = b.atomic(ir, Op::AtomicIAdd, a.u32, cp, s.total);
    b.store_plain(base, r);
    b.end_if(m);
    let base = b.op(ir, Op::Load, a.u32, vec![id(base)]);
    let sg = ir.c_u32(Scope::Subgroup as u32);
    let theirs = b.op(ir, Op::GroupNonUniformShuffle, a.u32, vec![id(sg), id(base), id(s.leader_lane)]);
    b.bin(ir, Op::IAdd, a.u32, theirs, s.before)
}

/// The invocations of a subgroup grouped by target (see [`take_ranks_subgroup`]).
struct Subgroup {
    /// `bool`: this invocation takes the ranks for its group.
    leader: Word,
    /// The group's records (valid in the leader).
    total: Word,
    /// The records of the group's invocations before this one.
    before: Word,
    /// The leader's subgroup invocation id.
    leader_lane: Word,
}

impl Subgroup {
    /// One target a round: the first invocation left names it, those with
    /// the same target sum their counts and elect a leader, and leave.
    fn group(ir: &mut Ir, cx: &Ctx, b: &mut Body, lane: Word, takes: Word, slot: Word, c: Word) -> Subgroup {
        let a = cx.abi;
        for cap in [
            Capability::GroupNonUniform,
            Capability::GroupNonUniformArithmetic,
            Capability::GroupNonUniformBallot,
            Capability::GroupNonUniformVote,
            Capability::GroupNonUniformShuffle,
        ] {
            ir.require_capability(cap);
        }
        let sg = ir.c_u32(Scope::Subgroup as u32);
        let (zero, fls) = (ir.c_u32(0), ir.c_bool(false));
        let todo = b.local(ir, a.bool_, takes);
        let leader = b.local(ir, a.bool_, fls);
        let total = b.local(ir, a.u32, zero);
        let before = b.local(ir, a.u32, zero);
        let leader_lane = b.local(ir, a.u32, zero);
        let lp = b.begin_loop(ir);
        let t = b.op(ir, Op::Load, a.bool_, vec![id(todo)]);
        let any = b.op(ir, Op::GroupNonUniformAny, a.bool_, vec![id(sg), id(t)]);
        b.loop_test(&lp, any);
        let t = b.op(ir, Op::Load, a.bool_, vec![id(todo)]);
        let m = b.begin_if(ir, t);
        let first = b.op(ir, Op::GroupNonUniformBroadcastFirst, a.u32, vec![id(sg), id(slot)]);
        let mine = b.bin(ir, Op::IEqual, a.bool_, slot, first);
        let m2 = b.begin_if(ir, mine);
        let scan = |ir: &mut Ir, b: &mut Body, op: GroupOperation| {
            b.op(ir, Op::GroupNonUniformIAdd, a.u32, vec![id(sg), Operand::GroupOperation(op), id(c)])
        };
        let pre = scan(ir, b, GroupOperation::ExclusiveScan);
        let tot = scan(ir, b, GroupOperation::Reduce);
        let elected = b.op(ir, Op::GroupNonUniformElect, a.bool_, vec![id(sg)]);
        let me = b.op(ir, Op::Load, a.u32, vec![id(lane)]);
        let first_lane = b.op(ir, Op::GroupNonUniformBroadcastFirst, a.u32, vec![id(sg), id(me)]);
        for (var, v) in [(before, pre), (total, tot), (leader_lane, first_lane)] {
            b.store_plain(var, v);
        }
        b.store_plain(leader, elected);
        b.store_plain(todo, fls);
        b.end_if(m2);
        b.end_if(m);
        b.end_loop(&lp);
        let load = |ir: &mut Ir, b: &mut Body, v: Word, ty: Word| b.op(ir, Op::Load, ty, vec![id(v)]);
        Subgroup {
            leader: load(ir, b, leader, a.bool_),
            total: load(ir, b, total, a.u32),
            before: load(ir, b, before, a.u32),
            leader_lane: load(ir, b, leader_lane, a.u32),
        }
    }
}

/// Step 3: claims the frame of rank `rank` of `slot` (the records of the
/// output's geometry), writes the tail word, meta words and finish-writing
/// counters, and leaves the first record's address in `addr` (untouched
/// when the frame cannot be had, or the records are not stored).
#[allow(clippy::too_many_arguments)]
fn place(
    ir: &mut Ir,
    cx: &Ctx,
    h: &mut Helpers,
    b: &mut Body,
    k: usize,
    push: &Push,
    lk: &Lookup,
    c: Word,
    rank: Word,
    addr: Word,
) {
    let a = cx.abi;
    let u = a.u32;
    let g = helpers::output_geometry(ir, cx, b, k, push, lk.slot);
    if !g.may_be_stored() {
        return;
    }
    let stored = b.op(ir, Op::LogicalNot, a.bool_, vec![id(g.frameless)]);
    let ms = b.begin_if(ir, stored);
    let pool = helpers::pool(ir, cx, b, push);
    let fk = b.bin(ir, Op::UDiv, u, rank, g.per_frame);
    let j = b.bin(ir, Op::UMod, u, rank, g.per_frame);
    let (low, fits) = pool.key_low(ir, &a, b, lk.slot, fk);
    let claim = *h.frame_claim.get_or_insert_with(|| frame_fn(ir, &a, true));
    // Records of this level are read at the next (tag + 1); pinned ones
    // after the last (see `abi`).
    let wtag = if helpers::pinned(cx, k) {
        cx.vars.ctx.pin(ir, &a, b)
    } else {
        let tag = cx.vars.ctx.tag(ir, &a, b);
        let one = ir.c_u32(1);
        b.bin(ir, Op::IAdd, u, tag, one)
    };
    let (frame, ok) = claim_or_raise(ir, cx, b, (&pool, push), claim, [wtag, low, fits, j]);
    let m = b.begin_if(ir, ok);
    let at = b.bin(ir, Op::IMul, u, j, g.stride);
    let first = pool.address(ir, &a, b, frame, at);
    b.store_plain(addr, first);
    write_tail(ir, cx, b, &pool, &g, frame, j, c);
    write_meta(ir, cx, b, &pool, &g, lk, frame, j, c);
    zero_finish_counters(ir, cx, b, k, first, c);
    b.end_if(m);
    b.end_if(ms);
}

/// The allocation that holds its frame's last rank (`j + c >= P`) says how
/// far it ran into the tail (`j + c - P`, possibly 0): consumers of the next
/// frame's first ranks read it.
#[allow(clippy::too_many_arguments)]
fn write_tail(ir: &mut Ir, cx: &Ctx, b: &mut Body, pool: &Pool, g: &Geom, frame: Word, j: Word, c: Word) {
    if !g.may_have_tail() {
        return;
    }
    let a = cx.abi;
    let end = b.bin(ir, Op::IAdd, a.u32, j, c);
    let last = b.bin(ir, Op::UGreaterThanEqual, a.bool_, end, g.per_frame);
    let m = b.begin_if(ir, last);
    let over = b.bin(ir, Op::ISub, a.u32, end, g.per_frame);
    let wa = pool.address(ir, &a, b, frame, pool.tail_word);
    let wp = b.addr_ptr(ir, a.p_u32, wa);
    b.store(wp, over, 4);
    b.end_if(m);
}

/// Meta words of records `j..j + c` of the frame: the recursion levels left
/// (the parent's less one for a self-enqueue, else the target's limit) and,
/// on the first, the count.
#[allow(clippy::too_many_arguments)]
fn write_meta(ir: &mut Ir, cx: &Ctx, b: &mut Body, pool: &Pool, g: &Geom, lk: &Lookup, frame: Word, j: Word, c: Word) {
    if !g.may_have_meta() {
        return;
    }
    let a = cx.abi;
    let u = a.u32;
    let m = b.begin_if(ir, g.meta);
    let tn = b.elem(ir, a.p_node, lk.nodes, lk.slot);
    let tmax = b.load_field(ir, &a, a.s_node(), tn, f::N_MAX_RECURSION);
    let rem = b.op(ir, Op::Load, u, vec![id(cx.vars.remaining)]);
    let one = ir.c_u32(1);
    let rem1 = b.bin(ir, Op::ISub, u, rem, one);
    let left = b.select(ir, u, lk.is_self, rem1, tmax);
    let low16 = ir.c_u32(0xFFFF);
    let left = b.bin(ir, Op::BitwiseAnd, u, left, low16);
    let s16 = ir.c_u32(16);
    let counted = b.bin(ir, Op::ShiftLeftLogical, u, c, s16);
    let first = b.bin(ir, Op::BitwiseOr, u, left, counted);
    let four = ir.c_u32(4);
    let zero = ir.c_u32(0);
    let iv = b.local(ir, u, zero);
    let lp = b.begin_loop(ir);
    let i = b.op(ir, Op::Load, u, vec![id(iv)]);
    let more = b.bin(ir, Op::ULessThan, a.bool_, i, c);
    b.loop_test(&lp, more);
    let is_first = b.bin(ir, Op::IEqual, a.bool_, i, zero);
    let word = b.select(ir, u, is_first, first, left);
    let ji = b.bin(ir, Op::IAdd, u, j, i);
    let off = b.bin(ir, Op::IMul, u, ji, four);
    let off = b.bin(ir, Op::IAdd, u, g.meta_offset, off);
    let wa = pool.address(ir, &a, b, frame, off);
    let wp = b.addr_ptr(ir, a.p_u32, wa);
    b.store(wp, word, 4);
    let i1 = b.bin(ir, Op::IAdd, u, i, one);
    b.store_plain(iv, i1);
    b.end_loop(&lp);
    b.end_if(m);
}

/// TrackFinishWritingAMDX outputs: every record's hidden counter starts at 0.
fn zero_finish_counters(ir: &mut Ir, cx: &Ctx, b: &mut Body, k: usize, first: Word, c: Word) {
    let Some(o) = cx.facts.info.outputs.get(k).filter(|o| o.track_finish_writing) else { return };
    let a = cx.abi;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let jv = b.local(ir, a.u32, zero);
    let lp = b.begin_loop(ir);
    let j = b.op(ir, Op::Load, a.u32, vec![id(jv)]);
    let lt = b.bin(ir, Op::ULessThan, a.bool_, j, c);
    b.loop_test(&lp, lt);
    let j64 = b.op(ir, Op::UConvert, a.u64, vec![id(j)]);
    let s64 = ir.c_u64(u64::from(o.record_stride));
    let o64 = b.bin(ir, Op::IMul, a.u64, j64, s64);
    let co = ir.c_u64(u64::from(finish_counter_offset(o.payload_size)));
    let r1 = b.bin(ir, Op::IAdd, a.u64, first, o64);
    let r2 = b.bin(ir, Op::IAdd, a.u64, r1, co);
    let cp = b.addr_ptr(ir, a.p_u32, r2);
    b.store(cp, zero, 4);
    let j1 = b.bin(ir, Op::IAdd, a.u32, j, one);
    b.store_plain(jv, j1);
    b.end_loop(&lp);
}

/// Whether allocations may use subgroup operations (the device runs them
/// and the module's SPIR-V version, 1.3 or later, has them).
fn subgroup_ops(ir: &Ir, cx: &Ctx) -> bool {
    let version = ir.m.header.as_ref().map(|h| h.version()).unwrap_or((1, 0));
    cx.opts.subgroup_ops && version >= (1, 3)
}

/// The `SubgroupLocalInvocationId` input, declared on first use.
fn subgroup_lane(ir: &mut Ir, cx: &Ctx, h: &mut Helpers) -> Word {
    if let Some(v) = h.subgroup_lane {
        return v;
    }
    let v = ir.global_var(StorageClass::Input, cx.abi.u32, "real_SubgroupLocalInvocationId");
    ir.decorate(v, Decoration::BuiltIn, vec![Operand::BuiltIn(BuiltIn::SubgroupLocalInvocationId)]);
    h.subgroup_lane = Some(v);
    v
}
