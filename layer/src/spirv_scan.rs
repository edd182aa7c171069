//! A cheap scan of a SPIR-V module's capability section, enough to tell
//! whether a shader module is a node shader (`ShaderEnqueueAMDX`) that the
//! driver must never see. Full parsing belongs to `spirv-lowering`.

const MAGIC: u32 = 0x0723_0203;
const HEADER_WORDS: usize = 5;
const OP_CAPABILITY: u32 = 17;
/// `OpExtension` and `OpExtInstImport` may not precede capabilities, but
/// tolerate everything of the preamble up to `OpMemoryModel`.
const OP_MEMORY_MODEL: u32 = 14;
/// `ShaderEnqueueAMDX` (SPV_AMDX_shader_enqueue).
pub const CAPABILITY_SHADER_ENQUEUE_AMDX: u32 = 5067;

/// A valid, empty `GLCompute` module (`main`, workgroup size 1). The driver
/// gets it in place of node shaders so that every handle the application
/// holds (shader modules, node library pipelines) is a real driver object.
pub const PLACEHOLDER_KERNEL: [u32; 35] = [
    MAGIC,
    0x0001_0000,
    0,
    5,
    0, // SPIR-V 1.0, bound 5
    0x0002_0011,
    1, // OpCapability Shader
    0x0003_000e,
    0,
    1, // OpMemoryModel Logical GLSL450
    0x0005_000f,
    5,
    3,
    0x6e69_616d,
    0, // OpEntryPoint GLCompute %3 "main"
    0x0006_0010,
    3,
    17,
    1,
    1,
    1, // OpExecutionMode %3 LocalSize 1 1 1
    0x0002_0013,
    1, // %1 = OpTypeVoid
    0x0003_0021,
    2,
    1, // %2 = OpTypeFunction %1
    0x0005_0036,
    1,
    3,
    0,
    2, // %3 = OpFunction %1 None %2
    0x0002_00f8,
    4,           // %4 = OpLabel
    0x0001_00fd, // OpReturn
    0x0001_0038, // OpFunctionEnd
];

/// Entry point name of [`PLACEHOLDER_KERNEL`].
pub const PLACEHOLDER_ENTRY_POINT: &std::ffi::CStr = c"main";

/// True when `words` is a SPIR-V module that declares `ShaderEnqueueAMDX`.
/// Malformed input answers false (the driver then reports it).
pub fn declares_shader_enqueue(words: &[u32]) -> bool {
    if words.len() < HEADER_WORDS || words[0] != MAGIC {
        return false;
    }
    let mut at = HEADER_WORDS;
    while let Some(&first) = words.get(at) {
        let (count, opcode) = ((first >> 16) as usize, first & 0xffff);
        if count == 0 || opcode == OP_MEMORY_MODEL {
            return false;
        }
        if opcode == OP_CAPABILITY && words.get(at + 1) == Some(&CAPABILITY_SHADER_ENQUEUE_AMDX) {
            return true;
        }
        at += count;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(capabilities: &[u32]) -> Vec<u32> {
        let mut words = vec![MAGIC, 0x0001_0600, 0, 16, 0];
        for &cap in capabilities {
            words.extend([(2 << 16) | OP_CAPABILITY, cap]);
        }
        words.extend([(3 << 16) | OP_MEMORY_MODEL, 0, 1]);
        words
    }

    #[test]
    fn finds_the_capability() {
        assert!(declares_shader_enqueue(&module(&[1, CAPABILITY_SHADER_ENQUEUE_AMDX])));
        assert!(!declares_shader_enqueue(&module(&[1, 5345])));
    }

    #[test]
    fn malformed_input_is_not_a_node_shader() {
        assert!(!declares_shader_enqueue(&[]));
        assert!(!declares_shader_enqueue(&[MAGIC, 0, 0, 0, 0, 0]));
        let mut words = module(&[CAPABILITY_SHADER_ENQUEUE_AMDX]);
        words[0] = 0;
        assert!(!declares_shader_enqueue(&words));
        let truncated = &module(&[CAPABILITY_SHADER_ENQUEUE_AMDX])[..6];
        assert!(!declares_shader_enqueue(truncated));
    }
}
