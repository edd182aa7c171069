//! Small helpers over `rspirv::dr::Module`: id allocation, lookups of global
//! definitions and decorations, and interning of the plain types and
//! constants the passes emit. Decorated structs are never interned (rspirv's
//! builder would merge them); passes create them with fresh ids.

use rspirv::dr::{Instruction, Module, Operand};
use spirv::{Decoration, Op, StorageClass, Word};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

/// Shorthand for building an instruction (with a cached grammar lookup:
/// `Instruction::new` searches rspirv's opcode table linearly).
pub fn inst(op: Op, ty: Option<Word>, id: Option<Word>, ops: Vec<Operand>) -> Instruction {
    static CLASSES: OnceLock<IdMap<&'static rspirv::grammar::Instruction<'static>>> = OnceLock::new();
    let classes =
        CLASSES.get_or_init(|| rspirv::grammar::INSTRUCTION_TABLE.iter().map(|c| (c.opcode as u32, c)).collect());
    match classes.get(&(op as u32)) {
        Some(class) => Instruction { class, result_type: ty, result_id: id, operands: ops },
        None => Instruction::new(op, ty, id, ops),
    }
}

/// FxHash-style hasher for id keys (SipHash dominated the profile).
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(*b)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(v)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

/// A map keyed by SPIR-V ids.
pub type IdMap<V> = HashMap<Word, V, BuildHasherDefault<IdHasher>>;

/// Id operand.
pub fn id(w: Word) -> Operand {
    Operand::IdRef(w)
}

/// 32-bit literal operand.
pub fn lit(w: u32) -> Operand {
    Operand::LiteralBit32(w)
}

/// The id in operand `k`, if it is an id.
pub fn op_id(i: &Instruction, k: usize) -> Option<Word> {
    match i.operands.get(k)? {
        Operand::IdRef(w) | Operand::IdScope(w) | Operand::IdMemorySemantics(w) => Some(*w),
        _ => None,
    }
}

/// The literal in operand `k`, if it is a 32-bit literal.
pub fn op_lit(i: &Instruction, k: usize) -> Option<u32> {
    match i.operands.get(k)? {
        Operand::LiteralBit32(w) => Some(*w),
        _ => None,
    }
}

/// The string in operand `k`.
pub fn op_str(i: &Instruction, k: usize) -> Option<&str> {
    match i.operands.get(k)? {
        Operand::LiteralString(s) => Some(s),
        _ => None,
    }
}

/// Every id an instruction reads (result type and id operands).
pub fn used_ids(i: &Instruction) -> impl Iterator<Item = Word> + '_ {
    i.result_type.into_iter().chain(i.operands.iter().filter_map(|o| match o {
        Operand::IdRef(w) | Operand::IdScope(w) | Operand::IdMemorySemantics(w) => Some(*w),
        _ => None,
    }))
}

/// Rewrites every id operand (not result type/id) through `f`.
pub fn map_operand_ids(i: &mut Instruction, f: &impl Fn(Word) -> Word) {
    for o in &mut i.operands {
        if let Operand::IdRef(w) | Operand::IdScope(w) | Operand::IdMemorySemantics(w) = o {
            *w = f(*w);
        }
    }
}

/// A module under rewrite plus interning caches.
pub struct Ir {
    pub m: Module,
    pub bound: Word,
    ptr_cache: HashMap<(u32, Word), Word>,
    /// Interned plain types (a handful, so a list).
    type_cache: Vec<((Op, Vec<Operand>), Word)>,
    const_cache: HashMap<(Word, u64), Word>,
    /// id -> index in `types_global_values`; checked on use, rebuilt when stale.
    global_index: RefCell<(usize, IdMap<usize>)>,
    /// target -> indices in `annotations`, for an annotation count (rebuilt when it changes).
    deco_index: RefCell<(usize, IdMap<Vec<usize>>)>,
}

impl Ir {
    pub fn new(m: Module) -> Self {
        let bound = m.header.as_ref().map(|h| h.bound).unwrap_or(1).max(1);
        Ir {
            m,
            bound,
            ptr_cache: HashMap::new(),
            type_cache: Vec::new(),
            const_cache: HashMap::new(),
            global_index: RefCell::new((usize::MAX, IdMap::default())),
            deco_index: RefCell::new((usize::MAX, IdMap::default())),
        }
    }

    /// A fresh id.
    pub fn id(&mut self) -> Word {
        let w = self.bound;
        self.bound = self.bound.saturating_add(1);
        w
    }

    /// Writes the bound back and assembles.
    pub fn finish(mut self) -> Vec<u32> {
        use rspirv::binary::Assemble;
        if let Some(h) = self.m.header.as_mut() {
            h.bound = self.bound;
        }
        self.m.assemble()
    }

    /// The global instruction defining `w` (types, constants, variables).
    pub fn global(&self, w: Word) -> Option<&Instruction> {
        let g = &self.m.types_global_values;
        {
            let idx = self.global_index.borrow();
            if idx.0 == g.len() {
                match idx.1.get(&w) {
                    None => return None,
                    Some(k) => {
                        if let Some(i) = g.get(*k).filter(|i| i.result_id == Some(w)) {
                            return Some(i);
                        }
                    }
                }
            }
        }
        let mut idx = self.global_index.borrow_mut();
        let grown = idx.0 != usize::MAX && idx.0 < g.len();
        let from = if grown { idx.0 } else { 0 };
        if !grown {
            // Shrunk or reordered: rebuild; grown: passes only append, index the tail.
            idx.1.clear();
        }
        let tail = g.iter().enumerate().skip(from);
        idx.1.extend(tail.filter_map(|(k, i)| Some((i.result_id?, k))));
        idx.0 = g.len();
        let hit = |idx: &IdMap<usize>| idx.get(&w).and_then(|k| g.get(*k)).filter(|i| i.result_id == Some(w));
        if let Some(i) = hit(&idx.1) {
            return Some(i);
        }
        if !grown {
            return None;
        }
        // A stale position (the section changed behind the index): rebuild.
        idx.1.clear();
        idx.1.extend(g.iter().enumerate().filter_map(|(k, i)| Some((i.result_id?, k))));
        hit(&idx.1)
    }

    /// Removes globals (keeping those `keep` accepts) and forgets the index
    /// of the section; every removal from it must go through here or call
    /// [`Self::invalidate_globals`].
    pub fn retain_globals(&mut self, keep: impl FnMut(&Instruction) -> bool) {
        self.m.types_global_values.retain(keep);
        self.invalidate_globals();
    }

    /// Forgets the index of the globals section (after a removal or reorder).
    pub fn invalidate_globals(&self) {
        self.global_index.borrow_mut().0 = usize::MAX;
    }

    /// Annotations whose first operand is `target`.
    fn annotations_of(&self, target: Word) -> Vec<&Instruction> {
        let a = &self.m.annotations;
        let mut cache = self.deco_index.borrow_mut();
        // Passes append annotations (index the tail) and only ever shrink the
        // list with `retain` (rebuild); a hit is checked against its target.
        let stale = |c: &(usize, IdMap<Vec<usize>>)| {
            c.1.get(&target).is_some_and(|v| v.iter().any(|k| a.get(*k).and_then(|i| op_id(i, 0)) != Some(target)))
        };
        if cache.0 != a.len() || stale(&cache) {
            let from = if cache.0 != usize::MAX && cache.0 < a.len() && !stale(&cache) {
                cache.0
            } else {
                cache.1.clear();
                0
            };
            for (k, i) in a.iter().enumerate().skip(from) {
                if let Some(t) = op_id(i, 0) {
                    cache.1.entry(t).or_default().push(k);
                }
            }
            cache.0 = a.len();
        }
        cache.1.get(&target).map(|v| v.iter().filter_map(|k| a.get(*k)).collect()).unwrap_or_default()
    }

    pub fn opcode_of(&self, w: Word) -> Option<Op> {
        self.global(w).map(|i| i.class.opcode)
    }

    /// Decorations (OpDecorate/OpDecorateId) on `target`: (decoration, operands after it).
    pub fn decorations(&self, target: Word) -> Vec<(Decoration, Vec<Operand>)> {
        self.annotations_of(target)
            .into_iter()
            .filter(|a| matches!(a.class.opcode, Op::Decorate | Op::DecorateId))
            .filter_map(|a| match a.operands.get(1) {
                Some(Operand::Decoration(d)) => Some((*d, a.operands.get(2..)?.to_vec())),
                _ => None,
            })
            .collect()
    }

    pub fn has_decoration(&self, target: Word, d: Decoration) -> bool {
        self.decorations(target).iter().any(|(x, _)| *x == d)
    }

    /// The first operand of decoration `d` on `target` as an id or literal word.
    pub fn decoration_word(&self, target: Word, d: Decoration) -> Option<Word> {
        self.decorations(target).into_iter().find(|(x, _)| *x == d).and_then(|(_, ops)| match ops.first()? {
            Operand::IdRef(w) | Operand::LiteralBit32(w) => Some(*w),
            _ => None,
        })
    }

    /// Member decorations: (member, decoration, operands).
    pub fn member_decorations(&self, target: Word) -> Vec<(u32, Decoration, Vec<Operand>)> {
        self.annotations_of(target)
            .into_iter()
            .filter(|a| a.class.opcode == Op::MemberDecorate)
            .filter_map(|a| match (a.operands.get(1), a.operands.get(2)) {
                (Some(Operand::LiteralBit32(k)), Some(Operand::Decoration(d))) => {
                    Some((*k, *d, a.operands.get(3..)?.to_vec()))
                }
                _ => None,
            })
            .collect()
    }

    /// BuiltIn decoration of a variable.
    pub fn builtin_of(&self, var: Word) -> Option<spirv::BuiltIn> {
        self.decorations(var).into_iter().find_map(|(d, ops)| match (d, ops.first()) {
            (Decoration::BuiltIn, Some(Operand::BuiltIn(b))) => Some(*b),
            _ => None,
        })
    }

    fn find_type(&self, op: Op, ops: &[Operand]) -> Option<Word> {
        self.m.types_global_values.iter().find(|i| i.class.opcode == op && i.operands == ops).and_then(|i| i.result_id)
    }

    fn intern(&mut self, op: Op, ops: Vec<Operand>) -> Word {
        let key = (op, ops);
        if let Some(w) = self.type_cache.iter().find(|(k, _)| *k == key).map(|x| x.1) {
            return w;
        }
        let (op, ops) = key;
        if let Some(w) = self.find_type(op, &ops) {
            self.type_cache.push(((op, ops), w));
            return w;
        }
        let w = self.id();
        self.m.types_global_values.push(inst(op, None, Some(w), ops.clone()));
        self.type_cache.push(((op, ops), w));
        w
    }

    pub fn t_void(&mut self) -> Word {
        self.intern(Op::TypeVoid, vec![])
    }
    pub fn t_bool(&mut self) -> Word {
        self.intern(Op::TypeBool, vec![])
    }
    pub fn t_u32(&mut self) -> Word {
        self.intern(Op::TypeInt, vec![lit(32), lit(0)])
    }
    pub fn t_u64(&mut self) -> Word {
        self.intern(Op::TypeInt, vec![lit(64), lit(0)])
    }
    pub fn t_v3u32(&mut self) -> Word {
        let u = self.t_u32();
        self.intern(Op::TypeVector, vec![id(u), lit(3)])
    }
    pub fn t_fn(&mut self, ret: Word, params: &[Word]) -> Word {
        let mut ops = vec![id(ret)];
        ops.extend(params.iter().map(|p| id(*p)));
        self.intern(Op::TypeFunction, ops)
    }

    /// A pointer type; PhysicalStorageBuffer pointers get a fresh id with the
    /// given ArrayStride (so passes can rely on the stride they asked for).
    pub fn t_ptr(&mut self, sc: StorageClass, pointee: Word, stride: Option<u32>) -> Word {
        let key = (sc as u32 ^ stride.map(|s| s << 16).unwrap_or(0), pointee);
        if let Some(w) = self.ptr_cache.get(&key) {
            return *w;
        }
        let ops = vec![Operand::StorageClass(sc), id(pointee)];
        let w = if sc == StorageClass::PhysicalStorageBuffer || stride.is_some() {
            let w = self.id();
            self.m.types_global_values.push(inst(Op::TypePointer, None, Some(w), ops));
            w
        } else {
            self.intern(Op::TypePointer, ops)
        };
        if let Some(s) = stride {
            self.decorate(w, Decoration::ArrayStride, vec![lit(s)]);
        }
        self.ptr_cache.insert(key, w);
        w
    }

    pub fn decorate(&mut self, target: Word, d: Decoration, extra: Vec<Operand>) {
        let mut ops = vec![id(target), Operand::Decoration(d)];
        ops.extend(extra);
        self.m.annotations.push(inst(Op::Decorate, None, None, ops));
    }

    pub fn member_decorate(&mut self, target: Word, k: u32, d: Decoration, extra: Vec<Operand>) {
        let mut ops = vec![id(target), lit(k), Operand::Decoration(d)];
        ops.extend(extra);
        self.m.annotations.push(inst(Op::MemberDecorate, None, None, ops));
    }

    pub fn name(&mut self, target: Word, name: &str) {
        self.m.debug_names.push(inst(Op::Name, None, None, vec![id(target), name.into()]));
    }

    fn constant(&mut self, ty: Word, v: u64, wide: bool) -> Word {
        if let Some(w) = self.const_cache.get(&(ty, v)) {
            return *w;
        }
        let ops = if wide { vec![Operand::LiteralBit64(v)] } else { vec![lit(v as u32)] };
        // Reuse a non-specialization constant of the module when one matches.
        let found = self
            .m
            .types_global_values
            .iter()
            .find(|i| i.class.opcode == Op::Constant && i.result_type == Some(ty) && i.operands == ops)
            .and_then(|i| i.result_id);
        let w = match found {
            Some(w) => w,
            None => {
                let w = self.id();
                self.m.types_global_values.push(inst(Op::Constant, Some(ty), Some(w), ops));
                w
            }
        };
        self.const_cache.insert((ty, v), w);
        w
    }

    pub fn c_u32(&mut self, v: u32) -> Word {
        let t = self.t_u32();
        self.constant(t, u64::from(v), false)
    }
    pub fn c_u64(&mut self, v: u64) -> Word {
        let t = self.t_u64();
        self.constant(t, v, true)
    }
    pub fn c_bool(&mut self, v: bool) -> Word {
        let t = self.t_bool();
        let op = if v { Op::ConstantTrue } else { Op::ConstantFalse };
        if let Some(w) = self.const_cache.get(&(t, u64::from(v) | 1 << 32)) {
            return *w;
        }
        let found = self
            .m
            .types_global_values
            .iter()
            .find(|i| i.class.opcode == op && i.result_type == Some(t))
            .and_then(|i| i.result_id);
        let w = match found {
            Some(w) => w,
            None => {
                let w = self.id();
                self.m.types_global_values.push(inst(op, Some(t), Some(w), vec![]));
                w
            }
        };
        self.const_cache.insert((t, u64::from(v) | 1 << 32), w);
        w
    }

    /// A module-scope variable.
    pub fn global_var(&mut self, sc: StorageClass, pointee: Word, name: &str) -> Word {
        let pt = self.t_ptr(sc, pointee, None);
        let w = self.id();
        self.m.types_global_values.push(inst(Op::Variable, Some(pt), Some(w), vec![Operand::StorageClass(sc)]));
        self.name(w, name);
        w
    }

    /// Declares `cap` unless the module already does.
    pub fn require_capability(&mut self, cap: spirv::Capability) {
        let has =
            self.m.capabilities.iter().any(|c| matches!(c.operands.first(), Some(Operand::Capability(k)) if *k == cap));
        if !has {
            self.m.capabilities.push(inst(Op::Capability, None, None, vec![Operand::Capability(cap)]));
        }
    }

    /// A `Private` variable starting at the constant `init` (declared first).
    pub fn private_var_init(&mut self, pointee: Word, init: Word, name: &str) -> Word {
        let sc = StorageClass::Private;
        let pt = self.t_ptr(sc, pointee, None);
        let w = self.id();
        self.m.types_global_values.push(inst(
            Op::Variable,
            Some(pt),
            Some(w),
            vec![Operand::StorageClass(sc), id(init)],
        ));
        self.name(w, name);
        w
    }

    /// Map from every result id to its result type (globals, params, function bodies).
    pub fn type_map(&self) -> IdMap<Word> {
        let mut map = IdMap::default();
        let mut add = |i: &Instruction| {
            if let (Some(r), Some(t)) = (i.result_id, i.result_type) {
                map.insert(r, t);
            }
        };
        self.m.types_global_values.iter().for_each(&mut add);
        for f in &self.m.functions {
            f.parameters.iter().for_each(&mut add);
            f.blocks.iter().flat_map(|b| b.instructions.iter()).for_each(&mut add);
        }
        map
    }

    /// (storage class, pointee) of a pointer type.
    pub fn pointer_info(&self, ty: Word) -> Option<(StorageClass, Word)> {
        let i = self.global(ty)?;
        if i.class.opcode != Op::TypePointer {
            return None;
        }
        match (i.operands.first()?, op_id(i, 1)?) {
            (Operand::StorageClass(sc), p) => Some((*sc, p)),
            _ => None,
        }
    }
}
