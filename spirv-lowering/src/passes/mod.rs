//! The lowering pipeline: one pass a file, run in this order. Each pass's
//! `//!` doc says what it matches, what it emits and what holds afterwards.

mod aliased;
mod aligned;
mod allocate;
mod bounds;
mod builtins;
mod cleanup;
mod enqueue;
mod epilogue;
mod fault;
mod finisher;
mod handles;
mod node_ops;
mod payload;
mod prologue;
pub(crate) mod push_block;
mod records;
mod select_entry;
mod verify;

use crate::analyze::EntryFacts;
use crate::codegen::Abi;
use crate::error::LowerError;
use crate::ir::Ir;
use crate::options::{packs_threads, records_per_workgroup, LowerOptions};
use spirv::{StorageClass, Word};

/// What the pipeline reports back to `lower`.
pub struct Outcome {
    pub workgroup_size: [u32; 3],
    pub records_per_workgroup: u32,
    /// The code reads the `ShaderIndexAMDX` builtin (`LowerOptions::shader_index`).
    pub reads_shader_index: bool,
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
    pub ctx: crate::runtime::CtxVars,
}

/// Shared context of the passes.
pub struct Ctx<'a> {
    pub facts: &'a EntryFacts,
    pub opts: &'a LowerOptions,
    pub abi: Abi,
    pub packed: bool,
    pub push: push_block::PushVar,
    pub real: builtins::Real,
    pub vars: NodeVars,
}

impl Ctx<'_> {
    pub fn entry(&self) -> String {
        self.facts.info.name.clone()
    }
}

pub fn run(ir: &mut Ir, facts: &EntryFacts, opts: &LowerOptions) -> Result<Outcome, LowerError> {
    select_entry::run(ir, facts);
    let abi = Abi::declare(ir);
    let push = push_block::run(ir, facts, opts)?;
    let real = builtins::declare_real(ir, &abi);
    let vars = NodeVars {
        rec_count: ir.global_var(StorageClass::Private, abi.u32, "node_record_count"),
        remaining: ir.global_var(StorageClass::Private, abi.u32, "node_remaining_recursion"),
        wg_total: ir.global_var(StorageClass::Private, abi.u32, "node_record_workgroups"),
        ctx: crate::runtime::CtxVars::declare(ir, &abi),
    };
    let packed = packs_threads(&facts.info, opts.thread_pack_width);
    let cx = Ctx { facts, opts, abi, packed, push, real, vars };
    let app_builtins = builtins::run(ir, &cx)?;
    let reads_shader_index =
        opts.tables.is_none() && app_builtins.iter().any(|(b, _, _)| *b == spirv::BuiltIn::ShaderIndexAMDX);
    handles::run(ir, &cx)?;
    let (input, record_index_fns) = payload::run(ir, &cx)?;
    node_ops::run(ir, &cx, input, &record_index_fns)?;
    let invocations = if packed { opts.thread_pack_width } else { facts.info.workgroup_size.iter().product() };
    // Mesh nodes are drawn apart from the compute levels and never finish one.
    let finish = (!facts.info.mesh).then(|| finisher::run(ir, &cx, invocations));
    let workgroup_size = prologue::run(ir, &cx, &app_builtins, input, finish)?;
    aligned::run(ir);
    aliased::run(ir);
    cleanup::run(ir, &cx)?;
    verify::run(ir, &cx)?;
    let records_per_workgroup = records_per_workgroup(&facts.info, opts.thread_pack_width);
    Ok(Outcome { workgroup_size, records_per_workgroup, reads_shader_index })
}
