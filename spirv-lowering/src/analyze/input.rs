//! The input payload: which `NodePayloadAMDX` variable is the input, its
//! types, the records per workgroup, the record's layout and dispatch
//! grid ([`InputPayload`]), and whether its records must lie contiguously.

use super::code::is_variable_in;
use super::entry::{entry_names, fn_id, reachable};
use super::info::{DispatchGrid, InputPayload, LaunchMode};
use super::modes::GridModes;
use super::record::record_stride;
use crate::consts::{eval_u32, SpecMap};
use crate::error::LowerError;
use crate::ir::{op_id, op_lit, used_ids, Ir};
use crate::layout::{scalar_align, size_of};
use rspirv::dr::Operand;
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::{BTreeSet, HashSet};

/// The input variable and its types.
pub(super) struct InputVar {
    /// The NodePayloadAMDX input variable, if declared.
    pub var: Option<Word>,
    /// Pointer type of the input variable.
    pub ptr_type: Option<Word>,
    /// The payload array type, unless the input is a plain struct.
    pub array_type: Option<Word>,
    /// The record's struct type.
    pub struct_: Option<Word>,
    /// No code reads the input and several variables could be it.
    pub ambiguous: bool,
}

impl InputVar {
    /// The input of entry point `entry_fn` (`name`): the one variable its
    /// code (`used`) reads. DXC lists every node's input variable in every
    /// entry point of a library module, so the interface alone does not
    /// tell; an input no code reads is the one variable of the `interface`
    /// that no other entry point uses either.
    pub fn find(
        ir: &Ir,
        used: &HashSet<Word>,
        interface: &[Word],
        entry_fn: Word,
        name: &str,
    ) -> Result<InputVar, LowerError> {
        let e = || name.to_string();
        let payload_vars = |ws: &mut dyn Iterator<Item = &Word>| -> BTreeSet<Word> {
            ws.filter(|w| is_variable_in(ir, **w, StorageClass::NodePayloadAMDX)).copied().collect()
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
        let mut ambiguous = false;
        let var = match inputs.first() {
            Some(v) => Some(*v),
            None => {
                let claimed = payload_vars_used_by_other_entries(ir, entry_fn);
                let free: Vec<Word> =
                    payload_vars(&mut interface.iter()).into_iter().filter(|v| !claimed.contains(v)).collect();
                ambiguous = free.len() > 1;
                if free.len() == 1 {
                    free.first().copied()
                } else {
                    None
                }
            }
        };
        let ptr_type = var.and_then(|v| ir.global(v)).and_then(|i| i.result_type);
        let pointee = ptr_type.and_then(|t| ir.pointer_info(t)).map(|p| p.1);
        let (array_type, struct_) = match pointee {
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
                    result_id: var,
                    detail: format!("input payload must point to OpTypeNodePayloadArrayAMDX, found %{p}"),
                })
            }
            None => (None, None),
        };
        Ok(InputVar { var, ptr_type, array_type, struct_, ambiguous })
    }

    /// Records per workgroup (`NodeMaxPayloadsAMDX` on the input; 1 if
    /// absent, which a coalescing node may not be).
    pub fn max_payloads(&self, ir: &Ir, spec: &SpecMap, grids: &GridModes, name: &str) -> Result<u32, LowerError> {
        let e = || name.to_string();
        let coalescing = grids.coalescing;
        let input_max = match self.array_type {
            Some(a) => match ir.decoration_word(a, Decoration::NodeMaxPayloadsAMDX) {
                Some(w) => eval_u32(ir, spec, w).ok_or(LowerError::NotConstant {
                    entry: e(),
                    what: "NodeMaxPayloadsAMDX",
                    id: w,
                })?,
                None if coalescing => {
                    return Err(LowerError::MissingDecoration {
                        entry: e(),
                        target: a,
                        decoration: "NodeMaxPayloadsAMDX",
                    })
                }
                None => 1,
            },
            None if coalescing && self.struct_.is_some() => {
                return Err(LowerError::MissingDecoration {
                    entry: e(),
                    target: self.struct_.unwrap_or(0),
                    decoration: "NodeMaxPayloadsAMDX",
                })
            }
            None => 1,
        };
        if coalescing && input_max == 0 {
            return Err(LowerError::Invalid {
                entry: e(),
                opcode: "OpDecorateId".into(),
                result_id: self.array_type,
                detail: "NodeMaxPayloadsAMDX of the input is 0".into(),
            });
        }
        Ok(input_max)
    }

    /// Refuses an input that is needed to find the dispatch grid (a
    /// dynamic broadcast node's) but could be one of several variables.
    pub fn check_located(&self, grids: &GridModes, entry_fn: Word, name: &str) -> Result<(), LowerError> {
        if self.ambiguous && !grids.coalescing && grids.static_grid.is_none() {
            return Err(LowerError::Unsupported {
                entry: name.to_string(),
                opcode: "OpEntryPoint".into(),
                result_id: Some(entry_fn),
                detail: "the node's code never reads its input record and several NodePayloadAMDX variables of the \
                         module could be it, so the dispatch grid cannot be located"
                    .into(),
            });
        }
        Ok(())
    }

    /// The input payload of a node launched `launch` with `input_max`
    /// records per workgroup (`None`: the node has no input).
    pub fn payload(
        &self,
        ir: &Ir,
        spec: &SpecMap,
        launch: &LaunchMode,
        input_max: u32,
        name: &str,
    ) -> Result<Option<InputPayload>, LowerError> {
        let e = || name.to_string();
        Ok(match self.struct_ {
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
        })
    }

    /// The code steps between input records with `OpPtrAccessChain` on a
    /// record pointer (among `ptr_chain_bases`).
    pub fn needs_contiguous_records(&self, ir: &Ir, ptr_chain_bases: &[Word]) -> bool {
        let types = if ptr_chain_bases.is_empty() { Default::default() } else { ir.type_map() };
        self.struct_.is_some_and(|s| {
            ptr_chain_bases
                .iter()
                .any(|b| types.get(b).and_then(|t| ir.pointer_info(*t)) == Some((StorageClass::NodePayloadAMDX, s)))
        })
    }
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

/// The `PayloadDispatchIndirectAMDX` member of payload struct `s`, if it
/// is one the dispatch grid can be read from.
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
