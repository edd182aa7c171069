//! Memory across instance lifetimes (issue 12). The loader loads the layer
//! for each instance and unloads it when the last one is destroyed; the
//! layer is linked `-z nodelete` (`layer/build.rs`) so that its statics are
//! made once per process instead of being lost at each unload (about 210 KB
//! per lifetime before). Each lifetime here creates an instance, a device,
//! the hello-chain graph, dispatches it and checks the result, and destroys
//! everything; after a warm-up the resident set must stay flat.
//!
//! The validation layer is left out: it is unloaded and reloaded with every
//! instance too, and its memory is not the layer's to answer for.

use ash::vk;
use conformance_tests::graph::TestGraph;
use conformance_tests::models::hello_chain;
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

const WARM_UP: usize = 10;
const LIFETIMES: usize = 100;

/// Average growth allowed per lifetime: a twentieth of the old leak, room
/// for the allocator's and the driver's noise.
const ALLOWED_KB_PER_LIFETIME: f64 = 10.0;

/// Resident set size of this process, in KiB.
fn resident_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("resident pages");
    // SAFETY: getpagesize has no preconditions.
    let page = u64::try_from(unsafe { getpagesize() }).expect("page size");
    pages * page / 1024
}

extern "C" {
    /// The C library's page size (what `/proc/self/statm` counts in).
    fn getpagesize() -> std::ffi::c_int;
}

fn lifetime(opts: &InstanceOptions<'_>) {
    let inst = TestInstance::new(opts).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let entry = graph.node_index("firstNode", 0).expect("entry");
        let records: Vec<u8> = [3u32, 1].iter().flat_map(|w| w.to_le_bytes()).collect();
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(entry, &records, 1, 8)])).expect("submit");
        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&[(3, 1)], &[]));
    }
    inst.finish();
}

#[test]
fn instance_lifetimes_keep_memory_flat() {
    let opts = InstanceOptions { validation: false, ..InstanceOptions::with_layer() };
    for _ in 0..WARM_UP {
        lifetime(&opts);
    }
    let before = resident_kib();
    for _ in 0..LIFETIMES {
        lifetime(&opts);
    }
    let after = resident_kib();
    let per_lifetime = after.saturating_sub(before) as f64 / LIFETIMES as f64;
    eprintln!("{LIFETIMES} lifetimes: {before} KiB -> {after} KiB resident ({per_lifetime:.1} KiB per lifetime)");
    assert!(
        per_lifetime <= ALLOWED_KB_PER_LIFETIME,
        "{per_lifetime:.1} KiB lost per instance lifetime ({before} -> {after} KiB over {LIFETIMES})"
    );
}
