//! A kernel's first fault, for the host's message: which node, at which
//! level, on which output, with which values (see `abi::FAULT_WORDS`). The
//! words follow the dispatch's status words in host memory; the first
//! kernel to claim the kind word with a compare-exchange writes the rest,
//! so a dispatch keeps its first fault whatever follows. Only a faulting
//! invocation reaches any of this.

use super::context::Ctx;
use crate::abi::{FAULT_KIND, FAULT_LEVEL, FAULT_NODE, FAULT_OUTPUT, FAULT_VALUES, NO_NODE, STATUS_WORDS};
use crate::codegen::{f, Body};
use crate::ir::Ir;
use crate::runtime::Push;
use spirv::{Op, Word};

/// What one fault says (all `u32`).
pub(super) struct Fault {
    /// An `abi::FAULT_*` kind.
    pub kind: Word,
    /// The node slot it is about.
    pub node: Word,
    pub level: Word,
    /// The output's index among the node's, or `NO_NODE`.
    pub output: Word,
    /// By kind; unused ones zero.
    pub values: [Word; 4],
}

impl Fault {
    /// A fault of the running node (`push`) at its level, on output `k`
    /// (`None`: no output), with `values` (missing ones zero).
    pub(super) fn of_node(ir: &mut Ir, push: &Push, kind: Word, k: Option<usize>, values: &[Word]) -> Fault {
        let output = ir.c_u32(k.map_or(NO_NODE, |k| k as u32));
        let zero = ir.c_u32(0);
        let mut all = [zero; 4];
        all[..values.len()].copy_from_slice(values);
        Fault { kind, node: push.slot, level: push.level, output, values: all }
    }
}

/// Records `fault` where `cond` holds (the dispatch's status words' address
/// is loaded only then).
pub(super) fn record(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, cond: Word, fault: &Fault) {
    let a = cx.abi;
    let m = b.begin_if_rare(ir, cond);
    let words = b.load_field(ir, &a, a.s_dispatch(), push.dispatch, f::D_STATUS);
    let yes = ir.c_bool(true);
    record_at(ir, cx, b, words, yes, fault);
    b.end_if(m);
}

/// Records `fault` where `cond` holds, at the status words `words` (`u64`),
/// unless there are none (0) or they already hold a fault.
pub(super) fn record_at(ir: &mut Ir, cx: &Ctx, b: &mut Body, words: Word, cond: Word, fault: &Fault) {
    let a = cx.abi;
    let zero64 = ir.c_u64(0);
    let has = b.bin(ir, Op::INotEqual, a.bool_, words, zero64);
    let go = b.bin(ir, Op::LogicalAnd, a.bool_, cond, has);
    let m = b.begin_if_rare(ir, go);
    let first = ir.c_u64(u64::from(STATUS_WORDS) * 4);
    let at = b.bin(ir, Op::IAdd, a.u64, words, first);
    let base = b.addr_ptr(ir, a.p_u32, at);
    let word = |ir: &mut Ir, b: &mut Body, k: u32| {
        let kc = ir.c_u32(k);
        b.elem(ir, a.p_u32, base, kc)
    };
    let kind_p = word(ir, b, FAULT_KIND);
    let zero = ir.c_u32(0);
    let old = b.atomic_cas(ir, a.u32, kind_p, fault.kind, zero);
    let won = b.bin(ir, Op::IEqual, a.bool_, old, zero);
    let w = b.begin_if(ir, won);
    let fields = [(FAULT_NODE, fault.node), (FAULT_LEVEL, fault.level), (FAULT_OUTPUT, fault.output)];
    let values = fault.values.iter().enumerate().map(|(i, &v)| (FAULT_VALUES + i as u32, v));
    for (k, v) in fields.into_iter().chain(values) {
        let p = word(ir, b, k);
        b.store(p, v, 4);
    }
    b.end_if(w);
    b.end_if(m);
}
