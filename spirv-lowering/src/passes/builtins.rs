//! Builtins whose meaning changes under the node launch modes.
//!
//! Matches: module-scope `Input` variables decorated `BuiltIn` WorkgroupId,
//! NumWorkgroups, LocalInvocationId, LocalInvocationIndex, GlobalInvocationId,
//! RemainingRecursionLevelsAMDX or ShaderIndexAMDX, and the access chains
//! derived from them. Emits: those variables retyped to `Private` (the BuiltIn
//! decoration removed), derived access chains retyped to `Private` pointers, and
//! fresh `Input` variables for the real WorkgroupId, NumWorkgroups,
//! LocalInvocationId and LocalInvocationIndex. Afterwards the application's code
//! reads values the prologue stores, and only the lowering reads the real ones.

use super::context::{Ctx, Real};
use crate::codegen::Abi;
use crate::error::LowerError;
use crate::ir::{op_id, Ir};
use rspirv::dr::Operand;
use spirv::{BuiltIn, Decoration, Op, StorageClass, Word};
use std::collections::HashMap;

/// An application builtin variable now in `Private` storage: (builtin, var, value type).
pub type AppBuiltins = Vec<(BuiltIn, Word, Word)>;

pub fn declare_real(ir: &mut Ir, abi: &Abi) -> Real {
    let mk = |ir: &mut Ir, b: BuiltIn, ty: Word, name: &str| {
        let v = ir.global_var(StorageClass::Input, ty, name);
        ir.decorate(v, Decoration::BuiltIn, vec![Operand::BuiltIn(b)]);
        v
    };
    Real {
        wg: mk(ir, BuiltIn::WorkgroupId, abi.v3, "real_WorkgroupId"),
        nwg: mk(ir, BuiltIn::NumWorkgroups, abi.v3, "real_NumWorkgroups"),
        lid: mk(ir, BuiltIn::LocalInvocationId, abi.v3, "real_LocalInvocationId"),
        lidx: mk(ir, BuiltIn::LocalInvocationIndex, abi.u32, "real_LocalInvocationIndex"),
    }
}

const REPLACED: [BuiltIn; 7] = [
    BuiltIn::WorkgroupId,
    BuiltIn::NumWorkgroups,
    BuiltIn::LocalInvocationId,
    BuiltIn::LocalInvocationIndex,
    BuiltIn::GlobalInvocationId,
    BuiltIn::RemainingRecursionLevelsAMDX,
    BuiltIn::ShaderIndexAMDX,
];

pub fn run(ir: &mut Ir, cx: &Ctx) -> Result<AppBuiltins, LowerError> {
    // The real builtins declared for the lowering itself stay Input.
    let mine = [cx.real.wg, cx.real.nwg, cx.real.lid, cx.real.lidx];
    let mut found: AppBuiltins = vec![];
    for i in &ir.m.types_global_values {
        let Some(v) = i.result_id else { continue };
        if i.class.opcode != Op::Variable || mine.contains(&v) {
            continue;
        }
        if let Some(b) = ir.builtin_of(v) {
            if REPLACED.contains(&b) {
                let pointee = i.result_type.and_then(|t| ir.pointer_info(t)).map(|p| p.1).unwrap_or(0);
                found.push((b, v, pointee));
            }
        }
    }
    let mut retype: HashMap<Word, Word> = HashMap::new(); // old Input ptr type -> Private ptr type
    let mut private_ptr = |ir: &mut Ir, old: Word| -> Word {
        if let Some(t) = retype.get(&old) {
            return *t;
        }
        let pointee = ir.pointer_info(old).map(|p| p.1).unwrap_or(0);
        let t = ir.t_ptr(StorageClass::Private, pointee, None);
        retype.insert(old, t);
        t
    };
    for (_, v, _) in &found {
        let old = ir.global(*v).and_then(|i| i.result_type).unwrap_or(0);
        let t = private_ptr(ir, old);
        if let Some(i) = ir.m.types_global_values.iter_mut().find(|i| i.result_id == Some(*v)) {
            i.result_type = Some(t);
            i.operands = vec![Operand::StorageClass(StorageClass::Private)];
        }
    }
    let vars: Vec<Word> = found.iter().map(|x| x.1).collect();
    ir.m.annotations.retain(|a| {
        !(a.class.opcode == Op::Decorate
            && op_id(a, 0).is_some_and(|t| vars.contains(&t))
            && matches!(a.operands.get(1), Some(Operand::Decoration(Decoration::BuiltIn))))
    });
    // Access chains into the retyped variables (in order, so chains of chains follow).
    let mut derived: std::collections::HashSet<Word> = vars.iter().copied().collect();
    let mut fixes: Vec<(usize, usize, usize, Word)> = vec![];
    for (fi, f) in ir.m.functions.iter().enumerate() {
        for (bi, b) in f.blocks.iter().enumerate() {
            for (ii, i) in b.instructions.iter().enumerate() {
                let chain = matches!(i.class.opcode, Op::AccessChain | Op::InBoundsAccessChain | Op::CopyObject);
                if chain && op_id(i, 0).is_some_and(|base| derived.contains(&base)) {
                    if let (Some(r), Some(t)) = (i.result_id, i.result_type) {
                        derived.insert(r);
                        fixes.push((fi, bi, ii, t));
                    }
                }
            }
        }
    }
    for (fi, bi, ii, old) in fixes {
        let t = private_ptr(ir, old);
        if let Some(i) =
            ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)).and_then(|b| b.instructions.get_mut(ii))
        {
            i.result_type = Some(t);
        }
    }
    Ok(found)
}
