//! Aliasing decorations on holders of `PhysicalStorageBuffer` pointers.
//!
//! Matches: every `OpVariable` whose pointee is a `PhysicalStorageBuffer`
//! pointer (the private record pointers the prologue fills, function-local
//! copies), and every `OpFunctionParameter` that is such a pointer or points
//! to one. Emits: `AliasedPointer` (for variables and pointer-to-pointer
//! parameters) or `Aliased` (for pointer parameters) where neither it nor
//! its `Restrict` counterpart is present. Afterwards the module satisfies the
//! rule older validators enforce (the Khronos validation layer 1.3.239 built
//! into Debian 12 rejects such a variable without it; SPIRV-Tools 2025.5 no
//! longer does). `Aliased` is the safe choice: payload records may be
//! reached through several pointers.

use crate::ir::{op_id, Ir};
use rspirv::dr::Operand;
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::HashSet;

pub fn run(ir: &mut Ir) {
    let is_psb_pointer =
        |ir: &Ir, ty: Word| matches!(ir.pointer_info(ty), Some((StorageClass::PhysicalStorageBuffer, _)));
    let points_to_psb_pointer = |ir: &Ir, ty: Word| match ir.pointer_info(ty) {
        Some((_, pointee)) => is_psb_pointer(ir, pointee),
        None => false,
    };
    let decorated: HashSet<Word> =
        ir.m.annotations
            .iter()
            .filter(|a| a.class.opcode == Op::Decorate)
            .filter(|a| {
                matches!(
                    a.operands.get(1),
                    Some(Operand::Decoration(
                        Decoration::AliasedPointer
                            | Decoration::RestrictPointer
                            | Decoration::Aliased
                            | Decoration::Restrict
                    ))
                )
            })
            .filter_map(|a| op_id(a, 0))
            .collect();
    let mut wanted: Vec<(Word, Decoration)> = Vec::new();
    let globals = ir.m.types_global_values.iter();
    let locals = ir.m.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.instructions.iter()));
    for i in globals.chain(locals) {
        if i.class.opcode != Op::Variable {
            continue;
        }
        if let (Some(id), Some(ty)) = (i.result_id, i.result_type) {
            if points_to_psb_pointer(ir, ty) {
                wanted.push((id, Decoration::AliasedPointer));
            }
        }
    }
    for p in ir.m.functions.iter().flat_map(|f| f.parameters.iter()) {
        if let (Some(id), Some(ty)) = (p.result_id, p.result_type) {
            if is_psb_pointer(ir, ty) {
                wanted.push((id, Decoration::Aliased));
            } else if points_to_psb_pointer(ir, ty) {
                wanted.push((id, Decoration::AliasedPointer));
            }
        }
    }
    for (id, decoration) in wanted {
        if !decorated.contains(&id) {
            ir.decorate(id, decoration, vec![]);
        }
    }
}
