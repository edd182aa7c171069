//! A kernel's status for the host: the bits of what went wrong at this
//! level ([`raise`]), and an index past its records, raised with its fault
//! ([`report_bounds`]; `fault` writes the fault words).

use super::context::Ctx;
use super::fault::{self, Fault};
use crate::abi::{FAULT_INPUT_INDEX, FAULT_PAYLOAD_INDEX, STATUS_PAYLOAD_BOUNDS};
use crate::codegen::{f, Body};
use crate::ir::Ir;
use crate::runtime::{self, ctx_parity_ptr, Push};
use spirv::{Op, Word};

/// ORs `bits` (when not zero) into the status of this level's parity.
pub(super) fn raise(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, bits: Word) {
    let a = cx.abi;
    let zero = ir.c_u32(0);
    let bad = b.bin(ir, Op::INotEqual, a.bool_, bits, zero);
    let m = b.begin_if_rare(ir, bad);
    let sp = ctx_parity_ptr(ir, &a, b, push.ctx, f::C_STATUS, push.odd, false);
    b.atomic(ir, Op::AtomicOr, a.u32, sp, bits);
    b.end_if(m);
}

/// Where `cond` holds: raises `STATUS_PAYLOAD_BOUNDS` and records the
/// fault of output `k` (`None`: the input) with `values`.
pub(super) fn report_bounds(ir: &mut Ir, cx: &Ctx, b: &mut Body, cond: Word, k: Option<usize>, values: [Word; 2]) {
    let a = cx.abi;
    let m = b.begin_if_rare(ir, cond);
    let push = runtime::push(ir, &a, &cx.push, b);
    let bit = ir.c_u32(STATUS_PAYLOAD_BOUNDS);
    raise(ir, cx, b, &push, bit);
    let kind = ir.c_u32(if k.is_some() { FAULT_PAYLOAD_INDEX } else { FAULT_INPUT_INDEX });
    let yes = ir.c_bool(true);
    let fault = Fault::of_node(ir, &push, kind, k, &values);
    fault::record(ir, cx, b, &push, yes, &fault);
    b.end_if(m);
}
