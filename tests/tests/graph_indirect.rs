//! `vkCmdDispatchGraphIndirectAMDX` and `vkCmdDispatchGraphIndirectCountAMDX`
//! (issue 5) on the hello chain: infos and payloads in device memory, the
//! count on the host or in device memory too. An info naming a node out of
//! range is dropped on the GPU, flagged, and reported at the fence wait
//! through the debug-utils messenger; the others run and match the CPU model.

use ash::vk;
use conformance_tests::graph::TestGraph;
use conformance_tests::models::hello_chain;
use conformance_tests::{HostBuffer, InstanceOptions, TestDevice, TestInstance};

/// A `VkDispatchGraphInfoAMDX` as 6 words.
fn info(node: u32, count: u32, payloads: u64, stride: u64) -> [u32; 6] {
    [node, count, payloads as u32, (payloads >> 32) as u32, stride as u32, (stride >> 32) as u32]
}

fn device_buffer(dev: &TestDevice<'_>, words: &[u32]) -> HostBuffer {
    let usage = vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS | vk::BufferUsageFlags::INDIRECT_BUFFER;
    let buffer = dev.create_host_buffer(4 * words.len().max(1) as u64, usage).expect("buffer");
    buffer.write_u32(words).expect("write");
    buffer
}

#[test]
fn indirect_and_indirect_count_dispatches() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    inst.log().tolerate("EMU-SE-execution-graph-status");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let (indirect, indirect_count) = (graph.fns.dispatch_indirect, graph.fns.dispatch_indirect_count);
        // firstNode records (grid, index), packed; secondNode records
        // (index, increment) at a 16-byte stride with padding.
        let first = [(3u32, 0u32), (1, 2)];
        let second = [(1u32, 40u32), (3, 5), (1, 2)];
        let first_payloads = device_buffer(&dev, &first.iter().flat_map(|&(g, r)| [g, r]).collect::<Vec<_>>());
        let second_payloads =
            device_buffer(&dev, &second.iter().flat_map(|&(r, i)| [r, i, 0xdead, 0xbeef]).collect::<Vec<_>>());
        let (p1, p2) = (first_payloads.address.expect("address"), second_payloads.address.expect("address"));
        let infos_words: Vec<u32> =
            [info(0, 2, p1, 8), info(99, 5, p1, 8), info(1, 3, p2, 16)].into_iter().flatten().collect();
        let infos = device_buffer(&dev, &infos_words);
        let infos_address = infos.address.expect("address");
        // VkDispatchGraphCountInfoAMDX { count, (pad), infos, stride } in device memory.
        let count_info = device_buffer(&dev, &[3, 0, infos_address as u32, (infos_address >> 32) as u32, 24, 0]);
        let want = hello_chain(&first, &second);
        let scratch_address = scratch.address.expect("address");

        for use_count_info in [false, true] {
            uav.write_u32(&[0; 8]).expect("clear");
            dev.submit_once(|cb| {
                // SAFETY: recording valid commands.
                unsafe {
                    graph.bind(cb, graph.pipeline);
                    (graph.fns.init_scratch)(cb, graph.pipeline, scratch_address, scratch.size);
                    if use_count_info {
                        indirect_count(cb, scratch_address, scratch.size, count_info.address.expect("address"));
                    } else {
                        let host = vk::DispatchGraphCountInfoAMDX {
                            count: 3,
                            infos: vk::DeviceOrHostAddressConstAMDX { device_address: infos_address },
                            stride: 24,
                        };
                        indirect(cb, scratch_address, scratch.size, &host);
                    }
                    dev.host_read_barrier(cb);
                }
            })
            .expect("submit");
            assert_eq!(uav.read_u32(8).expect("read"), want, "count info on the device: {use_count_info}");
        }
        let reports = inst.log().tolerated();
        assert_eq!(reports.len(), 2, "one report per dispatch: {reports:?}");
        assert!(reports.iter().all(|r| r.contains("not an API entry")), "{reports:?}");
    }
    inst.finish();
}
