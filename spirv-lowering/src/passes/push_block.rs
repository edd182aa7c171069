//! The node push block.
//!
//! Matches: the application's `PushConstant` variable used by the entry point,
//! if any. Emits: a copy of its struct type with the members of
//! `abi::NodePush` (`dispatch`, `ctx`: u64; `level`, `slot`: u32) from
//! `push_offset` on, the variable retyped to it; or, with no application
//! block, a new `Block` struct and variable. Afterwards the entry point has
//! exactly one push-constant variable and [`PushVar`] says how to reach the
//! members.

use crate::analyze::EntryFacts;
use crate::error::LowerError;
use crate::ir::{id, inst, lit, op_id, Ir};
use crate::layout::size_of;
use crate::options::LowerOptions;
use crate::runtime::PushVar;
use rspirv::dr::Operand;
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::HashSet;

/// Bytes of `abi::NodePush`.
const SIZE: u32 = std::mem::size_of::<crate::abi::NodePush>() as u32;

pub fn run(ir: &mut Ir, facts: &EntryFacts, opts: &LowerOptions) -> Result<PushVar, LowerError> {
    let entry = facts.info.name.clone();
    let off = opts.push_offset;
    let size = SIZE;
    // Every member must be addressable: off + size must not wrap.
    let end = off.saturating_add(size);
    if end > opts.max_push_constants_size || off > u32::MAX - size {
        return Err(LowerError::PushBlockDoesNotFit { entry, offset: off, size, max: opts.max_push_constants_size });
    }
    if off % 8 != 0 {
        return Err(LowerError::BadPushOffset { entry, offset: off, detail: "not a multiple of 8".into() });
    }
    let u64t = ir.t_u64();
    let u32t = ir.t_u32();
    let ptr_u64 = ir.t_ptr(StorageClass::PushConstant, u64t, None);
    let ptr_u32 = ir.t_ptr(StorageClass::PushConstant, u32t, None);
    let members = [id(u64t), id(u64t), id(u32t), id(u32t)];
    let offsets = [off, off + 8, off + 16, off + 20];
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
        ir.m.types_global_values.push(inst(Op::TypeStruct, None, Some(s), members.to_vec()));
        for (k, o) in offsets.iter().enumerate() {
            ir.member_decorate(s, k as u32, Decoration::Offset, vec![lit(*o)]);
        }
        ir.decorate(s, Decoration::Block, vec![]);
        ir.name(s, "NodePush");
        let var = ir.global_var(StorageClass::PushConstant, s, "node_push");
        return Ok(PushVar { var, member: 0, ptr_u64, ptr_u32 });
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
    let mut all = old.operands.clone();
    all.extend(members);
    ir.m.types_global_values.push(inst(Op::TypeStruct, None, Some(s), all));
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
    for (k, o) in offsets.iter().enumerate() {
        ir.member_decorate(s, n + k as u32, Decoration::Offset, vec![lit(*o)]);
    }
    let pt = ir.t_ptr(StorageClass::PushConstant, s, None);
    if let Some(v) = ir.m.types_global_values.iter_mut().find(|i| i.result_id == Some(var)) {
        v.result_type = Some(pt);
    }
    Ok(PushVar { var, member: n, ptr_u64, ptr_u32 })
}
