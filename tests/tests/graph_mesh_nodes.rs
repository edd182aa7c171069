//! Mesh nodes are not supported (the layer advertises `shaderMeshEnqueue =
//! VK_FALSE`): a graphics pipeline made from a node shader, and an execution
//! graph stage flagged as a mesh stage, fail with
//! `VK_ERROR_INITIALIZATION_FAILED` and a null handle instead of reaching the
//! driver (which would receive the empty kernel the layer keeps in the node
//! module's place). A plain graph on the same device still works afterwards.

use ash::vk;
use conformance_tests::graph::{TestGraph, HELLO_CHAIN_STAGES};
use conformance_tests::models::hello_chain;
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

#[test]
fn mesh_nodes_are_rejected_cleanly() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph pipeline");
        let mesh_stage = [vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::MESH_EXT)
            .module(graph.module)
            .name(c"firstNode")];

        // A graphics pipeline whose mesh stage is a node shader.
        let rendering = vk::PipelineRenderingCreateInfo::default();
        let mut gfx = vk::GraphicsPipelineCreateInfo::default().stages(&mesh_stage).layout(graph.layout);
        gfx.p_next = (&rendering as *const vk::PipelineRenderingCreateInfo).cast();
        let mut pipeline = <vk::Pipeline as vk::Handle>::from_raw(0xdead);
        // SAFETY: valid device and create info; the layer answers without calling down.
        let result = unsafe {
            (dev.device.fp_v1_0().create_graphics_pipelines)(
                dev.device.handle(),
                vk::PipelineCache::null(),
                1,
                &gfx,
                std::ptr::null(),
                &mut pipeline,
            )
        };
        assert_eq!((result, pipeline), (vk::Result::ERROR_INITIALIZATION_FAILED, vk::Pipeline::null()));

        // An execution graph stage flagged as a mesh stage.
        let info = vk::ExecutionGraphPipelineCreateInfoAMDX::default().stages(&mesh_stage).layout(graph.layout);
        let mut pipeline = <vk::Pipeline as vk::Handle>::from_raw(0xdead);
        // SAFETY: valid device and create info.
        let result = unsafe {
            (graph.fns.create)(
                dev.device.handle(),
                vk::PipelineCache::null(),
                1,
                &info,
                std::ptr::null(),
                &mut pipeline,
            )
        };
        assert_eq!((result, pipeline), (vk::Result::ERROR_INITIALIZATION_FAILED, vk::Pipeline::null()));

        // The device is unharmed.
        let (min, _, _) = graph.scratch_sizes().expect("scratch sizes");
        let scratch = graph.scratch(min).expect("scratch");
        let entry = graph.node_index(HELLO_CHAIN_STAGES[0].entry, 0).expect("node index");
        let records: Vec<u8> = [2u32, 0].iter().flat_map(|w| w.to_le_bytes()).collect();
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(entry, &records, 1, 8)])).expect("submit");
        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&[(2, 0)], &[]));
    }
    inst.finish();
}
