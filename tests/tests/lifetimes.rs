//! Memory across instance lifetimes (issue 12). The loader loads the layer
//! for each instance and unloads it when the last one is destroyed; the
//! layer is linked `-z nodelete` (`layer/build.rs`) so that its statics are
//! made once per process instead of being lost at each unload (about 210 KiB
//! per lifetime before).
//!
//! Measured with glibc's count of bytes in use on the heap (`mallinfo2`),
//! which sees every allocation of the process, the loader's and the driver's
//! included; resident memory is printed too but moves in steps with the
//! allocator's arenas. A baseline without the layer comes first: the loader
//! and lavapipe 22.3 keep a few hundred bytes per lifetime themselves (590
//! to 640 here; with the layer, 140: the layer adds nothing). Each
//! lifetime with the layer creates an instance, a device and the hello-chain
//! graph, dispatches it, checks the result and destroys everything.
//!
//! The validation layer is left out: it is unloaded and reloaded with every
//! instance too, and its memory is not the layer's to answer for.

use ash::vk;
use conformance_tests::dxc_models::bytes_of;
use conformance_tests::graph::TestGraph;
use conformance_tests::models::hello_chain;
use conformance_tests::{run_scale_add, InstanceOptions, TestDevice, TestInstance};

const WARM_UP: usize = 10;
const LIFETIMES: usize = 100;

/// Heap growth per lifetime the layer may add to the baseline's: a
/// two-hundredth of the old leak.
const ALLOWED_BYTES_PER_LIFETIME: f64 = 1024.0;

/// glibc's `struct mallinfo2`.
#[repr(C)]
struct MallInfo2 {
    arena: usize,
    ordblks: usize,
    smblks: usize,
    hblks: usize,
    hblkhd: usize,
    usmblks: usize,
    fsmblks: usize,
    uordblks: usize,
    fordblks: usize,
    keepcost: usize,
}

extern "C" {
    fn mallinfo2() -> MallInfo2;
    /// The C library's page size (what `/proc/self/statm` counts in).
    fn getpagesize() -> std::ffi::c_int;
}

/// Bytes the process has allocated with malloc and not freed.
fn heap_in_use() -> usize {
    // SAFETY: mallinfo2 has no preconditions (glibc 2.33 and later).
    let info = unsafe { mallinfo2() };
    info.uordblks + info.hblkhd
}

/// Resident set size of this process, in KiB.
fn resident_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("resident pages");
    // SAFETY: getpagesize has no preconditions.
    let page = u64::try_from(unsafe { getpagesize() }).expect("page size");
    pages * page / 1024
}

/// The baseline: a compute dispatch on a device of an instance without the layer.
fn plain_lifetime() {
    let opts = InstanceOptions { our_layer: false, validation: false, ..InstanceOptions::with_layer() };
    let inst = TestInstance::new(&opts).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::new(&inst, pd, &[]).expect("device");
        assert_eq!(run_scale_add(&dev, &[1, 2, 3], 2, 1).expect("dispatch"), vec![3, 5, 7]);
    }
    inst.finish();
}

/// A graph dispatched through the layer.
fn graph_lifetime() {
    let opts = InstanceOptions { validation: false, ..InstanceOptions::with_layer() };
    let inst = TestInstance::new(&opts).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let entry = graph.node_index("firstNode", 0).expect("entry");
        let records = bytes_of(&[3u32, 1]);
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(entry, &records, 1, 8)])).expect("submit");
        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&[(3, 1)], &[]));
    }
    inst.finish();
}

/// Heap bytes gained per lifetime of `lifetime`, after a warm-up.
fn growth_per_lifetime(name: &str, lifetime: fn()) -> f64 {
    for _ in 0..WARM_UP {
        lifetime();
    }
    let (heap, resident) = (heap_in_use(), resident_kib());
    for _ in 0..LIFETIMES {
        lifetime();
    }
    let per_lifetime = (heap_in_use() as f64 - heap as f64) / LIFETIMES as f64;
    eprintln!(
        "{name}: {LIFETIMES} lifetimes: heap {per_lifetime:+.0} bytes per lifetime; resident {resident} -> {} KiB",
        resident_kib()
    );
    per_lifetime
}

#[test]
fn instance_lifetimes_keep_memory_flat() {
    let baseline = growth_per_lifetime("without the layer", plain_lifetime);
    let with_layer = growth_per_lifetime("with the layer", graph_lifetime);
    assert!(
        with_layer - baseline <= ALLOWED_BYTES_PER_LIFETIME,
        "the layer loses {:.0} bytes per instance lifetime (baseline {baseline:.0}, with the layer {with_layer:.0})",
        with_layer - baseline
    );
}
