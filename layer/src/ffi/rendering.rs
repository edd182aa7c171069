//! Hooks on devices with mesh nodes (`shaderMeshEnqueue`): the render pass
//! instance being recorded (dynamic rendering, or a render pass object),
//! and the viewports and scissors set, are shadowed, because a graph
//! dispatch with mesh nodes suspends the instance for its compute levels
//! and resumes it to draw (see `graph::record`). The application's
//! attachments are begun (dynamic rendering) or created (render pass
//! objects) with `VK_ATTACHMENT_STORE_OP_STORE` so that a suspension keeps
//! them; its own store operations apply when the last part of the instance
//! ends. A render pass of one subpass gets two copies that load every
//! attachment (`RenderPassInstance::resume`); one of several subpasses
//! cannot be suspended in its middle, and a dispatch with mesh nodes in it
//! is refused (`ffi::graph`).

use super::chain::find_in_chain;
use super::guard::{guard_command, guard_result};
use super::lookup::{device_of, recording, Recording, ValidCommandBuffer};
use super::objects::forget_then_forward;
use super::slice;
use crate::device::DeviceState;
use crate::state::command_buffer::{RenderPassInstance, RenderingAttachment, RenderingInstance};
use ash::vk;

/// The shadow of one attachment, and the store operation the layer records.
fn attachment(a: &vk::RenderingAttachmentInfo<'_>) -> Option<RenderingAttachment> {
    (a.image_view != vk::ImageView::null()).then_some(RenderingAttachment {
        image_view: a.image_view,
        image_layout: a.image_layout,
        resolve_mode: a.resolve_mode,
        resolve_image_view: a.resolve_image_view,
        resolve_image_layout: a.resolve_image_layout,
        store_op: a.store_op,
    })
}

/// A suspension writes what a `DONT_CARE` or `NONE` store would drop.
fn kept(mut a: vk::RenderingAttachmentInfo<'static>) -> vk::RenderingAttachmentInfo<'static> {
    if a.image_view != vk::ImageView::null() {
        a.store_op = vk::AttachmentStoreOp::STORE;
    }
    a
}

/// `vkCmdBeginRendering` and `vkCmdBeginRenderingKHR`.
pub(super) unsafe extern "system" fn cmd_begin_rendering(
    cb: vk::CommandBuffer,
    info: *const vk::RenderingInfo<'static>,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdBeginRendering", valid, || {
        recording(valid, |state| {
            let Some(fns) = state.dispatch.rendering else { return };
            // SAFETY: valid when non-null (valid usage: not null).
            let Some(app) = (unsafe { info.as_ref() }) else { return };
            // SAFETY: the application's attachment arrays.
            let colors = unsafe { slice(app.p_color_attachments, app.color_attachment_count) };
            // SAFETY: valid when non-null.
            let (depth, stencil) = unsafe { (app.p_depth_attachment.as_ref(), app.p_stencil_attachment.as_ref()) };
            let instance = RenderingInstance {
                flags: app.flags,
                render_area: app.render_area,
                layer_count: app.layer_count,
                view_mask: app.view_mask,
                color: colors.iter().map(attachment).collect(),
                depth: depth.and_then(attachment),
                stencil: stencil.and_then(attachment),
            };
            state.shadow(|s| s.rendering = Some(instance));
            let colors: Vec<_> = colors.iter().copied().map(kept).collect();
            let depth = depth.copied().map(kept);
            let stencil = stencil.copied().map(kept);
            let mut copy = *app;
            copy.p_color_attachments = colors.as_ptr();
            copy.p_depth_attachment = depth.as_ref().map_or(std::ptr::null(), |d| d as *const _);
            copy.p_stencil_attachment = stencil.as_ref().map_or(std::ptr::null(), |d| d as *const _);
            // SAFETY: forwarding; the copies live across the call.
            unsafe { (fns.begin)(cb, &copy) }
        });
    })
}

/// `vkCmdEndRendering` and `vkCmdEndRenderingKHR`.
pub(super) unsafe extern "system" fn cmd_end_rendering(cb: vk::CommandBuffer) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdEndRendering", valid, || {
        recording(valid, |state| {
            let Some(fns) = state.dispatch.rendering else { return };
            state.shadow(|s| s.rendering = None);
            // SAFETY: forwarding.
            unsafe { (fns.end)(cb) }
        });
    })
}

pub(super) unsafe extern "system" fn cmd_set_viewport(
    cb: vk::CommandBuffer,
    first: u32,
    count: u32,
    viewports: *const vk::Viewport,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdSetViewport", valid, || {
        recording(valid, |state| {
            // SAFETY: the application's array.
            let list = unsafe { slice(viewports, count) };
            state.shadow(|s| s.set_viewports(first, list));
            // SAFETY: forwarding.
            unsafe { (state.dispatch.fp.fp_v1_0().cmd_set_viewport)(cb, first, count, viewports) }
        });
    })
}

pub(super) unsafe extern "system" fn cmd_set_scissor(
    cb: vk::CommandBuffer,
    first: u32,
    count: u32,
    scissors: *const vk::Rect2D,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdSetScissor", valid, || {
        recording(valid, |state| {
            // SAFETY: the application's array.
            let list = unsafe { slice(scissors, count) };
            state.shadow(|s| s.set_scissors(first, list));
            // SAFETY: forwarding.
            unsafe { (state.dispatch.fp.fp_v1_0().cmd_set_scissor)(cb, first, count, scissors) }
        });
    })
}

/// What a render pass's attachments become: the application's pass stores
/// what a `DONT_CARE` or `NONE` store would drop (a suspension for mesh
/// nodes would lose it); a resume copy loads every attachment from the
/// layout the previous part left it in, and stores it (`last`: with the
/// application's store operations).
trait Attachment: Copy {
    fn kept(self) -> Self;
    fn resumed(self, last: bool, original: Self) -> Self;
}

macro_rules! attachment {
    ($t:ty) => {
        impl Attachment for $t {
            fn kept(mut self) -> Self {
                self.store_op = vk::AttachmentStoreOp::STORE;
                self.stencil_store_op = vk::AttachmentStoreOp::STORE;
                self
            }
            fn resumed(mut self, last: bool, original: Self) -> Self {
                self.load_op = vk::AttachmentLoadOp::LOAD;
                self.stencil_load_op = vk::AttachmentLoadOp::LOAD;
                self.initial_layout = self.final_layout;
                if last {
                    self.store_op = original.store_op;
                    self.stencil_store_op = original.stencil_store_op;
                }
                self
            }
        }
    };
}
attachment!(vk::AttachmentDescription);
attachment!(vk::AttachmentDescription2<'static>);

/// Creates the application's render pass (`create` with the attachments
/// given) and, for one of a single subpass, its two resume copies.
fn create_with_resume<A: Attachment>(
    state: &DeviceState,
    name: &str,
    attachments: &[A],
    subpasses: u32,
    create: impl Fn(&[A], *mut vk::RenderPass) -> vk::Result,
    out: *mut vk::RenderPass,
) -> vk::Result {
    let kept: Vec<A> = attachments.iter().map(|a| a.kept()).collect();
    let result = create(&kept, out);
    if result != vk::Result::SUCCESS || subpasses != 1 {
        return result;
    }
    let mut resume = [vk::RenderPass::null(); 2];
    for (last, slot) in [false, true].into_iter().zip(&mut resume) {
        let copies: Vec<A> = kept.iter().zip(attachments).map(|(k, a)| k.resumed(last, *a)).collect();
        if create(&copies, slot) != vk::Result::SUCCESS {
            tracing::warn!("{name}: the layer's resume copy failed; mesh nodes cannot be drawn in this render pass");
            let fp = state.dispatch.fp.fp_v1_0();
            for made in resume.into_iter().filter(|p| *p != vk::RenderPass::null()) {
                // SAFETY: the layer's copy made above, never used.
                unsafe { (fp.destroy_render_pass)(state.handle(), made, std::ptr::null()) };
            }
            return result;
        }
    }
    // SAFETY: created just now by the call above.
    let handle = unsafe { *out };
    state.resources.lock().render_passes.insert(handle, resume);
    result
}

pub(super) unsafe extern "system" fn create_render_pass(
    device: vk::Device,
    info: *const vk::RenderPassCreateInfo<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
    out: *mut vk::RenderPass,
) -> vk::Result {
    guard_result("vkCreateRenderPass", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: valid create info (valid usage: not null).
        let Some(app) = (unsafe { info.as_ref() }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: the application's attachment array.
        let attachments = unsafe { slice(app.p_attachments, app.attachment_count) };
        let fp = state.dispatch.fp.fp_v1_0();
        let create = |atts: &[vk::AttachmentDescription], to: *mut vk::RenderPass| {
            let mut copy = *app;
            copy.p_attachments = atts.as_ptr();
            // SAFETY: the application's create info with our attachment copies.
            unsafe { (fp.create_render_pass)(device, &copy, allocator, to) }
        };
        create_with_resume(&state, "vkCreateRenderPass", attachments, app.subpass_count, create, out)
    })
}

/// `vkCreateRenderPass2` and `vkCreateRenderPass2KHR`.
pub(super) unsafe extern "system" fn create_render_pass2(
    device: vk::Device,
    info: *const vk::RenderPassCreateInfo2<'static>,
    allocator: *const vk::AllocationCallbacks<'static>,
    out: *mut vk::RenderPass,
) -> vk::Result {
    guard_result("vkCreateRenderPass2", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: valid create info (valid usage: not null).
        let Some(app) = (unsafe { info.as_ref() }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: the application's attachment array.
        let attachments = unsafe { slice(app.p_attachments, app.attachment_count) };
        let fp = state.dispatch.fp.fp_v1_2();
        let create = |atts: &[vk::AttachmentDescription2<'static>], to: *mut vk::RenderPass| {
            let mut copy = *app;
            copy.p_attachments = atts.as_ptr();
            // SAFETY: the application's create info with our attachment copies.
            unsafe { (fp.create_render_pass2)(device, &copy, allocator, to) }
        };
        create_with_resume(&state, "vkCreateRenderPass2", attachments, app.subpass_count, create, out)
    })
}

pub(super) unsafe extern "system" fn destroy_render_pass(
    device: vk::Device,
    render_pass: vk::RenderPass,
    allocator: *const vk::AllocationCallbacks<'static>,
) {
    let forget = |state: &DeviceState| {
        if let Some(resume) = state.resources.lock().render_passes.remove(&render_pass) {
            for pass in resume {
                // SAFETY: the layer's copies, used by the same command buffers as the application's pass.
                unsafe { (state.dispatch.fp.fp_v1_0().destroy_render_pass)(device, pass, std::ptr::null()) };
            }
        }
    };
    // SAFETY: a valid device; forwarding the application's arguments.
    unsafe {
        forget_then_forward("vkDestroyRenderPass", device, forget, |state| {
            (state.dispatch.fp.fp_v1_0().destroy_render_pass)(device, render_pass, allocator)
        })
    }
}

/// Shadows a render pass instance being begun.
///
/// # Safety
/// `begin` must be a valid begin info.
unsafe fn shadow_render_pass(
    state: &mut Recording<'_>,
    begin: &vk::RenderPassBeginInfo<'static>,
    contents: vk::SubpassContents,
) {
    // SAFETY: valid chain.
    let views = unsafe { find_in_chain::<vk::RenderPassAttachmentBeginInfo>(begin.p_next) };
    // SAFETY: the views array of the imageless framebuffer's begin info.
    let attachments = views.map(|v| unsafe { slice(v.p_attachments, v.attachment_count) }.to_vec());
    let resume = state.resources.lock().render_passes.get(&begin.render_pass).copied();
    let instance = RenderPassInstance {
        framebuffer: begin.framebuffer,
        render_area: begin.render_area,
        attachments: attachments.unwrap_or_default(),
        contents,
        resume: resume.unwrap_or_default(),
    };
    state.shadow(|s| s.render_pass = Some(instance));
}

pub(super) unsafe extern "system" fn cmd_begin_render_pass(
    cb: vk::CommandBuffer,
    begin: *const vk::RenderPassBeginInfo<'static>,
    contents: vk::SubpassContents,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdBeginRenderPass", valid, || {
        recording(valid, |state| {
            // SAFETY: valid when non-null (valid usage: not null).
            if let Some(info) = unsafe { begin.as_ref() } {
                // SAFETY: a valid begin info.
                unsafe { shadow_render_pass(state, info, contents) };
            }
            // SAFETY: forwarding.
            unsafe { (state.dispatch.fp.fp_v1_0().cmd_begin_render_pass)(cb, begin, contents) }
        });
    })
}

/// `vkCmdBeginRenderPass2` and `vkCmdBeginRenderPass2KHR`.
pub(super) unsafe extern "system" fn cmd_begin_render_pass2(
    cb: vk::CommandBuffer,
    begin: *const vk::RenderPassBeginInfo<'static>,
    subpass: *const vk::SubpassBeginInfo<'static>,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdBeginRenderPass2", valid, || {
        recording(valid, |state| {
            // SAFETY: valid when non-null (valid usage: not null).
            if let (Some(info), Some(sub)) = unsafe { (begin.as_ref(), subpass.as_ref()) } {
                // SAFETY: a valid begin info.
                unsafe { shadow_render_pass(state, info, sub.contents) };
            }
            // SAFETY: forwarding.
            unsafe { (state.dispatch.fp.fp_v1_2().cmd_begin_render_pass2)(cb, begin, subpass) }
        });
    })
}

pub(super) unsafe extern "system" fn cmd_end_render_pass(cb: vk::CommandBuffer) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdEndRenderPass", valid, || {
        recording(valid, |state| {
            state.shadow(|s| s.render_pass = None);
            // SAFETY: forwarding.
            unsafe { (state.dispatch.fp.fp_v1_0().cmd_end_render_pass)(cb) }
        });
    })
}

/// `vkCmdEndRenderPass2` and `vkCmdEndRenderPass2KHR`.
pub(super) unsafe extern "system" fn cmd_end_render_pass2(
    cb: vk::CommandBuffer,
    end: *const vk::SubpassEndInfo<'static>,
) {
    // SAFETY: this command's own command buffer (the application synchronises it).
    let valid = unsafe { ValidCommandBuffer::new(cb) };
    guard_command("vkCmdEndRenderPass2", valid, || {
        recording(valid, |state| {
            state.shadow(|s| s.render_pass = None);
            // SAFETY: forwarding.
            unsafe { (state.dispatch.fp.fp_v1_2().cmd_end_render_pass2)(cb, end) }
        });
    })
}
