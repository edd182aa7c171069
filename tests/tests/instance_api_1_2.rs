//! An application whose instance asks for Vulkan 1.2 (the least the layer
//! accepts) on a 1.3 driver: the device it gets is a 1.2 device, so the layer
//! must not enable 1.3 features such as `maintenance4` (validation beneath
//! reported `VUID-VkBufferCreateInfo-size-06409` on every buffer when it
//! did). Buffers, a graph and its dispatch must run with no validation
//! message.

use ash::vk;
use conformance_tests::graph::TestGraph;
use conformance_tests::models::hello_chain;
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

#[test]
fn a_vulkan_1_2_instance_runs_a_graph_cleanly() {
    let opts = InstanceOptions { api_version: vk::API_VERSION_1_2, ..InstanceOptions::with_layer() };
    let inst = TestInstance::new(&opts).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph pipeline");
        let (min, _, _) = graph.scratch_sizes().expect("scratch sizes");
        let scratch = graph.scratch(min).expect("scratch");
        let entry = graph.node_index("firstNode", 0).expect("node index");
        let records: Vec<u8> = [3u32, 1].iter().flat_map(|w| w.to_le_bytes()).collect();
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(entry, &records, 1, 8)])).expect("submit");
        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&[(3, 1)], &[]));
    }
    inst.finish();
}
