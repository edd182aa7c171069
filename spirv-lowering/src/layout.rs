//! Explicit-layout sizes and alignments of payload types (from Offset and
//! ArrayStride decorations), used for record sizes, strides and the `Aligned`
//! memory operand that every PhysicalStorageBuffer access needs.
//!
//! Both walks are memoized per call and treat a type that refers back to
//! itself as unknown, so a malformed module (a struct whose members name the
//! same struct many times, or a cycle) costs linear time, not exponential.

use crate::consts::{eval, SpecMap};
use crate::ir::{op_id, op_lit, IdMap, Ir};
use rspirv::dr::Operand;
use spirv::{Decoration, Op, Word};

/// Byte size of `ty` under its explicit layout; `None` for unsized or unknown types.
pub fn size_of(ir: &Ir, spec: &SpecMap, ty: Word) -> Option<u32> {
    size_memo(ir, spec, ty, &mut IdMap::default())
}

fn size_memo(ir: &Ir, spec: &SpecMap, ty: Word, memo: &mut IdMap<Option<u32>>) -> Option<u32> {
    if let Some(v) = memo.get(&ty) {
        return *v; // also `None` while `ty` is being computed (a cycle)
    }
    memo.insert(ty, None);
    let v = size_uncached(ir, spec, ty, memo);
    memo.insert(ty, v);
    v
}

fn size_uncached(ir: &Ir, spec: &SpecMap, ty: Word, memo: &mut IdMap<Option<u32>>) -> Option<u32> {
    let i = ir.global(ty)?;
    match i.class.opcode {
        Op::TypeInt | Op::TypeFloat => op_lit(i, 0).map(|w| w / 8),
        Op::TypeBool => Some(4),
        Op::TypeVector | Op::TypeMatrix => {
            let c = size_memo(ir, spec, op_id(i, 0)?, memo)?;
            c.checked_mul(op_lit(i, 1)?)
        }
        Op::TypeArray => {
            let len = u32::try_from(eval(ir, spec, op_id(i, 1)?)?).ok()?;
            let stride = match ir.decoration_word(ty, Decoration::ArrayStride) {
                Some(s) => s,
                None => size_memo(ir, spec, op_id(i, 0)?, memo)?,
            };
            len.checked_mul(stride)
        }
        Op::TypeStruct => {
            let mut end = 0u32;
            let decos = ir.member_decorations(ty);
            for (k, o) in i.operands.iter().enumerate() {
                let Operand::IdRef(m) = o else { return None };
                let off = decos.iter().find_map(|(mk, d, ops)| match (d, ops.first()) {
                    (Decoration::Offset, Some(Operand::LiteralBit32(v))) if *mk as usize == k => Some(*v),
                    _ => None,
                })?;
                let s = size_memo(ir, spec, *m, memo)?;
                end = end.max(off.checked_add(s)?);
            }
            Some(end)
        }
        Op::TypePointer => Some(8),
        _ => None,
    }
}

/// Largest scalar size inside `ty` (the alignment scalar block layout gives it); at least 1.
pub fn scalar_align(ir: &Ir, ty: Word) -> u32 {
    align_memo(ir, ty, &mut IdMap::default()).unwrap_or(4).max(1)
}

fn align_memo(ir: &Ir, ty: Word, memo: &mut IdMap<Option<u32>>) -> Option<u32> {
    if let Some(v) = memo.get(&ty) {
        return *v;
    }
    memo.insert(ty, None);
    let v = align_uncached(ir, ty, memo);
    memo.insert(ty, v);
    v
}

fn align_uncached(ir: &Ir, ty: Word, memo: &mut IdMap<Option<u32>>) -> Option<u32> {
    let i = ir.global(ty)?;
    match i.class.opcode {
        Op::TypeInt | Op::TypeFloat => op_lit(i, 0).map(|w| (w / 8).max(1)),
        Op::TypeBool => Some(4),
        Op::TypePointer => Some(8),
        Op::TypeVector | Op::TypeMatrix | Op::TypeArray | Op::TypeRuntimeArray => align_memo(ir, op_id(i, 0)?, memo),
        Op::TypeStruct => {
            let mut a = 1;
            for o in &i.operands {
                if let Operand::IdRef(m) = o {
                    a = a.max(align_memo(ir, *m, memo).unwrap_or(1));
                }
            }
            Some(a)
        }
        _ => None,
    }
}

/// Rounds `v` up to a multiple of `a` (a > 0).
pub fn round_up(v: u32, a: u32) -> Option<u32> {
    let a = a.max(1);
    v.checked_add(a - 1).map(|x| x / a * a)
}
