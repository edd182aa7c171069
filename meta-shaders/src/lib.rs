//! The layer's meta compute shaders, which build level 0 of a graph dispatch
//! whose inputs are in device memory (`vkCmdDispatchGraphIndirect*AMDX`);
//! between levels nothing runs but the node kernels (see
//! `spirv_lowering::abi`). GLSL sources in `glsl/`, compiled with
//! `glslangValidator -V --target-env vulkan1.2` and committed as `.spv` next
//! to them (`glsl/compile.sh` recompiles). They reach scratch memory
//! through `GL_EXT_buffer_reference` pointers because the addresses exist
//! only on the GPU.
//!
//! This crate also owns the Rust side of their push-constant blocks.
//! `common.glsl` mirrors the kernel ABI (`spirv_lowering::abi`, which owns
//! the per-node [`NodeSchedule`]); `tests/mirror.rs` checks the mirror.
#![forbid(unsafe_code)]

/// Converts the bytes of a `.spv` file into words at compile time.
const fn words<const N: usize>(bytes: &[u8]) -> [u32; N] {
    let mut out = [0u32; N];
    let mut i = 0;
    while i < N {
        out[i] = u32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]);
        i += 1;
    }
    out
}

macro_rules! shader {
    ($(#[$doc:meta])* $name:ident, $file:literal) => {
        $(#[$doc])*
        pub static $name: [u32; include_bytes!($file).len() / 4] = words(include_bytes!($file));
    };
}

shader!(
    /// `plan.comp`: record slices, dispatch arguments and counter resets of
    /// level 0 of an indirect graph dispatch.
    PLAN, "../glsl/plan.spv"
);
shader!(
    /// `gridscan.comp`: workgroup prefix sums of dynamic-grid broadcast nodes.
    GRIDSCAN, "../glsl/gridscan.spv"
);
shader!(
    /// `entry_rank.comp`: checks GPU-read entry infos and reserves their records' places.
    ENTRY_RANK, "../glsl/entry_rank.spv"
);
shader!(
    /// `entry_records.comp`: lists GPU-read entry payloads in their nodes' record slices.
    ENTRY_RECORDS, "../glsl/entry_records.spv"
);

/// Every meta shader with its source file name, for tests and tools.
pub const ALL: [(&str, &[u32]); 4] =
    [("plan", &PLAN), ("gridscan", &GRIDSCAN), ("entry_rank", &ENTRY_RANK), ("entry_records", &ENTRY_RECORDS)];

/// Workgroup size of `entry_rank.comp` and `entry_records.comp`.
pub const ENTRY_WORKGROUP: u32 = 64;

pub use spirv_lowering::abi::{
    NodeSchedule, SCHEDULE_BATCHED, SCHEDULE_DYNAMIC, SCHEDULE_FLAG_API_ENTRY, SCHEDULE_STATIC, STATUS_INVALID_ENTRY,
    STATUS_RECORD_OVERFLOW,
};

/// Push constants of `plan.comp`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanPush {
    pub ctx: u64,
    pub dispatches: u64,
    pub schedules: u64,
    pub records: u64,
    /// Where to leave `GraphContext.status` as it stands after this pass
    /// (the first status word, so the host can tell where a problem began).
    pub level_status: u64,
    pub record_capacity: u32,
    pub reserved: u32,
    /// Device address of `[u32; node_count]`: records per node (`entry_rank.comp`).
    pub counts: u64,
}

/// Push constants of `entry_rank.comp` and `entry_records.comp`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntryPush {
    pub ctx: u64,
    pub dispatches: u64,
    pub schedules: u64,
    /// Device address of a `VkDispatchGraphCountInfoAMDX`, or 0 when the
    /// next three fields come from the host.
    pub count_info: u64,
    pub infos: u64,
    pub info_stride: u64,
    pub count: u32,
    /// Infos the rank array holds (more are ignored).
    pub rank_capacity: u32,
    /// Device address of one (node slot, rank) pair of `u32` per info.
    pub ranks: u64,
    /// As [`PlanPush::counts`].
    pub counts: u64,
}

/// Push constants of `gridscan.comp` (dispatched with one workgroup per node slot).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GridscanPush {
    pub dispatches: u64,
    pub schedules: u64,
    /// The graph context (its level-0 launch count grows by each node's groups).
    pub ctx: u64,
}

const _: () = assert!(core::mem::size_of::<EntryPush>() == 72);
const _: () = assert!(core::mem::offset_of!(EntryPush, ranks) == 56);
const _: () = assert!(core::mem::offset_of!(EntryPush, counts) == 64);
const _: () = assert!(core::mem::size_of::<PlanPush>() == 56);
const _: () = assert!(core::mem::offset_of!(PlanPush, counts) == 48);
const _: () = assert!(core::mem::size_of::<GridscanPush>() == 24);

/// Splits `groups` linear workgroups over x and y as `split_groups` in
/// `common.glsl` does (65535 per dimension, fewer than y groups wasted).
pub fn split_groups(groups: u32) -> [u32; 3] {
    if groups <= 65535 {
        return [groups, 1, 1];
    }
    let y = groups.div_ceil(65535);
    [groups.div_ceil(y), y, 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_every_group_with_little_waste() {
        for groups in [0, 1, 65535, 65536, 131071, 1 << 20, (1 << 24) - 1, u32::MAX / 2] {
            let [x, y, z] = split_groups(groups);
            assert!(x <= 65535 && y <= 65535 && z == 1, "{groups}: {x} {y}");
            let launched = u64::from(x) * u64::from(y);
            assert!(launched >= u64::from(groups));
            assert!(launched - u64::from(groups) < u64::from(y.max(1)), "{groups}: waste");
        }
    }

    #[test]
    fn shaders_are_spirv() {
        for (name, words) in ALL {
            assert_eq!(words.first(), Some(&0x0723_0203), "{name}");
        }
    }
}
