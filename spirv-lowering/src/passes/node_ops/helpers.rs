//! What the helper functions of the `node_ops` pass share: the helpers
//! made so far ([`Helpers`]), each output's cached last allocation
//! ([`AllocCache`]), the output's targets as the linked graph gives them,
//! the frame pool and a target's frame geometry, claiming a frame, and
//! Workgroup variables and barriers.

use crate::abi::{NO_NODE, STATUS_FRAME_RANGE, STATUS_PAYLOAD_OVERFLOW};
use crate::codegen::{f, Body};
use crate::ir::{id, inst, Ir};
use crate::options::{GraphTables, OutputTargets};
use crate::passes::context::Ctx;
use crate::passes::status::raise;
use crate::runtime::{self, Geom, Pool, Push};
use rspirv::dr::Function;
use spirv::{Op, Scope, StorageClass, Word};
use std::collections::HashMap;

const BARRIER_SEMANTICS: u32 = 0x8 | 0x100; // AcquireRelease | WorkgroupMemory

/// The helper functions made so far, and the state they share.
#[derive(Default)]
pub(super) struct Helpers {
    pub alloc_inv: HashMap<(usize, Ranks), Word>,
    pub alloc_wg: HashMap<usize, Word>,
    pub valid: HashMap<usize, Word>,
    pub enqueue: HashMap<usize, Word>,
    pub length: HashMap<usize, Word>,
    pub frame_claim: Option<Word>,
    pub finish: Option<Word>,
    pub shared_u64: Option<Word>,
    pub shared_u32: Option<Word>,
    pub caches: HashMap<usize, AllocCache>,
    pub subgroup_lane: Option<Word>,
    /// The Workgroup arrays of `allocate`'s per-target counts and first ranks.
    pub histogram: Option<(Word, Word)>,
    pub new_fns: Vec<Function>,
}

/// How an allocation's invocations take their ranks (step 2 of `allocate`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum Ranks {
    /// The whole workgroup adds up its counts per target in Workgroup
    /// memory, with barriers: only where every invocation reaches the
    /// allocation (the specification asks for uniform control flow, but a
    /// barrier under a branch would hang a shader that does not keep to
    /// it); one atomic per target the workgroup sends to.
    Workgroup,
    /// The invocations of a subgroup group by target (packed thread nodes,
    /// whose lanes are workgroups of their own, and large node arrays).
    Subgroup,
    /// Each invocation on its own (invocation 0 of a Workgroup-visibility
    /// allocation, devices without subgroup operations).
    Single,
}

/// `Private` copies of an output's last allocation, so that enqueueing or
/// measuring what was just allocated (the usual case) reads nothing back
/// from memory.
#[derive(Clone, Copy)]
pub(super) struct AllocCache {
    /// Address of the first record (`u64`; 0: nothing cached).
    pub addr: Word,
    /// Target slot (`NO_NODE` when the allocation failed).
    pub slot: Word,
    pub count: Word,
    pub rank: Word,
    /// 1: a Workgroup-visibility allocation (invocation 0 enqueues it).
    pub workgroup: Word,
}

impl AllocCache {
    pub fn get(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, k: usize) -> AllocCache {
        if let Some(c) = h.caches.get(&k) {
            return *c;
        }
        let a = cx.abi;
        let none = ir.c_u64(0);
        let addr = ir.private_var_init(a.u64, none, &format!("node_output{k}_cached_address"));
        let mut var =
            |ty: Word, name: &str| ir.global_var(StorageClass::Private, ty, &format!("node_output{k}_{name}"));
        let c = AllocCache {
            addr,
            slot: var(a.u32, "cached_slot"),
            count: var(a.u32, "cached_count"),
            rank: var(a.u32, "cached_rank"),
            workgroup: var(a.u32, "cached_workgroup"),
        };
        h.caches.insert(k, c);
        c
    }
}

pub(super) fn finish_fn(h: &mut Helpers, mut func: Function, body: Body) {
    func.blocks = body.finish();
    h.new_fns.push(func);
}

pub(super) fn shared(ir: &mut Ir, slot: &mut Option<Word>, ty: Word, name: &str) -> Word {
    if let Some(w) = slot {
        return *w;
    }
    let v = ir.global_var(StorageClass::Workgroup, ty, name);
    *slot = Some(v);
    v
}

pub(super) fn barrier(ir: &mut Ir, b: &mut Body) {
    let wg = ir.c_u32(Scope::Workgroup as u32);
    let sem = ir.c_u32(BARRIER_SEMANTICS);
    b.push(inst(Op::ControlBarrier, None, None, vec![id(wg), id(wg), id(sem)]));
}

/// Output `k`'s targets as the linked graph gives them.
pub(super) fn targets<'a>(cx: &'a Ctx, k: usize) -> Option<(&'a GraphTables, &'a OutputTargets)> {
    cx.opts.tables.as_ref().and_then(|t| Some((t, t.outputs.get(k)?)))
}

/// Whether output `k`'s targets are pinned mesh nodes (known only with the
/// graph's tables, see `abi`'s "Mesh nodes drawn once").
pub(super) fn pinned(cx: &Ctx, k: usize) -> bool {
    targets(cx, k).is_some_and(|(_, t)| t.pinned)
}

/// The frame geometry of output `k`'s target `slot`: constants with the
/// graph, else read from the target's schedule.
pub(super) fn output_geometry(ir: &mut Ir, cx: &Ctx, b: &mut Body, k: usize, push: &runtime::Push, slot: Word) -> Geom {
    if let Some((_, t)) = targets(cx, k) {
        return Geom::known(ir, t.geometry);
    }
    let a = cx.abi;
    let sched_addr = b.load_field(ir, &a, a.s_ctx(), push.ctx, f::C_SCHEDULES);
    let scheds = b.addr_ptr(ir, a.p_schedule, sched_addr);
    let sp = b.elem(ir, a.p_schedule, scheds, slot);
    Geom::load(ir, &a, b, sp)
}

/// The frame pool, with the graph's frame shift and node count when known.
pub(super) fn pool(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &runtime::Push) -> Pool {
    let known = cx.opts.tables.as_ref().map(runtime::PoolFacts::of);
    Pool::load(ir, &cx.abi, b, (push.ctx, &cx.vars.ctx), known)
}

/// The frame keyed (`wtag`, `low`) claimed through `claim` when the key
/// `fits`, by a caller writing from index `j` of it (0: it opens the
/// frame); when there is none, the status says why (no free frame, or a
/// frame number past 32 bits). Returns (the frame, `bool` found).
pub(super) fn claim_or_raise(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    (pool, push): (&Pool, &Push),
    claim: Word,
    [wtag, low, fits, j]: [Word; 4],
) -> (Word, Word) {
    let a = cx.abi;
    let u = a.u32;
    let (zero, none) = (ir.c_u32(0), ir.c_u32(NO_NODE));
    let pin = cx.vars.ctx.pin(ir, &a, b);
    // The tag this level writes with: the live tags are its and the one
    // before, whatever key is claimed (a pinned one is keyed with the pin).
    let tag = cx.vars.ctx.tag(ir, &a, b);
    let one = ir.c_u32(1);
    let level_tag = b.bin(ir, Op::IAdd, u, tag, one);
    let frame = b.local(ir, u, none);
    let mf = b.begin_if(ir, fits);
    let claimed = runtime::claimed_counter(ir, &a, b, push);
    let opens = b.bin(ir, Op::IEqual, a.bool_, j, zero);
    let got = pool.claim(ir, (&a, b), claim, [wtag, low], [claimed, opens, pin, level_tag]);
    b.store_plain(frame, got);
    b.end_if(mf);
    let frame = b.op(ir, Op::Load, u, vec![id(frame)]);
    let ok = b.bin(ir, Op::INotEqual, a.bool_, frame, none);
    let (lost, range) = (ir.c_u32(STATUS_PAYLOAD_OVERFLOW), ir.c_u32(STATUS_FRAME_RANGE));
    let why = b.select(ir, u, fits, lost, range);
    let bits = b.select(ir, u, ok, zero, why);
    raise(ir, cx, b, push, bits);
    (frame, ok)
}
