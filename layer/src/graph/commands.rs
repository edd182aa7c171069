//! Recording primitives for the runtime's own commands in the application's
//! command buffer: buffer updates in `vkCmdUpdateBuffer`-sized chunks and
//! copies out of scratch, global barriers, binds, push constants,
//! dispatches and mesh draws, debug-utils labels,
//! and re-binding what the application had bound (its descriptor sets,
//! push descriptors, descriptor-buffer offsets and push constants) from the
//! shadow state.

use super::gpu::Gpu;
use super::profile::{Pass, Recording};
use super::scratch::ScratchTarget;
use crate::dispatch::commands::DescriptorWrite;
use crate::dispatch::DeviceDispatch;
use crate::state::command_buffer::{
    BindPointState, OpenPass, PushedSet, RenderPassInstance, RenderingAttachment, RenderingInstance, Shadow,
};
use ash::vk;
use std::ffi::{CStr, CString};

/// `vkCmdUpdateBuffer` takes at most 65536 bytes a call.
const UPDATE_CHUNK: usize = 65536;

pub(super) struct Recorder<'a> {
    pub device: &'a Gpu,
    pub cb: vk::CommandBuffer,
    pub target: ScratchTarget,
    /// Timestamps of the `profile` setting, when it is on.
    pub profile: Option<&'a Recording>,
    /// The dispatch draws mesh nodes between its compute levels: its
    /// barriers also order the mesh draws and their attachments (see
    /// [`Self::compute_barrier`]). Not when they are drawn once, after the
    /// levels.
    pub draws: bool,
}

impl Recorder<'_> {
    /// Runs `f`; when profiling, the pass `pass` ends after what it recorded.
    pub(super) fn pass<R>(&self, pass: impl FnOnce() -> Pass, f: impl FnOnce() -> R) -> R {
        let result = f();
        if let Some(profile) = self.profile {
            profile.end_pass(self.vk(), self.cb, pass());
        }
        result
    }

    /// [`Self::compute_barrier`] as a profiled pass of `level`.
    pub(super) fn level_barrier(&self, level: Option<usize>) {
        self.pass(|| Pass::new("barrier", level), || self.compute_barrier());
    }

    /// The driver façade of the device.
    pub(super) fn vk(&self) -> &DeviceDispatch {
        &self.device.dispatch
    }

    /// Writes `bytes` (padded to 4) at `offset` from the scratch address.
    pub(super) fn update(&self, offset: u64, bytes: &[u8]) {
        let mut padded;
        let bytes = if bytes.len() % 4 == 0 {
            bytes
        } else {
            padded = bytes.to_vec();
            padded.resize(bytes.len().next_multiple_of(4), 0);
            &padded
        };
        for (i, chunk) in bytes.chunks(UPDATE_CHUNK).enumerate() {
            let at = self.target.offset + offset + (i * UPDATE_CHUNK) as u64;
            // The range lies inside the scratch buffer (checked by the caller).
            self.vk().cmd_update_buffer(self.cb, self.target.buffer, at, chunk);
        }
    }

    pub(super) fn fill_zero(&self, offset: u64, size: u64) {
        if size > 0 {
            self.vk().cmd_fill_buffer(self.cb, self.target.buffer, self.target.offset + offset, size, 0);
        }
    }

    pub(super) fn barrier(
        &self,
        src_stage: vk::PipelineStageFlags,
        src: vk::AccessFlags,
        dst_stage: vk::PipelineStageFlags,
        dst: vk::AccessFlags,
    ) {
        let barrier = vk::MemoryBarrier::default().src_access_mask(src).dst_access_mask(dst);
        self.vk().cmd_memory_barrier(self.cb, src_stage, dst_stage, &barrier);
    }

    /// Compute writes (kernels, meta passes) before compute and indirect
    /// reads. In a dispatch that draws mesh nodes it is also the only
    /// barrier around their draws, which sit between two of these: compute
    /// writes before the mesh draws' indirect and shader reads, those reads
    /// before the next level's compute writes (it reuses the ring half they
    /// read), and one part of the rendering instance's attachment writes
    /// before the next part's loads.
    pub(super) fn compute_barrier(&self) {
        self.barrier_for(self.draws);
    }

    /// The barrier after a dispatch's last level, as a profiled pass: only
    /// with mesh draws to follow (`draws`: a graph whose mesh nodes are
    /// drawn once, after the levels, or a render pass instance the levels
    /// run in), the level's [`Self::compute_barrier`] ordering them. What
    /// follows the dispatch is ordered after it by the application
    /// (revision 2, "Dispatch a graph": scratch is synchronized with the
    /// compute stage and shader writes), and a compute barrier here would
    /// cost every dispatch about 1.5 µs on the H200 and stall the
    /// application's independent work behind the graph. The finishers'
    /// status words reach the host through one barrier at the command
    /// buffer's end (`ffi::commands::end_command_buffer`).
    pub(super) fn last_level_barrier(&self, level: usize, draws: bool) {
        if self.draws || draws {
            self.pass(|| Pass::new("barrier", Some(level)), || self.barrier_for(true));
        }
    }

    /// The barrier after compute work, for mesh draws too when `draws`.
    fn barrier_for(&self, draws: bool) {
        if !draws {
            self.barrier(
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::AccessFlags::SHADER_WRITE,
                vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::DRAW_INDIRECT,
                vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::INDIRECT_COMMAND_READ,
            );
            return;
        }
        let attachments = vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT
            | vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS
            | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS;
        let shaders = vk::PipelineStageFlags::COMPUTE_SHADER
            | vk::PipelineStageFlags::MESH_SHADER_EXT
            | vk::PipelineStageFlags::FRAGMENT_SHADER;
        self.barrier(
            shaders | attachments,
            vk::AccessFlags::SHADER_WRITE
                | vk::AccessFlags::COLOR_ATTACHMENT_WRITE
                | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE,
            shaders | attachments | vk::PipelineStageFlags::DRAW_INDIRECT,
            vk::AccessFlags::SHADER_READ
                | vk::AccessFlags::SHADER_WRITE
                | vk::AccessFlags::INDIRECT_COMMAND_READ
                | vk::AccessFlags::COLOR_ATTACHMENT_READ
                | vk::AccessFlags::COLOR_ATTACHMENT_WRITE
                | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_READ
                | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE,
        );
    }

    /// Earlier users of the scratch (graph dispatches, their mesh draws)
    /// before our transfers.
    pub(super) fn before_transfer(&self) {
        let mesh = if self.device.mesh_enqueue {
            vk::PipelineStageFlags::MESH_SHADER_EXT
        } else {
            vk::PipelineStageFlags::empty()
        };
        self.barrier(
            vk::PipelineStageFlags::COMPUTE_SHADER
                | vk::PipelineStageFlags::DRAW_INDIRECT
                | vk::PipelineStageFlags::TRANSFER
                | mesh,
            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_WRITE,
        );
    }

    /// Our transfers before the kernels, meta passes and (when the dispatch
    /// draws) mesh nodes that read what they wrote.
    pub(super) fn after_transfer(&self) {
        let mesh = if self.draws {
            vk::PipelineStageFlags::MESH_SHADER_EXT | vk::PipelineStageFlags::FRAGMENT_SHADER
        } else {
            vk::PipelineStageFlags::empty()
        };
        self.barrier(
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_WRITE,
            vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::DRAW_INDIRECT | mesh,
            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::INDIRECT_COMMAND_READ,
        );
    }

    pub(super) fn bind(&self, pipeline: vk::Pipeline) {
        self.bind_at(vk::PipelineBindPoint::COMPUTE, pipeline);
    }

    pub(super) fn bind_at(&self, point: vk::PipelineBindPoint, pipeline: vk::Pipeline) {
        self.vk().cmd_bind_pipeline(self.cb, point, pipeline);
    }

    pub(super) fn push<T: Copy>(&self, layout: vk::PipelineLayout, offset: u32, value: &T) {
        self.push_to(layout, vk::ShaderStageFlags::COMPUTE, offset, value);
    }

    /// Pushes `value` at `offset` for `stages` (every stage of the range it
    /// falls in, as Vulkan asks).
    pub(super) fn push_to<T: Copy>(
        &self,
        layout: vk::PipelineLayout,
        stages: vk::ShaderStageFlags,
        offset: u32,
        value: &T,
    ) {
        self.vk().cmd_push_constants_of(self.cb, layout, stages, offset, value);
    }

    pub(super) fn dispatch_indirect(&self, offset: u64) {
        // The arguments lie inside the scratch buffer.
        self.vk().cmd_dispatch_indirect(self.cb, self.target.buffer, self.target.offset + offset);
    }

    /// One dispatch whose arguments lie at `offset` in `buffer` (a staging block).
    pub(super) fn dispatch_indirect_in(&self, buffer: vk::Buffer, offset: u64) {
        self.vk().cmd_dispatch_indirect(self.cb, buffer, offset);
    }

    /// One mesh-task draw whose arguments lie at `offset` in `buffer`.
    pub(super) fn draw_mesh_indirect_in(&self, buffer: vk::Buffer, offset: u64) {
        self.vk().cmd_draw_mesh_tasks_indirect(self.cb, buffer, offset, 1, 0);
    }

    /// One mesh-task draw whose arguments lie at `offset` from the scratch
    /// address (a `NodeDispatch`'s first words).
    pub(super) fn draw_mesh_indirect(&self, offset: u64) {
        // Inside a rendering instance; the arguments lie inside the scratch buffer.
        self.vk().cmd_draw_mesh_tasks_indirect(self.cb, self.target.buffer, self.target.offset + offset, 1, 0);
    }

    /// Begins a part of the application's render pass instance: `last` is
    /// the part the application goes on recording in (its flags or subpass
    /// contents, store operations and resolves); the others are the
    /// layer's own draws. Every attachment is loaded.
    pub(super) fn begin_part(&self, pass: OpenPass<'_>, last: bool) {
        match pass {
            OpenPass::Dynamic(instance) => self.begin_rendering(instance, last),
            OpenPass::Object(instance) => self.begin_render_pass(instance, last),
        }
    }

    /// Ends a part of the application's render pass instance.
    pub(super) fn end_part(&self, pass: OpenPass<'_>) {
        match pass {
            OpenPass::Dynamic(_) => self.end_rendering(),
            // Inside a render pass instance of one subpass.
            OpenPass::Object(_) => self.vk().cmd_end_render_pass(self.cb),
        }
    }

    fn begin_render_pass(&self, instance: &RenderPassInstance, last: bool) {
        let mut views = vk::RenderPassAttachmentBeginInfo::default().attachments(&instance.attachments);
        let mut info = vk::RenderPassBeginInfo::default()
            .render_pass(instance.resume[usize::from(last)])
            .framebuffer(instance.framebuffer)
            .render_area(instance.render_area);
        if !instance.attachments.is_empty() {
            info = info.push_next(&mut views);
        }
        let contents = if last { instance.contents } else { vk::SubpassContents::INLINE };
        // Outside a render pass; the resume pass is compatible with the
        // application's and loads (clears nothing).
        self.vk().cmd_begin_render_pass(self.cb, &info, contents);
    }

    fn begin_rendering(&self, instance: &RenderingInstance, last: bool) {
        if self.vk().rendering.is_none() {
            return;
        }
        let attachment = |a: &RenderingAttachment| {
            let mut info = vk::RenderingAttachmentInfo::default()
                .image_view(a.image_view)
                .image_layout(a.image_layout)
                .load_op(vk::AttachmentLoadOp::LOAD)
                .store_op(if last { a.store_op } else { vk::AttachmentStoreOp::STORE });
            if last {
                info = info
                    .resolve_mode(a.resolve_mode)
                    .resolve_image_view(a.resolve_image_view)
                    .resolve_image_layout(a.resolve_image_layout);
            }
            info
        };
        let unused = vk::RenderingAttachmentInfo::default();
        let colors: Vec<vk::RenderingAttachmentInfo<'_>> =
            instance.color.iter().map(|c| c.as_ref().map_or(unused, attachment)).collect();
        let depth = instance.depth.as_ref().map(attachment);
        let stencil = instance.stencil.as_ref().map(attachment);
        // A fresh instance: it resumes nothing (the part before it ended).
        let flags = if last { instance.flags & !vk::RenderingFlags::RESUMING } else { vk::RenderingFlags::empty() };
        let mut info = vk::RenderingInfo::default()
            .flags(flags)
            .render_area(instance.render_area)
            .layer_count(instance.layer_count)
            .view_mask(instance.view_mask)
            .color_attachments(&colors);
        if let Some(d) = &depth {
            info = info.depth_attachment(d);
        }
        if let Some(s) = &stencil {
            info = info.stencil_attachment(s);
        }
        self.vk().cmd_begin_rendering(self.cb, &info);
    }

    fn end_rendering(&self) {
        self.vk().cmd_end_rendering(self.cb);
    }

    /// The application's part of its rendering instance ended (suspended
    /// for a graph dispatch that draws): its attachment writes before the
    /// layer's first part's loads and writes, and its shaders' work before
    /// the graph's transfers and compute.
    pub(super) fn after_rendering(&self) {
        let attachments = vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT
            | vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS
            | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS;
        let shaders = vk::PipelineStageFlags::MESH_SHADER_EXT | vk::PipelineStageFlags::FRAGMENT_SHADER;
        self.barrier(
            attachments | shaders | vk::PipelineStageFlags::DRAW_INDIRECT,
            vk::AccessFlags::COLOR_ATTACHMENT_WRITE
                | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE
                | vk::AccessFlags::SHADER_WRITE,
            attachments | vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::COLOR_ATTACHMENT_READ
                | vk::AccessFlags::COLOR_ATTACHMENT_WRITE
                | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_READ
                | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE
                | vk::AccessFlags::SHADER_READ
                | vk::AccessFlags::SHADER_WRITE
                | vk::AccessFlags::TRANSFER_WRITE,
        );
    }

    pub(super) fn dispatch(&self, x: u32) {
        self.dispatch_xyz(x, 1, 1);
    }

    pub(super) fn dispatch_xyz(&self, x: u32, y: u32, z: u32) {
        self.vk().cmd_dispatch(self.cb, x, y, z);
    }

    /// One mesh-task draw of `groups` workgroups.
    pub(super) fn draw_mesh(&self, [x, y, z]: [u32; 3]) {
        // Inside a rendering instance.
        self.vk().cmd_draw_mesh_tasks(self.cb, x, y, z);
    }

    /// Copies `regions` from the scratch buffer to `dst`.
    pub(super) fn copy_to(&self, dst: vk::Buffer, regions: &[vk::BufferCopy]) {
        self.copy_between(self.target.buffer, dst, regions);
    }

    /// Copies `regions` from `src` to `dst`.
    pub(super) fn copy_between(&self, src: vk::Buffer, dst: vk::Buffer, regions: &[vk::BufferCopy]) {
        if !regions.is_empty() {
            // Every range lies inside its buffer (the caller's).
            self.vk().cmd_copy_buffer(self.cb, src, dst, regions);
        }
    }

    /// Runs `f` inside a debug-utils label named `name()`, made only where
    /// labels are recorded.
    pub(super) fn label<R>(&self, name: impl FnOnce() -> String, f: impl FnOnce() -> R) -> R {
        if !self.labels_on() {
            return f();
        }
        let name = CString::new(name()).unwrap_or_default();
        self.label_named(&name, f)
    }

    /// [`Self::label`] with a name made beforehand (`pipeline::GraphLabels`:
    /// the labels every dispatch records).
    pub(super) fn label_named<R>(&self, name: &CStr, f: impl FnOnce() -> R) -> R {
        if !self.labels_on() {
            return f();
        }
        let label = vk::DebugUtilsLabelEXT::default().label_name(name);
        self.vk().cmd_begin_label(self.cb, &label);
        let result = f();
        self.vk().cmd_end_label(self.cb);
        result
    }

    fn labels_on(&self) -> bool {
        self.vk().debug_utils.is_some() && !self.device.instance.settings.without_labels
    }

    /// Binds the sets and push descriptors recorded for a bind point at
    /// the compute bind point, with `layout` (or each set's own layout).
    pub(super) fn bind_sets(&self, state: &BindPointState, layout: Option<vk::PipelineLayout>) {
        self.bind_sets_at(vk::PipelineBindPoint::COMPUTE, state, layout);
    }

    /// [`Self::bind_sets`] at bind point `point`.
    pub(super) fn bind_sets_at(
        &self,
        point: vk::PipelineBindPoint,
        state: &BindPointState,
        layout: Option<vk::PipelineLayout>,
    ) {
        for (index, bound) in state.sets.iter().enumerate() {
            if let Some(bound) = bound {
                let layout = layout.unwrap_or(bound.layout);
                // The application's own set handles.
                self.vk().cmd_bind_descriptor_sets(
                    self.cb,
                    point,
                    layout,
                    index as u32,
                    std::slice::from_ref(&bound.set),
                    &bound.dynamic_offsets,
                );
            }
        }
        for (index, pushed) in state.pushed_sets.iter().enumerate() {
            if let Some(pushed) = pushed {
                self.push_set(point, layout.unwrap_or(pushed.layout), index as u32, pushed);
            }
        }
        self.bind_buffer_sets(point, state, layout);
    }

    /// Sets the descriptor-buffer offsets and embedded samplers recorded for
    /// a bind point at bind point `point` (see `ffi::descriptor_buffer`).
    fn bind_buffer_sets(
        &self,
        point: vk::PipelineBindPoint,
        state: &BindPointState,
        layout: Option<vk::PipelineLayout>,
    ) {
        if self.vk().descriptor_buffer.is_none() {
            return;
        }
        for (index, bound) in state.buffer_offsets.iter().enumerate() {
            if let Some(b) = bound {
                // The application's own offsets.
                self.vk().cmd_set_descriptor_buffer_offset(
                    self.cb,
                    point,
                    layout.unwrap_or(b.layout),
                    index as u32,
                    b.buffer_index,
                    b.offset,
                );
            }
        }
        for (index, samplers) in state.embedded_samplers.iter().enumerate() {
            if let Some(set_layout) = samplers {
                self.vk().cmd_bind_descriptor_buffer_embedded_samplers(
                    self.cb,
                    point,
                    layout.unwrap_or(*set_layout),
                    index as u32,
                );
            }
        }
    }

    pub(super) fn push_set(
        &self,
        point: vk::PipelineBindPoint,
        layout: vk::PipelineLayout,
        set: u32,
        pushed: &PushedSet,
    ) {
        if self.vk().push_descriptor.is_none() {
            return;
        }
        let infos: Vec<(Vec<vk::DescriptorImageInfo>, Vec<vk::DescriptorBufferInfo>)> = pushed
            .writes
            .iter()
            .map(|w| {
                (
                    w.images
                        .iter()
                        .map(|&(sampler, image_view, image_layout)| vk::DescriptorImageInfo {
                            sampler,
                            image_view,
                            image_layout,
                        })
                        .collect(),
                    w.buffers
                        .iter()
                        .map(|&(buffer, offset, range)| vk::DescriptorBufferInfo { buffer, offset, range })
                        .collect(),
                )
            })
            .collect();
        let writes: Vec<DescriptorWrite<'_>> = pushed
            .writes
            .iter()
            .zip(&infos)
            .map(|(w, (images, buffers))| DescriptorWrite {
                binding: w.binding,
                array_element: w.array_element,
                descriptor_type: w.descriptor_type,
                images,
                buffers,
                texel_views: &w.texel_views,
            })
            .collect();
        self.vk().cmd_push_descriptor_set(self.cb, point, layout, set, &writes);
    }

    /// Pushes the application's push-constant bytes again with `layout`
    /// (compute stage only when `compute_only`).
    pub(super) fn push_app_constants(&self, cb_state: &Shadow, layout: vk::PipelineLayout, compute_only: bool) {
        let pc = &cb_state.push_constants;
        for &(stages, offset, size) in &pc.ranges {
            let stages = if compute_only { stages & vk::ShaderStageFlags::COMPUTE } else { stages };
            if stages.is_empty() || size == 0 {
                continue;
            }
            let bytes = &pc.bytes[offset as usize..(offset + size) as usize];
            self.vk().cmd_push_constants(self.cb, layout, stages, offset, bytes);
        }
    }
}

/// Binds the application's graphics state again after a graph's mesh
/// nodes drew: viewports and scissors first (a mesh node pipeline with
/// them static disturbed them; the application's pipeline, bound after,
/// sets its own static ones again), then the pipeline and descriptor sets.
/// Push constants are shared with compute ([`restore_compute_state`]).
pub(super) fn restore_graphics_state(r: &Recorder<'_>, cb_state: &Shadow) {
    let viewports = cb_state.viewports();
    if !viewports.is_empty() {
        r.vk().cmd_set_viewports(r.cb, &viewports);
    }
    if !cb_state.scissors.is_empty() {
        r.vk().cmd_set_scissors(r.cb, &cb_state.scissors);
    }
    let graphics = &cb_state.graphics;
    if graphics.pipeline != vk::Pipeline::null() {
        r.bind_at(vk::PipelineBindPoint::GRAPHICS, graphics.pipeline);
    }
    r.bind_sets_at(vk::PipelineBindPoint::GRAPHICS, graphics, None);
}

/// Binds the application's compute state again after the graph's dispatches.
pub(super) fn restore_compute_state(r: &Recorder<'_>, cb_state: &Shadow) {
    let compute = &cb_state.compute;
    if compute.pipeline != vk::Pipeline::null() {
        r.bind(compute.pipeline);
    }
    r.bind_sets(compute, None);
    if cb_state.push_constants.layout != vk::PipelineLayout::null() {
        r.push_app_constants(cb_state, cb_state.push_constants.layout, false);
    }
}
