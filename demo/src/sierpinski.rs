//! The demo's mesh-node picture: a Sierpinski triangle. The entry node
//! `split` (thread launch, recursing into itself) cuts a triangle into its
//! three corner triangles [`LEVELS`] times and hands each leaf to the mesh
//! node `tri`, which draws it (`shaders/mesh/`). The graph is dispatched
//! inside a dynamic rendering instance; the picture is checked pixel by
//! pixel against the CPU rasterisation here (exact: every vertex is an
//! integer pixel position and no edge passes through a pixel centre) and
//! written as a PNG.

use std::path::Path;

use ash::vk;
use vk_amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH;
use vk_host::graph::{host_payloads, node_index, record_host_dispatch, scratch_size};
use vk_host::pipeline::{shader_module, spirv_words};
use vk_host::render::{self, ColorTarget};

use crate::gpu::Gpu;

/// `split` (DXC 1.9, `shaders/mesh/sierpinski.hlsl`).
pub const SPLIT_SPV: &[u8] = include_bytes!("../shaders/mesh/sierpinski.spv");
/// The mesh node `tri` (`shaders/mesh/sierpinski_tri.spvasm`).
pub const TRI_SPV: &[u8] = include_bytes!("../shaders/mesh/sierpinski_tri.spv");
pub const COLOR_FRAG_SPV: &[u8] = include_bytes!("../shaders/mesh/color.frag.spv");
/// Side of the picture in pixels (the mesh node maps 512 pixels to the viewport).
pub const SIZE: u32 = 512;
/// Cuts: 3^7 = 2187 triangles, the smallest 4 pixels wide, every midpoint an integer.
pub const LEVELS: u32 = 7;
/// Scratch beyond `minSize` for the fullest level (2187 records).
const EXTRA_SCRATCH: u64 = 4 << 20;
/// The picture's background word (black).
const BACKGROUND: u32 = 0;

/// A triangle's vertices in pixels.
pub type Triangle = [[i32; 2]; 3];

/// The first triangle: apex at the top centre, base along the bottom edge.
pub const FIRST: Triangle = [[256, 0], [0, 512], [512, 512]];

/// The entry record: `Tri { int2 a, b, c; uint level; }`.
pub fn entry_record(levels: u32) -> Vec<u8> {
    let words = FIRST.iter().flatten().map(|&v| v as u32).chain([levels]);
    words.flat_map(u32::to_le_bytes).collect()
}

/// The leaves after `levels` cuts, as the graph makes them.
pub fn leaves(levels: u32) -> Vec<Triangle> {
    let mut tris = vec![FIRST];
    for _ in 0..levels {
        tris = tris
            .iter()
            .flat_map(|&[a, b, c]| {
                let mid = |p: [i32; 2], q: [i32; 2]| [(p[0] + q[0]) / 2, (p[1] + q[1]) / 2];
                let (ab, bc, ca) = (mid(a, b), mid(b, c), mid(c, a));
                [[a, ab, ca], [ab, b, bc], [ca, bc, c]]
            })
            .collect();
    }
    tris
}

/// The colour word the mesh node gives a triangle (0x00BBGGRR), from its centre.
pub fn colour(t: &Triangle) -> u32 {
    let cx = (t[0][0] + t[1][0] + t[2][0]) / 3;
    let cy = (t[0][1] + t[1][1] + t[2][1]) / 3;
    let red = cx as u32 / 2;
    let green = cy as u32 / 2;
    let blue = 255u32.wrapping_sub((cx + cy) as u32 / 4);
    red | (green << 8) | (blue << 16)
}

/// The CPU rasterisation: a pixel takes the colour of the triangle holding
/// its centre (edge functions in half pixels, exact in integers).
pub fn model(levels: u32) -> Vec<u32> {
    let n = SIZE as i64;
    let mut image = vec![BACKGROUND; (SIZE * SIZE) as usize];
    for t in leaves(levels) {
        let v: Vec<[i64; 2]> = t.iter().map(|p| [2 * p[0] as i64, 2 * p[1] as i64]).collect();
        let (x0, x1) = (t.iter().map(|p| p[0]).min().unwrap_or(0), t.iter().map(|p| p[0]).max().unwrap_or(0));
        let (y0, y1) = (t.iter().map(|p| p[1]).min().unwrap_or(0), t.iter().map(|p| p[1]).max().unwrap_or(0));
        let edge =
            |a: [i64; 2], b: [i64; 2], p: [i64; 2]| (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
        for y in i64::from(y0).max(0)..i64::from(y1).min(n) {
            for x in i64::from(x0).max(0)..i64::from(x1).min(n) {
                let p = [2 * x + 1, 2 * y + 1];
                let e = [edge(v[0], v[1], p), edge(v[1], v[2], p), edge(v[2], v[0], p)];
                if e.iter().all(|&s| s > 0) || e.iter().all(|&s| s < 0) {
                    image[(y * n + x) as usize] = colour(&t);
                }
            }
        }
    }
    image
}

/// Encodes colour words (0x00BBGGRR) as an RGB PNG.
pub fn encode(image: &[u32], n: u32) -> Result<Vec<u8>, String> {
    let rgb: Vec<u8> = image.iter().flat_map(|&w| [w as u8, (w >> 8) as u8, (w >> 16) as u8]).collect();
    crate::picture::encode_rgb(&rgb, n)
}

/// The graph's objects on `gpu`, destroyed on drop.
pub struct MeshGraph<'g> {
    gpu: &'g Gpu,
    pub fns: vk_amdx::Commands,
    modules: Vec<vk::ShaderModule>,
    layout: vk::PipelineLayout,
    pub tri: vk::Pipeline,
    pub graph: vk::Pipeline,
    pub scratch_size: u64,
    pub entry: u32,
}

impl<'g> MeshGraph<'g> {
    /// `split` and the mesh node `tri` (a graphics pipeline library).
    pub fn new(gpu: &'g Gpu) -> Result<Self, String> {
        let d = &gpu.device;
        let fns = vk_amdx::Commands::load(&gpu.instance, d).map_err(|n| format!("{n:?} does not resolve"))?;
        let mut made = MeshGraph {
            gpu,
            fns,
            modules: Vec::new(),
            layout: vk::PipelineLayout::null(),
            tri: vk::Pipeline::null(),
            graph: vk::Pipeline::null(),
            scratch_size: 0,
            entry: 0,
        };
        for bytes in [SPLIT_SPV, TRI_SPV, COLOR_FRAG_SPV] {
            made.modules.push(shader_module(d, &spirv_words(bytes)?)?);
        }
        // SAFETY: valid device; an empty layout.
        made.layout = unsafe { d.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default(), None) }
            .map_err(|e| format!("vkCreatePipelineLayout: {e:?}"))?;
        made.tri = render::mesh_pipeline(d, made.layout, (made.modules[1], made.modules[2]), Some((c"tri", 0)), None)?;
        let stages = [vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(made.modules[0])
            .name(c"split")];
        let libraries = [made.tri];
        let library_info = vk::PipelineLibraryCreateInfoKHR::default().libraries(&libraries);
        let info = vk::ExecutionGraphPipelineCreateInfoAMDX::default()
            .stages(&stages)
            .library_info(&library_info)
            .layout(made.layout);
        // SAFETY: valid device and create info.
        let result = unsafe {
            (made.fns.create)(d.handle(), vk::PipelineCache::null(), 1, &info, std::ptr::null(), &mut made.graph)
        };
        if result != vk::Result::SUCCESS {
            return Err(format!("vkCreateExecutionGraphPipelinesAMDX: {result:?}"));
        }
        // minSize holds a few records a level; 3^7 leaves need room.
        let size = scratch_size(&made.fns, d, made.graph)?;
        let granularity = size.size_granularity.max(1);
        made.scratch_size =
            ((size.min_size + EXTRA_SCRATCH).div_ceil(granularity) * granularity).min(size.max_size.max(size.min_size));
        made.entry = node_index(&made.fns, d, made.graph, c"split", 0)?;
        Ok(made)
    }

    /// Records the graph's dispatch of `record` into the rendering instance
    /// open in `cb` (scratch initialised before the instance began).
    ///
    /// # Safety
    /// `cb` is recording inside a dynamic rendering instance on a target of
    /// [`SIZE`] pixels; `scratch` holds [`Self::scratch_size`] bytes.
    pub unsafe fn record_dispatch(&self, cb: vk::CommandBuffer, scratch: vk::DeviceAddress, record: &[u8]) {
        let d = &self.gpu.device;
        let area = vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: SIZE, height: SIZE } };
        render::set_view(d, cb, (0.0, 0.0), SIZE, area);
        // SAFETY: the caller's contract; `infos` lives across the call.
        unsafe {
            d.cmd_bind_pipeline(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH, self.graph);
            let infos = [host_payloads(self.entry, record, 1, record.len() as u64)];
            record_host_dispatch(&self.fns, cb, scratch, self.scratch_size, &infos);
        }
    }
}

impl Drop for MeshGraph<'_> {
    fn drop(&mut self) {
        let d = &self.gpu.device;
        // SAFETY: idle objects of this device (null handles are ignored).
        unsafe {
            d.destroy_pipeline(self.graph, None);
            d.destroy_pipeline(self.tri, None);
            d.destroy_pipeline_layout(self.layout, None);
            for &m in &self.modules {
                d.destroy_shader_module(m, None);
            }
        }
    }
}

/// Draws the picture on `gpu` (a device with mesh nodes), checks it
/// against [`model`] and writes it to `path`; returns the triangles drawn.
pub fn render(gpu: &Gpu, path: &Path) -> Result<u32, String> {
    let d = &gpu.device;
    let graph = MeshGraph::new(gpu)?;
    let target = Target(ColorTarget::new(d, gpu.memory_properties(), SIZE)?, d);
    let readback = gpu.buffer(4 * u64::from(SIZE * SIZE), vk::BufferUsageFlags::TRANSFER_DST, true)?;
    let scratch = gpu.buffer(
        graph.scratch_size,
        vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
        false,
    )?;
    let address = scratch.address.ok_or("the scratch buffer has no device address")?;
    let record = entry_record(LEVELS);
    let cb = gpu.command_buffer()?;
    // SAFETY: a fresh command buffer of this device; every object lives until the wait.
    unsafe {
        d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
            .map_err(|e| format!("vkBeginCommandBuffer: {e:?}"))?;
        target.0.transition(d, cb, vk::ImageLayout::UNDEFINED, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
        (graph.fns.init_scratch)(cb, graph.graph, address, graph.scratch_size);
        let compute = (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE);
        vk_host::submit::memory_barrier(d, cb, compute, compute);
        render::begin_rendering(d, cb, &target.0, BACKGROUND);
        graph.record_dispatch(cb, address, &record);
        d.cmd_end_rendering(cb);
        target.0.transition(d, cb, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
        target.0.copy_to(d, cb, readback.buffer);
        let host = (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ);
        vk_host::submit::memory_barrier(
            d,
            cb,
            (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE),
            host,
        );
        d.end_command_buffer(cb).map_err(|e| format!("vkEndCommandBuffer: {e:?}"))?;
    }
    gpu.submit_and_wait(cb)?;
    let got = readback.read_u32((SIZE * SIZE) as usize)?;
    let want = model(LEVELS);
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        let differ = got.iter().zip(&want).filter(|(g, w)| g != w).count();
        return Err(format!(
            "the mesh-node picture differs from the CPU rasterisation at pixel ({}, {}): {:#x} vs {:#x} ({differ} pixels)",
            i as u32 % SIZE,
            i as u32 / SIZE,
            got[i],
            want[i]
        ));
    }
    std::fs::write(path, encode(&got, SIZE)?).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(3u32.pow(LEVELS))
}

/// A colour target destroyed on drop.
pub struct Target<'d>(pub ColorTarget, pub &'d ash::Device);

impl Drop for Target<'_> {
    fn drop(&mut self) {
        // SAFETY: idle after the wait (or never used).
        unsafe { self.0.destroy(self.1) };
    }
}
