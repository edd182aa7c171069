//! Host-side API misuse of the dispatch commands (issue 5): a null
//! `pCountInfo`, a scratch size of 0 or below minSize, a node that is not an
//! API entry, a node index out of range. Each is logged by the layer and
//! records no GPU work; nothing crashes, the validation layer stays silent,
//! and a correct dispatch afterwards still works. Hostile counts (issue 12)
//! are rejected before the layer allocates anything for them.

use ash::vk;
use conformance_tests::dxc_models::bytes_of;
use conformance_tests::graph::{Stage, TestGraph};
use conformance_tests::{HostBuffer, InstanceOptions, TestDevice, TestInstance};

const SHARES: &[u8] = include_bytes!("../../spirv-lowering/tests/corpus/21_shares_input.spv");

/// Runs `body` with a fresh instance and device with the extension.
fn with_device(body: impl FnOnce(&TestDevice<'_>)) {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        body(&dev);
    }
    inst.finish();
}

/// The SharesInputWithAMDX graph (corpus 21) writing into 16 words that
/// start as 7s, its smallest scratch, and a record for `base`.
struct Shares<'d> {
    dev: &'d TestDevice<'d>,
    out: HostBuffer,
    graph: TestGraph<'d>,
    min: u64,
    scratch: HostBuffer,
    address: u64,
    base: u32,
    record: Vec<u8>,
}

impl<'d> Shares<'d> {
    fn new(dev: &'d TestDevice<'d>) -> Self {
        let out = dev.create_host_buffer(64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        out.write_u32(&[7; 16]).expect("fill");
        let stages = [Stage { entry: "base", node: None }, Stage { entry: "sharer", node: None }];
        let graph = TestGraph::new(dev, SHARES, &stages, &[&out], 0).expect("graph");
        let (min, _, _) = graph.scratch_sizes().expect("sizes");
        let scratch = graph.scratch(min).expect("scratch");
        let address = scratch.address.expect("address");
        let base = graph.node_index("base", 0).expect("base");
        let record = bytes_of(&[2u32, 5]);
        Shares { dev, out, graph, min, scratch, address, base, record }
    }

    /// What the rejected dispatches left: nothing; then a valid dispatch works.
    fn untouched_then_works(&self, what: &str) {
        assert_eq!(self.out.read_u32(16).expect("read"), vec![7; 16], "{what} record nothing");
        let (graph, scratch) = (&self.graph, &self.scratch);
        self.dev
            .submit_once(|cb| graph.record(cb, scratch, false, &[(self.base, &self.record, 1, 8)]))
            .expect("valid dispatch");
        let got = self.out.read_u32(16).expect("read");
        assert_eq!((got[2], got[3]), (5, 6));
    }
}

#[test]
fn misuse_records_nothing() {
    with_device(|dev| {
        let g = Shares::new(dev);
        let (graph, min, address, base, record) = (&g.graph, g.min, g.address, g.base, &g.record);
        let sharer = graph.node_index("sharer", 0).expect("sharer");
        let indirect = graph.fns.dispatch_indirect;
        let info = |node: u32| vk::DispatchGraphInfoAMDX {
            node_index: node,
            payload_count: 1,
            payloads: vk::DeviceOrHostAddressConstAMDX { host_address: record.as_ptr().cast() },
            payload_stride: 8,
        };
        let (to_base, to_sharer, out_of_range) = ([info(base)], [info(sharer)], [info(57)]);
        let count_info = |infos: &[vk::DispatchGraphInfoAMDX]| vk::DispatchGraphCountInfoAMDX {
            count: 1,
            infos: vk::DeviceOrHostAddressConstAMDX { host_address: infos.as_ptr().cast() },
            stride: std::mem::size_of::<vk::DispatchGraphInfoAMDX>() as u64,
        };
        dev.submit_once(|cb| {
            // SAFETY: recording; every misuse below is answered by the layer, not the driver.
            unsafe {
                graph.bind(cb, graph.pipeline);
                (graph.fns.init_scratch)(cb, graph.pipeline, address, min);
                (graph.fns.dispatch)(cb, address, min, std::ptr::null());
                indirect(cb, address, min, std::ptr::null());
                (graph.fns.dispatch)(cb, address, 0, &count_info(&to_base));
                (graph.fns.dispatch)(cb, address, min - 4096, &count_info(&to_base));
                (graph.fns.dispatch)(cb, address, min, &count_info(&to_sharer));
                (graph.fns.dispatch)(cb, address, min, &count_info(&out_of_range));
            }
        })
        .expect("submit");
        // The command buffer was not poisoned and the graph still works.
        g.untouched_then_works("misused dispatches");
    });
}

/// Peak resident memory of this process (`VmHWM`), in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or("VmHWM: 0 kB");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// `payloadCount = 0xFFFFFFFF` with stride 0, `payloadCount = 2^28`, and
/// `count = 0xFFFFFFFF` infos: each is rejected from the counts alone (the
/// layer used to build a copy of the payloads first: 34 GB and an abort, or
/// 8 GB), nothing is recorded, and the graph still works afterwards.
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
        let before = peak_rss_kib();
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
        let grown_mib = peak_rss_kib().saturating_sub(before) / 1024;
        assert!(grown_mib < 256, "peak memory grew by {grown_mib} MiB");
        g.untouched_then_works("rejected dispatches");
    });
}

/// A host record whose grid exceeds the node's MaxNumWorkgroupsAMDX:
/// the dispatch is rejected when it is recorded (it used to launch four
/// billion workgroups, and the fence never signalled); the graph still works
/// afterwards.
#[test]
fn host_grids_past_the_node_maximum_are_rejected() {
    use conformance_tests::models::add_hello_chain;
    with_device(|dev| {
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(dev, &uav).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let first = graph.node_index("firstNode", 0).expect("first");
        let le = |w: &[u32]| w.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>();
        // firstNode's MaxNumWorkgroupsAMDX is 16: 2^32 - 1, and 17 in the second of two records.
        let (huge, just_over) = (le(&[u32::MAX, 1]), le(&[16, 1, 17, 2]));
        for (records, count) in [(&huge, 1), (&just_over, 2)] {
            dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(first, records, count, 8)])).expect("submit");
        }
        assert_eq!(uav.read_u32(8).expect("read"), vec![0; 8], "rejected dispatches record nothing");
        dev.submit_once(|cb| graph.record(cb, &scratch, false, &[(first, &le(&[2, 3]), 1, 8)])).expect("valid");
        let mut want = vec![0u32; 8];
        add_hello_chain(&mut want, &[(2, 3)], &[]);
        assert_eq!(uav.read_u32(8).expect("read"), want);
    });
}

/// Graph dispatches are not allowed in secondary command buffers (revision 2,
/// "Dispatch a graph"): the layer logs and records nothing; the secondary
/// still runs its other commands, and a primary dispatch afterwards works.
#[test]
fn no_graph_dispatch_in_a_secondary_command_buffer() {
    with_device(|dev| {
        let g = Shares::new(dev);
        let d = &dev.device;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(dev.pool)
            .level(vk::CommandBufferLevel::SECONDARY)
            .command_buffer_count(1);
        // SAFETY: valid device and pool.
        let secondary = unsafe { d.allocate_command_buffers(&alloc) }.expect("secondary")[0];
        let inheritance = vk::CommandBufferInheritanceInfo::default();
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)
            .inheritance_info(&inheritance);
        // SAFETY: a fresh secondary command buffer of this device.
        unsafe { d.begin_command_buffer(secondary, &begin) }.expect("begin");
        g.graph.record(secondary, &g.scratch, true, &[(g.base, &g.record, 1, 8)]);
        // SAFETY: recording.
        unsafe { d.end_command_buffer(secondary) }.expect("end");
        // SAFETY: the secondary is executable and outlives the submission.
        dev.submit_once(|cb| unsafe { d.cmd_execute_commands(cb, &[secondary]) }).expect("execute");
        // SAFETY: idle after submit_once.
        unsafe { d.free_command_buffers(dev.pool, &[secondary]) };
        g.untouched_then_works("a dispatch in a secondary command buffer");
    });
}
