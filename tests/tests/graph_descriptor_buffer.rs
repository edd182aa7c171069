//! `VK_EXT_descriptor_buffer` (issue 13, modern lane), the binding model of
//! API translators: the hello-chain graph, created with
//! `VK_PIPELINE_CREATE_DESCRIPTOR_BUFFER_BIT_EXT`, writes its sums into a
//! storage buffer whose descriptor lives in a descriptor buffer, placed with
//! `vkCmdSetDescriptorBufferOffsetsEXT` at the execution-graph bind point.
//! A compute dispatch recorded after it (`scale_add.comp`, offsets set at
//! the compute bind point before the graph dispatch) still finds its own
//! descriptor: the layer restores the compute bind point's offsets. On a
//! driver without the extension (Mesa 22.3) the test skips (see
//! `conformance_tests::skip`); the modern and GPU lanes must run it. A second run places the graph's
//! descriptors with `VK_KHR_maintenance6`'s
//! `vkCmdSetDescriptorBufferOffsets2EXT` for the compute stage instead, which
//! reaches both bind points.
//!
//! Validation 1.3.239 runs with handle wrapping off here: it does not unwrap
//! handles in the maintenance6 commands it does not know (see
//! `graph_maintenance6.rs`). Own file for that environment.

use ash::vk;
use conformance_tests::compute::{scale_add_push, spirv_words};
use conformance_tests::descriptor_heap::DescriptorHeap;
use conformance_tests::graph::{raw_hello_chain, RawDispatch};
use conformance_tests::models::hello_chain;
use conformance_tests::skip::{skip, Lane};
use conformance_tests::texture::rgba8_texture;
use conformance_tests::{compute_queue_family, env, Extras, InstanceOptions, TestDevice, TestInstance};
use vk_amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH;

const SCALE_ADD: &[u8] = include_bytes!("../shaders/scale_add.comp.spv");

/// How the graph's descriptor-buffer offsets are set.
#[derive(Clone, Copy, PartialEq)]
enum Offsets {
    /// `vkCmdSetDescriptorBufferOffsetsEXT` at the graph bind point.
    GraphBindPoint,
    /// `vkCmdSetDescriptorBufferOffsets2EXT` for the compute stage.
    Maintenance6,
}

/// Descriptor buffers, with maintenance6 when `maintenance6`.
fn buffers_and(maintenance6: bool) -> Extras {
    Extras { descriptor_buffer: true, maintenance6, ..Default::default() }
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
    if let Some(dev) = TestDevice::with_amdx_extras(&inst, pd, family, 1, buffers_and(offsets == Offsets::Maintenance6))
    {
        let d = &dev.device;
        let m6 = ash::khr::maintenance6::Device::new(&inst.instance, d);
        let fns = dev.amdx_commands().expect("graph entry points");
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
                d.cmd_bind_pipeline(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH, graph);
                if offsets == Offsets::GraphBindPoint {
                    heap.fns.cmd_set_descriptor_buffer_offsets(
                        cb,
                        PIPELINE_BIND_POINT_EXECUTION_GRAPH,
                        layout,
                        0,
                        &[0],
                        &[heap.offset(0)],
                    );
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

const SAMPLING: &[u8] = include_bytes!("../../spirv-lowering/tests/dxc/sampling.spv");

/// The red value of the 1x1 texture `sampleNode` reads.
const RED: u8 = 200;

/// `vkCmdBindDescriptorBufferEmbeddedSamplersEXT` at the graph bind point
/// (or its maintenance6 form for the compute stage): `sampleNode` samples
/// a texture with the embedded immutable sampler of set 1. Checked on
/// NVIDIA's driver: lavapipe 25.0.7 crashes in the shader when a compute
/// dispatch samples through an embedded sampler, also in a plain compute
/// pipeline without this layer, so it skips there; the GPU lane runs it.
#[test]
fn embedded_samplers_reach_the_graph() {
    for with_maintenance6 in [false, true] {
        embedded_samplers(with_maintenance6);
    }
}

fn embedded_samplers(with_maintenance6: bool) {
    env::init_with(&[("VK_LAYER_DISABLES", "VK_VALIDATION_FEATURE_DISABLE_UNIQUE_HANDLES_EXT")]).expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let family = compute_queue_family(&inst, pd).expect("queue family");
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
    // SAFETY: valid physical device and output chain.
    unsafe { inst.instance.get_physical_device_properties2(pd, &mut p2) };
    if driver.driver_id == vk::DriverId::MESA_LLVMPIPE {
        skip(&[Lane::Gpu], "lavapipe crashes on embedded samplers in compute shaders (without this layer too)");
        inst.finish();
        return;
    }
    if let Some(dev) = TestDevice::with_amdx_extras(&inst, pd, family, 1, buffers_and(with_maintenance6)) {
        let d = &dev.device;
        let db = ash::ext::descriptor_buffer::Device::new(&inst.instance, d);
        let m6 = ash::khr::maintenance6::Device::new(&inst.instance, d);
        let fns = dev.amdx_commands().expect("graph entry points");
        let mut props = vk::PhysicalDeviceDescriptorBufferPropertiesEXT::default();
        let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
        // SAFETY: valid physical device and output chain.
        unsafe { inst.instance.get_physical_device_properties2(pd, &mut p2) };
        let out = dev
            .create_host_buffer(64, vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS)
            .expect("out");
        out.write_u32(&[0; 16]).expect("clear");
        let (image, memory, view) = rgba8_texture(&dev, &[[RED, 0, 0, 255]]);
        // SAFETY: (block) valid device; every object is destroyed below.
        unsafe {
            let sampler = d.create_sampler(&vk::SamplerCreateInfo::default(), None).expect("sampler");
            let resources = [
                vk::DescriptorSetLayoutBinding::default()
                    .binding(0)
                    .descriptor_type(vk::DescriptorType::SAMPLED_IMAGE)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE),
                vk::DescriptorSetLayoutBinding::default()
                    .binding(1)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE),
            ];
            let set0 = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default()
                        .bindings(&resources)
                        .flags(vk::DescriptorSetLayoutCreateFlags::DESCRIPTOR_BUFFER_EXT),
                    None,
                )
                .expect("set 0");
            let samplers = [sampler];
            let embedded = [vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::SAMPLER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .immutable_samplers(&samplers)];
            let set1 = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&embedded).flags(
                        vk::DescriptorSetLayoutCreateFlags::DESCRIPTOR_BUFFER_EXT
                            | vk::DescriptorSetLayoutCreateFlags::EMBEDDED_IMMUTABLE_SAMPLERS_EXT,
                    ),
                    None,
                )
                .expect("set 1");
            let layouts = [set0, set1];
            let layout = d
                .create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts), None)
                .expect("layout");
            let heap = dev
                .create_host_buffer(
                    db.get_descriptor_set_layout_size(set0).max(64),
                    vk::BufferUsageFlags::RESOURCE_DESCRIPTOR_BUFFER_EXT | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
                )
                .expect("heap");
            let image_info = vk::DescriptorImageInfo::default()
                .image_view(view)
                .image_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
            let mut bytes = vec![0u8; props.sampled_image_descriptor_size];
            let get = vk::DescriptorGetInfoEXT::default()
                .ty(vk::DescriptorType::SAMPLED_IMAGE)
                .data(vk::DescriptorDataEXT { p_sampled_image: &image_info });
            db.get_descriptor(&get, &mut bytes);
            heap.write_bytes(db.get_descriptor_set_layout_binding_offset(set0, 0) as usize, &bytes).expect("image");
            let address = vk::DescriptorAddressInfoEXT::default()
                .address(out.address.expect("address"))
                .range(out.size)
                .format(vk::Format::UNDEFINED);
            let mut bytes = vec![0u8; props.storage_buffer_descriptor_size];
            let get = vk::DescriptorGetInfoEXT::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .data(vk::DescriptorDataEXT { p_storage_buffer: &address });
            db.get_descriptor(&get, &mut bytes);
            heap.write_bytes(db.get_descriptor_set_layout_binding_offset(set0, 1) as usize, &bytes).expect("buffer");

            let words = spirv_words(SAMPLING).expect("spirv");
            let module =
                d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None).expect("module");
            let stages = [vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"sampleNode")];
            let graph_info = vk::ExecutionGraphPipelineCreateInfoAMDX::default()
                .flags(vk::PipelineCreateFlags::DESCRIPTOR_BUFFER_EXT)
                .stages(&stages)
                .layout(layout);
            let mut graph = vk::Pipeline::null();
            let result =
                (fns.create)(d.handle(), vk::PipelineCache::null(), 1, &graph_info, std::ptr::null(), &mut graph);
            assert_eq!(result, vk::Result::SUCCESS, "graph creation");
            let slot = 3u32;
            let mut dispatch =
                RawDispatch::with_records(&dev, &fns, graph, c"sampleNode", slot.to_le_bytes().to_vec(), 1, 4)
                    .expect("dispatch");
            dev.submit_once(|cb| {
                let heaps = [vk::DescriptorBufferBindingInfoEXT::default()
                    .address(heap.address.expect("heap address"))
                    .usage(vk::BufferUsageFlags::RESOURCE_DESCRIPTOR_BUFFER_EXT)];
                db.cmd_bind_descriptor_buffers(cb, &heaps);
                d.cmd_bind_pipeline(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH, graph);
                db.cmd_set_descriptor_buffer_offsets(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH, layout, 0, &[0], &[0]);
                if with_maintenance6 {
                    let bind = vk::BindDescriptorBufferEmbeddedSamplersInfoEXT::default()
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                        .layout(layout)
                        .set(1);
                    m6.cmd_bind_descriptor_buffer_embedded_samplers2(cb, &bind);
                } else {
                    db.cmd_bind_descriptor_buffer_embedded_samplers(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH, layout, 1);
                }
                dispatch.record(&dev, &fns, cb);
                dev.host_read_barrier(cb);
            })
            .expect("submit");
            assert_eq!(
                out.read_u32(16).expect("read")[slot as usize],
                u32::from(RED),
                "maintenance6: {with_maintenance6}"
            );

            d.destroy_pipeline(graph, None);
            d.destroy_shader_module(module, None);
            d.destroy_pipeline_layout(layout, None);
            d.destroy_descriptor_set_layout(set1, None);
            d.destroy_descriptor_set_layout(set0, None);
            d.destroy_sampler(sampler, None);
            d.destroy_image_view(view, None);
            d.destroy_image(image, None);
            d.free_memory(memory, None);
        }
    }
    inst.finish();
}
