//! The layer's meta compute shaders, which build level 0 of a graph dispatch
//! whose inputs are in device memory (`vkCmdDispatchGraphIndirect*AMDX`):
//! `entry.comp` puts the records in their nodes' frames, `plan.comp` sizes
//! the launches; and `grids.comp`, which gives the many dynamic-grid records
//! of a host dispatch their starts on the GPU; between levels nothing runs
//! but the node kernels (see `spirv_lowering::abi`). GLSL sources in
//! `glsl/`, compiled with
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
    /// `entry.comp`: checks GPU-read entry infos and copies their payloads,
    /// by rank, into their nodes' frames.
    ENTRY, "../glsl/entry.spv"
);
shader!(
    /// `plan.comp`: level 0's dispatch arguments, dynamic grids' entries and
    /// counter resets, after `entry.comp`.
    PLAN, "../glsl/plan.spv"
);

shader!(
    /// `grids.comp`: the starts of a host dispatch's dynamic-grid records and
    /// level 0's launch sizes, in two phases.
    GRIDS, "../glsl/grids.spv"
);

/// Every meta shader with its source file name, for tests and tools.
pub const ALL: [(&str, &[u32]); 3] = [("entry", &ENTRY), ("plan", &PLAN), ("grids", &GRIDS)];

/// Workgroup size of `entry.comp` (one workgroup copies one info's payloads at a time).
pub const ENTRY_WORKGROUP: u32 = 64;
/// Workgroup size of `plan.comp` (dispatched with one workgroup).
pub const PLAN_WORKGROUP: u32 = 256;
/// Workgroup size of `grids.comp` (one workgroup a chunk of records).
pub const GRIDS_WORKGROUP: u32 = 256;

pub use spirv_lowering::abi::{
    NodeSchedule, SCHEDULE_BATCHED, SCHEDULE_DYNAMIC, SCHEDULE_FLAG_API_ENTRY, SCHEDULE_STATIC, STATUS_INVALID_ENTRY,
    STATUS_RECORD_OVERFLOW,
};

/// Push constants of `entry.comp`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntryPush {
    /// The graph context (every table, the frame pool, the tag of level 0).
    pub ctx: u64,
    /// Device address of a `VkDispatchGraphCountInfoAMDX`, or 0 when the
    /// next three fields come from the host.
    pub count_info: u64,
    pub infos: u64,
    pub info_stride: u64,
    pub count: u32,
    /// Zero.
    pub reserved: u32,
}

/// Push constants of `plan.comp`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanPush {
    /// The graph context.
    pub ctx: u64,
    /// Device address of the dispatch's host-visible status words (0: none):
    /// the status after the inputs goes to word 0, and to every level-0
    /// `NodeDispatch` (`status`, `status_in`).
    pub status: u64,
}

/// Push constants of `grids.comp`: one dynamic-grid node's records in a
/// host dispatch's staging block, and level 0's launches there.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GridsPush {
    /// Device address of the node's records, `stride` bytes apart.
    pub records: u64,
    /// Where each record's first workgroup goes (`count` words).
    pub starts: u64,
    /// Phase 0's sums, 16 bytes a chunk.
    pub sums: u64,
    /// Level 0's `launches` `NodeDispatch`es.
    pub dispatches: u64,
    /// Device address of the dispatch's host-visible status words (0: none).
    pub status: u64,
    pub count: u32,
    pub stride: u32,
    /// The grid's place in a record (`NodeSchedule`'s fields of those names).
    pub grid_offset: u32,
    pub grid_bytes: u32,
    pub grid_components: u32,
    /// The largest grid a record may ask for, per dimension.
    pub max_grid_x: u32,
    pub max_grid_y: u32,
    pub max_grid_z: u32,
    pub launches: u32,
    /// Bit `i`: launch `i` takes the grids' total as its workgroups (the
    /// others keep the `workgroup_count` the host wrote).
    pub grid_launches: u32,
    /// 0: the chunks' sums; 1: the starts and the launches.
    pub phase: u32,
    /// Workgroups of each phase, a chunk each (at most [`GRIDS_MAX_CHUNKS`]).
    pub chunks: u32,
    /// Records an invocation takes in its chunk.
    pub per_invocation: u32,
    /// Zero.
    pub reserved: u32,
}

/// The most chunks `grids.comp` runs: every workgroup of phase 1 reads the
/// sums of all of them.
pub const GRIDS_MAX_CHUNKS: u32 = 1024;
/// Records an invocation of `grids.comp` takes until the chunks run out (a
/// chunk of 1024 records): small chunks, many workgroups; on the H200 both
/// phases took 11 µs for fanout's 64k records against 18 µs with 16.
pub const GRIDS_PER_INVOCATION: u32 = 4;

impl GridsPush {
    /// Chunks and records per invocation for `count` records: chunks of up
    /// to [`GRIDS_PER_INVOCATION`] records an invocation, larger ones
    /// past [`GRIDS_MAX_CHUNKS`].
    pub fn chunking(count: u32) -> (u32, u32) {
        let per_chunk_min = GRIDS_WORKGROUP * GRIDS_PER_INVOCATION;
        let chunks = count.div_ceil(per_chunk_min).clamp(1, GRIDS_MAX_CHUNKS);
        let per_invocation = count.div_ceil(chunks * GRIDS_WORKGROUP).max(1);
        (chunks, per_invocation)
    }
}

const _: () = assert!(core::mem::size_of::<GridsPush>() == 96);
const _: () = assert!(core::mem::size_of::<EntryPush>() == 40);
const _: () = assert!(core::mem::offset_of!(EntryPush, count) == 32);
const _: () = assert!(core::mem::size_of::<PlanPush>() == 16);

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
    fn grid_chunks_cover_every_record() {
        for count in [1, 4095, 4096, 4097, 65536, 1 << 22, (1 << 22) + 1, 1 << 26] {
            let (chunks, per) = GridsPush::chunking(count);
            assert!((1..=GRIDS_MAX_CHUNKS).contains(&chunks), "{count}: {chunks}");
            assert!(u64::from(chunks) * u64::from(GRIDS_WORKGROUP) * u64::from(per) >= u64::from(count), "{count}");
            // Larger shares only once the chunks run out.
            assert!(per <= GRIDS_PER_INVOCATION || chunks == GRIDS_MAX_CHUNKS, "{count}: {per}");
        }
    }

    #[test]
    fn shaders_are_spirv() {
        for (name, words) in ALL {
            assert_eq!(words.first(), Some(&0x0723_0203), "{name}");
        }
    }
}
