//! Pass-through cost of the layer per intercepted `vkCmd*` call, the core of
//! the `cmd_cost` binary and of `bench`'s pass-through figures.
//!
//! In one process, on the same physical device, three configurations:
//! - `without`: an instance without the layer (the baseline);
//! - `layer`: an instance with `ppEnabledLayerNames =
//!   [VK_LAYER_EMU_shader_enqueue]`, device without the extension (the
//!   application does not use it: pure pass-through);
//! - `layer+amdx`: same instance, device with `VK_AMDX_shader_enqueue`
//!   enabled (emulation active: the layer's `vkCmd*` hooks shadow state).
//!
//! [`PassThrough::measure`] records `iters` calls each of
//! `vkCmdPushConstants`, `vkCmdBindDescriptorSets` and
//! `vkCmdBindPipeline(COMPUTE)` into one command buffer (CPU time of
//! recording, `std::time::Instant`), resets it, and repeats `repeats` times,
//! rotating the order of the configurations; the result is the median
//! ns/call per command and configuration.

use std::ffi::CStr;
use std::time::Instant;

use ash::vk;

use vk_host::pipeline::{compute_pipeline, shader_module, spirv_words};
use vk_host::submit::{command_buffer, compute_family};
use vk_host::StorageBindings;

use crate::vkutil;

/// The measured commands, in [`Cost`] order.
pub const COMMANDS: [&str; 3] = ["vkCmdPushConstants", "vkCmdBindDescriptorSets", "vkCmdBindPipeline(COMPUTE)"];

/// Median ns/call of one command in each configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    pub command: &'static str,
    pub without_ns: f64,
    pub layer_ns: f64,
    pub layer_amdx_ns: f64,
}

impl Cost {
    /// What the layer adds when enabled but the extension is not.
    pub fn layer_added_ns(&self) -> f64 {
        self.layer_ns - self.without_ns
    }

    /// What the layer adds with the extension enabled (emulation active).
    pub fn layer_amdx_added_ns(&self) -> f64 {
        self.layer_amdx_ns - self.without_ns
    }
}

/// Sets `VK_EMU_SE_DISABLE=1` so that an installed implicit copy of the
/// layer cannot sneak into the `without` instance. Call it before any Vulkan
/// object exists: drivers read the environment from their own threads.
pub fn disable_implicit_layer() {
    std::env::set_var("VK_EMU_SE_DISABLE", "1");
}

/// The three configurations, ready to record.
pub struct PassThrough {
    rigs: [Rig; 3],
}

impl PassThrough {
    /// Creates the three instances and devices on physical device
    /// `device_index` (in enumeration order); fails when the layered
    /// instance does not list the extension (layer not found).
    pub fn new(entry: &ash::Entry, device_index: usize) -> Result<Self, String> {
        let rigs = [
            Rig::new(entry, &[], device_index, false)?,
            Rig::new(entry, &[vk_host::LAYER_NAME], device_index, false)?,
            Rig::new(entry, &[vk_host::LAYER_NAME], device_index, true)?,
        ];
        if !rigs[1].amdx_listed {
            return Err("the layered instance does not list VK_AMDX_shader_enqueue: layer not loaded?".into());
        }
        if rigs.iter().any(|r| r.device_name != rigs[0].device_name) {
            return Err(format!("device #{device_index} differs between the instances"));
        }
        Ok(Self { rigs })
    }

    /// `"<device name> [driver <driver name>]"`.
    pub fn device(&self) -> &str {
        &self.rigs[0].device_name
    }

    /// The instance without the layer lists `VK_AMDX_shader_enqueue` (a
    /// native driver or an implicit layer): `without` may not be layer-free.
    pub fn plain_lists_amdx(&self) -> bool {
        self.rigs[0].amdx_listed
    }

    /// One warm-up pass, then `repeats` rounds of `iters` calls of each
    /// command in each configuration; the medians, in [`COMMANDS`] order.
    pub fn measure(&self, iters: u32, repeats: u32) -> Result<Vec<Cost>, String> {
        if iters == 0 || repeats == 0 {
            return Err("iterations and repeats must be > 0".into());
        }
        // Warm-up (allocator pools, page faults).
        for rig in &self.rigs {
            rig.measure(iters.min(10_000))?;
        }
        let mut samples: [[Vec<f64>; 3]; 3] = Default::default();
        for r in 0..repeats as usize {
            // Rotate so that no configuration always runs first (cache, clock).
            for k in 0..self.rigs.len() {
                let c = (r + k) % self.rigs.len();
                let m = self.rigs[c].measure(iters)?;
                for (i, v) in m.iter().enumerate() {
                    samples[c][i].push(*v);
                }
            }
        }
        let costs = COMMANDS
            .iter()
            .enumerate()
            .map(|(i, &command)| Cost {
                command,
                without_ns: median(&mut samples[0][i]),
                layer_ns: median(&mut samples[1][i]),
                layer_amdx_ns: median(&mut samples[2][i]),
            })
            .collect();
        Ok(costs)
    }
}

/// Prints the medians and the layer's added cost, one line per command.
pub fn print_table(costs: &[Cost]) {
    println!(
        "{:<28} {:>10} {:>10} {:>11} {:>10} {:>11}",
        "median ns/call", "without", "layer", "added", "layer+amdx", "added"
    );
    for c in costs {
        println!(
            "{:<28} {:>10.1} {:>10.1} {:>+11.1} {:>10.1} {:>+11.1}",
            c.command,
            c.without_ns,
            c.layer_ns,
            c.layer_added_ns(),
            c.layer_amdx_ns,
            c.layer_amdx_added_ns()
        );
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The objects one configuration records with.
struct Rig {
    instance: ash::Instance,
    device: ash::Device,
    device_name: String,
    amdx_listed: bool,
    /// Binding 0 (never written: recording does not read it) and 12 bytes of push constants.
    bindings: StorageBindings,
    module: vk::ShaderModule,
    pipeline: vk::Pipeline,
    pool: vk::CommandPool,
    cb: vk::CommandBuffer,
}

impl Rig {
    fn new(entry: &ash::Entry, layers: &[&CStr], device_index: usize, enable_amdx: bool) -> Result<Self, String> {
        let instance = vkutil::create_instance(entry, layers)?;
        let (device, device_name, amdx_listed, family) = match create_device(&instance, device_index, enable_amdx) {
            Ok(d) => d,
            Err(e) => {
                // SAFETY: the instance has no children.
                unsafe { instance.destroy_instance(None) };
                return Err(e);
            }
        };
        let mut rig = Rig {
            instance,
            device,
            device_name,
            amdx_listed,
            bindings: StorageBindings::default(),
            module: vk::ShaderModule::null(),
            pipeline: vk::Pipeline::null(),
            pool: vk::CommandPool::null(),
            cb: vk::CommandBuffer::null(),
        };
        // On error `rig` drops and destroys what was created so far.
        rig.create_objects(family)?;
        Ok(rig)
    }

    /// The layout, pipeline, set, pool and command buffer that get recorded.
    fn create_objects(&mut self, family: u32) -> Result<(), String> {
        let device = &self.device;
        // Each object is stored in `self` at once and destroyed on drop.
        self.bindings = StorageBindings::new(device, 1, 12)?;
        self.module = shader_module(device, &spirv_words(vkutil::SCALE_ADD_SPV)?)?;
        self.pipeline = compute_pipeline(device, self.module, c"main", self.bindings.layout)?;
        // SAFETY: valid device and create info.
        self.pool = unsafe {
            device.create_command_pool(&vk::CommandPoolCreateInfo::default().queue_family_index(family), None)
        }
        .map_err(|e| format!("vkCreateCommandPool: {e:?}"))?;
        self.cb = command_buffer(device, self.pool)?;
        Ok(())
    }

    /// Records `iters` of each command; returns ns/call in [`COMMANDS`] order.
    fn measure(&self, iters: u32) -> Result<[f64; 3], String> {
        let d = &self.device;
        let push = [0u8; 12];
        let (layout, sets) = (self.bindings.layout, [self.bindings.set]);
        let mut out = [0f64; 3];
        // SAFETY: cb belongs to `pool` of `d`, is not in use, and every
        // recorded handle is valid; the pool is reset after recording.
        unsafe {
            d.begin_command_buffer(self.cb, &vk::CommandBufferBeginInfo::default())
                .map_err(|e| format!("vkBeginCommandBuffer: {e:?}"))?;
            let t = Instant::now();
            for _ in 0..iters {
                d.cmd_push_constants(self.cb, layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
            }
            out[0] = t.elapsed().as_nanos() as f64 / f64::from(iters);
            let t = Instant::now();
            for _ in 0..iters {
                d.cmd_bind_descriptor_sets(self.cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &sets, &[]);
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

/// The device on physical device `device_index` of `instance`, its name
/// (with the driver), whether the extension is listed, its compute family.
fn create_device(
    instance: &ash::Instance,
    device_index: usize,
    enable_amdx: bool,
) -> Result<(ash::Device, String, bool, u32), String> {
    // SAFETY: valid instance.
    let pds =
        unsafe { instance.enumerate_physical_devices() }.map_err(|e| format!("vkEnumeratePhysicalDevices: {e:?}"))?;
    let pd = *pds.get(device_index).ok_or_else(|| format!("no physical device #{device_index}"))?;
    let (name, driver, _) = vkutil::describe(instance, pd);
    let amdx_listed = !vkutil::extension_listings(instance, pd, vk_amdx::EXTENSION_NAME)?.is_empty();
    let family = compute_family(instance, pd)?;
    let priorities = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
    let names = [vk_amdx::EXTENSION_NAME.as_ptr()];
    let mut features = vk_amdx::PhysicalDeviceShaderEnqueueFeatures { shader_enqueue: vk::TRUE, ..Default::default() };
    let mut info = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
    if enable_amdx {
        info = info.enabled_extension_names(&names).push_next(&mut features);
    }
    // SAFETY: `info` points at locals alive for the call.
    let device = unsafe { instance.create_device(pd, &info, None) }.map_err(|e| format!("vkCreateDevice: {e:?}"))?;
    Ok((device, format!("{name} [driver {driver}]"), amdx_listed, family))
}

impl Drop for Rig {
    fn drop(&mut self) {
        let d = &self.device;
        // SAFETY: nothing is in use (recording only, never submitted); null
        // handles of objects never created are ignored.
        unsafe {
            d.destroy_command_pool(self.pool, None);
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_shader_module(self.module, None);
            self.bindings.destroy(d);
            d.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{median, Cost};

    #[test]
    fn medians_and_differences() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        let c = Cost { command: "x", without_ns: 10.0, layer_ns: 12.0, layer_amdx_ns: 15.0 };
        assert_eq!((c.layer_added_ns(), c.layer_amdx_added_ns()), (2.0, 5.0));
    }
}
