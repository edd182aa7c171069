//! `mesh-nodes`: the demo's Sierpinski triangle (7 cuts: 2187 triangles on
//! a 512 x 512 target), a recursive compute node feeding the mesh node
//! `tri` ([`demo::sierpinski`]), dispatched inside a dynamic rendering
//! instance. Baseline, inside the same kind of instance as the
//! application would have it: one compute pass a cut
//! (`sierpinski_split.comp`, a barrier after each), the last writing the
//! arguments of one `vkCmdDrawMeshTasksIndirectEXT` of a plain mesh shader
//! (`sierpinski_draw.mesh`). Both images are read back and compared with
//! the CPU rasterisation. Its device has `shaderMeshEnqueue`
//! ([`crate::device::Features::MeshNodes`]; the other workloads' device
//! stays without it); the bench skips it where the layer offers no mesh
//! nodes.

use std::time::Instant;

use ash::vk;
use demo::gpu::{Buffer, Gpu};
use demo::sierpinski::{self, MeshGraph, Target, LEVELS, SIZE};
use vk_host::pipeline::{compute_pipeline, shader_module, spirv_words};
use vk_host::render::{self, ColorTarget};

use crate::cmd;
use crate::pair::{self, Pair, Recording, Side};
use crate::report::Row;
use crate::report::{Outcome, Scratch};
use crate::workloads::{row, Ctx, GraphFigures};

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

/// Runs the workload (on a device with mesh nodes, see [`crate::device::Features`]).
pub fn run(ctx: &Ctx<'_>) -> Result<Row, String> {
    let gpu = ctx.gpu;
    let d = &gpu.device;
    let start = Instant::now();
    let graph = MeshGraph::new(gpu)?;
    let ms_per_node = start.elapsed().as_secs_f64() * 1e3 / 2.0;
    let scratch_usage =
        vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
    let scratch = gpu.buffer(graph.scratch_size, scratch_usage, false)?;
    let scratch_address = scratch.address.unwrap_or(0);
    let record = sierpinski::entry_record(LEVELS);
    let baseline = Baseline::new(gpu)?;
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

    let graph_side = Side {
        zero: &[],
        // SAFETY: recording outside a render pass.
        prep: Box::new(|cb| unsafe { (graph.fns.init_scratch)(cb, graph.graph, scratch_address, graph.scratch_size) }),
        body: Box::new(|cb| {
            render::begin_rendering(d, cb, &targets[0].0, 0);
            // SAFETY: inside the rendering instance; the scratch holds scratch_size bytes.
            unsafe { graph.record_dispatch(cb, scratch_address, &record) };
            // SAFETY: closes the instance begun above.
            unsafe { d.cmd_end_rendering(cb) };
        }),
        out: &targets[0].0,
    };
    let base_side = Side {
        zero: &[],
        prep: Box::new(|cb| {
            cmd::update(gpu, cb, &tris[0], &first);
            cmd::barrier(gpu, cb, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::COMPUTE_SHADER);
        }),
        body: Box::new(|cb| baseline.record(cb, [&tris[0], &tris[1]], &args, &targets[1].0)),
        out: &targets[1].0,
    };
    // Both images against the CPU rasterisation; the dispatch is recorded
    // inside a rendering instance, which the CPU time leaves out.
    let want = sierpinski::model(LEVELS);
    let recording = Recording {
        before: Box::new(|cb| render::begin_rendering(d, cb, &targets[0].0, 0)),
        // SAFETY: inside the rendering instance; nothing is submitted.
        dispatch: Box::new(|cb| unsafe { graph.record_dispatch(cb, scratch_address, &record) }),
        // SAFETY: closes the instance.
        after: Box::new(|cb| unsafe { d.cmd_end_rendering(cb) }),
    };
    let pair = Pair { name: "mesh-nodes", graph: graph_side, baseline: base_side, want: &want, record: recording };
    let measured = pair::measure(ctx, pair)?;
    let size = vk_host::graph::scratch_size(&graph.fns, d, graph.graph)?;
    let detail =
        format!("Sierpinski, {LEVELS} cuts, {} triangles drawn by a mesh node, {SIZE}x{SIZE}", 3u32.pow(LEVELS));
    let figures = GraphFigures { ms_per_node, nodes: 2, scratch_bytes: graph.scratch_size };
    // Not searched: the scratch search probes compute graphs only.
    // The last level's triangles, drawn at the end (kept till then).
    let triangles = TRI_BYTES * u64::from(3u32.pow(LEVELS));
    let scratch = Scratch {
        live_payload_bytes: triangles,
        consumed_payload_bytes: triangles,
        min_size: size.min_size,
        max_size: size.max_size,
        granularity: size.size_granularity.max(1),
        outcome: Outcome::Skipped,
    };
    Ok(row("mesh-nodes", detail, figures, measured, scratch))
}
