//! `VK_EXT_descriptor_buffer` (issue 13, modern lane), the binding model of
//! API translators: the hello-chain graph, created with
//! `VK_PIPELINE_CREATE_DESCRIPTOR_BUFFER_BIT_EXT`, writes its sums into a
//! storage buffer whose descriptor lives in a descriptor buffer, placed with
//! `vkCmdSetDescriptorBufferOffsetsEXT` at the execution-graph bind point.
//! A compute dispatch recorded after it (`scale_add.comp`, offsets set at
//! the compute bind point before the graph dispatch) still finds its own
//! descriptor: the layer restores the compute bind point's offsets. On a
//! driver without the extension (Mesa 22.3) the test says so and passes,
//! unless `EMU_SE_LANE=modern` requires it. A second run places the graph's
//! descriptors with `VK_KHR_maintenance6`'s
//! `vkCmdSetDescriptorBufferOffsets2EXT` for the compute stage instead, which
//! reaches both bind points.
//!
//! Validation 1.3.239 runs with handle wrapping off here: it does not unwrap
//! handles in the maintenance6 commands it does not know (see
//! `graph_maintenance6.rs`). Own file for that environment.

use ash::vk;
use conformance_tests::compute::{scale_add_push, spirv_words};
use conformance_tests::descriptor_heap::{descriptor_buffer_device, DescriptorHeap};
use conformance_tests::graph::{raw_hello_chain, GraphFns, RawDispatch, BIND_POINT};
use conformance_tests::models::hello_chain;
use conformance_tests::{compute_queue_family, env, InstanceOptions, TestInstance};

const SCALE_ADD: &[u8] = include_bytes!("../shaders/scale_add.comp.spv");

/// How the graph's descriptor-buffer offsets are set.
#[derive(Clone, Copy, PartialEq)]
enum Offsets {
    /// `vkCmdSetDescriptorBufferOffsetsEXT` at the graph bind point.
    GraphBindPoint,
    /// `vkCmdSetDescriptorBufferOffsets2EXT` for the compute stage.
    Maintenance6,
}

#[test]
fn graphs_read_descriptor_buffers_and_compute_offsets_are_restored() {
    run(Offsets::GraphBindPoint);
}

#[test]
fn offsets_set_with_maintenance6_reach_the_graph() {
    run(Offsets::Maintenance6);
}

fn run(offsets: Offsets) {
    env::init_with(&[("VK_LAYER_DISABLES", "VK_VALIDATION_FEATURE_DISABLE_UNIQUE_HANDLES_EXT")]).expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let family = compute_queue_family(&inst, pd).expect("queue family");
    if let Some(dev) = descriptor_buffer_device(&inst, pd, family, offsets == Offsets::Maintenance6) {
        let d = &dev.device;
        let m6 = ash::khr::maintenance6::Device::new(&inst.instance, d);
        let fns = GraphFns::load(&dev).expect("graph entry points");
        // The graph's set at 0, compute's at 1; 12 bytes of push constants for scale_add.
        let heap = DescriptorHeap::new(&inst, &dev, 2, 12).expect("descriptor heap");
        let address_usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let uav = dev.create_host_buffer(32, address_usage).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let data = dev.create_host_buffer(4 * 64, address_usage).expect("data");
        data.write_u32(&(0..64).collect::<Vec<u32>>()).expect("data");
        heap.write_storage(0, &uav).expect("graph descriptor");
        heap.write_storage(1, &data).expect("compute descriptor");

        let flags = vk::PipelineCreateFlags::DESCRIPTOR_BUFFER_EXT;
        let (graph, module) =
            raw_hello_chain(&dev, &fns, heap.layout, flags, vk::PipelineCache::null(), std::ptr::null())
                .expect("graph");
        let compute_words = spirv_words(SCALE_ADD).expect("spirv");
        // SAFETY: (block) valid device; the objects are destroyed below.
        let (compute_module, compute) = unsafe {
            let compute_module = d
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&compute_words), None)
                .expect("module");
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(compute_module)
                .name(c"main");
            let info = vk::ComputePipelineCreateInfo::default().flags(flags).stage(stage).layout(heap.layout);
            let compute = d
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| e)
                .expect("compute pipeline")[0];
            (compute_module, compute)
        };
        let mut dispatch = RawDispatch::new(&dev, &fns, graph, &[(4, 1)]).expect("dispatch");
        let push = scale_add_push(3, 1, 64);
        let layout = heap.layout;
        dev.submit_once(|cb| {
            heap.bind(cb);
            // SAFETY: recording valid commands; the arrays live across the calls.
            unsafe {
                if offsets == Offsets::Maintenance6 {
                    // The graph's set 0 (and, until the next call, compute's).
                    let graph_at = [heap.offset(0)];
                    let set = vk::SetDescriptorBufferOffsetsInfoEXT::default()
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                        .layout(layout)
                        .buffer_indices(&[0])
                        .offsets(&graph_at);
                    m6.cmd_set_descriptor_buffer_offsets2(cb, &set);
                }
                // Compute first: its set 0 is the heap's set 1.
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, compute);
                let compute_at = [heap.offset(1)];
                heap.fns.cmd_set_descriptor_buffer_offsets(
                    cb,
                    vk::PipelineBindPoint::COMPUTE,
                    layout,
                    0,
                    &[0],
                    &compute_at,
                );
                d.cmd_push_constants(cb, layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
                // The graph's set 0 is the heap's set 0.
                d.cmd_bind_pipeline(cb, BIND_POINT, graph);
                if offsets == Offsets::GraphBindPoint {
                    heap.fns.cmd_set_descriptor_buffer_offsets(cb, BIND_POINT, layout, 0, &[0], &[heap.offset(0)]);
                }
            }
            dispatch.record(&dev, &fns, cb);
            // SAFETY: the compute bind point as the application left it.
            unsafe { d.cmd_dispatch(cb, 1, 1, 1) };
            dev.host_read_barrier(cb);
        })
        .expect("submit");
        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&[(4, 1)], &[]), "the graph's descriptor");
        let want: Vec<u32> = (0..64).map(|i| i * 3 + 1).collect();
        assert_eq!(data.read_u32(64).expect("read"), want, "the compute dispatch's descriptor");
        // SAFETY: idle device; objects created above.
        unsafe {
            d.destroy_pipeline(compute, None);
            d.destroy_shader_module(compute_module, None);
            d.destroy_pipeline(graph, None);
            d.destroy_shader_module(module, None);
        }
    }
    inst.finish();
}
