//! The node's outputs: the payload array types its code refers to, each
//! with its target's name, limits and record layout ([`OutputInfo`]), and
//! every pointer type to a payload array.

use super::code::CodeUse;
use super::entry::node_name;
use super::info::{OutputInfo, Visibility};
use super::record::record_stride;
use crate::consts::{eval_u32, SpecMap};
use crate::error::LowerError;
use crate::ir::{op_id, Ir};
use crate::layout::{scalar_align, size_of};
use spirv::{Decoration, Op, Word};
use std::collections::{HashMap, HashSet};

/// Refuses an allocated payload array type that does not name its target
/// node.
pub(super) fn check_named(ir: &Ir, visibilities: &[(Word, Visibility)], name: &str) -> Result<(), LowerError> {
    for (t, _) in visibilities {
        if ir.decoration_word(*t, Decoration::PayloadNodeNameAMDX).is_none() {
            return Err(LowerError::MissingDecoration {
                entry: name.to_string(),
                target: *t,
                decoration: "PayloadNodeNameAMDX",
            });
        }
    }
    Ok(())
}

/// The outputs: decorated payload array types (other than the input's,
/// `input_array_type`) that the reachable code refers to.
pub(super) fn infos(
    ir: &Ir,
    spec: &SpecMap,
    code: &CodeUse,
    input_array_type: Option<Word>,
    name: &str,
) -> Result<Vec<OutputInfo>, LowerError> {
    let mut out_types = vec![];
    for i in &ir.m.types_global_values {
        let Some(t) = i.result_id else { continue };
        if i.class.opcode != Op::TypeNodePayloadArrayAMDX || Some(t) == input_array_type {
            continue;
        }
        if ir.decoration_word(t, Decoration::PayloadNodeNameAMDX).is_none() {
            continue;
        }
        let via_ptr = code.used.iter().any(|u| ir.pointer_info(*u).is_some_and(|p| p.1 == t));
        if code.used.contains(&t) || via_ptr {
            out_types.push(t);
        }
    }
    let measured_arrays = measured_arrays(ir, &code.measured, &code.allocations);
    out_types.iter().map(|&t| info(ir, spec, code, (t, &out_types), &measured_arrays, name)).collect()
}

/// The output of payload array type `t` (one of `out_types`).
fn info(
    ir: &Ir,
    spec: &SpecMap,
    code: &CodeUse,
    (t, out_types): (Word, &[Word]),
    measured_arrays: &HashSet<Word>,
    name: &str,
) -> Result<OutputInfo, LowerError> {
    let e = || name.to_string();
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
    let mut vis: Vec<Visibility> = code.visibilities.iter().filter(|(a, _)| *a == t).map(|x| x.1).collect();
    vis.sort();
    vis.dedup();
    Ok(OutputInfo {
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
    })
}

/// Every `NodePayloadAMDX` pointer type to a payload array -> that array type.
pub(super) fn pointer_types(ir: &Ir) -> HashMap<Word, Word> {
    ir.m.types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypePointer)
        .filter_map(|i| {
            let (_, p) = ir.pointer_info(i.result_id?)?;
            (ir.opcode_of(p) == Some(Op::TypeNodePayloadArrayAMDX)).then_some((i.result_id?, p))
        })
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
