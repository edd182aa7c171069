//! Where a workgroup changes its last counter, for the epilogue's done
//! count (`epilogue::DonePoint::AtSite`): the level's finisher reads the
//! rank counters (an allocation changes them) and the grid counters (an
//! enqueue to a target that may take its grid from the payload changes
//! them), so once a workgroup is past its last such instruction it may
//! count itself done, while its records are still being written.
//!
//! Only a site every invocation passes exactly once can carry the count and
//! its barrier: every such instruction must be in the entry function, in a
//! block every invocation reaches once (`uniform::reached_once`); the site
//! is the last of them (blocks are in dominance order, and blocks reached
//! once all lie on every path, so the last in order comes last on every
//! path).

use super::{may_target_dynamic, output_of};
use crate::ir::{op_id, Ir};
use crate::passes::context::Ctx;
use spirv::{Op, Word};

/// The instruction after which a workgroup has changed its last counter:
/// the `index`th instruction of the entry function's block `block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    pub block: Word,
    pub index: usize,
}

/// The site of the entry's last counter change, where it has one that
/// every invocation passes once (`None` also for packed thread nodes, whose
/// invocations run their code apart, and nodes without outputs).
pub fn last_change(ir: &Ir, cx: &Ctx) -> Option<Site> {
    if cx.packed || cx.facts.info.mesh || cx.facts.info.outputs.is_empty() {
        return None;
    }
    let types = ir.type_map();
    let changes = |i: &rspirv::dr::Instruction| match i.class.opcode {
        Op::AllocateNodePayloadsAMDX => true,
        Op::EnqueueNodePayloadsAMDX => {
            let output = op_id(i, 0).and_then(|p| types.get(&p).copied()).and_then(|t| output_of(cx, t));
            output.is_none_or(|k| may_target_dynamic(cx, k))
        }
        _ => false,
    };
    let mut last = None;
    for func in &ir.m.functions {
        let is_entry = func.def.as_ref().and_then(|d| d.result_id) == Some(cx.facts.entry_fn);
        let once = if is_entry { crate::uniform::reached_once(func) } else { Default::default() };
        for block in &func.blocks {
            let label = block.label.as_ref().and_then(|l| l.result_id)?;
            for (index, _) in block.instructions.iter().enumerate().filter(|(_, i)| changes(i)) {
                if !once.contains(&label) {
                    return None;
                }
                last = Some(Site { block: label, index });
            }
        }
    }
    last
}
