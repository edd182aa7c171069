//! The one error type of the crate. Every variant names what the runtime needs
//! to report a failed pipeline creation: the entry point, the opcode and the
//! result id where they exist.

use thiserror::Error;

/// Why a module could not be analyzed or lowered.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LowerError {
    /// The word stream ends inside the header or inside an instruction.
    #[error("truncated module: {0}")]
    Truncated(String),
    /// rspirv's binary parser rejected the module (bad magic, unknown opcode, bad operand).
    #[error("malformed SPIR-V: {0}")]
    Malformed(String),
    /// The module uses the superseded 2023 form of SPV_AMDX_shader_enqueue.
    #[error(
        "module uses the superseded 2023 form of SPV_AMDX_shader_enqueue ({0}); \
         only the 2024 form (OpAllocateNodePayloadsAMDX / OpEnqueueNodePayloadsAMDX) is accepted"
    )]
    Superseded2023Form(String),
    /// An AMDX opcode this crate does not know (e.g. a later revision).
    #[error("unknown AMDX opcode {opcode} (result id {result_id:?})")]
    UnknownAmdxOpcode { opcode: u32, result_id: Option<u32> },
    /// The requested entry point is not a GLCompute or MeshEXT entry point of the module.
    #[error("no GLCompute or MeshEXT entry point named {0:?}")]
    EntryPointNotFound(String),
    /// A decoration the spec requires is missing.
    #[error("entry point {entry:?}: %{target} is missing required decoration {decoration}")]
    MissingDecoration { entry: String, target: u32, decoration: &'static str },
    /// An operand that must be a constant (possibly specialized) is not one we can evaluate.
    #[error("entry point {entry:?}: {what} (%{id}) is not an evaluable 32-bit integer constant")]
    NotConstant { entry: String, what: &'static str, id: u32 },
    /// Execution modes that must not be combined.
    #[error("entry point {entry:?}: conflicting launch modes: {detail}")]
    ConflictingModes { entry: String, detail: String },
    /// The node-kernel push block does not fit the device's push-constant space.
    #[error(
        "entry point {entry:?}: the node push block (offset {offset}, {size} bytes) \
         does not fit max_push_constants_size {max}"
    )]
    PushBlockDoesNotFit { entry: String, offset: u32, size: u32, max: u32 },
    /// The requested push offset overlaps the application's push block or is misaligned.
    #[error("entry point {entry:?}: push_offset {offset} is invalid: {detail}")]
    BadPushOffset { entry: String, offset: u32, detail: String },
    /// A construct the lowering does not handle (named precisely).
    #[error("entry point {entry:?}: unsupported construct {opcode} (result id {result_id:?}): {detail}")]
    Unsupported { entry: String, opcode: String, result_id: Option<u32>, detail: String },
    /// The module is structurally invalid in a way found while lowering.
    #[error("entry point {entry:?}: invalid module at {opcode} (result id {result_id:?}): {detail}")]
    Invalid { entry: String, opcode: String, result_id: Option<u32>, detail: String },
}
