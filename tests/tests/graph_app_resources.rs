//! The application's resources inside node kernels (issue 4, binding), corpus
//! module 27: a uniform buffer in set 0 bound with vkCmdBindDescriptorSets,
//! a storage buffer in set 1 given as a push descriptor, and 8 bytes of push
//! constants, all at `VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX`. The
//! runtime appends its own push block after the application's range. The
//! push descriptor is pushed with `vkCmdPushDescriptorSetKHR`, or (issue 13)
//! with `vkCmdPushDescriptorSetWithTemplateKHR` and a push template created
//! for the graph bind point, or (modern lane) with maintenance6's
//! `vkCmdPushDescriptorSetWithTemplate2KHR`; or (modern lane) everything
//! goes through maintenance6's stage-addressed commands for the compute
//! stage, the push twice (the layer shadows a repeated push to the compute
//! and the graph bind point once: the graph must still read the second).
//! Validation 1.3.239 runs with handle wrapping off in this file, for
//! the maintenance6 commands it does not know (see `graph_maintenance6.rs`).

use ash::vk;
use conformance_tests::{compute, env, Extras, InstanceOptions, TestDevice, TestInstance};
use vk_amdx::{ExecutionGraphPipelineScratchSize, PIPELINE_BIND_POINT_EXECUTION_GRAPH};

const RESOURCES: &[u8] = include_bytes!("../../spirv-lowering/tests/corpus/27_app_resources.spv");

/// How the storage buffer of set 1 is pushed.
#[derive(Clone, Copy, PartialEq)]
enum Push {
    Writes,
    Template,
    Template2,
    /// maintenance6 all the way: `vkCmdBindDescriptorSets2KHR`,
    /// `vkCmdPushDescriptorSet2KHR` and `vkCmdPushConstants2KHR` for the
    /// compute stage.
    Writes2,
}

impl Push {
    fn maintenance6(self) -> bool {
        matches!(self, Push::Template2 | Push::Writes2)
    }
}

#[test]
fn node_kernels_see_sets_push_descriptors_and_push_constants() {
    run(Push::Writes);
}

#[test]
fn push_descriptor_templates_at_the_graph_bind_point() {
    run(Push::Template);
}

#[test]
fn push_descriptor_templates_through_maintenance6() {
    run(Push::Template2);
}

#[test]
fn sets_push_descriptors_and_push_constants_through_maintenance6() {
    run(Push::Writes2);
}

fn run(push_mode: Push) {
    env::init_with(&[("VK_LAYER_DISABLES", "VK_VALIDATION_FEATURE_DISABLE_UNIQUE_HANDLES_EXT")]).expect("environment");
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    let family = conformance_tests::compute_queue_family(&inst, pd).expect("queue family");
    let extras = Extras { push_descriptor: true, maintenance6: push_mode.maintenance6(), ..Default::default() };
    let Some(dev) = TestDevice::with_amdx_extras(&inst, pd, family, 1, extras) else { return };
    {
        let d = &dev.device;
        let fns = dev.amdx_commands().expect("graph entry points");
        let push_descriptor = ash::khr::push_descriptor::Device::new(&inst.instance, d);
        let maintenance6 = ash::khr::maintenance6::Device::new(&inst.instance, d);

        let params = dev.create_host_buffer(16, vk::BufferUsageFlags::UNIFORM_BUFFER).expect("params");
        params.write_u32(&[1000, 0, 0, 0]).expect("bias");
        let results = dev.create_host_buffer(4 * 64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("results");
        results.write_u32(&[0; 64]).expect("clear");
        // Pushed first where the push is repeated: must stay untouched.
        let decoy = dev.create_host_buffer(4 * 64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("decoy");
        decoy.write_u32(&[0; 64]).expect("clear");

        // SAFETY: (block) valid device; every object is destroyed below.
        unsafe {
            let ubo = [vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)];
            let ssbo = [vk::DescriptorSetLayoutBinding::default()
                .binding(2)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)];
            let set0 = d
                .create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&ubo), None)
                .expect("set 0");
            let set1 = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default()
                        .bindings(&ssbo)
                        .flags(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR),
                    None,
                )
                .expect("set 1");
            let ranges = [vk::PushConstantRange { stage_flags: vk::ShaderStageFlags::COMPUTE, offset: 0, size: 8 }];
            let layouts = [set0, set1];
            let layout = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts).push_constant_ranges(&ranges),
                    None,
                )
                .expect("layout");
            let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::UNIFORM_BUFFER, descriptor_count: 1 }];
            let pool = d
                .create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None)
                .expect("pool");
            let set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&[set0]),
                )
                .expect("set")[0];
            let ubo_info = [vk::DescriptorBufferInfo { buffer: params.buffer, offset: 0, range: vk::WHOLE_SIZE }];
            let write = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
                .buffer_info(&ubo_info);
            d.update_descriptor_sets(&[write], &[]);

            let words = compute::spirv_words(RESOURCES).expect("spirv");
            let module =
                d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None).expect("module");
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"appResources");
            let stages = [stage];
            let graph_info = vk::ExecutionGraphPipelineCreateInfoAMDX::default().stages(&stages).layout(layout);
            let mut graph = vk::Pipeline::null();
            let result =
                (fns.create)(d.handle(), vk::PipelineCache::null(), 1, &graph_info, std::ptr::null(), &mut graph);
            assert_eq!(result, vk::Result::SUCCESS, "graph creation");

            let mut size = ExecutionGraphPipelineScratchSize {
                s_type: vk::StructureType::EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX,
                p_next: std::ptr::null_mut(),
                min_size: 0,
                max_size: 0,
                size_granularity: 0,
            };
            assert_eq!((fns.scratch_size)(d.handle(), graph, &mut size), vk::Result::SUCCESS);
            let scratch = dev
                .create_host_buffer(
                    size.min_size,
                    vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
                )
                .expect("scratch");
            let address = scratch.address.expect("address");

            let slots: Vec<u32> = (0..10).collect();
            let records: Vec<u8> = slots.iter().flat_map(|s| s.to_le_bytes()).collect();
            let (base, scale) = (4u32, 3u32);
            let push: Vec<u8> = [base, scale].iter().flat_map(|w| w.to_le_bytes()).collect();
            let infos = [vk::DispatchGraphInfoAMDX {
                node_index: 0,
                payload_count: slots.len() as u32,
                payloads: vk::DeviceOrHostAddressConstAMDX { host_address: records.as_ptr().cast() },
                payload_stride: 4,
            }];
            let count_info = vk::DispatchGraphCountInfoAMDX {
                count: 1,
                infos: vk::DeviceOrHostAddressConstAMDX { host_address: infos.as_ptr().cast() },
                stride: std::mem::size_of::<vk::DispatchGraphInfoAMDX>() as u64,
            };
            let ssbo_info = [vk::DescriptorBufferInfo { buffer: results.buffer, offset: 0, range: vk::WHOLE_SIZE }];
            let pushed = vk::WriteDescriptorSet::default()
                .dst_binding(2)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&ssbo_info);
            let entries = [vk::DescriptorUpdateTemplateEntry {
                dst_binding: 2,
                dst_array_element: 0,
                descriptor_count: 1,
                descriptor_type: vk::DescriptorType::STORAGE_BUFFER,
                offset: 0,
                stride: std::mem::size_of::<vk::DescriptorBufferInfo>(),
            }];
            let template_info = vk::DescriptorUpdateTemplateCreateInfo::default()
                .descriptor_update_entries(&entries)
                .template_type(vk::DescriptorUpdateTemplateType::PUSH_DESCRIPTORS_KHR)
                .pipeline_bind_point(PIPELINE_BIND_POINT_EXECUTION_GRAPH)
                .pipeline_layout(layout)
                .set(1);
            let template = d.create_descriptor_update_template(&template_info, None).expect("template");
            dev.submit_once(|cb| {
                d.cmd_bind_pipeline(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH, graph);
                if push_mode == Push::Writes2 {
                    let sets = [set];
                    let bind = vk::BindDescriptorSetsInfoKHR::default()
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                        .layout(layout)
                        .descriptor_sets(&sets);
                    maintenance6.cmd_bind_descriptor_sets2(cb, &bind);
                } else {
                    d.cmd_bind_descriptor_sets(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH, layout, 0, &[set], &[]);
                }
                match push_mode {
                    Push::Writes => push_descriptor.cmd_push_descriptor_set(
                        cb,
                        PIPELINE_BIND_POINT_EXECUTION_GRAPH,
                        layout,
                        1,
                        &[pushed],
                    ),
                    Push::Template => push_descriptor.cmd_push_descriptor_set_with_template(
                        cb,
                        template,
                        layout,
                        1,
                        ssbo_info.as_ptr().cast(),
                    ),
                    Push::Writes2 => {
                        // Twice, the decoy first: the second push has the
                        // first one's shape, which the layer shadows once for
                        // the compute and the graph bind point (a mirrored
                        // push); the graph must read the second.
                        let decoy_info =
                            [vk::DescriptorBufferInfo { buffer: decoy.buffer, offset: 0, range: vk::WHOLE_SIZE }];
                        let decoy_write = pushed.buffer_info(&decoy_info);
                        for writes in [[decoy_write], [pushed]] {
                            let push_set = vk::PushDescriptorSetInfoKHR::default()
                                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                                .layout(layout)
                                .set(1)
                                .descriptor_writes(&writes);
                            maintenance6.cmd_push_descriptor_set2(cb, &push_set)
                        }
                    }
                    Push::Template2 => {
                        let push = vk::PushDescriptorSetWithTemplateInfoKHR::default()
                            .descriptor_update_template(template)
                            .layout(layout)
                            .set(1)
                            .data(ssbo_info.as_ptr().cast());
                        maintenance6.cmd_push_descriptor_set_with_template2(cb, &push)
                    }
                }
                if push_mode == Push::Writes2 {
                    let constants = vk::PushConstantsInfoKHR::default()
                        .layout(layout)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                        .values(&push);
                    maintenance6.cmd_push_constants2(cb, &constants);
                } else {
                    d.cmd_push_constants(cb, layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
                }
                (fns.init_scratch)(cb, graph, address, size.min_size);
                (fns.dispatch)(cb, address, size.min_size, &count_info);
                dev.host_read_barrier(cb);
            })
            .expect("submit");
            // Results[base + slot] = slot * scale + bias.
            let mut want = vec![0u32; 64];
            for &s in &slots {
                want[(base + s) as usize] = s * scale + 1000;
            }
            assert_eq!(results.read_u32(64).expect("read"), want);
            assert_eq!(decoy.read_u32(64).expect("read decoy"), vec![0; 64], "the repeated push's first buffer");

            d.destroy_descriptor_update_template(template, None);
            d.destroy_pipeline(graph, None);
            d.destroy_shader_module(module, None);
            d.destroy_descriptor_pool(pool, None);
            d.destroy_pipeline_layout(layout, None);
            d.destroy_descriptor_set_layout(set1, None);
            d.destroy_descriptor_set_layout(set0, None);
        }
    }
    drop(dev);
    inst.finish();
}
