//! The mesh-node scene of `graph_mesh_nodes.rs` and the demo's GPU check: a
//! device with `shaderMeshEnqueue`, a 64x64 `R32_UINT` colour target, the
//! graph `scene -> row -> tile[0..2]` (two DXC compute levels, then a node
//! array of three mesh nodes made from one mesh shader with entry point
//! `main`, named and indexed at creation), and the CPU rasterisation of what
//! it must draw (every edge on a pixel boundary, so coverage is exact).

use std::ffi::CStr;

use ash::vk;

use crate::device::{queue_info, Owned};
use crate::error::{Error, Result};
use crate::graph::{GraphFns, BIND_POINT};
use crate::{HostBuffer, TestDevice, TestInstance};

/// `scene` and `row` (DXC 1.9, `tests/shaders/mesh/scene.hlsl`).
pub const SCENE_SPV: &[u8] = include_bytes!("../shaders/mesh/scene.spv");
/// The mesh node (`35_mesh_node.spvasm` of the lowering's corpus).
pub const TILE_SPV: &[u8] = include_bytes!("../../spirv-lowering/tests/corpus/35_mesh_node.spv");
pub const COLOR_FRAG_SPV: &[u8] = include_bytes!("../shaders/mesh/color.frag.spv");
/// An ordinary mesh shader covering pixels [56, 64)^2 with 0x5EED.
pub const MARKER_MESH_SPV: &[u8] = include_bytes!("../shaders/mesh/marker.mesh.spv");
/// The colour target's side in pixels.
pub const SIZE: u32 = 64;
/// What the marker draws.
pub const MARKER: u32 = 0x5EED;
/// `VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX | VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR`.
const MESH_NODE_FLAGS: u64 = 0x1_0000_0000 | 0x800;
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

/// Whether the layer offers `shaderMeshEnqueue` on `pd` (through the loader).
pub fn mesh_enqueue_offered(inst: &TestInstance, pd: vk::PhysicalDevice) -> bool {
    let mut amdx = crate::amdx::PhysicalDeviceShaderEnqueueFeatures::default();
    let mut features2 = vk::PhysicalDeviceFeatures2 {
        p_next: (&mut amdx as *mut crate::amdx::PhysicalDeviceShaderEnqueueFeatures).cast(),
        ..Default::default()
    };
    // SAFETY: a valid chain of output structures.
    unsafe { inst.instance.get_physical_device_features2(pd, &mut features2) };
    amdx.shader_mesh_enqueue == vk::TRUE
}

/// A device with `shaderMeshEnqueue`, dynamic rendering and maintenance5 on
/// a graphics + compute queue, or `None` (with a line saying so) where the
/// layer does not offer mesh nodes; under `EMU_SE_LANE=modern` that fails.
pub fn mesh_device<'i>(inst: &'i TestInstance, pd: vk::PhysicalDevice) -> Option<TestDevice<'i>> {
    if !mesh_enqueue_offered(inst, pd) {
        assert!(!crate::env::modern_lane_required(), "the modern lane's driver has no shaderMeshEnqueue");
        eprintln!("skipped: no shaderMeshEnqueue (no VK_EXT_mesh_shader below; the modern lane runs this test)");
        return None;
    }
    inst.log().tolerate(MAINTENANCE5_UNKNOWN_TO_VALIDATION);
    // SAFETY: valid physical device.
    let families = unsafe { inst.instance.get_physical_device_queue_family_properties(pd) };
    let family =
        families.iter().position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE))?;
    let queues = [queue_info(family as u32)];
    let names = [crate::amdx::EXTENSION_NAME.as_ptr(), ash::khr::maintenance5::NAME.as_ptr()];
    let mut amdx = crate::amdx::PhysicalDeviceShaderEnqueueFeatures {
        shader_enqueue: vk::TRUE,
        shader_mesh_enqueue: vk::TRUE,
        ..Default::default()
    };
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default().buffer_device_address(true);
    let mut v13 = vk::PhysicalDeviceVulkan13Features::default().dynamic_rendering(true);
    let mut m5 = vk::PhysicalDeviceMaintenance5FeaturesKHR::default().maintenance5(true);
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&names)
        .push_next(&mut amdx)
        .push_next(&mut v12)
        .push_next(&mut v13)
        .push_next(&mut m5);
    Some(TestDevice::create(inst, pd, &info).expect("device with shaderMeshEnqueue"))
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// The scene's pipelines, colour target and readback buffer.
pub struct MeshScene<'d> {
    dev: &'d TestDevice<'d>,
    pub fns: GraphFns,
    pub graph: vk::Pipeline,
    /// The three mesh node libraries `tile[0..2]`.
    pub libraries: Vec<vk::Pipeline>,
    layout: vk::PipelineLayout,
    marker: vk::Pipeline,
    image: vk::Image,
    memory: vk::DeviceMemory,
    view: vk::ImageView,
    readback: HostBuffer,
    scratch: HostBuffer,
    scratch_size: u64,
    entry: u32,
}

impl<'d> MeshScene<'d> {
    pub fn new(dev: &'d TestDevice<'d>) -> Result<Self> {
        let d = &dev.device;
        let fns = GraphFns::load(dev)?;
        let module = |bytes: &[u8]| -> Result<vk::ShaderModule> {
            let code = words(bytes);
            // SAFETY: valid device and SPIR-V words.
            let m = unsafe { d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None) }
                .map_err(Error::vk("vkCreateShaderModule"))?;
            dev.own(Owned::ShaderModule(m));
            Ok(m)
        };
        let (scene, tile, frag, marker_mesh) =
            (module(SCENE_SPV)?, module(TILE_SPV)?, module(COLOR_FRAG_SPV)?, module(MARKER_MESH_SPV)?);
        // SAFETY: valid device; an empty layout.
        let layout = unsafe { d.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default(), None) }
            .map_err(Error::vk("vkCreatePipelineLayout"))?;
        dev.own(Owned::PipelineLayout(layout));

        let mut libraries = Vec::new();
        for index in 0..3 {
            let node = vk::PipelineShaderStageNodeCreateInfoAMDX::default().name(c"tile").index(index);
            let p = graphics_pipeline(dev, layout, tile, frag, Some(node))?;
            libraries.push(p);
        }
        let marker = graphics_pipeline(dev, layout, marker_mesh, frag, None)?;
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

        let (image, memory, view) = color_target(dev)?;
        let readback = dev.create_host_buffer(u64::from(SIZE * SIZE * 4), vk::BufferUsageFlags::TRANSFER_DST)?;
        let mut size = crate::amdx::ExecutionGraphPipelineScratchSize {
            s_type: vk::StructureType::EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX,
            p_next: std::ptr::null_mut(),
            min_size: 0,
            max_size: 0,
            size_granularity: 0,
        };
        // SAFETY: valid device and graph.
        let result = unsafe { (fns.scratch_size)(d.handle(), graph, &mut size) };
        if result != vk::Result::SUCCESS {
            return Err(Error::vk("vkGetExecutionGraphPipelineScratchSizeAMDX")(result));
        }
        let scratch = dev.create_host_buffer(
            size.min_size,
            crate::amdx::BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
        )?;
        let node = vk::PipelineShaderStageNodeCreateInfoAMDX::default().name(c"scene").index(0);
        let mut entry = 0;
        // SAFETY: valid device, graph and node info.
        let result = unsafe { (fns.node_index)(d.handle(), graph, &node, &mut entry) };
        if result != vk::Result::SUCCESS {
            return Err(Error::vk("vkGetExecutionGraphPipelineNodeIndexAMDX")(result));
        }
        Ok(MeshScene {
            dev,
            fns,
            graph,
            libraries,
            layout,
            marker,
            image,
            memory,
            view,
            readback,
            scratch,
            scratch_size: size.min_size,
            entry,
        })
    }

    /// Records and runs `frame`, returning the colour target's pixels.
    pub fn draw(&self, frame: &Frame) -> Result<Vec<u32>> {
        let d = &self.dev.device;
        let record = frame.scene.bytes();
        self.dev.submit_once(|cb| {
            // SAFETY: recording valid commands; every array lives across the calls.
            unsafe {
                image_barrier(d, cb, self.image, vk::ImageLayout::UNDEFINED, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
                let address = self.scratch.address.unwrap_or(0);
                (self.fns.init_scratch)(cb, self.graph, address, self.scratch_size);
                self.dev.compute_barrier(cb);
                let color = vk::RenderingAttachmentInfo::default()
                    .image_view(self.view)
                    .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                    .load_op(vk::AttachmentLoadOp::CLEAR)
                    .store_op(vk::AttachmentStoreOp::STORE)
                    .clear_value(vk::ClearValue { color: vk::ClearColorValue { uint32: [frame.background, 0, 0, 0] } });
                let colors = [color];
                let rendering = vk::RenderingInfo::default()
                    .render_area(vk::Rect2D { offset: Default::default(), extent: extent() })
                    .layer_count(1)
                    .color_attachments(&colors);
                d.cmd_begin_rendering(cb, &rendering);
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
                let (ox, oy) = frame.view.offset;
                let viewport = vk::Viewport {
                    x: ox as f32,
                    y: oy as f32,
                    width: SIZE as f32,
                    height: SIZE as f32,
                    min_depth: 0.0,
                    max_depth: 1.0,
                };
                d.cmd_set_viewport(cb, 0, &[viewport]);
                d.cmd_set_scissor(cb, 0, &[frame.view.scissor]);
                d.cmd_bind_pipeline(cb, BIND_POINT, self.graph);
                let infos = [vk::DispatchGraphInfoAMDX {
                    node_index: self.entry,
                    payload_count: 1,
                    payloads: vk::DeviceOrHostAddressConstAMDX { host_address: record.as_ptr().cast() },
                    payload_stride: record.len() as u64,
                }];
                let count = vk::DispatchGraphCountInfoAMDX {
                    count: 1,
                    infos: vk::DeviceOrHostAddressConstAMDX { host_address: infos.as_ptr().cast() },
                    stride: std::mem::size_of::<vk::DispatchGraphInfoAMDX>() as u64,
                };
                (self.fns.dispatch)(cb, address, self.scratch_size, &count);
                if frame.marker_after {
                    // The application's pipeline and viewport, bound before the dispatch.
                    let mesh = ash::ext::mesh_shader::Device::new(&self.dev.instance.instance, d);
                    mesh.cmd_draw_mesh_tasks(cb, 1, 1, 1);
                }
                d.cmd_end_rendering(cb);
                image_barrier(
                    d,
                    cb,
                    self.image,
                    vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                );
                let region = vk::BufferImageCopy::default()
                    .image_subresource(vk::ImageSubresourceLayers {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        mip_level: 0,
                        base_array_layer: 0,
                        layer_count: 1,
                    })
                    .image_extent(vk::Extent3D { width: SIZE, height: SIZE, depth: 1 });
                d.cmd_copy_image_to_buffer(
                    cb,
                    self.image,
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                    self.readback.buffer,
                    &[region],
                );
                self.dev.host_read_barrier(cb);
            }
        })?;
        self.readback.read_u32((SIZE * SIZE) as usize)
    }
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
            d.destroy_image_view(self.view, None);
            d.destroy_image(self.image, None);
            d.free_memory(self.memory, None);
        }
        let _ = self.layout;
    }
}

/// A mesh (+ colour fragment) pipeline for an `R32_UINT` target with
/// dynamic viewport and scissor; a mesh node library when `node` is given.
fn graphics_pipeline(
    dev: &TestDevice<'_>,
    layout: vk::PipelineLayout,
    mesh: vk::ShaderModule,
    frag: vk::ShaderModule,
    node: Option<vk::PipelineShaderStageNodeCreateInfoAMDX<'_>>,
) -> Result<vk::Pipeline> {
    let library = node.is_some();
    let mut node = node;
    let mut mesh_stage =
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::MESH_EXT).module(mesh).name(c"main");
    if let Some(n) = node.as_mut() {
        mesh_stage = mesh_stage.push_next(n);
    }
    let stages = [
        mesh_stage,
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::FRAGMENT).module(frag).name(c"main"),
    ];
    let formats = [vk::Format::R32_UINT];
    let mut rendering = vk::PipelineRenderingCreateInfo::default().color_attachment_formats(&formats);
    let mut flags2 =
        vk::PipelineCreateFlags2CreateInfoKHR::default().flags(vk::PipelineCreateFlags2KHR::from_raw(MESH_NODE_FLAGS));
    let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(vk::CullModeFlags::NONE)
        .line_width(1.0);
    let multisample =
        vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(vk::SampleCountFlags::TYPE_1);
    let blend_attachments =
        [vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::R)];
    let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
    let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
    let mut info = vk::GraphicsPipelineCreateInfo::default()
        .stages(&stages)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .color_blend_state(&blend)
        .dynamic_state(&dynamic)
        .layout(layout)
        .push_next(&mut rendering);
    if library {
        info = info.push_next(&mut flags2);
    }
    // SAFETY: valid device and create info.
    let pipelines = unsafe { dev.device.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) }
        .map_err(|(_, e)| Error::vk("vkCreateGraphicsPipelines")(e))?;
    Ok(pipelines[0])
}

/// The `R32_UINT` colour target, its memory and view.
fn color_target(dev: &TestDevice<'_>) -> Result<(vk::Image, vk::DeviceMemory, vk::ImageView)> {
    let d = &dev.device;
    let info = vk::ImageCreateInfo::default()
        .image_type(vk::ImageType::TYPE_2D)
        .format(vk::Format::R32_UINT)
        .extent(vk::Extent3D { width: SIZE, height: SIZE, depth: 1 })
        .mip_levels(1)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .usage(vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC);
    // SAFETY: valid device and create info.
    let image = unsafe { d.create_image(&info, None) }.map_err(Error::vk("vkCreateImage"))?;
    // SAFETY: valid image.
    let req = unsafe { d.get_image_memory_requirements(image) };
    let alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(req.size)
        .memory_type_index(dev.memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::DEVICE_LOCAL)?);
    // SAFETY: valid device and allocation info.
    let memory = unsafe { d.allocate_memory(&alloc, None) }.map_err(Error::vk("vkAllocateMemory"))?;
    // SAFETY: fresh image and memory of the required size.
    unsafe { d.bind_image_memory(image, memory, 0) }.map_err(Error::vk("vkBindImageMemory"))?;
    let view_info = vk::ImageViewCreateInfo::default()
        .image(image)
        .view_type(vk::ImageViewType::TYPE_2D)
        .format(vk::Format::R32_UINT)
        .subresource_range(color_range());
    // SAFETY: valid image.
    let view = unsafe { d.create_image_view(&view_info, None) }.map_err(Error::vk("vkCreateImageView"))?;
    Ok((image, memory, view))
}

fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}

/// A layout transition of the colour target, ordered after everything before.
///
/// # Safety
/// `cb` must be recording on `d`.
unsafe fn image_barrier(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    image: vk::Image,
    from: vk::ImageLayout,
    to: vk::ImageLayout,
) {
    let barrier = vk::ImageMemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE | vk::AccessFlags::TRANSFER_READ)
        .dst_access_mask(
            vk::AccessFlags::COLOR_ATTACHMENT_READ
                | vk::AccessFlags::COLOR_ATTACHMENT_WRITE
                | vk::AccessFlags::TRANSFER_READ,
        )
        .old_layout(from)
        .new_layout(to)
        .image(image)
        .subresource_range(color_range());
    // SAFETY: caller's contract.
    unsafe {
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT | vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT | vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &[barrier],
        )
    };
}
