//! The target of an output's array index: its slot, whether a node is
//! linked there and the index in range, and the recursion check, read from
//! the graph's tables or, lowered against the linked graph, from constants.
//! Allocation and the validity query share it.

use super::helpers::targets;
use crate::abi::NO_NODE;
use crate::codegen::{f, Body};
use crate::ir::{id, Ir};
use crate::options::{GraphTables, OutputTargets};
use crate::passes::context::Ctx;
use crate::runtime;
use spirv::{Op, Word};

/// Target lookup shared by allocation and validity.
pub(super) struct Lookup {
    /// Target slot (garbage unless `present`).
    pub slot: Word,
    /// Index in range and a node linked there.
    pub present: Word,
    /// The target is this node (self-recursion).
    pub is_self: Word,
    /// Not self, or recursion levels left.
    pub rec_ok: Word,
    /// Pointer to `NodeInfo[0]`.
    pub nodes: Word,
}

pub(super) fn lookup(ir: &mut Ir, cx: &Ctx, b: &mut Body, k: usize, nidx: Word, push: &runtime::Push) -> Lookup {
    let o = cx.facts.info.outputs.get(k).cloned();
    let base = o.as_ref().map(|o| o.base_index).unwrap_or(0);
    if let Some((tables, targets)) = targets(cx, k) {
        return lookup_linked(ir, cx, b, tables, targets, base, nidx, push);
    }
    let a = cx.abi;
    let ctx = push.ctx;
    let self_slot = push.slot;
    let nodes_addr = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_NODES);
    let nodes = b.addr_ptr(ir, a.p_node, nodes_addr);
    let me = b.elem(ir, a.p_node, nodes, self_slot);
    let first = b.load_field(ir, &a, a.s_node(), me, f::N_FIRST_LINK);
    let kc = ir.c_u32(k as u32);
    let li = b.bin(ir, Op::IAdd, a.u32, first, kc);
    let links_addr = b.load_field(ir, &a, a.s_ctx(), ctx, f::C_LINKS);
    let links = b.addr_ptr(ir, a.p_link, links_addr);
    let link = b.elem(ir, a.p_link, links, li);
    let slots_addr = b.load_field(ir, &a, a.s_link(), link, f::L_SLOTS);
    let slots = b.addr_ptr(ir, a.p_u32, slots_addr);
    let n = b.load_field(ir, &a, a.s_link(), link, f::L_SLOT_COUNT);
    let (ci, inr) = array_slot(ir, cx, b, nidx, base, n);
    let sp = b.elem(ir, a.p_u32, slots, ci);
    let slot = b.load(ir, a.u32, sp, 4);
    let none = ir.c_u32(NO_NODE);
    let has = b.bin(ir, Op::INotEqual, a.bool_, slot, none);
    let present = b.bin(ir, Op::LogicalAnd, a.bool_, inr, has);
    let (is_self, rec_ok) = recursion_check(ir, cx, b, slot, self_slot);
    Lookup { slot, present, is_self, rec_ok, nodes }
}

/// Index `nidx` of an output array from `base` among its `n` slot-table
/// entries: (the entry, 0 when out of range; `bool` in range). The sum is
/// checked for wrapping: index 0xFFFFFFFF from base 1 is past the array,
/// not entry 0.
pub(super) fn array_slot(ir: &mut Ir, cx: &Ctx, b: &mut Body, nidx: Word, base: u32, n: Word) -> (Word, Word) {
    let a = cx.abi;
    let basec = ir.c_u32(base);
    let i = b.bin(ir, Op::IAdd, a.u32, nidx, basec);
    let below = b.bin(ir, Op::ULessThan, a.bool_, i, n);
    let unwrapped = b.bin(ir, Op::UGreaterThanEqual, a.bool_, i, nidx);
    let inr = b.bin(ir, Op::LogicalAnd, a.bool_, below, unwrapped);
    let zero = ir.c_u32(0);
    (b.select(ir, a.u32, inr, i, zero), inr)
}

/// Whether `slot` is the node itself, and whether that leaves it allowed.
fn recursion_check(ir: &mut Ir, cx: &Ctx, b: &mut Body, slot: Word, self_slot: Word) -> (Word, Word) {
    let a = cx.abi;
    let zero = ir.c_u32(0);
    let is_self = b.bin(ir, Op::IEqual, a.bool_, slot, self_slot);
    let rem = b.op(ir, Op::Load, a.u32, vec![id(cx.vars.remaining)]);
    let left = b.bin(ir, Op::UGreaterThan, a.bool_, rem, zero);
    let not_self = b.op(ir, Op::LogicalNot, a.bool_, vec![id(is_self)]);
    let rec_ok = b.bin(ir, Op::LogicalOr, a.bool_, not_self, left);
    (is_self, rec_ok)
}

/// [`lookup`] for a kernel lowered against its linked graph: the output's
/// slot table at a known offset from the context (one load), or no load at
/// all when the targets are consecutive slots.
#[allow(clippy::too_many_arguments)]
fn lookup_linked(
    ir: &mut Ir,
    cx: &Ctx,
    b: &mut Body,
    tables: &GraphTables,
    targets: &OutputTargets,
    base: u32,
    nidx: Word,
    push: &runtime::Push,
) -> Lookup {
    let a = cx.abi;
    let ctx_addr = b.op(ir, Op::ConvertPtrToU, a.u64, vec![id(push.ctx)]);
    let n = ir.c_u32(targets.slots.len() as u32);
    let (ci, inr) = array_slot(ir, cx, b, nidx, base, n);
    let none = ir.c_u32(NO_NODE);
    let (slot, has) = match targets.consecutive() {
        Some(first) => {
            let first = ir.c_u32(first);
            (b.bin(ir, Op::IAdd, a.u32, first, ci), ir.c_bool(true))
        }
        None => {
            let four = ir.c_u32(4);
            let at = b.bin(ir, Op::IMul, a.u32, ci, four);
            let at = b.op(ir, Op::UConvert, a.u64, vec![id(at)]);
            let table = ir.c_u64(targets.table);
            let addr = b.bin(ir, Op::IAdd, a.u64, ctx_addr, table);
            let addr = b.bin(ir, Op::IAdd, a.u64, addr, at);
            let p = b.addr_ptr(ir, a.p_u32, addr);
            let slot = b.load(ir, a.u32, p, 4);
            (slot, b.bin(ir, Op::INotEqual, a.bool_, slot, none))
        }
    };
    let present = b.bin(ir, Op::LogicalAnd, a.bool_, inr, has);
    let (is_self, rec_ok) = recursion_check(ir, cx, b, slot, push.slot);
    let nodes = ir.c_u64(tables.nodes);
    let nodes = b.bin(ir, Op::IAdd, a.u64, ctx_addr, nodes);
    let nodes = b.addr_ptr(ir, a.p_node, nodes);
    Lookup { slot, present, is_self, rec_ok, nodes }
}
