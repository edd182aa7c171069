//! Payload storage: `NodePayloadAMDX` -> `PhysicalStorageBuffer`.
//!
//! Matches: every `OpTypePointer NodePayloadAMDX`, the input payload variable,
//! and every access chain whose base is a payload array pointer.
//! Emits:
//! * pointer types retyped in place (ids kept, so function types, parameters
//!   and phis stay valid): the input array pointer becomes a pointer to the
//!   workgroup's first `RecordRef` (stride 16); an output array pointer becomes
//!   a pointer to its first record (ArrayStride = record stride); any other
//!   payload pointer becomes a PSB pointer to the same pointee;
//! * the input variable becomes a `Private` variable holding that pointer
//!   (the prologue stores it); each function that used it loads it once;
//! * `OpAccessChain in[i] rest` -> load `records[i].payload`, convert to a
//!   record pointer, then `OpAccessChain rest` (coalesced records need not be
//!   contiguous); `OpAccessChain out[i] rest` -> `OpPtrAccessChain out i rest`;
//!   `OpPtrAccessChain a e i rest` on either uses index `e + i` (stepping whole
//!   arrays is meaningless for unsized payload arrays).
//!
//! Afterwards no `NodePayloadAMDX` storage class is left.

use super::Ctx;
use crate::analyze::record_stride;
use crate::consts::eval;
use crate::error::LowerError;
use crate::ir::{id, inst, op_id, Ir};
use crate::layout::{scalar_align, size_of};
use rspirv::dr::{Instruction, Operand};
use spirv::{Decoration, MemoryAccess, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// How the input payload is reached after this pass.
#[derive(Debug, Clone, Copy)]
pub struct InputLowering {
    /// `Private` variable holding the pointer to this workgroup's first RecordRef.
    pub holder: Option<Word>,
    /// Type of the value held: `PSB RecordRef*` (ArrayStride 16) for an array
    /// input, the record pointer for a plain struct input.
    pub ptr_type: Word,
    /// The input is a plain struct (the holder points at the payload itself).
    pub plain: bool,
}

pub fn run(ir: &mut Ir, cx: &Ctx) -> Result<InputLowering, LowerError> {
    let spec = &cx.opts.specialization;
    let psb = StorageClass::PhysicalStorageBuffer;
    let mut input_ptrs: HashSet<Word> = HashSet::new();
    let mut output_ptrs: HashSet<Word> = HashSet::new();
    let mut rec_ptr_of: HashMap<Word, Word> = HashMap::new(); // array ptr type -> record ptr type
    let mut retypes: Vec<(Word, Word, Option<u32>)> = vec![]; // (ptr type, new pointee, stride)
    for i in &ir.m.types_global_values {
        if i.class.opcode != Op::TypePointer
            || !matches!(i.operands.first(), Some(Operand::StorageClass(StorageClass::NodePayloadAMDX)))
        {
            continue;
        }
        let (Some(t), Some(pointee)) = (i.result_id, op_id(i, 1)) else { continue };
        let pdef = ir.global(pointee);
        let stride_of = |s: Word| {
            let size = size_of(ir, spec, s)?;
            record_stride(size, scalar_align(ir, s), ir.has_decoration(s, Decoration::TrackFinishWritingAMDX))
        };
        if pdef.is_some_and(|d| d.class.opcode == Op::TypeNodePayloadArrayAMDX) {
            let elem = pdef.and_then(|d| op_id(d, 0)).unwrap_or(0);
            if Some(pointee) == cx.facts.input_array_type {
                input_ptrs.insert(t);
                retypes.push((t, cx.abi.record, Some(16)));
            } else {
                output_ptrs.insert(t);
                retypes.push((t, elem, stride_of(elem)));
            }
            rec_ptr_of.insert(t, elem);
        } else {
            let is_struct = pdef.is_some_and(|d| d.class.opcode == Op::TypeStruct);
            let stride = if is_struct { stride_of(pointee) } else { size_of(ir, spec, pointee).filter(|s| *s > 0) };
            retypes.push((t, pointee, stride));
        }
    }
    let mut elem_strides: HashMap<Word, Option<u32>> = HashMap::new();
    for (t, pointee, stride) in &retypes {
        if let Some(i) = ir.m.types_global_values.iter_mut().find(|i| i.result_id == Some(*t)) {
            i.operands = vec![Operand::StorageClass(psb), id(*pointee)];
        }
        // The application may already give the stride (it must equal the record size).
        let existing = ir.has_decoration(*t, Decoration::ArrayStride);
        if let (Some(s), false) = (stride, existing) {
            ir.decorate(*t, Decoration::ArrayStride, vec![crate::ir::lit(*s)]);
        }
        elem_strides.insert(*t, *stride);
    }
    // Record pointer types for the input (records are reached one by one).
    let mut in_rec_ptr: HashMap<Word, Word> = HashMap::new();
    for t in &input_ptrs {
        let elem = rec_ptr_of.get(t).copied().unwrap_or(0);
        let size = size_of(ir, spec, elem).unwrap_or(0);
        let stride = record_stride(size, scalar_align(ir, elem), false).unwrap_or(4);
        let p = ir.t_ptr(psb, elem, Some(stride));
        in_rec_ptr.insert(*t, p);
    }

    // The input variable becomes a Private holder of the RecordRef pointer.
    let ptr_type = cx.facts.input_ptr_type.unwrap_or(cx.abi.p_record);
    let mut holder = None;
    if let Some(v) = cx.facts.input_var {
        let hp = ir.t_ptr(StorageClass::Private, ptr_type, None);
        if let Some(i) = ir.m.types_global_values.iter_mut().find(|i| i.result_id == Some(v)) {
            i.result_type = Some(hp);
            i.operands = vec![Operand::StorageClass(StorageClass::Private)];
        }
        holder = Some(v);
        for fi in 0..ir.m.functions.len() {
            let uses = ir.m.functions.get(fi).is_some_and(|f| {
                f.blocks.iter().flat_map(|b| b.instructions.iter()).any(|i| crate::ir::used_ids(i).any(|u| u == v))
            });
            if !uses {
                continue;
            }
            let loaded = ir.id();
            let Some(f) = ir.m.functions.get_mut(fi) else { continue };
            for i in f.blocks.iter_mut().flat_map(|b| b.instructions.iter_mut()) {
                crate::ir::map_operand_ids(i, &|w| if w == v { loaded } else { w });
            }
            if let Some(b) = f.blocks.first_mut() {
                // After the block's last OpVariable (OpLine may sit between them).
                let at = b.instructions.iter().rposition(|i| i.class.opcode == Op::Variable).map_or(0, |k| k + 1);
                b.instructions.insert(at, inst(Op::Load, Some(ptr_type), Some(loaded), vec![id(v)]));
            }
        }
    }

    // Access chains on payload arrays.
    let types = ir.type_map();
    let u64t = cx.abi.u64;
    let (p_u64, p_record) = (cx.abi.p_u64, cx.abi.p_record);
    let zero = ir.c_u32(0);
    let fcount = ir.m.functions.len();
    for fi in 0..fcount {
        let nblocks = ir.m.functions.get(fi).map(|f| f.blocks.len()).unwrap_or(0);
        for bi in 0..nblocks {
            let old = match ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)) {
                Some(b) => std::mem::take(&mut b.instructions),
                None => continue,
            };
            let mut out: Vec<Instruction> = Vec::with_capacity(old.len());
            for i in old {
                let op = i.class.opcode;
                let is_chain = matches!(op, Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain);
                let base = op_id(&i, 0);
                let bty = base.and_then(|b| types.get(&b)).copied();
                let (Some(base), Some(bty), true) = (base, bty, is_chain) else {
                    out.push(i);
                    continue;
                };
                let is_in = input_ptrs.contains(&bty);
                if !is_in && !output_ptrs.contains(&bty) {
                    out.push(i);
                    continue;
                }
                let mut idx: Vec<Operand> = i.operands.iter().skip(1).cloned().collect();
                // PtrAccessChain: fold the Element operand into the first index.
                if op == Op::PtrAccessChain && idx.len() >= 2 {
                    let e = op_id(&i, 1).unwrap_or(zero);
                    let first = op_id(&i, 2).unwrap_or(zero);
                    if eval(ir, spec, e) != Some(0) {
                        let ity = types.get(&first).copied().unwrap_or(cx.abi.u32);
                        let s = ir.id();
                        out.push(inst(Op::IAdd, Some(ity), Some(s), vec![id(e), id(first)]));
                        idx.splice(0..2, [id(s)]);
                    } else {
                        idx.remove(0);
                    }
                }
                let (Some(rt), Some(rid)) = (i.result_type, i.result_id) else {
                    out.push(i);
                    continue;
                };
                if idx.is_empty() {
                    // A chain with no index is a copy of the pointer.
                    out.push(inst(Op::CopyObject, Some(rt), Some(rid), vec![id(base)]));
                    continue;
                }
                if !is_in {
                    let mut ops = vec![id(base)];
                    ops.extend(idx);
                    out.push(inst(Op::PtrAccessChain, Some(rt), Some(rid), ops));
                    continue;
                }
                if op == Op::PtrAccessChain && i.operands.len() == 2 {
                    // Stepping the RecordRef view itself.
                    out.push(inst(Op::PtrAccessChain, Some(p_record), Some(rid), vec![id(base), idx.remove(0)]));
                    continue;
                }
                let rr = ir.id();
                let pa = ir.id();
                let addr = ir.id();
                out.push(inst(Op::PtrAccessChain, Some(p_record), Some(rr), vec![id(base), idx.remove(0)]));
                out.push(inst(Op::AccessChain, Some(p_u64), Some(pa), vec![id(rr), id(zero)]));
                out.push(inst(
                    Op::Load,
                    Some(u64t),
                    Some(addr),
                    vec![id(pa), Operand::MemoryAccess(MemoryAccess::ALIGNED), crate::ir::lit(8)],
                ));
                if idx.is_empty() {
                    out.push(inst(Op::ConvertUToPtr, Some(rt), Some(rid), vec![id(addr)]));
                } else {
                    let rp = in_rec_ptr.get(&bty).copied().unwrap_or(rt);
                    let p = ir.id();
                    out.push(inst(Op::ConvertUToPtr, Some(rp), Some(p), vec![id(addr)]));
                    let mut ops = vec![id(p)];
                    ops.extend(idx);
                    out.push(inst(Op::AccessChain, Some(rt), Some(rid), ops));
                }
            }
            if let Some(b) = ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)) {
                b.instructions = out;
            }
        }
    }
    let plain = cx.facts.input_var.is_some() && cx.facts.input_array_type.is_none();
    Ok(InputLowering { holder, ptr_type, plain })
}
