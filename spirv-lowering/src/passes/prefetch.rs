//! A workgroup's record requested before its launch's fields arrive, for
//! the `prologue` pass.
//!
//! Matches: nothing. In a graph with homes (`abi::homes_for`) the record of
//! rank `r < P` of a node reading its own records sits in its home frame,
//! at an address the push constants and the graph's tables give alone: the
//! pool at a known offset from the context, the home of the node's slot
//! for one tag parity or the other, record `r` at the input stride. The
//! prologue knows `r` from the workgroup id (every launch mode but
//! dynamic grids), but finds out whether the record exists, and where, only
//! from the `NodeDispatch` and the context it loads first. [`home_record`]
//! loads the record's first word from both candidate homes right away, so
//! that its line is on its way while those fields are: the node's own code
//! then reads the payload from a line already fetched. A level of one
//! small workgroup waits on a chain of dependent round trips to memory
//! (busy-levels on the H200: 1.36–1.39 → 1.31 with it, see
//! `bench/README.md`).
//!
//! The loaded words are used only to decide a store to the sink that no
//! record reads meaningfully (a lost record's payload is the sink's
//! garbage anyway), so that no compiler drops the loads; rank `r` past the
//! home's records requests the home's last record instead, in bounds.

use super::context::Ctx;
use crate::analyze::LaunchMode;
use crate::codegen::Body;
use crate::ir::{id, Ir};
use crate::runtime::Push;
use spirv::{Op, Word};

/// XOR of the two words that makes the sink store happen (any value does).
const KEEP_MARK: u32 = 0x9E37_79B1;

/// Requests record `first` of this node from its home frame of either
/// parity, where the graph's tables say it may be there.
pub fn home_record(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, first: Word) {
    let a = cx.abi;
    let u = a.u32;
    let Some(t) = &cx.opts.tables else { return };
    let info = &cx.facts.info;
    let g = t.input;
    let by_rank = !matches!(info.launch, LaunchMode::BroadcastDynamic { .. });
    let own_records = info.input.is_some() && info.shares_input_with.is_none();
    if t.homes == 0 || !by_rank || !own_records || g.frameless || g.stride == 0 || g.per_frame == 0 {
        return;
    }
    let last = ir.c_u32(g.per_frame - 1);
    let past = b.bin(ir, Op::UGreaterThan, a.bool_, first, last);
    let r = b.select(ir, u, past, last, first);
    let stride = ir.c_u32(g.stride);
    let offset = b.bin(ir, Op::IMul, u, r, stride);
    let offset = b.op(ir, Op::UConvert, a.u64, vec![id(offset)]);
    let ctx = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(push.ctx)]);
    let pool = ir.c_u64(t.pool);
    let pool = b.bin(ir, Op::IAdd, a.u64, ctx, pool);
    let shift = ir.c_u64(u64::from(t.frame_shift));
    let mut words = ir.c_u32(0);
    // `abi::home_slot`: frame 0 of namespace `slot`, homes of tag parity p
    // at `p * homes`.
    for parity in 0..2u32 {
        let base = ir.c_u32(parity * t.homes);
        let home = b.bin(ir, Op::IAdd, u, base, push.slot);
        let home = b.op(ir, Op::UConvert, a.u64, vec![id(home)]);
        let frame = b.bin(ir, Op::ShiftLeftLogical, a.u64, home, shift);
        let at = b.bin(ir, Op::IAdd, a.u64, frame, offset);
        let at = b.bin(ir, Op::IAdd, a.u64, pool, at);
        let p = b.addr_ptr(ir, a.p_u32, at);
        let word = b.load(ir, u, p, 4);
        words = b.bin(ir, Op::BitwiseXor, u, words, word);
    }
    let mark = ir.c_u32(KEEP_MARK);
    let keep = b.bin(ir, Op::IEqual, a.bool_, words, mark);
    let m = b.begin_if_rare(ir, keep);
    let sink = cx.vars.ctx.sink(ir, &a, b);
    let sp = b.addr_ptr(ir, a.p_u32, sink);
    b.store(sp, words, 4);
    b.end_if(m);
}
