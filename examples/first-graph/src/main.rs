//! Your first work graph: `nodes.hlsl` (compiled by DXC into `nodes.spv`)
//! run with `VK_AMDX_shader_enqueue` revision 2, step by step: device,
//! graph pipeline with node names, scratch memory, a dispatch of host
//! records, and the result checked against the CPU (exit status 1 if wrong).
//!
//! ash 0.38 declares revision 1 of the extension only, so the revision-2
//! features struct and commands come from this workspace's `vk-amdx`.

use std::ffi::CStr;

use ash::vk;
use vk_amdx::{Commands, ExecutionGraphPipelineScratchSize, PhysicalDeviceShaderEnqueueFeatures};

const SPV: &[u8] = include_bytes!("../nodes.spv");
/// (SPIR-V entry point, node name): DXC names entry points after the HLSL
/// functions and drops the name of an entry's `[NodeID]`, so `tallyBins`
/// must be named "tally" here, the name `square`'s output targets.
const NODES: [(&CStr, &CStr); 3] = [(c"numbers", c"numbers"), (c"square", c"square"), (c"tallyBins", c"tally")];
/// Host records for `numbers`: `Range { groups, first, count }` (1..=600, 601..=1000).
const RANGES: [[u32; 3]; 2] = [[19, 1, 600], [13, 601, 400]];

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// A buffer bound to new memory of the first type with `flags`.
fn buffer(
    i: &ash::Instance,
    pd: vk::PhysicalDevice,
    d: &ash::Device,
    size: u64,
    usage: vk::BufferUsageFlags,
    flags: vk::MemoryPropertyFlags,
) -> Res<(vk::Buffer, vk::DeviceMemory)> {
    // SAFETY: valid handles; the memory is bound once, the info outlives the calls.
    unsafe {
        let buf = d.create_buffer(&vk::BufferCreateInfo::default().size(size).usage(usage), None)?;
        let req = d.get_buffer_memory_requirements(buf);
        let types = i.get_physical_device_memory_properties(pd);
        let ty = (0..types.memory_type_count)
            .find(|&t| {
                req.memory_type_bits & (1 << t) != 0 && types.memory_types[t as usize].property_flags.contains(flags)
            })
            .ok_or("no suitable memory type")?;
        // The scratch buffer needs a device address: allocate every buffer that way.
        let mut addr = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let info =
            vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty).push_next(&mut addr);
        let mem = d.allocate_memory(&info, None)?;
        d.bind_buffer_memory(buf, mem, 0)?;
        Ok((buf, mem))
    }
}

fn main() -> Res<()> {
    // SAFETY: every call gets handles created above it, alive until the end of
    // the block, and structures that outlive the call; the GPU is idle
    // (fence waited) before anything is read or destroyed.
    unsafe {
        let entry = ash::Entry::linked();
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
        let instance = entry.create_instance(&vk::InstanceCreateInfo::default().application_info(&app), None)?;
        // The first device listing the extension (the layer adds it) and a compute queue family.
        let (pd, family) = instance
            .enumerate_physical_devices()?
            .into_iter()
            .filter(|&pd| {
                let exts = instance.enumerate_device_extension_properties(pd).unwrap_or_default();
                exts.iter().any(|e| e.extension_name_as_c_str() == Ok(vk_amdx::EXTENSION_NAME))
            })
            .find_map(|pd| {
                let families = instance.get_physical_device_queue_family_properties(pd);
                let family = families.iter().position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))?;
                Some((pd, family as u32))
            })
            .ok_or("no device with VK_AMDX_shader_enqueue: is the layer enabled?")?;
        let mut enqueue = PhysicalDeviceShaderEnqueueFeatures { shader_enqueue: vk::TRUE, ..Default::default() };
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().buffer_device_address(true);
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&[1.0])];
        let exts = [vk_amdx::EXTENSION_NAME.as_ptr()];
        let info = vk::DeviceCreateInfo::default().queue_create_infos(&queues).enabled_extension_names(&exts);
        let d = instance.create_device(pd, &info.push_next(&mut enqueue).push_next(&mut v12), None)?;
        let amdx = Commands::load(&instance, &d).map_err(|name| format!("{name:?} did not resolve"))?;

        // Bins: 4 sums then 4 counts, host-visible so we can read them.
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let (bins, bins_mem) = buffer(&instance, pd, &d, 32, vk::BufferUsageFlags::STORAGE_BUFFER, host)?;
        let bins_ptr = d.map_memory(bins_mem, 0, 32, vk::MemoryMapFlags::empty())?.cast::<u32>();
        bins_ptr.write_bytes(0, 8);

        // Set 0, binding 0: `RWStructuredBuffer<uint> Bins : register(u0)`.
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        let set_layout =
            d.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding), None)?;
        let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 1 }];
        let pool =
            d.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None)?;
        let layouts = [set_layout];
        let set = d.allocate_descriptor_sets(
            &vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts),
        )?[0];
        let buf_info = [vk::DescriptorBufferInfo { buffer: bins, offset: 0, range: vk::WHOLE_SIZE }];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(set)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&buf_info);
        d.update_descriptor_sets(&[write], &[]);
        let layout = d.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts), None)?;

        // The graph: one stage per node, each named through VkPipelineShaderStageNodeCreateInfoAMDX.
        let code = ash::util::read_spv(&mut std::io::Cursor::new(SPV))?;
        let module = d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)?;
        let mut names = NODES.map(|(_, node)| {
            vk::PipelineShaderStageNodeCreateInfoAMDX::default().name(node).index(vk::SHADER_INDEX_UNUSED_AMDX)
        });
        let stages: Vec<_> = NODES
            .iter()
            .zip(&mut names)
            .map(|(&(entry, _), name)| {
                let stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE);
                stage.module(module).name(entry).push_next(name)
            })
            .collect();
        let graph_info = vk::ExecutionGraphPipelineCreateInfoAMDX::default().stages(&stages).layout(layout);
        let mut graph = vk::Pipeline::null();
        (amdx.create)(d.handle(), vk::PipelineCache::null(), 1, &graph_info, std::ptr::null(), &mut graph)
            .result()
            .map_err(|e| format!("vkCreateExecutionGraphPipelinesAMDX: {e:?} (the layer's log says why)"))?;

        // Scratch: the smallest size the graph accepts is plenty for 1,000 records.
        let mut size = ExecutionGraphPipelineScratchSize::default();
        (amdx.scratch_size)(d.handle(), graph, &mut size).result()?;
        let usage = vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let local = vk::MemoryPropertyFlags::DEVICE_LOCAL;
        let (scratch, scratch_mem) = buffer(&instance, pd, &d, size.min_size, usage, local)?;
        let scratch_addr = d.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(scratch));
        let node_info = vk::PipelineShaderStageNodeCreateInfoAMDX::default().name(c"numbers").index(0);
        let mut entry_node = 0;
        (amdx.node_index)(d.handle(), graph, &node_info, &mut entry_node).result()?;
        println!("graph created: scratch {} bytes (min), entry node index {entry_node}", size.min_size);

        // Record: bind, initialise scratch, barrier, dispatch the host records, barrier for the host.
        let cmd_pool = d.create_command_pool(&vk::CommandPoolCreateInfo::default().queue_family_index(family), None)?;
        let cb_info = vk::CommandBufferAllocateInfo::default().command_pool(cmd_pool).command_buffer_count(1);
        let cb = d.allocate_command_buffers(&cb_info)?[0];
        d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())?;
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::EXECUTION_GRAPH_AMDX, graph);
        d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::EXECUTION_GRAPH_AMDX, layout, 0, &[set], &[]);
        (amdx.init_scratch)(cb, graph, scratch_addr, size.min_size);
        let barrier = |src, dst, access| {
            let b = vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::SHADER_WRITE).dst_access_mask(access);
            d.cmd_pipeline_barrier(cb, src, dst, vk::DependencyFlags::empty(), &[b], &[], &[]);
        };
        let compute = vk::PipelineStageFlags::COMPUTE_SHADER;
        barrier(compute, compute, vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE);
        let dispatch = [vk::DispatchGraphInfoAMDX {
            node_index: entry_node,
            payload_count: RANGES.len() as u32,
            payloads: vk::DeviceOrHostAddressConstAMDX { host_address: RANGES.as_ptr().cast() },
            payload_stride: size_of::<[u32; 3]>() as u64,
        }];
        let count = vk::DispatchGraphCountInfoAMDX {
            count: 1,
            infos: vk::DeviceOrHostAddressConstAMDX { host_address: dispatch.as_ptr().cast() },
            stride: size_of::<vk::DispatchGraphInfoAMDX>() as u64,
        };
        (amdx.dispatch)(cb, scratch_addr, size.min_size, &count);
        barrier(compute, vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ);
        d.end_command_buffer(cb)?;
        let fence = d.create_fence(&vk::FenceCreateInfo::default(), None)?;
        let cbs = [cb];
        d.queue_submit(d.get_device_queue(family, 0), &[vk::SubmitInfo::default().command_buffers(&cbs)], fence)?;
        d.wait_for_fences(&[fence], true, u64::MAX)?;

        // Check against the CPU: same bins, and the total is n(n+1)(2n+1)/6 for n = 1000.
        let got = std::slice::from_raw_parts(bins_ptr, 8).to_vec();
        let mut want = [0u32; 8];
        for n in RANGES.iter().flat_map(|&[_, first, count]| first..first + count) {
            want[(n % 4) as usize] += n * n;
            want[4 + (n % 4) as usize] += 1;
        }
        println!("bin  numbers  sum of n*n   expected");
        for bin in 0..4 {
            println!("n%4={bin}  {:>5}  {:>11}  {:>11}", got[4 + bin], got[bin], want[bin]);
        }
        let total: u64 = got[..4].iter().map(|&s| u64::from(s)).sum();
        println!("total {total} (1000*1001*2001/6 = {})", 1000 * 1001 * 2001 / 6);

        d.destroy_fence(fence, None);
        d.destroy_command_pool(cmd_pool, None);
        d.destroy_buffer(scratch, None);
        d.free_memory(scratch_mem, None);
        d.destroy_pipeline(graph, None);
        d.destroy_shader_module(module, None);
        d.destroy_pipeline_layout(layout, None);
        d.destroy_descriptor_pool(pool, None);
        d.destroy_descriptor_set_layout(set_layout, None);
        d.destroy_buffer(bins, None);
        d.free_memory(bins_mem, None);
        d.destroy_device(None);
        instance.destroy_instance(None);
        if got != want || total != 1000 * 1001 * 2001 / 6 {
            eprintln!("WRONG: the graph's bins differ from the CPU's");
            std::process::exit(1);
        }
        println!("ok");
        Ok(())
    }
}
