//! The D3D12HelloWorkGraphs chain (corpus module 01): its SPIR-V, its entry
//! records, a CPU model of what it computes, and the result table.
//!
//! firstNode (broadcast, grid from the record, 2 threads a workgroup) sends
//! one record per thread to secondNode (thread launch), which atomically
//! adds `gid * 2 + t + 1` to `UAV[r]` and forwards `r` to thirdNode
//! (coalescing, up to 32 records a workgroup), which counts into `UAV[4 + r]`.

use std::ffi::CStr;

/// The chain's node shaders (see its `.spvasm` for the HLSL and semantics).
pub const SPV: &[u8] = include_bytes!("../../spirv-lowering/tests/corpus/01_hello_chain.spv");

/// Entry points, in graph order.
/// The graph's node stages: (entry point, node index override; `u32::MAX` keeps the shader's).
pub const NODES: [(&CStr, u32); 3] = [(c"firstNode", u32::MAX), (c"secondNode", u32::MAX), (c"thirdNode", u32::MAX)];

/// Words of the storage buffer: 4 sums, then 4 counts.
pub const UAV_WORDS: usize = 8;

/// firstNode's `MaxNumWorkgroupsAMDX` x.
pub const MAX_GRID: u32 = 16;

/// The entry records' grids (the sample sends 4 records; 1..=16 each).
pub const GRIDS: [u32; 4] = [16, 3, 9, 12];

/// Entry records `{ gridSize, recordIndex }` as bytes (stride 8).
pub fn entry_records(grids: &[u32]) -> Vec<u8> {
    grids.iter().enumerate().flat_map(|(r, &g)| [g, r as u32]).flat_map(u32::to_le_bytes).collect()
}

/// The storage buffer after one dispatch, from a zeroed one.
pub fn model(grids: &[u32]) -> [u32; UAV_WORDS] {
    let mut uav = [0u32; UAV_WORDS];
    for (r, &g) in grids.iter().enumerate() {
        for wg in 0..g {
            for t in 0..2 {
                let gid = wg * 2 + t;
                uav[r] += gid * 2 + t + 1;
                uav[4 + r] += 1;
            }
        }
    }
    uav
}

/// One line on how much work the graph does for `grids`.
pub fn workload(grids: &[u32]) -> String {
    let groups: u32 = grids.iter().sum();
    let records = groups * 2;
    format!(
        "work: firstNode {groups} workgroups x 2 threads -> secondNode {records} records \
         -> thirdNode {records} records (>= {} workgroups of 32)",
        records.div_ceil(32)
    )
}

/// Prints record, grid, sum and count against the model; true when all match.
pub fn print_table(grids: &[u32], got: &[u32]) -> bool {
    let want = model(grids);
    println!("  record  grid  sum (GPU)  sum (CPU)  count (GPU)  count (CPU)");
    let mut ok = got.len() == UAV_WORDS;
    for (r, &g) in grids.iter().enumerate() {
        let (sum, count) = (got.get(r).copied().unwrap_or(0), got.get(4 + r).copied().unwrap_or(0));
        let row_ok = sum == want[r] && count == want[4 + r];
        ok &= row_ok;
        let mark = if row_ok { "ok" } else { "MISMATCH" };
        println!("  {r:>6}  {g:>4}  {sum:>9}  {:>9}  {count:>11}  {:>11}  {mark}", want[r], want[4 + r]);
    }
    ok
}

/// True when `got` equals the model.
pub fn matches(grids: &[u32], got: &[u32]) -> bool {
    got == model(grids).as_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_of_one_workgroup() {
        // gid 0 (t 0) adds 1, gid 1 (t 1) adds 4.
        assert_eq!(model(&[1, 0, 0, 0]), [5, 0, 0, 0, 2, 0, 0, 0]);
    }

    #[test]
    fn records_are_grid_then_index() {
        assert_eq!(entry_records(&[7, 9])[..], [7, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn grids_fit_the_node() {
        assert!(GRIDS.iter().all(|&g| (1..=MAX_GRID).contains(&g)));
    }
}
