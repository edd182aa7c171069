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

use std::ffi::CStr;

use ash::vk;
use conformance_tests::amdx::{self, PhysicalDeviceShaderEnqueueFeatures, BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH};
use conformance_tests::compute::{scale_add_push, spirv_words};
use conformance_tests::graph::{GraphFns, BIND_POINT, HELLO_CHAIN_SPV, HELLO_CHAIN_STAGES};
use conformance_tests::models::hello_chain;
use conformance_tests::{compute_queue_family, env, queue_info, HostBuffer, InstanceOptions, TestDevice, TestInstance};

const DESCRIPTOR_BUFFER: &CStr = c"VK_EXT_descriptor_buffer";
const MAINTENANCE6: &CStr = c"VK_KHR_maintenance6";

/// How the graph's descriptor-buffer offsets are set.
#[derive(Clone, Copy, PartialEq)]
enum Offsets {
    /// `vkCmdSetDescriptorBufferOffsetsEXT` at the graph bind point.
    GraphBindPoint,
    /// `vkCmdSetDescriptorBufferOffsets2EXT` for the compute stage.
    Maintenance6,
}

const SCALE_ADD: &[u8] = include_bytes!("../shaders/scale_add.comp.spv");

fn device_with_descriptor_buffers<'i>(
    inst: &'i TestInstance,
    pd: vk::PhysicalDevice,
    offsets: Offsets,
) -> Option<TestDevice<'i>> {
    let wanted: &[&CStr] =
        if offsets == Offsets::Maintenance6 { &[DESCRIPTOR_BUFFER, MAINTENANCE6] } else { &[DESCRIPTOR_BUFFER] };
    let listed = inst.device_extensions(pd).expect("extensions");
    for ext in wanted {
        if !listed.iter().any(|(n, _)| n.as_bytes() == ext.to_bytes()) {
            assert!(!env::modern_lane_required(), "the modern lane's driver lacks {ext:?}");
            eprintln!("skipped: the driver lacks {ext:?} (the modern lane runs this test)");
            return None;
        }
    }
    // Validation 1.3.239 calls `VkPhysicalDeviceMaintenance6FeaturesKHR` unknown.
    inst.log().tolerate("unknown VkStructureType (1000545000)");
    let family = compute_queue_family(inst, pd).expect("queue family");
    let queues = [queue_info(family)];
    let mut names = vec![amdx::EXTENSION_NAME.as_ptr()];
    names.extend(wanted.iter().map(|e| e.as_ptr()));
    let mut m6 = vk::PhysicalDeviceMaintenance6FeaturesKHR::default().maintenance6(true);
    let mut enqueue = PhysicalDeviceShaderEnqueueFeatures { shader_enqueue: vk::TRUE, ..Default::default() };
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default().buffer_device_address(true);
    let mut db = vk::PhysicalDeviceDescriptorBufferFeaturesEXT::default().descriptor_buffer(true);
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&names)
        .push_next(&mut enqueue)
        .push_next(&mut v12)
        .push_next(&mut db);
    let info = if offsets == Offsets::Maintenance6 { info.push_next(&mut m6) } else { info };
    Some(TestDevice::create(inst, pd, &info).expect("device with descriptor buffers"))
}

/// Writes the storage-buffer descriptor of `target` at `offset` of `heap`.
fn write_storage_descriptor(
    db: &ash::ext::descriptor_buffer::Device,
    heap: &HostBuffer,
    offset: usize,
    size: usize,
    target: &HostBuffer,
) {
    let address = vk::DescriptorAddressInfoEXT::default()
        .address(target.address.expect("address"))
        .range(target.size)
        .format(vk::Format::UNDEFINED);
    let get = vk::DescriptorGetInfoEXT::default()
        .ty(vk::DescriptorType::STORAGE_BUFFER)
        .data(vk::DescriptorDataEXT { p_storage_buffer: &address });
    let mut bytes = vec![0u8; size];
    // SAFETY: valid device; `bytes` holds the descriptor size.
    unsafe { db.get_descriptor(&get, &mut bytes) };
    heap.write_bytes(offset, &bytes).expect("descriptor");
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
    if let Some(dev) = device_with_descriptor_buffers(&inst, pd, offsets) {
        let d = &dev.device;
        let m6 = ash::khr::maintenance6::Device::new(&inst.instance, d);
        let db = ash::ext::descriptor_buffer::Device::new(&inst.instance, d);
        let fns = GraphFns::load(&dev).expect("graph entry points");
        let mut props = vk::PhysicalDeviceDescriptorBufferPropertiesEXT::default();
        let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
        // SAFETY: valid physical device and output chain.
        unsafe { inst.instance.get_physical_device_properties2(pd, &mut p2) };
        let address_usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let uav = dev.create_host_buffer(32, address_usage).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let data = dev.create_host_buffer(4 * 64, address_usage).expect("data");
        data.write_u32(&(0..64).collect::<Vec<u32>>()).expect("data");

        // SAFETY: (block) valid device; every object is destroyed below.
        unsafe {
            let binding = [vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)];
            let set_layout = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default()
                        .bindings(&binding)
                        .flags(vk::DescriptorSetLayoutCreateFlags::DESCRIPTOR_BUFFER_EXT),
                    None,
                )
                .expect("set layout");
            let ranges = [vk::PushConstantRange { stage_flags: vk::ShaderStageFlags::COMPUTE, offset: 0, size: 12 }];
            let set_layouts = [set_layout];
            let layout = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts).push_constant_ranges(&ranges),
                    None,
                )
                .expect("layout");
            // Two sets' worth of descriptors: the graph's at 0, compute's after.
            let set_size = db.get_descriptor_set_layout_size(set_layout) as usize;
            let stride = set_size.next_multiple_of(props.descriptor_buffer_offset_alignment as usize);
            let binding_offset = db.get_descriptor_set_layout_binding_offset(set_layout, 0) as usize;
            let heap = dev
                .create_host_buffer(
                    (2 * stride) as u64,
                    vk::BufferUsageFlags::RESOURCE_DESCRIPTOR_BUFFER_EXT | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
                )
                .expect("descriptor buffer");
            let size = props.storage_buffer_descriptor_size;
            write_storage_descriptor(&db, &heap, binding_offset, size, &uav);
            write_storage_descriptor(&db, &heap, stride + binding_offset, size, &data);

            let words = spirv_words(HELLO_CHAIN_SPV).expect("spirv");
            let module =
                d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None).expect("module");
            let names: Vec<std::ffi::CString> =
                HELLO_CHAIN_STAGES.iter().map(|s| std::ffi::CString::new(s.entry).expect("name")).collect();
            let stages: Vec<_> = names
                .iter()
                .map(|n| {
                    vk::PipelineShaderStageCreateInfo::default()
                        .stage(vk::ShaderStageFlags::COMPUTE)
                        .module(module)
                        .name(n)
                })
                .collect();
            let graph_info = vk::ExecutionGraphPipelineCreateInfoAMDX::default()
                .flags(vk::PipelineCreateFlags::DESCRIPTOR_BUFFER_EXT)
                .stages(&stages)
                .layout(layout);
            let mut graph = vk::Pipeline::null();
            let result =
                (fns.create)(d.handle(), vk::PipelineCache::null(), 1, &graph_info, std::ptr::null(), &mut graph);
            assert_eq!(result, vk::Result::SUCCESS, "graph creation");

            let compute_words = spirv_words(SCALE_ADD).expect("spirv");
            let compute_module = d
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&compute_words), None)
                .expect("module");
            let compute_info = vk::ComputePipelineCreateInfo::default()
                .flags(vk::PipelineCreateFlags::DESCRIPTOR_BUFFER_EXT)
                .stage(
                    vk::PipelineShaderStageCreateInfo::default()
                        .stage(vk::ShaderStageFlags::COMPUTE)
                        .module(compute_module)
                        .name(c"main"),
                )
                .layout(layout);
            let compute = d
                .create_compute_pipelines(vk::PipelineCache::null(), &[compute_info], None)
                .map_err(|(_, e)| e)
                .expect("compute pipeline")[0];

            let mut size_info = amdx::ExecutionGraphPipelineScratchSize {
                s_type: vk::StructureType::EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX,
                p_next: std::ptr::null_mut(),
                min_size: 0,
                max_size: 0,
                size_granularity: 0,
            };
            assert_eq!((fns.scratch_size)(d.handle(), graph, &mut size_info), vk::Result::SUCCESS);
            let min = size_info.min_size;
            let scratch = dev
                .create_host_buffer(
                    min,
                    BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
                )
                .expect("scratch");
            let address = scratch.address.expect("address");
            let mut index = 0u32;
            let node = vk::PipelineShaderStageNodeCreateInfoAMDX::default().name(c"firstNode").index(0);
            assert_eq!((fns.node_index)(d.handle(), graph, &node, &mut index), vk::Result::SUCCESS);
            let records: Vec<u8> = [4u32, 1].iter().flat_map(|w| w.to_le_bytes()).collect();
            let infos = [vk::DispatchGraphInfoAMDX {
                node_index: index,
                payload_count: 1,
                payloads: vk::DeviceOrHostAddressConstAMDX { host_address: records.as_ptr().cast() },
                payload_stride: 8,
            }];
            let count = vk::DispatchGraphCountInfoAMDX {
                count: 1,
                infos: vk::DeviceOrHostAddressConstAMDX { host_address: infos.as_ptr().cast() },
                stride: std::mem::size_of::<vk::DispatchGraphInfoAMDX>() as u64,
            };
            let push = scale_add_push(3, 1, 64);
            dev.submit_once(|cb| {
                let heaps = [vk::DescriptorBufferBindingInfoEXT::default()
                    .address(heap.address.expect("heap address"))
                    .usage(vk::BufferUsageFlags::RESOURCE_DESCRIPTOR_BUFFER_EXT)];
                db.cmd_bind_descriptor_buffers(cb, &heaps);
                if offsets == Offsets::Maintenance6 {
                    // The graph's set 0 (and, until the next call, compute's).
                    let set = vk::SetDescriptorBufferOffsetsInfoEXT::default()
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                        .layout(layout)
                        .buffer_indices(&[0])
                        .offsets(&[0]);
                    m6.cmd_set_descriptor_buffer_offsets2(cb, &set);
                }
                // Compute first: its set 0 is the second descriptor.
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, compute);
                db.cmd_set_descriptor_buffer_offsets(
                    cb,
                    vk::PipelineBindPoint::COMPUTE,
                    layout,
                    0,
                    &[0],
                    &[stride as u64],
                );
                d.cmd_push_constants(cb, layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
                // The graph's set 0 is the first descriptor.
                d.cmd_bind_pipeline(cb, BIND_POINT, graph);
                if offsets == Offsets::GraphBindPoint {
                    db.cmd_set_descriptor_buffer_offsets(cb, BIND_POINT, layout, 0, &[0], &[0]);
                }
                (fns.init_scratch)(cb, graph, address, min);
                let barrier = vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                    .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE);
                d.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::DependencyFlags::empty(),
                    &[barrier],
                    &[],
                    &[],
                );
                (fns.dispatch)(cb, address, min, &count);
                // The compute bind point as the application left it.
                d.cmd_dispatch(cb, 1, 1, 1);
                dev.host_read_barrier(cb);
            })
            .expect("submit");
            assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&[(4, 1)], &[]), "the graph's descriptor");
            let want: Vec<u32> = (0..64).map(|i| i * 3 + 1).collect();
            assert_eq!(data.read_u32(64).expect("read"), want, "the compute dispatch's descriptor");

            d.destroy_pipeline(compute, None);
            d.destroy_shader_module(compute_module, None);
            d.destroy_pipeline(graph, None);
            d.destroy_shader_module(module, None);
            d.destroy_pipeline_layout(layout, None);
            d.destroy_descriptor_set_layout(set_layout, None);
        }
    }
    inst.finish();
}
