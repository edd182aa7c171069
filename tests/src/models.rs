//! CPU models of the graphs the tests run, to compare the GPU's results with.

/// The D3D12HelloWorkGraphs chain (corpus module 01) adding onto `uav`
/// (8 words): entry records `(grid, record index)` of firstNode and
/// `(record index, increment)` of secondNode. firstNode runs 2 threads a
/// workgroup; thread `gid` of record r's grid sends increment `gid*2 + t + 1`
/// (t = gid % 2) to secondNode, which adds it to `uav[r]` and forwards r to
/// thirdNode, which counts records per r into `uav[4 + r]`.
pub fn add_hello_chain(uav: &mut [u32], first: &[(u32, u32)], second: &[(u32, u32)]) {
    for &(grid, r) in first {
        for gid in 0..grid * 2 {
            uav[r as usize] += gid * 2 + gid % 2 + 1;
            uav[4 + r as usize] += 1;
        }
    }
    for &(r, increment) in second {
        uav[r as usize] += increment;
        uav[4 + r as usize] += 1;
    }
}

/// [`add_hello_chain`] onto a cleared UAV.
pub fn hello_chain(first: &[(u32, u32)], second: &[(u32, u32)]) -> Vec<u32> {
    let mut uav = vec![0u32; 8];
    add_hello_chain(&mut uav, first, second);
    uav
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_record_of_one_group() {
        // Threads 0 and 1: increments 1 and 4.
        assert_eq!(hello_chain(&[(1, 2)], &[]), vec![0, 0, 5, 0, 0, 0, 2, 0]);
    }
}
