//! The launch-mode prologue of the entry point.
//!
//! Matches: the entry function's first block. Emits new first blocks (the
//! original `OpVariable`s move into them) that compute the linear workgroup
//! id from the real builtins, return early when it is past
//! `NodeDispatch::workgroup_count` or past the record list, pick this
//! workgroup's record(s) per launch mode (static grid: division; dynamic grid:
//! binary search over `RecordRef::workgroup_start`; coalescing: `L*P`; packed
//! thread nodes: `L*W + lane`), store the input pointer, record count,
//! remaining recursion and grid size into their `Private` variables, store the
//! application's view of WorkgroupId, NumWorkgroups, LocalInvocationId/Index,
//! GlobalInvocationId, RemainingRecursionLevelsAMDX and ShaderIndexAMDX, then
//! branch to the original first block. For packed thread nodes the
//! `LocalSize` becomes (W, 1, 1). Afterwards the application's code runs
//! unchanged with node semantics.

use super::builtins::AppBuiltins;
use super::node_ops::push_ptrs;
use super::payload::InputLowering;
use super::Ctx;
use crate::analyze::LaunchMode;
use crate::codegen::{f, Body};
use crate::error::LowerError;
use crate::ir::{id, inst, lit, op_id, Ir};
use rspirv::dr::Operand;
use spirv::{BuiltIn, Decoration, ExecutionMode, Op, StorageClass, Word};

pub fn run(ir: &mut Ir, cx: &Ctx, app: &AppBuiltins, input: InputLowering) -> Result<[u32; 3], LowerError> {
    let a = cx.abi;
    let info = &cx.facts.info;
    let fpos =
        ir.m.functions
            .iter()
            .position(|f| f.def.as_ref().and_then(|d| d.result_id) == Some(cx.facts.entry_fn))
            .ok_or_else(|| LowerError::Invalid {
                entry: cx.entry(),
                opcode: "OpFunction".into(),
                result_id: Some(cx.facts.entry_fn),
                detail: "entry function has no body".into(),
            })?;
    let (orig_label, moved_vars) = {
        let Some(first) = ir.m.functions.get_mut(fpos).and_then(|f| f.blocks.first_mut()) else {
            return Err(LowerError::Invalid {
                entry: cx.entry(),
                opcode: "OpFunction".into(),
                result_id: Some(cx.facts.entry_fn),
                detail: "entry function has no blocks".into(),
            });
        };
        // The leading OpVariables (and debug lines between them) must stay in the first block.
        let n = first.instructions.iter().rposition(|i| i.class.opcode == Op::Variable).map_or(0, |k| k + 1);
        let vars: Vec<_> = first.instructions.drain(..n).collect();
        (first.label.as_ref().and_then(|l| l.result_id).unwrap_or(0), vars)
    };
    let start = ir.id();
    let mut b = Body::new(start);
    for v in moved_vars {
        b.push(v);
    }
    let fptr = ir.t_ptr(StorageClass::Function, a.u32, None);
    let (lo_v, hi_v) = (ir.id(), ir.id());
    let dynamic = matches!(info.launch, LaunchMode::BroadcastDynamic { .. });
    if dynamic {
        for v in [lo_v, hi_v] {
            b.push(inst(Op::Variable, Some(fptr), Some(v), vec![Operand::StorageClass(StorageClass::Function)]));
        }
    }
    let zero = ir.c_u32(0);
    let one = ir.c_u32(1);
    let (disp, _ctx) = push_ptrs(ir, cx, &mut b);
    let wc = b.load_field(ir, &a, a.s_dispatch(), disp, f::D_WORKGROUP_COUNT);
    let rc = b.load_field(ir, &a, a.s_dispatch(), disp, f::D_RECORD_COUNT);
    let rec_addr = b.load_field(ir, &a, a.s_dispatch(), disp, f::D_RECORDS);
    let records = b.addr_ptr(ir, a.p_record, rec_addr);
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
    let past_wg = b.bin(ir, Op::UGreaterThanEqual, a.bool_, l, wc);
    let past_rec = b.bin(ir, Op::UGreaterThanEqual, a.bool_, first, rc);
    let exit = b.bin(ir, Op::LogicalOr, a.bool_, past_wg, past_rec);
    let (ret, cont) = (ir.id(), ir.id());
    b.push(inst(
        Op::SelectionMerge,
        None,
        None,
        vec![id(cont), Operand::SelectionControl(spirv::SelectionControl::NONE)],
    ));
    b.end(inst(Op::BranchConditional, None, None, vec![id(exit), id(ret), id(cont)]), Some(ret));
    b.end(inst(Op::Return, None, None, vec![]), Some(cont));

    let ones = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(one), id(one), id(one)]);
    let zeros = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(zero), id(zero), id(zero)]);
    // (record index, workgroup id in grid, grid, workgroups in grid, records here)
    let (rec, wgid, grid, total, count) = match &info.launch {
        LaunchMode::BroadcastStatic { .. } => {
            let (g, gsz) = static_grid.unwrap_or(([one, one, one], one));
            let local = b.bin(ir, Op::UMod, a.u32, l, gsz);
            let wgid = decompose(ir, &mut b, cx, local, g[0], g[1]);
            let grid = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(g[0]), id(g[1]), id(g[2])]);
            (first, wgid, grid, gsz, one)
        }
        LaunchMode::BroadcastDynamic { .. } => {
            // Binary search: last r with records[r].workgroup_start <= L.
            b.store_plain(lo_v, zero);
            b.store_plain(hi_v, rc);
            let (hd, cond, body, cn, merge) = (ir.id(), ir.id(), ir.id(), ir.id(), ir.id());
            b.end(inst(Op::Branch, None, None, vec![id(hd)]), Some(hd));
            b.push(inst(
                Op::LoopMerge,
                None,
                None,
                vec![id(merge), id(cn), Operand::LoopControl(spirv::LoopControl::NONE)],
            ));
            b.end(inst(Op::Branch, None, None, vec![id(cond)]), Some(cond));
            let lo = b.op(ir, Op::Load, a.u32, vec![id(lo_v)]);
            let hi = b.op(ir, Op::Load, a.u32, vec![id(hi_v)]);
            let span = b.bin(ir, Op::ISub, a.u32, hi, lo);
            let more = b.bin(ir, Op::UGreaterThan, a.bool_, span, one);
            b.end(inst(Op::BranchConditional, None, None, vec![id(more), id(body), id(merge)]), Some(body));
            let half = b.bin(ir, Op::ShiftRightLogical, a.u32, span, one);
            let mid = b.bin(ir, Op::IAdd, a.u32, lo, half);
            let rr = b.elem(ir, a.p_record, records, mid);
            let s = b.load_field(ir, &a, a.s_record(), rr, f::R_WORKGROUP_START);
            let le = b.bin(ir, Op::ULessThanEqual, a.bool_, s, l);
            let nlo = b.op(ir, Op::Select, a.u32, vec![id(le), id(mid), id(lo)]);
            let nhi = b.op(ir, Op::Select, a.u32, vec![id(le), id(hi), id(mid)]);
            b.store_plain(lo_v, nlo);
            b.store_plain(hi_v, nhi);
            b.end(inst(Op::Branch, None, None, vec![id(cn)]), Some(cn));
            b.end(inst(Op::Branch, None, None, vec![id(hd)]), Some(merge));
            let r = b.op(ir, Op::Load, a.u32, vec![id(lo_v)]);
            let rr = b.elem(ir, a.p_record, records, r);
            let start = b.load_field(ir, &a, a.s_record(), rr, f::R_WORKGROUP_START);
            let local = b.bin(ir, Op::ISub, a.u32, l, start);
            let payload = b.load_field(ir, &a, a.s_record(), rr, f::R_PAYLOAD);
            let (gx, gy, gz) = read_grid(ir, &mut b, cx, payload)?;
            let wgid = decompose(ir, &mut b, cx, local, gx, gy);
            let grid = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(gx), id(gy), id(gz)]);
            let gxy = b.bin(ir, Op::IMul, a.u32, gx, gy);
            let total = b.bin(ir, Op::IMul, a.u32, gxy, gz);
            (r, wgid, grid, total, one)
        }
        LaunchMode::Coalescing { max_payloads } => {
            let p = ir.c_u32(*max_payloads);
            let left = b.bin(ir, Op::ISub, a.u32, rc, first);
            let lt = b.bin(ir, Op::ULessThan, a.bool_, left, p);
            let n = b.op(ir, Op::Select, a.u32, vec![id(lt), id(left), id(p)]);
            (first, zeros, ones, one, n)
        }
        LaunchMode::Thread => (first, zeros, ones, one, one),
    };
    let rr = b.elem(ir, a.p_record, records, rec);
    let remaining = b.load_field(ir, &a, a.s_record(), rr, f::R_REMAINING);
    b.store_plain(cx.vars.rec_count, count);
    b.store_plain(cx.vars.remaining, remaining);
    b.store_plain(cx.vars.wg_total, total);
    if let Some(h) = input.holder {
        let v = if input.plain {
            let payload = b.load_field(ir, &a, a.s_record(), rr, f::R_PAYLOAD);
            b.addr_ptr(ir, input.ptr_type, payload)
        } else {
            // Same RecordRef element, typed as the holder's pointer type.
            let base = b.addr_ptr(ir, input.ptr_type, rec_addr);
            b.elem(ir, input.ptr_type, base, rec)
        };
        b.store_plain(h, v);
    }
    // The application's builtins.
    let (lid, lidx) =
        if cx.packed { (zeros, zero) } else { (b.op(ir, Op::Load, a.v3, vec![id(cx.real.lid)]), real_lidx) };
    let wgs = match (cx.facts.wg_size_ids, cx.packed) {
        (Some(ids), false) => ids,
        (None, false) => {
            let s = info.workgroup_size;
            [ir.c_u32(s[0]), ir.c_u32(s[1]), ir.c_u32(s[2])]
        }
        (_, true) => [one, one, one],
    };
    let wgsv = b.op(ir, Op::CompositeConstruct, a.v3, vec![id(wgs[0]), id(wgs[1]), id(wgs[2])]);
    let scaled = b.bin(ir, Op::IMul, a.v3, wgid, wgsv);
    let gid = b.bin(ir, Op::IAdd, a.v3, scaled, lid);
    let shader_index = ir.c_u32(cx.opts.shader_index);
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
    b.end(inst(Op::Branch, None, None, vec![id(orig_label)]), None);
    let mut blocks = b.finish();
    if let Some(func) = ir.m.functions.get_mut(fpos) {
        blocks.append(&mut func.blocks);
        func.blocks = blocks;
    }

    if cx.packed {
        let ef = cx.facts.entry_fn;
        ir.m.execution_modes.retain(|m| {
            !(op_id(m, 0) == Some(ef)
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
            vec![id(ef), Operand::ExecutionMode(ExecutionMode::LocalSize), lit(w), lit(1), lit(1)],
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
