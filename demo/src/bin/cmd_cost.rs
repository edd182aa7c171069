//! `cmd_cost`: pass-through cost of the layer per intercepted `vkCmd*` call.
//!
//! In one process, on the same physical device, three configurations:
//! - `without`: an instance without the layer (the baseline);
//! - `layer`: an instance with `ppEnabledLayerNames =
//!   [VK_LAYER_EMU_shader_enqueue]`, device without the extension (the
//!   application does not use it: pure pass-through);
//! - `layer+amdx`: same instance, device with `VK_AMDX_shader_enqueue`
//!   enabled (emulation active: the layer's `vkCmd*` hooks shadow state).
//!
//! On each, records `--iters` calls each of `vkCmdPushConstants`,
//! `vkCmdBindDescriptorSets` and `vkCmdBindPipeline(COMPUTE)` into one
//! command buffer (CPU time of recording, `std::time::Instant`), resets it,
//! and repeats `--repeats` times, rotating the order of the configurations.
//! Prints the median ns/call per command and configuration and the
//! difference to the baseline (the layer's added cost).
//!
//! Usage: `VK_LAYER_PATH=<repo>/manifests cmd_cost [--iters N] [--repeats R]
//! [--json PATH]`. Sets `VK_EMU_SE_DISABLE=1` for itself so that an
//! installed implicit copy cannot sneak into the "without" instance.

use std::ffi::CStr;
use std::process::ExitCode;
use std::time::Instant;

use ash::vk;
use demo::{amdx, vkutil};

struct Args {
    iters: u32,
    repeats: u32,
    json: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args { iters: 1_000_000, repeats: 7, json: None };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--iters" => a.iters = value()?.parse().map_err(|e| format!("--iters: {e}"))?,
            "--repeats" => a.repeats = value()?.parse().map_err(|e| format!("--repeats: {e}"))?,
            "--json" => a.json = Some(value()?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.iters == 0 || a.repeats == 0 {
        return Err("--iters and --repeats must be > 0".into());
    }
    Ok(a)
}

/// The objects one configuration records with.
struct Rig {
    instance: ash::Instance,
    device: ash::Device,
    device_name: String,
    amdx_listed: bool,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    module: vk::ShaderModule,
    pipeline: vk::Pipeline,
    desc_pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    pool: vk::CommandPool,
    cb: vk::CommandBuffer,
}

impl Rig {
    fn new(entry: &ash::Entry, layers: &[&CStr], device_index: usize, enable_amdx: bool) -> Result<Self, String> {
        let instance = vkutil::create_instance(entry, layers)?;
        // SAFETY: valid instance.
        let pds = unsafe { instance.enumerate_physical_devices() }
            .map_err(|e| format!("vkEnumeratePhysicalDevices: {e:?}"))?;
        let pd = *pds.get(device_index).ok_or_else(|| format!("no physical device #{device_index}"))?;
        let (device_name, driver, _) = vkutil::describe(&instance, pd);
        let amdx_listed = !vkutil::extension_listings(&instance, pd, amdx::EXTENSION_NAME)?.is_empty();
        let family = vkutil::compute_family(&instance, pd)?;
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
        let names = [amdx::EXTENSION_NAME.as_ptr()];
        let mut features = amdx::Features { shader_enqueue: vk::TRUE, ..Default::default() };
        let mut info = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
        if enable_amdx {
            info = info.enabled_extension_names(&names).push_next(&mut features);
        }
        // SAFETY: `info` points at locals alive for the call.
        let device =
            unsafe { instance.create_device(pd, &info, None) }.map_err(|e| format!("vkCreateDevice: {e:?}"))?;
        let device_name = format!("{device_name} [driver {driver}]");
        // SAFETY: every call gets valid handles of `device` (created just
        // above) and create infos pointing at live locals.
        unsafe {
            let bindings = [vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)];
            let set_layout = device
                .create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)
                .map_err(|e| format!("vkCreateDescriptorSetLayout: {e:?}"))?;
            let set_layouts = [set_layout];
            let ranges = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).size(12)];
            let layout = device
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts).push_constant_ranges(&ranges),
                    None,
                )
                .map_err(|e| format!("vkCreatePipelineLayout: {e:?}"))?;
            let words = vkutil::spirv_words(vkutil::SCALE_ADD_SPV)?;
            let module = device
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
                .map_err(|e| format!("vkCreateShaderModule: {e:?}"))?;
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main");
            let pipeline = device
                .create_compute_pipelines(
                    vk::PipelineCache::null(),
                    &[vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout)],
                    None,
                )
                .map_err(|(_, e)| format!("vkCreateComputePipelines: {e:?}"))?[0];
            let sizes = [vk::DescriptorPoolSize::default().ty(vk::DescriptorType::STORAGE_BUFFER).descriptor_count(1)];
            let desc_pool = device
                .create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None)
                .map_err(|e| format!("vkCreateDescriptorPool: {e:?}"))?;
            let set = device
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default().descriptor_pool(desc_pool).set_layouts(&set_layouts),
                )
                .map_err(|e| format!("vkAllocateDescriptorSets: {e:?}"))?[0];
            let pool = device
                .create_command_pool(&vk::CommandPoolCreateInfo::default().queue_family_index(family), None)
                .map_err(|e| format!("vkCreateCommandPool: {e:?}"))?;
            let cb = device
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .map_err(|e| format!("vkAllocateCommandBuffers: {e:?}"))?[0];
            Ok(Self {
                instance,
                device,
                device_name,
                amdx_listed,
                set_layout,
                layout,
                module,
                pipeline,
                desc_pool,
                set,
                pool,
                cb,
            })
        }
    }

    /// Records `iters` of each command; returns ns/call for
    /// [push constants, bind descriptor sets, bind pipeline].
    fn measure(&self, iters: u32) -> Result<[f64; 3], String> {
        let d = &self.device;
        let push = [0u8; 12];
        let sets = [self.set];
        let mut out = [0f64; 3];
        // SAFETY: cb belongs to `pool` of `d`, is not in use, and every
        // recorded handle is valid; the pool is reset after recording.
        unsafe {
            d.begin_command_buffer(self.cb, &vk::CommandBufferBeginInfo::default())
                .map_err(|e| format!("vkBeginCommandBuffer: {e:?}"))?;
            let t = Instant::now();
            for _ in 0..iters {
                d.cmd_push_constants(self.cb, self.layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
            }
            out[0] = t.elapsed().as_nanos() as f64 / f64::from(iters);
            let t = Instant::now();
            for _ in 0..iters {
                d.cmd_bind_descriptor_sets(self.cb, vk::PipelineBindPoint::COMPUTE, self.layout, 0, &sets, &[]);
            }
            out[1] = t.elapsed().as_nanos() as f64 / f64::from(iters);
            let t = Instant::now();
            for _ in 0..iters {
                d.cmd_bind_pipeline(self.cb, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            }
            out[2] = t.elapsed().as_nanos() as f64 / f64::from(iters);
            d.end_command_buffer(self.cb).map_err(|e| format!("vkEndCommandBuffer: {e:?}"))?;
            d.reset_command_pool(self.pool, vk::CommandPoolResetFlags::RELEASE_RESOURCES)
                .map_err(|e| format!("vkResetCommandPool: {e:?}"))?;
        }
        Ok(out)
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        let d = &self.device;
        // SAFETY: nothing is in use (recording only, never submitted).
        unsafe {
            d.destroy_command_pool(self.pool, None);
            d.destroy_descriptor_pool(self.desc_pool, None);
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_shader_module(self.module, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            d.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

const NAMES: [&str; 3] = ["vkCmdPushConstants", "vkCmdBindDescriptorSets", "vkCmdBindPipeline(COMPUTE)"];

fn run() -> Result<(), String> {
    let args = parse_args()?;
    std::env::set_var("VK_EMU_SE_DISABLE", "1");
    let device_index = std::env::var("CMD_COST_DEVICE_INDEX").ok().and_then(|v| v.parse().ok()).unwrap_or(0usize);
    let entry = ash::Entry::linked();
    let configs = [
        ("without", Rig::new(&entry, &[], device_index, false)?),
        ("layer", Rig::new(&entry, &[demo::LAYER_NAME], device_index, false)?),
        ("layer+amdx", Rig::new(&entry, &[demo::LAYER_NAME], device_index, true)?),
    ];
    if !configs[1].1.amdx_listed {
        return Err("the layered instance does not list VK_AMDX_shader_enqueue: layer not loaded?".into());
    }
    if configs[0].1.amdx_listed {
        println!("note: the plain instance lists VK_AMDX_shader_enqueue (driver or implicit layer)");
    }
    let device_name = configs[0].1.device_name.clone();
    println!("device: {device_name}");
    println!(
        "recording {} calls of each command per repeat, {} repeats, rotating configurations",
        args.iters, args.repeats
    );
    // Warm-up (allocator pools, page faults).
    for (_, rig) in &configs {
        rig.measure(args.iters.min(10_000))?;
    }
    let mut samples: Vec<[Vec<f64>; 3]> = configs.iter().map(|_| Default::default()).collect();
    for r in 0..args.repeats as usize {
        for k in 0..configs.len() {
            let c = (r + k) % configs.len();
            let m = configs[c].1.measure(args.iters)?;
            for (i, v) in m.iter().enumerate() {
                samples[c][i].push(*v);
            }
        }
    }
    println!(
        "{:<28} {:>10} {:>10} {:>11} {:>10} {:>11}",
        "median ns/call", "without", "layer", "added", "layer+amdx", "added"
    );
    let mut rows = Vec::new();
    for (i, name) in NAMES.iter().enumerate() {
        let base = median(&mut samples[0][i]);
        let layer = median(&mut samples[1][i]);
        let active = median(&mut samples[2][i]);
        println!(
            "{name:<28} {base:>10.1} {layer:>10.1} {:>+11.1} {active:>10.1} {:>+11.1}",
            layer - base,
            active - base
        );
        rows.push(format!(
            "{{\"command\":\"{name}\",\"without_ns\":{base:.2},\"layer_ns\":{layer:.2},\"layer_amdx_ns\":{active:.2}}}"
        ));
    }
    if let Some(path) = args.json {
        let json = format!(
            "{{\"device\":{:?},\"iters\":{},\"repeats\":{},\"results\":[{}]}}\n",
            device_name,
            args.iters,
            args.repeats,
            rows.join(",")
        );
        std::fs::write(&path, json).map_err(|e| format!("cannot write {path}: {e}"))?;
        println!("wrote {path}");
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cmd_cost: error: {e}");
            ExitCode::FAILURE
        }
    }
}
