//! The `phase_clock` diagnostic (`LowerOptions::phase_clock`): where a
//! level's time goes inside its workgroups, which no timestamp query can
//! see. Invocation 0 of every workgroup reads its SM's cycle counter
//! (`OpReadClockKHR` at Subgroup scope, `SPV_KHR_shader_clock`) when the
//! workgroup starts and at each [`Phase`], and adds the cycles since the
//! start, and 1, to the (level, phase) slot of the graph's table (layout in
//! `abi::PHASE_LEVELS`), with atomics whose results nobody waits for. Only
//! some workgroups are timed ([`TIMED_ALL_BELOW`]), so that a level of a
//! million workgroups does not queue on the table's few words; the
//! finisher is timed wherever it runs.
//!
//! Matches: nothing. Emits, only with the option: the capability, the
//! extension and two Private variables (the start and the level), the
//! start's read (prologue) and a mark per phase (prologue and epilogue).
//! Without it, nothing, so that kernels stay as they are.

use super::context::Ctx;
use crate::abi::{Phase, PHASE_LEVELS, PHASE_SLOTS};
use crate::codegen::{Abi, Body};
use crate::ir::{id, inst, Ir};
use rspirv::dr::Operand;
use spirv::{Capability, Op, Scope, StorageClass, Word};

/// Workgroups timed: those whose `WorkgroupId.x` is below this, and every
/// one whose `WorkgroupId.x` is a multiple of it (all of a small level's;
/// about one in 64 of a wide one's).
pub const TIMED_ALL_BELOW: u32 = 64;

/// The variables a kernel keeps its start in, and the table's address.
#[derive(Clone, Copy, Debug)]
pub struct PhaseVars {
    /// `u64`: the clock when the workgroup started (invocation 0's).
    start: Word,
    /// `u32`: the level.
    level: Word,
    /// `bool`: this workgroup is timed.
    timed: Word,
    table: u64,
}

impl PhaseVars {
    /// Declares them, with the capability and extension the clock needs,
    /// where the options ask for the diagnostic.
    pub fn declare(ir: &mut Ir, abi: &Abi, table: Option<u64>) -> Option<PhaseVars> {
        let table = table?;
        ir.require_capability(Capability::ShaderClockKHR);
        let ext = "SPV_KHR_shader_clock";
        let listed =
            ir.m.extensions.iter().any(|e| matches!(e.operands.first(), Some(Operand::LiteralString(s)) if s == ext));
        if !listed {
            ir.m.extensions.push(inst(Op::Extension, None, None, vec![ext.into()]));
        }
        Some(PhaseVars {
            start: ir.global_var(StorageClass::Private, abi.u64, "node_phase_start"),
            level: ir.global_var(StorageClass::Private, abi.u32, "node_phase_level"),
            timed: ir.global_var(StorageClass::Private, abi.bool_, "node_phase_timed"),
            table,
        })
    }
}

/// The SM's cycle counter.
fn clock(ir: &mut Ir, cx: &Ctx, b: &mut Body) -> Word {
    let subgroup = ir.c_u32(Scope::Subgroup as u32);
    b.op(ir, Op::ReadClockKHR, cx.abi.u64, vec![id(subgroup)])
}

/// The workgroup's start, at level `level` (the kernel's first step).
pub fn start(ir: &mut Ir, cx: &Ctx, b: &mut Body, level: Word) {
    let Some(v) = cx.phases else { return };
    let now = clock(ir, cx, b);
    b.store_plain(v.start, now);
    b.store_plain(v.level, level);
    let a = cx.abi;
    let wg = b.op(ir, Op::Load, a.v3, vec![id(cx.real.wg)]);
    let x = b.op(ir, Op::CompositeExtract, a.u32, vec![id(wg), Operand::LiteralBit32(0)]);
    let below = ir.c_u32(TIMED_ALL_BELOW);
    let first = b.bin(ir, Op::ULessThan, a.bool_, x, below);
    let mask = ir.c_u32(TIMED_ALL_BELOW - 1);
    let low = b.bin(ir, Op::BitwiseAnd, a.u32, x, mask);
    let zero = ir.c_u32(0);
    let multiple = b.bin(ir, Op::IEqual, a.bool_, low, zero);
    let timed = b.bin(ir, Op::LogicalOr, a.bool_, first, multiple);
    b.store_plain(v.timed, timed);
}

/// Adds the cycles since the workgroup's start to `phase`'s slot (by
/// invocation 0 of a timed workgroup, or of the finisher's; every
/// invocation may call it).
pub fn mark(ir: &mut Ir, cx: &Ctx, b: &mut Body, phase: Phase) {
    let Some(v) = cx.phases else { return };
    let a = cx.abi;
    let u = a.u32;
    let now = clock(ir, cx, b);
    let start = b.op(ir, Op::Load, a.u64, vec![id(v.start)]);
    let cycles = b.bin(ir, Op::ISub, a.u64, now, start);
    let lidx = b.op(ir, Op::Load, u, vec![id(cx.real.lidx)]);
    let zero = ir.c_u32(0);
    let mut first = b.bin(ir, Op::IEqual, a.bool_, lidx, zero);
    if !matches!(phase, Phase::FinisherStart | Phase::FinisherEnd) {
        let timed = b.op(ir, Op::Load, a.bool_, vec![id(v.timed)]);
        first = b.bin(ir, Op::LogicalAnd, a.bool_, first, timed);
    }
    let m = b.begin_if(ir, first);
    let level = b.op(ir, Op::Load, u, vec![id(v.level)]);
    let last = ir.c_u32(PHASE_LEVELS - 1);
    let past = b.bin(ir, Op::UGreaterThan, a.bool_, level, last);
    let level = b.select(ir, u, past, last, level);
    let slots = ir.c_u32(PHASE_SLOTS);
    let slot = b.bin(ir, Op::IMul, u, level, slots);
    let phase = ir.c_u32(phase as u32);
    let slot = b.bin(ir, Op::IAdd, u, slot, phase);
    let two = ir.c_u32(2);
    let word = b.bin(ir, Op::IMul, u, slot, two);
    let table = ir.c_u64(v.table);
    let table = b.addr_ptr(ir, a.p_u64, table);
    let sum = b.elem(ir, a.p_u64, table, word);
    b.atomic(ir, Op::AtomicIAdd, a.u64, sum, cycles);
    let one = ir.c_u32(1);
    let next = b.bin(ir, Op::IAdd, u, word, one);
    let count = b.elem(ir, a.p_u64, table, next);
    let one64 = ir.c_u64(1);
    b.atomic(ir, Op::AtomicIAdd, a.u64, count, one64);
    b.end_if(m);
}
