//! SPIR-V for the runtime's shared structures, used by several passes: the
//! node push block's members, per-parity fields of the `GraphContext`, and
//! the frames records live in (`abi`'s module doc): the pool, a node's frame
//! geometry, and the helper functions that find a frame (consumers) or claim
//! it (producers). Everything here mirrors `abi`.

use crate::abi::{Field, FrameGeometry, COUNTER_STRIDE_BYTES, FRAME_MAX_PROBES, GRID_MAX_OFFSET_BYTES, NO_NODE};
use crate::codegen::{f, Abi, Body};
use crate::ir::{id, inst, Ir};
use crate::options::GraphTables;
use rspirv::dr::{Function, Operand};
use spirv::{FunctionControl, Op, Word};

/// How to reach the node push members (the variable the `push_block`
/// pass leaves).
#[derive(Debug, Clone, Copy)]
pub struct PushVar {
    pub var: Word,
    /// Member index of `NodePush::dispatch` (`ctx`, `level`, `slot` follow).
    pub member: u32,
    /// `OpTypePointer PushConstant u64`.
    pub ptr_u64: Word,
    /// `OpTypePointer PushConstant u32`.
    pub ptr_u32: Word,
}

/// The members of `abi::NodePush`, loaded.
#[derive(Debug, Clone, Copy)]
pub struct Push {
    /// `PSB NodeDispatch*` of this node at this level.
    pub dispatch: Word,
    /// `PSB GraphContext*`.
    pub ctx: Word,
    /// The level's number (`abi::LEVEL_MASK`).
    pub level: Word,
    pub slot: Word,
    /// `bool`: the level is odd (parity 1).
    pub odd: Word,
    /// `bool`: `abi::LEVEL_UNCOUNTED`.
    pub uncounted: Word,
    /// `bool`: `abi::LEVEL_NEXT_UNCOUNTED`.
    pub next_uncounted: Word,
}

/// Loads the node push block.
pub fn push(ir: &mut Ir, a: &Abi, pv: &PushVar, b: &mut Body) -> Push {
    let member = |ir: &mut Ir, b: &mut Body, k: u32, ptr: Word, ty: Word| {
        let m = ir.c_u32(pv.member + k);
        let p = b.op(ir, Op::AccessChain, ptr, vec![id(pv.var), id(m)]);
        b.op(ir, Op::Load, ty, vec![id(p)])
    };
    let d = member(ir, b, 0, pv.ptr_u64, a.u64);
    let c = member(ir, b, 1, pv.ptr_u64, a.u64);
    let word = member(ir, b, 2, pv.ptr_u32, a.u32);
    let slot = member(ir, b, 3, pv.ptr_u32, a.u32);
    let dispatch = b.addr_ptr(ir, a.p_dispatch, d);
    let ctx = b.addr_ptr(ir, a.p_ctx, c);
    let zero = ir.c_u32(0);
    let mut flag = |ir: &mut Ir, bits: u32| {
        let mask = ir.c_u32(bits);
        let bit = b.bin(ir, Op::BitwiseAnd, a.u32, word, mask);
        b.bin(ir, Op::INotEqual, a.bool_, bit, zero)
    };
    let odd = flag(ir, 1);
    let uncounted = flag(ir, crate::abi::LEVEL_UNCOUNTED);
    let next_uncounted = flag(ir, crate::abi::LEVEL_NEXT_UNCOUNTED);
    let mask = ir.c_u32(crate::abi::LEVEL_MASK);
    let level = b.bin(ir, Op::BitwiseAnd, a.u32, word, mask);
    Push { dispatch, ctx, level, slot, odd, uncounted, next_uncounted }
}

/// Pointer to the `GraphContext` array field starting at member `base` (two
/// members, one per parity), element `odd` (or its other one when `other`).
/// Computed from the address: a pointer select would need VariablePointers.
pub fn ctx_parity_ptr(ir: &mut Ir, a: &Abi, b: &mut Body, ctx: Word, base: u32, odd: Word, other: bool) -> Word {
    let fields = a.s_ctx().fields;
    let (kind, offset) = fields.get(base as usize).copied().unwrap_or((Field::U32, 0));
    let (ty, size) = match kind {
        Field::U64 => (a.p_u64, 8u64),
        _ => (a.p_u32, 4u64),
    };
    let addr = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(ctx)]);
    let (first, second) = (ir.c_u64(u64::from(offset)), ir.c_u64(u64::from(offset) + size));
    let (x, y) = if other { (first, second) } else { (second, first) };
    let off = b.select(ir, a.u64, odd, x, y);
    let at = b.bin(ir, Op::IAdd, a.u64, addr, off);
    b.addr_ptr(ir, ty, at)
}

/// Device address (`u64`) of a fixed table of this level's parity (or the
/// other one's when `other`) whose two copies lie at `offsets` from the
/// context (`GraphTables`): no load of the address from the context.
pub fn parity_table(ir: &mut Ir, a: &Abi, b: &mut Body, ctx: Word, offsets: [u64; 2], odd: Word, other: bool) -> Word {
    let addr = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(ctx)]);
    let (even_off, odd_off) = (ir.c_u64(offsets[0]), ir.c_u64(offsets[1]));
    let (x, y) = if other { (even_off, odd_off) } else { (odd_off, even_off) };
    let off = b.select(ir, a.u64, odd, x, y);
    b.bin(ir, Op::IAdd, a.u64, addr, off)
}

/// Device address of a `GraphContext` table of this level's parity (or the
/// other's): `known` offsets when the lowering has the graph's tables, else
/// loaded from the context field pair starting at member `base`.
#[allow(clippy::too_many_arguments)]
pub fn parity_table_or_field(
    ir: &mut Ir,
    a: &Abi,
    b: &mut Body,
    push: &Push,
    known: Option<[u64; 2]>,
    base: u32,
    other: bool,
) -> Word {
    match known {
        Some(offsets) => parity_table(ir, a, b, push.ctx, offsets, push.odd, other),
        None => {
            let p = ctx_parity_ptr(ir, a, b, push.ctx, base, push.odd, other);
            b.load(ir, a.u64, p, 8)
        }
    }
}

/// Device address of this level's `GraphContext::claimed` counter.
pub fn claimed_counter(ir: &mut Ir, a: &Abi, b: &mut Body, push: &Push) -> Word {
    let p = ctx_parity_ptr(ir, a, b, push.ctx, f::C_CLAIMED, push.odd, false);
    b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(p)])
}

/// Pointer to node `slot`'s counter in the counter array at address `base`
/// (`u64` counters when `wide`), `COUNTER_STRIDE_BYTES` apart.
pub fn counter(ir: &mut Ir, a: &Abi, b: &mut Body, base: Word, slot: Word, wide: bool) -> Word {
    let per = ir.c_u32(COUNTER_STRIDE_BYTES / if wide { 8 } else { 4 });
    let i = b.bin(ir, Op::IMul, a.u32, slot, per);
    let ty = if wide { a.p_u64 } else { a.p_u32 };
    let p = b.addr_ptr(ir, ty, base);
    b.elem(ir, ty, p, i)
}

/// Pointer to node `slot`'s largest-grid word next to its grid counter in
/// the grid counter array at address `base` (`abi::GRID_MAX_OFFSET_BYTES`).
pub fn grid_max(ir: &mut Ir, a: &Abi, b: &mut Body, base: Word, slot: Word) -> Word {
    let per = ir.c_u32(COUNTER_STRIDE_BYTES / 4);
    let i = b.bin(ir, Op::IMul, a.u32, slot, per);
    let off = ir.c_u32(GRID_MAX_OFFSET_BYTES / 4);
    let i = b.bin(ir, Op::IAdd, a.u32, i, off);
    let p = b.addr_ptr(ir, a.p_u32, base);
    b.elem(ir, a.p_u32, p, i)
}

/// `abi::fmix32`.
fn fmix32(ir: &mut Ir, a: &Abi, b: &mut Body, h: Word) -> Word {
    let m1 = ir.c_u32(0x85EB_CA6B);
    let m2 = ir.c_u32(0xC2B2_AE35);
    let (s16, s13) = (ir.c_u32(16), ir.c_u32(13));
    let mut h = h;
    for (shift, mul) in [(s16, Some(m1)), (s13, Some(m2)), (s16, None)] {
        let sh = b.bin(ir, Op::ShiftRightLogical, a.u32, h, shift);
        h = b.bin(ir, Op::BitwiseXor, a.u32, h, sh);
        if let Some(m) = mul {
            h = b.bin(ir, Op::IMul, a.u32, h, m);
        }
    }
    h
}

/// `abi::frame_home(tag, low, count)`.
fn frame_home(ir: &mut Ir, a: &Abi, b: &mut Body, tag: Word, low: Word, count: Word) -> Word {
    let golden = ir.c_u32(0x9E37_79B9);
    let tg = b.bin(ir, Op::IMul, a.u32, tag, golden);
    let x = b.bin(ir, Op::BitwiseXor, a.u32, low, tg);
    let h = fmix32(ir, a, b, x);
    let h64 = b.op(ir, Op::UConvert, a.u64, vec![id(h)]);
    let c64 = b.op(ir, Op::UConvert, a.u64, vec![id(count)]);
    let p = b.bin(ir, Op::IMul, a.u64, h64, c64);
    let c32 = ir.c_u32(32);
    let hi = b.bin(ir, Op::ShiftRightLogical, a.u64, p, c32);
    b.op(ir, Op::UConvert, a.u32, vec![id(hi)])
}

/// `abi::frame_key(tag, low)`.
fn key(ir: &mut Ir, a: &Abi, b: &mut Body, tag: Word, low: Word) -> Word {
    let t = b.op(ir, Op::UConvert, a.u64, vec![id(tag)]);
    let c32 = ir.c_u32(32);
    let t = b.bin(ir, Op::ShiftLeftLogical, a.u64, t, c32);
    let l = b.op(ir, Op::UConvert, a.u64, vec![id(low)]);
    b.bin(ir, Op::BitwiseOr, a.u64, t, l)
}

/// Starts a helper function `ret name(params)`; returns (id, params, function, body).
pub fn begin_fn(ir: &mut Ir, ret: Word, params: &[Word]) -> (Word, Vec<Word>, Function, Body) {
    let fty = ir.t_fn(ret, params);
    let fid = ir.id();
    let mut func = Function::new();
    func.def =
        Some(inst(Op::Function, Some(ret), Some(fid), vec![Operand::FunctionControl(FunctionControl::NONE), id(fty)]));
    let mut ps = vec![];
    for p in params {
        let w = ir.id();
        func.parameters.push(inst(Op::FunctionParameter, Some(*p), Some(w), vec![]));
        ps.push(w);
    }
    func.end = Some(inst(Op::FunctionEnd, None, None, vec![]));
    let l = ir.id();
    (fid, ps, func, Body::new(l))
}

/// Finishes a helper function started with [`begin_fn`] and adds it to the module.
pub fn finish_fn(ir: &mut Ir, mut func: Function, body: Body, name: &str) {
    let fid = func.def.as_ref().and_then(|d| d.result_id);
    func.blocks = body.finish();
    ir.m.functions.push(func);
    if let Some(fid) = fid {
        ir.name(fid, name);
    }
}

/// `node_frame_find(keys, count, homes, tag, low) -> u32` (`claim` false)
/// or `node_frame_claim(...)` (`claim` true): the pool slot of the frame
/// keyed (`tag`, `low`): its home when it has one (`abi::home_slot`), else a
/// hashed slot after the homes, or `NO_NODE` when it is not within
/// `FRAME_MAX_PROBES` of them (`abi::probe_start`). Claiming takes the first
/// free slot on the way (a compare-and-swap
/// of its key; a slot is free when its tag is neither `tag` nor `tag - 1`,
/// the two live ones while producers run) unless the frame is found first:
/// whoever claims a frame, everyone who asks for it gets the same slot. The
/// claimer counts the frame in the `u32` at `claimed` (the statistics'); a
/// home frame is counted by the caller that says it opens it (its rank 0).
/// Claims also leave the running dispatch's pinned frames alone (their tag
/// is the next parameter, see `abi`'s "Mesh nodes drawn once"). The live
/// tags are the level's (the last parameter: the tag its records are
/// written with, and the one before, which it reads), not the claimed key's:
/// a claim of a pinned frame (keyed with the pin) must not take the slot of
/// a frame the level is still reading or writing.
pub fn frame_fn(ir: &mut Ir, a: &Abi, claim: bool) -> Word {
    let u = a.u32;
    let params: &[Word] = if claim { &[a.u64, u, u, u, u, a.u64, a.bool_, u, u] } else { &[a.u64, u, u, u, u] };
    let (fid, ps, func, mut b) = begin_fn(ir, u, params);
    let (keys_addr, count, homes, tag, low) = (ps[0], ps[1], ps[2], ps[3], ps[4]);
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let none = ir.c_u32(NO_NODE);
    let found = b.local(ir, u, none);
    let at_home = b.bin(ir, Op::ULessThan, a.bool_, low, homes);
    let parity = b.bin(ir, Op::BitwiseAnd, u, tag, one);
    let home_base = b.bin(ir, Op::IMul, u, parity, homes);
    let home_slot = b.bin(ir, Op::IAdd, u, home_base, low);
    let mh = b.begin_if(ir, at_home);
    b.store_plain(found, home_slot);
    if claim {
        // Counted by the allocation that opens it (rank 0): homes are
        // never claimed, the statistics count them all the same.
        let mo = b.begin_if(ir, ps[6]);
        let cp = b.addr_ptr(ir, a.p_u32, ps[5]);
        b.atomic(ir, Op::AtomicIAdd, u, cp, one);
        b.end_if(mo);
    }
    b.end_if(mh);
    let keys = b.addr_ptr(ir, a.p_u64, keys_addr);
    let want = key(ir, a, &mut b, tag, low);
    let first = b.bin(ir, Op::IAdd, u, homes, homes);
    let hashed = b.bin(ir, Op::ISub, u, count, first);
    let start = frame_home(ir, a, &mut b, tag, low, hashed);
    let start = b.bin(ir, Op::IAdd, u, first, start);
    let iv = b.local(ir, u, start);
    let kv = b.local(ir, u, zero);
    let lp = b.begin_loop(ir);
    let k = b.op(ir, Op::Load, u, vec![id(kv)]);
    let max = ir.c_u32(FRAME_MAX_PROBES);
    let more = b.bin(ir, Op::ULessThan, a.bool_, k, max);
    let fv = b.op(ir, Op::Load, u, vec![id(found)]);
    let missing = b.bin(ir, Op::IEqual, a.bool_, fv, none);
    let go = b.bin(ir, Op::LogicalAnd, a.bool_, more, missing);
    b.loop_test(&lp, go);
    let i = b.op(ir, Op::Load, u, vec![id(iv)]);
    let kp = b.elem(ir, a.p_u64, keys, i);
    if claim {
        // A plain load: a stale value only sends the compare-and-swap to
        // find out (it fails and returns the key there), and atomic loads of
        // a level's few hot keys queued in the L2 like read-modify-writes.
        let seen = b.load(ir, a.u64, kp, 8);
        let hit = b.bin(ir, Op::IEqual, a.bool_, seen, want);
        let c32 = ir.c_u32(32);
        let hi = b.bin(ir, Op::ShiftRightLogical, a.u64, seen, c32);
        let hi = b.op(ir, Op::UConvert, u, vec![id(hi)]);
        let writing = ps[8];
        let reading = b.bin(ir, Op::ISub, u, writing, one);
        let w = b.bin(ir, Op::INotEqual, a.bool_, hi, writing);
        let r = b.bin(ir, Op::INotEqual, a.bool_, hi, reading);
        let free = b.bin(ir, Op::LogicalAnd, a.bool_, w, r);
        // Nor the running dispatch's pinned frames.
        let p = b.bin(ir, Op::INotEqual, a.bool_, hi, ps[7]);
        let free = b.bin(ir, Op::LogicalAnd, a.bool_, free, p);
        let m = b.begin_if(ir, free);
        let old = b.atomic_cas(ir, a.u64, kp, want, seen);
        let won = b.bin(ir, Op::IEqual, a.bool_, old, seen);
        let mw = b.begin_if(ir, won);
        let cp = b.addr_ptr(ir, a.p_u32, ps[5]);
        b.atomic(ir, Op::AtomicIAdd, u, cp, one);
        b.end_if(mw);
        let theirs = b.bin(ir, Op::IEqual, a.bool_, old, want);
        let got = b.bin(ir, Op::LogicalOr, a.bool_, won, theirs);
        let nf = b.select(ir, u, got, i, none);
        b.store_plain(found, nf);
        b.end_if(m);
        let mh = b.begin_if(ir, hit);
        b.store_plain(found, i);
        b.end_if(mh);
    } else {
        let seen = b.load(ir, a.u64, kp, 8);
        let hit = b.bin(ir, Op::IEqual, a.bool_, seen, want);
        let nf = b.select(ir, u, hit, i, none);
        b.store_plain(found, nf);
    }
    let i1 = b.bin(ir, Op::IAdd, u, i, one);
    let wrap = b.bin(ir, Op::IEqual, a.bool_, i1, count);
    let i1 = b.select(ir, u, wrap, first, i1);
    b.store_plain(iv, i1);
    let k1 = b.bin(ir, Op::IAdd, u, k, one);
    b.store_plain(kv, k1);
    b.end_loop(&lp);
    let result = b.op(ir, Op::Load, u, vec![id(found)]);
    b.end(inst(Op::ReturnValue, None, None, vec![id(result)]), None);
    finish_fn(ir, func, b, if claim { "node_frame_claim" } else { "node_frame_find" });
    fid
}

/// A node's frame geometry as SPIR-V values: constants when the lowering
/// knows the graph, else loaded from the node's `NodeSchedule`.
#[derive(Debug, Clone, Copy)]
pub struct Geom {
    pub stride: Word,
    pub per_frame: Word,
    pub tail: Word,
    /// Offset of the meta words in a frame.
    pub meta_offset: Word,
    /// `bool`: frames keep a meta word per record.
    pub meta: Word,
    /// `bool`: the records are not stored.
    pub frameless: Word,
    /// What the lowering knows: `Some` when these are constants.
    pub known: Option<FrameGeometry>,
}

impl Geom {
    /// Constants for `g`.
    pub fn known(ir: &mut Ir, g: FrameGeometry) -> Geom {
        Geom {
            stride: ir.c_u32(g.stride),
            per_frame: ir.c_u32(g.per_frame.max(1)),
            tail: ir.c_u32(g.tail),
            meta_offset: ir.c_u32(g.meta_offset()),
            meta: ir.c_bool(g.meta),
            frameless: ir.c_bool(g.frameless),
            known: Some(g),
        }
    }

    /// Loaded from the `NodeSchedule` at `schedule` (a `PSB NodeSchedule*`).
    pub fn load(ir: &mut Ir, a: &Abi, b: &mut Body, schedule: Word) -> Geom {
        let s = a.s_schedule();
        let stride = b.load_field(ir, a, s, schedule, f::SC_INPUT_STRIDE);
        let per_frame = b.load_field(ir, a, s, schedule, f::SC_PER_FRAME);
        let one = ir.c_u32(1);
        let zero = ir.c_u32(0);
        let is0 = b.bin(ir, Op::IEqual, a.bool_, per_frame, zero);
        let per_frame = b.select(ir, a.u32, is0, one, per_frame);
        let tail = b.load_field(ir, a, s, schedule, f::SC_TAIL);
        let flags = b.load_field(ir, a, s, schedule, f::SC_FLAGS);
        let bit = |ir: &mut Ir, b: &mut Body, v: u32| {
            let c = ir.c_u32(v);
            let x = b.bin(ir, Op::BitwiseAnd, a.u32, flags, c);
            b.bin(ir, Op::INotEqual, a.bool_, x, zero)
        };
        let meta = bit(ir, b, crate::abi::SCHEDULE_FLAG_META);
        let frameless = bit(ir, b, crate::abi::SCHEDULE_FLAG_FRAMELESS);
        let all = b.bin(ir, Op::IAdd, a.u32, per_frame, tail);
        let meta_offset = b.bin(ir, Op::IMul, a.u32, all, stride);
        Geom { stride, per_frame, tail, meta_offset, meta, frameless, known: None }
    }

    /// Whether frames may keep meta words (false only when known not to).
    pub fn may_have_meta(&self) -> bool {
        self.known.is_none_or(|g| g.meta)
    }

    /// Whether allocations may run into a tail.
    pub fn may_have_tail(&self) -> bool {
        self.known.is_none_or(|g| g.tail > 0)
    }

    /// Whether records may be stored at all.
    pub fn may_be_stored(&self) -> bool {
        self.known.is_none_or(|g| !g.frameless)
    }
}

/// The `GraphContext` fields that the record code reads wherever it runs
/// (record fetch, allocation, enqueue), in `Private` variables the
/// prologue fills first thing: their loads are issued at the kernel's
/// start, not on the path from the node's code to its allocation.
#[derive(Debug, Clone, Copy)]
pub struct CtxVars {
    tag: Word,
    pinned: Word,
    pool: Word,
    keys: Word,
    frame_count: Word,
    sink: Word,
}

impl CtxVars {
    pub fn declare(ir: &mut Ir, a: &Abi) -> CtxVars {
        let var = |ir: &mut Ir, ty: Word, name: &str| ir.global_var(spirv::StorageClass::Private, ty, name);
        CtxVars {
            tag: var(ir, a.u32, "node_ctx_tag"),
            pinned: var(ir, a.u32, "node_ctx_pinned"),
            pool: var(ir, a.u64, "node_ctx_pool"),
            keys: var(ir, a.u64, "node_ctx_keys"),
            frame_count: var(ir, a.u32, "node_ctx_frame_count"),
            sink: var(ir, a.u64, "node_ctx_sink"),
        }
    }

    /// Loads the fields from the context at `ctx` (the prologue's first step).
    pub fn fill(&self, ir: &mut Ir, a: &Abi, b: &mut Body, ctx: Word) {
        let s = a.s_ctx();
        for (var, field) in [
            (self.tag, f::C_TAG),
            (self.pinned, f::C_PINNED),
            (self.pool, f::C_POOL),
            (self.keys, f::C_KEYS),
            (self.frame_count, f::C_FRAME_COUNT),
            (self.sink, f::C_SINK),
        ] {
            let v = b.load_field(ir, a, s, ctx, field);
            b.store_plain(var, v);
        }
    }

    /// The tag of the frames this level reads (`GraphContext::tag`).
    pub fn tag(&self, ir: &mut Ir, a: &Abi, b: &mut Body) -> Word {
        b.op(ir, Op::Load, a.u32, vec![id(self.tag)])
    }

    /// After `fill`, in a level that counts nothing (`uncounted`,
    /// `abi::LEVEL_UNCOUNTED`): the tag the finisher before it moved on by
    /// two, less the one it would have added after this level.
    pub fn step_back_tag(&self, ir: &mut Ir, a: &Abi, b: &mut Body, uncounted: Word) {
        let tag = self.tag(ir, a, b);
        let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
        let back = b.select(ir, a.u32, uncounted, one, zero);
        let tag = b.bin(ir, Op::ISub, a.u32, tag, back);
        b.store_plain(self.tag, tag);
    }

    /// `GraphContext::pinned` as the kernel started.
    pub fn pinned(&self, ir: &mut Ir, a: &Abi, b: &mut Body) -> Word {
        b.op(ir, Op::Load, a.u32, vec![id(self.pinned)])
    }

    /// The tag of the running dispatch's pinned frames, `PIN_TAG | pinned`.
    pub fn pin(&self, ir: &mut Ir, a: &Abi, b: &mut Body) -> Word {
        let pinned = self.pinned(ir, a, b);
        let bit = ir.c_u32(crate::abi::PIN_TAG);
        b.bin(ir, Op::BitwiseOr, a.u32, pinned, bit)
    }

    /// The tag of the pinned frames a draw after the levels reads (the last
    /// finisher has advanced `pinned` by then).
    pub fn pin_drawn(&self, ir: &mut Ir, a: &Abi, b: &mut Body) -> Word {
        let pinned = self.pinned(ir, a, b);
        let one = ir.c_u32(1);
        let before = b.bin(ir, Op::ISub, a.u32, pinned, one);
        let bit = ir.c_u32(crate::abi::PIN_TAG);
        b.bin(ir, Op::BitwiseOr, a.u32, before, bit)
    }

    /// Device address of the sink (`GraphContext::sink`).
    pub fn sink(&self, ir: &mut Ir, a: &Abi, b: &mut Body) -> Word {
        b.op(ir, Op::Load, a.u64, vec![id(self.sink)])
    }
}

/// What the lowering knows of a graph's frame pool when it has the graph's
/// tables.
#[derive(Debug, Clone, Copy)]
pub struct PoolFacts {
    pub frame_shift: u32,
    pub node_count: u32,
    pub homes: u32,
}

impl PoolFacts {
    /// What the kernel's frame code may take as constants from `t`.
    pub fn of(t: &GraphTables) -> Self {
        PoolFacts { frame_shift: t.frame_shift, node_count: t.node_count, homes: t.homes }
    }
}

/// The frame pool as SPIR-V values, loaded once where it is used.
#[derive(Debug, Clone, Copy)]
pub struct Pool {
    pub pool: Word,
    pub keys: Word,
    pub count: Word,
    /// Home frames per parity (`GraphContext::homes`).
    pub homes: Word,
    /// log2 of a frame's bytes.
    pub shift: Word,
    /// `u32`: frame bytes - 4 (the tail word's offset).
    pub tail_word: Word,
    /// `u32`: namespaces of frame keys (twice the node count).
    pub namespaces: Word,
    /// `u32`: grid entries a frame holds.
    pub entries_per_frame: Word,
}

impl Pool {
    /// The pool's fields, from `vars` and the context at `ctx`; `known`
    /// gives the graph's [`PoolFacts`] when the lowering knows the graph.
    pub fn load(ir: &mut Ir, a: &Abi, b: &mut Body, (ctx, vars): (Word, &CtxVars), known: Option<PoolFacts>) -> Pool {
        let s = a.s_ctx();
        let pool = b.op(ir, Op::Load, a.u64, vec![id(vars.pool)]);
        let keys = b.op(ir, Op::Load, a.u64, vec![id(vars.keys)]);
        let count = b.op(ir, Op::Load, a.u32, vec![id(vars.frame_count)]);
        let homes = match known {
            Some(k) => ir.c_u32(k.homes),
            None => b.load_field(ir, a, s, ctx, f::C_HOMES),
        };
        let known = known.map(|k| (k.frame_shift, k.node_count));
        let (shift, namespaces, tail_word, entries_per_frame) = match known {
            Some((shift, nodes)) => {
                let bytes = 1u32 << shift;
                (ir.c_u32(shift), ir.c_u32(2 * nodes), ir.c_u32(bytes - 4), ir.c_u32((bytes - 4) / 8))
            }
            None => {
                let shift = b.load_field(ir, a, s, ctx, f::C_FRAME_SHIFT);
                let nodes = b.load_field(ir, a, s, ctx, f::C_NODE_COUNT);
                let two = ir.c_u32(2);
                let namespaces = b.bin(ir, Op::IMul, a.u32, nodes, two);
                let one = ir.c_u32(1);
                let bytes = b.bin(ir, Op::ShiftLeftLogical, a.u32, one, shift);
                let four = ir.c_u32(4);
                let tail_word = b.bin(ir, Op::ISub, a.u32, bytes, four);
                let eight = ir.c_u32(8);
                let entries = b.bin(ir, Op::UDiv, a.u32, tail_word, eight);
                (shift, namespaces, tail_word, entries)
            }
        };
        Pool { pool, keys, count, homes, shift, tail_word, namespaces, entries_per_frame }
    }

    /// The key's low word of frame `k` of namespace `ns`, and whether it fits 32 bits.
    pub fn key_low(&self, ir: &mut Ir, a: &Abi, b: &mut Body, ns: Word, k: Word) -> (Word, Word) {
        let k64 = b.op(ir, Op::UConvert, a.u64, vec![id(k)]);
        let n64 = b.op(ir, Op::UConvert, a.u64, vec![id(self.namespaces)]);
        let s64 = b.op(ir, Op::UConvert, a.u64, vec![id(ns)]);
        let m = b.bin(ir, Op::IMul, a.u64, k64, n64);
        let low64 = b.bin(ir, Op::IAdd, a.u64, m, s64);
        let limit = ir.c_u64(u64::from(u32::MAX));
        let fits = b.bin(ir, Op::ULessThanEqual, a.bool_, low64, limit);
        (b.op(ir, Op::UConvert, a.u32, vec![id(low64)]), fits)
    }

    /// Device address of byte `offset` of frame `frame`.
    pub fn address(&self, ir: &mut Ir, a: &Abi, b: &mut Body, frame: Word, offset: Word) -> Word {
        let f64_ = b.op(ir, Op::UConvert, a.u64, vec![id(frame)]);
        let base = b.bin(ir, Op::ShiftLeftLogical, a.u64, f64_, self.shift);
        let o64 = b.op(ir, Op::UConvert, a.u64, vec![id(offset)]);
        let at = b.bin(ir, Op::IAdd, a.u64, base, o64);
        b.bin(ir, Op::IAdd, a.u64, self.pool, at)
    }

    /// Calls `node_frame_find` ([`frame_fn`]).
    pub fn find(&self, ir: &mut Ir, a: &Abi, b: &mut Body, fun: Word, tag: Word, low: Word) -> Word {
        b.op(
            ir,
            Op::FunctionCall,
            a.u32,
            vec![id(fun), id(self.keys), id(self.count), id(self.homes), id(tag), id(low)],
        )
    }

    /// Calls `node_frame_claim` ([`frame_fn`]), counting a claim at
    /// `claimed` (a home frame when `opens`, a `bool`: the caller's
    /// allocation starts at the frame's first record); `pin` is the running
    /// dispatch's pinned tag (`PIN_TAG | GraphContext::pinned`).
    pub fn claim(
        &self,
        ir: &mut Ir,
        (a, b): (&Abi, &mut Body),
        fun: Word,
        [tag, low]: [Word; 2],
        [claimed, opens, pin, level_tag]: [Word; 4],
    ) -> Word {
        let fixed = [fun, self.keys, self.count, self.homes, tag, low, claimed, opens, pin, level_tag];
        let ops = fixed.iter().map(|&w| id(w)).collect();
        b.op(ir, Op::FunctionCall, a.u32, ops)
    }
}
