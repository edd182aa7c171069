//! Lowering of `SPV_AMDX_shader_enqueue` node shaders (2024 form) into plain
//! `GLCompute` kernels plus the [`NodeShaderInfo`] the runtime needs.
//! Pure Rust, no Vulkan: see the crate README for the constructs covered.
//!
//! * [`analyze()`] / [`analyze_with`]: one [`NodeShaderInfo`] per GLCompute entry point;
//! * [`lower`]: one entry point -> a module with no AMDX left that talks to the
//!   runtime through the ABI in [`abi`].
#![forbid(unsafe_code)]

pub mod abi;
mod analyze;
mod codegen;
pub mod consts;
mod error;
mod ir;
mod layout;
mod loader;
mod options;
mod passes;
mod runtime;
mod uniform;

pub use analyze::{DispatchGrid, InputPayload, LaunchMode, NodeShaderInfo, OutputInfo, Visibility};
pub use consts::SpecMap;
pub use error::LowerError;
pub use options::{counts_before_code, records_per_workgroup, GraphTables, LowerOptions, OutputTargets};

use ir::Ir;

/// A lowered node kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoweredNode {
    /// SPIR-V words of the GLCompute module (one entry point, same name).
    pub words: Vec<u32>,
    /// Analysis of the node (as with [`analyze_with`]).
    pub info: NodeShaderInfo,
    /// Workgroup size the kernel is compiled with (differs from
    /// `info.workgroup_size` when thread packing applies).
    pub dispatch_workgroup_size: [u32; 3],
    /// Input records one workgroup consumes: 1 for broadcast (per grid cell
    /// group), P for coalescing, W for packed thread nodes.
    pub records_per_workgroup: u32,
    /// Byte range of [`abi::NodePush`] in the push constants.
    pub push_range: (u32, u32),
    /// The kernel reads [`LowerOptions::shader_index`]; when false it is the
    /// same kernel for every shader index (a runtime may share it between
    /// the members of a node array). Kernels lowered against their graph
    /// read the index from the node's `NodeInfo` instead.
    pub reads_shader_index: bool,
}

/// A node-shader module parsed once, for analyzing and lowering several of
/// its entry points without re-parsing (the runtime's pipeline-creation path).
#[derive(Debug, Clone)]
pub struct ParsedModule {
    module: rspirv::dr::Module,
}

impl ParsedModule {
    /// Checks and parses `words` (the same errors as [`analyze()`]).
    pub fn parse(words: &[u32]) -> Result<Self, LowerError> {
        Ok(ParsedModule { module: loader::load(words)? })
    }

    /// As [`analyze_with`].
    pub fn analyze(&self, spec: &SpecMap) -> Result<Vec<NodeShaderInfo>, LowerError> {
        let ir = Ir::new(self.module.clone());
        analyze::entry_names(&ir)
            .into_iter()
            .map(|(f, name)| analyze::entry_facts(&ir, spec, f, &name).map(|x| x.info))
            .collect()
    }

    /// As [`lower`].
    pub fn lower(&self, opts: &LowerOptions) -> Result<LoweredNode, LowerError> {
        lower_ir(Ir::new(self.module.clone()), opts)
    }
}

/// One [`NodeShaderInfo`] per GLCompute entry point, without specialization.
pub fn analyze(words: &[u32]) -> Result<Vec<NodeShaderInfo>, LowerError> {
    analyze_with(words, &SpecMap::new())
}

/// One [`NodeShaderInfo`] per GLCompute entry point, after specialization.
pub fn analyze_with(words: &[u32], spec: &SpecMap) -> Result<Vec<NodeShaderInfo>, LowerError> {
    let ir = Ir::new(loader::load(words)?);
    analyze::entry_names(&ir)
        .into_iter()
        .map(|(f, name)| analyze::entry_facts(&ir, spec, f, &name).map(|x| x.info))
        .collect()
}

/// Lowers one entry point (see the crate README and [`abi`]).
pub fn lower(words: &[u32], opts: &LowerOptions) -> Result<LoweredNode, LowerError> {
    lower_ir(Ir::new(loader::load(words)?), opts)
}

fn lower_ir(mut ir: Ir, opts: &LowerOptions) -> Result<LoweredNode, LowerError> {
    let (entry_fn, _) = analyze::entry_names(&ir)
        .into_iter()
        .find(|(_, n)| *n == opts.entry_point)
        .ok_or_else(|| LowerError::EntryPointNotFound(opts.entry_point.clone()))?;
    let facts = analyze::entry_facts(&ir, &opts.specialization, entry_fn, &opts.entry_point)?;
    let out = passes::run(&mut ir, &facts, opts)?;
    let words = ir.finish();
    Ok(LoweredNode {
        words,
        info: facts.info,
        dispatch_workgroup_size: out.workgroup_size,
        records_per_workgroup: out.records_per_workgroup,
        reads_shader_index: out.reads_shader_index,
        push_range: (opts.push_offset, opts.push_offset.saturating_add(std::mem::size_of::<abi::NodePush>() as u32)),
    })
}
