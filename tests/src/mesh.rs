//! The mesh-node scene of `graph_mesh_nodes.rs` and the demo's GPU check: a
//! device with `shaderMeshEnqueue`, a 64x64 `R32_UINT` colour target, the
//! graph `scene -> row -> tile[0..2]` (two DXC compute levels, then a node
//! array of three mesh nodes made from one mesh shader with entry point
//! `main`, named and indexed at creation), and the CPU rasterisation of what
//! it must draw (every edge on a pixel boundary, so coverage is exact).

use std::ffi::CStr;

use ash::vk;
use vk_amdx::{Commands, PIPELINE_BIND_POINT_EXECUTION_GRAPH};
use vk_host::graph::{host_payloads, node_index, record_host_dispatch, scratch_size};
use vk_host::pipeline::{shader_module, spirv_words};
use vk_host::render::{self, ColorTarget};

use crate::device::Owned;
use crate::error::{Error, Result};
use crate::skip::{skip, Lane};
use crate::{HostBuffer, TestDevice, TestInstance};

/// `scene` and `row` (DXC 1.9, `tests/shaders/mesh/scene.hlsl`).
pub const SCENE_SPV: &[u8] = include_bytes!("../shaders/mesh/scene.spv");
/// The mesh node (`35_mesh_node.spvasm` of the lowering's corpus).
pub const TILE_SPV: &[u8] = include_bytes!("../../spirv-lowering/tests/corpus/35_mesh_node.spv");
/// The fragment shader of every mesh pipeline: the demo's (`demo/shaders/mesh/color.frag`).
pub const COLOR_FRAG_SPV: &[u8] = include_bytes!("../../demo/shaders/mesh/color.frag.spv");
/// An ordinary mesh shader covering pixels [56, 64)^2 with 0x5EED.
pub const MARKER_MESH_SPV: &[u8] = include_bytes!("../shaders/mesh/marker.mesh.spv");
/// The same with its colour word read from the application's set 0.
pub const MARKER_SET_MESH_SPV: &[u8] = include_bytes!("../shaders/mesh/marker_set.mesh.spv");
/// What the graph's own set 0 holds in a scene with sets (never drawn).
const GRAPH_WORD: u32 = 0x0BAD;
/// The colour target's side in pixels.
pub const SIZE: u32 = 64;
/// What the marker draws.
pub const MARKER: u32 = 0x5EED;
/// Validation 1.3.239 does not know maintenance5's structures (the flags of
/// mesh node pipelines travel in one).
const MAINTENANCE5_UNKNOWN_TO_VALIDATION: &str = "unknown VkStructureType (100047000";

/// The scene's host record.
#[derive(Clone, Copy, Debug)]
pub struct Scene {
    pub tiles_x: u32,
    pub tiles_y: u32,
    /// Squares per tile side (the mesh node's dispatch grid): 1 or 2.
    pub grid: u32,
}

impl Scene {
    pub fn bytes(&self) -> Vec<u8> {
        [self.tiles_x, self.tiles_y, self.grid].iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// The viewport and scissor set before the dispatch (pixels).
#[derive(Clone, Copy, Debug)]
pub struct View {
    pub offset: (i32, i32),
    pub scissor: vk::Rect2D,
}

impl Default for View {
    fn default() -> Self {
        View { offset: (0, 0), scissor: vk::Rect2D { offset: Default::default(), extent: extent() } }
    }
}

fn extent() -> vk::Extent2D {
    vk::Extent2D { width: SIZE, height: SIZE }
}

/// What a frame is recorded with around the graph dispatch.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    pub scene: Scene,
    pub view: View,
    /// Cleared by the load operation.
    pub background: u32,
    /// A `vkCmdClearAttachments` of pixels [56, 64) x [0, 8) before the dispatch.
    pub early_clear: u32,
    /// The marker drawn after the dispatch with the pipeline bound before it.
    pub marker_after: bool,
    /// How the graph is dispatched.
    pub dispatch: Dispatch,
}

/// How a frame's graph dispatch is recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dispatch {
    /// `vkCmdDispatchGraphAMDX`, the record in host memory.
    #[default]
    Host,
    /// `vkCmdDispatchGraphIndirectAMDX`, the info and the record in device
    /// memory (level 0 built on the GPU).
    Indirect,
    /// The host dispatch twice in a row on scratch initialised once: the
    /// second draws exactly what the first did (nothing of the first's
    /// records or counts is left over).
    HostTwice,
}

/// The CPU rasterisation of a frame.
pub fn expected(frame: &Frame) -> Vec<u32> {
    let n = SIZE as i32;
    let mut image = vec![frame.background; (SIZE * SIZE) as usize];
    let mut fill = |x0: i32, y0: i32, x1: i32, y1: i32, v: u32, clip: Option<vk::Rect2D>| {
        for y in y0.max(0)..y1.min(n) {
            for x in x0.max(0)..x1.min(n) {
                let inside = clip.is_none_or(|c| {
                    x >= c.offset.x
                        && y >= c.offset.y
                        && x < c.offset.x + c.extent.width as i32
                        && y < c.offset.y + c.extent.height as i32
                });
                if inside {
                    image[(y * n + x) as usize] = v;
                }
            }
        }
    };
    fill(56, 0, 64, 8, frame.early_clear, None);
    let Scene { tiles_x, tiles_y, grid } = frame.scene;
    let (ox, oy) = frame.view.offset;
    let cell = 8 / grid as i32;
    for ty in 0..tiles_y.min(8) as i32 {
        for tx in 0..tiles_x.min(8) as i32 {
            let kind = ((tx + ty) % 3) as u32;
            let color = (1 + tx as u32 + 8 * ty as u32) * 4 + kind;
            for gy in 0..grid as i32 {
                for gx in 0..grid as i32 {
                    let x0 = tx * 8 + gx * cell + ox;
                    let y0 = ty * 8 + gy * cell + oy;
                    fill(x0 + 1, y0 + 1, x0 + cell - 1, y0 + cell - 1, color, Some(frame.view.scissor));
                }
            }
        }
    }
    if frame.marker_after {
        fill(56 + ox, 56 + oy, 64 + ox, 64 + oy, MARKER, Some(frame.view.scissor));
    }
    image
}

/// The first pixel of `got` that differs from `want`, for a readable
/// failure.
pub fn first_difference(got: &[u32], want: &[u32]) -> Option<String> {
    let i = got.iter().zip(want).position(|(g, w)| g != w)?;
    Some(format!(
        "pixel ({}, {}): got {:#x}, want {:#x} ({} pixels differ)",
        i as u32 % SIZE,
        i as u32 / SIZE,
        got[i],
        want[i],
        got.iter().zip(want).filter(|(g, w)| g != w).count()
    ))
}

/// Whether the layer offers `shaderMeshEnqueue` on `pd` (through the loader).
pub fn mesh_enqueue_offered(inst: &TestInstance, pd: vk::PhysicalDevice) -> bool {
    render::mesh_enqueue_offered(&inst.instance, pd)
}

/// A device with `shaderMeshEnqueue`, dynamic rendering and maintenance5 on
/// a graphics + compute queue, or `None` (a [`skip`]) where the layer does
/// not offer mesh nodes; on the modern and GPU lanes that fails.
pub fn mesh_device<'i>(inst: &'i TestInstance, pd: vk::PhysicalDevice) -> Option<TestDevice<'i>> {
    mesh_device_with(inst, pd, false)
}

/// [`mesh_device`] with `VK_KHR_maintenance6` (and its feature) too, or
/// `None` (a [`skip`]) where either is missing; on the modern and GPU lanes
/// that fails.
pub fn mesh_device_with_maintenance6<'i>(inst: &'i TestInstance, pd: vk::PhysicalDevice) -> Option<TestDevice<'i>> {
    mesh_device_with(inst, pd, true)
}

/// [`mesh_device`], with maintenance6 where `maintenance6`.
fn mesh_device_with<'i>(inst: &'i TestInstance, pd: vk::PhysicalDevice, maintenance6: bool) -> Option<TestDevice<'i>> {
    if !mesh_enqueue_offered(inst, pd) {
        skip(&[Lane::Modern, Lane::Gpu], "no shaderMeshEnqueue (no VK_EXT_mesh_shader below)");
        return None;
    }
    if maintenance6 {
        let listed = inst.device_extensions(pd).expect("extensions");
        if !listed.iter().any(|(n, _)| n.as_bytes() == ash::khr::maintenance6::NAME.to_bytes()) {
            skip(&[Lane::Modern, Lane::Gpu], "the driver lacks VK_KHR_maintenance6");
            return None;
        }
        inst.log().tolerate(crate::device::MAINTENANCE6_UNKNOWN_TO_VALIDATION);
    }
    inst.log().tolerate(MAINTENANCE5_UNKNOWN_TO_VALIDATION);
    let family = render::graphics_family(&inst.instance, pd).expect("graphics queue family");
    let device = render::with_mesh_device_info_and(family, maintenance6, |info| TestDevice::create(inst, pd, info));
    Some(device.expect("mesh device"))
}

/// How the application of a scene with sets binds them before the
/// dispatch: the graph's set for the compute stages (the execution-graph
/// bind point's) and the marker's for the mesh stage (graphics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetBinding {
    /// `vkCmdBindDescriptorSets` at each bind point.
    BindPoints,
    /// `VK_KHR_maintenance6`'s `vkCmdBindDescriptorSets2KHR` for each stage.
    Stages,
}

/// The application's descriptor sets of a scene with them: one layout of a
/// storage buffer at set 0 for the graph, its mesh nodes and the marker;
/// the graph's set holding [`GRAPH_WORD`], the marker's [`MARKER`]. The
/// mesh nodes' draws bind the graph's set at the graphics bind point, so
/// the marker draws [`MARKER`] only where the layer restores the
/// application's set after them.
#[derive(Clone, Copy)]
struct AppSets {
    layout: vk::PipelineLayout,
    graph: vk::DescriptorSet,
    marker: vk::DescriptorSet,
    binding: SetBinding,
}

impl AppSets {
    fn new(dev: &TestDevice<'_>, binding: SetBinding) -> Result<Self> {
        let d = &dev.device;
        let stages = vk::ShaderStageFlags::COMPUTE | vk::ShaderStageFlags::MESH_EXT;
        let bindings = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(stages)];
        // SAFETY: (whole block) valid device and create infos of locals;
        // each object is owned by the device at once.
        unsafe {
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
            let set_layout =
                d.create_descriptor_set_layout(&info, None).map_err(Error::vk("vkCreateDescriptorSetLayout"))?;
            dev.own(Owned::SetLayout(set_layout));
            let set_layouts = [set_layout];
            let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
            let layout = d.create_pipeline_layout(&info, None).map_err(Error::vk("vkCreatePipelineLayout"))?;
            dev.own(Owned::PipelineLayout(layout));
            let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 2 }];
            let info = vk::DescriptorPoolCreateInfo::default().max_sets(2).pool_sizes(&sizes);
            let pool = d.create_descriptor_pool(&info, None).map_err(Error::vk("vkCreateDescriptorPool"))?;
            dev.own(Owned::DescriptorPool(pool));
            let both = [set_layout, set_layout];
            let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&both);
            let sets = d.allocate_descriptor_sets(&info).map_err(Error::vk("vkAllocateDescriptorSets"))?;
            let [graph, marker] = sets[..] else {
                return Err(Error::Setup("vkAllocateDescriptorSets: not two sets".into()));
            };
            for (set, word) in [(graph, GRAPH_WORD), (marker, MARKER)] {
                let buffer = dev.create_host_buffer(4, vk::BufferUsageFlags::STORAGE_BUFFER)?;
                buffer.write_u32(&[word])?;
                let info = [vk::DescriptorBufferInfo { buffer: buffer.buffer, offset: 0, range: vk::WHOLE_SIZE }];
                let write = vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(&info);
                d.update_descriptor_sets(&[write], &[]);
            }
            Ok(AppSets { layout, graph, marker, binding })
        }
    }

    /// Binds the graph's set for the compute stages and the marker's for
    /// the mesh stage, the way `self.binding` says.
    ///
    /// # Safety
    /// `cb` is recording on `dev`, whose device has maintenance6 for
    /// [`SetBinding::Stages`].
    unsafe fn bind(&self, dev: &TestDevice<'_>, cb: vk::CommandBuffer) {
        let d = &dev.device;
        let pairs = [
            (PIPELINE_BIND_POINT_EXECUTION_GRAPH, vk::ShaderStageFlags::COMPUTE, self.graph),
            (vk::PipelineBindPoint::GRAPHICS, vk::ShaderStageFlags::MESH_EXT, self.marker),
        ];
        for (point, stages, set) in pairs {
            let sets = [set];
            // SAFETY: the caller's contract; valid layout and sets.
            unsafe {
                match self.binding {
                    SetBinding::BindPoints => d.cmd_bind_descriptor_sets(cb, point, self.layout, 0, &sets, &[]),
                    SetBinding::Stages => {
                        let m6 = ash::khr::maintenance6::Device::new(&dev.instance.instance, d);
                        let info = vk::BindDescriptorSetsInfoKHR::default()
                            .stage_flags(stages)
                            .layout(self.layout)
                            .descriptor_sets(&sets);
                        m6.cmd_bind_descriptor_sets2(cb, &info);
                    }
                }
            }
        }
    }
}

/// The scene's pipelines, colour target and readback buffer.
pub struct MeshScene<'d> {
    dev: &'d TestDevice<'d>,
    pub fns: Commands,
    pub graph: vk::Pipeline,
    /// The three mesh node libraries `tile[0..2]`.
    pub libraries: Vec<vk::Pipeline>,
    marker: vk::Pipeline,
    /// The application's sets, bound before each dispatch, where it has them.
    sets: Option<AppSets>,
    target: ColorTarget,
    /// Drawn in a render pass object (and its framebuffer) instead of
    /// dynamic rendering: the pass leaves the target in `TRANSFER_SRC_OPTIMAL`.
    pass: Option<(vk::RenderPass, vk::Framebuffer)>,
    readback: HostBuffer,
    scratch: HostBuffer,
    scratch_size: u64,
    entry: u32,
}

impl<'d> MeshScene<'d> {
    /// The scene drawn inside dynamic rendering.
    pub fn new(dev: &'d TestDevice<'d>) -> Result<Self> {
        Self::with_pass(dev, false)
    }

    /// The scene inside dynamic rendering with the application's sets
    /// (see `AppSets`), bound as `binding` says before each dispatch.
    pub fn with_sets(dev: &'d TestDevice<'d>, binding: SetBinding) -> Result<Self> {
        Self::with(dev, false, Some(AppSets::new(dev, binding)?))
    }

    /// The scene drawn inside a render pass object of one subpass when
    /// `render_pass_object`, else inside dynamic rendering.
    pub fn with_pass(dev: &'d TestDevice<'d>, render_pass_object: bool) -> Result<Self> {
        Self::with(dev, render_pass_object, None)
    }

    /// [`Self::with_pass`], with the application's `sets` where given.
    fn with(dev: &'d TestDevice<'d>, render_pass_object: bool, sets: Option<AppSets>) -> Result<Self> {
        let d = &dev.device;
        let target = ColorTarget::new(d, &dev.memory_properties, SIZE)?;
        let pass = match render_pass_object {
            true => match render::render_pass(d, &target, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, 1) {
                Ok(pass) => Some(pass),
                Err(e) => {
                    // SAFETY: unused.
                    unsafe { target.destroy(d) };
                    return Err(e.into());
                }
            },
            false => None,
        };
        let scene = MeshScene::create(dev, target, pass, sets);
        if scene.is_err() {
            // SAFETY: nothing uses them after the failure.
            unsafe {
                if let Some((p, f)) = pass {
                    d.destroy_framebuffer(f, None);
                    d.destroy_render_pass(p, None);
                }
                target.destroy(d);
            }
        }
        scene
    }

    fn create(
        dev: &'d TestDevice<'d>,
        target: ColorTarget,
        pass: Option<(vk::RenderPass, vk::Framebuffer)>,
        sets: Option<AppSets>,
    ) -> Result<Self> {
        let d = &dev.device;
        let render_pass = pass.map(|(p, _)| p);
        let fns = dev.amdx_commands()?;
        let module = |bytes: &[u8]| -> Result<vk::ShaderModule> {
            let m = shader_module(d, &spirv_words(bytes)?)?;
            dev.own(Owned::ShaderModule(m));
            Ok(m)
        };
        let marker_spv = if sets.is_some() { MARKER_SET_MESH_SPV } else { MARKER_MESH_SPV };
        let (scene, tile, frag, marker_mesh) =
            (module(SCENE_SPV)?, module(TILE_SPV)?, module(COLOR_FRAG_SPV)?, module(marker_spv)?);
        let layout = match sets {
            Some(sets) => sets.layout,
            None => {
                // SAFETY: valid device; an empty layout.
                let layout = unsafe { d.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default(), None) }
                    .map_err(Error::vk("vkCreatePipelineLayout"))?;
                dev.own(Owned::PipelineLayout(layout));
                layout
            }
        };
        let mut libraries = Vec::new();
        for index in 0..3 {
            libraries.push(render::mesh_pipeline(d, layout, (tile, frag), Some((c"tile", index)), render_pass)?);
        }
        let marker = render::mesh_pipeline(d, layout, (marker_mesh, frag), None, render_pass)?;
        dev.own(Owned::Pipeline(marker));

        let stages = [c"scene", c"row"].map(|name: &CStr| {
            vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(scene).name(name)
        });
        let library_info = vk::PipelineLibraryCreateInfoKHR::default().libraries(&libraries);
        let info = vk::ExecutionGraphPipelineCreateInfoAMDX::default()
            .stages(&stages)
            .library_info(&library_info)
            .layout(layout);
        let mut graph = vk::Pipeline::null();
        // SAFETY: valid device and create info.
        let result =
            unsafe { (fns.create)(d.handle(), vk::PipelineCache::null(), 1, &info, std::ptr::null(), &mut graph) };
        if result != vk::Result::SUCCESS {
            return Err(Error::vk("vkCreateExecutionGraphPipelinesAMDX")(result));
        }
        dev.own(Owned::Pipeline(graph));

        let readback = dev.create_host_buffer(u64::from(SIZE * SIZE * 4), vk::BufferUsageFlags::TRANSFER_DST)?;
        let scratch_size = scratch_size(&fns, d, graph)?.min_size;
        let scratch = dev.create_host_buffer(
            scratch_size,
            vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
        )?;
        let entry = node_index(&fns, d, graph, c"scene", 0)?;
        Ok(MeshScene { dev, fns, graph, libraries, marker, sets, target, pass, readback, scratch, scratch_size, entry })
    }

    /// Dispatches the graph inside the first of two subpasses of a render
    /// pass of its own (which the layer cannot suspend in its middle: the
    /// dispatch must record nothing) and returns the pixels: the clear
    /// colour `background` wherever nothing was drawn.
    pub fn dispatch_in_two_subpasses(&self, scene: &Scene, background: u32) -> Result<Vec<u32>> {
        let d = &self.dev.device;
        let target = &self.target;
        let (pass, framebuffer) = render::render_pass(d, target, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, 2)?;
        let record = scene.bytes();
        let submitted = self.dev.submit_once(|cb| {
            let address = self.scratch.address.unwrap_or(0);
            // SAFETY: recording valid commands; every array lives across the calls.
            unsafe {
                (self.fns.init_scratch)(cb, self.graph, address, self.scratch_size);
                self.dev.compute_barrier(cb);
                render::begin_render_pass(d, cb, (pass, framebuffer), target, background);
                d.cmd_bind_pipeline(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH, self.graph);
                let infos = [host_payloads(self.entry, &record, 1, record.len() as u64)];
                record_host_dispatch(&self.fns, cb, address, self.scratch_size, &infos);
                d.cmd_next_subpass(cb, vk::SubpassContents::INLINE);
                d.cmd_end_render_pass(cb);
            }
            target.transition(d, cb, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
            target.copy_to(d, cb, self.readback.buffer);
            self.dev.host_read_barrier(cb);
        });
        // SAFETY: idle after the submission (or never used).
        unsafe {
            d.destroy_framebuffer(framebuffer, None);
            d.destroy_render_pass(pass, None);
        }
        submitted?;
        Ok(self.readback.read_u32((SIZE * SIZE) as usize)?)
    }

    /// Records and runs `frame`, returning the colour target's pixels.
    pub fn draw(&self, frame: &Frame) -> Result<Vec<u32>> {
        let d = &self.dev.device;
        let record = frame.scene.bytes();
        let indirect = match frame.dispatch {
            Dispatch::Indirect => indirect_info(self.dev, self.entry, &record)?,
            _ => 0,
        };
        let target = &self.target;
        self.dev.submit_once(|cb| {
            target.transition(d, cb, vk::ImageLayout::UNDEFINED, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
            let address = self.scratch.address.unwrap_or(0);
            // SAFETY: recording valid commands; every array lives across the calls.
            unsafe {
                (self.fns.init_scratch)(cb, self.graph, address, self.scratch_size);
                self.dev.compute_barrier(cb);
                match self.pass {
                    Some(pass) => render::begin_render_pass(d, cb, pass, target, frame.background),
                    None => render::begin_rendering(d, cb, target, frame.background),
                }
                let clear = vk::ClearAttachment {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    color_attachment: 0,
                    clear_value: vk::ClearValue { color: vk::ClearColorValue { uint32: [frame.early_clear, 0, 0, 0] } },
                };
                let rect = vk::ClearRect {
                    rect: vk::Rect2D {
                        offset: vk::Offset2D { x: 56, y: 0 },
                        extent: vk::Extent2D { width: 8, height: 8 },
                    },
                    base_array_layer: 0,
                    layer_count: 1,
                };
                d.cmd_clear_attachments(cb, &[clear], &[rect]);
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, self.marker);
                if let Some(sets) = &self.sets {
                    sets.bind(self.dev, cb);
                }
                let (ox, oy) = frame.view.offset;
                render::set_view(d, cb, (ox as f32, oy as f32), SIZE, frame.view.scissor);
                d.cmd_bind_pipeline(cb, PIPELINE_BIND_POINT_EXECUTION_GRAPH, self.graph);
                match frame.dispatch {
                    Dispatch::Host | Dispatch::HostTwice => {
                        let infos = [host_payloads(self.entry, &record, 1, record.len() as u64)];
                        record_host_dispatch(&self.fns, cb, address, self.scratch_size, &infos);
                        if frame.dispatch == Dispatch::HostTwice {
                            record_host_dispatch(&self.fns, cb, address, self.scratch_size, &infos);
                        }
                    }
                    Dispatch::Indirect => {
                        let info = vk::DispatchGraphCountInfoAMDX {
                            count: 1,
                            infos: vk::DeviceOrHostAddressConstAMDX { device_address: indirect },
                            stride: 24,
                        };
                        (self.fns.dispatch_indirect)(cb, address, self.scratch_size, &info);
                    }
                }
                if frame.marker_after {
                    // The application's pipeline and viewport, bound before the dispatch.
                    let mesh = ash::ext::mesh_shader::Device::new(&self.dev.instance.instance, d);
                    mesh.cmd_draw_mesh_tasks(cb, 1, 1, 1);
                }
                match self.pass {
                    Some(_) => d.cmd_end_render_pass(cb),
                    None => d.cmd_end_rendering(cb),
                }
            }
            // The render pass leaves the target ready to copy; the barrier still
            // orders its writes before the copy.
            let after = if self.pass.is_some() {
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL
            } else {
                vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL
            };
            target.transition(d, cb, after, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
            target.copy_to(d, cb, self.readback.buffer);
            self.dev.host_read_barrier(cb);
        })?;
        Ok(self.readback.read_u32((SIZE * SIZE) as usize)?)
    }
}

/// Device address of a `VkDispatchGraphInfoAMDX` of one `record` for
/// `node`, both in device memory (the device owns the buffers).
fn indirect_info(dev: &TestDevice<'_>, node: u32, record: &[u8]) -> Result<vk::DeviceAddress> {
    let usage = vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
    let payload = dev.create_host_buffer(record.len() as u64, usage)?;
    payload.write_bytes(0, record)?;
    let at = payload.address.unwrap_or(0);
    let stride = record.len() as u64;
    // { nodeIndex, payloadCount, payloads, payloadStride }
    let words = [node, 1, at as u32, (at >> 32) as u32, stride as u32, (stride >> 32) as u32];
    let info = dev.create_host_buffer(24, usage)?;
    info.write_u32(&words)?;
    Ok(info.address.unwrap_or(0))
}

impl Drop for MeshScene<'_> {
    fn drop(&mut self) {
        let d = &self.dev.device;
        // SAFETY: idle after `submit_once`; the objects are ours. The mesh
        // node libraries may go before the graph that links them.
        unsafe {
            for &p in &self.libraries {
                d.destroy_pipeline(p, None);
            }
            if let Some((pass, framebuffer)) = self.pass {
                d.destroy_framebuffer(framebuffer, None);
                d.destroy_render_pass(pass, None);
            }
            self.target.destroy(d);
        }
    }
}
