//! Payload handles as values: DXC's shapes brought to the canonical one.
//!
//! Compilers do not only reach node payloads through the `NodePayloadAMDX`
//! pointers that `OpAllocateNodePayloadsAMDX` and the input variable give.
//! DXC loads the whole payload array (`OpLoad %payloadarr %alloc`), keeps it
//! in `Function` variables, copies it between them, passes pointers to those
//! variables to helper functions, indexes them with `OpAccessChain`, and hands
//! the variable to `OpEnqueueNodePayloadsAMDX`. Semantically such a value is
//! a handle: every copy names the same records.
//!
//! Matches: every `OpTypeNodePayloadArrayAMDX` A used as a value type, and
//! the instructions reaching records through such values.
//! Emits, per payload array type A with its pointer type P
//! (`OpTypePointer NodePayloadAMDX A`, declared when missing):
//! * every use of A as a type (variable, parameter, return, function type,
//!   result type of a load, phi, copy, undef) becomes P, so a handle value
//!   *is* a payload pointer;
//! * `OpLoad` of a P pointer -> `OpCopyObject` (copying the handle);
//! * `OpAccessChain` (and friends) on a variable holding a handle -> a load
//!   of the handle, then the chain on it; the result and everything derived
//!   from it (chains, copies, phis, selects) become `NodePayloadAMDX` pointers;
//! * the operand of `OpEnqueueNodePayloadsAMDX`, `OpNodePayloadArrayLengthAMDX`
//!   and `OpFinishWritingNodePayloadAMDX` given as a variable holding a handle
//!   -> a load of the handle;
//! * the operand of `OpIsNodePayloadValidAMDX` given as a value (DXC passes
//!   the variable holding the output, where the specification asks for the
//!   payload array type) -> that payload array type.
//!
//! Afterwards records are reached only through `NodePayloadAMDX` pointer
//! values, the shape the `payload` pass lowers, and A is no longer used as a
//! type outside its own pointer type and the AMDX decorations.

use super::context::Ctx;
use crate::error::LowerError;
use crate::ir::{id, inst, map_operand_ids, op_id, IdMap, Ir};
use rspirv::dr::{Instruction, Operand};
use spirv::{Op, StorageClass, Word};

const NODE: StorageClass = StorageClass::NodePayloadAMDX;

pub fn run(ir: &mut Ir, cx: &Ctx) -> Result<(), LowerError> {
    let arrays: Vec<Word> =
        ir.m.types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::TypeNodePayloadArrayAMDX)
            .filter_map(|i| i.result_id)
            .collect();
    if arrays.is_empty() {
        return Ok(());
    }
    let mut handle_of: IdMap<Word> = IdMap::default();
    for &a in &arrays {
        let p = ir.t_ptr(NODE, a, None);
        handle_of.insert(a, p);
    }
    substitute_types(ir, &handle_of);
    let handles: Vec<Word> = handle_of.values().copied().collect();
    name_payload_types(ir, &handle_of);
    rewrite_bodies(ir, cx, &handles)
}

/// `OpIsNodePayloadValidAMDX` names the payload array type; a value operand
/// (a variable or handle of that type) is replaced by the type.
fn name_payload_types(ir: &mut Ir, handle_of: &IdMap<Word>) {
    let types = ir.type_map();
    let array_of = |ir: &Ir, w: Word| -> Option<Word> {
        if handle_of.contains_key(&w) {
            return Some(w);
        }
        // A value: its type is the handle P, or a pointer to it.
        let mut t = *types.get(&w)?;
        if let Some((_, pointee)) = ir.pointer_info(t).filter(|(sc, _)| *sc != NODE) {
            t = pointee;
        }
        handle_of.iter().find(|(_, p)| **p == t).map(|(a, _)| *a)
    };
    let mut edits = vec![];
    for (fi, f) in ir.m.functions.iter().enumerate() {
        for (bi, b) in f.blocks.iter().enumerate() {
            for (ii, i) in b.instructions.iter().enumerate() {
                if i.class.opcode == Op::IsNodePayloadValidAMDX {
                    if let Some(a) = op_id(i, 0).and_then(|w| array_of(ir, w)) {
                        edits.push((fi, bi, ii, a));
                    }
                }
            }
        }
    }
    for (fi, bi, ii, a) in edits {
        let i = ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)).and_then(|b| b.instructions.get_mut(ii));
        if let Some(Operand::IdRef(w)) = i.and_then(|i| i.operands.first_mut()) {
            *w = a;
        }
    }
}

/// Is `i` the declaration of one of the handle pointer types themselves?
fn is_handle_decl(i: &Instruction, handle_of: &IdMap<Word>) -> bool {
    i.result_id.is_some_and(|r| handle_of.values().any(|p| *p == r))
}

/// Replaces A by P wherever A is used as a type.
fn substitute_types(ir: &mut Ir, handle_of: &IdMap<Word>) {
    let swap = |w: Word| handle_of.get(&w).copied().unwrap_or(w);
    for i in &mut ir.m.types_global_values {
        if i.class.opcode == Op::TypeNodePayloadArrayAMDX || is_handle_decl(i, handle_of) {
            continue;
        }
        i.result_type = i.result_type.map(swap);
        map_operand_ids(i, &swap);
    }
    for f in &mut ir.m.functions {
        if let Some(d) = f.def.as_mut() {
            d.result_type = d.result_type.map(swap);
            // Operand 1 is the function type, already substituted globally.
        }
        for p in &mut f.parameters {
            p.result_type = p.result_type.map(swap);
        }
        for i in f.blocks.iter_mut().flat_map(|b| b.instructions.iter_mut()) {
            i.result_type = i.result_type.map(swap);
            // OpIsNodePayloadValidAMDX names the payload array type itself.
            if i.class.opcode != Op::IsNodePayloadValidAMDX {
                map_operand_ids(i, &swap);
            }
        }
    }
}

/// Sweeps [`rewrite_bodies`] makes at most. A sweep retypes what the one
/// before made reachable (a phi whose incoming value was retyped later in
/// the block order); compiler output settles in two or three. A malformed
/// module (an access chain that is its own base, found by the smoke test's
/// mutations) could otherwise insert a load on every sweep forever.
const MAX_SWEEPS: usize = 64;

/// Rewrites loads, chains and node operations that go through handle values.
fn rewrite_bodies(ir: &mut Ir, cx: &Ctx, handles: &[Word]) -> Result<(), LowerError> {
    let mut types = ir.type_map();
    // Fixed point: a phi may see a retyped value only on a later sweep.
    for _ in 0..MAX_SWEEPS {
        let mut changed = false;
        for fi in 0..ir.m.functions.len() {
            let nblocks = ir.m.functions.get(fi).map_or(0, |f| f.blocks.len());
            for bi in 0..nblocks {
                let old = match ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)) {
                    Some(b) => std::mem::take(&mut b.instructions),
                    None => continue,
                };
                let mut out = Vec::with_capacity(old.len());
                for i in old {
                    changed |= rewrite_one(ir, cx, handles, &mut types, i, &mut out)?;
                }
                if let Some(b) = ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)) {
                    b.instructions = out;
                }
            }
        }
        if !changed {
            return Ok(());
        }
    }
    Err(LowerError::Invalid {
        entry: cx.entry(),
        opcode: "OpFunction".into(),
        result_id: None,
        detail: format!("payload handles still changed after {MAX_SWEEPS} sweeps (a value derived from itself?)"),
    })
}

/// The handle type a variable of pointer type `ty` holds, if it holds one.
fn held_handle(ir: &Ir, handles: &[Word], ty: Word) -> Option<Word> {
    let (sc, pointee) = ir.pointer_info(ty)?;
    (sc != NODE && handles.contains(&pointee)).then_some(pointee)
}

fn is_node_ptr(ir: &Ir, ty: Word) -> bool {
    matches!(ir.pointer_info(ty), Some((NODE, _)))
}

/// Rewrites one instruction into `out`; true when something changed.
fn rewrite_one(
    ir: &mut Ir,
    cx: &Ctx,
    handles: &[Word],
    types: &mut IdMap<Word>,
    mut i: Instruction,
    out: &mut Vec<Instruction>,
) -> Result<bool, LowerError> {
    let op = i.class.opcode;
    let ty_of = |types: &IdMap<Word>, k: usize, i: &Instruction| op_id(i, k).and_then(|w| types.get(&w).copied());
    let unsupported = |i: &Instruction, detail: &str| LowerError::Unsupported {
        entry: cx.entry(),
        opcode: format!("Op{:?}", i.class.opcode),
        result_id: i.result_id,
        detail: detail.into(),
    };
    match op {
        Op::Load => {
            let pty = ty_of(types, 0, &i);
            if let Some(pty) = pty.filter(|t| handles.contains(t)) {
                // Loading "the array" from a payload pointer yields the handle.
                let (Some(rid), Some(src)) = (i.result_id, op_id(&i, 0)) else { return Ok(false) };
                types.insert(rid, pty);
                out.push(inst(Op::CopyObject, Some(pty), Some(rid), vec![id(src)]));
                return Ok(true);
            }
        }
        Op::Store | Op::CopyMemory | Op::CopyMemorySized => {
            let pointers = if op == Op::Store { 0..1 } else { 0..2 };
            let targets_records =
                pointers.into_iter().any(|k| ty_of(types, k, &i).is_some_and(|t| handles.contains(&t)));
            if targets_records {
                return Err(unsupported(&i, "whole payload arrays cannot be stored or copied as memory"));
            }
        }
        Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain => {
            let base_ty = ty_of(types, 0, &i);
            if let Some(h) = base_ty.and_then(|t| held_handle(ir, handles, t)) {
                let loaded = load_handle(ir, &mut i, 0, h, out);
                types.insert(loaded, h);
                retype_to_node(ir, types, &mut i);
                out.push(i);
                return Ok(true);
            }
            if base_ty.is_some_and(|t| is_node_ptr(ir, t)) && retype_to_node(ir, types, &mut i) {
                out.push(i);
                return Ok(true);
            }
        }
        Op::CopyObject | Op::Phi | Op::Select => {
            let first_ptr = match op {
                Op::Select => 1,
                _ => 0,
            };
            // Phi operands alternate value/label; a label has no type.
            let node_operand =
                (first_ptr..i.operands.len()).any(|k| ty_of(types, k, &i).is_some_and(|t| is_node_ptr(ir, t)));
            if node_operand && retype_to_node(ir, types, &mut i) {
                out.push(i);
                return Ok(true);
            }
        }
        Op::EnqueueNodePayloadsAMDX | Op::NodePayloadArrayLengthAMDX | Op::FinishWritingNodePayloadAMDX => {
            if let Some(h) = ty_of(types, 0, &i).and_then(|t| held_handle(ir, handles, t)) {
                let loaded = load_handle(ir, &mut i, 0, h, out);
                types.insert(loaded, h);
                out.push(i);
                return Ok(true);
            }
        }
        _ => {}
    }
    out.push(i);
    Ok(false)
}

/// Emits `OpLoad h` of operand `k` of `i` and makes `i` use the loaded handle.
fn load_handle(ir: &mut Ir, i: &mut Instruction, k: usize, h: Word, out: &mut Vec<Instruction>) -> Word {
    let loaded = ir.id();
    if let Some(Operand::IdRef(var)) = i.operands.get_mut(k) {
        out.push(inst(Op::Load, Some(h), Some(loaded), vec![id(*var)]));
        *var = loaded;
    }
    loaded
}

/// Makes the result type of `i` a `NodePayloadAMDX` pointer to the same
/// pointee; false when it already is one (or is not a pointer).
fn retype_to_node(ir: &mut Ir, types: &mut IdMap<Word>, i: &mut Instruction) -> bool {
    let Some(rt) = i.result_type else { return false };
    let Some((sc, pointee)) = ir.pointer_info(rt) else { return false };
    if sc == NODE {
        return false;
    }
    let nt = ir.t_ptr(NODE, pointee, None);
    i.result_type = Some(nt);
    if let Some(r) = i.result_id {
        types.insert(r, nt);
    }
    true
}
