//! Emitting code: the ABI struct declarations (mirroring `abi::spirv_layout`)
//! and a small builder for straight-line code and structured blocks that the
//! passes use to write prologues and helper functions.

use crate::abi::{spirv_layout as L, Field};
use crate::ir::{id, inst, lit, Ir};
use rspirv::dr::{Block, Instruction, Operand};
use spirv::{Decoration, MemoryAccess, Op, StorageClass, Word};

/// Ids of the ABI types in the module being lowered (the struct ids are
/// kept for debugging even where only their pointer types are used).
#[derive(Debug, Clone, Copy)]
#[allow(dead_code)]
pub struct Abi {
    pub void: Word,
    pub bool_: Word,
    pub u32: Word,
    pub u64: Word,
    pub v3: Word,
    pub p_u32: Word,
    pub p_u64: Word,
    pub p_v3: Word,
    pub dispatch: Word,
    pub p_dispatch: Word,
    pub entry: Word,
    pub p_entry: Word,
    pub ctx: Word,
    pub p_ctx: Word,
    pub link: Word,
    pub p_link: Word,
    pub node: Word,
    pub p_node: Word,
    pub schedule: Word,
    pub p_schedule: Word,
}

/// An ABI struct: its SPIR-V id and member table.
#[derive(Debug, Clone, Copy)]
pub struct Struct {
    pub fields: &'static [(Field, u32)],
}

impl Abi {
    pub fn declare(ir: &mut Ir) -> Abi {
        let void = ir.t_void();
        let bool_ = ir.t_bool();
        let u32 = ir.t_u32();
        let u64 = ir.t_u64();
        let v3 = ir.t_v3u32();
        let psb = StorageClass::PhysicalStorageBuffer;
        let p_u32 = ir.t_ptr(psb, u32, Some(4));
        let p_u64 = ir.t_ptr(psb, u64, Some(8));
        let p_v3 = ir.t_ptr(psb, v3, Some(12));
        let decl = |ir: &mut Ir, name: &str, fields: &[(Field, u32)], size: u32| {
            let s = ir.id();
            let members = fields
                .iter()
                .map(|(f, _)| {
                    id(match f {
                        Field::U32 => u32,
                        Field::U64 => u64,
                        Field::U32x3 => v3,
                    })
                })
                .collect();
            ir.m.types_global_values.push(inst(Op::TypeStruct, None, Some(s), members));
            for (k, (_, off)) in fields.iter().enumerate() {
                ir.member_decorate(s, k as u32, Decoration::Offset, vec![lit(*off)]);
            }
            ir.name(s, name);
            let p = ir.t_ptr(psb, s, Some(size));
            (s, p)
        };
        let (dispatch, p_dispatch) = decl(ir, "NodeDispatch", L::NODE_DISPATCH, 64);
        let (entry, p_entry) = decl(ir, "GridEntry", L::GRID_ENTRY, 8);
        let (ctx, p_ctx) = decl(ir, "GraphContext", L::GRAPH_CONTEXT, 168);
        let (link, p_link) = decl(ir, "OutputLink", L::OUTPUT_LINK, 16);
        let (node, p_node) = decl(ir, "NodeInfo", L::NODE_INFO, 16);
        let (schedule, p_schedule) = decl(ir, "NodeSchedule", L::NODE_SCHEDULE, 64);
        Abi {
            void,
            bool_,
            u32,
            u64,
            v3,
            p_u32,
            p_u64,
            p_v3,
            dispatch,
            p_dispatch,
            entry,
            p_entry,
            ctx,
            p_ctx,
            link,
            p_link,
            node,
            p_node,
            schedule,
            p_schedule,
        }
    }

    pub fn s_dispatch(&self) -> Struct {
        Struct { fields: L::NODE_DISPATCH }
    }
    pub fn s_entry(&self) -> Struct {
        Struct { fields: L::GRID_ENTRY }
    }
    pub fn s_ctx(&self) -> Struct {
        Struct { fields: L::GRAPH_CONTEXT }
    }
    pub fn s_link(&self) -> Struct {
        Struct { fields: L::OUTPUT_LINK }
    }
    pub fn s_node(&self) -> Struct {
        Struct { fields: L::NODE_INFO }
    }
    pub fn s_schedule(&self) -> Struct {
        Struct { fields: L::NODE_SCHEDULE }
    }
}

/// Field indices, named after `abi`'s struct fields.
pub mod f {
    pub const D_INDIRECT: u32 = 0;
    pub const D_WORKGROUP_COUNT: u32 = 1;
    pub const D_RECORD_COUNT: u32 = 2;
    pub const D_WORKGROUP_BASE: u32 = 3;
    pub const D_LEVEL_WORKGROUPS: u32 = 4;
    pub const D_MODE: u32 = 5;
    pub const D_KEY_NODE: u32 = 6;
    pub const D_STATUS_IN: u32 = 7;
    pub const D_RECORDS: u32 = 8;
    pub const D_STARTS: u32 = 9;
    pub const D_STATUS: u32 = 10;
    pub const E_START: u32 = 0;
    pub const E_RANK: u32 = 1;
    pub const C_POOL: u32 = 0;
    pub const C_KEYS: u32 = 1;
    pub const C_FRAME_COUNT: u32 = 2;
    pub const C_FRAME_SHIFT: u32 = 3;
    pub const C_NODE_COUNT: u32 = 4;
    pub const C_TAG: u32 = 5;
    pub const C_RANK_COUNTS: u32 = 6; // + parity
    pub const C_GRID_COUNTS: u32 = 8; // + parity
    pub const C_DISPATCHES: u32 = 10; // + parity
    pub const C_SCHEDULES: u32 = 12;
    pub const C_LINKS: u32 = 13;
    pub const C_NODES: u32 = 14;
    pub const C_SINK: u32 = 15;
    pub const C_STATUS: u32 = 16; // + parity
    pub const C_DONE: u32 = 18; // + parity
    pub const C_CARRIED: u32 = 20;
    pub const C_HOMES: u32 = 21;
    pub const C_DONE_GROUPS: u32 = 22;
    pub const C_CLAIMED: u32 = 24; // + parity
    pub const C_PINNED: u32 = 26;
    pub const L_SLOTS: u32 = 0;
    pub const L_SLOT_COUNT: u32 = 1;
    pub const N_FIRST_LINK: u32 = 0;
    pub const N_MAX_RECURSION: u32 = 1;
    pub const N_SHADER_INDEX: u32 = 3;
    pub const SC_MODE: u32 = 0;
    pub const SC_PER_WORKGROUP: u32 = 1;
    pub const SC_STATIC_GROUPS: u32 = 2;
    pub const SC_GRID_OFFSET: u32 = 3;
    pub const SC_GRID_BYTES: u32 = 4;
    pub const SC_GRID_COMPONENTS: u32 = 5;
    pub const SC_INPUT_STRIDE: u32 = 6;
    pub const SC_SHARE_BASE: u32 = 7;
    pub const SC_FLAGS: u32 = 8;
    pub const SC_PER_FRAME: u32 = 9;
    pub const SC_TAIL: u32 = 10;
    pub const SC_MAX_GRID: u32 = 12; // + dimension
}

/// Labels of a loop being built (see [`Body::begin_loop`]).
#[derive(Debug, Clone, Copy)]
pub struct LoopLabels {
    pub header: Word,
    pub body: Word,
    pub cont: Word,
    pub merge: Word,
}

/// Builds a sequence of blocks.
pub struct Body {
    pub blocks: Vec<Block>,
    cur: Option<Block>,
}

impl Body {
    /// Starts with a block labelled `label`.
    pub fn new(label: Word) -> Body {
        let mut b = Block::new();
        b.label = Some(inst(Op::Label, None, Some(label), vec![]));
        Body { blocks: vec![], cur: Some(b) }
    }

    pub fn push(&mut self, i: Instruction) {
        if let Some(b) = self.cur.as_mut() {
            b.instructions.push(i);
        }
    }

    /// Emits `op` with a fresh result id.
    pub fn op(&mut self, ir: &mut Ir, op: Op, ty: Word, ops: Vec<Operand>) -> Word {
        let r = ir.id();
        self.push(inst(op, Some(ty), Some(r), ops));
        r
    }

    /// Ends the current block with `term` and opens `next` (if any).
    pub fn end(&mut self, term: Instruction, next: Option<Word>) {
        if let Some(mut b) = self.cur.take() {
            b.instructions.push(term);
            self.blocks.push(b);
        }
        if let Some(l) = next {
            let mut b = Block::new();
            b.label = Some(inst(Op::Label, None, Some(l), vec![]));
            self.cur = Some(b);
        }
    }

    /// `if cond { then } ` as a selection: returns (then label, merge label);
    /// the caller is left in the then block and must call `end_if`.
    pub fn begin_if(&mut self, ir: &mut Ir, cond: Word) -> Word {
        self.begin_if_with(ir, cond, spirv::SelectionControl::NONE)
    }

    /// [`Self::begin_if`] for a branch almost never taken (a fault): marked
    /// `DontFlatten`, so that a driver does not turn it into predicated
    /// code that every invocation issues.
    pub fn begin_if_rare(&mut self, ir: &mut Ir, cond: Word) -> Word {
        self.begin_if_with(ir, cond, spirv::SelectionControl::DONT_FLATTEN)
    }

    fn begin_if_with(&mut self, ir: &mut Ir, cond: Word, control: spirv::SelectionControl) -> Word {
        let t = ir.id();
        let m = ir.id();
        self.push(inst(Op::SelectionMerge, None, None, vec![id(m), Operand::SelectionControl(control)]));
        self.end(inst(Op::BranchConditional, None, None, vec![id(cond), id(t), id(m)]), Some(t));
        m
    }

    pub fn end_if(&mut self, merge: Word) {
        self.end(inst(Op::Branch, None, None, vec![id(merge)]), Some(merge));
    }

    /// Pointer to field `k` of the ABI struct behind `base`.
    pub fn field_ptr(&mut self, ir: &mut Ir, abi: &Abi, s: Struct, base: Word, k: u32) -> Word {
        let pt = match s.fields.get(k as usize).map(|x| x.0) {
            Some(Field::U64) => abi.p_u64,
            Some(Field::U32x3) => abi.p_v3,
            _ => abi.p_u32,
        };
        let c = ir.c_u32(k);
        self.op(ir, Op::AccessChain, pt, vec![id(base), id(c)])
    }

    /// Loads field `k` of the ABI struct behind `base`.
    pub fn load_field(&mut self, ir: &mut Ir, abi: &Abi, s: Struct, base: Word, k: u32) -> Word {
        let (ty, align) = match s.fields.get(k as usize).map(|x| x.0) {
            Some(Field::U64) => (abi.u64, 8),
            Some(Field::U32x3) => (abi.v3, 4),
            _ => (abi.u32, 4),
        };
        let p = self.field_ptr(ir, abi, s, base, k);
        self.load(ir, ty, p, align)
    }

    pub fn load(&mut self, ir: &mut Ir, ty: Word, p: Word, align: u32) -> Word {
        self.op(ir, Op::Load, ty, vec![id(p), Operand::MemoryAccess(MemoryAccess::ALIGNED), lit(align)])
    }

    pub fn store(&mut self, p: Word, v: Word, align: u32) {
        self.push(inst(
            Op::Store,
            None,
            None,
            vec![id(p), id(v), Operand::MemoryAccess(MemoryAccess::ALIGNED), lit(align)],
        ));
    }

    pub fn store_plain(&mut self, p: Word, v: Word) {
        self.push(inst(Op::Store, None, None, vec![id(p), id(v)]));
    }

    /// `u64 address -> PSB pointer`.
    pub fn addr_ptr(&mut self, ir: &mut Ir, ptr_ty: Word, addr: Word) -> Word {
        self.op(ir, Op::ConvertUToPtr, ptr_ty, vec![id(addr)])
    }

    /// Element `i` of a PSB array pointer (ArrayStride on its type).
    pub fn elem(&mut self, ir: &mut Ir, ptr_ty: Word, base: Word, i: Word) -> Word {
        self.op(ir, Op::PtrAccessChain, ptr_ty, vec![id(base), id(i)])
    }

    /// Binary op on u32 values.
    pub fn bin(&mut self, ir: &mut Ir, op: Op, ty: Word, a: Word, b: Word) -> Word {
        self.op(ir, op, ty, vec![id(a), id(b)])
    }

    /// Atomic read-modify-write at Device scope, relaxed.
    pub fn atomic(&mut self, ir: &mut Ir, op: Op, ty: Word, p: Word, v: Word) -> Word {
        let scope = ir.c_u32(spirv::Scope::Device as u32);
        let sem = ir.c_u32(0);
        self.op(ir, op, ty, vec![id(p), id(scope), id(sem), id(v)])
    }

    /// Atomic at Device scope with the given memory semantics.
    pub fn atomic_sem(&mut self, ir: &mut Ir, op: Op, ty: Word, p: Word, v: Word, semantics: u32) -> Word {
        let scope = ir.c_u32(spirv::Scope::Device as u32);
        let sem = ir.c_u32(semantics);
        self.op(ir, op, ty, vec![id(p), id(scope), id(sem), id(v)])
    }

    /// `OpAtomicLoad` at Device scope, relaxed.
    pub fn atomic_load(&mut self, ir: &mut Ir, ty: Word, p: Word) -> Word {
        let scope = ir.c_u32(spirv::Scope::Device as u32);
        let sem = ir.c_u32(0);
        self.op(ir, Op::AtomicLoad, ty, vec![id(p), id(scope), id(sem)])
    }

    /// `OpAtomicCompareExchange` at Device scope, relaxed: returns the old value.
    pub fn atomic_cas(&mut self, ir: &mut Ir, ty: Word, p: Word, value: Word, comparator: Word) -> Word {
        let scope = ir.c_u32(spirv::Scope::Device as u32);
        let sem = ir.c_u32(0);
        self.op(ir, Op::AtomicCompareExchange, ty, vec![id(p), id(scope), id(sem), id(sem), id(value), id(comparator)])
    }

    /// `cond ? a : b`.
    pub fn select(&mut self, ir: &mut Ir, ty: Word, cond: Word, a: Word, b: Word) -> Word {
        self.op(ir, Op::Select, ty, vec![id(cond), id(a), id(b)])
    }

    /// Opens a loop: the header (with its `OpLoopMerge`) branches to a
    /// condition block, where the builder is left; continue with
    /// [`Self::loop_test`], the body, then [`Self::end_loop`].
    pub fn begin_loop(&mut self, ir: &mut Ir) -> LoopLabels {
        let (header, cond, body, cont, merge) = (ir.id(), ir.id(), ir.id(), ir.id(), ir.id());
        self.end(inst(Op::Branch, None, None, vec![id(header)]), Some(header));
        self.push(inst(
            Op::LoopMerge,
            None,
            None,
            vec![id(merge), id(cont), Operand::LoopControl(spirv::LoopControl::NONE)],
        ));
        self.end(inst(Op::Branch, None, None, vec![id(cond)]), Some(cond));
        LoopLabels { header, body, cont, merge }
    }

    /// Ends the condition block: the body runs while `cond` holds.
    pub fn loop_test(&mut self, lp: &LoopLabels, cond: Word) {
        self.end(inst(Op::BranchConditional, None, None, vec![id(cond), id(lp.body), id(lp.merge)]), Some(lp.body));
    }

    /// Ends the body (through the continue block back to the header) and
    /// leaves the builder after the loop.
    pub fn end_loop(&mut self, lp: &LoopLabels) {
        self.end(inst(Op::Branch, None, None, vec![id(lp.cont)]), Some(lp.cont));
        self.end(inst(Op::Branch, None, None, vec![id(lp.header)]), Some(lp.merge));
    }

    /// A `Function` variable of type `ty` (declared at the function's start),
    /// initialised here to `init`.
    pub fn local(&mut self, ir: &mut Ir, ty: Word, init: Word) -> Word {
        let pt = ir.t_ptr(StorageClass::Function, ty, None);
        let v = ir.id();
        self.blocks_first_var(inst(
            Op::Variable,
            Some(pt),
            Some(v),
            vec![Operand::StorageClass(StorageClass::Function)],
        ));
        self.store_plain(v, init);
        v
    }

    /// `OpControlBarrier` Workgroup/Workgroup with acquire-release of workgroup memory.
    pub fn workgroup_barrier(&mut self, ir: &mut Ir) {
        let wg = ir.c_u32(spirv::Scope::Workgroup as u32);
        let sem = ir.c_u32(0x8 | 0x100); // AcquireRelease | WorkgroupMemory
        self.push(inst(Op::ControlBarrier, None, None, vec![id(wg), id(wg), id(sem)]));
    }

    /// Adds an `OpVariable` at the start of the function's first block.
    pub fn blocks_first_var(&mut self, v: Instruction) {
        match self.blocks.first_mut() {
            Some(b) => b.instructions.insert(0, v),
            None => {
                if let Some(b) = self.cur.as_mut() {
                    b.instructions.insert(0, v);
                }
            }
        }
    }

    /// Finishes and returns the blocks (the current block must be closed).
    pub fn finish(mut self) -> Vec<Block> {
        if let Some(b) = self.cur.take() {
            self.blocks.push(b);
        }
        self.blocks
    }
}
