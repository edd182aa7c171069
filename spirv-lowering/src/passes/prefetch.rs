//! Lines a workgroup will read, requested before its launch's fields
//! arrive, for the `prologue` pass.
//!
//! Matches: nothing. A level of one small workgroup waits on a chain of
//! dependent round trips to memory, not on arithmetic (2,048 dependent
//! integer operations added to every kernel's start left busy-levels where
//! it was on the H200, see `bench/README.md`). [`run`] loads, at the
//! kernel's start, a word of a line the prologue would otherwise reach
//! only after loading the launch's `NodeDispatch` and the context:
//! - **the home record**, at levels after 0: in a graph with homes
//!   (`abi::homes_for`) the record of rank `r < P` of a node reading its
//!   own records sits in its home frame, at an address the push constants
//!   and the graph's tables give alone (the pool at a known offset from the
//!   context, the home of the node's slot for one tag parity or the other,
//!   record `r` at the input stride); `r` follows from the workgroup id in
//!   every launch mode but dynamic grids. Both parities' candidates are
//!   loaded (rank `r` past the home's records loads its last record, in
//!   bounds);
//! - **the line of the launch**, at level 0: a host dispatch keeps the
//!   entry node's payloads and grid starts right after the `NodeDispatch`es
//!   in its staging block (`layer/src/graph/entry.rs`, which pads the block
//!   by `abi::LAUNCH_LINE_PAD` for these loads): the words
//!   `abi::LAUNCH_LINE_WORDS` bytes past the kernel's `NodeDispatch` are
//!   loaded (for an indirect dispatch, the next slot's `NodeDispatch` or
//!   the tables after the last, in scratch). Every workgroup of the level
//!   loads them: each brings the line into its own processor's cache while
//!   the `NodeDispatch` arrives (deferred shading's 32,400 level-0
//!   workgroups gain 1.4 %, and lose it when only the first 4,096 do). A
//!   launch whose workgroups read records far from its first line pays
//!   for loads that bring it nothing: fanout's 2.1 million level-0
//!   workgroups, 0.9 %. At later levels the launch's fields were written
//!   by the finisher of the level before, into scratch the GPU's cache
//!   holds.
//!
//! The loaded words only decide a store to the sink that no record reads
//! meaningfully (a lost record's payload is the sink's garbage anyway), so
//! that no compiler drops the loads.

use super::context::Ctx;
use crate::abi::LAUNCH_LINE_WORDS;
use crate::analyze::LaunchMode;
use crate::codegen::Body;
use crate::ir::{id, Ir};
use crate::runtime::Push;
use spirv::{Op, Word};

/// XOR of the two words that makes the sink store happen (any value does).
const KEEP_MARK: u32 = 0x9E37_79B1;

/// Requests the lines of record `first` in this node's home frames (at
/// levels after 0, which read frames) and of its launch (at level 0, whose
/// records a host dispatch stages after the `NodeDispatch`es); see the
/// module doc.
pub fn run(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, first: Word) {
    let a = cx.abi;
    if cx.facts.info.mesh {
        return;
    }
    let zero = ir.c_u32(0);
    let words = b.local(ir, a.u32, zero);
    let entry = b.bin(ir, Op::IEqual, a.bool_, push.level, zero);
    let m = b.begin_if(ir, entry);
    let line = launch_line(ir, cx, b, push);
    b.store_plain(words, line);
    b.end_if(m);
    let later = b.op(ir, Op::LogicalNot, a.bool_, vec![id(entry)]);
    let m = b.begin_if(ir, later);
    if let Some(home) = home_record(ir, cx, b, push, first) {
        b.store_plain(words, home);
    }
    b.end_if(m);
    let words = b.op(ir, Op::Load, a.u32, vec![id(words)]);
    let mark = ir.c_u32(KEEP_MARK);
    let keep = b.bin(ir, Op::IEqual, a.bool_, words, mark);
    let m = b.begin_if_rare(ir, keep);
    let sink = cx.vars.ctx.sink(ir, &a, b);
    let sp = b.addr_ptr(ir, a.p_u32, sink);
    b.store(sp, words, 4);
    b.end_if(m);
}

/// The words past the `NodeDispatch` (XORed).
fn launch_line(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push) -> Word {
    let a = cx.abi;
    let dispatch = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(push.dispatch)]);
    let mut words = ir.c_u32(0);
    for past in LAUNCH_LINE_WORDS {
        let past = ir.c_u64(u64::from(past));
        let at = b.bin(ir, Op::IAdd, a.u64, dispatch, past);
        let p = b.addr_ptr(ir, a.p_u32, at);
        let word = b.load(ir, a.u32, p, 4);
        words = b.bin(ir, Op::BitwiseXor, a.u32, words, word);
    }
    words
}

/// The words of record `first` in this node's home frames of both parities
/// (XORed), where the graph's tables say it may be there.
fn home_record(ir: &mut Ir, cx: &Ctx, b: &mut Body, push: &Push, first: Word) -> Option<Word> {
    let a = cx.abi;
    let u = a.u32;
    let t = cx.opts.tables.as_ref()?;
    let info = &cx.facts.info;
    let g = t.input;
    let by_rank = !matches!(info.launch, LaunchMode::BroadcastDynamic { .. });
    let own_records = info.input.is_some() && info.shares_input_with.is_none();
    if t.homes == 0 || !by_rank || !own_records || g.frameless || g.stride == 0 || g.per_frame == 0 {
        return None;
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
    Some(words)
}
