//! The `statistics` setting: what every graph dispatch did, counted on the
//! GPU and read back at the next host synchronisation point that proves it
//! finished (with the dispatch's status, see `ffi::report`).
//!
//! The recorder copies, into host-visible memory the command buffer holds
//! (a staging block): before each level, each of its nodes' `NodeDispatch`
//! workgroup and record counts (8 bytes each; final by then; level 0 of a
//! host dispatch is written on the host, which knows them); after each
//! level, the frames its records took (`GraphContext::claimed` of its
//! parity, which the copy then clears: nothing else does), beside the
//! frame pool's size, written on the host. Both copies of one level
//! boundary are one `vkCmdCopyBuffer`. Off, nothing is recorded; on, each
//! level costs a copy, a clear and three barriers. Each dispatch becomes one
//! log line (info) and, when the setting names a file, one JSON line there.

use crate::dispatch::mapped::HostRange;
use serde_json::{json, Value};
use spirv_lowering::abi::{GraphContext, NodeDispatch};
use std::mem::offset_of;

/// Bytes per level before its nodes' counts: the frames the level claimed
/// (copied), the pool's frames and a frame's bytes (host-written), zero.
pub const LEVEL_HEADER: u64 = 16;
/// Bytes copied per node: `workgroup_count` and `record_count`.
pub const NODE_COUNTS: u64 = 8;

/// Where in the `GraphContext` the claimed frames of parity 0 are copied
/// from (parity 1's follow).
pub const CLAIMED_OFFSET: u64 = offset_of!(GraphContext, claimed) as u64;
/// Where in a `NodeDispatch` the node counts are copied from.
pub const DISPATCH_OFFSET: u64 = offset_of!(NodeDispatch, workgroup_count) as u64;

const _: () = assert!(offset_of!(NodeDispatch, record_count) as u64 == DISPATCH_OFFSET + 4);

/// The statistics a recorded dispatch will leave, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statistics {
    /// The copies: a mapped staging block the command buffer holds until
    /// it is reset, begun again or freed.
    pub host: HostRange,
    /// Per level, the nodes dispatched, as (name, index), in copy order.
    pub levels: Vec<Vec<(String, u32)>>,
}

/// Bytes of the copies of a dispatch with levels of these sizes.
pub fn bytes(level_sizes: impl Iterator<Item = usize>) -> u64 {
    level_sizes.map(|n| LEVEL_HEADER + NODE_COUNTS * n as u64).sum()
}

/// Byte offset of level `d`'s copies.
pub fn level_offset(levels: &[Vec<(String, u32)>], d: usize) -> u64 {
    bytes(levels.iter().take(d).map(Vec::len))
}

impl Statistics {
    /// The word at `offset` of the block (inside the bytes reserved for
    /// these statistics, see [`bytes`]; the submission that wrote it has
    /// finished).
    fn word(&self, offset: u64) -> u32 {
        self.host.read_word(offset)
    }

    /// The dispatch as JSON: per level, the frames its records took against
    /// the pool's, and records and workgroups per node.
    pub fn read(&self) -> Value {
        let mut high_water = 0u32;
        let mut capacity = 0u32;
        let mut frame_bytes = 0u32;
        let levels: Vec<Value> = self
            .levels
            .iter()
            .enumerate()
            .map(|(d, nodes)| {
                let at = level_offset(&self.levels, d);
                let frames = self.word(at);
                capacity = self.word(at + 4);
                frame_bytes = self.word(at + 8);
                high_water = high_water.max(frames);
                let nodes: Vec<Value> = nodes
                    .iter()
                    .enumerate()
                    .map(|(i, (name, index))| {
                        let counts = at + LEVEL_HEADER + NODE_COUNTS * i as u64;
                        json!({
                            "node": name,
                            "index": index,
                            "workgroups": self.word(counts),
                            "records": self.word(counts + 4),
                        })
                    })
                    .collect();
                json!({ "level": d, "frames": frames, "nodes": nodes })
            })
            .collect();
        json!({ "levels": levels, "frames_high_water": high_water, "frame_count": capacity, "frame_bytes": frame_bytes })
    }
}
