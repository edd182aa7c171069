//! Drawing plumbing for mesh nodes: whether the layer offers
//! `shaderMeshEnqueue`, the device features a mesh-node application turns
//! on, an `R32_UINT` colour target with its view, mesh (+ fragment)
//! pipelines that are mesh node libraries or ordinary ones (for dynamic
//! rendering or a render pass object), the render pass instances they draw
//! in, layout transitions and the read-back copy.

use std::ffi::CStr;

use ash::vk;
use vk_amdx::{PhysicalDeviceShaderEnqueueFeatures, PIPELINE_CREATE_2_EXECUTION_GRAPH, PIPELINE_CREATE_2_LIBRARY};

use crate::{vk_err, Error, Result};

/// The colour targets' format: one 32-bit word a pixel, written as is by a
/// fragment shader, so pictures compare exactly.
pub const FORMAT: vk::Format = vk::Format::R32_UINT;

/// Whether `shaderMeshEnqueue` is offered on `pd` (through the loader, so
/// through the layer).
pub fn mesh_enqueue_offered(instance: &ash::Instance, pd: vk::PhysicalDevice) -> bool {
    let mut amdx = PhysicalDeviceShaderEnqueueFeatures::default();
    let mut features2 = vk::PhysicalDeviceFeatures2 {
        p_next: (&mut amdx as *mut PhysicalDeviceShaderEnqueueFeatures).cast(),
        ..Default::default()
    };
    // SAFETY: a valid chain of output structures.
    unsafe { instance.get_physical_device_features2(pd, &mut features2) };
    amdx.shader_mesh_enqueue == vk::TRUE
}

/// A queue family with graphics and compute.
pub fn graphics_family(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Result<u32> {
    // SAFETY: valid physical device.
    let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
    families
        .iter()
        .position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE))
        .map(|i| i as u32)
        .ok_or_else(|| Error::Missing("no graphics + compute queue family".into()))
}

/// Calls `create` with a device create info for one queue of `family`
/// with `VK_AMDX_shader_enqueue` (`shaderEnqueue`, `shaderMeshEnqueue`),
/// buffer device addresses, dynamic rendering, and `VK_KHR_maintenance5`
/// (mesh node pipelines carry their 64-bit flags in its structure).
pub fn with_mesh_device_info<R>(family: u32, create: impl FnOnce(&vk::DeviceCreateInfo<'_>) -> R) -> R {
    with_mesh_device_info_and(family, false, create)
}

/// [`with_mesh_device_info`], with `VK_KHR_maintenance6` and its feature
/// too where `maintenance6` (its stage-addressed binding commands).
pub fn with_mesh_device_info_and<R>(
    family: u32,
    maintenance6: bool,
    create: impl FnOnce(&vk::DeviceCreateInfo<'_>) -> R,
) -> R {
    let priorities = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
    let mut names = vec![vk_amdx::EXTENSION_NAME.as_ptr(), ash::khr::maintenance5::NAME.as_ptr()];
    if maintenance6 {
        names.push(ash::khr::maintenance6::NAME.as_ptr());
    }
    let mut amdx = PhysicalDeviceShaderEnqueueFeatures {
        shader_enqueue: vk::TRUE,
        shader_mesh_enqueue: vk::TRUE,
        ..Default::default()
    };
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default().buffer_device_address(true);
    let mut v13 = vk::PhysicalDeviceVulkan13Features::default().dynamic_rendering(true);
    let mut m5 = vk::PhysicalDeviceMaintenance5FeaturesKHR::default().maintenance5(true);
    let mut m6 = vk::PhysicalDeviceMaintenance6FeaturesKHR::default().maintenance6(true);
    let mut info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&names)
        .push_next(&mut amdx)
        .push_next(&mut v12)
        .push_next(&mut v13)
        .push_next(&mut m5);
    if maintenance6 {
        info = info.push_next(&mut m6);
    }
    create(&info)
}

/// A square colour target of [`FORMAT`], its memory and view. Plain
/// handles: the creator destroys it with [`ColorTarget::destroy`].
#[derive(Debug, Clone, Copy)]
pub struct ColorTarget {
    pub image: vk::Image,
    pub memory: vk::DeviceMemory,
    pub view: vk::ImageView,
    pub size: u32,
}

impl ColorTarget {
    pub fn new(d: &ash::Device, props: &vk::PhysicalDeviceMemoryProperties, size: u32) -> Result<Self> {
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(FORMAT)
            .extent(vk::Extent3D { width: size, height: size, depth: 1 })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .usage(vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC);
        // SAFETY: valid device and create info.
        let image = unsafe { d.create_image(&info, None) }.map_err(vk_err("vkCreateImage"))?;
        let mut out = ColorTarget { image, memory: vk::DeviceMemory::null(), view: vk::ImageView::null(), size };
        let made = out.bind(d, props);
        if made.is_err() {
            // SAFETY: nothing uses the new objects; null handles are ignored.
            unsafe { out.destroy(d) };
        }
        made.map(|()| out)
    }

    fn bind(&mut self, d: &ash::Device, props: &vk::PhysicalDeviceMemoryProperties) -> Result<()> {
        // SAFETY: valid image.
        let req = unsafe { d.get_image_memory_requirements(self.image) };
        let kind = crate::buffer::memory_type(props, req.memory_type_bits, vk::MemoryPropertyFlags::DEVICE_LOCAL)
            .or_else(|| crate::buffer::memory_type(props, req.memory_type_bits, vk::MemoryPropertyFlags::empty()))
            .ok_or_else(|| Error::Missing("no memory type for the colour target".into()))?;
        let alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(kind);
        // SAFETY: valid device and allocation info.
        self.memory = unsafe { d.allocate_memory(&alloc, None) }.map_err(vk_err("vkAllocateMemory"))?;
        // SAFETY: fresh image and memory of the required size.
        unsafe { d.bind_image_memory(self.image, self.memory, 0) }.map_err(vk_err("vkBindImageMemory"))?;
        let view_info = vk::ImageViewCreateInfo::default()
            .image(self.image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(FORMAT)
            .subresource_range(COLOR_RANGE);
        // SAFETY: valid image with bound memory.
        self.view = unsafe { d.create_image_view(&view_info, None) }.map_err(vk_err("vkCreateImageView"))?;
        Ok(())
    }

    /// # Safety
    /// The target must be idle.
    pub unsafe fn destroy(&self, d: &ash::Device) {
        // SAFETY: caller's contract; null handles are ignored.
        unsafe {
            d.destroy_image_view(self.view, None);
            d.destroy_image(self.image, None);
            d.free_memory(self.memory, None);
        }
    }

    /// The whole target.
    pub fn area(&self) -> vk::Rect2D {
        vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: self.size, height: self.size } }
    }

    /// Records a transition from `from` to `to`, after every colour and
    /// transfer access before it.
    pub fn transition(&self, d: &ash::Device, cb: vk::CommandBuffer, from: vk::ImageLayout, to: vk::ImageLayout) {
        let stages = vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT | vk::PipelineStageFlags::TRANSFER;
        let barrier = vk::ImageMemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE | vk::AccessFlags::TRANSFER_READ)
            .dst_access_mask(
                vk::AccessFlags::COLOR_ATTACHMENT_READ
                    | vk::AccessFlags::COLOR_ATTACHMENT_WRITE
                    | vk::AccessFlags::TRANSFER_READ,
            )
            .old_layout(from)
            .new_layout(to)
            .image(self.image)
            .subresource_range(COLOR_RANGE);
        // SAFETY: `cb` is recording outside a render pass (the caller's recording).
        unsafe { d.cmd_pipeline_barrier(cb, stages, stages, vk::DependencyFlags::empty(), &[], &[], &[barrier]) };
    }

    /// Records the copy of the whole target (in `TRANSFER_SRC_OPTIMAL`) to `buffer`.
    pub fn copy_to(&self, d: &ash::Device, cb: vk::CommandBuffer, buffer: vk::Buffer) {
        let region = vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_extent(vk::Extent3D { width: self.size, height: self.size, depth: 1 });
        // SAFETY: `cb` is recording; the buffer holds size * size words (the caller's contract).
        unsafe { d.cmd_copy_image_to_buffer(cb, self.image, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, buffer, &[region]) };
    }
}

const COLOR_RANGE: vk::ImageSubresourceRange = vk::ImageSubresourceRange {
    aspect_mask: vk::ImageAspectFlags::COLOR,
    base_mip_level: 0,
    level_count: 1,
    base_array_layer: 0,
    layer_count: 1,
};

/// A mesh + fragment pipeline drawing to a [`FORMAT`] target, with dynamic
/// viewport and scissor and no culling; a mesh node library named `node`
/// (name, index) when given, else an ordinary pipeline; for subpass 0 of
/// `render_pass` when given, else for dynamic rendering.
pub fn mesh_pipeline(
    d: &ash::Device,
    layout: vk::PipelineLayout,
    (mesh, fragment): (vk::ShaderModule, vk::ShaderModule),
    node: Option<(&CStr, u32)>,
    render_pass: Option<vk::RenderPass>,
) -> Result<vk::Pipeline> {
    let mut node_info =
        node.map(|(name, index)| vk::PipelineShaderStageNodeCreateInfoAMDX::default().name(name).index(index));
    let mut mesh_stage =
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::MESH_EXT).module(mesh).name(c"main");
    if let Some(n) = node_info.as_mut() {
        mesh_stage = mesh_stage.push_next(n);
    }
    let stages = [
        mesh_stage,
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::FRAGMENT)
            .module(fragment)
            .name(c"main"),
    ];
    let formats = [FORMAT];
    let mut rendering = vk::PipelineRenderingCreateInfo::default().color_attachment_formats(&formats);
    let library = PIPELINE_CREATE_2_EXECUTION_GRAPH | PIPELINE_CREATE_2_LIBRARY;
    let mut flags2 =
        vk::PipelineCreateFlags2CreateInfoKHR::default().flags(vk::PipelineCreateFlags2KHR::from_raw(library));
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
        .layout(layout);
    info = match render_pass {
        Some(pass) => info.render_pass(pass).subpass(0),
        None => info.push_next(&mut rendering),
    };
    if node.is_some() {
        info = info.push_next(&mut flags2);
    }
    // SAFETY: valid device and create info of locals.
    let pipelines = unsafe { d.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) }
        .map_err(|(_, e)| Error::Vk { call: "vkCreateGraphicsPipelines", result: e })?;
    pipelines.first().copied().ok_or_else(|| Error::Missing("vkCreateGraphicsPipelines returned nothing".into()))
}

/// Records `vkCmdBeginRendering` on `target` (in
/// `COLOR_ATTACHMENT_OPTIMAL`), cleared to `clear`, stored at the end.
pub fn begin_rendering(d: &ash::Device, cb: vk::CommandBuffer, target: &ColorTarget, clear: u32) {
    let color = vk::RenderingAttachmentInfo::default()
        .image_view(target.view)
        .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .clear_value(vk::ClearValue { color: vk::ClearColorValue { uint32: [clear, 0, 0, 0] } });
    let colors = [color];
    let info = vk::RenderingInfo::default().render_area(target.area()).layer_count(1).color_attachments(&colors);
    // SAFETY: `cb` is recording outside a render pass; the arrays live across the call.
    unsafe { d.cmd_begin_rendering(cb, &info) };
}

/// A render pass of `subpasses` subpasses (each drawing the colour
/// attachment, in order) to a [`FORMAT`] target, cleared at its start and
/// left in `final_layout`, with a framebuffer on `target`. Plain handles:
/// the creator destroys them.
pub fn render_pass(
    d: &ash::Device,
    target: &ColorTarget,
    final_layout: vk::ImageLayout,
    subpasses: u32,
) -> Result<(vk::RenderPass, vk::Framebuffer)> {
    let attachments = [vk::AttachmentDescription::default()
        .format(FORMAT)
        .samples(vk::SampleCountFlags::TYPE_1)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
        .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
        .initial_layout(vk::ImageLayout::UNDEFINED)
        .final_layout(final_layout)];
    let color = [vk::AttachmentReference { attachment: 0, layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL }];
    let subpass = vk::SubpassDescription::default()
        .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
        .color_attachments(&color);
    let subpasses = vec![subpass; subpasses.max(1) as usize];
    let dependencies: Vec<vk::SubpassDependency> = (1..subpasses.len() as u32)
        .map(|k| vk::SubpassDependency {
            src_subpass: k - 1,
            dst_subpass: k,
            src_stage_mask: vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
            dst_stage_mask: vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
            src_access_mask: vk::AccessFlags::COLOR_ATTACHMENT_WRITE,
            dst_access_mask: vk::AccessFlags::COLOR_ATTACHMENT_WRITE,
            dependency_flags: vk::DependencyFlags::BY_REGION,
        })
        .collect();
    let info =
        vk::RenderPassCreateInfo::default().attachments(&attachments).subpasses(&subpasses).dependencies(&dependencies);
    // SAFETY: valid device and create info of locals.
    let pass = unsafe { d.create_render_pass(&info, None) }.map_err(vk_err("vkCreateRenderPass"))?;
    let views = [target.view];
    let fb_info = vk::FramebufferCreateInfo::default()
        .render_pass(pass)
        .attachments(&views)
        .width(target.size)
        .height(target.size)
        .layers(1);
    // SAFETY: valid device and create info of locals.
    match unsafe { d.create_framebuffer(&fb_info, None) } {
        Ok(fb) => Ok((pass, fb)),
        Err(e) => {
            // SAFETY: unused.
            unsafe { d.destroy_render_pass(pass, None) };
            Err(vk_err("vkCreateFramebuffer")(e))
        }
    }
}

/// Records `vkCmdBeginRenderPass` of [`render_pass`]'s pass and
/// framebuffer on `target`, cleared to `clear`.
pub fn begin_render_pass(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    (pass, framebuffer): (vk::RenderPass, vk::Framebuffer),
    target: &ColorTarget,
    clear: u32,
) {
    let clears = [vk::ClearValue { color: vk::ClearColorValue { uint32: [clear, 0, 0, 0] } }];
    let info = vk::RenderPassBeginInfo::default()
        .render_pass(pass)
        .framebuffer(framebuffer)
        .render_area(target.area())
        .clear_values(&clears);
    // SAFETY: `cb` is recording outside a render pass; the arrays live across the call.
    unsafe { d.cmd_begin_render_pass(cb, &info, vk::SubpassContents::INLINE) };
}

/// Records the viewport (`size` pixels square at `offset`) and the scissor.
pub fn set_view(d: &ash::Device, cb: vk::CommandBuffer, offset: (f32, f32), size: u32, scissor: vk::Rect2D) {
    let viewport = vk::Viewport {
        x: offset.0,
        y: offset.1,
        width: size as f32,
        height: size as f32,
        min_depth: 0.0,
        max_depth: 1.0,
    };
    // SAFETY: `cb` is recording.
    unsafe {
        d.cmd_set_viewport(cb, 0, &[viewport]);
        d.cmd_set_scissor(cb, 0, &[scissor]);
    }
}
