//! Hostile host counts (issue 12): `payloadCount = 0xFFFFFFFF` with stride
//! 0, `payloadCount = 2^28`, and `count = 0xFFFFFFFF` infos are each
//! rejected from the counts alone (the layer used to build a copy of the
//! payloads first: 34 GB and an abort, or 8 GB), nothing is recorded, and
//! the graph still works afterwards.
//!
//! What is measured is the process's peak resident memory while the
//! dispatches are recorded and submitted, over what was resident when they
//! started: the peak is reset just before (`/proc/self/clear_refs`), so the
//! setup's own peak (pipeline compilation) cannot hide an allocation below
//! it. Own file with one test: the peak is the process's, and other tests
//! running beside it would add theirs.

mod shares_graph;

use ash::vk;
use shares_graph::{with_device, Shares};

/// Peak growth allowed: far below the old copies (8 GB and more), far above
/// what recording the rejected dispatches takes (under 1 MiB here).
const ALLOWED_MIB: u64 = 64;

/// Peak resident memory of this process (`VmHWM`), in KiB.
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or_else(|| panic!("no VmHWM in {status}"));
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{line}"))
}

/// Resets the peak resident memory (`VmHWM`) to what is resident now
/// (Linux 4.0 and later) and returns that, in KiB.
fn reset_peak_kib() -> u64 {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset the peak through /proc/self/clear_refs");
    peak_kib()
}

#[test]
fn hostile_host_counts_are_rejected_before_allocating() {
    with_device(|dev| {
        let g = Shares::new(dev);
        let (graph, min, address, base, record) = (&g.graph, g.min, g.address, g.base, &g.record);
        let info = |payload_count: u32, payload_stride: u64| vk::DispatchGraphInfoAMDX {
            node_index: base,
            payload_count,
            payloads: vk::DeviceOrHostAddressConstAMDX { host_address: record.as_ptr().cast() },
            payload_stride,
        };
        let (all_ones, many) = ([info(u32::MAX, 0)], [info(1 << 28, 0)]);
        let count_info = |infos: &[vk::DispatchGraphInfoAMDX], count: u32| vk::DispatchGraphCountInfoAMDX {
            count,
            infos: vk::DeviceOrHostAddressConstAMDX { host_address: infos.as_ptr().cast() },
            stride: std::mem::size_of::<vk::DispatchGraphInfoAMDX>() as u64,
        };
        let before = reset_peak_kib();
        dev.submit_once(|cb| {
            // SAFETY: recording; the layer must reject each dispatch before
            // reading past the one info (or the one payload) given.
            unsafe {
                graph.bind(cb, graph.pipeline);
                (graph.fns.init_scratch)(cb, graph.pipeline, address, min);
                (graph.fns.dispatch)(cb, address, min, &count_info(&all_ones, 1));
                (graph.fns.dispatch)(cb, address, min, &count_info(&many, 1));
                (graph.fns.dispatch)(cb, address, min, &count_info(&all_ones, u32::MAX));
            }
        })
        .expect("submit");
        let grown_kib = peak_kib().saturating_sub(before);
        eprintln!("peak resident memory grew by {grown_kib} KiB");
        assert!(grown_kib < ALLOWED_MIB * 1024, "peak memory grew by {} MiB", grown_kib / 1024);
        g.untouched_then_works("rejected dispatches");
    });
}
