//! Payload storage: `NodePayloadAMDX` -> `PhysicalStorageBuffer`.
//!
//! Matches: every `OpTypePointer NodePayloadAMDX`, the input payload variable,
//! and every access chain whose base is a payload array pointer.
//! Emits:
//! * output array pointers retyped in place (ids kept, so function types,
//!   parameters and phis stay valid) to a pointer to their first record
//!   (ArrayStride = record stride); any other payload pointer (a record, a
//!   member) becomes a PSB pointer to the same pointee;
//! * the input array pointer type replaced by `u32` everywhere: there is one
//!   input per node, so its handle carries no information (its value is 0);
//!   the input variable's uses become that 0;
//! * a plain-struct input (no payload array) becomes a `Private` variable
//!   holding the record's PSB pointer (the prologue stores it);
//! * `OpAccessChain in[i] rest` -> `node_input_payload(i)` (the address of the
//!   workgroup's record i, gathered by the prologue), converted to a record
//!   pointer, then `OpAccessChain rest`; `OpAccessChain out[i] rest` ->
//!   `OpPtrAccessChain out i rest`; `OpPtrAccessChain a e i rest` on either
//!   uses index `e + i` (stepping whole arrays is meaningless for unsized
//!   payload arrays).
//!
//! Afterwards no `NodePayloadAMDX` storage class is left in code, and
//! [`InputLowering`] says where the prologue puts the input addresses.

use super::context::Ctx;
use super::status;
use crate::analyze::record_stride;
use crate::codegen::Body;
use crate::consts::eval;
use crate::error::LowerError;
use crate::ir::{id, inst, map_operand_ids, op_id, Ir};
use crate::layout::{scalar_align, size_of};
use rspirv::dr::{Function, Instruction, Operand};
use spirv::{Decoration, FunctionControl, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// How the input payload is reached after this pass.
#[derive(Debug, Clone, Copy)]
pub struct InputLowering {
    /// Plain-struct input: the `Private` variable holding its record pointer.
    pub holder: Option<Word>,
    /// Its type (the record pointer).
    pub ptr_type: Word,
    /// Array input: where the prologue puts the payload addresses of the
    /// workgroup's records (`Private u64` for one record, a `Workgroup`
    /// `u64` array for coalescing nodes).
    pub addresses: Option<Word>,
    /// Records a workgroup (or a packed lane) reads: the array's length.
    pub per_workgroup: u32,
    /// `node_input_payload(u32) -> u64`, when the code indexes the input.
    pub address_fn: Option<Word>,
}

/// `checked_payloads`: per output `k`, the id of
/// `node_output{k}_record_index(u32 index, u64 record0) -> u32` that its
/// record accesses call; `node_ops` defines them (it knows the allocations).
pub type RecordIndexFns = Vec<(usize, Word)>;

pub fn run(ir: &mut Ir, cx: &Ctx) -> Result<(InputLowering, RecordIndexFns), LowerError> {
    let spec = &cx.opts.specialization;
    let psb = StorageClass::PhysicalStorageBuffer;
    let mut input_ptrs: HashSet<Word> = HashSet::new();
    let mut output_ptrs: HashMap<Word, Word> = HashMap::new(); // array ptr type -> array type
    let mut rec_of: HashMap<Word, Word> = HashMap::new(); // array ptr type -> record type
    let mut retypes: Vec<(Word, Word, Option<u32>)> = vec![]; // (ptr type, new pointee, stride)
    for i in &ir.m.types_global_values {
        if i.class.opcode != Op::TypePointer
            || !matches!(i.operands.first(), Some(Operand::StorageClass(StorageClass::NodePayloadAMDX)))
        {
            continue;
        }
        let (Some(t), Some(pointee)) = (i.result_id, op_id(i, 1)) else { continue };
        let pdef = ir.global(pointee);
        let stride_of = |s: Word| {
            let size = size_of(ir, spec, s)?;
            record_stride(size, scalar_align(ir, s), ir.has_decoration(s, Decoration::TrackFinishWritingAMDX))
        };
        if pdef.is_some_and(|d| d.class.opcode == Op::TypeNodePayloadArrayAMDX) {
            let elem = pdef.and_then(|d| op_id(d, 0)).unwrap_or(0);
            rec_of.insert(t, elem);
            if Some(pointee) == cx.facts.input_array_type {
                input_ptrs.insert(t);
            } else {
                output_ptrs.insert(t, pointee);
                retypes.push((t, elem, stride_of(elem)));
            }
        } else {
            let is_struct = pdef.is_some_and(|d| d.class.opcode == Op::TypeStruct);
            let stride = if is_struct { stride_of(pointee) } else { size_of(ir, spec, pointee).filter(|s| *s > 0) };
            retypes.push((t, pointee, stride));
        }
    }
    for (t, pointee, stride) in &retypes {
        if let Some(i) = ir.m.types_global_values.iter_mut().find(|i| i.result_id == Some(*t)) {
            i.operands = vec![Operand::StorageClass(psb), id(*pointee)];
        }
        // The application may already give the stride (it must equal the record size).
        if let (Some(s), false) = (stride, ir.has_decoration(*t, Decoration::ArrayStride)) {
            ir.decorate(*t, Decoration::ArrayStride, vec![crate::ir::lit(*s)]);
        }
    }
    // Record pointer types of the input (records are reached one by one).
    let mut in_rec_ptr: HashMap<Word, Word> = HashMap::new();
    for t in &input_ptrs {
        let elem = rec_of.get(t).copied().unwrap_or(0);
        let size = size_of(ir, spec, elem).unwrap_or(0);
        let stride = record_stride(size, scalar_align(ir, elem), false).unwrap_or(4);
        let p = ir.t_ptr(psb, elem, Some(stride));
        in_rec_ptr.insert(*t, p);
    }

    let plain = cx.facts.input_var.is_some() && cx.facts.input_array_type.is_none();
    let ptr_type = cx.facts.input_ptr_type.unwrap_or(cx.abi.p_u32);
    let mut holder = None;
    if let (Some(v), true) = (cx.facts.input_var, plain) {
        holder = Some(plain_holder(ir, v, ptr_type));
    }
    // Chains on payload arrays (input and outputs); the types still name the
    // input array pointer here, so the map is taken before it goes.
    let types = ir.type_map();
    let per_workgroup = match cx.facts.info.launch {
        crate::analyze::LaunchMode::Coalescing { max_payloads } => max_payloads,
        _ => 1,
    };
    let mut addresses = None;
    let mut address_fn = None;
    if !input_ptrs.is_empty() || cx.facts.input_array_type.is_some() {
        let u64t = cx.abi.u64;
        let var = if per_workgroup > 1 {
            let len = ir.c_u32(per_workgroup);
            let arr = ir.id();
            ir.m.types_global_values.push(inst(Op::TypeArray, None, Some(arr), vec![id(u64t), id(len)]));
            ir.global_var(StorageClass::Workgroup, arr, "node_input_payloads")
        } else {
            ir.global_var(StorageClass::Private, u64t, "node_input_payload")
        };
        addresses = Some(var);
        address_fn = Some(address_function(ir, cx, var, per_workgroup));
    }
    let outputs = OutputIndexes::new(ir, cx, &output_ptrs);
    rewrite_chains(ir, cx, &types, &input_ptrs, &outputs, &in_rec_ptr, address_fn)?;
    let record_index_fns = outputs.checked.into_iter().collect();
    // The input array handle carries nothing: its type becomes u32 and the
    // variable's uses the constant 0.
    if !input_ptrs.is_empty() {
        let u32t = cx.abi.u32;
        let zero = ir.c_u32(0);
        let swap = |w: Word| if input_ptrs.contains(&w) { u32t } else { w };
        for i in ir.m.types_global_values.iter_mut() {
            if i.result_id.is_some_and(|r| input_ptrs.contains(&r)) {
                continue;
            }
            i.result_type = i.result_type.map(swap);
            map_operand_ids(i, &swap);
        }
        let var = cx.facts.input_var.filter(|_| !plain);
        for f in &mut ir.m.functions {
            if let Some(d) = f.def.as_mut() {
                d.result_type = d.result_type.map(swap);
            }
            for p in &mut f.parameters {
                p.result_type = p.result_type.map(swap);
            }
            for i in f.blocks.iter_mut().flat_map(|b| b.instructions.iter_mut()) {
                i.result_type = i.result_type.map(swap);
                map_operand_ids(i, &|w| if Some(w) == var { zero } else { w });
            }
        }
        ir.retain_globals(|i| i.result_id.is_none_or(|r| !input_ptrs.contains(&r)));
        if let Some(v) = var {
            ir.retain_globals(|i| i.result_id != Some(v));
        }
    }
    Ok((InputLowering { holder, ptr_type, addresses, per_workgroup, address_fn }, record_index_fns))
}

/// A plain-struct input variable becomes a `Private` holder of the record
/// pointer; each function that uses it loads it once.
fn plain_holder(ir: &mut Ir, v: Word, ptr_type: Word) -> Word {
    let hp = ir.t_ptr(StorageClass::Private, ptr_type, None);
    if let Some(i) = ir.m.types_global_values.iter_mut().find(|i| i.result_id == Some(v)) {
        i.result_type = Some(hp);
        i.operands = vec![Operand::StorageClass(StorageClass::Private)];
    }
    for fi in 0..ir.m.functions.len() {
        let uses = ir.m.functions.get(fi).is_some_and(|f| {
            f.blocks.iter().flat_map(|b| b.instructions.iter()).any(|i| crate::ir::used_ids(i).any(|u| u == v))
        });
        if !uses {
            continue;
        }
        let loaded = ir.id();
        let Some(f) = ir.m.functions.get_mut(fi) else { continue };
        for i in f.blocks.iter_mut().flat_map(|b| b.instructions.iter_mut()) {
            map_operand_ids(i, &|w| if w == v { loaded } else { w });
        }
        if let Some(b) = f.blocks.first_mut() {
            // After the block's last OpVariable (OpLine may sit between them).
            let at = b.instructions.iter().rposition(|i| i.class.opcode == Op::Variable).map_or(0, |k| k + 1);
            b.instructions.insert(at, inst(Op::Load, Some(ptr_type), Some(loaded), vec![id(v)]));
        }
    }
    v
}

/// `node_input_payload(i) -> u64`: the payload address of the workgroup's
/// (or packed lane's) input record `i`, from where the prologue put them.
fn address_function(ir: &mut Ir, cx: &Ctx, var: Word, per_workgroup: u32) -> Word {
    let a = cx.abi;
    let fty = ir.t_fn(a.u64, &[a.u32]);
    let fid = ir.id();
    let param = ir.id();
    let mut func = Function::new();
    func.def = Some(inst(
        Op::Function,
        Some(a.u64),
        Some(fid),
        vec![Operand::FunctionControl(FunctionControl::NONE), id(fty)],
    ));
    func.parameters.push(inst(Op::FunctionParameter, Some(a.u32), Some(param), vec![]));
    func.end = Some(inst(Op::FunctionEnd, None, None, vec![]));
    let label = ir.id();
    let mut b = Body::new(label);
    let value = if per_workgroup > 1 {
        // Clamp: an index past the records gathered reads the last one (the
        // addresses past them are not written); with `checked_payloads`
        // that is reported.
        let count = b.op(ir, Op::Load, a.u32, vec![id(cx.vars.rec_count)]);
        let (zero, one) = (ir.c_u32(0), ir.c_u32(1));
        let empty = b.bin(ir, Op::IEqual, a.bool_, count, zero);
        let held = b.select(ir, a.u32, empty, one, count);
        let inside = b.bin(ir, Op::ULessThan, a.bool_, param, held);
        let last = b.bin(ir, Op::ISub, a.u32, held, one);
        let i = b.select(ir, a.u32, inside, param, last);
        if cx.opts.checked_payloads {
            let outside = b.op(ir, Op::LogicalNot, a.bool_, vec![id(inside)]);
            status::report_bounds(ir, cx, &mut b, outside, None, [param, count]);
        }
        let pw = ir.t_ptr(StorageClass::Workgroup, a.u64, None);
        let p = b.op(ir, Op::AccessChain, pw, vec![id(var), id(i)]);
        b.op(ir, Op::Load, a.u64, vec![id(p)])
    } else {
        b.op(ir, Op::Load, a.u64, vec![id(var)])
    };
    b.end(inst(Op::ReturnValue, None, None, vec![id(value)]), None);
    func.blocks = b.finish();
    ir.m.functions.push(func);
    ir.name(fid, "node_input_payload");
    fid
}

/// Rewrites access chains whose base is a payload array pointer.
fn rewrite_chains(
    ir: &mut Ir,
    cx: &Ctx,
    types: &crate::ir::IdMap<Word>,
    input_ptrs: &HashSet<Word>,
    outputs: &OutputIndexes,
    in_rec_ptr: &HashMap<Word, Word>,
    address_fn: Option<Word>,
) -> Result<(), LowerError> {
    let spec = &cx.opts.specialization;
    let zero = ir.c_u32(0);
    for fi in 0..ir.m.functions.len() {
        let nblocks = ir.m.functions.get(fi).map(|f| f.blocks.len()).unwrap_or(0);
        for bi in 0..nblocks {
            let old = match ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)) {
                Some(b) => std::mem::take(&mut b.instructions),
                None => continue,
            };
            let mut out: Vec<Instruction> = Vec::with_capacity(old.len());
            for i in old {
                let op = i.class.opcode;
                let is_chain = matches!(op, Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain);
                let base = op_id(&i, 0);
                let bty = base.and_then(|b| types.get(&b)).copied();
                let (Some(base), Some(bty), true) = (base, bty, is_chain) else {
                    out.push(i);
                    continue;
                };
                let is_in = input_ptrs.contains(&bty);
                if !is_in && !outputs.of_type.contains_key(&bty) {
                    out.push(i);
                    continue;
                }
                let mut idx: Vec<Operand> = i.operands.iter().skip(1).cloned().collect();
                // PtrAccessChain: fold the Element operand into the first index.
                if op == Op::PtrAccessChain && idx.len() >= 2 {
                    let e = op_id(&i, 1).unwrap_or(zero);
                    let first = op_id(&i, 2).unwrap_or(zero);
                    if eval(ir, spec, e) != Some(0) {
                        let ity = types.get(&first).copied().unwrap_or(cx.abi.u32);
                        let s = ir.id();
                        out.push(inst(Op::IAdd, Some(ity), Some(s), vec![id(e), id(first)]));
                        idx.splice(0..2, [id(s)]);
                    } else {
                        idx.remove(0);
                    }
                }
                let (Some(rt), Some(rid)) = (i.result_type, i.result_id) else {
                    out.push(i);
                    continue;
                };
                if !is_in {
                    if idx.is_empty() {
                        // A chain with no index is a copy of the pointer.
                        out.push(inst(Op::CopyObject, Some(rt), Some(rid), vec![id(base)]));
                    } else {
                        if let Some(Operand::IdRef(first)) = idx.first().cloned() {
                            let k = outputs.of_type.get(&bty).copied().flatten();
                            if let Some(held) = outputs.held(ir, cx, (types, &mut out), k, [first, base]) {
                                idx[0] = id(held);
                            }
                        }
                        let mut ops = vec![id(base)];
                        ops.extend(idx);
                        out.push(inst(Op::PtrAccessChain, Some(rt), Some(rid), ops));
                    }
                    continue;
                }
                let (Some(f), Some(first)) = (address_fn, idx.first().cloned()) else {
                    return Err(LowerError::Unsupported {
                        entry: cx.entry(),
                        opcode: format!("Op{op:?}"),
                        result_id: Some(rid),
                        detail: "an access chain on the input payload array without an index".into(),
                    });
                };
                idx.remove(0);
                let index = match first {
                    Operand::IdRef(w) => w,
                    _ => zero,
                };
                // The index may be signed or narrower; the helper takes u32.
                let ity = types.get(&index).copied();
                let index = if ity.is_some_and(|t| t != cx.abi.u32) {
                    let c = ir.id();
                    out.push(inst(Op::Bitcast, Some(cx.abi.u32), Some(c), vec![id(index)]));
                    c
                } else {
                    index
                };
                let addr = ir.id();
                out.push(inst(Op::FunctionCall, Some(cx.abi.u64), Some(addr), vec![id(f), id(index)]));
                if idx.is_empty() {
                    out.push(inst(Op::ConvertUToPtr, Some(rt), Some(rid), vec![id(addr)]));
                } else {
                    let rp = in_rec_ptr.get(&bty).copied().unwrap_or(rt);
                    let p = ir.id();
                    out.push(inst(Op::ConvertUToPtr, Some(rp), Some(p), vec![id(addr)]));
                    let mut ops = vec![id(p)];
                    ops.extend(idx);
                    out.push(inst(Op::AccessChain, Some(rt), Some(rid), ops));
                }
            }
            if let Some(b) = ir.m.functions.get_mut(fi).and_then(|f| f.blocks.get_mut(bi)) {
                b.instructions = out;
            }
        }
    }
    Ok(())
}

/// How output record indexes are held inside their allocation: every index
/// to the output's `NodeMaxPayloadsAMDX` less one (so that no write leaves
/// the allocation's frame, or the sink a failed allocation points at), and
/// with `checked_payloads` to the allocation's records through
/// `node_output{k}_record_index`.
struct OutputIndexes {
    /// Output array pointer type -> its output (`None`: not told apart).
    of_type: HashMap<Word, Option<usize>>,
    /// `checked_payloads`: output -> its index function's id.
    checked: HashMap<usize, Word>,
}

impl OutputIndexes {
    /// `output_ptrs`: output array pointer type -> the payload array type.
    fn new(ir: &mut Ir, cx: &Ctx, output_ptrs: &HashMap<Word, Word>) -> OutputIndexes {
        let outputs = &cx.facts.info.outputs;
        let mut of_type = HashMap::new();
        let mut checked = HashMap::new();
        for (&t, &array) in output_ptrs {
            let mut ks = outputs.iter().enumerate().filter(|(_, o)| o.type_id == array).map(|(k, _)| k);
            let k = match (ks.next(), ks.next()) {
                (Some(k), None) => Some(k),
                _ => None,
            };
            if let (Some(k), true) = (k, cx.opts.checked_payloads) {
                checked.entry(k).or_insert_with(|| ir.id());
            }
            of_type.insert(t, k);
        }
        OutputIndexes { of_type, checked }
    }

    /// The instructions (pushed to `out`) that hold record index `first` of
    /// output `k` (`None`: the most of any output) on the allocation at
    /// `base`; `None` where nothing needs holding (a constant index inside).
    fn held(
        &self,
        ir: &mut Ir,
        cx: &Ctx,
        (types, out): (&crate::ir::IdMap<Word>, &mut Vec<Instruction>),
        k: Option<usize>,
        [first, base]: [Word; 2],
    ) -> Option<Word> {
        let a = cx.abi;
        let outputs = &cx.facts.info.outputs;
        let most = match k {
            Some(k) => outputs.get(k).map_or(1, |o| o.max_payloads),
            None => outputs.iter().map(|o| o.max_payloads).max().unwrap_or(1),
        }
        .max(1);
        let constant = eval(ir, &cx.opts.specialization, first);
        if constant.is_some_and(|c| c < u64::from(most)) {
            return None;
        }
        let index = as_u32(ir, cx, types, out, first);
        if let Some(f) = k.and_then(|k| self.checked.get(&k)) {
            let (addr, r) = (ir.id(), ir.id());
            out.push(inst(Op::ConvertPtrToU, Some(a.u64), Some(addr), vec![id(base)]));
            out.push(inst(Op::FunctionCall, Some(a.u32), Some(r), vec![id(*f), id(index), id(addr)]));
            return Some(r);
        }
        let last = ir.c_u32(most - 1);
        let (inside, r) = (ir.id(), ir.id());
        out.push(inst(Op::ULessThan, Some(a.bool_), Some(inside), vec![id(index), id(last)]));
        out.push(inst(Op::Select, Some(a.u32), Some(r), vec![id(inside), id(index), id(last)]));
        Some(r)
    }
}

/// `index` as a `u32` (pushed to `out`): signed 32-bit indexes are
/// reinterpreted (a negative one is then past any array), wider ones
/// narrowed.
fn as_u32(ir: &mut Ir, cx: &Ctx, types: &crate::ir::IdMap<Word>, out: &mut Vec<Instruction>, index: Word) -> Word {
    let u = cx.abi.u32;
    let Some(ty) = types.get(&index).copied().filter(|&t| t != u) else { return index };
    let width = ir.global(ty).and_then(|t| match t.operands.first() {
        Some(Operand::LiteralBit32(w)) => Some(*w),
        _ => None,
    });
    let r = ir.id();
    let op = if width == Some(32) { Op::Bitcast } else { Op::UConvert };
    out.push(inst(op, Some(u), Some(r), vec![id(index)]));
    r
}
