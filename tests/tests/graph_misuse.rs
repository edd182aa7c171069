//! Host-side API misuse of the dispatch commands (issue 5): a null
//! `pCountInfo`, a scratch size of 0 or below minSize, a node that is not an
//! API entry, a node index out of range. Each is logged by the layer and
//! records no GPU work; nothing crashes, the validation layer stays silent,
//! and a correct dispatch afterwards still works. Hostile counts (issue 12)
//! have their own file, `graph_hostile_counts.rs`: it measures the
//! process's peak memory.

mod shares_graph;

use ash::vk;
use conformance_tests::graph::TestGraph;
use shares_graph::{with_device, Shares};

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
