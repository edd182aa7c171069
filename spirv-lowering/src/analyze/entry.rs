//! The module's node entry points: their names, which is a mesh node, the
//! functions one reaches, the variables its interface lists, and node
//! names given as string constants.

use crate::ir::{op_id, op_str, Ir};
use rspirv::dr::Operand;
use spirv::{Decoration, ExecutionModel, Op, Word};
use std::collections::HashSet;

/// All node entry point names: GLCompute (compute nodes) and MeshEXT (mesh nodes).
pub fn entry_names(ir: &Ir) -> Vec<(Word, String)> {
    ir.m.entry_points
        .iter()
        .filter(|e| {
            matches!(
                e.operands.first(),
                Some(Operand::ExecutionModel(ExecutionModel::GLCompute | ExecutionModel::MeshEXT))
            )
        })
        .filter_map(|e| Some((op_id(e, 1)?, op_str(e, 2)?.to_string())))
        .collect()
}

/// `entry` is a `MeshEXT` entry point.
pub(super) fn is_mesh_entry(ir: &Ir, entry: Word) -> bool {
    ir.m.entry_points.iter().any(|e| {
        op_id(e, 1) == Some(entry)
            && matches!(e.operands.first(), Some(Operand::ExecutionModel(ExecutionModel::MeshEXT)))
    })
}

/// Functions reachable from `entry` through OpFunctionCall.
pub fn reachable(ir: &Ir, entry: Word) -> HashSet<Word> {
    let mut seen = HashSet::from([entry]);
    let mut stack = vec![entry];
    while let Some(f) = stack.pop() {
        let Some(func) = ir.m.functions.iter().find(|x| x.def.as_ref().and_then(|d| d.result_id) == Some(f)) else {
            continue;
        };
        for i in func.blocks.iter().flat_map(|b| b.instructions.iter()) {
            if i.class.opcode == Op::FunctionCall {
                if let Some(c) = op_id(i, 0) {
                    if seen.insert(c) {
                        stack.push(c);
                    }
                }
            }
        }
    }
    seen
}

pub(super) fn fn_id(f: &rspirv::dr::Function) -> Option<Word> {
    f.def.as_ref().and_then(|d| d.result_id)
}

/// The ids `entry_fn`'s `OpEntryPoint` lists as its interface.
pub(super) fn interface(ir: &Ir, entry_fn: Word) -> Vec<Word> {
    let entry_point = ir.m.entry_points.iter().find(|x| op_id(x, 1) == Some(entry_fn));
    entry_point
        .map(|x| {
            x.operands
                .iter()
                .skip(3)
                .filter_map(|o| match o {
                    Operand::IdRef(w) => Some(*w),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The string of an `OpConstantStringAMDX`/`OpSpecConstantStringAMDX` and its SpecId.
pub fn node_name(ir: &Ir, w: Word) -> Option<(String, Option<u32>)> {
    let i = ir.global(w)?;
    match i.class.opcode {
        Op::ConstantStringAMDX => Some((op_str(i, 0)?.to_string(), None)),
        Op::SpecConstantStringAMDX => Some((op_str(i, 0)?.to_string(), ir.decoration_word(w, Decoration::SpecId))),
        _ => None,
    }
}
