//! Where a record's parts lie in memory (see the `abi` module doc): the
//! stride between records and the TrackFinishWriting counter.

use crate::layout::round_up;

/// Record stride of a payload struct (see the `abi` module doc).
pub fn record_stride(size: u32, align: u32, track: bool) -> Option<u32> {
    let base = round_up(size, 4)?.checked_add(if track { 4 } else { 0 })?;
    round_up(base, align.max(4)).map(|s| s.max(4))
}

/// Byte offset of the TrackFinishWriting counter inside a record.
pub fn finish_counter_offset(size: u32) -> u32 {
    round_up(size, 4).unwrap_or(size)
}
