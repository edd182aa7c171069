//! Payload bounds (`LowerOptions::checked_payloads`), for the `node_ops`
//! pass: the bodies of the `node_output{k}_record_index` functions the
//! `payload` pass calls on every output record index that is not a
//! constant inside the output's `NodeMaxPayloadsAMDX`.
//!
//! An index is held to the records of the allocation it is used on when
//! that is the output's cached allocation (the usual case: records written
//! right after they are allocated), else to `NodeMaxPayloadsAMDX`. An index
//! past a successful allocation records the fault for the host
//! (`abi::FAULT_PAYLOAD_INDEX`) and raises `abi::STATUS_PAYLOAD_BOUNDS`;
//! the access goes to the last record. (Writes to a failed allocation go to
//! the sink and were reported when it failed.)

use super::helpers::{finish_fn, AllocCache, Helpers};
use crate::abi::NO_NODE;
use crate::ir::{id, inst, Ir};
use crate::passes::context::Ctx;
use crate::passes::status::report_bounds;
use crate::runtime::begin_fn;
use spirv::{Op, Word};

/// Defines `node_output{k}_record_index(u32 index, u64 record0) -> u32` as
/// the function `fid` the accesses already call.
pub(super) fn record_index(ir: &mut Ir, cx: &Ctx, h: &mut Helpers, k: usize, fid: Word) {
    let a = cx.abi;
    let u = a.u32;
    let (_, ps, mut func, mut b) = begin_fn(ir, u, &[u, a.u64]);
    if let Some(def) = func.def.as_mut() {
        def.result_id = Some(fid);
    }
    let (index, record0) = (ps[0], ps[1]);
    let cache = AllocCache::get(ir, cx, h, k);
    let most = cx.facts.info.outputs.get(k).map_or(1, |o| o.max_payloads).max(1);
    let most = ir.c_u32(most);
    let cached = b.op(ir, Op::Load, a.u64, vec![id(cache.addr)]);
    let asked = b.op(ir, Op::Load, u, vec![id(cache.count)]);
    let slot = b.op(ir, Op::Load, u, vec![id(cache.slot)]);
    let same = b.bin(ir, Op::IEqual, a.bool_, cached, record0);
    let none = ir.c_u32(NO_NODE);
    let placed = b.bin(ir, Op::INotEqual, a.bool_, slot, none);
    let known = b.bin(ir, Op::LogicalAnd, a.bool_, same, placed);
    let count = b.select(ir, u, known, asked, most);
    let below = b.bin(ir, Op::ULessThan, a.bool_, count, most);
    let count = b.select(ir, u, below, count, most);
    let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
    let empty = b.bin(ir, Op::IEqual, a.bool_, count, zero);
    let count = b.select(ir, u, empty, one, count);
    let inside = b.bin(ir, Op::ULessThan, a.bool_, index, count);
    let last = b.bin(ir, Op::ISub, u, count, one);
    let held = b.select(ir, u, inside, index, last);
    let outside = b.op(ir, Op::LogicalNot, a.bool_, vec![id(inside)]);
    let faulty = b.bin(ir, Op::LogicalAnd, a.bool_, outside, known);
    report_bounds(ir, cx, &mut b, faulty, Some(k), [index, asked]);
    b.end(inst(Op::ReturnValue, None, None, vec![id(held)]), None);
    finish_fn(h, func, b);
    ir.name(fid, &format!("node_output{k}_record_index"));
}
