//! Host-side API misuse of the dispatch commands (issue 5): a null
//! `pCountInfo`, a scratch size of 0 or below minSize, a node that is not an
//! API entry, a node index out of range. Each is logged by the layer and
//! records no GPU work; nothing crashes, the validation layer stays silent,
//! and a correct dispatch afterwards still works.

use ash::vk;
use conformance_tests::amdx::PfnCmdDispatchGraph;
use conformance_tests::graph::{Stage, TestGraph, BIND_POINT};
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

const SHARES: &[u8] = include_bytes!("../../spirv-lowering/tests/corpus/21_shares_input.spv");

#[test]
fn misuse_records_nothing() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let out = dev.create_host_buffer(64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        out.write_u32(&[7; 16]).expect("fill");
        let stages = [Stage { entry: "base", node: None }, Stage { entry: "sharer", node: None }];
        let graph = TestGraph::new(&dev, SHARES, &stages, &[&out], 0).expect("graph");
        let (min, _, _) = graph.scratch_sizes().expect("sizes");
        let scratch = graph.scratch(min).expect("scratch");
        let address = scratch.address.expect("address");
        let sharer = graph.node_index("sharer", 0).expect("sharer");
        let base = graph.node_index("base", 0).expect("base");
        let indirect: PfnCmdDispatchGraph = {
            let f = dev.proc_addr(c"vkCmdDispatchGraphIndirectAMDX").expect("entry point");
            // SAFETY: the prototype of the name asked for.
            unsafe { std::mem::transmute::<unsafe extern "system" fn(), PfnCmdDispatchGraph>(f) }
        };
        let record: Vec<u8> = [2u32, 5].iter().flat_map(|w| w.to_le_bytes()).collect();
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
            let d = &dev.device;
            // SAFETY: recording; every misuse below is answered by the layer, not the driver.
            unsafe {
                d.cmd_bind_pipeline(cb, BIND_POINT, graph.pipeline);
                d.cmd_bind_descriptor_sets(cb, BIND_POINT, graph.layout, 0, &[graph.set], &[]);
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
        assert_eq!(out.read_u32(16).expect("read"), vec![7; 16], "misused dispatches record nothing");
        // The command buffer was not poisoned and the graph still works.
        dev.submit_once(|cb| graph.record(cb, &scratch, false, &[(base, &record, 1, 8)])).expect("valid dispatch");
        let got = out.read_u32(16).expect("read");
        assert_eq!((got[2], got[3]), (5, 6));
    }
    inst.finish();
}
