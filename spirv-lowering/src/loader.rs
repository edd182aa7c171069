//! Loading SPIR-V words into an `rspirv::dr::Module`.
//!
//! Matches: any word stream. First a raw scan (no rspirv) checks the header and
//! every instruction's word count, so truncation is a clean error, and looks for
//! the markers of the superseded 2023 form of SPV_AMDX_shader_enqueue, whose
//! opcode and storage-class numbers collide with the 2024 ones (DESIGN.md §3),
//! and for AMDX-range opcodes this crate does not know. Then
//! `rspirv::binary::parse_words` feeds our own consumer, which, unlike rspirv's
//! `dr::Loader`, accepts `OpExecutionModeId` and treats
//! `OpConstantStringAMDX`/`OpSpecConstantStringAMDX` as global values.
//! Afterwards: a `dr::Module` whose sections hold the instructions in input
//! order; ids may be referenced before their definition (DXC's OpDecorateId).

use crate::error::LowerError;
use rspirv::binary::{Consumer, ParseAction};
use rspirv::dr;
use rspirv::grammar;
use spirv::Op;
use std::fmt;

const MAGIC: u32 = 0x0723_0203;
/// 2023 storage class NodeOutputPayloadAMDX; 5076 is an opcode in the 2024 form.
const SC_NODE_OUTPUT_PAYLOAD_2023: u32 = 5076;
/// 2023 OpInitializeNodePayloadsAMDX took 4 operands and no result; 2024 reuses
/// 5090 for OpNodePayloadArrayLengthAMDX (word count 4).
const OP_5090: u32 = 5090;
/// The opcode block reserved for AMDX shader enqueue.
const AMDX_OPCODES: std::ops::RangeInclusive<u32> = 5074..=5109;
const KNOWN_AMDX: [u32; 8] = [5074, 5075, 5076, 5078, 5090, 5101, 5103, 5104];

/// The opcodes `OpSpecConstantOp` may compute (the SPIR-V specification's
/// lists for the Shader and Kernel capabilities). rspirv's parser panics on
/// some others (e.g. `OpSpecConstant`, `OpSpecConstantOp`), so they are
/// refused before it runs.
const SPEC_CONSTANT_OPS: &[Op] = &[
    Op::SConvert,
    Op::UConvert,
    Op::FConvert,
    Op::SNegate,
    Op::Not,
    Op::IAdd,
    Op::ISub,
    Op::IMul,
    Op::UDiv,
    Op::SDiv,
    Op::UMod,
    Op::SRem,
    Op::SMod,
    Op::ShiftRightLogical,
    Op::ShiftRightArithmetic,
    Op::ShiftLeftLogical,
    Op::BitwiseOr,
    Op::BitwiseXor,
    Op::BitwiseAnd,
    Op::VectorShuffle,
    Op::CompositeExtract,
    Op::CompositeInsert,
    Op::LogicalOr,
    Op::LogicalAnd,
    Op::LogicalNot,
    Op::LogicalEqual,
    Op::LogicalNotEqual,
    Op::Select,
    Op::IEqual,
    Op::INotEqual,
    Op::ULessThan,
    Op::SLessThan,
    Op::UGreaterThan,
    Op::SGreaterThan,
    Op::ULessThanEqual,
    Op::SLessThanEqual,
    Op::UGreaterThanEqual,
    Op::SGreaterThanEqual,
    Op::QuantizeToF16,
    Op::ConvertFToS,
    Op::ConvertSToF,
    Op::ConvertFToU,
    Op::ConvertUToF,
    Op::ConvertPtrToU,
    Op::ConvertUToPtr,
    Op::GenericCastToPtr,
    Op::PtrCastToGeneric,
    Op::Bitcast,
    Op::FNegate,
    Op::FAdd,
    Op::FSub,
    Op::FMul,
    Op::FDiv,
    Op::FRem,
    Op::FMod,
    Op::AccessChain,
    Op::InBoundsAccessChain,
    Op::PtrAccessChain,
    Op::InBoundsPtrAccessChain,
];

/// Raw scan over the words: header, word counts, 2023 markers, unknown AMDX
/// opcodes, what `OpSpecConstantOp` computes.
pub fn prescan(words: &[u32]) -> Result<(), LowerError> {
    if words.len() < 5 {
        return Err(LowerError::Truncated(format!("{} words, the header needs 5", words.len())));
    }
    if words.first() != Some(&MAGIC) {
        return Err(LowerError::Malformed("bad magic number".into()));
    }
    let mut i = 5usize;
    while let Some(&first) = words.get(i) {
        let wc = (first >> 16) as usize;
        let op = first & 0xffff;
        if wc == 0 {
            return Err(LowerError::Malformed(format!("zero word count at word {i}")));
        }
        let end = i.saturating_add(wc);
        if end > words.len() {
            return Err(LowerError::Truncated(format!(
                "instruction at word {i} (opcode {op}) needs {wc} words, {} left",
                words.len() - i
            )));
        }
        let w = |k: usize| words.get(i + k).copied();
        if op == OP_5090 && wc == 5 {
            return Err(LowerError::Superseded2023Form("OpInitializeNodePayloadsAMDX".into()));
        }
        let sc_at = match op {
            32 | 39 => Some(2), // OpTypePointer, OpTypeForwardPointer
            59 => Some(3),      // OpVariable
            _ => None,
        };
        if let Some(k) = sc_at {
            if w(k) == Some(SC_NODE_OUTPUT_PAYLOAD_2023) {
                return Err(LowerError::Superseded2023Form("storage class NodeOutputPayloadAMDX".into()));
            }
        }
        // OpDecorate (not OpDecorateId) PayloadNodeNameAMDX had a literal string in 2023.
        if op == 71 && w(2) == Some(5091) {
            return Err(LowerError::Superseded2023Form("PayloadNodeNameAMDX with a literal name".into()));
        }
        if op == Op::SpecConstantOp as u32 {
            let computed = w(3).unwrap_or(u32::MAX);
            if wc < 4 || !SPEC_CONSTANT_OPS.iter().any(|&o| o as u32 == computed) {
                return Err(LowerError::Malformed(format!(
                    "OpSpecConstantOp at word {i} computes opcode {computed}, which it may not"
                )));
            }
        }
        if AMDX_OPCODES.contains(&op) && !KNOWN_AMDX.contains(&op) {
            let result_id = if wc >= 3 { w(2) } else { None };
            return Err(LowerError::UnknownAmdxOpcode { opcode: op, result_id });
        }
        i = end;
    }
    Ok(())
}

/// Parses `words` into a module (after [`prescan`]).
pub fn load(words: &[u32]) -> Result<dr::Module, LowerError> {
    prescan(words)?;
    let mut c = NodeLoader::default();
    match rspirv::binary::parse_words(words, &mut c) {
        Ok(()) => Ok(c.module),
        Err(e) => Err(LowerError::Malformed(e.to_string())),
    }
}

#[derive(Debug)]
struct LoadError(String);
impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for LoadError {}

fn fail(msg: &str) -> ParseAction {
    ParseAction::Error(Box::new(LoadError(msg.to_string())))
}

#[derive(Default)]
struct NodeLoader {
    module: dr::Module,
    function: Option<dr::Function>,
    block: Option<dr::Block>,
}

impl Consumer for NodeLoader {
    fn initialize(&mut self) -> ParseAction {
        ParseAction::Continue
    }

    fn finalize(&mut self) -> ParseAction {
        if self.block.is_some() || self.function.is_some() {
            return fail("unterminated function or block");
        }
        ParseAction::Continue
    }

    fn consume_header(&mut self, header: dr::ModuleHeader) -> ParseAction {
        self.module.header = Some(header);
        ParseAction::Continue
    }

    fn consume_instruction(&mut self, inst: dr::Instruction) -> ParseAction {
        let op = inst.class.opcode;
        let m = &mut self.module;
        match op {
            Op::Capability => m.capabilities.push(inst),
            Op::Extension => m.extensions.push(inst),
            Op::ExtInstImport => m.ext_inst_imports.push(inst),
            Op::MemoryModel => m.memory_model = Some(inst),
            Op::EntryPoint => m.entry_points.push(inst),
            Op::ExecutionMode | Op::ExecutionModeId => m.execution_modes.push(inst),
            Op::String | Op::SourceExtension | Op::Source | Op::SourceContinued => m.debug_string_source.push(inst),
            Op::Name | Op::MemberName => m.debug_names.push(inst),
            Op::ModuleProcessed => m.debug_module_processed.push(inst),
            Op::Line | Op::NoLine => match &mut self.block {
                Some(b) => b.instructions.push(inst),
                None => m.types_global_values.push(inst),
            },
            _ if op.is_annotation() => m.annotations.push(inst),
            Op::ConstantStringAMDX | Op::SpecConstantStringAMDX => m.types_global_values.push(inst),
            _ if op.is_type() || op.is_constant() => m.types_global_values.push(inst),
            Op::Variable | Op::Undef if self.function.is_none() => m.types_global_values.push(inst),
            Op::Function => {
                if self.function.is_some() {
                    return fail("nested OpFunction");
                }
                let mut f = dr::Function::new();
                f.def = Some(inst);
                self.function = Some(f);
            }
            Op::FunctionEnd => {
                if self.block.is_some() {
                    return fail("OpFunctionEnd inside a block");
                }
                match self.function.take() {
                    Some(mut f) => {
                        f.end = Some(inst);
                        m.functions.push(f);
                    }
                    None => return fail("OpFunctionEnd outside a function"),
                }
            }
            Op::FunctionParameter => match &mut self.function {
                Some(f) if self.block.is_none() => f.parameters.push(inst),
                _ => return fail("misplaced OpFunctionParameter"),
            },
            Op::Label => {
                if self.function.is_none() || self.block.is_some() {
                    return fail("misplaced OpLabel");
                }
                let mut b = dr::Block::new();
                b.label = Some(inst);
                self.block = Some(b);
            }
            _ if grammar::reflect::is_block_terminator(op) => match (self.block.take(), &mut self.function) {
                (Some(mut b), Some(f)) => {
                    b.instructions.push(inst);
                    f.blocks.push(b);
                }
                _ => return fail("terminator outside a block"),
            },
            _ => match &mut self.block {
                Some(b) => b.instructions.push(inst),
                None => return fail("instruction outside a block"),
            },
        }
        ParseAction::Continue
    }
}
