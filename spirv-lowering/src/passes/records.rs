//! Finding a node's input records, for the `prologue` pass: the record of a
//! rank (side by side at `NodeDispatch::records` for a host dispatch's
//! level 0, else in the key node's frames, through its tail when the rank
//! is one of the first of a frame, see `abi`), the record a dynamic-grid
//! workgroup belongs to (a search over the grid entries, whose workgroup
//! starts grow), and a coalescing workgroup's records gathered into
//! its Workgroup array of payload addresses.

use super::context::Ctx;
use crate::abi::{NO_NODE, RECORDS_CONTIGUOUS, RECORDS_PINNED};
use crate::codegen::{f, Body, LoopLabels};
use crate::ir::{id, Ir};
use crate::runtime::{frame_fn, Geom, Pool, PoolFacts, Push};
use spirv::{Op, StorageClass, Word};

/// The `Private` variables a fetched record is left in.
pub(super) struct Fetched {
    pub payload: Word,
    pub remaining: Word,
    pub workgroup_start: Word,
}

impl Fetched {
    pub fn declare(ir: &mut Ir, cx: &Ctx) -> Fetched {
        let a = cx.abi;
        Fetched {
            payload: ir.global_var(StorageClass::Private, a.u64, "node_fetched_payload"),
            remaining: ir.global_var(StorageClass::Private, a.u32, "node_fetched_remaining"),
            workgroup_start: ir.global_var(StorageClass::Private, a.u32, "node_fetched_workgroup_start"),
        }
    }
}

/// Where this launch's records are, loaded once by the prologue so that the
/// searches below do not reload it at every step.
pub(super) struct Source {
    /// `bool`: records side by side (level 0 of a host dispatch).
    contiguous: Word,
    /// Contiguous: the first record and the grid starts.
    records: Word,
    starts: Word,
    /// Framed: the key node, the tag of its frames, the pool, the geometry.
    key: Word,
    tag: Word,
    pool: Pool,
    geom: Geom,
    /// Where a record that cannot be found reads from.
    sink: Word,
    /// `node_frame_find`.
    find: Word,
    /// The node's input stride (contiguous records).
    stride: Word,
    /// Recursion levels of a contiguous record: the node's limit.
    max_recursion: Word,
    /// Recursion levels of a framed record without a meta word: the limit
    /// less the level (see `abi::FrameGeometry::meta`).
    level_remaining: Word,
}

impl Source {
    pub fn load(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push) -> Source {
        let a = cx.abi;
        let d = push.dispatch;
        let mode = b.load_field(ir, &a, a.s_dispatch(), d, f::D_MODE);
        let contiguous_mode = ir.c_u32(RECORDS_CONTIGUOUS);
        let contiguous = b.bin(ir, Op::IEqual, a.bool_, mode, contiguous_mode);
        let key = b.load_field(ir, &a, a.s_dispatch(), d, f::D_KEY_NODE);
        let known = cx.opts.tables.as_ref().map(PoolFacts::of);
        let pool = Pool::load(ir, &a, b, (push.ctx, &cx.vars.ctx), known);
        let geom = match &cx.opts.tables {
            Some(t) => Geom::known(ir, t.input),
            None => {
                let sched_addr = b.load_field(ir, &a, a.s_ctx(), push.ctx, f::C_SCHEDULES);
                let scheds = b.addr_ptr(ir, a.p_schedule, sched_addr);
                let sp = b.elem(ir, a.p_schedule, scheds, key);
                Geom::load(ir, &a, b, sp)
            }
        };
        let stride = cx.facts.info.input.as_ref().map_or(4, |i| i.stride.max(4));
        let limit = cx.facts.info.max_recursion.unwrap_or(0);
        let level_remaining = {
            let limit = ir.c_u32(limit);
            let past = b.bin(ir, Op::UGreaterThan, a.bool_, push.level, limit);
            let depth = b.select(ir, a.u32, past, limit, push.level);
            b.bin(ir, Op::ISub, a.u32, limit, depth)
        };
        Source {
            contiguous,
            records: b.load_field(ir, &a, a.s_dispatch(), d, f::D_RECORDS),
            starts: b.load_field(ir, &a, a.s_dispatch(), d, f::D_STARTS),
            key,
            tag: {
                // Pinned records (a mesh node drawn after the last level)
                // are keyed with the dispatch's pin (see `abi`).
                let pinned_mode = ir.c_u32(RECORDS_PINNED);
                let pinned = b.bin(ir, Op::IEqual, a.bool_, mode, pinned_mode);
                let drawn = cx.vars.ctx.pin_drawn(ir, &a, b);
                let tag = cx.vars.ctx.tag(ir, &a, b);
                b.select(ir, a.u32, pinned, drawn, tag)
            },
            pool,
            geom,
            sink: cx.vars.ctx.sink(ir, &a, b),
            find: frame_fn(ir, &a, false),
            stride: ir.c_u32(stride),
            max_recursion: ir.c_u32(limit),
            level_remaining,
        }
    }

    /// The pool slot of frame `k` of namespace `ns` at the tag read (NO_NODE: none).
    fn frame(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, ns: Word, k: Word) -> Word {
        let a = cx.abi;
        let (low, fits) = self.pool.key_low(ir, &a, b, ns, k);
        let none = ir.c_u32(NO_NODE);
        let found = b.local(ir, a.u32, none);
        let m = b.begin_if(ir, fits);
        let got = self.pool.find(ir, &a, b, self.find, self.tag, low);
        b.store_plain(found, got);
        b.end_if(m);
        b.op(ir, Op::Load, a.u32, vec![id(found)])
    }

    /// Record `r` of this node at this level into the fetched variables (a
    /// record that cannot be found reads the sink).
    pub fn fetch(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, out: &Fetched, r: Word) {
        let a = cx.abi;
        let m = b.begin_if(ir, self.contiguous);
        let r64 = b.op(ir, Op::UConvert, a.u64, vec![id(r)]);
        let s64 = b.op(ir, Op::UConvert, a.u64, vec![id(self.stride)]);
        let off = b.bin(ir, Op::IMul, a.u64, r64, s64);
        let payload = b.bin(ir, Op::IAdd, a.u64, self.records, off);
        b.store_plain(out.payload, payload);
        b.store_plain(out.remaining, self.max_recursion);
        b.end_if(m);
        let framed = b.op(ir, Op::LogicalNot, a.bool_, vec![id(self.contiguous)]);
        let m = b.begin_if(ir, framed);
        self.fetch_framed(ir, cx, b, out, r);
        b.end_if(m);
    }

    /// [`Self::fetch`] from frames.
    fn fetch_framed(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, out: &Fetched, r: Word) {
        let a = cx.abi;
        let u = a.u32;
        b.store_plain(out.payload, self.sink);
        b.store_plain(out.remaining, self.level_remaining);
        if !self.geom.may_be_stored() {
            return;
        }
        let g = self.geom;
        let stored = b.op(ir, Op::LogicalNot, a.bool_, vec![id(g.frameless)]);
        let ms = b.begin_if(ir, stored);
        let fk = b.bin(ir, Op::UDiv, u, r, g.per_frame);
        let j = b.bin(ir, Op::UMod, u, r, g.per_frame);
        let none = ir.c_u32(NO_NODE);
        let frame_v = b.local(ir, u, none);
        let slot_v = b.local(ir, u, j);
        let fls = ir.c_bool(false);
        let in_tail = b.local(ir, a.bool_, fls);
        if g.may_have_tail() {
            self.look_in_tail(ir, cx, b, [fk, j], [frame_v, slot_v, in_tail]);
        }
        let t = b.op(ir, Op::Load, a.bool_, vec![id(in_tail)]);
        let own = b.op(ir, Op::LogicalNot, a.bool_, vec![id(t)]);
        let m = b.begin_if(ir, own);
        let frame = self.frame(ir, cx, b, self.key, fk);
        b.store_plain(frame_v, frame);
        b.end_if(m);
        let frame = b.op(ir, Op::Load, u, vec![id(frame_v)]);
        let slot = b.op(ir, Op::Load, u, vec![id(slot_v)]);
        let found = b.bin(ir, Op::INotEqual, a.bool_, frame, none);
        let m = b.begin_if(ir, found);
        let at = b.bin(ir, Op::IMul, u, slot, g.stride);
        let payload = self.pool.address(ir, &a, b, frame, at);
        b.store_plain(out.payload, payload);
        if g.may_have_meta() {
            let mm = b.begin_if(ir, g.meta);
            let four = ir.c_u32(4);
            let off = b.bin(ir, Op::IMul, u, slot, four);
            let off = b.bin(ir, Op::IAdd, u, g.meta_offset, off);
            let wa = self.pool.address(ir, &a, b, frame, off);
            let wp = b.addr_ptr(ir, a.p_u32, wa);
            let word = b.load(ir, u, wp, 4);
            let low16 = ir.c_u32(0xFFFF);
            let left = b.bin(ir, Op::BitwiseAnd, u, word, low16);
            b.store_plain(out.remaining, left);
            b.end_if(mm);
        }
        b.end_if(m);
        b.end_if(ms);
    }

    /// One of the first `tail` ranks of frame `fk > 0` may sit in the tail
    /// of frame `fk - 1`: when that frame's tail word says the allocation
    /// holding its last rank ran past record `j`, the record is at `P + j`
    /// there.
    fn look_in_tail(
        &self,
        ir: &mut Ir,
        cx: &Ctx,
        b: &mut Body,
        [fk, j]: [Word; 2],
        [frame_v, slot_v, in_tail]: [Word; 3],
    ) {
        let a = cx.abi;
        let u = a.u32;
        let g = self.geom;
        let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
        let early = b.bin(ir, Op::ULessThan, a.bool_, j, g.tail);
        let later = b.bin(ir, Op::UGreaterThan, a.bool_, fk, zero);
        let maybe = b.bin(ir, Op::LogicalAnd, a.bool_, early, later);
        let m = b.begin_if(ir, maybe);
        let pk = b.bin(ir, Op::ISub, u, fk, one);
        let prev = self.frame(ir, cx, b, self.key, pk);
        let none = ir.c_u32(NO_NODE);
        let has = b.bin(ir, Op::INotEqual, a.bool_, prev, none);
        let m2 = b.begin_if(ir, has);
        let wa = self.pool.address(ir, &a, b, prev, self.pool.tail_word);
        let wp = b.addr_ptr(ir, a.p_u32, wa);
        let ran = b.load(ir, u, wp, 4);
        let there = b.bin(ir, Op::ULessThan, a.bool_, j, ran);
        let m3 = b.begin_if(ir, there);
        b.store_plain(frame_v, prev);
        let pj = b.bin(ir, Op::IAdd, u, g.per_frame, j);
        b.store_plain(slot_v, pj);
        let tru = ir.c_bool(true);
        b.store_plain(in_tail, tru);
        b.end_if(m3);
        b.end_if(m2);
        b.end_if(m);
    }

    /// Grid entry `e` of a dynamic-grid node: (first workgroup, rank). For
    /// contiguous records the entry is the record and the start its prefix.
    fn entry(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, e: Word) -> (Word, Word) {
        let a = cx.abi;
        let u = a.u32;
        let zero = ir.c_u32(0);
        let start = b.local(ir, u, zero);
        let rank = b.local(ir, u, e);
        let m = b.begin_if(ir, self.contiguous);
        let p = b.addr_ptr(ir, a.p_u32, self.starts);
        let sp = b.elem(ir, a.p_u32, p, e);
        let s = b.load(ir, u, sp, 4);
        b.store_plain(start, s);
        b.end_if(m);
        let framed = b.op(ir, Op::LogicalNot, a.bool_, vec![id(self.contiguous)]);
        let m = b.begin_if(ir, framed);
        let fk = b.bin(ir, Op::UDiv, u, e, self.pool.entries_per_frame);
        let within = b.bin(ir, Op::UMod, u, e, self.pool.entries_per_frame);
        let two = ir.c_u32(2);
        let nodes = b.bin(ir, Op::UDiv, u, self.pool.namespaces, two);
        let ns = b.bin(ir, Op::IAdd, u, nodes, self.key);
        let frame = self.frame(ir, cx, b, ns, fk);
        let none = ir.c_u32(NO_NODE);
        let found = b.bin(ir, Op::INotEqual, a.bool_, frame, none);
        let m2 = b.begin_if(ir, found);
        let eight = ir.c_u32(8);
        let off = b.bin(ir, Op::IMul, u, within, eight);
        let at = self.pool.address(ir, &a, b, frame, off);
        let ep = b.addr_ptr(ir, a.p_entry, at);
        let s = b.load_field(ir, &a, a.s_entry(), ep, f::E_START);
        let r = b.load_field(ir, &a, a.s_entry(), ep, f::E_RANK);
        b.store_plain(start, s);
        b.store_plain(rank, r);
        b.end_if(m2);
        b.end_if(m);
        (b.op(ir, Op::Load, u, vec![id(start)]), b.op(ir, Op::Load, u, vec![id(rank)]))
    }

    /// Contiguous records (a host dispatch's level 0): narrows `[lo, hi)`
    /// to the last record whose first workgroup (`NodeDispatch::starts`)
    /// is `<= l`, probing three starts a step. The three loads of a step
    /// are independent, so a step costs one memory round trip where a
    /// binary search's two steps cost two: the hello chain's 4 records take
    /// one step, fanout's 64k eight.
    fn search_starts(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, [lo_v, hi_v]: [Word; 2], l: Word) {
        let a = cx.abi;
        let u = a.u32;
        let one = ir.c_u32(1);
        let starts = b.addr_ptr(ir, a.p_u32, self.starts);
        let (lp, [lo, hi, span]) = narrowing_loop(ir, cx, b, [lo_v, hi_v]);
        // Probes at a quarter, half and three quarters of the span (at
        // least one past `lo`, below `hi` for any span of 2 or more), in
        // 64 bits: three times a span of 2^31 passes 32.
        let span64 = b.op(ir, Op::UConvert, a.u64, vec![id(span)]);
        let probes: Vec<Word> = (1..=3u64)
            .map(|k| {
                let k64 = ir.c_u64(k);
                let scaled = b.bin(ir, Op::IMul, a.u64, span64, k64);
                let two = ir.c_u64(2);
                let quarter = b.bin(ir, Op::ShiftRightLogical, a.u64, scaled, two);
                let quarter = b.op(ir, Op::UConvert, u, vec![id(quarter)]);
                let zero = ir.c_u32(0);
                let none = b.bin(ir, Op::IEqual, a.bool_, quarter, zero);
                let step = b.select(ir, u, none, one, quarter);
                b.bin(ir, Op::IAdd, u, lo, step)
            })
            .collect();
        let at: Vec<Word> = probes
            .iter()
            .map(|&p| {
                let sp = b.elem(ir, a.p_u32, starts, p);
                let start = b.load(ir, u, sp, 4);
                b.bin(ir, Op::ULessThanEqual, a.bool_, start, l)
            })
            .collect();
        // The starts grow: the new `lo` is the last probe at or before `l`,
        // the new `hi` the first past it.
        let (mut nlo, mut nhi) = (lo, hi);
        for (&p, &le) in probes.iter().zip(&at) {
            nlo = b.select(ir, u, le, p, nlo);
        }
        for (&p, &le) in probes.iter().zip(&at).rev() {
            nhi = b.select(ir, u, le, nhi, p);
        }
        b.store_plain(lo_v, nlo);
        b.store_plain(hi_v, nhi);
        b.end_loop(&lp);
    }

    /// Dynamic grids: the record of workgroup `l` among `rc` records (the
    /// last entry whose first workgroup is `<= l`: by division when every
    /// grid has the same size, `NodeDispatch::starts` of framed records,
    /// else by search: [`Self::search_starts`] over contiguous records'
    /// starts, binary over framed entries), fetched; its first workgroup goes to
    /// `out.workgroup_start`.
    pub fn fetch_by_workgroup(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, out: &Fetched, rc: Word, l: Word) {
        let a = cx.abi;
        let u = a.u32;
        let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
        let zero64 = ir.c_u64(0);
        let framed = b.op(ir, Op::LogicalNot, a.bool_, vec![id(self.contiguous)]);
        let sized = b.bin(ir, Op::INotEqual, a.bool_, self.starts, zero64);
        let uniform = b.bin(ir, Op::LogicalAnd, a.bool_, framed, sized);
        let size = b.op(ir, Op::UConvert, u, vec![id(self.starts)]);
        let size = b.select(ir, u, uniform, size, one);
        let e = b.bin(ir, Op::UDiv, u, l, size);
        let last = b.bin(ir, Op::ISub, u, rc, one);
        let past = b.bin(ir, Op::UGreaterThan, a.bool_, e, last);
        let e = b.select(ir, u, past, last, e);
        let e1 = b.bin(ir, Op::IAdd, u, e, one);
        let lo = b.select(ir, u, uniform, e, zero);
        let hi = b.select(ir, u, uniform, e1, rc);
        let lo_v = b.local(ir, u, lo);
        let hi_v = b.local(ir, u, hi);
        let m = b.begin_if(ir, self.contiguous);
        self.search_starts(ir, cx, b, [lo_v, hi_v], l);
        b.end_if(m);
        let m = b.begin_if(ir, framed);
        let (lp, [lo, hi, span]) = narrowing_loop(ir, cx, b, [lo_v, hi_v]);
        let half = b.bin(ir, Op::ShiftRightLogical, u, span, one);
        let mid = b.bin(ir, Op::IAdd, u, lo, half);
        let (s, _) = self.entry(ir, cx, b, mid);
        let le = b.bin(ir, Op::ULessThanEqual, a.bool_, s, l);
        let nlo = b.select(ir, u, le, mid, lo);
        let nhi = b.select(ir, u, le, hi, mid);
        b.store_plain(lo_v, nlo);
        b.store_plain(hi_v, nhi);
        b.end_loop(&lp);
        b.end_if(m);
        let e = b.op(ir, Op::Load, u, vec![id(lo_v)]);
        let (start, rank) = self.entry(ir, cx, b, e);
        self.fetch(ir, cx, b, out, rank);
        b.store_plain(out.workgroup_start, start);
    }
}

/// The head of a loop that narrows `[lo, hi)` (held in `lo_v`, `hi_v`)
/// while it spans more than one entry: the loop (its body is next) and
/// `lo`, `hi` and the span, loaded.
fn narrowing_loop(ir: &mut Ir, cx: &Ctx, b: &mut Body, [lo_v, hi_v]: [Word; 2]) -> (LoopLabels, [Word; 3]) {
    let a = cx.abi;
    let u = a.u32;
    let one = ir.c_u32(1);
    let lp = b.begin_loop(ir);
    let lo = b.op(ir, Op::Load, u, vec![id(lo_v)]);
    let hi = b.op(ir, Op::Load, u, vec![id(hi_v)]);
    let span = b.bin(ir, Op::ISub, u, hi, lo);
    let more = b.bin(ir, Op::UGreaterThan, a.bool_, span, one);
    b.loop_test(&lp, more);
    (lp, [lo, hi, span])
}

/// Coalescing: the workgroup's invocations fetch its records' payload
/// addresses into the Workgroup array (then a barrier, in uniform control flow).
#[allow(clippy::too_many_arguments)]
pub(super) fn gather(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    src: &Source,
    fetched: &Fetched,
    var: Word,
    per_workgroup: u32,
    [first, rc, runs]: [Word; 3],
) {
    let a = cx.abi;
    let lidx = b.op(ir, Op::Load, a.u32, vec![id(cx.real.lidx)]);
    let size = cx.facts.info.workgroup_size.iter().product::<u32>().max(1);
    let step = ir.c_u32(size);
    let p = ir.c_u32(per_workgroup);
    let m = b.begin_if(ir, runs);
    let tv = b.local(ir, a.u32, lidx);
    let lp = b.begin_loop(ir);
    let t = b.op(ir, Op::Load, a.u32, vec![id(tv)]);
    let more = b.bin(ir, Op::ULessThan, a.bool_, t, p);
    b.loop_test(&lp, more);
    let r = b.bin(ir, Op::IAdd, a.u32, first, t);
    let valid = b.bin(ir, Op::ULessThan, a.bool_, r, rc);
    let m2 = b.begin_if(ir, valid);
    src.fetch(ir, cx, b, fetched, r);
    let payload = b.op(ir, Op::Load, a.u64, vec![id(fetched.payload)]);
    let pw = ir.t_ptr(StorageClass::Workgroup, a.u64, None);
    let slot = b.op(ir, Op::AccessChain, pw, vec![id(var), id(t)]);
    b.store_plain(slot, payload);
    b.end_if(m2);
    let t1 = b.bin(ir, Op::IAdd, a.u32, t, step);
    b.store_plain(tv, t1);
    b.end_loop(&lp);
    b.end_if(m);
    b.workgroup_barrier(ir);
}
