//! Overflow safety (issue 5): work that does not fit the scratch memory
//! raises a flag and is dropped; nothing is written outside
//! `[scratch, scratch + scratchSize)`, which lies inside a larger buffer
//! whose guard bytes are checked afterwards; nothing hangs. At minSize the
//! hello chain below does not fit; at maxSize it must compute exactly what
//! the CPU model says. The layer reports the overflow at the fence wait,
//! through the application's debug-utils messenger.

use ash::vk;
use conformance_tests::graph::TestGraph;
use conformance_tests::models::hello_chain;
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

const GUARD: u64 = 4096;
const PATTERN: u32 = 0xA5A5_5A5A;

#[test]
fn overflow_stays_inside_scratch_at_min_between_and_max() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    // The layer's report is an error message: expected here, counted below.
    inst.log().tolerate("EMU-SE-execution-graph-status");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph");
        let (min, max, granularity) = graph.scratch_sizes().expect("sizes");
        // 4,000 records of grid 16: 128,000 secondNode records (1 MB) at
        // level 1, far more than minSize's frames hold.
        let first: Vec<(u32, u32)> = (0..4000).map(|i| (16, i % 4)).collect();
        let records: Vec<u8> = first.iter().flat_map(|&(g, r)| [g, r]).flat_map(u32::to_le_bytes).collect();
        let between = min + granularity * ((max - min) / granularity / 3);
        for (size, must_fit) in [(min, false), (between, true), (max, true)] {
            let buffer = dev
                .create_host_buffer(
                    size + 2 * GUARD,
                    vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
                )
                .expect("scratch buffer");
            let words = ((size + 2 * GUARD) / 4) as usize;
            buffer.write_u32(&vec![PATTERN; words]).expect("fill");
            uav.write_u32(&[0; 8]).expect("clear");
            let scratch = buffer.address.expect("address") + GUARD;
            dev.submit_once(|cb| {
                let count_info_infos = [vk::DispatchGraphInfoAMDX {
                    node_index: 0,
                    payload_count: first.len() as u32,
                    payloads: vk::DeviceOrHostAddressConstAMDX { host_address: records.as_ptr().cast() },
                    payload_stride: 8,
                }];
                let count_info = vk::DispatchGraphCountInfoAMDX {
                    count: 1,
                    infos: vk::DeviceOrHostAddressConstAMDX { host_address: count_info_infos.as_ptr().cast() },
                    stride: std::mem::size_of::<vk::DispatchGraphInfoAMDX>() as u64,
                };
                // SAFETY: recording valid commands; the arrays live across the calls.
                unsafe {
                    graph.bind(cb, graph.pipeline);
                    (graph.fns.init_scratch)(cb, graph.pipeline, scratch, size);
                    (graph.fns.dispatch)(cb, scratch, size, &count_info);
                    dev.host_read_barrier(cb);
                }
            })
            .expect("submit");
            let reports = inst.log().tolerated();
            let reported = reports.iter().filter(|m| m.contains("frame pool had no room")).count();
            // Only the minSize run (the first) overflows.
            assert_eq!(reported, 1, "size {size}: reports so far: {reports:?}");
            let all = buffer.read_u32(words).expect("read");
            let guard_words = (GUARD / 4) as usize;
            assert!(all[..guard_words].iter().all(|&w| w == PATTERN), "size {size}: bytes written before scratch");
            assert!(
                all[words - guard_words..].iter().all(|&w| w == PATTERN),
                "size {size}: bytes written after scratch"
            );
            let got = uav.read_u32(8).expect("read");
            let want = hello_chain(&first, &[]);
            if must_fit {
                assert_eq!(got, want, "size {size}");
            } else {
                assert!(got != want, "size {size}: this work should not fit minSize");
                assert!(got.iter().zip(&want).all(|(g, w)| g <= w), "size {size}: dropped work, never invented work");
            }
        }
    }
    inst.finish();
}
