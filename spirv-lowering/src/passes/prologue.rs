//! The kernel's entry: a prologue, the node's own code, and an epilogue.
//!
//! Matches: the entry function. Emits a new entry function (it takes over the
//! entry point's id, so the execution modes stay attached) that, in named
//! steps:
//! 1. **position**: the linear workgroup id from the real builtins, the
//!    first record of this workgroup per launch mode (static grid: division;
//!    coalescing: `L*P`; packed thread nodes: `L*W + lane`; dynamic grid:
//!    found by search) and whether the node's code runs
//!    (`L < NodeDispatch::workgroup_count` and a record left); the lines
//!    of the record's home frames and of the launch are requested at once
//!    (see `prefetch`);
//! 2. **records**: fetches them (see `records`: side by side for a host
//!    dispatch's level 0, else from the key node's frames) and stores the
//!    payload address(es) where the payload pass reads them, the record
//!    count, remaining recursion and grid size into their `Private`
//!    variables;
//! 3. **builtins**: the application's view of WorkgroupId, NumWorkgroups,
//!    LocalInvocationId/Index, GlobalInvocationId,
//!    RemainingRecursionLevelsAMDX and ShaderIndexAMDX (read from the node's
//!    `NodeInfo` when the graph is known, so that array members share a
//!    kernel);
//! 4. **code**: calls the original entry function (now an ordinary
//!    function) when the node's code runs;
//! 5. **done**: counts the workgroup done and, in the level's last
//!    workgroup, calls the level finisher (see `epilogue`, `finisher`); a
//!    node without outputs does this before step 4 (and skips it in a
//!    level that counts nothing, `abi::LEVEL_UNCOUNTED`, whose tag it takes
//!    one back in step 1), a node whose last counter change every
//!    invocation passes once does it there (inside step 4). A mesh node (no
//!    finisher) skips this step.
//!
//! With the `phase_clock` diagnostic the workgroup's start is timed, and
//! each of steps 3 to 5 and its end (see `phases`).
//!
//! For packed thread nodes the `LocalSize` becomes (W, 1, 1). Afterwards the
//! application's code runs unchanged with node semantics.

use super::builtins::AppBuiltins;
use super::context::Ctx;
use super::epilogue;
use super::payload::InputLowering;
use super::phases;
use super::prefetch;
use super::records::{gather, Fetched, Source};
use crate::abi::Phase;
use crate::analyze::LaunchMode;
use crate::codegen::{f, Body};
use crate::error::LowerError;
use crate::ir::{id, inst, lit, map_operand_ids, op_id, Ir};
use crate::runtime::{self, Push};
use rspirv::dr::{Function, Operand};
use spirv::{BuiltIn, Decoration, ExecutionMode, FunctionControl, Op, StorageClass, Word};

pub fn run(
    ir: &mut Ir,
    cx: &Ctx,
    app: &AppBuiltins,
    input: InputLowering,
    finisher: Option<Word>,
    done: epilogue::DonePoint,
) -> Result<[u32; 3], LowerError> {
    let a = cx.abi;
    let entry = cx.facts.entry_fn;
    let (fpos, inner) = demote_entry(ir, cx)?;
    let fetched = Fetched::declare(ir, cx);
    let label = ir.id();
    let mut b = Body::new(label);
    let push = runtime::push(ir, &a, &cx.push, &mut b);
    phases::start(ir, cx, &mut b, push.level);
    cx.vars.ctx.fill(ir, &a, &mut b, push.ctx);
    if finisher.is_some() && done == epilogue::DonePoint::BeforeCode {
        // A node without outputs may run in a level that counts nothing.
        cx.vars.ctx.step_back_tag(ir, &a, &mut b, push.uncounted);
    }
    let src = Source::load(ir, cx, &mut b, &push);
    let at = position(ir, cx, &mut b, &push);
    prefetch::run(ir, cx, &mut b, &push, at.first);
    let view = records(ir, cx, &mut b, &src, &fetched, &at, input)?;
    let shader_index = shader_index(ir, cx, &mut b, &push, app);
    app_builtins(ir, cx, &mut b, app, view, at.real_lidx, shader_index);
    phases::mark(ir, cx, &mut b, Phase::Fetched);
    match finisher {
        Some(finisher) => {
            // What the epilogue needs, loaded before the node's code runs
            // (fixed for the level): off the path from the code's end to the
            // finisher.
            let numbering = epilogue::Numbering::load(ir, cx, &mut b, &push, at.l);
            let code = |ir: &mut Ir, b: &mut Body| {
                run_code(ir, b, cx, at.runs, inner);
                phases::mark(ir, cx, b, Phase::CodeDone);
            };
            epilogue::around_code(ir, cx, &mut b, &push, numbering, finisher, done, code);
        }
        None => {
            // A mesh node: drawn, never counted done (it is no part of a
            // compute level, see `abi`). A workgroup without a record never
            // executes OpSetMeshOutputsEXT and so emits nothing. (Saying so
            // with a second OpSetMeshOutputsEXT 0 0 on that path made
            // lavapipe 25.0.7 drop every workgroup's outputs.)
            run_code(ir, &mut b, cx, at.runs, inner);
        }
    }
    phases::mark(ir, cx, &mut b, Phase::End);
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
    Ok(if cx.packed { pack_workgroup(ir, cx) } else { cx.facts.info.workgroup_size })
}

/// The original entry function becomes an ordinary function with a new id
/// (returned with its position among the functions).
fn demote_entry(ir: &mut Ir, cx: &Ctx) -> Result<(usize, Word), LowerError> {
    let entry = cx.facts.entry_fn;
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
    Ok((fpos, inner))
}

/// Packed thread nodes: `LocalSize` (W, 1, 1) and no WorkgroupSize builtin.
fn pack_workgroup(ir: &mut Ir, cx: &Ctx) -> [u32; 3] {
    let entry = cx.facts.entry_fn;
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
    [w, 1, 1]
}

/// Where this workgroup stands (step 1).
struct Position {
    /// Linear workgroup id.
    l: Word,
    /// The real LocalInvocationIndex.
    real_lidx: Word,
    /// This workgroup's (or packed lane's) first record.
    first: Word,
    /// Records of this node at this level.
    rc: Word,
    /// `bool` variable: the node's code runs.
    runs: Word,
    /// Static grids: the grid ids and their product.
    static_grid: Option<([Word; 3], Word)>,
}

fn position(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push) -> Position {
    let a = cx.abi;
    let info = &cx.facts.info;
    let zero = ir.c_u32(0);
    let disp = push.dispatch;
    let wc = b.load_field(ir, &a, a.s_dispatch(), disp, f::D_WORKGROUP_COUNT);
    let rc = b.load_field(ir, &a, a.s_dispatch(), disp, f::D_RECORD_COUNT);
    let wg = b.op(ir, Op::Load, a.v3, vec![id(cx.real.wg)]);
    let nwg = b.op(ir, Op::Load, a.v3, vec![id(cx.real.nwg)]);
    let ex = |ir: &mut Ir, b: &mut Body, v: Word, k: u32| b.op(ir, Op::CompositeExtract, a.u32, vec![id(v), lit(k)]);
    let (wx, wy, wz) = (ex(ir, b, wg, 0), ex(ir, b, wg, 1), ex(ir, b, wg, 2));
    let (nx, ny) = (ex(ir, b, nwg, 0), ex(ir, b, nwg, 1));
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
    let runs = b.local(ir, a.bool_, runs);
    Position { l, real_lidx, first, rc, runs, static_grid }
}

/// What the application's builtins are made of (step 3).
struct View {
    wgid: Word,
    grid: Word,
    remaining: Word,
}

/// Step 2: fetches this workgroup's records and fills the `Private`
/// variables the code reads.
fn records(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    src: &Source,
    fetched: &Fetched,
    at: &Position,
    input: InputLowering,
) -> Result<View, LowerError> {
    let a = cx.abi;
    let info = &cx.facts.info;
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let ones = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(one), id(one), id(one)]);
    let zeros = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(zero), id(zero), id(zero)]);
    let wgid_v = b.local(ir, a.v3, zeros);
    let grid_v = b.local(ir, a.v3, ones);
    let remaining_v = b.local(ir, a.u32, zero);
    let coalesced = matches!(info.launch, LaunchMode::Coalescing { .. });
    let runs = b.op(ir, Op::Load, a.bool_, vec![id(at.runs)]);
    let m = b.begin_if(ir, runs);
    let (wgid, grid, total, count) = match &info.launch {
        LaunchMode::BroadcastStatic { .. } => {
            let (g, gsz) = at.static_grid.unwrap_or(([one, one, one], one));
            src.fetch(ir, cx, b, fetched, at.first);
            let local = b.bin(ir, Op::UMod, a.u32, at.l, gsz);
            let wgid = decompose(ir, b, cx, local, g[0], g[1]);
            let grid = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(g[0]), id(g[1]), id(g[2])]);
            (wgid, grid, gsz, one)
        }
        LaunchMode::BroadcastDynamic { .. } => {
            src.fetch_by_workgroup(ir, cx, b, fetched, at.rc, at.l);
            let start = b.op(ir, Op::Load, a.u32, vec![id(fetched.workgroup_start)]);
            let local = b.bin(ir, Op::ISub, a.u32, at.l, start);
            let payload = b.op(ir, Op::Load, a.u64, vec![id(fetched.payload)]);
            let (gx, gy, gz) = read_grid(ir, b, cx, payload)?;
            let wgid = decompose(ir, b, cx, local, gx, gy);
            let grid = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(gx), id(gy), id(gz)]);
            let gxy = b.bin(ir, Op::IMul, a.u32, gx, gy);
            let total = b.bin(ir, Op::IMul, a.u32, gxy, gz);
            (wgid, grid, total, one)
        }
        LaunchMode::Coalescing { max_payloads } => {
            let p = ir.c_u32(*max_payloads);
            let left = b.bin(ir, Op::ISub, a.u32, at.rc, at.first);
            let lt = b.bin(ir, Op::ULessThan, a.bool_, left, p);
            let n = b.select(ir, a.u32, lt, left, p);
            src.fetch(ir, cx, b, fetched, at.first);
            (zeros, ones, one, n)
        }
        LaunchMode::Thread => {
            src.fetch(ir, cx, b, fetched, at.first);
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
        gather(ir, cx, b, src, fetched, var, input.per_workgroup, [at.first, at.rc, runs]);
    }
    let remaining = b.op(ir, Op::Load, a.u32, vec![id(remaining_v)]);
    b.store_plain(cx.vars.remaining, remaining);
    Ok(View {
        wgid: b.op(ir, Op::Load, a.v3, vec![id(wgid_v)]),
        grid: b.op(ir, Op::Load, a.v3, vec![id(grid_v)]),
        remaining,
    })
}

/// The value ShaderIndexAMDX reads, when the code reads it: the node's
/// `NodeInfo::shader_index` when the graph is known (the members of a node
/// array then share one kernel), else `LowerOptions::shader_index`.
fn shader_index(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, app: &AppBuiltins) -> Word {
    let a = cx.abi;
    if !app.iter().any(|(bi, _, _)| *bi == BuiltIn::ShaderIndexAMDX) {
        return ir.c_u32(0);
    }
    let Some(t) = &cx.opts.tables else { return ir.c_u32(cx.opts.shader_index) };
    let ctx_addr = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(push.ctx)]);
    let nodes = ir.c_u64(t.nodes);
    let nodes = b.bin(ir, Op::IAdd, a.u64, ctx_addr, nodes);
    let nodes = b.addr_ptr(ir, a.p_node, nodes);
    let me = b.elem(ir, a.p_node, nodes, push.slot);
    b.load_field(ir, &a, a.s_node(), me, f::N_SHADER_INDEX)
}

/// Step 4: the node's own code, where it runs.
fn run_code(ir: &mut Ir, b: &mut Body, cx: &Ctx, runs: Word, inner: Word) {
    let runs = b.op(ir, Op::Load, cx.abi.bool_, vec![id(runs)]);
    let m = b.begin_if(ir, runs);
    call(ir, b, cx.abi.void, inner, &[]);
    b.end_if(m);
}

fn call(ir: &mut Ir, b: &mut Body, ret: Word, f: Word, args: &[Word]) -> Word {
    let mut ops = vec![id(f)];
    ops.extend(args.iter().map(|a| id(*a)));
    b.op(ir, Op::FunctionCall, ret, ops)
}

/// Stores the application's view of the builtins it reads (step 3).
fn app_builtins(ir: &mut Ir, cx: &Ctx, b: &mut Body, app: &AppBuiltins, view: View, real_lidx: Word, index: Word) {
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
    let scaled = b.bin(ir, Op::IMul, a.v3, view.wgid, wgsv);
    let gid = b.bin(ir, Op::IAdd, a.v3, scaled, lid);
    for (bi, var, ty) in app {
        let (v, vty) = match bi {
            BuiltIn::WorkgroupId => (view.wgid, a.v3),
            BuiltIn::NumWorkgroups => (view.grid, a.v3),
            BuiltIn::LocalInvocationId => (lid, a.v3),
            BuiltIn::LocalInvocationIndex => (lidx, a.u32),
            BuiltIn::GlobalInvocationId => (gid, a.v3),
            BuiltIn::RemainingRecursionLevelsAMDX => (view.remaining, a.u32),
            _ => (index, a.u32),
        };
        let v = if *ty != vty { b.op(ir, Op::Bitcast, *ty, vec![id(v)]) } else { v };
        b.store_plain(*var, v);
    }
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
