//! `VK_KHR_maintenance6` (issue 13, modern lane): descriptor sets bound with
//! `vkCmdBindDescriptorSets2KHR` for `VK_SHADER_STAGE_COMPUTE_BIT` reach the
//! node kernels of a graph dispatch (the execution-graph bind point's stages
//! are compute stages; see `layer/src/ffi/maintenance6.rs`), and so do push
//! descriptors pushed with `vkCmdPushDescriptorSet2KHR`. On a driver without
//! the extension (Debian's Mesa 22.3) the test says so and passes, unless
//! `EMU_SE_LANE=modern` requires it.
//!
//! Validation 1.3.239 predates maintenance6: it wraps non-dispatchable
//! handles and passes commands it does not know to the driver with the
//! wrapped handles still in them, which crashes lavapipe 25 (also without
//! this layer). This file runs it with handle wrapping off
//! (`VK_LAYER_DISABLES=VK_VALIDATION_FEATURE_DISABLE_UNIQUE_HANDLES_EXT`);
//! own file for that environment.

use std::ffi::CStr;

use ash::vk;
use conformance_tests::amdx::{self, PhysicalDeviceShaderEnqueueFeatures};
use conformance_tests::graph::{TestGraph, BIND_POINT, HELLO_CHAIN_SPV, HELLO_CHAIN_STAGES};
use conformance_tests::models::hello_chain;
use conformance_tests::{compute_queue_family, env, queue_info, InstanceOptions, TestDevice, TestInstance};

const MAINTENANCE6: &CStr = c"VK_KHR_maintenance6";

/// Validation 1.3.239 calls `VkPhysicalDeviceMaintenance6FeaturesKHR` unknown.
const UNKNOWN_TO_VALIDATION: &str = "unknown VkStructureType (1000545000)";

fn device_with_maintenance6<'i>(inst: &'i TestInstance, pd: vk::PhysicalDevice) -> Option<TestDevice<'i>> {
    let listed =
        inst.device_extensions(pd).expect("extensions").iter().any(|(n, _)| n.as_bytes() == MAINTENANCE6.to_bytes());
    if !listed {
        assert!(!env::modern_lane_required(), "the modern lane's driver lacks VK_KHR_maintenance6");
        eprintln!("skipped: the driver lacks VK_KHR_maintenance6 (the modern lane runs this test)");
        return None;
    }
    inst.log().tolerate(UNKNOWN_TO_VALIDATION);
    let family = compute_queue_family(inst, pd).expect("queue family");
    let queues = [queue_info(family)];
    let names = [amdx::EXTENSION_NAME.as_ptr(), MAINTENANCE6.as_ptr()];
    let mut amdx_features = PhysicalDeviceShaderEnqueueFeatures { shader_enqueue: vk::TRUE, ..Default::default() };
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default().buffer_device_address(true);
    let mut m6 = vk::PhysicalDeviceMaintenance6FeaturesKHR::default().maintenance6(true);
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&names)
        .push_next(&mut amdx_features)
        .push_next(&mut v12)
        .push_next(&mut m6);
    Some(TestDevice::create(inst, pd, &info).expect("device with maintenance6"))
}

#[test]
fn sets_bound_for_the_compute_stage_reach_the_graph() {
    env::init_with(&[("VK_LAYER_DISABLES", "VK_VALIDATION_FEATURE_DISABLE_UNIQUE_HANDLES_EXT")]).expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    if let Some(dev) = device_with_maintenance6(&inst, pd) {
        let m6 = ash::khr::maintenance6::Device::new(&inst.instance, &dev.device);
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::new(&dev, HELLO_CHAIN_SPV, &HELLO_CHAIN_STAGES, &[&uav], 0).expect("graph");
        let (min, _, _) = graph.scratch_sizes().expect("sizes");
        let scratch = graph.scratch(min).expect("scratch");
        let address = scratch.address.expect("address");
        let entry = graph.node_index("firstNode", 0).expect("entry");
        let records: Vec<u8> = [3u32, 2].iter().flat_map(|w| w.to_le_bytes()).collect();
        let infos = [vk::DispatchGraphInfoAMDX {
            node_index: entry,
            payload_count: 1,
            payloads: vk::DeviceOrHostAddressConstAMDX { host_address: records.as_ptr().cast() },
            payload_stride: 8,
        }];
        let count = vk::DispatchGraphCountInfoAMDX {
            count: 1,
            infos: vk::DeviceOrHostAddressConstAMDX { host_address: infos.as_ptr().cast() },
            stride: std::mem::size_of::<vk::DispatchGraphInfoAMDX>() as u64,
        };
        let sets = [graph.set];
        dev.submit_once(|cb| {
            // SAFETY: recording valid commands; every array outlives the calls.
            unsafe {
                dev.device.cmd_bind_pipeline(cb, BIND_POINT, graph.pipeline);
                let bind = vk::BindDescriptorSetsInfoKHR::default()
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
                    .layout(graph.layout)
                    .descriptor_sets(&sets);
                m6.cmd_bind_descriptor_sets2(cb, &bind);
                (graph.fns.init_scratch)(cb, graph.pipeline, address, min);
                let barrier = vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                    .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE);
                dev.device.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::DependencyFlags::empty(),
                    &[barrier],
                    &[],
                    &[],
                );
                (graph.fns.dispatch)(cb, address, min, &count);
            }
            dev.host_read_barrier(cb);
        })
        .expect("submit");
        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&[(3, 2)], &[]));
    }
    inst.finish();
}
