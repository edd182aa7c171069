//! Analysis: everything the runtime needs about one node entry point
//! ([`NodeShaderInfo`]) without parsing SPIR-V itself. The lowering passes use
//! the same facts ([`EntryFacts`]), so the two can never disagree.

use crate::consts::{eval_u32, SpecMap};
use crate::error::LowerError;
use crate::ir::{op_id, op_lit, op_str, used_ids, Ir};
use crate::layout::{round_up, scalar_align, size_of};
use rspirv::dr::Operand;
use spirv::{BuiltIn, Decoration, ExecutionMode, ExecutionModel, Op, Scope, StorageClass, Word};
use std::collections::{BTreeSet, HashSet};

/// How a node's workgroups map to its input records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchMode {
    /// Broadcast with `StaticNumWorkgroupsAMDX` (x, y, z).
    BroadcastStatic { grid: [u32; 3] },
    /// Broadcast whose grid comes from the payload: `max_grid` is
    /// `MaxNumWorkgroupsAMDX`, `None` when neither grid mode is declared.
    BroadcastDynamic { max_grid: Option<[u32; 3]> },
    /// `CoalescingAMDX` with up to `max_payloads` records per workgroup.
    Coalescing { max_payloads: u32 },
    /// Thread launch: coalescing, workgroup size 1, one payload.
    Thread,
}

/// Where the dispatch grid sits in the input payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchGrid {
    /// Byte offset of the `PayloadDispatchIndirectAMDX` member.
    pub offset: u32,
    /// 2 (u16) or 4 (u32).
    pub component_bytes: u32,
    /// 1 to 3; missing components are 1.
    pub components: u32,
    /// Struct member index (None for the implicit uvec3 payload).
    pub member: Option<u32>,
}

/// The input payload as the node reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputPayload {
    /// Bytes of one record as declared (0 for empty records).
    pub size: u32,
    /// Bytes between records as the producer allocates them (see `abi`).
    pub stride: u32,
    /// The dispatch grid member, for dynamic broadcast.
    pub dispatch_grid: Option<DispatchGrid>,
    /// Records per workgroup (NodeMaxPayloadsAMDX on the input; 1 if absent).
    pub max_payloads: u32,
    /// The payload struct is decorated TrackFinishWritingAMDX.
    pub track_finish_writing: bool,
    /// No payload variable is declared (the spec's implicit payload applies).
    pub implicit: bool,
}

/// Allocation visibility used by `OpAllocateNodePayloadsAMDX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Visibility {
    Invocation,
    Workgroup,
}

/// One output (an `OpTypeNodePayloadArrayAMDX` with `PayloadNodeNameAMDX`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputInfo {
    /// The payload array type's id in the input module.
    pub type_id: Word,
    /// Target node name (the default value for a spec string).
    pub name: String,
    /// SpecId when the name is an `OpSpecConstantStringAMDX` with one.
    pub name_spec_id: Option<u32>,
    /// `PayloadNodeBaseIndexAMDX` (0 if absent).
    pub base_index: u32,
    /// `PayloadNodeArraySizeAMDX`; `None` = unbounded.
    pub array_size: Option<u32>,
    /// `PayloadNodeSparseArrayAMDX`.
    pub sparse: bool,
    /// `NodeMaxPayloadsAMDX`.
    pub max_payloads: u32,
    /// Index (into `outputs`) named by `NodeSharesPayloadLimitsWithAMDX`.
    pub shares_limits_with: Option<usize>,
    /// Bytes of one payload as declared.
    pub payload_size: u32,
    /// Bytes one allocated record occupies (see `abi`).
    pub record_stride: u32,
    /// The payload struct is decorated TrackFinishWritingAMDX.
    pub track_finish_writing: bool,
    /// Visibilities used by the allocations of this output (sorted, unique).
    pub visibilities: Vec<Visibility>,
    /// The code asks `OpNodePayloadArrayLengthAMDX` of this output's records
    /// through a handle that is not an allocation's own result (a variable,
    /// a phi, a parameter), so the runtime keeps each allocation's count with
    /// its records.
    pub length_queried: bool,
}

/// What the runtime needs to know about one node entry point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeShaderInfo {
    /// Entry point name (the node name unless the app overrides it).
    pub name: String,
    /// `ShaderIndexAMDX` (0 if absent).
    pub shader_index: u32,
    pub launch: LaunchMode,
    /// After specialization.
    pub workgroup_size: [u32; 3],
    /// `None` for a node without any input payload (empty input).
    pub input: Option<InputPayload>,
    pub outputs: Vec<OutputInfo>,
    /// `MaxNodeRecursionAMDX`.
    pub max_recursion: Option<u32>,
    /// `SharesInputWithAMDX` (name, index).
    pub shares_input_with: Option<(String, u32)>,
    /// `IsApiEntryAMDX` (default true).
    pub is_api_entry: bool,
    /// The input payload is TrackFinishWritingAMDX (OpFinishWritingNodePayloadAMDX usable).
    pub track_finish_writing: bool,
    pub uses_workgroup_memory: bool,
    pub uses_control_barriers: bool,
    /// The code steps between input records with `OpPtrAccessChain` on a record
    /// pointer, so the records of one coalesced workgroup must lie contiguously
    /// at `input.stride` (the runtime compacts them for this node).
    pub input_needs_contiguous_records: bool,
    /// A `MeshEXT` entry point (a mesh node: drawn, never enqueues).
    pub mesh: bool,
}

impl NodeShaderInfo {
    /// Thread-style node whose records can be packed many to a workgroup.
    pub fn thread_packable(&self) -> bool {
        self.launch == LaunchMode::Thread && !self.uses_workgroup_memory && !self.uses_control_barriers && !self.mesh
    }
}

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
    pub output_ptr_types: std::collections::HashMap<Word, Word>,
    /// The `OpAllocateNodePayloadsAMDX` results every invocation of the
    /// entry function reaches (see `uniform`): their workgroup may count
    /// their records together.
    pub uniform_allocations: HashSet<Word>,
}

/// All node entry point names: GLCompute (compute nodes) and MeshEXT (mesh nodes).
pub fn entry_names(ir: &Ir) -> Vec<(Word, String)> {
    ir.m.entry_points
        .iter()
        .filter(|e| {
            matches!(
                e.operands.first(),
                Some(Operand::ExecutionModel(ExecutionModel::GLCompute | ExecutionModel::MeshEXT))
            )
        })
        .filter_map(|e| Some((op_id(e, 1)?, op_str(e, 2)?.to_string())))
        .collect()
}

/// `entry` is a `MeshEXT` entry point.
fn is_mesh_entry(ir: &Ir, entry: Word) -> bool {
    ir.m.entry_points.iter().any(|e| {
        op_id(e, 1) == Some(entry)
            && matches!(e.operands.first(), Some(Operand::ExecutionModel(ExecutionModel::MeshEXT)))
    })
}

/// Functions reachable from `entry` through OpFunctionCall.
pub fn reachable(ir: &Ir, entry: Word) -> HashSet<Word> {
    let mut seen = HashSet::from([entry]);
    let mut stack = vec![entry];
    while let Some(f) = stack.pop() {
        let Some(func) = ir.m.functions.iter().find(|x| x.def.as_ref().and_then(|d| d.result_id) == Some(f)) else {
            continue;
        };
        for i in func.blocks.iter().flat_map(|b| b.instructions.iter()) {
            if i.class.opcode == Op::FunctionCall {
                if let Some(c) = op_id(i, 0) {
                    if seen.insert(c) {
                        stack.push(c);
                    }
                }
            }
        }
    }
    seen
}

fn fn_id(f: &rspirv::dr::Function) -> Option<Word> {
    f.def.as_ref().and_then(|d| d.result_id)
}

/// The string of an `OpConstantStringAMDX`/`OpSpecConstantStringAMDX` and its SpecId.
pub fn node_name(ir: &Ir, w: Word) -> Option<(String, Option<u32>)> {
    let i = ir.global(w)?;
    match i.class.opcode {
        Op::ConstantStringAMDX => Some((op_str(i, 0)?.to_string(), None)),
        Op::SpecConstantStringAMDX => Some((op_str(i, 0)?.to_string(), ir.decoration_word(w, Decoration::SpecId))),
        _ => None,
    }
}

/// Record stride of a payload struct (see the `abi` module doc).
pub fn record_stride(size: u32, align: u32, track: bool) -> Option<u32> {
    let base = round_up(size, 4)?.checked_add(if track { 4 } else { 0 })?;
    round_up(base, align.max(4)).map(|s| s.max(4))
}

/// Byte offset of the TrackFinishWriting counter inside a record.
pub fn finish_counter_offset(size: u32) -> u32 {
    round_up(size, 4).unwrap_or(size)
}

/// Three id operands and their values.
type Grid3 = ([Word; 3], [u32; 3]);

/// Analyzes entry point `name`.
pub fn entry_facts(ir: &Ir, spec: &SpecMap, entry_fn: Word, name: &str) -> Result<EntryFacts, LowerError> {
    let e = || name.to_string();
    let functions = reachable(ir, entry_fn);
    let modes: Vec<_> =
        ir.m.execution_modes
            .iter()
            .filter(|m| op_id(m, 0) == Some(entry_fn))
            .filter_map(|m| match m.operands.get(1) {
                Some(Operand::ExecutionMode(x)) => Some((*x, m)),
                _ => None,
            })
            .collect();
    let mode = |x: ExecutionMode| modes.iter().find(|(k, _)| *k == x).map(|(_, m)| *m);
    let mode_id = |x: ExecutionMode, k: usize, what: &'static str| -> Result<Option<(Word, u32)>, LowerError> {
        match mode(x) {
            None => Ok(None),
            Some(m) => {
                let w = op_id(m, 2 + k).ok_or_else(|| LowerError::NotConstant { entry: e(), what, id: 0 })?;
                let v = eval_u32(ir, spec, w).ok_or(LowerError::NotConstant { entry: e(), what, id: w })?;
                Ok(Some((w, v)))
            }
        }
    };
    let grid3 = |x: ExecutionMode, what: &'static str| -> Result<Option<Grid3>, LowerError> {
        let (Some(a), Some(b), Some(c)) = (mode_id(x, 0, what)?, mode_id(x, 1, what)?, mode_id(x, 2, what)?) else {
            return Ok(None);
        };
        Ok(Some(([a.0, b.0, c.0], [a.1, b.1, c.1])))
    };

    // Workgroup size: WorkgroupSize builtin constant > LocalSizeId > LocalSize.
    let mut workgroup_size = [1u32; 3];
    let mut wg_size_ids = None;
    if let Some(m) = mode(ExecutionMode::LocalSize) {
        for (k, v) in workgroup_size.iter_mut().enumerate() {
            *v = op_lit(m, 2 + k).unwrap_or(1);
        }
    }
    if let Some((ids, v)) = grid3(ExecutionMode::LocalSizeId, "LocalSizeId operand")? {
        workgroup_size = v;
        wg_size_ids = Some(ids);
    }
    let wgsize_const = ir.m.types_global_values.iter().find(|i| {
        i.result_id.is_some_and(|r| {
            ir.decorations(r).iter().any(|(d, o)| {
                *d == Decoration::BuiltIn && matches!(o.first(), Some(Operand::BuiltIn(BuiltIn::WorkgroupSize)))
            })
        })
    });
    if let Some(c) = wgsize_const {
        let mut ids = [0; 3];
        for k in 0..3 {
            let w = op_id(c, k).ok_or(LowerError::NotConstant {
                entry: e(),
                what: "WorkgroupSize",
                id: c.result_id.unwrap_or(0),
            })?;
            ids[k] = w;
            workgroup_size[k] = eval_u32(ir, spec, w).ok_or(LowerError::NotConstant {
                entry: e(),
                what: "WorkgroupSize component",
                id: w,
            })?;
        }
        wg_size_ids = Some(ids);
    }
    // Vulkan caps a workgroup far below this (maxComputeWorkGroupInvocations);
    // the driver reports that limit, here only sizes nothing could run are refused.
    let invocations = workgroup_size.iter().try_fold(1u32, |n, v| n.checked_mul(*v));
    if invocations.is_none_or(|n| n == 0) {
        return Err(LowerError::Invalid {
            entry: e(),
            opcode: "OpExecutionMode".into(),
            result_id: None,
            detail: format!("workgroup size {workgroup_size:?} is zero or has more than 2^32 invocations"),
        });
    }

    // Ids and storage used by reachable code.
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
                                entry: e(),
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
    let entry_point = ir.m.entry_points.iter().find(|x| op_id(x, 1) == Some(entry_fn));
    let interface: Vec<Word> = entry_point
        .map(|x| {
            x.operands
                .iter()
                .skip(3)
                .filter_map(|o| match o {
                    Operand::IdRef(w) => Some(*w),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let is_var_sc = |w: Word, sc: StorageClass| {
        ir.global(w).is_some_and(|i| {
            i.class.opcode == Op::Variable && matches!(i.operands.first(), Some(Operand::StorageClass(s)) if *s == sc)
        })
    };
    let uses_workgroup_memory = used.iter().chain(interface.iter()).any(|w| is_var_sc(*w, StorageClass::Workgroup));

    // Input payload variable: the one this entry point's code uses. DXC lists
    // every node's input variable in every entry point of a library module, so
    // the interface alone does not tell; an input no code reads is the one
    // variable of the interface that no other entry point uses either.
    let payload_vars = |ws: &mut dyn Iterator<Item = &Word>| -> BTreeSet<Word> {
        ws.filter(|w| is_var_sc(**w, StorageClass::NodePayloadAMDX)).copied().collect()
    };
    let inputs = payload_vars(&mut used.iter());
    if inputs.len() > 1 {
        return Err(LowerError::Unsupported {
            entry: e(),
            opcode: "OpVariable".into(),
            result_id: inputs.iter().nth(1).copied(),
            detail: "the code reads more than one NodePayloadAMDX input variable".into(),
        });
    }
    let mut ambiguous_input = false;
    let input_var = match inputs.first() {
        Some(v) => Some(*v),
        None => {
            let claimed = payload_vars_used_by_other_entries(ir, entry_fn);
            let free: Vec<Word> =
                payload_vars(&mut interface.iter()).into_iter().filter(|v| !claimed.contains(v)).collect();
            ambiguous_input = free.len() > 1;
            if free.len() == 1 {
                free.first().copied()
            } else {
                None
            }
        }
    };
    let input_ptr_type = input_var.and_then(|v| ir.global(v)).and_then(|i| i.result_type);
    let pointee = input_ptr_type.and_then(|t| ir.pointer_info(t)).map(|p| p.1);
    let (input_array_type, input_struct) = match pointee {
        Some(p) if ir.opcode_of(p) == Some(Op::TypeNodePayloadArrayAMDX) => {
            (Some(p), ir.global(p).and_then(|i| op_id(i, 0)))
        }
        // A plain struct input (one record, no array wrapper).
        Some(p) if ir.opcode_of(p) == Some(Op::TypeStruct) => (None, Some(p)),
        // The 2023 form declared coalesced inputs as plain arrays.
        Some(p) if matches!(ir.opcode_of(p), Some(Op::TypeArray | Op::TypeRuntimeArray)) => {
            return Err(LowerError::Superseded2023Form(
                "input payload declared as a plain array (2023 coalescing input)".into(),
            ))
        }
        Some(p) => {
            return Err(LowerError::Unsupported {
                entry: e(),
                opcode: "OpVariable".into(),
                result_id: input_var,
                detail: format!("input payload must point to OpTypeNodePayloadArrayAMDX, found %{p}"),
            })
        }
        None => (None, None),
    };

    let coalescing = mode(ExecutionMode::CoalescingAMDX).is_some();
    let static_grid = grid3(ExecutionMode::StaticNumWorkgroupsAMDX, "StaticNumWorkgroupsAMDX operand")?;
    let max_grid = grid3(ExecutionMode::MaxNumWorkgroupsAMDX, "MaxNumWorkgroupsAMDX operand")?;
    let conflict = |d: &str| LowerError::ConflictingModes { entry: e(), detail: d.into() };
    if coalescing && static_grid.is_some() {
        return Err(conflict("CoalescingAMDX with StaticNumWorkgroupsAMDX"));
    }
    if coalescing && max_grid.is_some() {
        return Err(conflict("CoalescingAMDX with MaxNumWorkgroupsAMDX"));
    }
    if static_grid.is_some() && max_grid.is_some() {
        return Err(conflict("StaticNumWorkgroupsAMDX with MaxNumWorkgroupsAMDX"));
    }

    let input_max = match input_array_type {
        Some(a) => match ir.decoration_word(a, Decoration::NodeMaxPayloadsAMDX) {
            Some(w) => eval_u32(ir, spec, w).ok_or(LowerError::NotConstant {
                entry: e(),
                what: "NodeMaxPayloadsAMDX",
                id: w,
            })?,
            None if coalescing => {
                return Err(LowerError::MissingDecoration { entry: e(), target: a, decoration: "NodeMaxPayloadsAMDX" })
            }
            None => 1,
        },
        None if coalescing && input_struct.is_some() => {
            return Err(LowerError::MissingDecoration {
                entry: e(),
                target: input_struct.unwrap_or(0),
                decoration: "NodeMaxPayloadsAMDX",
            })
        }
        None => 1,
    };
    if coalescing && input_max == 0 {
        return Err(LowerError::Invalid {
            entry: e(),
            opcode: "OpDecorateId".into(),
            result_id: input_array_type,
            detail: "NodeMaxPayloadsAMDX of the input is 0".into(),
        });
    }
    if ambiguous_input && !coalescing && static_grid.is_none() {
        return Err(LowerError::Unsupported {
            entry: e(),
            opcode: "OpEntryPoint".into(),
            result_id: Some(entry_fn),
            detail: "the node's code never reads its input record and several NodePayloadAMDX variables of the \
                     module could be it, so the dispatch grid cannot be located"
                .into(),
        });
    }
    let launch = if coalescing {
        if workgroup_size == [1, 1, 1] && input_max == 1 {
            LaunchMode::Thread
        } else {
            LaunchMode::Coalescing { max_payloads: input_max }
        }
    } else if let Some((_, g)) = static_grid {
        LaunchMode::BroadcastStatic { grid: g }
    } else {
        LaunchMode::BroadcastDynamic { max_grid: max_grid.map(|m| m.1) }
    };

    let input = match input_struct {
        Some(s) => {
            let size = size_of(ir, spec, s).ok_or_else(|| LowerError::Unsupported {
                entry: e(),
                opcode: "OpTypeStruct".into(),
                result_id: Some(s),
                detail: "input payload without a complete explicit layout".into(),
            })?;
            let track = ir.has_decoration(s, Decoration::TrackFinishWritingAMDX);
            let stride = record_stride(size, scalar_align(ir, s), track).unwrap_or(size);
            let dispatch_grid = find_grid_member(ir, s);
            let decorated =
                ir.member_decorations(s).iter().any(|(_, d, _)| *d == Decoration::PayloadDispatchIndirectAMDX);
            if decorated && dispatch_grid.is_none() {
                return Err(LowerError::Invalid {
                    entry: e(),
                    opcode: "OpMemberDecorate".into(),
                    result_id: Some(s),
                    detail: "PayloadDispatchIndirectAMDX member must be a 16/32-bit unsigned integer or a vector of 2 or 3 of them, with an Offset".into(),
                });
            }
            if matches!(launch, LaunchMode::BroadcastDynamic { .. }) && dispatch_grid.is_none() {
                return Err(LowerError::MissingDecoration {
                    entry: e(),
                    target: s,
                    decoration: "PayloadDispatchIndirectAMDX",
                });
            }
            Some(InputPayload {
                size,
                stride,
                dispatch_grid,
                max_payloads: input_max,
                track_finish_writing: track,
                implicit: false,
            })
        }
        None if matches!(launch, LaunchMode::BroadcastDynamic { .. }) => Some(InputPayload {
            size: 12,
            stride: 12,
            dispatch_grid: Some(DispatchGrid { offset: 0, component_bytes: 4, components: 3, member: None }),
            max_payloads: 1,
            track_finish_writing: false,
            implicit: true,
        }),
        None => None,
    };

    // Every allocated payload array type must name its target node.
    for (t, _) in &visibilities {
        if ir.decoration_word(*t, Decoration::PayloadNodeNameAMDX).is_none() {
            return Err(LowerError::MissingDecoration { entry: e(), target: *t, decoration: "PayloadNodeNameAMDX" });
        }
    }
    // Outputs: decorated payload array types that reachable code refers to.
    let mut out_types = vec![];
    for i in &ir.m.types_global_values {
        let Some(t) = i.result_id else { continue };
        if i.class.opcode != Op::TypeNodePayloadArrayAMDX || Some(t) == input_array_type {
            continue;
        }
        if ir.decoration_word(t, Decoration::PayloadNodeNameAMDX).is_none() {
            continue;
        }
        let via_ptr = used.iter().any(|u| ir.pointer_info(*u).is_some_and(|p| p.1 == t));
        if used.contains(&t) || via_ptr {
            out_types.push(t);
        }
    }
    let measured_arrays = measured_arrays(ir, &measured, &allocations);
    let shader_index = mode_id(ExecutionMode::ShaderIndexAMDX, 0, "ShaderIndexAMDX")?.map(|x| x.1).unwrap_or(0);
    let max_recursion = mode_id(ExecutionMode::MaxNodeRecursionAMDX, 0, "MaxNodeRecursionAMDX")?.map(|x| x.1);
    let mut outputs = vec![];
    for &t in &out_types {
        let dec = |d: Decoration, what: &'static str| -> Result<Option<u32>, LowerError> {
            match ir.decoration_word(t, d) {
                None => Ok(None),
                Some(w) => eval_u32(ir, spec, w).map(Some).ok_or(LowerError::NotConstant { entry: e(), what, id: w }),
            }
        };
        let name_id = ir.decoration_word(t, Decoration::PayloadNodeNameAMDX).unwrap_or(0);
        let (oname, name_spec_id) = node_name(ir, name_id).ok_or(LowerError::Invalid {
            entry: e(),
            opcode: "OpDecorateId".into(),
            result_id: Some(t),
            detail: format!(
                "PayloadNodeNameAMDX operand %{name_id} is not an OpConstantStringAMDX/OpSpecConstantStringAMDX"
            ),
        })?;
        let max_payloads = dec(Decoration::NodeMaxPayloadsAMDX, "NodeMaxPayloadsAMDX")?
            .ok_or(LowerError::MissingDecoration { entry: e(), target: t, decoration: "NodeMaxPayloadsAMDX" })?;
        let s = ir.global(t).and_then(|i| op_id(i, 0)).unwrap_or(0);
        let payload_size = size_of(ir, spec, s).ok_or_else(|| LowerError::Unsupported {
            entry: e(),
            opcode: "OpTypeStruct".into(),
            result_id: Some(s),
            detail: "output payload without a complete explicit layout".into(),
        })?;
        let track = ir.has_decoration(s, Decoration::TrackFinishWritingAMDX);
        let mut vis: Vec<Visibility> = visibilities.iter().filter(|(a, _)| *a == t).map(|x| x.1).collect();
        vis.sort();
        vis.dedup();
        outputs.push(OutputInfo {
            type_id: t,
            name: oname,
            name_spec_id,
            base_index: dec(Decoration::PayloadNodeBaseIndexAMDX, "PayloadNodeBaseIndexAMDX")?.unwrap_or(0),
            array_size: dec(Decoration::PayloadNodeArraySizeAMDX, "PayloadNodeArraySizeAMDX")?,
            sparse: ir.has_decoration(t, Decoration::PayloadNodeSparseArrayAMDX),
            max_payloads,
            shares_limits_with: ir
                .decoration_word(t, Decoration::NodeSharesPayloadLimitsWithAMDX)
                .and_then(|o| out_types.iter().position(|x| *x == o)),
            payload_size,
            record_stride: record_stride(payload_size, scalar_align(ir, s), track).unwrap_or(payload_size),
            track_finish_writing: track,
            visibilities: vis,
            length_queried: measured_arrays.contains(&t),
        });
    }
    // Whether an output reaches the node itself depends on the final node
    // names and indices, known only when the graph is linked.
    let shares_input_with = match mode(ExecutionMode::SharesInputWithAMDX) {
        Some(m) => {
            let n = op_id(m, 2).and_then(|w| node_name(ir, w)).map(|x| x.0).ok_or(LowerError::Invalid {
                entry: e(),
                opcode: "OpExecutionModeId".into(),
                result_id: None,
                detail: "SharesInputWithAMDX name is not a string constant".into(),
            })?;
            let idx =
                mode_id(ExecutionMode::SharesInputWithAMDX, 1, "SharesInputWithAMDX index")?.map(|x| x.1).unwrap_or(0);
            Some((n, idx))
        }
        None => None,
    };
    let is_api_entry = mode_id(ExecutionMode::IsApiEntryAMDX, 0, "IsApiEntryAMDX")?.map(|x| x.1 != 0).unwrap_or(true);
    let track_finish_writing = input.as_ref().is_some_and(|i| i.track_finish_writing);
    let types = if ptr_chain_bases.is_empty() { Default::default() } else { ir.type_map() };
    let input_needs_contiguous_records = input_struct.is_some_and(|s| {
        ptr_chain_bases
            .iter()
            .any(|b| types.get(b).and_then(|t| ir.pointer_info(*t)) == Some((StorageClass::NodePayloadAMDX, s)))
    });
    let mesh = is_mesh_entry(ir, entry_fn);
    if let (true, Some(o)) = (mesh, outputs.first()) {
        // Mesh nodes are the graph's leaves (VK_AMDX_shader_enqueue: they draw).
        return Err(LowerError::Unsupported {
            entry: e(),
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
        uses_control_barriers,
        input_needs_contiguous_records,
        mesh,
    };
    let uniform_allocations = uniform_allocations(ir, entry_fn);
    Ok(EntryFacts {
        uniform_allocations,
        info,
        entry_fn,
        functions,
        input_var,
        input_ptr_type,
        input_array_type,
        input_struct,
        wg_size_ids,
        static_grid_ids: static_grid.map(|g| g.0),
        output_ptr_types: ir
            .m
            .types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::TypePointer)
            .filter_map(|i| {
                let (_, p) = ir.pointer_info(i.result_id?)?;
                (ir.opcode_of(p) == Some(Op::TypeNodePayloadArrayAMDX)).then_some((i.result_id?, p))
            })
            .collect(),
    })
}

/// The allocations in the blocks of `entry_fn` that every invocation reaches.
fn uniform_allocations(ir: &Ir, entry_fn: Word) -> HashSet<Word> {
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

/// The payload array types whose length is asked through handles that are
/// not allocation results (`measured` operands, `allocations` results).
fn measured_arrays(ir: &Ir, measured: &[Word], allocations: &HashSet<Word>) -> HashSet<Word> {
    let untraced: Vec<Word> = measured.iter().copied().filter(|w| !allocations.contains(w)).collect();
    if untraced.is_empty() {
        return HashSet::new();
    }
    let types = ir.type_map();
    untraced
        .iter()
        .filter_map(|w| {
            // A handle's type is a pointer to the array (or, before the
            // handles pass, a pointer to a variable holding one).
            let mut t = *types.get(w)?;
            for _ in 0..3 {
                if ir.opcode_of(t) == Some(Op::TypeNodePayloadArrayAMDX) {
                    return Some(t);
                }
                t = ir.pointer_info(t)?.1;
            }
            None
        })
        .collect()
}

/// `NodePayloadAMDX` variables that the code of entry points other than
/// `entry_fn` uses.
fn payload_vars_used_by_other_entries(ir: &Ir, entry_fn: Word) -> HashSet<Word> {
    let payload_vars: HashSet<Word> =
        ir.m.types_global_values
            .iter()
            .filter(|i| {
                i.class.opcode == Op::Variable
                    && matches!(i.operands.first(), Some(Operand::StorageClass(StorageClass::NodePayloadAMDX)))
            })
            .filter_map(|i| i.result_id)
            .collect();
    let mut claimed = HashSet::new();
    for (f, _) in entry_names(ir).into_iter().filter(|(f, _)| *f != entry_fn) {
        let functions = reachable(ir, f);
        let bodies = ir.m.functions.iter().filter(|x| fn_id(x).is_some_and(|w| functions.contains(&w)));
        for i in bodies.flat_map(|x| x.blocks.iter().flat_map(|b| b.instructions.iter())) {
            claimed.extend(used_ids(i).filter(|u| payload_vars.contains(u)));
        }
    }
    claimed
}

fn find_grid_member(ir: &Ir, s: Word) -> Option<DispatchGrid> {
    let decos = ir.member_decorations(s);
    let (k, _, _) = decos.iter().find(|(_, d, _)| *d == Decoration::PayloadDispatchIndirectAMDX)?;
    let offset = decos.iter().find_map(|(mk, d, o)| match (d, o.first()) {
        (Decoration::Offset, Some(Operand::LiteralBit32(v))) if mk == k => Some(*v),
        _ => None,
    })?;
    let st = ir.global(s)?;
    let mt = op_id(st, *k as usize)?;
    let m = ir.global(mt)?;
    let (comp_t, n) = match m.class.opcode {
        Op::TypeInt => (mt, 1),
        Op::TypeVector => (op_id(m, 0)?, op_lit(m, 1)?),
        _ => return None,
    };
    let width = ir.global(comp_t).filter(|c| c.class.opcode == Op::TypeInt).and_then(|c| op_lit(c, 0))?;
    if !(1..=3).contains(&n) || !(width == 16 || width == 32) {
        return None;
    }
    Some(DispatchGrid { offset, component_bytes: width / 8, components: n, member: Some(*k) })
}
