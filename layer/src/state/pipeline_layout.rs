//! What the layer records of an application's pipeline layouts (plain data,
//! fed by `vkCreatePipelineLayout`): the hooks split dynamic offsets per
//! set with it, and hand it to the runtime, which extends a copy of the
//! layout by its push-constant block for node kernels and mesh nodes.

use ash::vk;

/// What the runtime needs of an application pipeline layout: node kernels
/// use a copy extended by the runtime's push-constant block.
#[derive(Clone, Debug, Default)]
pub(crate) struct PipelineLayoutInfo {
    pub set_layouts: Vec<vk::DescriptorSetLayout>,
    pub push_ranges: Vec<vk::PushConstantRange>,
    /// Dynamic descriptors of each set.
    pub dynamic_counts: Vec<u32>,
}
