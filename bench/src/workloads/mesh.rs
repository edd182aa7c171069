//! `mesh-nodes`: the demo's Sierpinski triangle (7 cuts: 2187 triangles on
//! a 512 x 512 target), a recursive compute node feeding the mesh node
//! `tri` ([`demo::sierpinski`]), dispatched inside a dynamic rendering
//! instance. Baseline, inside the same kind of instance as the
//! application would have it: one compute pass a cut
//! (`sierpinski_split.comp`, a barrier after each), the last writing the
//! arguments of one `vkCmdDrawMeshTasksIndirectEXT` of a plain mesh shader
//! (`sierpinski_draw.mesh`). Both images are read back and compared with
//! the CPU rasterisation. It runs on a device of its own with
//! `shaderMeshEnqueue` (the other workloads' device stays without it), and
//! is skipped where the layer offers no mesh nodes.

use std::time::Instant;

use ash::vk;
use demo::gpu::{Buffer, Gpu};
use demo::sierpinski::{self, MeshGraph, Target, LEVELS, SIZE};
use vk_host::pipeline::{compute_pipeline, shader_module, spirv_words};
use vk_host::render::{self, ColorTarget};
use vk_host::Timer;

use crate::cmd;
use crate::measure;
use crate::report::Row;
use crate::report::{Outcome, Scratch};
use crate::workloads::Ctx;

const SPLIT: &[u8] = include_bytes!("../../shaders/sierpinski_split.comp.spv");
const DRAW: &[u8] = include_bytes!("../../shaders/sierpinski_draw.mesh.spv");
/// Bytes of one `Tri { ivec2 a, b, c; uint level; }` (scalar layout).
const TRI_BYTES: u64 = 28;

/// `sierpinski_split.comp`'s push constants.
#[repr(C)]
#[derive(Clone, Copy)]
struct SplitPush {
    src: u64,
    dst: u64,
    args: u64,
    count: u32,
    last: u32,
}

/// The baseline's objects, destroyed on drop.
struct Baseline<'g> {
    gpu: &'g Gpu,
    modules: [vk::ShaderModule; 3],
    layouts: [vk::PipelineLayout; 2],
    split: vk::Pipeline,
    draw: vk::Pipeline,
}

impl<'g> Baseline<'g> {
    fn new(gpu: &'g Gpu) -> Result<Self, String> {
        let d = &gpu.device;
        let mut b = Baseline {
            gpu,
            modules: [vk::ShaderModule::null(); 3],
            layouts: [vk::PipelineLayout::null(); 2],
            split: vk::Pipeline::null(),
            draw: vk::Pipeline::null(),
        };
        for (slot, bytes) in b.modules.iter_mut().zip([SPLIT, DRAW, sierpinski::COLOR_FRAG_SPV]) {
            *slot = shader_module(d, &spirv_words(bytes)?)?;
        }
        let ranges = [
            (vk::ShaderStageFlags::COMPUTE, std::mem::size_of::<SplitPush>() as u32),
            (vk::ShaderStageFlags::MESH_EXT, 8),
        ];
        for (slot, (stage_flags, size)) in b.layouts.iter_mut().zip(ranges) {
            let range = [vk::PushConstantRange { stage_flags, offset: 0, size }];
            // SAFETY: valid device and create info.
            *slot = unsafe {
                d.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&range), None)
            }
            .map_err(|e| format!("vkCreatePipelineLayout: {e:?}"))?;
        }
        b.split = compute_pipeline(d, b.modules[0], c"main", b.layouts[0])?;
        b.draw = render::mesh_pipeline(d, b.layouts[1], (b.modules[1], b.modules[2]), None, None)?;
        Ok(b)
    }

    /// One pass a cut from `tris[0]` (holding the first triangle), then the draw.
    fn record(&self, cb: vk::CommandBuffer, tris: [&Buffer<'_>; 2], args: &Buffer<'_>, target: &ColorTarget) {
        let d = &self.gpu.device;
        let address = |b: &Buffer<'_>| b.address.unwrap_or(0);
        for cut in 0..LEVELS {
            let count = 3u32.pow(cut);
            let push = SplitPush {
                src: address(tris[cut as usize % 2]),
                dst: address(tris[(cut as usize + 1) % 2]),
                args: address(args),
                count,
                last: u32::from(cut + 1 == LEVELS),
            };
            // SAFETY: recording; the push block is plain data of its size.
            unsafe {
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, self.split);
                let bytes = std::slice::from_raw_parts(
                    (&push as *const SplitPush).cast::<u8>(),
                    std::mem::size_of::<SplitPush>(),
                );
                d.cmd_push_constants(cb, self.layouts[0], vk::ShaderStageFlags::COMPUTE, 0, bytes);
                d.cmd_dispatch(cb, count.div_ceil(64), 1, 1);
            }
            cmd::barrier(
                self.gpu,
                cb,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::COMPUTE_SHADER
                    | vk::PipelineStageFlags::DRAW_INDIRECT
                    | vk::PipelineStageFlags::MESH_SHADER_EXT,
            );
        }
        render::begin_rendering(d, cb, target, 0);
        render::set_view(d, cb, (0.0, 0.0), SIZE, target.area());
        let last = address(tris[LEVELS as usize % 2]).to_le_bytes();
        let mesh = ash::ext::mesh_shader::Device::new(&self.gpu.instance, d);
        // SAFETY: recording inside the rendering instance.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, self.draw);
            d.cmd_push_constants(cb, self.layouts[1], vk::ShaderStageFlags::MESH_EXT, 0, &last);
            mesh.cmd_draw_mesh_tasks_indirect(cb, args.buffer, 0, 1, 12);
            d.cmd_end_rendering(cb);
        }
    }
}

impl Drop for Baseline<'_> {
    fn drop(&mut self) {
        let d = &self.gpu.device;
        // SAFETY: idle objects of this device (null handles are ignored).
        unsafe {
            d.destroy_pipeline(self.split, None);
            d.destroy_pipeline(self.draw, None);
            for l in self.layouts {
                d.destroy_pipeline_layout(l, None);
            }
            for m in self.modules {
                d.destroy_shader_module(m, None);
            }
        }
    }
}

/// Records the untimed parts around a side: the target made ready before,
/// read back to `host` after.
fn around<'a>(
    gpu: &'a Gpu,
    target: &'a ColorTarget,
    host: &Buffer<'_>,
) -> (impl Fn(vk::CommandBuffer) + 'a, impl Fn(vk::CommandBuffer) + 'a) {
    let d = &gpu.device;
    let ready =
        move |cb| target.transition(d, cb, vk::ImageLayout::UNDEFINED, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
    let buffer = host.buffer;
    let read = move |cb| {
        target.transition(d, cb, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
        target.copy_to(d, cb, buffer);
        cmd::barrier(gpu, cb, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST);
    };
    (ready, read)
}

/// Runs the workload (`None`: no mesh nodes on this device).
pub fn run(ctx: &Ctx<'_>) -> Result<Option<Row>, String> {
    if !render::mesh_enqueue_offered(&ctx.gpu.instance, ctx.gpu.physical) {
        println!("  skipped: the device offers no shaderMeshEnqueue");
        return Ok(None);
    }
    let gpu = Gpu::with_mesh_nodes(&ctx.gpu.instance, ctx.gpu.physical)?;
    let d = &gpu.device;
    let timer = Timer::new(d, gpu.timestamps)?.ok_or("the queue writes no timestamps")?;
    let start = Instant::now();
    let graph = MeshGraph::new(&gpu)?;
    let ms_per_node = start.elapsed().as_secs_f64() * 1e3 / 2.0;
    let scratch_usage =
        vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
    let scratch = gpu.buffer(graph.scratch_size, scratch_usage, false)?;
    let scratch_address = scratch.address.unwrap_or(0);
    let record = sierpinski::entry_record(LEVELS);
    let baseline = Baseline::new(&gpu)?;
    let storage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
    let tris_bytes = TRI_BYTES * u64::from(3u32.pow(LEVELS));
    let tris = [
        gpu.buffer(tris_bytes, storage | vk::BufferUsageFlags::TRANSFER_DST, false)?,
        gpu.buffer(tris_bytes, storage, false)?,
    ];
    let args = gpu.buffer(12, storage | vk::BufferUsageFlags::INDIRECT_BUFFER, false)?;
    let first: Vec<u32> = record.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let targets = [
        Target(ColorTarget::new(d, gpu.memory_properties(), SIZE)?, d),
        Target(ColorTarget::new(d, gpu.memory_properties(), SIZE)?, d),
    ];
    let image_bytes = 4 * u64::from(SIZE * SIZE);
    let hosts = [cmd::host_buffer(&gpu, image_bytes)?, cmd::host_buffer(&gpu, image_bytes)?];

    let (ready, read) = around(&gpu, &targets[0].0, &hosts[0]);
    let graph_cb = measure::timed_cb(
        &gpu,
        &timer,
        |cb| {
            ready(cb);
            // SAFETY: recording outside a render pass.
            unsafe { (graph.fns.init_scratch)(cb, graph.graph, scratch_address, graph.scratch_size) };
        },
        |cb| {
            render::begin_rendering(d, cb, &targets[0].0, 0);
            // SAFETY: inside the rendering instance; the scratch holds scratch_size bytes.
            unsafe { graph.record_dispatch(cb, scratch_address, &record) };
            // SAFETY: closes the instance begun above.
            unsafe { d.cmd_end_rendering(cb) };
        },
        read,
    )?;
    let (ready, read) = around(&gpu, &targets[1].0, &hosts[1]);
    let base_cb = measure::timed_cb(
        &gpu,
        &timer,
        |cb| {
            ready(cb);
            cmd::update(&gpu, cb, &tris[0], &first);
            cmd::barrier(&gpu, cb, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::COMPUTE_SHADER);
        },
        |cb| baseline.record(cb, [&tris[0], &tris[1]], &args, &targets[1].0),
        read,
    )?;
    let [g_samples, b_samples] = measure::sample_interleaved(&gpu, [graph_cb, base_cb], &timer, &ctx.settings)?;
    let want = sierpinski::model(LEVELS);
    for (side, host) in ["graph", "baseline"].iter().zip(&hosts) {
        let got = host.read_u32((SIZE * SIZE) as usize)?;
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            return Err(format!(
                "mesh-nodes: the {side}'s image differs from the CPU rasterisation at pixel {i}: {:#x} vs {:#x}",
                got[i], want[i]
            ));
        }
    }
    // Recorded inside a rendering instance, which the measurement leaves out.
    let record_cpu_us = measure::record_cpu_us(
        &gpu,
        ctx.settings.runs,
        &mut |cb| render::begin_rendering(d, cb, &targets[0].0, 0),
        // SAFETY: inside the rendering instance; nothing is submitted.
        &mut |cb| unsafe { graph.record_dispatch(cb, scratch_address, &record) },
        // SAFETY: closes the instance.
        &mut |cb| unsafe { d.cmd_end_rendering(cb) },
    )?;
    let size = vk_host::graph::scratch_size(&graph.fns, d, graph.graph)?;
    Ok(Some(Row {
        name: "mesh-nodes",
        detail: format!(
            "Sierpinski, {LEVELS} cuts, {} triangles drawn by a mesh node, {SIZE}x{SIZE}",
            3u32.pow(LEVELS)
        ),
        graph_us: measure::median(&g_samples),
        baseline_us: measure::median(&b_samples),
        record_cpu_us,
        pipeline_ms_per_node: ms_per_node,
        nodes: 2,
        scratch_bytes: graph.scratch_size,
        extra: Vec::new(),
        samples: (g_samples, b_samples),
        scratch: Scratch {
            live_payload_bytes: TRI_BYTES * u64::from(3u32.pow(LEVELS)),
            min_size: size.min_size,
            max_size: size.max_size,
            granularity: size.size_granularity.max(1),
            outcome: Outcome::Skipped,
        },
    }))
}
