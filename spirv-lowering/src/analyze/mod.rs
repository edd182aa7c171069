//! Analysis: everything the runtime needs about one node entry point
//! ([`NodeShaderInfo`]) without parsing SPIR-V itself. The lowering passes use
//! the same facts ([`EntryFacts`]), so the two can never disagree.
//!
//! [`entry_facts`] asks the fact-finders in turn: `entry` (entry points,
//! reachable functions, node names), `modes` (execution modes), `code`
//! (what the reachable code uses), `input` and `outputs`; `record` gives a
//! record's layout and `info` holds the public facts. The order of its
//! calls is the order in which a shader's errors are reported.

mod code;
mod entry;
mod info;
mod input;
mod modes;
mod outputs;
mod record;

pub use entry::entry_names;
pub use info::{DispatchGrid, InputPayload, LaunchMode, NodeShaderInfo, OutputInfo, Visibility};
pub use record::{finish_counter_offset, record_stride};

use crate::consts::SpecMap;
use crate::error::LowerError;
use crate::ir::Ir;
use code::CodeUse;
use entry::{is_mesh_entry, reachable};
use input::InputVar;
use modes::Modes;
use spirv::{ExecutionMode, Word};
use std::collections::{HashMap, HashSet};

/// Facts about one entry point shared by analysis and lowering.
#[derive(Debug, Clone)]
pub struct EntryFacts {
    pub info: NodeShaderInfo,
    pub entry_fn: Word,
    /// Functions reachable from the entry point (including it).
    pub functions: HashSet<Word>,
    /// The NodePayloadAMDX input variable, if declared.
    pub input_var: Option<Word>,
    /// Pointer type of the input variable and its array type.
    pub input_ptr_type: Option<Word>,
    pub input_array_type: Option<Word>,
    pub input_struct: Option<Word>,
    /// Workgroup size as ids usable in code (spec constants stay live).
    pub wg_size_ids: Option<[Word; 3]>,
    /// `StaticNumWorkgroupsAMDX` operand ids.
    pub static_grid_ids: Option<[Word; 3]>,
    /// Every `NodePayloadAMDX` pointer type to a payload array -> that array type.
    pub output_ptr_types: HashMap<Word, Word>,
    /// The `OpAllocateNodePayloadsAMDX` results every invocation of the
    /// entry function reaches (see `uniform`): their workgroup may count
    /// their records together.
    pub uniform_allocations: HashSet<Word>,
}

/// Analyzes entry point `name`.
pub fn entry_facts(ir: &Ir, spec: &SpecMap, entry_fn: Word, name: &str) -> Result<EntryFacts, LowerError> {
    let functions = reachable(ir, entry_fn);
    let modes = Modes::of(ir, spec, entry_fn, name);
    let (workgroup_size, wg_size_ids) = modes.workgroup_size()?;
    let code = CodeUse::scan(ir, spec, &functions, name)?;
    let interface = entry::interface(ir, entry_fn);
    let uses_workgroup_memory = code.uses_workgroup_memory(ir, &interface);
    let input_var = InputVar::find(ir, &code.used, &interface, entry_fn, name)?;
    let grids = modes.grids()?;
    let input_max = input_var.max_payloads(ir, spec, &grids, name)?;
    input_var.check_located(&grids, entry_fn, name)?;
    let launch = grids.launch(workgroup_size, input_max);
    let input = input_var.payload(ir, spec, &launch, input_max, name)?;
    outputs::check_named(ir, &code.visibilities, name)?;
    let shader_index = modes.id(ExecutionMode::ShaderIndexAMDX, 0, "ShaderIndexAMDX")?.map(|x| x.1).unwrap_or(0);
    let max_recursion = modes.id(ExecutionMode::MaxNodeRecursionAMDX, 0, "MaxNodeRecursionAMDX")?.map(|x| x.1);
    let outputs = outputs::infos(ir, spec, &code, input_var.array_type, name)?;
    let shares_input_with = modes.shares_input_with()?;
    let is_api_entry = modes.id(ExecutionMode::IsApiEntryAMDX, 0, "IsApiEntryAMDX")?.map(|x| x.1 != 0).unwrap_or(true);
    let track_finish_writing = input.as_ref().is_some_and(|i| i.track_finish_writing);
    let input_needs_contiguous_records = input_var.needs_contiguous_records(ir, &code.ptr_chain_bases);
    let mesh = is_mesh_entry(ir, entry_fn);
    if let (true, Some(o)) = (mesh, outputs.first()) {
        // Mesh nodes are the graph's leaves (VK_AMDX_shader_enqueue: they draw).
        return Err(LowerError::Unsupported {
            entry: name.to_string(),
            opcode: "OpTypeNodePayloadArrayAMDX".into(),
            result_id: Some(o.type_id),
            detail: format!("a mesh node cannot enqueue (output to node {:?})", o.name),
        });
    }
    let info = NodeShaderInfo {
        name: name.to_string(),
        shader_index,
        launch,
        workgroup_size,
        input,
        outputs,
        max_recursion,
        shares_input_with,
        is_api_entry,
        track_finish_writing,
        uses_workgroup_memory,
        uses_control_barriers: code.uses_control_barriers,
        input_needs_contiguous_records,
        mesh,
    };
    let uniform_allocations = code::uniform_allocations(ir, entry_fn);
    Ok(EntryFacts {
        uniform_allocations,
        info,
        entry_fn,
        functions,
        input_var: input_var.var,
        input_ptr_type: input_var.ptr_type,
        input_array_type: input_var.array_type,
        input_struct: input_var.struct_,
        wg_size_ids,
        static_grid_ids: grids.static_grid.map(|g| g.0),
        output_ptr_types: outputs::pointer_types(ir),
    })
}
