//! Shadow state of one command buffer: what is bound at the compute and the
//! execution-graph bind points, so the graph runtime can bind the graph's
//! resources for its own dispatches and restore the application's compute
//! state afterwards; on devices with mesh nodes also the graphics bind
//! point, the render pass instance being recorded (dynamic rendering or a
//! render pass object) and the viewports and scissors, which drawing mesh
//! nodes suspends and restores. Pure
//! bookkeeping; the hooks feed it.
//!
//! Plain data in [`state`](super): the runtime's recording takes a
//! [`Shadow`]; what else a command buffer carries (its pool, whether it is
//! secondary or poisoned, the status slots of its graph dispatches, which
//! name runtime types) is `crate::device::CommandBufferState`, around it.

use ash::vk;

/// One descriptor set bound at a bind point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BoundSet {
    pub layout: vk::PipelineLayout,
    pub set: vk::DescriptorSet,
    pub dynamic_offsets: Vec<u32>,
}

/// One descriptor write of a `vkCmdPushDescriptorSetKHR`, deep-copied.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PushedDescriptor {
    pub binding: u32,
    pub array_element: u32,
    pub descriptor_type: vk::DescriptorType,
    /// (sampler, view, layout) per element.
    pub images: Vec<(vk::Sampler, vk::ImageView, vk::ImageLayout)>,
    /// (buffer, offset, range) per element.
    pub buffers: Vec<(vk::Buffer, vk::DeviceSize, vk::DeviceSize)>,
    pub texel_views: Vec<vk::BufferView>,
}

impl PushedDescriptor {
    /// Empty lists for a new write of `binding`, `array_element`, of
    /// `descriptor_type` (their allocations kept).
    pub(crate) fn reset(&mut self, binding: u32, array_element: u32, descriptor_type: vk::DescriptorType) {
        (self.binding, self.array_element, self.descriptor_type) = (binding, array_element, descriptor_type);
        self.images.clear();
        self.buffers.clear();
        self.texel_views.clear();
    }
}

/// The entry of `writes` for (`binding`, `array_element`), moved to the end
/// (a later push of the same element replaces the earlier one, and the
/// writes are replayed in order), or a new one there: reset it and fill it.
pub(crate) fn latest_entry(
    writes: &mut Vec<PushedDescriptor>,
    binding: u32,
    array_element: u32,
) -> &mut PushedDescriptor {
    // A push of the element pushed last (the common case) takes it as it is.
    let n = writes.len();
    if n > 0 && (writes[n - 1].binding, writes[n - 1].array_element) == (binding, array_element) {
        return &mut writes[n - 1];
    }
    let entry = match writes.iter().position(|w| (w.binding, w.array_element) == (binding, array_element)) {
        Some(i) => writes.remove(i),
        None => PushedDescriptor {
            binding,
            array_element,
            descriptor_type: vk::DescriptorType::default(),
            images: Vec::new(),
            buffers: Vec::new(),
            texel_views: Vec::new(),
        },
    };
    writes.push(entry);
    let last = writes.len() - 1;
    &mut writes[last]
}

/// The last `vkCmdPushDescriptorSetKHR` for one set index.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PushedSet {
    pub layout: vk::PipelineLayout,
    pub writes: Vec<PushedDescriptor>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct BindPointState {
    pub pipeline: vk::Pipeline,
    /// Indexed by set number.
    pub sets: Vec<Option<BoundSet>>,
    pub pushed_sets: Vec<Option<PushedSet>>,
    /// `vkCmdSetDescriptorBufferOffsetsEXT`, by set number.
    pub buffer_offsets: Vec<Option<BufferOffset>>,
    /// `vkCmdBindDescriptorBufferEmbeddedSamplersEXT`: the layout, by set number.
    pub embedded_samplers: Vec<Option<vk::PipelineLayout>>,
}

/// One set's place in the bound descriptor buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BufferOffset {
    pub layout: vk::PipelineLayout,
    pub buffer_index: u32,
    pub offset: vk::DeviceSize,
}

/// Makes `v[index]` exist and returns it.
fn slot<T: Clone>(v: &mut Vec<Option<T>>, index: usize) -> &mut Option<T> {
    if v.len() <= index {
        v.resize(index + 1, None);
    }
    &mut v[index]
}

/// `v[first..first + items.len()] = items`, growing `v` with defaults.
fn write_from<T: Copy + Default>(v: &mut Vec<T>, first: usize, items: &[T]) {
    if v.len() < first + items.len() {
        v.resize(first + items.len(), T::default());
    }
    v[first..first + items.len()].copy_from_slice(items);
}

impl BindPointState {
    /// A set number bound one way forgets the other ways (Vulkan: binding
    /// sets and setting descriptor-buffer offsets disturb each other).
    fn forget_buffer_binding(&mut self, index: usize) {
        if let Some(x) = self.buffer_offsets.get_mut(index) {
            *x = None;
        }
        if let Some(x) = self.embedded_samplers.get_mut(index) {
            *x = None;
        }
    }

    /// [`Shadow::bind_sets`] at this bind point, in general.
    #[inline(never)]
    fn bind_general(
        &mut self,
        layout: vk::PipelineLayout,
        first: usize,
        sets: &[vk::DescriptorSet],
        dynamic_offsets: &[u32],
        dynamic_counts: &[u32],
    ) {
        let end = first + sets.len();
        if self.sets.len() < end {
            self.sets.resize(end, None);
        }
        let mut offsets = dynamic_offsets;
        for (index, (slot, &set)) in (first..end).zip(self.sets[first..end].iter_mut().zip(sets)) {
            let mine = if offsets.is_empty() {
                &[][..]
            } else {
                let count = (dynamic_counts.get(index).copied().unwrap_or(0) as usize).min(offsets.len());
                let (mine, rest) = offsets.split_at(count);
                offsets = rest;
                mine
            };
            match slot {
                // The slot's offsets keep their allocation: no heap work per call.
                Some(bound) => {
                    (bound.layout, bound.set) = (layout, set);
                    if !(mine.is_empty() && bound.dynamic_offsets.is_empty()) {
                        bound.dynamic_offsets.clear();
                        bound.dynamic_offsets.extend_from_slice(mine);
                    }
                }
                None => *slot = Some(BoundSet { layout, set, dynamic_offsets: mine.to_vec() }),
            }
        }
        // These set numbers forget their other bindings, where there are any.
        if !(self.pushed_sets.is_empty() && self.buffer_offsets.is_empty() && self.embedded_samplers.is_empty()) {
            for index in first..end {
                if let Some(pushed) = self.pushed_sets.get_mut(index) {
                    *pushed = None;
                }
                self.forget_buffer_binding(index);
            }
        }
    }

    /// Binds `sets` from set number `first` with `layout` and no dynamic
    /// offsets where that only changes handles: each of those set numbers
    /// is bound already, without dynamic offsets, and nothing at this bind
    /// point is bound another way (pushed, or from descriptor buffers),
    /// which it would have to forget. False otherwise, perhaps with the
    /// set numbers before the first that is not bound so rebound already
    /// (one pass): the general binding that must then follow binds them
    /// the same way. Cannot panic (the hooks' short path).
    #[inline(always)]
    fn rebind(&mut self, first: usize, layout: vk::PipelineLayout, sets: &[vk::DescriptorSet]) -> bool {
        if (self.pushed_sets.len() | self.buffer_offsets.len() | self.embedded_samplers.len()) != 0 {
            return false;
        }
        let Some(slots) = self.sets.get_mut(first..first + sets.len()) else { return false };
        for (slot, &set) in slots.iter_mut().zip(sets) {
            match slot {
                Some(bound) if bound.dynamic_offsets.is_empty() => (bound.layout, bound.set) = (layout, set),
                _ => return false,
            }
        }
        true
    }

    fn forget_set_binding(&mut self, index: usize) {
        if let Some(x) = self.sets.get_mut(index) {
            *x = None;
        }
        if let Some(x) = self.pushed_sets.get_mut(index) {
            *x = None;
        }
    }
}

/// Push-constant bytes (shared by all bind points, as in Vulkan).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PushConstants {
    pub layout: vk::PipelineLayout,
    pub bytes: [u8; Self::MAX_BYTES],
    /// Distinct (stages, offset, size) ranges written, to replay them.
    pub ranges: Vec<(vk::ShaderStageFlags, u32, u32)>,
}

impl PushConstants {
    /// Enough for every driver seen (NVIDIA 256, lavapipe 128).
    pub const MAX_BYTES: usize = 256;

    /// The (stages, offset, size) a push of `data` at `offset` writes
    /// (clamped to [`Self::MAX_BYTES`]).
    #[inline(always)]
    fn range(stages: vk::ShaderStageFlags, offset: u32, data: &[u8]) -> (vk::ShaderStageFlags, u32, u32) {
        let start = (offset as usize).min(Self::MAX_BYTES);
        let end = start.saturating_add(data.len()).min(Self::MAX_BYTES);
        (stages, start as u32, (end - start) as u32)
    }

    /// Keeps the bytes of a push and its layout; returns its range.
    #[inline(always)]
    fn write(
        &mut self,
        layout: vk::PipelineLayout,
        stages: vk::ShaderStageFlags,
        offset: u32,
        data: &[u8],
    ) -> (vk::ShaderStageFlags, u32, u32) {
        let range = Self::range(stages, offset, data);
        let (start, size) = (range.1 as usize, range.2 as usize);
        // In bounds by `range`'s clamps (no panic: the hooks' short path).
        if let (Some(kept), Some(pushed)) = (self.bytes.get_mut(start..start + size), data.get(..size)) {
            kept.copy_from_slice(pushed);
        }
        self.layout = layout;
        range
    }
}

impl Default for PushConstants {
    fn default() -> Self {
        PushConstants { layout: vk::PipelineLayout::null(), bytes: [0; Self::MAX_BYTES], ranges: Vec::new() }
    }
}

/// One attachment of a dynamic rendering instance, as begun.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RenderingAttachment {
    pub image_view: vk::ImageView,
    pub image_layout: vk::ImageLayout,
    pub resolve_mode: vk::ResolveModeFlags,
    pub resolve_image_view: vk::ImageView,
    pub resolve_image_layout: vk::ImageLayout,
    /// The application's store operation (the layer records `STORE`, so
    /// that a suspension for mesh nodes keeps the contents).
    pub store_op: vk::AttachmentStoreOp,
}

/// The `vkCmdBeginRendering` being recorded (its `pNext` chain is not kept).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RenderingInstance {
    pub flags: vk::RenderingFlags,
    pub render_area: vk::Rect2D,
    pub layer_count: u32,
    pub view_mask: u32,
    pub color: Vec<Option<RenderingAttachment>>,
    pub depth: Option<RenderingAttachment>,
    pub stencil: Option<RenderingAttachment>,
}

/// A `vkCmdBeginRenderPass` being recorded (devices with mesh nodes only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RenderPassInstance {
    pub framebuffer: vk::Framebuffer,
    pub render_area: vk::Rect2D,
    /// An imageless framebuffer's views (`VkRenderPassAttachmentBeginInfo`).
    pub attachments: Vec<vk::ImageView>,
    /// The first subpass's contents as the application began it.
    pub contents: vk::SubpassContents,
    /// The layer's copies of the render pass that load every attachment:
    /// `[0]` stores them (the layer's own parts), `[1]` with the
    /// application's store operations (the part it goes on recording in).
    /// Null when the render pass has several subpasses (not resumable).
    pub resume: [vk::RenderPass; 2],
}

/// The render pass instance a graph with mesh nodes suspends and resumes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum OpenPass<'a> {
    Dynamic(&'a RenderingInstance),
    Object(&'a RenderPassInstance),
}

/// What is bound in one command buffer, as the runtime's recording reads
/// it (the command buffer's other state is `crate::device`'s).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Shadow {
    pub compute: BindPointState,
    pub graph: BindPointState,
    /// Tracked on devices with mesh nodes only.
    pub graphics: BindPointState,
    /// The dynamic rendering instance open (devices with mesh nodes only).
    pub rendering: Option<RenderingInstance>,
    /// The render pass object instance open (devices with mesh nodes only).
    pub render_pass: Option<RenderPassInstance>,
    /// `vkCmdSetViewport` (x, y, width, height, min and max depth) /
    /// `vkCmdSetScissor` (devices with mesh nodes only).
    pub viewports: Vec<[f32; 6]>,
    pub scissors: Vec<vk::Rect2D>,
    pub push_constants: PushConstants,
    /// Set numbers (bit `n`: set `n`, below 32) whose push at the graph bind
    /// point is the one at the compute bind point, kept up to date at the
    /// compute point alone: a stage-addressed push reaching both
    /// (`vkCmdPushDescriptorSet2KHR` with the compute stage) then costs one
    /// shadow write, not two (see [`Shadow::mirror`]). [`Shadow::sets_at`]
    /// and [`Shadow::settle`] give the graph point its own copy before
    /// anything else reads or changes either point's sets.
    mirrored: u32,
}

impl Shadow {
    /// The render pass instance open, if any.
    pub(crate) fn open_pass(&self) -> Option<OpenPass<'_>> {
        match (&self.rendering, &self.render_pass) {
            (Some(r), _) => Some(OpenPass::Dynamic(r)),
            (None, Some(p)) => Some(OpenPass::Object(p)),
            (None, None) => None,
        }
    }

    /// The state at `bind_point` as it is: its pipeline, or its sets where
    /// nothing is mirrored (see [`Self::sets_at`]).
    pub(crate) fn bind_point_mut(&mut self, bind_point: vk::PipelineBindPoint) -> Option<&mut BindPointState> {
        match bind_point {
            vk::PipelineBindPoint::COMPUTE => Some(&mut self.compute),
            crate::amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH => Some(&mut self.graph),
            vk::PipelineBindPoint::GRAPHICS => Some(&mut self.graphics),
            _ => None,
        }
    }

    /// The state at `bind_point` to read or change its sets: the graph
    /// point's mirrored pushes settled first (see [`Self::mirrored`]).
    #[inline(always)]
    pub(crate) fn sets_at(&mut self, bind_point: vk::PipelineBindPoint) -> Option<&mut BindPointState> {
        if self.mirrored != 0 {
            self.settle();
        }
        self.bind_point_mut(bind_point)
    }

    /// [`Self::sets_at`] where nothing is mirrored, else `None` (no
    /// settling: the hooks' short paths decline instead, and the general
    /// path settles). One compare: for the pushes that do not mirror.
    #[inline(always)]
    pub(crate) fn sets_if_settled(&mut self, bind_point: vk::PipelineBindPoint) -> Option<&mut BindPointState> {
        if self.mirrored != 0 {
            return None;
        }
        self.bind_point_mut(bind_point)
    }

    /// The state at `bind_point` to change set `set`'s push, where that
    /// push is not mirrored, else `None` (as [`Self::sets_if_settled`]).
    /// Other sets' mirrored pushes stay as they are: stage-addressed
    /// pushes to two sets in turn keep both mirrored.
    #[inline(always)]
    pub(crate) fn push_at_unless_mirrored(
        &mut self,
        bind_point: vk::PipelineBindPoint,
        set: u32,
    ) -> Option<&mut BindPointState> {
        if self.mirrors(set) {
            return None;
        }
        self.bind_point_mut(bind_point)
    }

    /// Whether set `set`'s push is mirrored (see [`Self::mirrored`]).
    #[inline(always)]
    fn mirrors(&self, set: u32) -> bool {
        set < 32 && self.mirrored & (1 << set) != 0
    }

    /// Gives the graph bind point its own copy of each push it mirrors.
    #[cold]
    pub(crate) fn settle(&mut self) {
        let mut bits = std::mem::take(&mut self.mirrored);
        while bits != 0 {
            let index = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (from, to) = (self.compute.pushed_sets.get(index), self.graph.pushed_sets.get_mut(index));
            if let (Some(Some(from)), Some(Some(to))) = (from, to) {
                to.clone_from(from);
            }
        }
    }

    /// Marks set `set`'s push at the graph bind point as the compute
    /// point's from now on, where both points hold the same push for it
    /// (pushes merge with the set's earlier ones, so the same push can
    /// leave two bind points different): call it right after a push to
    /// both; later pushes to both may then write the compute point's alone
    /// ([`Self::mirrored_compute`]). Set numbers from 32 on are not
    /// mirrored.
    pub(crate) fn mirror(&mut self, set: u32) {
        let index = set as usize;
        let compute = self.compute.pushed_sets.get(index).and_then(Option::as_ref);
        let graph = self.graph.pushed_sets.get(index).and_then(Option::as_ref);
        if set < 32 && compute.is_some() && compute == graph {
            self.mirrored |= 1 << set;
        }
    }

    /// The compute point's state, for a push to both it and the graph
    /// point, where the graph point mirrors set `set`'s push (no settling:
    /// the graph's copy stays behind until something else needs it).
    #[inline(always)]
    pub(crate) fn mirrored_compute(&mut self, set: u32) -> Option<&mut BindPointState> {
        self.mirrors(set).then_some(&mut self.compute)
    }

    /// Records `vkCmdBindDescriptorSets`; `dynamic_counts[i]` is the number of
    /// dynamic descriptors of set `i` of `layout` (missing entries count 0).
    pub(crate) fn bind_sets(
        &mut self,
        bind_point: vk::PipelineBindPoint,
        layout: vk::PipelineLayout,
        first_set: u32,
        sets: &[vk::DescriptorSet],
        dynamic_offsets: &[u32],
        dynamic_counts: &[u32],
    ) {
        if dynamic_offsets.is_empty() && self.rebind(bind_point, layout, first_set, sets) {
            return;
        }
        if let Some(state) = self.sets_at(bind_point) {
            state.bind_general(layout, first_set as usize, sets, dynamic_offsets, dynamic_counts);
        }
    }

    /// [`Self::bind_sets`] without dynamic offsets where that only changes
    /// handles (see [`BindPointState::rebind`]); false otherwise, and then
    /// `bind_sets` must follow. The hooks try it first: it is most calls'
    /// whole work. (A mirrored push leaves both points with a pushed set,
    /// which `BindPointState::rebind` declines before it writes anything:
    /// no settling here.)
    #[inline(always)]
    pub(crate) fn rebind(
        &mut self,
        bind_point: vk::PipelineBindPoint,
        layout: vk::PipelineLayout,
        first_set: u32,
        sets: &[vk::DescriptorSet],
    ) -> bool {
        self.bind_point_mut(bind_point).is_some_and(|state| state.rebind(first_set as usize, layout, sets))
    }

    /// The writes pushed to set `set` at `bind_point` that a push with
    /// `layout` updates (the set's other bindings forgotten; a push with
    /// another layout starts afresh, keeping the allocations): fill them
    /// through [`latest_entry`]. `None` for a bind point not shadowed.
    pub(crate) fn pushed_writes(
        &mut self,
        bind_point: vk::PipelineBindPoint,
        set: u32,
        layout: vk::PipelineLayout,
    ) -> Option<&mut Vec<PushedDescriptor>> {
        let state = self.sets_at(bind_point)?;
        let index = set as usize;
        // A push after a push with the same layout (the common case): the
        // set number has no other binding (binding it another way forgets
        // the push).
        if let Some(Some(pushed)) = state.pushed_sets.get_mut(index) {
            if pushed.layout == layout {
                // (Re-borrowed: returning `pushed` itself here would keep
                // `state` borrowed on the other path.)
                return state.pushed_sets[index].as_mut().map(|p| &mut p.writes);
            }
        }
        if let Some(bound) = state.sets.get_mut(index) {
            *bound = None;
        }
        state.forget_buffer_binding(index);
        let pushed =
            slot(&mut state.pushed_sets, index).get_or_insert_with(|| PushedSet { layout, writes: Vec::new() });
        if pushed.layout != layout {
            pushed.layout = layout;
            pushed.writes.clear();
        }
        Some(&mut pushed.writes)
    }

    /// Records `vkCmdSetDescriptorBufferOffsetsEXT`.
    pub(crate) fn set_buffer_offsets(
        &mut self,
        bind_point: vk::PipelineBindPoint,
        layout: vk::PipelineLayout,
        first_set: u32,
        buffer_indices: &[u32],
        offsets: &[vk::DeviceSize],
    ) {
        let Some(state) = self.sets_at(bind_point) else { return };
        for (i, (&buffer_index, &offset)) in buffer_indices.iter().zip(offsets).enumerate() {
            let index = first_set as usize + i;
            state.forget_set_binding(index);
            *slot(&mut state.buffer_offsets, index) = Some(BufferOffset { layout, buffer_index, offset });
            if let Some(x) = state.embedded_samplers.get_mut(index) {
                *x = None;
            }
        }
    }

    /// Records `vkCmdBindDescriptorBufferEmbeddedSamplersEXT`.
    pub(crate) fn bind_embedded_samplers(
        &mut self,
        bind_point: vk::PipelineBindPoint,
        layout: vk::PipelineLayout,
        set: u32,
    ) {
        let Some(state) = self.sets_at(bind_point) else { return };
        let index = set as usize;
        state.forget_set_binding(index);
        if let Some(x) = state.buffer_offsets.get_mut(index) {
            *x = None;
        }
        *slot(&mut state.embedded_samplers, index) = Some(layout);
    }

    /// Records `vkCmdSetViewport` (`set_scissor`: `vkCmdSetScissor`).
    pub(crate) fn set_viewports(&mut self, first: u32, viewports: &[vk::Viewport]) {
        let first = first as usize;
        if self.viewports.len() < first + viewports.len() {
            self.viewports.resize(first + viewports.len(), [0.0; 6]);
        }
        for (kept, v) in self.viewports[first..].iter_mut().zip(viewports) {
            *kept = [v.x, v.y, v.width, v.height, v.min_depth, v.max_depth];
        }
    }

    /// The viewports as `vkCmdSetViewport` takes them.
    pub(crate) fn viewports(&self) -> Vec<vk::Viewport> {
        self.viewports
            .iter()
            .map(|&[x, y, width, height, min_depth, max_depth]| vk::Viewport {
                x,
                y,
                width,
                height,
                min_depth,
                max_depth,
            })
            .collect()
    }

    pub(crate) fn set_scissors(&mut self, first: u32, scissors: &[vk::Rect2D]) {
        write_from(&mut self.scissors, first as usize, scissors);
    }

    /// Records `vkCmdPushConstants`; bytes past [`PushConstants::MAX_BYTES`]
    /// are ignored (the driver rejects them anyway).
    pub(crate) fn push_constants(
        &mut self,
        layout: vk::PipelineLayout,
        stages: vk::ShaderStageFlags,
        offset: u32,
        data: &[u8],
    ) {
        if !self.push_constants_again(layout, stages, offset, data) {
            let range = self.push_constants.write(layout, stages, offset, data);
            self.push_constants.ranges.push(range);
        }
    }

    /// [`Self::push_constants`] of a range pushed before (most pushes):
    /// no allocation, and nothing that can panic (the hooks' short path).
    /// False (nothing changed) for a new range.
    #[inline(always)]
    pub(crate) fn push_constants_again(
        &mut self,
        layout: vk::PipelineLayout,
        stages: vk::ShaderStageFlags,
        offset: u32,
        data: &[u8],
    ) -> bool {
        let pc = &mut self.push_constants;
        let known = pc.ranges.contains(&PushConstants::range(stages, offset, data));
        if known {
            pc.write(layout, stages, offset, data);
        }
        known
    }

    /// [`BindPointState::rebind`] at the bind points a stage-addressed
    /// binding reaches (see `ffi::maintenance6`): the compute and the
    /// execution-graph one for `compute`, the graphics one for `graphics`;
    /// false where any declines, and then the general binding must follow
    /// at all of them.
    #[inline(always)]
    pub(crate) fn rebind_stages(
        &mut self,
        compute: bool,
        graphics: bool,
        layout: vk::PipelineLayout,
        first_set: u32,
        sets: &[vk::DescriptorSet],
    ) -> bool {
        let first = first_set as usize;
        (!compute || (self.compute.rebind(first, layout, sets) && self.graph.rebind(first, layout, sets)))
            && (!graphics || self.graphics.rebind(first, layout, sets))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    fn layout(n: u64) -> vk::PipelineLayout {
        vk::PipelineLayout::from_raw(n)
    }
    fn set(n: u64) -> vk::DescriptorSet {
        vk::DescriptorSet::from_raw(n)
    }

    /// Sets, push descriptors and descriptor-buffer offsets for one set
    /// number replace each other, as they do in Vulkan.
    #[test]
    fn buffer_offsets_and_sets_replace_each_other() {
        let graph = crate::amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH;
        let mut cb = Shadow::default();
        cb.bind_sets(graph, layout(1), 0, &[set(10), set(11)], &[], &[]);
        cb.set_buffer_offsets(graph, layout(2), 1, &[0], &[256]);
        assert!(cb.graph.sets[0].is_some() && cb.graph.sets[1].is_none());
        assert_eq!(cb.graph.buffer_offsets[1], Some(BufferOffset { layout: layout(2), buffer_index: 0, offset: 256 }));
        cb.bind_embedded_samplers(graph, layout(2), 0);
        assert!(cb.graph.sets[0].is_none());
        cb.bind_sets(graph, layout(1), 1, &[set(12)], &[], &[]);
        assert_eq!(cb.graph.buffer_offsets[1], None);
        assert_eq!(cb.graph.embedded_samplers[0], Some(layout(2)));
        assert!(cb.compute.buffer_offsets.is_empty(), "bind points are separate");
    }

    #[test]
    fn dynamic_offsets_are_split_per_set() {
        let mut cb = Shadow::default();
        cb.bind_sets(
            vk::PipelineBindPoint::COMPUTE,
            layout(1),
            1,
            &[set(10), set(11), set(12)],
            &[100, 200, 300],
            &[0, 2, 0, 1],
        );
        let sets = &cb.compute.sets;
        assert_eq!(sets[0], None);
        assert_eq!(sets[1].as_ref().unwrap().dynamic_offsets, vec![100, 200]);
        assert!(sets[2].as_ref().unwrap().dynamic_offsets.is_empty());
        assert_eq!(sets[3].as_ref().unwrap().dynamic_offsets, vec![300]);
        assert_eq!(cb.graph, BindPointState::default(), "other bind point untouched");
    }

    /// A bind that only changes handles takes the short way; one that
    /// must forget another binding, or change dynamic offsets, does not,
    /// and both leave what the long way would.
    #[test]
    fn rebinding_handles_is_short_only_where_nothing_else_changes() {
        let bp = vk::PipelineBindPoint::COMPUTE;
        let mut cb = Shadow::default();
        cb.bind_sets(bp, layout(1), 0, &[set(1), set(2)], &[], &[]);
        assert!(cb.compute.rebind(1, layout(3), &[set(4)]));
        assert_eq!(cb.compute.sets[1], Some(BoundSet { layout: layout(3), set: set(4), dynamic_offsets: vec![] }));
        assert!(!cb.compute.rebind(1, layout(3), &[set(4), set(5)]), "set 2 was never bound");
        cb.bind_sets(bp, layout(1), 0, &[set(1)], &[8], &[1]);
        assert!(!cb.compute.rebind(0, layout(1), &[set(1)]), "set 0 has dynamic offsets to drop");
        cb.bind_sets(bp, layout(1), 0, &[set(6)], &[], &[]);
        assert!(cb.compute.sets[0].as_ref().unwrap().dynamic_offsets.is_empty());
        push(&mut cb, layout(1), &[(0, 7)]);
        cb.bind_sets(bp, layout(1), 1, &[set(8)], &[], &[]);
        assert!(!cb.compute.rebind(1, layout(1), &[set(8)]), "a pushed set is kept until forgotten");
        cb.bind_sets(bp, layout(1), 0, &[set(9)], &[], &[]);
        assert_eq!(cb.compute.pushed_sets[0], None, "binding set 0 forgets its push");
        assert_eq!(cb.compute.sets[0].as_ref().map(|b| b.set), Some(set(9)));
        push(&mut cb, layout(1), &[(0, 7)]);
        assert_eq!(cb.compute.sets[0], None, "a push after the bind forgets the bound set");
    }

    #[test]
    fn bind_points_are_tracked_separately_and_ray_tracing_ignored() {
        let mut cb = Shadow::default();
        cb.bind_sets(crate::amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH, layout(2), 0, &[set(5)], &[], &[]);
        cb.bind_sets(vk::PipelineBindPoint::GRAPHICS, layout(3), 0, &[set(6)], &[], &[]);
        cb.bind_sets(vk::PipelineBindPoint::RAY_TRACING_KHR, layout(4), 0, &[set(7)], &[], &[]);
        assert_eq!(cb.graph.sets[0].as_ref().unwrap().set, set(5));
        assert_eq!(cb.graphics.sets[0].as_ref().unwrap().set, set(6));
        assert!(cb.compute.sets.is_empty());
    }

    #[test]
    fn push_constants_keep_latest_bytes_and_distinct_ranges() {
        let mut cb = Shadow::default();
        let stage = vk::ShaderStageFlags::COMPUTE;
        cb.push_constants(layout(1), stage, 0, &[1, 2, 3, 4]);
        cb.push_constants(layout(1), stage, 2, &[9, 9]);
        cb.push_constants(layout(1), stage, 0, &[5, 6, 7, 8]);
        assert_eq!(&cb.push_constants.bytes[..4], &[5, 6, 7, 8]);
        assert_eq!(cb.push_constants.ranges, vec![(stage, 0, 4), (stage, 2, 2)]);
        cb.push_constants(layout(1), stage, 250, &[1; 16]);
        assert_eq!(cb.push_constants.ranges.last(), Some(&(stage, 250, 6)));
    }

    /// A push of storage buffers `(binding, buffer)` to set 0 with `l`, as the hooks make it.
    fn push(cb: &mut Shadow, l: vk::PipelineLayout, writes: &[(u32, u64)]) {
        push_at(cb, vk::PipelineBindPoint::COMPUTE, l, writes);
    }

    /// Pushes storage buffers `(binding, buffer)` to set 0 at `point`.
    fn push_at(cb: &mut Shadow, point: vk::PipelineBindPoint, l: vk::PipelineLayout, writes: &[(u32, u64)]) {
        let list = cb.pushed_writes(point, 0, l).unwrap();
        for &(binding, buffer) in writes {
            let e = latest_entry(list, binding, 0);
            e.reset(binding, 0, vk::DescriptorType::STORAGE_BUFFER);
            e.buffers.push((vk::Buffer::from_raw(buffer), 0, 4));
        }
    }

    fn buffers_of(cb: &Shadow) -> Vec<(u32, u64)> {
        buffers_at(&cb.compute)
    }

    /// (binding, buffer) of each write pushed to set 0 of `state`.
    fn buffers_at(state: &BindPointState) -> Vec<(u32, u64)> {
        let pushed = state.pushed_sets[0].as_ref().unwrap();
        pushed.writes.iter().map(|w| (w.binding, w.buffers[0].0.as_raw())).collect()
    }

    /// A push both bind points hold alike is mirrored: later pushes write
    /// the compute point's alone, and the graph point gets them when its
    /// sets are next read or changed (here a bind at the compute point,
    /// which must not take the graph point's push with it).
    #[test]
    fn mirrored_pushes_reach_the_graph_point_when_settled() {
        let (compute, graph) = (vk::PipelineBindPoint::COMPUTE, crate::amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH);
        let mut cb = Shadow::default();
        push_at(&mut cb, compute, layout(1), &[(0, 7)]);
        push_at(&mut cb, graph, layout(1), &[(1, 8), (0, 7)]);
        cb.mirror(0);
        assert!(cb.mirrored_compute(0).is_none(), "the graph point holds another binding too: not mirrored");
        push_at(&mut cb, compute, layout(1), &[(1, 8)]);
        push_at(&mut cb, compute, layout(1), &[(0, 7)]);
        cb.mirror(0);
        let state = cb.mirrored_compute(0).expect("alike: mirrored");
        state.pushed_sets[0].as_mut().unwrap().writes[1].buffers[0].0 = vk::Buffer::from_raw(9);
        assert_eq!(buffers_at(&cb.graph), [(1, 8), (0, 7)], "the graph point's copy waits");
        cb.bind_sets(compute, layout(1), 0, &[set(3)], &[], &[]);
        assert_eq!(buffers_at(&cb.graph), [(1, 8), (0, 9)], "settled before the bind");
        assert_eq!(cb.compute.pushed_sets[0], None, "the bind forgets the compute point's push alone");
        assert!(cb.mirrored_compute(0).is_none());
        cb.mirror(40);
        assert!(cb.mirrored_compute(40).is_none(), "set numbers from 32 on are never mirrored");
    }

    /// A short-path push declines for a mirrored set only: pushes to two
    /// sets in turn keep the other's mirror.
    #[test]
    fn a_mirror_holds_back_pushes_to_its_own_set_only() {
        let (compute, graph) = (vk::PipelineBindPoint::COMPUTE, crate::amdx::PIPELINE_BIND_POINT_EXECUTION_GRAPH);
        let mut cb = Shadow::default();
        for point in [compute, graph] {
            push_at(&mut cb, point, layout(1), &[(0, 7)]);
        }
        cb.mirror(0);
        assert!(cb.push_at_unless_mirrored(compute, 0).is_none(), "set 0 is mirrored");
        assert!(cb.push_at_unless_mirrored(graph, 1).is_some(), "set 1 is not");
        assert!(cb.mirrored_compute(0).is_some(), "and set 0 stays mirrored");
    }

    #[test]
    fn pushed_sets_replace_bound_sets_and_merge_writes() {
        let mut cb = Shadow::default();
        cb.bind_sets(vk::PipelineBindPoint::COMPUTE, layout(1), 0, &[set(1)], &[], &[]);
        push(&mut cb, layout(1), &[(0, 7), (1, 8)]);
        push(&mut cb, layout(1), &[(0, 9)]);
        assert_eq!(cb.compute.sets[0], None);
        assert_eq!(buffers_of(&cb), [(1, 8), (0, 9)], "the latest write of binding 0 last");
        push(&mut cb, layout(2), &[(3, 5)]);
        assert_eq!(buffers_of(&cb), [(3, 5)], "another layout starts afresh");
    }

    #[test]
    fn the_hooks_shadowing_allocates_nothing_once_warm() {
        let mut cb = Shadow::default();
        let bp = vk::PipelineBindPoint::COMPUTE;
        let vp = vk::Viewport { width: 8.0, height: 8.0, max_depth: 1.0, ..Default::default() };
        let scissor = vk::Rect2D::default();
        let record = |cb: &mut Shadow| {
            cb.push_constants(layout(1), vk::ShaderStageFlags::COMPUTE, 0, &[1, 2, 3, 4]);
            // Sets 1 and 2 bound with dynamic offsets, set 0 pushed.
            cb.bind_sets(bp, layout(1), 1, &[set(1), set(2)], &[16, 32], &[0, 1, 1]);
            cb.bind_point_mut(bp).unwrap().pipeline = vk::Pipeline::from_raw(7);
            push(cb, layout(1), &[(0, 7), (1, 8)]);
            cb.set_viewports(0, &[vp, vp]);
            cb.set_scissors(0, &[scissor]);
        };
        record(&mut cb);
        let counted = allocation_counter::measure(|| {
            for _ in 0..100 {
                record(&mut cb);
            }
        });
        assert_eq!(counted.count_total, 0, "allocations in 100 rounds of calls");
    }

    #[test]
    fn viewports_and_scissors_keep_the_latest_per_index() {
        let mut cb = Shadow::default();
        let vp = |x: f32| vk::Viewport { x, width: 8.0, height: 8.0, max_depth: 1.0, ..Default::default() };
        cb.set_viewports(0, &[vp(0.0), vp(1.0)]);
        cb.set_viewports(1, &[vp(5.0), vp(6.0)]);
        assert_eq!(cb.viewports().iter().map(|v| v.x).collect::<Vec<_>>(), vec![0.0, 5.0, 6.0]);
        cb.set_scissors(2, &[vk::Rect2D::default()]);
        assert_eq!(cb.scissors.len(), 3);
    }
}
