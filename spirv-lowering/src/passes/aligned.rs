//! `Aligned` memory operands.
//!
//! Matches: every `OpLoad`, `OpStore` and `OpCopyMemory` whose pointer is a
//! `PhysicalStorageBuffer` pointer. Emits: the `Aligned` memory operand (the
//! largest scalar size inside the pointee, which payload strides and the
//! 16-byte allocation alignment guarantee), merged into an existing memory
//! operand mask. Afterwards every PSB access carries `Aligned`, as Vulkan
//! requires.

use crate::ir::{lit, op_id, Ir};
use crate::layout::scalar_align;
use rspirv::dr::{Instruction, Operand};
use spirv::{MemoryAccess, Op, StorageClass, Word};
use std::collections::HashMap;

pub fn run(ir: &mut Ir) {
    let types = ir.type_map();
    let mut align_of_ptr: HashMap<Word, Option<u32>> = HashMap::new();
    let mut psb_align = |ir: &Ir, p: Word| -> Option<u32> {
        let t = *types.get(&p)?;
        *align_of_ptr.entry(t).or_insert_with(|| match ir.pointer_info(t) {
            Some((StorageClass::PhysicalStorageBuffer, pointee)) => Some(scalar_align(ir, pointee)),
            _ => None,
        })
    };
    let mut edits: Vec<(usize, usize, usize, Vec<Option<u32>>)> = vec![];
    for (fi, f) in ir.m.functions.iter().enumerate() {
        for (bi, b) in f.blocks.iter().enumerate() {
            for (ii, i) in b.instructions.iter().enumerate() {
                let ptrs: Vec<Option<u32>> = match i.class.opcode {
                    Op::Load | Op::Store => vec![op_id(i, 0).and_then(|p| psb_align(ir, p))],
                    Op::CopyMemory => {
                        vec![op_id(i, 0).and_then(|p| psb_align(ir, p)), op_id(i, 1).and_then(|p| psb_align(ir, p))]
                    }
                    _ => continue,
                };
                if ptrs.iter().any(|x| x.is_some()) {
                    edits.push((fi, bi, ii, ptrs));
                }
            }
        }
    }
    for (fi, bi, ii, al) in edits {
        let Some(i) =
            ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)).and_then(|b| b.instructions.get_mut(ii))
        else {
            continue;
        };
        match i.class.opcode {
            Op::Load => add_aligned(i, 1, al.first().copied().flatten().unwrap_or(1)),
            Op::Store => add_aligned(i, 2, al.first().copied().flatten().unwrap_or(1)),
            _ => {
                // OpCopyMemory: first mask for the target, second for the source.
                if i.operands.len() == 2 {
                    let t = al.first().copied().flatten().unwrap_or(1);
                    let s = al.get(1).copied().flatten().unwrap_or(1);
                    i.operands.extend([
                        Operand::MemoryAccess(MemoryAccess::ALIGNED),
                        lit(t),
                        Operand::MemoryAccess(MemoryAccess::ALIGNED),
                        lit(s),
                    ]);
                }
            }
        }
    }
}

/// Adds `Aligned a` to the memory operands starting at operand `at`.
fn add_aligned(i: &mut Instruction, at: usize, a: u32) {
    match i.operands.get(at).cloned() {
        None => i.operands.extend([Operand::MemoryAccess(MemoryAccess::ALIGNED), lit(a)]),
        Some(Operand::MemoryAccess(m)) if !m.contains(MemoryAccess::ALIGNED) => {
            if let Some(o) = i.operands.get_mut(at) {
                *o = Operand::MemoryAccess(m | MemoryAccess::ALIGNED);
            }
            // Aligned's literal is the first extra operand (bit order).
            i.operands.insert(at + 1, lit(a));
        }
        _ => {}
    }
}
