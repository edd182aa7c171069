//! The lowering pipeline: one pass a file, run in this order. Each pass's
//! `//!` doc says what it matches, what it emits and what holds afterwards.

mod aliased;
mod aligned;
mod builtins;
mod cleanup;
mod context;
mod epilogue;
mod fault;
mod finisher;
mod handles;
mod node_ops;
mod payload;
mod phases;
mod prefetch;
mod prologue;
mod push_block;
mod records;
mod select_entry;
mod status;
mod verify;

use crate::analyze::EntryFacts;
use crate::codegen::Abi;
use crate::error::LowerError;
use crate::ir::Ir;
use crate::options::{packs_threads, records_per_workgroup, LowerOptions};
use context::{Ctx, NodeVars};

/// What the pipeline reports back to `lower`.
pub struct Outcome {
    pub workgroup_size: [u32; 3],
    pub records_per_workgroup: u32,
    /// The code reads the `ShaderIndexAMDX` builtin (`LowerOptions::shader_index`).
    pub reads_shader_index: bool,
}

pub fn run(ir: &mut Ir, facts: &EntryFacts, opts: &LowerOptions) -> Result<Outcome, LowerError> {
    select_entry::run(ir, facts);
    let abi = Abi::declare(ir);
    let push = push_block::run(ir, facts, opts)?;
    let real = builtins::declare_real(ir, &abi);
    let vars = NodeVars::declare(ir, &abi);
    let packed = packs_threads(&facts.info, opts.thread_pack_width);
    let phases = phases::PhaseVars::declare(ir, &abi, opts.phase_clock);
    let cx = Ctx { facts, opts, abi, packed, push, real, vars, phases };
    let app_builtins = builtins::run(ir, &cx)?;
    let reads_shader_index =
        opts.tables.is_none() && app_builtins.iter().any(|(b, _, _)| *b == spirv::BuiltIn::ShaderIndexAMDX);
    handles::run(ir, &cx)?;
    let (input, record_index_fns) = payload::run(ir, &cx)?;
    // Chosen before node_ops rewrites the instructions it looks for.
    let done = epilogue::DonePoint::choose(ir, &cx);
    node_ops::run(ir, &cx, input, &record_index_fns, done.site())?;
    let invocations = if packed { opts.thread_pack_width } else { facts.info.workgroup_size.iter().product() };
    // Mesh nodes are drawn apart from the compute levels and never finish one.
    let finish = (!facts.info.mesh).then(|| finisher::run(ir, &cx, invocations));
    let workgroup_size = prologue::run(ir, &cx, &app_builtins, input, finish, done)?;
    aligned::run(ir);
    aliased::run(ir);
    cleanup::run(ir, &cx)?;
    verify::run(ir, &cx)?;
    let records_per_workgroup = records_per_workgroup(&facts.info, opts.thread_pack_width);
    Ok(Outcome { workgroup_size, records_per_workgroup, reads_shader_index })
}
