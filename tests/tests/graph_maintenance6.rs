//! `VK_KHR_maintenance6` (issue 13, modern lane): descriptor sets bound with
//! `vkCmdBindDescriptorSets2KHR` for `VK_SHADER_STAGE_COMPUTE_BIT` reach the
//! node kernels of a graph dispatch (the execution-graph bind point's stages
//! are compute stages; see `layer/src/ffi/maintenance6.rs`); the other
//! maintenance6 commands are tested in `graph_app_resources.rs` and
//! `graph_descriptor_buffer.rs`. On a driver without
//! the extension (Debian's Mesa 22.3) the test says so and passes, unless
//! `EMU_SE_LANE=modern` requires it.
//!
//! Validation 1.3.239 predates maintenance6: it wraps non-dispatchable
//! handles and passes commands it does not know to the driver with the
//! wrapped handles still in them, which crashes lavapipe 25 (also without
//! this layer). This file runs it with handle wrapping off
//! (`VK_LAYER_DISABLES=VK_VALIDATION_FEATURE_DISABLE_UNIQUE_HANDLES_EXT`);
//! own file for that environment.

use ash::vk;
use conformance_tests::graph::{RawDispatch, TestGraph, HELLO_CHAIN_SPV, HELLO_CHAIN_STAGES};
use conformance_tests::models::hello_chain;
use conformance_tests::{compute_queue_family, env, Extras, InstanceOptions, TestDevice, TestInstance};
use vk_amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH;

#[test]
fn sets_bound_for_the_compute_stage_reach_the_graph() {
    env::init_with(&[("VK_LAYER_DISABLES", "VK_VALIDATION_FEATURE_DISABLE_UNIQUE_HANDLES_EXT")]).expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    let family = compute_queue_family(&inst, pd).expect("queue family");
    let extras = Extras { maintenance6: true, ..Default::default() };
    if let Some(dev) = TestDevice::with_amdx_extras(&inst, pd, family, 1, extras) {
        let m6 = ash::khr::maintenance6::Device::new(&inst.instance, &dev.device);
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::new(&dev, HELLO_CHAIN_SPV, &HELLO_CHAIN_STAGES, &[&uav], 0).expect("graph");
        let mut dispatch = RawDispatch::new(&dev, &graph.fns, graph.pipeline, &[(3, 2)]).expect("dispatch");
        let sets = [graph.set];
        dev.submit_once(|cb| {
            let bind = vk::BindDescriptorSetsInfoKHR::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .layout(graph.layout)
                .descriptor_sets(&sets);
            // SAFETY: recording valid commands; the arrays outlive the calls.
            unsafe {
                dev.device.cmd_bind_pipeline(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH, graph.pipeline);
                m6.cmd_bind_descriptor_sets2(cb, &bind);
            }
            dispatch.record(&dev, &graph.fns, cb);
            dev.host_read_barrier(cb);
        })
        .expect("submit");
        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&[(3, 2)], &[]));
    }
    inst.finish();
}
