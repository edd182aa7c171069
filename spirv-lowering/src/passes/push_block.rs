//! The node push block.
//!
//! Matches: the application's `PushConstant` variable used by the entry point,
//! if any. Emits: a copy of its struct type with two `u64` members
//! (`NodePush::dispatch`, `NodePush::ctx`) at `push_offset` and `push_offset+8`,
//! the variable retyped to it; or, with no application block, a new `Block`
//! struct and variable. Afterwards the entry point has exactly one push-constant
//! variable and [`PushVar`] says how to reach the two addresses.

use crate::analyze::EntryFacts;
use crate::error::LowerError;
use crate::ir::{id, inst, lit, op_id, Ir};
use crate::layout::size_of;
use crate::LowerOptions;
use rspirv::dr::Operand;
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::HashSet;

/// How to reach the node push members.
#[derive(Debug, Clone, Copy)]
pub struct PushVar {
    pub var: Word,
    /// Member index of `NodePush::dispatch` (`ctx` is the next one).
    pub member: u32,
    /// `OpTypePointer PushConstant u64`.
    pub ptr_u64: Word,
}

pub fn run(ir: &mut Ir, facts: &EntryFacts, opts: &LowerOptions) -> Result<PushVar, LowerError> {
    let entry = facts.info.name.clone();
    let off = opts.push_offset;
    let size = 16u32;
    // Both members must be addressable: off + 16 must not wrap.
    let end = off.saturating_add(size);
    if end > opts.max_push_constants_size || off > u32::MAX - size {
        return Err(LowerError::PushBlockDoesNotFit { entry, offset: off, size, max: opts.max_push_constants_size });
    }
    if off % 8 != 0 {
        return Err(LowerError::BadPushOffset { entry, offset: off, detail: "not a multiple of 8".into() });
    }
    let u64t = ir.t_u64();
    let ptr_u64 = ir.t_ptr(StorageClass::PushConstant, u64t, None);
    // Push-constant variables referenced by the remaining (reachable) functions.
    let used: HashSet<Word> =
        ir.m.functions
            .iter()
            .flat_map(|f| f.blocks.iter().flat_map(|b| b.instructions.iter()))
            .flat_map(|i| crate::ir::used_ids(i).collect::<Vec<_>>())
            .collect();
    let app_var = ir.m.types_global_values.iter().find(|i| {
        i.class.opcode == Op::Variable
            && matches!(i.operands.first(), Some(Operand::StorageClass(StorageClass::PushConstant)))
            && i.result_id.is_some_and(|r| used.contains(&r))
    });
    let Some(app_var) = app_var.cloned() else {
        let s = ir.id();
        ir.m.types_global_values.push(inst(Op::TypeStruct, None, Some(s), vec![id(u64t), id(u64t)]));
        ir.member_decorate(s, 0, Decoration::Offset, vec![lit(off)]);
        ir.member_decorate(s, 1, Decoration::Offset, vec![lit(off + 8)]);
        ir.decorate(s, Decoration::Block, vec![]);
        ir.name(s, "NodePush");
        let var = ir.global_var(StorageClass::PushConstant, s, "node_push");
        return Ok(PushVar { var, member: 0, ptr_u64 });
    };
    let var = app_var.result_id.unwrap_or(0);
    let spec = &opts.specialization;
    let s_old = app_var.result_type.and_then(|t| ir.pointer_info(t)).map(|p| p.1).unwrap_or(0);
    let old = ir.global(s_old).filter(|i| i.class.opcode == Op::TypeStruct).cloned().ok_or_else(|| {
        LowerError::Unsupported {
            entry: entry.clone(),
            opcode: "OpVariable".into(),
            result_id: Some(var),
            detail: "push-constant variable is not a struct".into(),
        }
    })?;
    let app_end = size_of(ir, spec, s_old).ok_or_else(|| LowerError::Unsupported {
        entry: entry.clone(),
        opcode: "OpTypeStruct".into(),
        result_id: Some(s_old),
        detail: "push-constant block without explicit layout".into(),
    })?;
    if app_end > off {
        return Err(LowerError::BadPushOffset {
            entry,
            offset: off,
            detail: format!("the application's push block ends at byte {app_end}"),
        });
    }
    let n = old.operands.len() as u32;
    let s = ir.id();
    let mut members = old.operands.clone();
    members.push(id(u64t));
    members.push(id(u64t));
    ir.m.types_global_values.push(inst(Op::TypeStruct, None, Some(s), members));
    // Copy member decorations and names, then the struct's own decorations.
    let copies: Vec<_> =
        ir.m.annotations
            .iter()
            .filter(|a| matches!(a.class.opcode, Op::MemberDecorate | Op::Decorate) && op_id(a, 0) == Some(s_old))
            .cloned()
            .collect();
    for mut a in copies {
        if let Some(o) = a.operands.first_mut() {
            *o = id(s);
        }
        ir.m.annotations.push(a);
    }
    let names: Vec<_> = ir.m.debug_names.iter().filter(|a| op_id(a, 0) == Some(s_old)).cloned().collect();
    for mut a in names {
        if let Some(o) = a.operands.first_mut() {
            *o = id(s);
        }
        ir.m.debug_names.push(a);
    }
    ir.member_decorate(s, n, Decoration::Offset, vec![lit(off)]);
    ir.member_decorate(s, n + 1, Decoration::Offset, vec![lit(off + 8)]);
    let pt = ir.t_ptr(StorageClass::PushConstant, s, None);
    if let Some(v) = ir.m.types_global_values.iter_mut().find(|i| i.result_id == Some(var)) {
        v.result_type = Some(pt);
    }
    Ok(PushVar { var, member: n, ptr_u64 })
}
