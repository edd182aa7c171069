//! Final check: nothing the passes removed is still referenced, and calls
//! match their callees.
//!
//! Matches: every instruction of the lowered module (entry point, execution
//! modes, names, decorations, types, constants, variables, functions).
//! Emits nothing. Fails with [`LowerError::Invalid`] naming the instruction
//! and the id when an id is used but defined nowhere (a type a pass removed
//! but some variable, parameter or load still names, for example), or when
//! an `OpFunctionCall` argument's type is not the callee's parameter type
//! (an input that passes a node output object to a helper declared with
//! another parameter type; DXC 1.9 emits such calls), so such a module is
//! reported instead of reaching a driver that may crash on it.
//! Afterwards every id operand and result type has a definition and every
//! call is well typed.

use super::context::Ctx;
use crate::error::LowerError;
use crate::ir::{used_ids, IdMap};
use rspirv::dr::Instruction;
use spirv::Word;

pub fn run(ir: &crate::ir::Ir, cx: &Ctx) -> Result<(), LowerError> {
    let m = &ir.m;
    let mut defined: IdMap<()> = IdMap::default();
    let mut define = |i: &Instruction| {
        if let Some(r) = i.result_id {
            defined.insert(r, ());
        }
    };
    m.ext_inst_imports.iter().for_each(&mut define);
    m.types_global_values.iter().for_each(&mut define);
    for f in &m.functions {
        f.def.iter().for_each(&mut define);
        f.parameters.iter().for_each(&mut define);
        for b in &f.blocks {
            b.label.iter().for_each(&mut define);
            b.instructions.iter().for_each(&mut define);
        }
    }
    let bodies = m.functions.iter().flat_map(|f| {
        f.def.iter().chain(f.parameters.iter()).chain(f.blocks.iter().flat_map(|b| b.instructions.iter()))
    });
    let all = m
        .entry_points
        .iter()
        .chain(m.execution_modes.iter())
        .chain(m.debug_names.iter())
        .chain(m.annotations.iter())
        .chain(m.types_global_values.iter())
        .chain(bodies);
    for i in all {
        if let Some(missing) = used_ids(i).find(|u: &Word| !defined.contains_key(u)) {
            return Err(LowerError::Invalid {
                entry: cx.entry(),
                opcode: format!("Op{:?}", i.class.opcode),
                result_id: i.result_id,
                detail: format!("the lowered module still refers to %{missing}, which it no longer defines"),
            });
        }
    }
    check_calls(ir, cx)
}

fn check_calls(ir: &crate::ir::Ir, cx: &Ctx) -> Result<(), LowerError> {
    let types = ir.type_map();
    let params: IdMap<Vec<Word>> =
        ir.m.functions
            .iter()
            .filter_map(|f| {
                let id = f.def.as_ref()?.result_id?;
                Some((id, f.parameters.iter().filter_map(|p| p.result_type).collect()))
            })
            .collect();
    let calls = ir.m.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.instructions.iter()));
    for call in calls.filter(|i| i.class.opcode == spirv::Op::FunctionCall) {
        let Some(callee) = crate::ir::op_id(call, 0) else { continue };
        let Some(expected) = params.get(&callee) else { continue };
        for (k, want) in expected.iter().enumerate() {
            let got = crate::ir::op_id(call, k + 1).and_then(|a| types.get(&a).copied());
            if got != Some(*want) {
                return Err(LowerError::Invalid {
                    entry: cx.entry(),
                    opcode: "OpFunctionCall".into(),
                    result_id: call.result_id,
                    detail: format!(
                        "argument {k} of the call to %{callee} has type {} but the parameter has type %{want} \
                         (a node output or record object passed to a helper function declared with another type)",
                        got.map_or("(none)".to_string(), |t| format!("%{t}"))
                    ),
                });
            }
        }
    }
    Ok(())
}
