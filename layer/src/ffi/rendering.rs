//! Hooks on devices with mesh nodes (`shaderMeshEnqueue`): the dynamic
//! rendering instance being recorded, and the viewports and scissors set,
//! are shadowed, because a graph dispatch with mesh nodes suspends the
//! instance for its compute levels and resumes it to draw (see
//! `graph::record`). The application's attachments are begun with
//! `VK_ATTACHMENT_STORE_OP_STORE` so that a suspension keeps them; its own
//! store operation applies when the last part of the instance ends.

use super::guard::guard_command;
use super::lookup::device_of;
use super::slice;
use crate::state::command_buffer::{RenderingAttachment, RenderingInstance};
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
    guard_command("vkCmdBeginRendering", cb, || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return };
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
        state.with_command_buffer(cb, |s| s.rendering = Some(instance));
        let colors: Vec<_> = colors.iter().copied().map(kept).collect();
        let depth = depth.copied().map(kept);
        let stencil = stencil.copied().map(kept);
        let mut copy = *app;
        copy.p_color_attachments = colors.as_ptr();
        copy.p_depth_attachment = depth.as_ref().map_or(std::ptr::null(), |d| d as *const _);
        copy.p_stencil_attachment = stencil.as_ref().map_or(std::ptr::null(), |d| d as *const _);
        // SAFETY: forwarding; the copies live across the call.
        unsafe { (fns.begin)(cb, &copy) }
    })
}

/// `vkCmdEndRendering` and `vkCmdEndRenderingKHR`.
pub(super) unsafe extern "system" fn cmd_end_rendering(cb: vk::CommandBuffer) {
    guard_command("vkCmdEndRendering", cb, || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return };
        let Some(fns) = state.dispatch.rendering else { return };
        state.with_command_buffer(cb, |s| s.rendering = None);
        // SAFETY: forwarding.
        unsafe { (fns.end)(cb) }
    })
}

pub(super) unsafe extern "system" fn cmd_set_viewport(
    cb: vk::CommandBuffer,
    first: u32,
    count: u32,
    viewports: *const vk::Viewport,
) {
    guard_command("vkCmdSetViewport", cb, || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return };
        // SAFETY: the application's array.
        let list = unsafe { slice(viewports, count) };
        state.with_command_buffer(cb, |s| s.set_viewports(first, list));
        // SAFETY: forwarding.
        unsafe { (state.dispatch.fp.fp_v1_0().cmd_set_viewport)(cb, first, count, viewports) }
    })
}

pub(super) unsafe extern "system" fn cmd_set_scissor(
    cb: vk::CommandBuffer,
    first: u32,
    count: u32,
    scissors: *const vk::Rect2D,
) {
    guard_command("vkCmdSetScissor", cb, || {
        // SAFETY: valid command buffer.
        let Some(state) = (unsafe { device_of(cb) }) else { return };
        // SAFETY: the application's array.
        let list = unsafe { slice(scissors, count) };
        state.with_command_buffer(cb, |s| s.set_scissors(first, list));
        // SAFETY: forwarding.
        unsafe { (state.dispatch.fp.fp_v1_0().cmd_set_scissor)(cb, first, count, scissors) }
    })
}
