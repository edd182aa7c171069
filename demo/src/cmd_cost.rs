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
//! [`PassThrough::measure_counts`] runs each thread count's recording threads at
//! once, each with its own command pool and command buffer (pools are
//! externally synchronized). For every [`Command`] the device offers, each
//! thread begins its buffer, waits at a shared barrier, records `iters`
//! calls (CPU time, `std::time::Instant`), then ends the buffer and resets
//! its pool. A round does this for each command in each configuration in
//! turn (the three back to back, their order rotating over `repeats`
//! rounds), so that a change of the machine's pace, which moves the
//! driver's own cost by up to 2x between seconds on a shared host, falls on
//! all three alike; the result is the median ns/call per thread over
//! threads and rounds, per command and configuration, and what the layer
//! adds is the median of the differences between samples of the same round
//! and thread. Fewer threads than `ROTATED_LANES` (16) run proportionally
//! more rounds, so that every figure is a median of as many samples. While
//! it measures, the cores its threads leave free record plain push
//! constants on the device without the layer ([`busy_cores`]), so that
//! every thread count runs with all cores busy; a pool is reset keeping
//! its memory.
//!
//! Commands that need what a device lacks (a graphics queue and dynamic
//! rendering, `VK_KHR_push_descriptor`, `VK_KHR_maintenance6`) are left
//! out and listed by [`PassThrough::skipped`], never faked.

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, RwLock};
use std::time::Instant;

use ash::vk;

use vk_host::pipeline::{compute_pipeline, shader_module, spirv_words};
use vk_host::render::graphics_family;
use vk_host::submit::{command_buffer, compute_family};
use vk_host::{Buffer, StorageBindings};

use crate::busy_cores;
use crate::cpus::{self, Placement};
use crate::vkutil;

/// `shaders/cmd_cost.vert`: the graphics pipeline's vertex shader.
const VERT_SPV: &[u8] = include_bytes!("../shaders/cmd_cost.vert.spv");
/// `shaders/cmd_cost.frag`: the graphics pipeline's fragment shader.
const FRAG_SPV: &[u8] = include_bytes!("../shaders/cmd_cost.frag.spv");
/// The graphics pipeline's one colour attachment (dynamic rendering).
const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;
/// Bytes of push constants every push records (the compute layout's range).
const PUSH_BYTES: u32 = 12;
/// Most recording threads one measurement may start.
pub const MAX_THREADS: u32 = 256;

/// Lanes (command pool and buffer) each configuration keeps at least,
/// which the rounds go through in turn, so that fewer threads than lanes
/// record into different memory from round to round and no one buffer's
/// place in memory decides a figure.
const ROTATED_LANES: usize = 16;

/// Calls a load thread records between checks of its stop flag.
const LOAD_CALLS: u32 = 10_000;

/// A measured `vkCmd*` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    PushConstants,
    BindDescriptorSets,
    BindComputePipeline,
    BindGraphicsPipeline,
    PushDescriptorSet,
    PushConstants2,
    BindDescriptorSets2,
    PushDescriptorSet2,
}

impl Command {
    /// Every command, in result order.
    pub const ALL: [Command; 8] = [
        Command::PushConstants,
        Command::BindDescriptorSets,
        Command::BindComputePipeline,
        Command::BindGraphicsPipeline,
        Command::PushDescriptorSet,
        Command::PushConstants2,
        Command::BindDescriptorSets2,
        Command::PushDescriptorSet2,
    ];

    /// The Vulkan name (with the bind point where it matters).
    pub fn name(self) -> &'static str {
        match self {
            Command::PushConstants => "vkCmdPushConstants",
            Command::BindDescriptorSets => "vkCmdBindDescriptorSets",
            Command::BindComputePipeline => "vkCmdBindPipeline(COMPUTE)",
            Command::BindGraphicsPipeline => "vkCmdBindPipeline(GRAPHICS)",
            Command::PushDescriptorSet => "vkCmdPushDescriptorSetKHR",
            Command::PushConstants2 => "vkCmdPushConstants2KHR",
            Command::BindDescriptorSets2 => "vkCmdBindDescriptorSets2KHR",
            Command::PushDescriptorSet2 => "vkCmdPushDescriptorSet2KHR",
        }
    }

    /// What a device must offer for the command beyond Vulkan 1.3 compute.
    fn requirement(self) -> Option<&'static str> {
        match self {
            Command::PushConstants | Command::BindDescriptorSets | Command::BindComputePipeline => None,
            Command::BindGraphicsPipeline => Some("needs a graphics queue family and dynamicRendering"),
            Command::PushDescriptorSet => Some("needs VK_KHR_push_descriptor"),
            Command::PushConstants2 | Command::BindDescriptorSets2 => {
                Some("needs VK_KHR_maintenance6 with the maintenance6 feature")
            }
            Command::PushDescriptorSet2 => {
                Some("needs VK_KHR_maintenance6 with the maintenance6 feature and VK_KHR_push_descriptor")
            }
        }
    }
}

/// Median ns/call of one command in each configuration, and what the
/// layer adds: the median of the differences between samples taken back to
/// back (the same round and thread), which a change of the machine's pace
/// between rounds moves less than the difference of the medians.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    pub command: &'static str,
    pub without_ns: f64,
    pub layer_ns: f64,
    pub layer_amdx_ns: f64,
    layer_added: f64,
    layer_amdx_added: f64,
}

impl Cost {
    /// From the medians alone: what the layer adds is their difference.
    pub fn new(command: &'static str, without_ns: f64, layer_ns: f64, layer_amdx_ns: f64) -> Cost {
        let (layer_added, layer_amdx_added) = (layer_ns - without_ns, layer_amdx_ns - without_ns);
        Cost { command, without_ns, layer_ns, layer_amdx_ns, layer_added, layer_amdx_added }
    }

    /// From paired samples: `[without, layer, layer+amdx]`, the i-th of
    /// each taken back to back.
    fn from_samples(command: &'static str, [without, layer, amdx]: [&[f64]; 3]) -> Cost {
        let added = |with: &[f64]| median(&mut with.iter().zip(without).map(|(w, o)| w - o).collect::<Vec<_>>());
        let (layer_added, layer_amdx_added) = (added(layer), added(amdx));
        let m = |v: &[f64]| median(&mut v.to_vec());
        Cost {
            command,
            without_ns: m(without),
            layer_ns: m(layer),
            layer_amdx_ns: m(amdx),
            layer_added,
            layer_amdx_added,
        }
    }

    /// What the layer adds when enabled but the extension is not.
    pub fn layer_added_ns(&self) -> f64 {
        self.layer_added
    }

    /// What the layer adds with the extension enabled (emulation active).
    pub fn layer_amdx_added_ns(&self) -> f64 {
        self.layer_amdx_added
    }
}

/// A command left out of the results, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub command: &'static str,
    pub why: &'static str,
}

/// The costs measured with one thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRun {
    pub threads: u32,
    pub costs: Vec<Cost>,
}

/// How the layer+amdx added cost of one command grows from one thread to
/// the most threads measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Scaling {
    pub command: &'static str,
    /// The most threads measured.
    pub threads: u32,
    /// Added ns/call (layer+amdx) with one thread and with `threads`.
    pub one_thread_added_ns: f64,
    pub added_ns: f64,
    /// `added_ns / one_thread_added_ns`; `None` when the one-thread figure
    /// is not positive (no cost to scale).
    pub ratio: Option<f64>,
}

/// The scaling of every command measured both with one thread and with
/// the most threads of `runs` (empty when `runs` has no such pair).
pub fn scaling(runs: &[ThreadRun]) -> Vec<Scaling> {
    let one = runs.iter().find(|r| r.threads == 1);
    let most = runs.iter().filter(|r| r.threads > 1).max_by_key(|r| r.threads);
    let (Some(one), Some(most)) = (one, most) else { return Vec::new() };
    one.costs
        .iter()
        .filter_map(|base| {
            let top = most.costs.iter().find(|c| c.command == base.command)?;
            let (b, t) = (base.layer_amdx_added_ns(), top.layer_amdx_added_ns());
            Some(Scaling {
                command: base.command,
                threads: most.threads,
                one_thread_added_ns: b,
                added_ns: t,
                ratio: (b > 0.0).then(|| t / b),
            })
        })
        .collect()
}

/// CPU cores this process may use (`None` when unknown).
pub fn cores() -> Option<usize> {
    std::thread::available_parallelism().ok().map(|n| n.get())
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
    /// The commands all three devices can record, in [`Command::ALL`] order.
    commands: Vec<Command>,
    /// Keep the cores the recording threads leave free busy while measuring
    /// ([`busy_cores`]; on unless [`PassThrough::leave_other_cores_idle`]).
    other_cores_busy: bool,
    /// The CPUs the threads are pinned to, round by round ([`cpus`];
    /// empty: not pinned).
    cpus: Vec<usize>,
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
        let commands = Command::ALL.into_iter().filter(|&c| rigs.iter().all(|r| r.support.offers(c))).collect();
        Ok(Self { rigs, commands, other_cores_busy: true, cpus: cpus::allowed() })
    }

    /// Measures with the cores the threads leave free idle: fewer threads
    /// than cores then run at whatever clock the machine gives them (see
    /// [`busy_cores`]).
    pub fn leave_other_cores_idle(&mut self) {
        self.other_cores_busy = false;
    }

    /// How many CPUs the threads are pinned to in turn (0: not pinned).
    pub fn pinned_cpus(&self) -> usize {
        self.cpus.len()
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

    /// The commands left out because a device cannot record them.
    pub fn skipped(&self) -> Vec<Skipped> {
        Command::ALL
            .into_iter()
            .filter(|c| !self.commands.contains(c))
            .map(|c| Skipped { command: c.name(), why: c.requirement().unwrap_or("not offered") })
            .collect()
    }

    /// One warm-up round per thread count, then `repeats` passes, each of
    /// rounds of `iters` calls of each command per thread, in each
    /// configuration, for each of the thread counts `counts` in turn (so
    /// that every count is measured in the same stretches of time): one
    /// round for `ROTATED_LANES` (16) threads or more, `ROTATED_LANES /
    /// threads` for fewer, so that every count's figures are medians of as
    /// many samples (one thread's of 9 moved with every change of the
    /// machine's pace). Each round's threads are pinned to CPUs, the next
    /// round's to the next ones, so that every count's figure is a median
    /// over all the CPUs (see [`cpus`]); the CPUs a round's threads leave
    /// free record too (see [`busy_cores`]). The medians over threads
    /// and rounds, in [`Command::ALL`] order (skipped commands left out),
    /// one [`ThreadRun`] per count.
    pub fn measure_counts(&mut self, iters: u32, repeats: u32, counts: &[u32]) -> Result<Vec<ThreadRun>, String> {
        if iters == 0 || repeats == 0 {
            return Err("iterations and repeats must be > 0".into());
        }
        if let Some(&bad) = counts.iter().find(|&&t| t == 0 || t > MAX_THREADS) {
            return Err(format!("threads must be 1 to {MAX_THREADS}, not {bad}"));
        }
        let most = counts.iter().copied().max().unwrap_or(1) as usize;
        for rig in &mut self.rigs {
            rig.ensure_lanes(most.max(ROTATED_LANES))?;
        }
        let most_busy = counts.iter().map(|&t| self.placement(0, t as usize).busy.len()).max().unwrap_or(0);
        self.rigs[0].ensure_load_lanes(most_busy)?;
        let mut samples: Vec<Samples> = counts.iter().map(|_| Samples::new(self.commands.len())).collect();
        for pass in 0..=repeats as usize {
            for (&threads, samples) in counts.iter().zip(&mut samples) {
                // Pass 0 warms up (allocator pools, page faults, the
                // threads' first runs) and is not kept.
                let kept = pass > 0;
                let rounds = if kept { (ROTATED_LANES / threads as usize).max(1) } else { 1 };
                let calls = if kept { iters } else { iters.min(10_000) };
                let first_round = pass.saturating_sub(1) * rounds;
                let taken = self.rounds(calls, first_round..first_round + rounds, threads as usize)?;
                if kept {
                    samples.add(taken);
                }
            }
        }
        let runs = counts
            .iter()
            .zip(samples)
            .map(|(&threads, s)| ThreadRun { threads, costs: s.costs(&self.commands) })
            .collect();
        Ok(runs)
    }

    /// Where round `round` of `threads` threads runs (see [`Placement::of_round`]).
    fn placement(&self, round: usize, threads: usize) -> Placement {
        Placement::of_round(&self.cpus, cores().unwrap_or(0), round, threads, self.other_cores_busy)
    }

    /// Runs `measure` while a thread records on a load lane at each of
    /// `busy`'s places.
    fn while_others_record<R>(&self, busy: &[Option<usize>], measure: impl FnOnce() -> R) -> R {
        let (load, load_lanes) = (self.rigs[0].recorder(), &self.rigs[0].load_lanes);
        let keep_busy = |i: usize, stop: &AtomicBool| {
            if let Some(cpu) = busy.get(i).copied().flatten() {
                cpus::pin_current_thread(cpu);
            }
            if let Some(&lane) = load_lanes.get(i) {
                load.keep_recording(lane, stop);
            }
        };
        busy_cores::while_busy(busy.len(), keep_busy, measure)
    }

    /// Rounds `rounds` (numbers, which pick the lanes, the CPUs and the
    /// order of the configurations) of `threads` threads, each round with
    /// the CPUs its threads leave free busy.
    fn rounds(&self, iters: u32, rounds: std::ops::Range<usize>, threads: usize) -> Result<Samples, String> {
        let mut taken = Samples::new(self.commands.len());
        for r in rounds {
            let place = self.placement(r, threads);
            self.while_others_record(&place.busy, || -> Result<(), String> {
                for (i, &command) in self.commands.iter().enumerate() {
                    // The configurations back to back, rotated so that none
                    // always runs first (cache, clock).
                    for k in 0..self.rigs.len() {
                        let c = (r + k) % self.rigs.len();
                        for per_thread in self.rigs[c].round(&[command], iters, r * threads, &place.measured)? {
                            taken.0[c][i].extend(per_thread);
                        }
                    }
                }
                Ok(())
            })?;
        }
        Ok(taken)
    }
}

/// One thread count's samples, `[configuration][command]`, one value per
/// thread and round, the configurations' i-th values taken back to back.
struct Samples([Vec<Vec<f64>>; 3]);

impl Samples {
    fn new(commands: usize) -> Samples {
        let mut s: [Vec<Vec<f64>>; 3] = Default::default();
        for c in &mut s {
            c.resize(commands, Vec::new());
        }
        Samples(s)
    }

    fn add(&mut self, taken: Samples) {
        for (mine, taken) in self.0.iter_mut().zip(taken.0) {
            for (m, t) in mine.iter_mut().zip(taken) {
                m.extend(t);
            }
        }
    }

    fn costs(&self, commands: &[Command]) -> Vec<Cost> {
        let [w, l, a] = &self.0;
        commands.iter().enumerate().map(|(i, c)| Cost::from_samples(c.name(), [&w[i], &l[i], &a[i]])).collect()
    }
}

/// Prints the medians and the layer's added cost, one line per command,
/// then `n/a` lines for the `skipped` ones.
pub fn print_table(costs: &[Cost], skipped: &[Skipped]) {
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
    for s in skipped {
        println!("{:<28} {:>10}  ({})", s.command, "n/a", s.why);
    }
}

/// Prints, per command, the layer+amdx added cost with one thread and with
/// the most threads of `runs`, and their ratio (nothing without both).
pub fn print_scaling(runs: &[ThreadRun]) {
    let rows = scaling(runs);
    let Some(first) = rows.first() else { return };
    let most = format!("{} threads", first.threads);
    println!("\nadded ns/call per thread (layer+amdx), 1 thread against {most}");
    println!("{:<28} {:>10} {:>11} {:>7}", "command", "1 thread", most, "ratio");
    for s in &rows {
        let ratio = s.ratio.map_or_else(|| "-".to_string(), |r| format!("{r:.2}"));
        println!("{:<28} {:>+10.1} {:>+11.1} {:>7}", s.command, s.one_thread_added_ns, s.added_ns, ratio);
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

/// What a device offers of the optional commands' needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Support {
    /// A graphics + compute queue family and `dynamicRendering`.
    graphics: bool,
    /// `VK_KHR_push_descriptor` is listed.
    push_descriptor: bool,
    /// `VK_KHR_maintenance6` is listed with its `maintenance6` feature.
    maintenance6: bool,
}

impl Support {
    /// Queries `pd` through `instance` (so through the layer, if any);
    /// `graphics_queue`: a graphics + compute family exists.
    fn query(instance: &ash::Instance, pd: vk::PhysicalDevice, graphics_queue: bool) -> Result<Self, String> {
        let listed = |name: &CStr| vkutil::extension_listings(instance, pd, name).map(|l| !l.is_empty());
        let m6_listed = listed(ash::khr::maintenance6::NAME)?;
        // SAFETY: valid physical device.
        let api = unsafe { instance.get_physical_device_properties(pd) }.api_version;
        let mut v13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut m6 = vk::PhysicalDeviceMaintenance6FeaturesKHR::default();
        let mut features = vk::PhysicalDeviceFeatures2::default();
        // Chain only what the device knows: the 1.3 struct needs a 1.3 device.
        if api >= vk::API_VERSION_1_3 {
            features = features.push_next(&mut v13);
        }
        if m6_listed {
            features = features.push_next(&mut m6);
        }
        // SAFETY: valid physical device; a chain of output structures of locals.
        unsafe { instance.get_physical_device_features2(pd, &mut features) };
        Ok(Support {
            graphics: graphics_queue && v13.dynamic_rendering == vk::TRUE,
            push_descriptor: listed(ash::khr::push_descriptor::NAME)?,
            maintenance6: m6_listed && m6.maintenance6 == vk::TRUE,
        })
    }

    fn offers(self, command: Command) -> bool {
        match command {
            Command::PushConstants | Command::BindDescriptorSets | Command::BindComputePipeline => true,
            Command::BindGraphicsPipeline => self.graphics,
            Command::PushDescriptorSet => self.push_descriptor,
            Command::PushConstants2 | Command::BindDescriptorSets2 => self.maintenance6,
            Command::PushDescriptorSet2 => self.maintenance6 && self.push_descriptor,
        }
    }
}

/// One recording thread's command pool and its command buffer.
#[derive(Debug, Clone, Copy)]
struct Lane {
    pool: vk::CommandPool,
    cb: vk::CommandBuffer,
}

/// The objects one configuration records with.
struct Rig {
    instance: ash::Instance,
    device: ash::Device,
    device_name: String,
    amdx_listed: bool,
    support: Support,
    family: u32,
    memory: vk::PhysicalDeviceMemoryProperties,
    /// Binding 0 (never written: recording does not read it) and 12 bytes
    /// of push constants; the graphics pipeline's layout too (it reads none).
    bindings: StorageBindings,
    module: vk::ShaderModule,
    pipeline: vk::Pipeline,
    vert: vk::ShaderModule,
    frag: vk::ShaderModule,
    graphics: vk::Pipeline,
    /// The push-descriptor set layout (one storage buffer) and its layout.
    push_set_layout: vk::DescriptorSetLayout,
    push_layout: vk::PipelineLayout,
    /// What the pushed descriptor points at.
    storage: Option<Buffer>,
    push_descriptor: Option<ash::khr::push_descriptor::Device>,
    maintenance6: Option<ash::khr::maintenance6::Device>,
    /// One per recording thread, created as thread counts grow.
    lanes: Vec<Lane>,
    /// One per thread keeping a core busy (the `without` configuration's
    /// only), apart from `lanes`, which the rounds rotate through.
    load_lanes: Vec<Lane>,
}

/// A device made for one configuration, and what was learnt making it.
struct Opened {
    device: ash::Device,
    name: String,
    amdx_listed: bool,
    support: Support,
    family: u32,
    memory: vk::PhysicalDeviceMemoryProperties,
}

impl Rig {
    fn new(entry: &ash::Entry, layers: &[&CStr], device_index: usize, enable_amdx: bool) -> Result<Self, String> {
        let instance = vkutil::create_instance(entry, layers)?;
        let opened = match create_device(&instance, device_index, enable_amdx) {
            Ok(d) => d,
            Err(e) => {
                // SAFETY: the instance has no children.
                unsafe { instance.destroy_instance(None) };
                return Err(e);
            }
        };
        let mut rig = Rig {
            instance,
            device: opened.device,
            device_name: opened.name,
            amdx_listed: opened.amdx_listed,
            support: opened.support,
            family: opened.family,
            memory: opened.memory,
            bindings: StorageBindings::default(),
            module: vk::ShaderModule::null(),
            pipeline: vk::Pipeline::null(),
            vert: vk::ShaderModule::null(),
            frag: vk::ShaderModule::null(),
            graphics: vk::Pipeline::null(),
            push_set_layout: vk::DescriptorSetLayout::null(),
            push_layout: vk::PipelineLayout::null(),
            storage: None,
            push_descriptor: None,
            maintenance6: None,
            lanes: Vec::new(),
            load_lanes: Vec::new(),
        };
        // On error `rig` drops and destroys what was created so far.
        rig.create_compute()?;
        if rig.support.graphics {
            rig.create_graphics()?;
        }
        if rig.support.push_descriptor {
            rig.create_push_descriptor()?;
        }
        if rig.support.maintenance6 {
            rig.maintenance6 = Some(ash::khr::maintenance6::Device::new(&rig.instance, &rig.device));
        }
        Ok(rig)
    }

    /// The compute layout, set and pipeline.
    fn create_compute(&mut self) -> Result<(), String> {
        let device = &self.device;
        // Each object is stored in `self` at once and destroyed on drop.
        self.bindings = StorageBindings::new(device, 1, PUSH_BYTES)?;
        self.module = shader_module(device, &spirv_words(vkutil::SCALE_ADD_SPV)?)?;
        self.pipeline = compute_pipeline(device, self.module, c"main", self.bindings.layout)?;
        Ok(())
    }

    /// The graphics pipeline (its shader modules stored for drop first).
    fn create_graphics(&mut self) -> Result<(), String> {
        let device = &self.device;
        self.vert = shader_module(device, &spirv_words(VERT_SPV)?)?;
        self.frag = shader_module(device, &spirv_words(FRAG_SPV)?)?;
        self.graphics = graphics_pipeline(device, self.bindings.layout, self.vert, self.frag)?;
        Ok(())
    }

    /// The push-descriptor layouts, the buffer they point at and the entry point.
    fn create_push_descriptor(&mut self) -> Result<(), String> {
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        let info = vk::DescriptorSetLayoutCreateInfo::default()
            .flags(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
            .bindings(&binding);
        // SAFETY: valid device and create info of locals; stored at once.
        self.push_set_layout = unsafe { self.device.create_descriptor_set_layout(&info, None) }
            .map_err(|e| format!("vkCreateDescriptorSetLayout (push): {e:?}"))?;
        let set_layouts = [self.push_set_layout];
        let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        // SAFETY: valid device and create info of locals; stored at once.
        self.push_layout = unsafe { self.device.create_pipeline_layout(&info, None) }
            .map_err(|e| format!("vkCreatePipelineLayout (push): {e:?}"))?;
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        self.storage = Some(Buffer::new(&self.device, &self.memory, 256, usage, false)?);
        self.push_descriptor = Some(ash::khr::push_descriptor::Device::new(&self.instance, &self.device));
        Ok(())
    }

    /// Creates lanes until there are `count`.
    fn ensure_lanes(&mut self, count: usize) -> Result<(), String> {
        Self::add_lanes(&self.device, self.family, &mut self.lanes, count)
    }

    /// Creates load lanes until there are `count`.
    fn ensure_load_lanes(&mut self, count: usize) -> Result<(), String> {
        Self::add_lanes(&self.device, self.family, &mut self.load_lanes, count)
    }

    /// Adds lanes of `device` (`family`'s pools) to `lanes` until there are `count`.
    fn add_lanes(device: &ash::Device, family: u32, lanes: &mut Vec<Lane>, count: usize) -> Result<(), String> {
        while lanes.len() < count {
            let info = vk::CommandPoolCreateInfo::default().queue_family_index(family);
            // SAFETY: valid device and create info.
            let pool = unsafe { device.create_command_pool(&info, None) }
                .map_err(|e| format!("vkCreateCommandPool: {e:?}"))?;
            // Stored before allocating so that drop destroys it on error.
            lanes.push(Lane { pool, cb: vk::CommandBuffer::null() });
            let cb = command_buffer(device, pool)?;
            if let Some(lane) = lanes.last_mut() {
                lane.cb = cb;
            }
        }
        Ok(())
    }

    /// What the recording threads share.
    fn recorder(&self) -> Recorder<'_> {
        Recorder {
            device: &self.device,
            push_descriptor: self.push_descriptor.as_ref(),
            maintenance6: self.maintenance6.as_ref(),
            layout: self.bindings.layout,
            set: self.bindings.set,
            compute: self.pipeline,
            graphics: self.graphics,
            push_layout: self.push_layout,
            storage: self.storage.map_or(vk::Buffer::null(), |b| b.buffer),
        }
    }

    /// One round on `places.len()` lanes from lane `first` on (wrapping),
    /// one thread each, thread `i` pinned to `places[i]` where it names a
    /// CPU, all released together; ns/call per thread, per command of
    /// `commands`.
    fn round(
        &self,
        commands: &[Command],
        iters: u32,
        first: usize,
        places: &[Option<usize>],
    ) -> Result<Vec<Vec<f64>>, String> {
        let threads = places.len();
        if self.lanes.len() < threads {
            return Err("fewer lanes than threads".into());
        }
        let lanes: Vec<Lane> = (0..threads).map(|i| self.lanes[(first + i) % self.lanes.len()]).collect();
        let recorder = self.recorder();
        let barrier = Barrier::new(threads);
        // Held for writing while threads start: a thread goes on only when
        // every one started (`true`), so none waits at a barrier for a
        // thread that does not exist.
        let gate = RwLock::new(false);
        std::thread::scope(|s| {
            let mut go = gate.write().map_err(|_| "start gate poisoned".to_string())?;
            let mut handles = Vec::with_capacity(threads);
            for (i, (&lane, &place)) in lanes.iter().zip(places).enumerate() {
                let (recorder, barrier, gate) = (&recorder, &barrier, &gate);
                let spawned = std::thread::Builder::new().name(format!("cmd_cost-{i}")).spawn_scoped(s, move || {
                    if let Some(cpu) = place {
                        cpus::pin_current_thread(cpu);
                    }
                    let started = gate.read().map(|g| *g).unwrap_or(false);
                    if !started {
                        return Err("another recording thread did not start".to_string());
                    }
                    recorder.record_lane(lane, commands, iters, barrier)
                });
                // On error `go` stays false and drops: the started threads return.
                handles.push(spawned.map_err(|e| format!("cannot start a recording thread: {e}"))?);
            }
            *go = true;
            drop(go);
            handles.into_iter().map(|h| h.join().map_err(|_| "a recording thread panicked".to_string())?).collect()
        })
    }
}

/// The handles a recording thread reads (all shareable: plain handles
/// and function tables).
struct Recorder<'a> {
    device: &'a ash::Device,
    push_descriptor: Option<&'a ash::khr::push_descriptor::Device>,
    maintenance6: Option<&'a ash::khr::maintenance6::Device>,
    layout: vk::PipelineLayout,
    set: vk::DescriptorSet,
    compute: vk::Pipeline,
    graphics: vk::Pipeline,
    push_layout: vk::PipelineLayout,
    storage: vk::Buffer,
}

impl Recorder<'_> {
    /// One thread's share of a round: per command, a fresh recording of
    /// `lane`'s buffer with `iters` calls timed from the barrier; ns/call
    /// per command.
    fn record_lane(&self, lane: Lane, commands: &[Command], iters: u32, barrier: &Barrier) -> Result<Vec<f64>, String> {
        let mut out = Vec::with_capacity(commands.len());
        let mut failure = None;
        for &command in commands {
            let began = self.begin(lane);
            // Every thread reaches every barrier, failed or not, so that
            // none waits forever.
            barrier.wait();
            let recorded = began.and_then(|()| {
                let t = Instant::now();
                let called = self.calls(lane.cb, command, iters);
                let ns = t.elapsed().as_nanos() as f64 / f64::from(iters);
                // Ended and reset even after a failure: the next command begins afresh.
                let ended = self.end_and_reset(lane);
                called.and(ended).map(|()| ns)
            });
            match recorded {
                Ok(ns) => out.push(ns),
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        failure.map_or(Ok(out), Err)
    }

    /// Keeps a core busy until `stop` with recordings of plain push
    /// constants into `lane` (a load lane of the configuration without the
    /// layer: the measured threads' kind of work, which the CPU clocks as it
    /// does theirs, touching nothing of the layer's). Returns at the first
    /// error: a missing load only leaves a core idle.
    fn keep_recording(&self, lane: Lane, stop: &AtomicBool) {
        let push = [0u8; PUSH_BYTES as usize];
        while !stop.load(Ordering::Relaxed) {
            if self.begin(lane).is_err() {
                return;
            }
            for _ in 0..LOAD_CALLS {
                // SAFETY: `lane` is this thread's alone and recording; the
                // layout belongs to the device and has the push range.
                unsafe {
                    self.device.cmd_push_constants(lane.cb, self.layout, vk::ShaderStageFlags::COMPUTE, 0, &push)
                };
            }
            if self.end_and_reset(lane).is_err() {
                return;
            }
        }
    }

    fn begin(&self, lane: Lane) -> Result<(), String> {
        // SAFETY: this thread alone uses `lane` (its pool and buffer), which
        // is reset: not recording, not pending (never submitted).
        unsafe { self.device.begin_command_buffer(lane.cb, &vk::CommandBufferBeginInfo::default()) }
            .map_err(|e| format!("vkBeginCommandBuffer: {e:?}"))
    }

    /// Ends the recording and resets the pool, keeping its memory for the
    /// next recording, as a renderer resetting its pools every frame does
    /// (a recording into memory the driver must first map measures page
    /// faults too).
    fn end_and_reset(&self, lane: Lane) -> Result<(), String> {
        // SAFETY: this thread alone uses `lane`; its buffer is recording
        // and never submitted, so the reset pool has nothing in use.
        unsafe {
            self.device.end_command_buffer(lane.cb).map_err(|e| format!("vkEndCommandBuffer: {e:?}"))?;
            self.device
                .reset_command_pool(lane.pool, vk::CommandPoolResetFlags::empty())
                .map_err(|e| format!("vkResetCommandPool: {e:?}"))
        }
    }

    /// Records `iters` calls of `command` into `cb`; fails, recording
    /// nothing, when the command's entry point was not loaded.
    fn calls(&self, cb: vk::CommandBuffer, command: Command, iters: u32) -> Result<(), String> {
        let d = self.device;
        let compute = vk::PipelineBindPoint::COMPUTE;
        let stages = vk::ShaderStageFlags::COMPUTE;
        let push = [0u8; PUSH_BYTES as usize];
        let sets = [self.set];
        let missing = || format!("{}: entry point not loaded", command.name());
        // SAFETY: `cb` is recording, owned by this thread; every handle
        // belongs to `d` and lives as long as the rig; the graphics pipeline
        // binds on a graphics-capable family's buffer; the pushed
        // descriptor's layout has the push-descriptor flag.
        unsafe {
            match command {
                Command::PushConstants => {
                    for _ in 0..iters {
                        d.cmd_push_constants(cb, self.layout, stages, 0, &push);
                    }
                }
                Command::BindDescriptorSets => {
                    for _ in 0..iters {
                        d.cmd_bind_descriptor_sets(cb, compute, self.layout, 0, &sets, &[]);
                    }
                }
                Command::BindComputePipeline => {
                    for _ in 0..iters {
                        d.cmd_bind_pipeline(cb, compute, self.compute);
                    }
                }
                Command::BindGraphicsPipeline => {
                    for _ in 0..iters {
                        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, self.graphics);
                    }
                }
                Command::PushDescriptorSet => {
                    let f = self.push_descriptor.ok_or_else(missing)?;
                    let info = [self.pushed_buffer()];
                    let writes = [Self::pushed_write(&info)];
                    for _ in 0..iters {
                        f.cmd_push_descriptor_set(cb, compute, self.push_layout, 0, &writes);
                    }
                }
                Command::PushConstants2 => {
                    let f = self.maintenance6.ok_or_else(missing)?;
                    let info =
                        vk::PushConstantsInfoKHR::default().layout(self.layout).stage_flags(stages).values(&push);
                    for _ in 0..iters {
                        f.cmd_push_constants2(cb, &info);
                    }
                }
                Command::BindDescriptorSets2 => {
                    let f = self.maintenance6.ok_or_else(missing)?;
                    let info = vk::BindDescriptorSetsInfoKHR::default()
                        .stage_flags(stages)
                        .layout(self.layout)
                        .descriptor_sets(&sets);
                    for _ in 0..iters {
                        f.cmd_bind_descriptor_sets2(cb, &info);
                    }
                }
                Command::PushDescriptorSet2 => {
                    let f = self.maintenance6.ok_or_else(missing)?;
                    let buffers = [self.pushed_buffer()];
                    let writes = [Self::pushed_write(&buffers)];
                    let info = vk::PushDescriptorSetInfoKHR::default()
                        .stage_flags(stages)
                        .layout(self.push_layout)
                        .set(0)
                        .descriptor_writes(&writes);
                    for _ in 0..iters {
                        f.cmd_push_descriptor_set2(cb, &info);
                    }
                }
            }
        }
        Ok(())
    }
}

impl Recorder<'_> {
    /// The one buffer a push points binding 0 at.
    fn pushed_buffer(&self) -> vk::DescriptorBufferInfo {
        vk::DescriptorBufferInfo { buffer: self.storage, offset: 0, range: vk::WHOLE_SIZE }
    }

    /// The one write a push makes: `info` at binding 0.
    fn pushed_write<'a>(info: &'a [vk::DescriptorBufferInfo]) -> vk::WriteDescriptorSet<'a> {
        vk::WriteDescriptorSet::default()
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(info)
    }
}

/// A vertex + fragment pipeline for dynamic rendering to one
/// [`COLOR_FORMAT`] attachment, viewport and scissor dynamic: something
/// to bind, never drawn with.
fn graphics_pipeline(
    d: &ash::Device,
    layout: vk::PipelineLayout,
    vert: vk::ShaderModule,
    frag: vk::ShaderModule,
) -> Result<vk::Pipeline, String> {
    let stages = [
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::VERTEX).module(vert).name(c"main"),
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::FRAGMENT).module(frag).name(c"main"),
    ];
    let formats = [COLOR_FORMAT];
    let mut rendering = vk::PipelineRenderingCreateInfo::default().color_attachment_formats(&formats);
    let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
    let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(vk::PrimitiveTopology::TRIANGLE_LIST);
    let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(vk::CullModeFlags::NONE)
        .line_width(1.0);
    let multisample =
        vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(vk::SampleCountFlags::TYPE_1);
    let blend_attachments =
        [vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA)];
    let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
    let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
    let info = vk::GraphicsPipelineCreateInfo::default()
        .stages(&stages)
        .vertex_input_state(&vertex_input)
        .input_assembly_state(&assembly)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .color_blend_state(&blend)
        .dynamic_state(&dynamic)
        .layout(layout)
        .push_next(&mut rendering);
    // SAFETY: valid device and create info of locals.
    let pipelines = unsafe { d.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) }
        .map_err(|(_, e)| format!("vkCreateGraphicsPipelines: {e:?}"))?;
    pipelines.first().copied().ok_or_else(|| "vkCreateGraphicsPipelines returned nothing".to_string())
}

/// The device on physical device `device_index` of `instance` with
/// `VK_AMDX_shader_enqueue` when `enable_amdx`, and whatever of
/// [`Support`] the device offers, on a graphics + compute family when
/// there is one (else the first compute family).
fn create_device(instance: &ash::Instance, device_index: usize, enable_amdx: bool) -> Result<Opened, String> {
    // SAFETY: valid instance.
    let pds =
        unsafe { instance.enumerate_physical_devices() }.map_err(|e| format!("vkEnumeratePhysicalDevices: {e:?}"))?;
    let pd = *pds.get(device_index).ok_or_else(|| format!("no physical device #{device_index}"))?;
    let (name, driver, _) = vkutil::describe(instance, pd);
    let amdx_listed = !vkutil::extension_listings(instance, pd, vk_amdx::EXTENSION_NAME)?.is_empty();
    let graphics = graphics_family(instance, pd).ok();
    let family = match graphics {
        Some(f) => f,
        None => compute_family(instance, pd)?,
    };
    let support = Support::query(instance, pd, graphics.is_some())?;
    let priorities = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
    let mut names = Vec::new();
    if enable_amdx {
        names.push(vk_amdx::EXTENSION_NAME.as_ptr());
    }
    if support.push_descriptor {
        names.push(ash::khr::push_descriptor::NAME.as_ptr());
    }
    if support.maintenance6 {
        names.push(ash::khr::maintenance6::NAME.as_ptr());
    }
    let mut amdx = vk_amdx::PhysicalDeviceShaderEnqueueFeatures { shader_enqueue: vk::TRUE, ..Default::default() };
    let mut v13 = vk::PhysicalDeviceVulkan13Features::default().dynamic_rendering(true);
    let mut m6 = vk::PhysicalDeviceMaintenance6FeaturesKHR::default().maintenance6(true);
    let mut info = vk::DeviceCreateInfo::default().queue_create_infos(&queues).enabled_extension_names(&names);
    if enable_amdx {
        info = info.push_next(&mut amdx);
    }
    if support.graphics {
        info = info.push_next(&mut v13);
    }
    if support.maintenance6 {
        info = info.push_next(&mut m6);
    }
    // SAFETY: `info` points at locals alive for the call.
    let device = unsafe { instance.create_device(pd, &info, None) }.map_err(|e| format!("vkCreateDevice: {e:?}"))?;
    // SAFETY: valid physical device.
    let memory = unsafe { instance.get_physical_device_memory_properties(pd) };
    Ok(Opened { device, name: format!("{name} [driver {driver}]"), amdx_listed, support, family, memory })
}

impl Drop for Rig {
    fn drop(&mut self) {
        let d = &self.device;
        // SAFETY: nothing is in use (recording only, never submitted, and
        // every recording thread joined); null handles of objects never
        // created are ignored.
        unsafe {
            for lane in self.lanes.iter().chain(&self.load_lanes) {
                d.destroy_command_pool(lane.pool, None);
            }
            d.destroy_pipeline(self.graphics, None);
            d.destroy_shader_module(self.frag, None);
            d.destroy_shader_module(self.vert, None);
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_shader_module(self.module, None);
            d.destroy_pipeline_layout(self.push_layout, None);
            d.destroy_descriptor_set_layout(self.push_set_layout, None);
            if let Some(b) = &self.storage {
                b.destroy(d);
            }
            self.bindings.destroy(d);
            d.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{median, scaling, Command, Cost, Support, ThreadRun};

    fn cost(command: &'static str, without_ns: f64, layer_amdx_ns: f64) -> Cost {
        Cost::new(command, without_ns, without_ns, layer_amdx_ns)
    }

    #[test]
    fn medians_and_differences() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        let c = Cost::new("x", 10.0, 12.0, 15.0);
        assert_eq!((c.layer_added_ns(), c.layer_amdx_added_ns()), (2.0, 5.0));
    }

    /// What the layer adds is the median of paired differences: the
    /// machine slowing down in the middle of a round (here between the
    /// third round's `without` and its `layer+amdx`) moves the medians'
    /// difference, not it.
    #[test]
    fn added_cost_pairs_samples_taken_together() {
        let without = [10.0, 10.0, 10.0, 20.0, 20.0];
        let amdx = [13.0, 13.0, 23.0, 23.0, 23.0];
        let c = Cost::from_samples("x", [&without, &without, &amdx]);
        assert_eq!((c.without_ns, c.layer_amdx_ns), (10.0, 23.0));
        assert_eq!((c.layer_added_ns(), c.layer_amdx_added_ns()), (0.0, 3.0));
    }

    #[test]
    fn scaling_compares_one_thread_with_the_most() {
        let runs = [
            ThreadRun { threads: 1, costs: vec![cost("a", 10.0, 12.0), cost("b", 5.0, 5.0)] },
            ThreadRun { threads: 16, costs: vec![cost("a", 20.0, 28.0), cost("b", 6.0, 9.0)] },
            ThreadRun { threads: 4, costs: vec![cost("a", 10.0, 100.0)] },
        ];
        let s = scaling(&runs);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].command, s[0].threads, s[0].ratio), ("a", 16, Some(4.0)));
        // No added cost with one thread: nothing to scale.
        assert_eq!((s[1].added_ns, s[1].ratio), (3.0, None));
        assert!(scaling(&runs[..1]).is_empty());
    }

    #[test]
    fn commands_need_what_they_use() {
        let core = Support::default();
        let all = Support { graphics: true, push_descriptor: true, maintenance6: true };
        for c in Command::ALL {
            assert_eq!(core.offers(c), c.requirement().is_none(), "{}", c.name());
            assert!(all.offers(c));
        }
        // The maintenance6 push needs push descriptors too.
        let m6 = Support { maintenance6: true, ..core };
        assert!(!m6.offers(Command::PushDescriptorSet2));
        assert!(m6.offers(Command::PushConstants2));
    }
}
