//! The way an API translator (vkd3d-proton's style) drives the layer
//! (issue 13): resources bound only through a descriptor buffer and push
//! constants, the graph re-created from the same SPIR-V again and again
//! (a new shader module each time) through the application's
//! `VkPipelineCache` with creation feedback asked for, and dispatched on an
//! async-compute queue where the driver has a compute-only family (NVIDIA;
//! lavapipe's one family otherwise). Every re-created graph runs correctly;
//! where the driver keeps compute pipelines in caches at all (NVIDIA does,
//! lavapipe keeps only a header), the cache gains the node kernels.
//! Creation times and feedback are printed (`--nocapture`), not asserted.
//! Needs descriptor buffers (modern lane).

use std::time::Instant;

use ash::vk;
use conformance_tests::compute::spirv_words;
use conformance_tests::descriptor_heap::DescriptorHeap;
use conformance_tests::graph::{raw_hello_chain, RawDispatch, HELLO_CHAIN_STAGES};
use conformance_tests::models::hello_chain;
use conformance_tests::{
    compute_only_queue_family, compute_queue_family, Extras, InstanceOptions, TestDevice, TestInstance,
};
use vk_amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH;

const CREATIONS: usize = 6;
const SCALE_ADD: &[u8] = include_bytes!("../shaders/scale_add.comp.spv");

fn cache_bytes(dev: &ash::Device, cache: vk::PipelineCache) -> usize {
    // SAFETY: valid device and cache.
    unsafe { dev.get_pipeline_cache_data(cache) }.expect("cache data").len()
}

/// Whether the driver keeps anything of a plain compute pipeline in a cache.
fn driver_fills_caches(dev: &ash::Device, layout: vk::PipelineLayout) -> bool {
    let words = spirv_words(SCALE_ADD).expect("spirv");
    // SAFETY: (block) valid device; every object is destroyed here.
    unsafe {
        let probe = dev.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None).expect("cache");
        let empty = cache_bytes(dev, probe);
        let module =
            dev.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None).expect("module");
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        let info = vk::ComputePipelineCreateInfo::default()
            .flags(vk::PipelineCreateFlags::DESCRIPTOR_BUFFER_EXT)
            .stage(stage)
            .layout(layout);
        let pipeline = dev.create_compute_pipelines(probe, &[info], None).map_err(|(_, e)| e).expect("probe")[0];
        let filled = cache_bytes(dev, probe) > empty;
        dev.destroy_pipeline(pipeline, None);
        dev.destroy_shader_module(module, None);
        dev.destroy_pipeline_cache(probe, None);
        filled
    }
}

#[test]
fn recreated_graphs_on_descriptor_buffers_and_async_compute() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    // A compute-only (async compute) family where there is one.
    let family =
        compute_only_queue_family(&inst, pd).unwrap_or_else(|| compute_queue_family(&inst, pd).expect("queue family"));
    if let Some(dev) =
        TestDevice::with_amdx_extras(&inst, pd, family, 1, Extras { descriptor_buffer: true, ..Default::default() })
    {
        let d = &dev.device;
        let fns = dev.amdx_commands().expect("graph entry points");
        // scale_add's 12 bytes of push constants fit the probe; the graph pushes 8.
        let heap = DescriptorHeap::new(&inst, &dev, 1, 12).expect("descriptor heap");
        let address_usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let uav = dev.create_host_buffer(32, address_usage).expect("uav");
        heap.write_storage(0, &uav).expect("descriptor");
        // SAFETY: valid device.
        let cache = unsafe { d.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None) }.expect("cache");
        let empty = cache_bytes(d, cache);
        let mut millis = Vec::new();
        for creation in 0..CREATIONS {
            uav.write_u32(&[0; 8]).expect("clear");
            let mut pipeline_feedback = vk::PipelineCreationFeedback::default();
            let mut stage_feedback = [vk::PipelineCreationFeedback::default(); 3];
            let feedback = vk::PipelineCreationFeedbackCreateInfo::default()
                .pipeline_creation_feedback(&mut pipeline_feedback)
                .pipeline_stage_creation_feedbacks(&mut stage_feedback);
            let started = Instant::now();
            let (graph, module) = raw_hello_chain(
                &dev,
                &fns,
                heap.layout,
                vk::PipelineCreateFlags::DESCRIPTOR_BUFFER_EXT,
                cache,
                (&feedback as *const vk::PipelineCreationFeedbackCreateInfo).cast(),
            )
            .expect("graph");
            millis.push(started.elapsed().as_secs_f64() * 1e3);
            assert!(pipeline_feedback.flags.contains(vk::PipelineCreationFeedbackFlags::VALID));
            eprintln!("creation {creation}: {:.2} ms, feedback {:?}", millis[creation], pipeline_feedback.flags);
            let records = [(3, creation as u32 % 4)];
            let mut dispatch = RawDispatch::new(&dev, &fns, graph, &records).expect("dispatch");
            // 8 bytes of push constants the translator passes (the nodes ignore them).
            let push = [creation as u32, 7].map(u32::to_le_bytes).concat();
            dev.submit_once(|cb| {
                heap.bind(cb);
                // SAFETY: recording valid commands.
                unsafe {
                    d.cmd_bind_pipeline(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH, graph);
                    heap.fns.cmd_set_descriptor_buffer_offsets(
                        cb,
                        PIPELINE_BIND_POINT_EXECUTION_GRAPH,
                        heap.layout,
                        0,
                        &[0],
                        &[heap.offset(0)],
                    );
                    d.cmd_push_constants(cb, heap.layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
                }
                dispatch.record(&dev, &fns, cb);
                dev.host_read_barrier(cb);
            })
            .expect("submit");
            assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&records, &[]), "creation {creation}");
            // SAFETY: idle device; created above.
            unsafe {
                d.destroy_pipeline(graph, None);
                d.destroy_shader_module(module, None);
            }
        }
        let kept = cache_bytes(d, cache);
        let nodes = HELLO_CHAIN_STAGES.len() as f64;
        let mut again = millis[1..].to_vec();
        again.sort_by(f64::total_cmp);
        eprintln!(
            "queue family {family}; first creation {:.2} ms per node, re-creations median {:.2} ms per node; \
             pipeline cache {empty} -> {kept} bytes",
            millis[0] / nodes,
            again[again.len() / 2] / nodes
        );
        if driver_fills_caches(d, heap.layout) {
            assert!(kept > empty, "the node kernels did not reach the application's pipeline cache");
        } else {
            eprintln!("the driver keeps nothing in pipeline caches: the cache's use is not checked here");
        }
        // SAFETY: idle device.
        unsafe { d.destroy_pipeline_cache(cache, None) };
    }
    inst.finish();
}
