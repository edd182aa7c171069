//! `demo`: the project's showcase. Through the real loader with
//! `VK_LAYER_EMU_shader_enqueue` enabled (no validation layer), it
//! 1. prints each device and driver, the extension's revision, its features
//!    and AMDX limits;
//! 2. on the best device offering `shaderEnqueue`, creates the
//!    D3D12HelloWorkGraphs execution graph (three nodes, see [`demo::hello`]);
//! 3. prints the node indices and the scratch sizes the layer reports, and
//!    allocates scratch of `minSize`;
//! 4. dispatches 4 entry records from the host `--runs` times (default 3;
//!    the same command buffer each time), timing submit+wait on the host and
//!    the graph dispatch on the GPU (timestamp queries, when the queue has
//!    them), and reads back the storage buffer;
//! 5. checks every run against a CPU model and prints a table;
//! 6. with `--png PATH`, runs the Mandelbrot refinement graph
//!    ([`demo::refine`]) once, checks its image against the CPU model pixel
//!    by pixel and writes it as a PNG ([`demo::picture`]);
//! 7. with `--mesh-png PATH`, where the device offers `shaderMeshEnqueue`,
//!    draws a Sierpinski triangle through a mesh node inside a dynamic
//!    rendering instance ([`demo::sierpinski`]), checks it against the CPU
//!    rasterisation and writes it as a PNG (`--mesh-only`: only this).
//!
//! Run under RenderDoc (`cargo xtask capture`), it captures the first
//! hello-graph submission with debug labels on ([`renderdoc`]).
//!
//! Exits non-zero when no device offers the extension (so `cargo xtask demo`
//! falls back to lavapipe), on any error, and on a mismatch.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use ash::vk;
use demo::gpu::Gpu;
use demo::graph::Graph;
use demo::{hello, picture, sierpinski, vkutil};
use vk_amdx::{PhysicalDeviceShaderEnqueueFeatures, PhysicalDeviceShaderEnqueueProperties};
use vk_host::{Timer, LAYER_NAME};

mod renderdoc;

/// How a run ended.
enum Outcome {
    Verified,
    Mismatch,
    NoDevice,
}

/// The command line.
struct Args {
    runs: u32,
    png: Option<PathBuf>,
    mesh_png: Option<PathBuf>,
    mesh_only: bool,
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("demo: {e} (usage: demo [--runs N] [--png PATH] [--mesh-png PATH [--mesh-only]])");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(Outcome::Verified) => ExitCode::SUCCESS,
        Ok(Outcome::Mismatch) => {
            eprintln!("demo: the graph's result differs from the CPU model");
            ExitCode::FAILURE
        }
        Ok(Outcome::NoDevice) => {
            eprintln!("demo: no device offers VK_AMDX_shader_enqueue with shaderEnqueue");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("demo: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--runs N` (N >= 1, default 3), `--png PATH`, `--mesh-png PATH`, `--mesh-only`.
fn parse_args() -> Result<Args, String> {
    let mut out = Args { runs: 3, png: None, mesh_png: None, mesh_only: false };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => {
                let n = args.next().ok_or("--runs needs a number")?;
                out.runs =
                    n.parse().ok().filter(|&r| r >= 1).ok_or(format!("--runs needs a number >= 1, not {n:?}"))?;
            }
            "--png" => out.png = Some(PathBuf::from(args.next().ok_or("--png needs a path")?)),
            "--mesh-png" => out.mesh_png = Some(PathBuf::from(args.next().ok_or("--mesh-png needs a path")?)),
            "--mesh-only" => out.mesh_only = true,
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    if out.mesh_only && out.mesh_png.is_none() {
        return Err("--mesh-only needs --mesh-png".into());
    }
    Ok(out)
}

fn run(args: &Args) -> Result<Outcome, String> {
    let entry = ash::Entry::linked();
    let instance = vkutil::create_instance_with(&entry, &[LAYER_NAME], renderdoc::instance_extensions())?;
    println!("instance: Vulkan 1.3, layer {}", LAYER_NAME.to_string_lossy());
    let result = pick_device(&instance).and_then(|pd| {
        let Some(pd) = pd else { return Ok(Outcome::NoDevice) };
        let outcome =
            if args.mesh_only { Outcome::Verified } else { run_graph(&instance, pd, args.runs, args.png.as_deref())? };
        if let (Some(path), Outcome::Verified) = (&args.mesh_png, &outcome) {
            mesh_picture(&instance, pd, path)?;
        }
        Ok(outcome)
    });
    // SAFETY: everything created from the instance was dropped in run_graph.
    unsafe { instance.destroy_instance(None) };
    result
}

/// Step 7: the mesh-node picture, where the device offers mesh nodes.
fn mesh_picture(instance: &ash::Instance, pd: vk::PhysicalDevice, path: &Path) -> Result<(), String> {
    if !vk_host::render::mesh_enqueue_offered(instance, pd) {
        println!("\nmesh-node picture: skipped (shaderMeshEnqueue is offered where the driver has VK_EXT_mesh_shader)");
        return Ok(());
    }
    let (name, _, _) = vkutil::describe(instance, pd);
    let n = sierpinski::SIZE;
    println!("\nmesh-node picture on {name}: split (compute, recursive) -> tri (mesh node), {n} x {n}");
    let gpu = Gpu::with_mesh_nodes(instance, pd)?;
    let start = Instant::now();
    let triangles = sierpinski::render(&gpu, path)?;
    println!(
        "mesh-node picture: every pixel matches the CPU rasterisation ({triangles} triangles drawn), {:.0} ms; wrote {}",
        start.elapsed().as_secs_f64() * 1e3,
        path.display()
    );
    Ok(())
}

/// Shows every device; returns the best one offering `shaderEnqueue`
/// (discrete before integrated before virtual before CPU).
fn pick_device(instance: &ash::Instance) -> Result<Option<vk::PhysicalDevice>, String> {
    // SAFETY: valid instance.
    let devices =
        unsafe { instance.enumerate_physical_devices() }.map_err(|e| format!("vkEnumeratePhysicalDevices: {e:?}"))?;
    if devices.is_empty() {
        return Err("no Vulkan device".into());
    }
    let mut best: Option<(u32, vk::PhysicalDevice)> = None;
    for (i, &pd) in devices.iter().enumerate() {
        if show_device(instance, i, pd)? {
            let rank = type_rank(instance, pd);
            if best.is_none_or(|(r, _)| rank < r) {
                best = Some((rank, pd));
            }
        }
    }
    Ok(best.map(|(_, pd)| pd))
}

/// Preference of a device type (lower is better).
fn type_rank(instance: &ash::Instance, pd: vk::PhysicalDevice) -> u32 {
    // SAFETY: valid physical device.
    match unsafe { instance.get_physical_device_properties(pd) }.device_type {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    }
}

/// Prints device, driver, the extension's listing, features and limits;
/// true when the device offers `shaderEnqueue`.
fn show_device(instance: &ash::Instance, index: usize, pd: vk::PhysicalDevice) -> Result<bool, String> {
    let (name, driver, info) = vkutil::describe(instance, pd);
    println!("\ndevice {index}: {name}\n  driver: {driver} ({info})");
    let listings = vkutil::extension_listings(instance, pd, vk_amdx::EXTENSION_NAME)?;
    let revision = match listings.as_slice() {
        [] => {
            println!("  VK_AMDX_shader_enqueue: not listed");
            return Ok(false);
        }
        [rev] => *rev,
        many => return Err(format!("VK_AMDX_shader_enqueue listed {} times: {many:?}", many.len())),
    };
    let mut f = PhysicalDeviceShaderEnqueueFeatures::default();
    let mut p = PhysicalDeviceShaderEnqueueProperties::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f);
    // SAFETY: valid physical device; output chain of locals.
    unsafe { instance.get_physical_device_features2(pd, &mut f2) };
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut p);
    // SAFETY: as above.
    unsafe { instance.get_physical_device_properties2(pd, &mut p2) };
    println!(
        "  VK_AMDX_shader_enqueue revision {revision}: shaderEnqueue {}, shaderMeshEnqueue {}",
        f.shader_enqueue, f.shader_mesh_enqueue
    );
    print_limits(&p);
    Ok(f.shader_enqueue == vk::TRUE)
}

fn print_limits(p: &PhysicalDeviceShaderEnqueueProperties) {
    println!(
        "  limits: graph depth {}, output nodes/shader {}, payload {} B, payloads/output {}, \
         dispatch address alignment {}",
        p.max_execution_graph_depth,
        p.max_execution_graph_shader_output_nodes,
        p.max_execution_graph_shader_payload_size,
        p.max_execution_graph_shader_payload_count,
        p.execution_graph_dispatch_address_alignment
    );
    println!(
        "          workgroups/node dispatch {} (per dimension {:?})",
        p.max_execution_graph_workgroups, p.max_execution_graph_workgroup_count
    );
}

/// Creates, dispatches, times and checks the hello chain on `pd`; then
/// renders the picture when asked.
fn run_graph(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    runs: u32,
    png: Option<&Path>,
) -> Result<Outcome, String> {
    let (name, _, _) = vkutil::describe(instance, pd);
    println!("\nrunning the D3D12HelloWorkGraphs graph on {name}");
    let gpu = Gpu::new(instance, pd)?;
    let uav = gpu.buffer(4 * hello::UAV_WORDS as u64, vk::BufferUsageFlags::STORAGE_BUFFER, true)?;
    renderdoc::name_buffer(instance, &gpu.device, uav.buffer, c"hello UAV");
    let start = Instant::now();
    let graph = Graph::new(&gpu, hello::SPV, &hello::NODES, &[&uav])?;
    println!("graph pipeline: 3 nodes, created in {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    for (node, _) in hello::NODES {
        println!("  node {:<10} index {}", node.to_string_lossy(), graph.node_index(node, 0)?);
    }
    let size = graph.scratch_size()?;
    println!(
        "scratch: minSize {} B ({} KiB), maxSize {} B ({} MiB), sizeGranularity {} B; allocating minSize",
        size.min_size,
        size.min_size / 1024,
        size.max_size,
        size.max_size >> 20,
        size.size_granularity
    );
    let usage = vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
    let scratch = gpu.buffer(size.min_size, usage, false)?;
    renderdoc::name_buffer(instance, &gpu.device, scratch.buffer, c"hello scratch");
    let timer = Timer::new(&gpu.device, gpu.timestamps)?;
    let entry = graph.node_index(c"firstNode", 0)?;
    let records = hello::entry_records(&hello::GRIDS);
    let cb = record(&gpu, &graph, &scratch, timer.as_ref(), entry, &records)?;
    println!("dispatch: {} entry records into firstNode, grids {:?}", hello::GRIDS.len(), hello::GRIDS);
    println!("{}", hello::workload(&hello::GRIDS));
    let outcome = run_times(&gpu, cb, &uav, timer.as_ref(), runs)?;
    match (png, &outcome) {
        (Some(path), Outcome::Verified) => {
            let n = picture::SIZE;
            println!("\npicture: the Mandelbrot refinement graph (tile -> tile (recursive) / fill / leaf), {n} x {n}");
            let start = Instant::now();
            let leaves = picture::render(&gpu, path)?;
            println!(
                "picture: every pixel matches the CPU model ({leaves} 2x2 leaves shaded), {:.0} ms; wrote {}",
                start.elapsed().as_secs_f64() * 1e3,
                path.display()
            );
            Ok(outcome)
        }
        _ => Ok(outcome),
    }
}

/// Records scratch initialisation and the timed graph dispatch into a new
/// command buffer that can be submitted many times.
fn record(
    gpu: &Gpu,
    graph: &Graph<'_>,
    scratch: &demo::gpu::Buffer<'_>,
    timer: Option<&Timer<'_>>,
    entry: u32,
    records: &[u8],
) -> Result<vk::CommandBuffer, String> {
    let cb = gpu.command_buffer()?;
    // SAFETY: fresh primary command buffer.
    unsafe { gpu.device.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default()) }
        .map_err(|e| format!("vkBeginCommandBuffer: {e:?}"))?;
    if let Some(t) = timer {
        t.record_reset(cb);
    }
    graph.record_setup(cb, scratch);
    if let Some(t) = timer {
        t.record_stamp(cb, 0);
    }
    graph.record_dispatch(cb, scratch, entry, records, hello::GRIDS.len() as u32);
    if let Some(t) = timer {
        t.record_stamp(cb, 1);
    }
    graph.record_host_barrier(cb);
    // SAFETY: cb is recording.
    unsafe { gpu.device.end_command_buffer(cb) }.map_err(|e| format!("vkEndCommandBuffer: {e:?}"))?;
    Ok(cb)
}

/// Submits `cb` `runs` times on a cleared buffer; prints the first run's
/// table and every run's times; verified when all runs match the model.
fn run_times(
    gpu: &Gpu,
    cb: vk::CommandBuffer,
    uav: &demo::gpu::Buffer<'_>,
    timer: Option<&Timer<'_>>,
    runs: u32,
) -> Result<Outcome, String> {
    let mut ok = true;
    let mut lines = Vec::new();
    for run in 1..=runs {
        uav.write_u32(&[0; hello::UAV_WORDS])?;
        let wall = renderdoc::capture_once(&gpu.instance, || gpu.submit_and_wait(cb))?;
        let got = uav.read_u32(hello::UAV_WORDS)?;
        if run == 1 {
            println!("result (run 1):");
            ok &= hello::print_table(&hello::GRIDS, &got);
        }
        let matches = hello::matches(&hello::GRIDS, &got);
        ok &= matches;
        let gpu_time = match timer {
            Some(t) => format!("{:>8.1} us", t.micros()?),
            None => "n/a (no timestamps on this queue)".to_string(),
        };
        let verdict = if matches { "matches" } else { "MISMATCH" };
        lines.push(format!(
            "  run {run}: submit+wait {:>8.1} us, graph dispatch on the device {gpu_time}, {verdict}",
            wall.as_secs_f64() * 1e6
        ));
    }
    println!("timings (submit+wait: scratch init + graph dispatch; device: timestamps around the dispatch):");
    lines.iter().for_each(|l| println!("{l}"));
    if gpu.is_cpu {
        println!("  (a CPU driver: its timestamps are host clock readings taken as its worker runs the");
        println!("   commands, and it JIT-compiles each kernel at its first dispatch, which run 1 pays)");
    }
    if !ok {
        return Ok(Outcome::Mismatch);
    }
    println!("verified: {runs} run(s), all {} words match the CPU model", hello::UAV_WORDS);
    Ok(Outcome::Verified)
}
