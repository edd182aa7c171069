//! The layer's meta compute shaders, which run between the levels of a graph
//! dispatch: GLSL sources in `glsl/`, compiled with
//! `glslangValidator -V --target-env vulkan1.2` and committed as `.spv` next
//! to them (`glsl/compile.sh` recompiles). They reach scratch memory
//! through `GL_EXT_buffer_reference` pointers because the addresses exist
//! only on the GPU.
//!
//! This crate also owns the Rust side of their interface: the per-node
//! [`NodeSchedule`] and the push-constant blocks. `common.glsl` mirrors
//! them and the kernel ABI
//! (`spirv_lowering::abi`); `tests/mirror.rs` checks both mirrors.
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
    /// `advance.comp`: between levels, record slices, record lists, dispatch
    /// arguments and the next level's resets in one pass.
    ADVANCE, "../glsl/advance.spv"
);
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
pub const ALL: [(&str, &[u32]); 5] = [
    ("advance", &ADVANCE),
    ("plan", &PLAN),
    ("gridscan", &GRIDSCAN),
    ("entry_rank", &ENTRY_RANK),
    ("entry_records", &ENTRY_RECORDS),
];

/// Workgroup size of `entry_rank.comp` and `entry_records.comp`.
pub const ENTRY_WORKGROUP: u32 = 64;

/// [`NodeSchedule::mode`]: broadcast with a static grid.
pub const SCHEDULE_STATIC: u32 = 0;
/// [`NodeSchedule::mode`]: broadcast with the grid in the payload.
pub const SCHEDULE_DYNAMIC: u32 = 1;
/// [`NodeSchedule::mode`]: coalescing or thread nodes, `records_per_workgroup` a workgroup.
pub const SCHEDULE_BATCHED: u32 = 2;
/// `GraphContext.status` bit set by `advance.comp` and `plan.comp`: more
/// records than the record list holds.
pub const STATUS_RECORD_OVERFLOW: u32 = 1 << 5;
/// `GraphContext.status` bit set by `entry_rank.comp`: an entry info named a
/// node out of range or one that is not an API entry (the info is dropped).
pub const STATUS_INVALID_ENTRY: u32 = 1 << 6;
/// [`NodeSchedule::flags`]: the node may be dispatched by the API (`IsApiEntryAMDX`).
pub const SCHEDULE_FLAG_API_ENTRY: u32 = 1;

/// How the meta shaders size one node's launch (one per node slot, static).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeSchedule {
    pub mode: u32,
    /// Coalescing P, or W for packed thread nodes (1 otherwise).
    pub records_per_workgroup: u32,
    /// Static broadcast: workgroups per record.
    pub static_groups: u32,
    /// Dynamic broadcast: byte offset of the grid member in the payload.
    pub grid_offset: u32,
    /// Dynamic broadcast: 2 (u16) or 4 (u32) bytes per component.
    pub grid_bytes: u32,
    /// Dynamic broadcast: 1 to 3 components.
    pub grid_components: u32,
    /// Bytes between consecutive records of one allocation.
    pub input_stride: u32,
    /// `SharesInputWithAMDX`: the base node's slot + 1 (0: shares nothing).
    /// Such a node reads its base's record slice.
    pub share_base: u32,
    /// `SCHEDULE_FLAG_*`.
    pub flags: u32,
    pub reserved: u32,
}

/// Push constants of `advance.comp`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AdvancePush {
    /// The context of the level that ran (level d uses context d % 2).
    pub ctx: u64,
    /// The context of the next level, reset by the pass.
    pub next_ctx: u64,
    pub dispatches: u64,
    pub schedules: u64,
    pub records: u64,
    /// Where to leave `GraphContext.status` as it stands after this pass
    /// (one word per level, so the host can tell where a problem began).
    pub level_status: u64,
    /// Capacity of the record list.
    pub record_capacity: u32,
    pub reserved: u32,
}

/// Push constants of `plan.comp`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanPush {
    pub ctx: u64,
    pub dispatches: u64,
    pub schedules: u64,
    pub records: u64,
    /// As [`AdvancePush::level_status`].
    pub level_status: u64,
    pub record_capacity: u32,
    pub reserved: u32,
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
}

/// Push constants of `gridscan.comp` (dispatched with one workgroup per node slot).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GridscanPush {
    pub dispatches: u64,
    pub schedules: u64,
}

const _: () = assert!(core::mem::size_of::<NodeSchedule>() == 40);
const _: () = assert!(core::mem::size_of::<EntryPush>() == 64);
const _: () = assert!(core::mem::offset_of!(EntryPush, ranks) == 56);
const _: () = assert!(core::mem::size_of::<AdvancePush>() == 56);
const _: () = assert!(core::mem::size_of::<PlanPush>() == 48);
const _: () = assert!(core::mem::size_of::<GridscanPush>() == 16);

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
