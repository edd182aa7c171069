//! Select the entry point.
//!
//! Matches: every `OpEntryPoint`, execution mode and function of the module.
//! Emits nothing. Afterwards only the lowered entry point, its execution modes
//! and the functions reachable from it remain.

use crate::analyze::EntryFacts;
use crate::ir::{op_id, Ir};

pub fn run(ir: &mut Ir, facts: &EntryFacts) {
    let f = facts.entry_fn;
    ir.m.entry_points.retain(|e| op_id(e, 1) == Some(f));
    ir.m.execution_modes.retain(|e| op_id(e, 0) == Some(f));
    ir.m.functions
        .retain(|func| func.def.as_ref().and_then(|d| d.result_id).is_some_and(|id| facts.functions.contains(&id)));
}
