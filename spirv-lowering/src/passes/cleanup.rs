//! Final cleanup.
//!
//! Matches: the module-level sections. Emits/removes:
//! * capability ShaderEnqueueAMDX and extension SPV_AMDX_shader_enqueue
//!   removed; PhysicalStorageBufferAddresses, Int64 and Int64Atomics added (and
//!   VulkanMemoryModelDeviceScope under the Vulkan memory model, for the
//!   Device-scope atomics), SPV_KHR_physical_storage_buffer for SPIR-V < 1.5;
//! * addressing model PhysicalStorageBuffer64;
//! * AMDX execution modes, AMDX decorations, `OpTypeNodePayloadArrayAMDX`,
//!   `OpConstantStringAMDX`/`OpSpecConstantStringAMDX`, leftover
//!   `NodePayloadAMDX` variables and the names/decorations of removed ids;
//! * the entry point interface rebuilt from the variables the code uses;
//! * the types/constants/variables section re-ordered so every id is defined
//!   before use (passes append new types; pointers were retyped in place).
//!
//! Afterwards no AMDX capability, extension, opcode, type, storage class,
//! execution mode, decoration or builtin is left.

use super::context::Ctx;
use crate::error::LowerError;
use crate::ir::{id, inst, op_id, used_ids, Ir};
use rspirv::dr::{Instruction, Operand};
use spirv::{AddressingModel, Capability, Decoration, ExecutionMode, MemoryModel, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

const AMDX_MODES: [ExecutionMode; 7] = [
    ExecutionMode::CoalescingAMDX,
    ExecutionMode::IsApiEntryAMDX,
    ExecutionMode::MaxNodeRecursionAMDX,
    ExecutionMode::StaticNumWorkgroupsAMDX,
    ExecutionMode::ShaderIndexAMDX,
    ExecutionMode::MaxNumWorkgroupsAMDX,
    ExecutionMode::SharesInputWithAMDX,
];

const AMDX_DECORATIONS: [Decoration; 8] = [
    Decoration::NodeSharesPayloadLimitsWithAMDX,
    Decoration::NodeMaxPayloadsAMDX,
    Decoration::TrackFinishWritingAMDX,
    Decoration::PayloadNodeNameAMDX,
    Decoration::PayloadNodeBaseIndexAMDX,
    Decoration::PayloadNodeSparseArrayAMDX,
    Decoration::PayloadNodeArraySizeAMDX,
    Decoration::PayloadDispatchIndirectAMDX,
];

pub fn run(ir: &mut Ir, cx: &Ctx) -> Result<(), LowerError> {
    let m = &mut ir.m;
    m.capabilities.retain(|c| !matches!(c.operands.first(), Some(Operand::Capability(Capability::ShaderEnqueueAMDX))));
    m.extensions
        .retain(|e| !matches!(e.operands.first(), Some(Operand::LiteralString(s)) if s == "SPV_AMDX_shader_enqueue"));
    let vulkan_mm = m
        .memory_model
        .as_ref()
        .is_some_and(|mm| matches!(mm.operands.get(1), Some(Operand::MemoryModel(MemoryModel::Vulkan))));
    // Int64Atomics: the record counters are 64-bit (records and workgroups
    // counted by one atomic, see `abi`).
    let mut caps = vec![Capability::PhysicalStorageBufferAddresses, Capability::Int64, Capability::Int64Atomics];
    if vulkan_mm {
        caps.push(Capability::VulkanMemoryModelDeviceScope);
    }
    for c in caps {
        if !m.capabilities.iter().any(|x| matches!(x.operands.first(), Some(Operand::Capability(k)) if *k == c)) {
            m.capabilities.push(inst(Op::Capability, None, None, vec![Operand::Capability(c)]));
        }
    }
    let version = m.header.as_ref().map(|h| h.version().1).unwrap_or(0);
    let has_ext = m.extensions.iter().any(
        |e| matches!(e.operands.first(), Some(Operand::LiteralString(s)) if s == "SPV_KHR_physical_storage_buffer"),
    );
    if version < 5 && !has_ext {
        m.extensions.push(inst(Op::Extension, None, None, vec!["SPV_KHR_physical_storage_buffer".into()]));
    }
    if let Some(mm) = m.memory_model.as_mut() {
        if let Some(o) = mm.operands.first_mut() {
            *o = Operand::AddressingModel(AddressingModel::PhysicalStorageBuffer64);
        }
    }
    m.execution_modes
        .retain(|e| !matches!(e.operands.get(1), Some(Operand::ExecutionMode(x)) if AMDX_MODES.contains(x)));

    // Removed globals: AMDX types and strings, leftover payload variables.
    let removed: HashSet<Word> = m
        .types_global_values
        .iter()
        .filter(|i| {
            matches!(i.class.opcode, Op::TypeNodePayloadArrayAMDX | Op::ConstantStringAMDX | Op::SpecConstantStringAMDX)
                || (i.class.opcode == Op::Variable
                    && matches!(i.operands.first(), Some(Operand::StorageClass(StorageClass::NodePayloadAMDX))))
        })
        .filter_map(|i| i.result_id)
        .collect();
    m.types_global_values.retain(|i| i.result_id.is_none_or(|r| !removed.contains(&r)));
    ir.invalidate_globals();
    let m = &mut ir.m;
    m.annotations.retain(|a| {
        let target_gone = op_id(a, 0).is_some_and(|t| removed.contains(&t));
        let amdx = match a.class.opcode {
            Op::Decorate | Op::DecorateId => {
                matches!(a.operands.get(1), Some(Operand::Decoration(d)) if AMDX_DECORATIONS.contains(d))
            }
            Op::MemberDecorate => {
                matches!(a.operands.get(2), Some(Operand::Decoration(d)) if AMDX_DECORATIONS.contains(d))
            }
            _ => false,
        };
        !(target_gone || amdx)
    });
    // Names and decorations of ids that no longer exist (removed entry points' functions).
    let mut defined: HashSet<Word> = m.types_global_values.iter().filter_map(|i| i.result_id).collect();
    for f in &m.functions {
        defined.extend(f.def.as_ref().and_then(|d| d.result_id));
        defined.extend(f.parameters.iter().filter_map(|p| p.result_id));
        for b in &f.blocks {
            defined.extend(b.label.as_ref().and_then(|l| l.result_id));
            defined.extend(b.instructions.iter().filter_map(|i| i.result_id));
        }
    }
    m.debug_names.retain(|n| op_id(n, 0).is_some_and(|t| defined.contains(&t)));
    m.annotations.retain(|a| op_id(a, 0).is_some_and(|t| defined.contains(&t)));

    // Interface: every global variable (not Function) the code references.
    let vars: HashMap<Word, StorageClass> = m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Variable)
        .filter_map(|i| match i.operands.first() {
            Some(Operand::StorageClass(sc)) => Some((i.result_id?, *sc)),
            _ => None,
        })
        .collect();
    let mut iface: Vec<Word> = vec![];
    let mut seen = HashSet::new();
    for i in m.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.instructions.iter())) {
        for u in used_ids(i) {
            if vars.contains_key(&u) && seen.insert(u) {
                iface.push(u);
            }
        }
    }
    iface.sort_unstable();
    if let Some(ep) = m.entry_points.first_mut() {
        ep.operands.truncate(3);
        ep.operands.extend(iface.into_iter().map(id));
    }
    sort_globals(ir);
    let left =
        ir.m.types_global_values
            .iter()
            .any(|i| matches!(i.operands.first(), Some(Operand::StorageClass(StorageClass::NodePayloadAMDX))));
    if left {
        return Err(LowerError::Invalid {
            entry: cx.entry(),
            opcode: "OpTypePointer".into(),
            result_id: None,
            detail: "NodePayloadAMDX storage class left after lowering".into(),
        });
    }
    Ok(())
}

/// Stable topological order of the global section (definitions before uses).
fn sort_globals(ir: &mut Ir) {
    let items = std::mem::take(&mut ir.m.types_global_values);
    let index: HashMap<Word, usize> = items.iter().enumerate().filter_map(|(k, i)| Some((i.result_id?, k))).collect();
    // Ids a forward pointer declares may be used before their definition.
    let forward: HashSet<Word> =
        items.iter().filter(|i| i.class.opcode == Op::TypeForwardPointer).filter_map(|i| op_id(i, 0)).collect();
    let mut state = vec![0u8; items.len()]; // 0 new, 1 on stack, 2 done
    let mut order: Vec<usize> = Vec::with_capacity(items.len());
    for root in 0..items.len() {
        // Iterative DFS: (node, next dependency position).
        let mut stack: Vec<(usize, Vec<usize>)> = vec![];
        if state.get(root) != Some(&0) {
            continue;
        }
        let deps = |k: usize| -> Vec<usize> {
            items
                .get(k)
                .map(|i: &Instruction| {
                    used_ids(i)
                        .filter(|u| !(forward.contains(u) && i.class.opcode == Op::TypePointer))
                        .filter_map(|u| index.get(&u).copied())
                        .filter(|d| *d != k)
                        .collect()
                })
                .unwrap_or_default()
        };
        if let Some(s) = state.get_mut(root) {
            *s = 1;
        }
        stack.push((root, deps(root)));
        while let Some((node, mut rest)) = stack.pop() {
            match rest.pop() {
                Some(d) => {
                    stack.push((node, rest));
                    if state.get(d) == Some(&0) {
                        if let Some(s) = state.get_mut(d) {
                            *s = 1;
                        }
                        let mut dd = deps(d);
                        dd.reverse();
                        stack.push((d, dd));
                    }
                }
                None => {
                    if let Some(s) = state.get_mut(node) {
                        *s = 2;
                    }
                    order.push(node);
                }
            }
        }
    }
    let mut slots: Vec<Option<Instruction>> = items.into_iter().map(Some).collect();
    ir.m.types_global_values = order.into_iter().filter_map(|k| slots.get_mut(k).and_then(|s| s.take())).collect();
    ir.invalidate_globals();
}
