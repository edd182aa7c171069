//! The kernel's entry: a prologue, the node's own code, and an epilogue.
//!
//! Matches: the entry function. Emits a new entry function (it takes over the
//! entry point's id, so the execution modes stay attached) that:
//! 1. computes the linear workgroup id from the real builtins and whether the
//!    node's code runs (`L < NodeDispatch::workgroup_count` and a record
//!    left), picks this workgroup's record(s) per launch mode (static grid:
//!    division; dynamic grid: binary search over the records' workgroup
//!    starts; coalescing: `L*P`; packed thread nodes: `L*W + lane`), fetches
//!    them (listed: the `RecordRef`; indexed: a record-index lookup of
//!    (tag, key node, rank)) and stores the payload address(es) where the
//!    payload pass reads them, the record count, remaining recursion and grid
//!    size into their `Private` variables, and the application's view of
//!    WorkgroupId, NumWorkgroups, LocalInvocationId/Index, GlobalInvocationId,
//!    RemainingRecursionLevelsAMDX and ShaderIndexAMDX;
//! 2. calls the original entry function (now an ordinary function) when the
//!    node's code runs;
//! 3. counts the workgroup done (`GraphContext::done`, after a barrier so
//!    every invocation has finished) and, in the level's last workgroup,
//!    calls the level finisher (see `finisher`). A mesh node (no finisher)
//!    skips this step.
//!
//! For packed thread nodes the `LocalSize` becomes (W, 1, 1). Afterwards the
//! application's code runs unchanged with node semantics.

use super::builtins::AppBuiltins;
use super::payload::InputLowering;
use super::Ctx;
use crate::abi::{DONE_GROUPS, DONE_GROUP_STRIDE_WORDS, RECORDS_LISTED};
use crate::analyze::LaunchMode;
use crate::codegen::{f, Body};
use crate::error::LowerError;
use crate::ir::{id, inst, lit, map_operand_ids, op_id, Ir};
use crate::runtime::{self, ctx_parity_ptr, Push};
use rspirv::dr::{Function, Operand};
use spirv::{BuiltIn, Decoration, ExecutionMode, FunctionControl, Op, StorageClass, Word};

/// What a fetched record left in the prologue's variables.
struct Fetched {
    payload: Word,
    remaining: Word,
    workgroup_start: Word,
}

pub fn run(
    ir: &mut Ir,
    cx: &Ctx,
    app: &AppBuiltins,
    input: InputLowering,
    finisher: Option<Word>,
) -> Result<[u32; 3], LowerError> {
    let a = cx.abi;
    let info = &cx.facts.info;
    let entry = cx.facts.entry_fn;
    // The original entry function becomes an ordinary function with a new id.
    let inner = ir.id();
    let fpos = ir.m.functions.iter().position(|f| f.def.as_ref().and_then(|d| d.result_id) == Some(entry)).ok_or_else(
        || LowerError::Invalid {
            entry: cx.entry(),
            opcode: "OpFunction".into(),
            result_id: Some(entry),
            detail: "entry function has no body".into(),
        },
    )?;
    for func in &mut ir.m.functions {
        if let Some(d) = func.def.as_mut().filter(|d| d.result_id == Some(entry)) {
            d.result_id = Some(inner);
        }
        for i in func.blocks.iter_mut().flat_map(|b| b.instructions.iter_mut()) {
            if i.class.opcode == Op::FunctionCall {
                map_operand_ids(i, &|w| if w == entry { inner } else { w });
            }
        }
    }
    let fetched = Fetched {
        payload: ir.global_var(StorageClass::Private, a.u64, "node_fetched_payload"),
        remaining: ir.global_var(StorageClass::Private, a.u32, "node_fetched_remaining"),
        workgroup_start: ir.global_var(StorageClass::Private, a.u32, "node_fetched_workgroup_start"),
    };

    let label = ir.id();
    let mut b = Body::new(label);
    let zero = ir.c_u32(0);
    let one = ir.c_u32(1);
    let push = runtime::push(ir, &a, &cx.push, &mut b);
    let src = Source::load(ir, cx, &mut b, &push);
    let disp = push.dispatch;
    let wc = b.load_field(ir, &a, a.s_dispatch(), disp, f::D_WORKGROUP_COUNT);
    let rc = b.load_field(ir, &a, a.s_dispatch(), disp, f::D_RECORD_COUNT);
    let wg = b.op(ir, Op::Load, a.v3, vec![id(cx.real.wg)]);
    let nwg = b.op(ir, Op::Load, a.v3, vec![id(cx.real.nwg)]);
    let ex = |ir: &mut Ir, b: &mut Body, v: Word, k: u32| b.op(ir, Op::CompositeExtract, a.u32, vec![id(v), lit(k)]);
    let (wx, wy, wz) = (ex(ir, &mut b, wg, 0), ex(ir, &mut b, wg, 1), ex(ir, &mut b, wg, 2));
    let (nx, ny) = (ex(ir, &mut b, nwg, 0), ex(ir, &mut b, nwg, 1));
    let t1 = b.bin(ir, Op::IMul, a.u32, wy, nx);
    let nxy = b.bin(ir, Op::IMul, a.u32, nx, ny);
    let t2 = b.bin(ir, Op::IMul, a.u32, wz, nxy);
    let t3 = b.bin(ir, Op::IAdd, a.u32, wx, t1);
    let l = b.bin(ir, Op::IAdd, a.u32, t3, t2);
    let real_lidx = b.op(ir, Op::Load, a.u32, vec![id(cx.real.lidx)]);
    let static_grid = match (&info.launch, cx.facts.static_grid_ids) {
        (LaunchMode::BroadcastStatic { .. }, Some(g)) => {
            let gxy = b.bin(ir, Op::IMul, a.u32, g[0], g[1]);
            let gsz = b.bin(ir, Op::IMul, a.u32, gxy, g[2]);
            Some((g, gsz))
        }
        _ => None,
    };
    let first = match (&info.launch, static_grid) {
        (LaunchMode::BroadcastStatic { .. }, Some((_, gsz))) => b.bin(ir, Op::UDiv, a.u32, l, gsz),
        (LaunchMode::BroadcastDynamic { .. }, _) => zero,
        (LaunchMode::Coalescing { max_payloads }, _) => {
            let p = ir.c_u32(*max_payloads);
            b.bin(ir, Op::IMul, a.u32, l, p)
        }
        (LaunchMode::Thread, _) if cx.packed => {
            let w = ir.c_u32(cx.opts.thread_pack_width);
            let lw = b.bin(ir, Op::IMul, a.u32, l, w);
            b.bin(ir, Op::IAdd, a.u32, lw, real_lidx)
        }
        _ => l,
    };
    let in_wg = b.bin(ir, Op::ULessThan, a.bool_, l, wc);
    let in_rec = b.bin(ir, Op::ULessThan, a.bool_, first, rc);
    let runs = b.bin(ir, Op::LogicalAnd, a.bool_, in_wg, in_rec);
    let runs_var = b.local(ir, a.bool_, runs);

    // Record selection and the Private variables the code reads.
    let ones = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(one), id(one), id(one)]);
    let zeros = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(zero), id(zero), id(zero)]);
    let wgid_v = b.local(ir, a.v3, zeros);
    let grid_v = b.local(ir, a.v3, ones);
    let remaining_v = b.local(ir, a.u32, zero);
    let coalesced = matches!(info.launch, LaunchMode::Coalescing { .. });
    let m = b.begin_if(ir, runs);
    let (wgid, grid, total, count) = match &info.launch {
        LaunchMode::BroadcastStatic { .. } => {
            let (g, gsz) = static_grid.unwrap_or(([one, one, one], one));
            src.fetch(ir, cx, &mut b, &fetched, first);
            let local = b.bin(ir, Op::UMod, a.u32, l, gsz);
            let wgid = decompose(ir, &mut b, cx, local, g[0], g[1]);
            let grid = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(g[0]), id(g[1]), id(g[2])]);
            (wgid, grid, gsz, one)
        }
        LaunchMode::BroadcastDynamic { .. } => {
            let r = search(ir, cx, &mut b, &src, rc, l);
            src.fetch(ir, cx, &mut b, &fetched, r);
            let start = b.op(ir, Op::Load, a.u32, vec![id(fetched.workgroup_start)]);
            let local = b.bin(ir, Op::ISub, a.u32, l, start);
            let payload = b.op(ir, Op::Load, a.u64, vec![id(fetched.payload)]);
            let (gx, gy, gz) = read_grid(ir, &mut b, cx, payload)?;
            let wgid = decompose(ir, &mut b, cx, local, gx, gy);
            let grid = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(gx), id(gy), id(gz)]);
            let gxy = b.bin(ir, Op::IMul, a.u32, gx, gy);
            let total = b.bin(ir, Op::IMul, a.u32, gxy, gz);
            (wgid, grid, total, one)
        }
        LaunchMode::Coalescing { max_payloads } => {
            let p = ir.c_u32(*max_payloads);
            let left = b.bin(ir, Op::ISub, a.u32, rc, first);
            let lt = b.bin(ir, Op::ULessThan, a.bool_, left, p);
            let n = b.op(ir, Op::Select, a.u32, vec![id(lt), id(left), id(p)]);
            src.fetch(ir, cx, &mut b, &fetched, first);
            (zeros, ones, one, n)
        }
        LaunchMode::Thread => {
            src.fetch(ir, cx, &mut b, &fetched, first);
            (zeros, ones, one, one)
        }
    };
    let remaining = b.op(ir, Op::Load, a.u32, vec![id(fetched.remaining)]);
    b.store_plain(remaining_v, remaining);
    b.store_plain(wgid_v, wgid);
    b.store_plain(grid_v, grid);
    b.store_plain(cx.vars.rec_count, count);
    b.store_plain(cx.vars.wg_total, total);
    let payload = b.op(ir, Op::Load, a.u64, vec![id(fetched.payload)]);
    if let Some(h) = input.holder {
        let v = b.addr_ptr(ir, input.ptr_type, payload);
        b.store_plain(h, v);
    }
    if let (Some(var), false) = (input.addresses, coalesced) {
        b.store_plain(var, payload);
    }
    b.end_if(m);
    if let (Some(var), true) = (input.addresses, coalesced) {
        gather(ir, cx, &mut b, &src, &fetched, var, input.per_workgroup, first, rc, runs);
    }
    let remaining = b.op(ir, Op::Load, a.u32, vec![id(remaining_v)]);
    b.store_plain(cx.vars.remaining, remaining);
    let wgid = b.op(ir, Op::Load, a.v3, vec![id(wgid_v)]);
    let grid = b.op(ir, Op::Load, a.v3, vec![id(grid_v)]);
    app_builtins(ir, cx, &mut b, app, wgid, grid, remaining, real_lidx);

    match finisher {
        Some(finisher) => {
            // What the epilogue needs, loaded before the node's code runs (both
            // are fixed for the level): off the path from the code's end to the
            // finisher.
            let base = b.load_field(ir, &a, a.s_dispatch(), disp, f::D_WORKGROUP_BASE);
            let numbered = b.bin(ir, Op::IAdd, a.u32, base, l);
            let launched_p = ctx_parity_ptr(ir, &a, &mut b, push.ctx, f::C_LAUNCHED, push.odd, false);
            let launched = b.load(ir, a.u32, launched_p, 4);

            // The node's own code.
            let runs = b.op(ir, Op::Load, a.bool_, vec![id(runs_var)]);
            let m = b.begin_if(ir, runs);
            call(ir, &mut b, a.void, inner, &[]);
            b.end_if(m);
            epilogue(ir, cx, &mut b, &push, [numbered, launched], finisher);
        }
        None => {
            // A mesh node: drawn, never counted done (it is no part of a
            // compute level, see `abi`). A workgroup without a record never
            // executes OpSetMeshOutputsEXT and so emits nothing. (Saying so
            // with a second OpSetMeshOutputsEXT 0 0 on that path made
            // lavapipe 25.0.7 drop every workgroup's outputs.)
            let runs = b.op(ir, Op::Load, a.bool_, vec![id(runs_var)]);
            let m = b.begin_if(ir, runs);
            call(ir, &mut b, a.void, inner, &[]);
            b.end_if(m);
        }
    }
    b.end(inst(Op::Return, None, None, vec![]), None);

    let fty = ir.t_fn(a.void, &[]);
    let mut wrapper = Function::new();
    wrapper.def = Some(inst(
        Op::Function,
        Some(a.void),
        Some(entry),
        vec![Operand::FunctionControl(FunctionControl::NONE), id(fty)],
    ));
    wrapper.end = Some(inst(Op::FunctionEnd, None, None, vec![]));
    wrapper.blocks = b.finish();
    ir.m.functions.insert(fpos, wrapper);
    ir.name(inner, &format!("{}_node_code", cx.entry()));

    if cx.packed {
        ir.m.execution_modes.retain(|m| {
            !(op_id(m, 0) == Some(entry)
                && matches!(
                    m.operands.get(1),
                    Some(Operand::ExecutionMode(ExecutionMode::LocalSize | ExecutionMode::LocalSizeId))
                ))
        });
        let w = cx.opts.thread_pack_width;
        ir.m.execution_modes.push(inst(
            Op::ExecutionMode,
            None,
            None,
            vec![id(entry), Operand::ExecutionMode(ExecutionMode::LocalSize), lit(w), lit(1), lit(1)],
        ));
        ir.m.annotations.retain(|d| {
            !(d.class.opcode == Op::Decorate
                && matches!(d.operands.get(1), Some(Operand::Decoration(Decoration::BuiltIn)))
                && matches!(d.operands.get(2), Some(Operand::BuiltIn(BuiltIn::WorkgroupSize))))
        });
        return Ok([w, 1, 1]);
    }
    Ok(info.workgroup_size)
}

fn call(ir: &mut Ir, b: &mut Body, ret: Word, f: Word, args: &[Word]) -> Word {
    let mut ops = vec![id(f)];
    ops.extend(args.iter().map(|a| id(*a)));
    b.op(ir, Op::FunctionCall, ret, ops)
}

/// What fetching a record needs, loaded once by the prologue (the dispatch's
/// fields and the record index's location) so that the searches below do
/// not reload them at every step.
struct Source {
    /// `bool`: records are listed (`RecordRef`s), not indexed.
    listed: Word,
    /// Listed: address of the `RecordRef` array.
    records: Word,
    /// Indexed: the key node, tag and ring half of the records.
    key: Word,
    tag: Word,
    input_base: Word,
    /// Indexed: the index table's address and mask.
    table: Word,
    mask: Word,
    /// Where a record the index does not hold reads from.
    sink: Word,
    /// `node_index_lookup`.
    lookup: Word,
}

impl Source {
    fn load(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push) -> Source {
        let a = cx.abi;
        let d = push.dispatch;
        let mode = b.load_field(ir, &a, a.s_dispatch(), d, f::D_MODE);
        let listed_mode = ir.c_u32(RECORDS_LISTED);
        let listed = b.bin(ir, Op::IEqual, a.bool_, mode, listed_mode);
        Source {
            listed,
            records: b.load_field(ir, &a, a.s_dispatch(), d, f::D_RECORDS),
            key: b.load_field(ir, &a, a.s_dispatch(), d, f::D_KEY_NODE),
            tag: b.load_field(ir, &a, a.s_ctx(), push.ctx, f::C_TAG),
            input_base: b.load_field(ir, &a, a.s_dispatch(), d, f::D_INPUT_BASE),
            table: b.load_field(ir, &a, a.s_ctx(), push.ctx, f::C_INDEX),
            mask: b.load_field(ir, &a, a.s_ctx(), push.ctx, f::C_INDEX_MASK),
            sink: b.load_field(ir, &a, a.s_ctx(), push.ctx, f::C_SINK),
            lookup: runtime::lookup_fn(ir, &a),
        }
    }

    /// Pointer to listed record `r`.
    fn listed_ref(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, r: Word) -> Word {
        let a = cx.abi;
        let list = b.addr_ptr(ir, a.p_record, self.records);
        b.elem(ir, a.p_record, list, r)
    }

    /// Indexed: the index slot holding record `r` and whether it was found.
    fn indexed_slot(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, r: Word) -> (Word, Word) {
        let a = cx.abi;
        let s = call(ir, b, a.u32, self.lookup, &[self.table, self.mask, self.tag, self.key, r]);
        let none = ir.c_u32(u32::MAX);
        let found = b.bin(ir, Op::INotEqual, a.bool_, s, none);
        let zero = ir.c_u32(0);
        let si = b.select(ir, a.u32, found, s, zero);
        let table = b.addr_ptr(ir, a.p_slot, self.table);
        (b.elem(ir, a.p_slot, table, si), found)
    }

    /// Record `r` of this node at this level into the fetched variables
    /// (a record the index does not hold reads the sink).
    fn fetch(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, out: &Fetched, r: Word) {
        let a = cx.abi;
        let m = b.begin_if(ir, self.listed);
        let rr = self.listed_ref(ir, cx, b, r);
        for (field, var) in
            [(f::R_PAYLOAD, out.payload), (f::R_WORKGROUP_START, out.workgroup_start), (f::R_REMAINING, out.remaining)]
        {
            let v = b.load_field(ir, &a, a.s_record(), rr, field);
            b.store_plain(var, v);
        }
        b.end_if(m);
        let indexed = b.op(ir, Op::LogicalNot, a.bool_, vec![id(self.listed)]);
        let m2 = b.begin_if(ir, indexed);
        let (sp, found) = self.indexed_slot(ir, cx, b, r);
        let off = b.load_field(ir, &a, a.s_slot(), sp, f::S_OFFSET);
        let off64 = b.op(ir, Op::UConvert, a.u64, vec![id(off)]);
        let at = b.bin(ir, Op::IAdd, a.u64, self.input_base, off64);
        let payload = b.select(ir, a.u64, found, at, self.sink);
        b.store_plain(out.payload, payload);
        let wgs = b.load_field(ir, &a, a.s_slot(), sp, f::S_WORKGROUP_START);
        b.store_plain(out.workgroup_start, wgs);
        let rem = b.load_field(ir, &a, a.s_slot(), sp, f::S_REMAINING);
        let zero = ir.c_u32(0);
        let rem = b.select(ir, a.u32, found, rem, zero);
        b.store_plain(out.remaining, rem);
        b.end_if(m2);
    }

    /// The first workgroup of record `r` (dynamic grids), into `var`.
    fn workgroup_start(&self, ir: &mut Ir, cx: &Ctx, b: &mut Body, var: Word, r: Word) {
        let a = cx.abi;
        let m = b.begin_if(ir, self.listed);
        let rr = self.listed_ref(ir, cx, b, r);
        let v = b.load_field(ir, &a, a.s_record(), rr, f::R_WORKGROUP_START);
        b.store_plain(var, v);
        b.end_if(m);
        let indexed = b.op(ir, Op::LogicalNot, a.bool_, vec![id(self.listed)]);
        let m2 = b.begin_if(ir, indexed);
        let (sp, _) = self.indexed_slot(ir, cx, b, r);
        let v = b.load_field(ir, &a, a.s_slot(), sp, f::S_WORKGROUP_START);
        b.store_plain(var, v);
        b.end_if(m2);
    }
}

/// Dynamic grids: the last record `r` whose workgroup start is `<= l`
/// (binary search; the starts grow with the record number).
fn search(ir: &mut Ir, cx: &Ctx, b: &mut Body, src: &Source, rc: Word, l: Word) -> Word {
    let a = cx.abi;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let lo_v = b.local(ir, a.u32, zero);
    let hi_v = b.local(ir, a.u32, rc);
    let start_v = b.local(ir, a.u32, zero);
    let lp = b.begin_loop(ir);
    let lo = b.op(ir, Op::Load, a.u32, vec![id(lo_v)]);
    let hi = b.op(ir, Op::Load, a.u32, vec![id(hi_v)]);
    let span = b.bin(ir, Op::ISub, a.u32, hi, lo);
    let more = b.bin(ir, Op::UGreaterThan, a.bool_, span, one);
    b.loop_test(&lp, more);
    let half = b.bin(ir, Op::ShiftRightLogical, a.u32, span, one);
    let mid = b.bin(ir, Op::IAdd, a.u32, lo, half);
    src.workgroup_start(ir, cx, b, start_v, mid);
    let s = b.op(ir, Op::Load, a.u32, vec![id(start_v)]);
    let le = b.bin(ir, Op::ULessThanEqual, a.bool_, s, l);
    let nlo = b.select(ir, a.u32, le, mid, lo);
    let nhi = b.select(ir, a.u32, le, hi, mid);
    b.store_plain(lo_v, nlo);
    b.store_plain(hi_v, nhi);
    b.end_loop(&lp);
    b.op(ir, Op::Load, a.u32, vec![id(lo_v)])
}

/// Coalescing: the workgroup's invocations fetch its records' payload
/// addresses into the Workgroup array (then a barrier, in uniform control flow).
#[allow(clippy::too_many_arguments)]
fn gather(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    src: &Source,
    fetched: &Fetched,
    var: Word,
    per_workgroup: u32,
    first: Word,
    rc: Word,
    runs: Word,
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

/// Stores the application's view of the builtins it reads.
#[allow(clippy::too_many_arguments)]
fn app_builtins(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    app: &AppBuiltins,
    wgid: Word,
    grid: Word,
    remaining: Word,
    real_lidx: Word,
) {
    let a = cx.abi;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let zeros = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(zero), id(zero), id(zero)]);
    let (lid, lidx) =
        if cx.packed { (zeros, zero) } else { (b.op(ir, Op::Load, a.v3, vec![id(cx.real.lid)]), real_lidx) };
    let wgs = match (cx.facts.wg_size_ids, cx.packed) {
        (Some(ids), false) => ids,
        (None, false) => {
            let s = cx.facts.info.workgroup_size;
            [ir.c_u32(s[0]), ir.c_u32(s[1]), ir.c_u32(s[2])]
        }
        (_, true) => [one, one, one],
    };
    let wgsv = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(wgs[0]), id(wgs[1]), id(wgs[2])]);
    let scaled = b.bin(ir, Op::IMul, a.v3, wgid, wgsv);
    let gid = b.bin(ir, Op::IAdd, a.v3, scaled, lid);
    // Interned only when read, so that kernels which do not read it are the
    // same for every shader index.
    let reads_index = app.iter().any(|(bi, _, _)| *bi == BuiltIn::ShaderIndexAMDX);
    let shader_index = if reads_index { ir.c_u32(cx.opts.shader_index) } else { zero };
    for (bi, var, ty) in app {
        let (v, vty) = match bi {
            BuiltIn::WorkgroupId => (wgid, a.v3),
            BuiltIn::NumWorkgroups => (grid, a.v3),
            BuiltIn::LocalInvocationId => (lid, a.v3),
            BuiltIn::LocalInvocationIndex => (lidx, a.u32),
            BuiltIn::GlobalInvocationId => (gid, a.v3),
            BuiltIn::RemainingRecursionLevelsAMDX => (remaining, a.u32),
            _ => (shader_index, a.u32),
        };
        let v = if *ty != vty { b.op(ir, Op::Bitcast, *ty, vec![id(v)]) } else { v };
        b.store_plain(*var, v);
    }
}

/// Counts the workgroup done (numbered `l` among the `launched` of the
/// level, in its done group, see `abi`); the level's last workgroup runs the
/// finisher.
fn epilogue(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, [l, launched]: [Word; 2], finisher: Word) {
    let a = cx.abi;
    let u = a.u32;
    let zero = ir.c_u32(0);
    let one = ir.c_u32(1);
    let last_var = ir.global_var(StorageClass::Workgroup, u, "node_level_last");
    b.workgroup_barrier(ir);
    let lidx = b.op(ir, Op::Load, u, vec![id(cx.real.lidx)]);
    let l0 = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    let m = b.begin_if(ir, l0);
    b.store_plain(last_var, zero);
    // Release this workgroup's writes (records, counters) and acquire every
    // other workgroup's before the last one reads the counters: the group's
    // completer acquires its group's releases and releases them on to `done`.
    let acq_rel_uniform = 0x8 | 0x40; // AcquireRelease | UniformMemory
    let groups = ir.c_u32(DONE_GROUPS);
    let g = b.bin(ir, Op::UMod, u, l, groups);
    let full = b.bin(ir, Op::UDiv, u, launched, groups);
    let rest = b.bin(ir, Op::UMod, u, launched, groups);
    let extra = b.bin(ir, Op::ULessThan, a.bool_, g, rest);
    let extra = b.select(ir, u, extra, one, zero);
    let in_group = b.bin(ir, Op::IAdd, u, full, extra);
    let parity = b.select(ir, u, push.odd, one, zero);
    let pg = b.bin(ir, Op::IMul, u, parity, groups);
    let word = b.bin(ir, Op::IAdd, u, pg, g);
    let stride = ir.c_u32(DONE_GROUP_STRIDE_WORDS);
    let word = b.bin(ir, Op::IMul, u, word, stride);
    let counters = b.load_field(ir, &a, a.s_ctx(), push.ctx, f::C_DONE_GROUPS);
    let counters = b.addr_ptr(ir, a.p_u32, counters);
    let gp = b.elem(ir, a.p_u32, counters, word);
    // A group of one is complete without its counter (levels of at most
    // DONE_GROUPS workgroups: one atomic fewer on their critical path).
    let alone = b.bin(ir, Op::IEqual, a.bool_, in_group, one);
    let completes_v = b.local(ir, a.bool_, alone);
    let crowd = b.op(ir, Op::LogicalNot, a.bool_, vec![id(alone)]);
    let mc = b.begin_if(ir, crowd);
    let before = b.atomic_sem(ir, Op::AtomicIAdd, u, gp, one, acq_rel_uniform);
    let now = b.bin(ir, Op::IAdd, u, before, one);
    let completes = b.bin(ir, Op::IEqual, a.bool_, now, in_group);
    b.store_plain(completes_v, completes);
    let mz = b.begin_if(ir, completes);
    // Nobody else touches the counter at this level: ready for the next
    // level of this parity.
    b.store(gp, zero, 4);
    b.end_if(mz);
    b.end_if(mc);
    let completes = b.op(ir, Op::Load, a.bool_, vec![id(completes_v)]);
    let m2 = b.begin_if(ir, completes);
    let done_p = ctx_parity_ptr(ir, &a, b, push.ctx, f::C_DONE, push.odd, false);
    let before = b.atomic_sem(ir, Op::AtomicIAdd, u, done_p, one, acq_rel_uniform);
    let now = b.bin(ir, Op::IAdd, u, before, one);
    let few = b.bin(ir, Op::ULessThan, a.bool_, launched, groups);
    let used = b.select(ir, u, few, launched, groups);
    let last = b.bin(ir, Op::IEqual, a.bool_, now, used);
    let flag = b.select(ir, u, last, one, zero);
    b.store_plain(last_var, flag);
    b.end_if(m2);
    b.end_if(m);
    b.workgroup_barrier(ir);
    let flag = b.op(ir, Op::Load, a.u32, vec![id(last_var)]);
    let last = b.bin(ir, Op::INotEqual, a.bool_, flag, zero);
    let m = b.begin_if(ir, last);
    call(ir, b, a.void, finisher, &[]);
    b.end_if(m);
}

/// `local` -> (x, y, z) in a grid of width gx and height gy, x fastest.
fn decompose(ir: &mut Ir, b: &mut Body, cx: &Ctx, local: Word, gx: Word, gy: Word) -> Word {
    let a = cx.abi;
    let x = b.bin(ir, Op::UMod, a.u32, local, gx);
    let q = b.bin(ir, Op::UDiv, a.u32, local, gx);
    let y = b.bin(ir, Op::UMod, a.u32, q, gy);
    let z = b.bin(ir, Op::UDiv, a.u32, q, gy);
    b.op(ir, Op::CompositeConstruct, a.v3, vec![id(x), id(y), id(z)])
}

/// Reads the dispatch grid of a record (components clamped to at least 1).
fn read_grid(ir: &mut Ir, b: &mut Body, cx: &Ctx, payload: Word) -> Result<(Word, Word, Word), LowerError> {
    let a = cx.abi;
    let one = ir.c_u32(1);
    let Some(g) = cx.facts.info.input.as_ref().and_then(|i| i.dispatch_grid) else {
        return Ok((one, one, one));
    };
    let mt = match (g.member, cx.facts.input_struct) {
        (Some(k), Some(s)) => ir.global(s).and_then(|i| op_id(i, k as usize)).unwrap_or(a.v3),
        _ => a.v3,
    };
    let off = ir.c_u64(u64::from(g.offset));
    let addr = b.bin(ir, Op::IAdd, a.u64, payload, off);
    let pt = ir.t_ptr(StorageClass::PhysicalStorageBuffer, mt, None);
    let p = b.addr_ptr(ir, pt, addr);
    let v = b.load(ir, mt, p, g.component_bytes);
    let comp_ty = if g.components == 1 { mt } else { ir.global(mt).and_then(|i| op_id(i, 0)).unwrap_or(a.u32) };
    let mut comps = vec![];
    for k in 0..3 {
        if k >= g.components {
            comps.push(one);
            continue;
        }
        let c = if g.components == 1 { v } else { b.op(ir, Op::CompositeExtract, comp_ty, vec![id(v), lit(k)]) };
        let c = if g.component_bytes == 2 { b.op(ir, Op::UConvert, a.u32, vec![id(c)]) } else { c };
        let z = ir.c_u32(0);
        let is0 = b.bin(ir, Op::IEqual, a.bool_, c, z);
        comps.push(b.op(ir, Op::Select, a.u32, vec![id(is0), id(one), id(c)]));
    }
    Ok((comps[0], comps[1], comps[2]))
}
