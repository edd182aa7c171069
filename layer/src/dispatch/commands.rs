//! The façade's recording commands: every `vkCmd*` the runtime records into
//! the application's command buffers, as a safe method of
//! [`DeviceDispatch`] taking handles and Rust slices.
//!
//! Each method relies on the façade's invariant (see [`super`]): `cb` is a
//! command buffer of this device that the application is recording (the
//! layer records only from inside the application's own `vkCmd*` calls),
//! and every handle is a live object of this device. What a command needs
//! beyond that (inside or outside a render pass instance, a range inside
//! its buffer) is the recording code's part, stated at each method. A
//! method of an extension's table does nothing when the table is absent
//! (the extension is not enabled, so the runtime never needs it).

use super::DeviceDispatch;
use ash::vk;

/// One `VkWriteDescriptorSet` of a push descriptor set, as slices: the
/// façade builds the structure (null arrays where a slice is empty) so that
/// its pointers live across the call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DescriptorWrite<'a> {
    pub binding: u32,
    pub array_element: u32,
    pub descriptor_type: vk::DescriptorType,
    pub images: &'a [vk::DescriptorImageInfo],
    pub buffers: &'a [vk::DescriptorBufferInfo],
    pub texel_views: &'a [vk::BufferView],
}

impl DeviceDispatch {
    fn v1_0(&self) -> &ash::DeviceFnV1_0 {
        self.fp.fp_v1_0()
    }

    /// `vkCmdUpdateBuffer` of `data` (at most 65536 bytes, a multiple of 4)
    /// at `offset` of `buffer` (the range inside it: the caller's).
    pub(crate) fn cmd_update_buffer(&self, cb: vk::CommandBuffer, buffer: vk::Buffer, offset: u64, data: &[u8]) {
        // SAFETY: the façade's invariant; `data` lives across the call.
        unsafe { (self.v1_0().cmd_update_buffer)(cb, buffer, offset, data.len() as u64, data.as_ptr().cast()) };
    }

    /// `vkCmdFillBuffer` of `size` bytes at `offset` of `buffer` with `data`.
    pub(crate) fn cmd_fill_buffer(&self, cb: vk::CommandBuffer, buffer: vk::Buffer, offset: u64, size: u64, data: u32) {
        // SAFETY: the façade's invariant.
        unsafe { (self.v1_0().cmd_fill_buffer)(cb, buffer, offset, size, data) };
    }

    /// `vkCmdCopyBuffer` of `regions` (non-empty; each inside its buffer).
    pub(crate) fn cmd_copy_buffer(
        &self,
        cb: vk::CommandBuffer,
        src: vk::Buffer,
        dst: vk::Buffer,
        regions: &[vk::BufferCopy],
    ) {
        // SAFETY: the façade's invariant; `regions` lives across the call.
        unsafe { (self.v1_0().cmd_copy_buffer)(cb, src, dst, regions.len() as u32, regions.as_ptr()) };
    }

    /// `vkCmdPipelineBarrier` with one global memory barrier and no
    /// dependency flags.
    pub(crate) fn cmd_memory_barrier(
        &self,
        cb: vk::CommandBuffer,
        src_stage: vk::PipelineStageFlags,
        dst_stage: vk::PipelineStageFlags,
        barrier: &vk::MemoryBarrier<'_>,
    ) {
        // SAFETY: the façade's invariant; `barrier` lives across the call
        // and the other arrays are empty.
        unsafe {
            (self.v1_0().cmd_pipeline_barrier)(
                cb,
                src_stage,
                dst_stage,
                vk::DependencyFlags::empty(),
                1,
                barrier,
                0,
                std::ptr::null(),
                0,
                std::ptr::null(),
            )
        };
    }

    /// `vkCmdBindPipeline`.
    pub(crate) fn cmd_bind_pipeline(
        &self,
        cb: vk::CommandBuffer,
        point: vk::PipelineBindPoint,
        pipeline: vk::Pipeline,
    ) {
        // SAFETY: the façade's invariant.
        unsafe { (self.v1_0().cmd_bind_pipeline)(cb, point, pipeline) };
    }

    /// `vkCmdPushConstants` of `bytes` at `offset` for `stages`.
    pub(crate) fn cmd_push_constants(
        &self,
        cb: vk::CommandBuffer,
        layout: vk::PipelineLayout,
        stages: vk::ShaderStageFlags,
        offset: u32,
        bytes: &[u8],
    ) {
        // SAFETY: the façade's invariant; `bytes` lives across the call.
        unsafe {
            (self.v1_0().cmd_push_constants)(cb, layout, stages, offset, bytes.len() as u32, bytes.as_ptr().cast())
        };
    }

    /// `vkCmdPushConstants` of the `size_of::<T>()` bytes of `value` (a
    /// `#[repr(C)]` push block) at `offset` for `stages`.
    pub(crate) fn cmd_push_constants_of<T: Copy>(
        &self,
        cb: vk::CommandBuffer,
        layout: vk::PipelineLayout,
        stages: vk::ShaderStageFlags,
        offset: u32,
        value: &T,
    ) {
        // SAFETY: the façade's invariant; `value` is plain data of
        // `size_of::<T>()` bytes that lives across the call (the driver
        // copies them).
        unsafe {
            (self.v1_0().cmd_push_constants)(
                cb,
                layout,
                stages,
                offset,
                std::mem::size_of::<T>() as u32,
                (value as *const T).cast(),
            )
        };
    }

    /// `vkCmdBindDescriptorSets` of `sets` from `first_set`.
    pub(crate) fn cmd_bind_descriptor_sets(
        &self,
        cb: vk::CommandBuffer,
        point: vk::PipelineBindPoint,
        layout: vk::PipelineLayout,
        first_set: u32,
        sets: &[vk::DescriptorSet],
        dynamic_offsets: &[u32],
    ) {
        // SAFETY: the façade's invariant; both arrays live across the call.
        unsafe {
            (self.v1_0().cmd_bind_descriptor_sets)(
                cb,
                point,
                layout,
                first_set,
                sets.len() as u32,
                sets.as_ptr(),
                dynamic_offsets.len() as u32,
                dynamic_offsets.as_ptr(),
            )
        };
    }

    /// `vkCmdPushDescriptorSetKHR` of `writes` (`VK_KHR_push_descriptor`).
    pub(crate) fn cmd_push_descriptor_set(
        &self,
        cb: vk::CommandBuffer,
        point: vk::PipelineBindPoint,
        layout: vk::PipelineLayout,
        set: u32,
        writes: &[DescriptorWrite<'_>],
    ) {
        let Some(f) = &self.push_descriptor else { return };
        let writes: Vec<vk::WriteDescriptorSet> = writes
            .iter()
            .map(|w| {
                let count = w.images.len().max(w.buffers.len()).max(w.texel_views.len()) as u32;
                let mut write = vk::WriteDescriptorSet::default()
                    .dst_binding(w.binding)
                    .dst_array_element(w.array_element)
                    .descriptor_type(w.descriptor_type);
                write.descriptor_count = count;
                write.p_image_info = or_null(w.images);
                write.p_buffer_info = or_null(w.buffers);
                write.p_texel_buffer_view = or_null(w.texel_views);
                write
            })
            .collect();
        // SAFETY: the façade's invariant; every array the writes point to
        // is borrowed across the call.
        unsafe { (f.cmd_push_descriptor_set_khr)(cb, point, layout, set, writes.len() as u32, writes.as_ptr()) };
    }

    /// `vkCmdSetDescriptorBufferOffsetsEXT` of one set
    /// (`VK_EXT_descriptor_buffer`).
    pub(crate) fn cmd_set_descriptor_buffer_offset(
        &self,
        cb: vk::CommandBuffer,
        point: vk::PipelineBindPoint,
        layout: vk::PipelineLayout,
        set: u32,
        buffer_index: u32,
        offset: u64,
    ) {
        let Some(db) = &self.descriptor_buffer else { return };
        // SAFETY: the façade's invariant; the two one-element arrays live
        // across the call.
        unsafe { (db.cmd_set_descriptor_buffer_offsets_ext)(cb, point, layout, set, 1, &buffer_index, &offset) };
    }

    /// `vkCmdBindDescriptorBufferEmbeddedSamplersEXT` of `set`.
    pub(crate) fn cmd_bind_descriptor_buffer_embedded_samplers(
        &self,
        cb: vk::CommandBuffer,
        point: vk::PipelineBindPoint,
        layout: vk::PipelineLayout,
        set: u32,
    ) {
        let Some(db) = &self.descriptor_buffer else { return };
        // SAFETY: the façade's invariant.
        unsafe { (db.cmd_bind_descriptor_buffer_embedded_samplers_ext)(cb, point, layout, set) };
    }

    /// `vkCmdDispatch`.
    pub(crate) fn cmd_dispatch(&self, cb: vk::CommandBuffer, x: u32, y: u32, z: u32) {
        // SAFETY: the façade's invariant.
        unsafe { (self.v1_0().cmd_dispatch)(cb, x, y, z) };
    }

    /// `vkCmdDispatchIndirect` of the arguments at `offset` of `buffer`.
    pub(crate) fn cmd_dispatch_indirect(&self, cb: vk::CommandBuffer, buffer: vk::Buffer, offset: u64) {
        // SAFETY: the façade's invariant.
        unsafe { (self.v1_0().cmd_dispatch_indirect)(cb, buffer, offset) };
    }

    /// `vkCmdDrawMeshTasksEXT` (inside a rendering instance).
    pub(crate) fn cmd_draw_mesh_tasks(&self, cb: vk::CommandBuffer, x: u32, y: u32, z: u32) {
        let Some(mesh) = &self.mesh_shader else { return };
        // SAFETY: the façade's invariant.
        unsafe { (mesh.cmd_draw_mesh_tasks_ext)(cb, x, y, z) };
    }

    /// `vkCmdDrawMeshTasksIndirectEXT` (inside a rendering instance).
    pub(crate) fn cmd_draw_mesh_tasks_indirect(
        &self,
        cb: vk::CommandBuffer,
        buffer: vk::Buffer,
        offset: u64,
        draw_count: u32,
        stride: u32,
    ) {
        let Some(mesh) = &self.mesh_shader else { return };
        // SAFETY: the façade's invariant.
        unsafe { (mesh.cmd_draw_mesh_tasks_indirect_ext)(cb, buffer, offset, draw_count, stride) };
    }

    /// `vkCmdBeginRenderPass` (outside a render pass instance).
    pub(crate) fn cmd_begin_render_pass(
        &self,
        cb: vk::CommandBuffer,
        info: &vk::RenderPassBeginInfo<'_>,
        contents: vk::SubpassContents,
    ) {
        // SAFETY: the façade's invariant; `info` and what it borrows live
        // across the call.
        unsafe { (self.v1_0().cmd_begin_render_pass)(cb, info, contents) };
    }

    /// `vkCmdEndRenderPass` (inside a render pass instance).
    pub(crate) fn cmd_end_render_pass(&self, cb: vk::CommandBuffer) {
        // SAFETY: the façade's invariant.
        unsafe { (self.v1_0().cmd_end_render_pass)(cb) };
    }

    /// `vkCmdBeginRendering` (dynamic rendering, core or KHR).
    pub(crate) fn cmd_begin_rendering(&self, cb: vk::CommandBuffer, info: &vk::RenderingInfo<'_>) {
        let Some(fns) = self.rendering else { return };
        // SAFETY: the façade's invariant; `info` and what it borrows live
        // across the call.
        unsafe { (fns.begin)(cb, info) };
    }

    /// `vkCmdEndRendering` (inside a rendering instance).
    pub(crate) fn cmd_end_rendering(&self, cb: vk::CommandBuffer) {
        let Some(fns) = self.rendering else { return };
        // SAFETY: the façade's invariant.
        unsafe { (fns.end)(cb) };
    }

    /// `vkCmdSetViewport` of `viewports` from 0.
    pub(crate) fn cmd_set_viewports(&self, cb: vk::CommandBuffer, viewports: &[vk::Viewport]) {
        // SAFETY: the façade's invariant; the array lives across the call.
        unsafe { (self.v1_0().cmd_set_viewport)(cb, 0, viewports.len() as u32, viewports.as_ptr()) };
    }

    /// `vkCmdSetScissor` of `scissors` from 0.
    pub(crate) fn cmd_set_scissors(&self, cb: vk::CommandBuffer, scissors: &[vk::Rect2D]) {
        // SAFETY: the façade's invariant; the array lives across the call.
        unsafe { (self.v1_0().cmd_set_scissor)(cb, 0, scissors.len() as u32, scissors.as_ptr()) };
    }

    /// `vkCmdBeginDebugUtilsLabelEXT` (`VK_EXT_debug_utils`).
    pub(crate) fn cmd_begin_label(&self, cb: vk::CommandBuffer, label: &vk::DebugUtilsLabelEXT<'_>) {
        let Some(debug) = &self.debug_utils else { return };
        // SAFETY: the façade's invariant; the label lives across the call.
        unsafe { (debug.cmd_begin_debug_utils_label_ext)(cb, label) };
    }

    /// `vkCmdEndDebugUtilsLabelEXT`: closes the label opened last.
    pub(crate) fn cmd_end_label(&self, cb: vk::CommandBuffer) {
        let Some(debug) = &self.debug_utils else { return };
        // SAFETY: the façade's invariant.
        unsafe { (debug.cmd_end_debug_utils_label_ext)(cb) };
    }

    /// `vkCmdResetQueryPool` of `count` queries from `first`.
    pub(crate) fn cmd_reset_query_pool(&self, cb: vk::CommandBuffer, pool: vk::QueryPool, first: u32, count: u32) {
        // SAFETY: the façade's invariant.
        unsafe { (self.v1_0().cmd_reset_query_pool)(cb, pool, first, count) };
    }

    /// `vkCmdWriteTimestamp` into query `query` of `pool`.
    pub(crate) fn cmd_write_timestamp(
        &self,
        cb: vk::CommandBuffer,
        stage: vk::PipelineStageFlags,
        pool: vk::QueryPool,
        query: u32,
    ) {
        // SAFETY: the façade's invariant.
        unsafe { (self.v1_0().cmd_write_timestamp)(cb, stage, pool, query) };
    }
}

/// The start of `items`, or null when there are none (what the layer
/// passed down before the façade, kept for byte-identical calls).
fn or_null<T>(items: &[T]) -> *const T {
    if items.is_empty() {
        std::ptr::null()
    } else {
        items.as_ptr()
    }
}
