//! What the code the entry point reaches uses: ids, barriers, Workgroup
//! memory, pointer steps between records, the allocations with their
//! visibilities and the lengths asked, and the allocations every
//! invocation reaches.

use super::entry::fn_id;
use super::info::Visibility;
use crate::consts::{eval_u32, SpecMap};
use crate::error::LowerError;
use crate::ir::{op_id, used_ids, Ir};
use rspirv::dr::Operand;
use spirv::{Op, Scope, StorageClass, Word};
use std::collections::HashSet;

/// Ids and storage used by reachable code.
pub(super) struct CodeUse {
    /// Every id an instruction of the code uses.
    pub used: HashSet<Word>,
    pub uses_control_barriers: bool,
    /// The base of every `OpPtrAccessChain`.
    pub ptr_chain_bases: Vec<Word>,
    /// The payload array type of every allocation, with its visibility.
    pub visibilities: Vec<(Word, Visibility)>,
    /// The results of `OpAllocateNodePayloadsAMDX`.
    pub allocations: HashSet<Word>,
    /// The operands of `OpNodePayloadArrayLengthAMDX`.
    pub measured: Vec<Word>,
}

impl CodeUse {
    /// Scans `functions` (the entry point `name` reaches).
    pub fn scan(ir: &Ir, spec: &SpecMap, functions: &HashSet<Word>, name: &str) -> Result<CodeUse, LowerError> {
        let mut used: HashSet<Word> = HashSet::new();
        let mut uses_control_barriers = false;
        let mut ptr_chain_bases: Vec<Word> = vec![];
        let mut visibilities: Vec<(Word, Visibility)> = vec![];
        let mut allocations: HashSet<Word> = HashSet::new();
        let mut measured: Vec<Word> = vec![];
        for f in ir.m.functions.iter().filter(|f| fn_id(f).is_some_and(|w| functions.contains(&w))) {
            for i in f.parameters.iter().chain(f.blocks.iter().flat_map(|b| b.instructions.iter())) {
                used.extend(used_ids(i));
                match i.class.opcode {
                    Op::ControlBarrier => uses_control_barriers = true,
                    Op::NodePayloadArrayLengthAMDX => measured.extend(op_id(i, 0)),
                    Op::PtrAccessChain => ptr_chain_bases.push(op_id(i, 0).unwrap_or(0)),
                    Op::AllocateNodePayloadsAMDX => {
                        let scope = op_id(i, 0).and_then(|s| eval_u32(ir, spec, s));
                        let vis = match scope {
                            Some(s) if s == Scope::Workgroup as u32 => Visibility::Workgroup,
                            Some(s) if s == Scope::Invocation as u32 => Visibility::Invocation,
                            _ => {
                                return Err(LowerError::Invalid {
                                    entry: name.to_string(),
                                    opcode: "OpAllocateNodePayloadsAMDX".into(),
                                    result_id: i.result_id,
                                    detail: "Visibility must be a constant Invocation or Workgroup scope".into(),
                                })
                            }
                        };
                        if let Some(arr) = i.result_type.and_then(|t| ir.pointer_info(t)).map(|p| p.1) {
                            visibilities.push((arr, vis));
                        }
                        allocations.extend(i.result_id);
                    }
                    _ => {}
                }
            }
        }
        Ok(CodeUse { used, uses_control_barriers, ptr_chain_bases, visibilities, allocations, measured })
    }

    /// The code, or the entry point's `interface`, uses a Workgroup variable.
    pub fn uses_workgroup_memory(&self, ir: &Ir, interface: &[Word]) -> bool {
        self.used.iter().chain(interface.iter()).any(|w| is_variable_in(ir, *w, StorageClass::Workgroup))
    }
}

/// `w` is a module-scope variable of storage class `sc`.
pub(super) fn is_variable_in(ir: &Ir, w: Word, sc: StorageClass) -> bool {
    ir.global(w).is_some_and(|i| {
        i.class.opcode == Op::Variable && matches!(i.operands.first(), Some(Operand::StorageClass(s)) if *s == sc)
    })
}

/// The allocations in the blocks of `entry_fn` that every invocation reaches.
pub(super) fn uniform_allocations(ir: &Ir, entry_fn: Word) -> HashSet<Word> {
    let Some(func) = ir.m.functions.iter().find(|f| fn_id(f) == Some(entry_fn)) else { return HashSet::new() };
    let reached = crate::uniform::always_reached(func);
    func.blocks
        .iter()
        .filter(|b| b.label.as_ref().and_then(|l| l.result_id).is_some_and(|l| reached.contains(&l)))
        .flat_map(|b| b.instructions.iter())
        .filter(|i| i.class.opcode == Op::AllocateNodePayloadsAMDX)
        .filter_map(|i| i.result_id)
        .collect()
}
