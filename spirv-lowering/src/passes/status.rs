//! A kernel's status for the host: the bits of what went wrong at this
//! level ([`raise`]), and an index past its records, raised with its fault
//! straight into the host's words ([`report_bounds`]; `fault` writes the
//! fault words).

use super::context::Ctx;
use super::fault::{self, Fault};
use crate::abi::{FAULT_INPUT_INDEX, FAULT_PAYLOAD_INDEX, STATUS_PAYLOAD_BOUNDS, STATUS_WORDS};
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
///
/// The bit goes straight into the host's final status word, not into the
/// level's: an index is checked as the node's code reads or writes a
/// record, which may be after its workgroup has counted itself done
/// (`epilogue::DonePoint`) and the level's finisher has cleared the level's
/// status. The finishers OR their status into that word, so neither loses
/// the other's bits.
pub(super) fn report_bounds(ir: &mut Ir, cx: &Ctx, b: &mut Body, cond: Word, k: Option<usize>, values: [Word; 2]) {
    let a = cx.abi;
    let m = b.begin_if_rare(ir, cond);
    let push = runtime::push(ir, &a, &cx.push, b);
    let words = b.load_field(ir, &a, a.s_dispatch(), push.dispatch, f::D_STATUS);
    let zero64 = ir.c_u64(0);
    let has = b.bin(ir, Op::INotEqual, a.bool_, words, zero64);
    let h = b.begin_if(ir, has);
    let bit = ir.c_u32(STATUS_PAYLOAD_BOUNDS);
    let last = final_word(ir, cx, b, words);
    b.atomic(ir, Op::AtomicOr, a.u32, last, bit);
    b.end_if(h);
    let kind = ir.c_u32(if k.is_some() { FAULT_PAYLOAD_INDEX } else { FAULT_INPUT_INDEX });
    let yes = ir.c_bool(true);
    let fault = Fault::of_node(ir, &push, kind, k, &values);
    fault::record_at(ir, cx, b, words, yes, &fault);
    b.end_if(m);
}

/// A pointer to the final status word of the host's words at `words`
/// (a nonzero `u64` address).
pub(super) fn final_word(ir: &mut Ir, cx: &Ctx, b: &mut Body, words: Word) -> Word {
    let a = cx.abi;
    let base = b.addr_ptr(ir, a.p_u32, words);
    let last = ir.c_u32(STATUS_WORDS - 1);
    b.elem(ir, a.p_u32, base, last)
}
