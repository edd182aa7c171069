//! What an allocation's address says about it when the output's cache
//! holds another allocation (see [`Decoded`]); the enqueue and
//! array-length helpers use it.

use super::helpers::{output_geometry, pool};
use crate::abi::NO_NODE;
use crate::codegen::Body;
use crate::ir::{id, Ir};
use crate::passes::context::Ctx;
use crate::runtime;
use spirv::{Op, Word};

/// What an allocation's address says about it when the output's cache
/// holds another: its target slot and rank (from the frame's key and the
/// record's place) and its count (the first record's meta word, which the
/// graph keeps for targets of outputs whose code asks). `NO_NODE` and 0
/// outside the pool or without a meta word.
pub(super) struct Decoded {
    pub slot: Word,
    pub rank: Word,
    pub count: Word,
}

pub(super) fn decode(ir: &mut Ir, cx: &Ctx, b: &mut Body, k: usize, push: &runtime::Push, addr: Word) -> Decoded {
    let a = cx.abi;
    let u = a.u32;
    let pool = pool(ir, cx, b, push);
    let (zero, none) = (ir.c_u32(0), ir.c_u32(NO_NODE));
    let slot_v = b.local(ir, u, none);
    let rank_v = b.local(ir, u, zero);
    let count_v = b.local(ir, u, zero);
    let off = b.bin(ir, Op::ISub, a.u64, addr, pool.pool);
    let c64 = b.op(ir, Op::UConvert, a.u64, vec![id(pool.count)]);
    let span = b.bin(ir, Op::ShiftLeftLogical, a.u64, c64, pool.shift);
    let above = b.bin(ir, Op::UGreaterThanEqual, a.bool_, addr, pool.pool);
    let below = b.bin(ir, Op::ULessThan, a.bool_, off, span);
    let inside = b.bin(ir, Op::LogicalAnd, a.bool_, above, below);
    let m = b.begin_if(ir, inside);
    let frame = b.bin(ir, Op::ShiftRightLogical, a.u64, off, pool.shift);
    let frame = b.op(ir, Op::UConvert, u, vec![id(frame)]);
    let keys = b.addr_ptr(ir, a.p_u64, pool.keys);
    let kp = b.elem(ir, a.p_u64, keys, frame);
    let key = b.load(ir, a.u64, kp, 8);
    let low = b.op(ir, Op::UConvert, u, vec![id(key)]);
    // A home frame has no key: its slot says its namespace (frame 0).
    let homes2 = b.bin(ir, Op::IAdd, u, pool.homes, pool.homes);
    let at_home = b.bin(ir, Op::ULessThan, a.bool_, frame, homes2);
    let odd_home = b.bin(ir, Op::UGreaterThanEqual, a.bool_, frame, pool.homes);
    let home_low = b.bin(ir, Op::ISub, u, frame, pool.homes);
    let home_low = b.select(ir, u, odd_home, home_low, frame);
    let low = b.select(ir, u, at_home, home_low, low);
    let slot = b.bin(ir, Op::UMod, u, low, pool.namespaces);
    let fk = b.bin(ir, Op::UDiv, u, low, pool.namespaces);
    let g = output_geometry(ir, cx, b, k, push, slot);
    let one64 = ir.c_u64(1);
    let bytes = b.bin(ir, Op::ShiftLeftLogical, a.u64, one64, pool.shift);
    let mask = b.bin(ir, Op::ISub, a.u64, bytes, one64);
    let within = b.bin(ir, Op::BitwiseAnd, a.u64, off, mask);
    let within = b.op(ir, Op::UConvert, u, vec![id(within)]);
    let j = b.bin(ir, Op::UDiv, u, within, g.stride);
    let first = b.bin(ir, Op::IMul, u, fk, g.per_frame);
    let rank = b.bin(ir, Op::IAdd, u, first, j);
    b.store_plain(slot_v, slot);
    b.store_plain(rank_v, rank);
    if g.may_have_meta() {
        let mm = b.begin_if(ir, g.meta);
        let four = ir.c_u32(4);
        let jm = b.bin(ir, Op::IMul, u, j, four);
        let at = b.bin(ir, Op::IAdd, u, g.meta_offset, jm);
        let ma = pool.address(ir, &a, b, frame, at);
        let mp = b.addr_ptr(ir, a.p_u32, ma);
        let word = b.load(ir, u, mp, 4);
        let s16 = ir.c_u32(16);
        let count = b.bin(ir, Op::ShiftRightLogical, u, word, s16);
        b.store_plain(count_v, count);
        b.end_if(mm);
    }
    b.end_if(m);
    Decoded {
        slot: b.op(ir, Op::Load, u, vec![id(slot_v)]),
        rank: b.op(ir, Op::Load, u, vec![id(rank_v)]),
        count: b.op(ir, Op::Load, u, vec![id(count_v)]),
    }
}
