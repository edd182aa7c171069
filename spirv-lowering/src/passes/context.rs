//! The passes' shared context ([`Ctx`]): the entry point's facts, the
//! options, the ABI's types, and the variables declared for the lowering
//! before the first pass rewrites anything (the node push block, the real
//! builtins, the node's private variables).

use crate::analyze::EntryFacts;
use crate::codegen::Abi;
use crate::ir::Ir;
use crate::options::LowerOptions;
use crate::runtime::{CtxVars, PushVar};
use spirv::{StorageClass, Word};

/// The real builtins, read only by lowering code.
#[derive(Debug, Clone, Copy)]
pub struct Real {
    pub wg: Word,
    pub nwg: Word,
    pub lid: Word,
    pub lidx: Word,
}

/// Private variables the prologue fills and the node-op helpers read.
#[derive(Debug, Clone, Copy)]
pub struct NodeVars {
    /// Input records of this workgroup (OpNodePayloadArrayLengthAMDX on the input).
    pub rec_count: Word,
    /// RemainingRecursionLevelsAMDX of the (first) record.
    pub remaining: Word,
    /// Workgroups of this record's grid (OpFinishWritingNodePayloadAMDX target).
    pub wg_total: Word,
    /// The context fields the record code reads, loaded at the kernel's start.
    pub ctx: CtxVars,
}

impl NodeVars {
    /// Declares the variables.
    pub fn declare(ir: &mut Ir, abi: &Abi) -> Self {
        NodeVars {
            rec_count: ir.global_var(StorageClass::Private, abi.u32, "node_record_count"),
            remaining: ir.global_var(StorageClass::Private, abi.u32, "node_remaining_recursion"),
            wg_total: ir.global_var(StorageClass::Private, abi.u32, "node_record_workgroups"),
            ctx: CtxVars::declare(ir, abi),
        }
    }
}

/// Shared context of the passes.
pub struct Ctx<'a> {
    pub facts: &'a EntryFacts,
    pub opts: &'a LowerOptions,
    pub abi: Abi,
    pub packed: bool,
    pub push: PushVar,
    pub real: Real,
    pub vars: NodeVars,
    /// The `phase_clock` diagnostic's variables, where it is on.
    pub phases: Option<super::phases::PhaseVars>,
}

impl Ctx<'_> {
    /// The entry point's name (for errors).
    pub fn entry(&self) -> String {
        self.facts.info.name.clone()
    }
}
