//! Evaluation of (specialization) constants: the AMDX execution modes and
//! decorations take ids, which may be `OpSpecConstant`s the application
//! specializes at pipeline creation. The caller passes the specialization map
//! (SpecId -> 32-bit value, as in `VkSpecializationInfo`).

use crate::ir::{op_lit, Ir};
use rspirv::dr::Operand;
use spirv::{Decoration, Op, Word};
use std::collections::BTreeMap;

/// SpecId -> value (booleans: non-zero is true).
pub type SpecMap = BTreeMap<u32, u32>;

/// The value of constant `w` after specialization, or `None` if it is not a
/// scalar integer/boolean constant this evaluator understands.
pub fn eval(ir: &Ir, spec: &SpecMap, w: Word) -> Option<u64> {
    eval_depth(ir, spec, w, 0)
}

fn eval_depth(ir: &Ir, spec: &SpecMap, w: Word, depth: u32) -> Option<u64> {
    // Each level may branch in two (OpSpecConstantOp): 10 levels bound the work.
    if depth > 10 {
        return None;
    }
    let i = ir.global(w)?;
    let spec_value = || ir.decoration_word(w, Decoration::SpecId).and_then(|s| spec.get(&s)).copied();
    match i.class.opcode {
        Op::Constant => literal(i.operands.first()?),
        Op::SpecConstant => match spec_value() {
            Some(v) => Some(u64::from(v)),
            None => literal(i.operands.first()?),
        },
        Op::ConstantTrue => Some(1),
        Op::ConstantFalse | Op::ConstantNull => Some(0),
        Op::SpecConstantTrue => Some(spec_value().map(|v| u64::from(v != 0)).unwrap_or(1)),
        Op::SpecConstantFalse => Some(spec_value().map(|v| u64::from(v != 0)).unwrap_or(0)),
        Op::SpecConstantOp => {
            let opcode = match i.operands.first()? {
                Operand::LiteralSpecConstantOpInteger(o) => *o,
                _ => return None,
            };
            let arg = |k: usize| match i.operands.get(k) {
                Some(Operand::IdRef(a)) => eval_depth(ir, spec, *a, depth + 1),
                _ => None,
            };
            let (a, b) = (arg(1)?, arg(2));
            match opcode {
                Op::IAdd => Some(a.wrapping_add(b?) & 0xffff_ffff),
                Op::ISub => Some(a.wrapping_sub(b?) & 0xffff_ffff),
                Op::IMul => Some(a.wrapping_mul(b?) & 0xffff_ffff),
                Op::UDiv => a.checked_div(b?),
                Op::UMod => a.checked_rem(b?),
                _ => None,
            }
        }
        _ => None,
    }
}

fn literal(o: &Operand) -> Option<u64> {
    match o {
        Operand::LiteralBit32(v) => Some(u64::from(*v)),
        Operand::LiteralBit64(v) => Some(*v),
        _ => None,
    }
}

/// A 32-bit evaluation (AMDX operands are 32-bit integers).
pub fn eval_u32(ir: &Ir, spec: &SpecMap, w: Word) -> Option<u32> {
    eval(ir, spec, w).and_then(|v| u32::try_from(v).ok())
}

/// Whether `w` is an `OpSpecConstant*` (its value may change at pipeline creation).
pub fn is_spec(ir: &Ir, w: Word) -> bool {
    ir.global(w).is_some_and(|i| {
        matches!(i.class.opcode, Op::SpecConstant | Op::SpecConstantTrue | Op::SpecConstantFalse | Op::SpecConstantOp)
    })
}

/// The literal word `k` of a global instruction (used for OpTypeInt width).
pub fn type_lit(ir: &Ir, ty: Word, k: usize) -> Option<u32> {
    ir.global(ty).and_then(|i| op_lit(i, k))
}
