//! Helpers of `graph_restore_state.rs`: [`scene`] (the application's
//! `scale_add.comp` dispatch around a hello-chain graph dispatch, its
//! storage buffer given each way Vulkan has) and [`embedded`] (a sampling
//! kernel whose sampler is a descriptor buffer's embedded sampler), over
//! the small Vulkan object makers below.

pub mod embedded;
pub mod scene;

use ash::vk;
use conformance_tests::compute::spirv_words;
use conformance_tests::graph::{raw_hello_chain, RawDispatch};
use conformance_tests::TestDevice;
use vk_amdx::Commands;

/// Both scenes' two pipelines: the application's compute pipeline and the
/// hello chain's graph, with a dispatch of the graph ready to record.
pub struct Pipelines {
    pub compute_module: vk::ShaderModule,
    pub compute: vk::Pipeline,
    pub graph_module: vk::ShaderModule,
    pub graph: vk::Pipeline,
    pub dispatch: RawDispatch,
}

/// The compute pipeline of `spv`'s `main` on `compute_layout` and the hello
/// chain on `graph_layout`, both with `flags`, and a dispatch of `records`.
pub fn pipelines(
    dev: &TestDevice<'_>,
    fns: &Commands,
    spv: &[u8],
    [compute_layout, graph_layout]: [vk::PipelineLayout; 2],
    flags: vk::PipelineCreateFlags,
    records: &[(u32, u32)],
) -> Pipelines {
    let words = spirv_words(spv).expect("spirv");
    // SAFETY: valid device and code.
    let compute_module =
        unsafe { dev.device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None) }
            .expect("module");
    let compute = compute_pipeline(dev, compute_module, compute_layout, flags);
    let (graph, graph_module) =
        raw_hello_chain(dev, fns, graph_layout, flags, vk::PipelineCache::null(), std::ptr::null()).expect("graph");
    let dispatch = RawDispatch::new(dev, fns, graph, records).expect("dispatch");
    Pipelines { compute_module, compute, graph_module, graph, dispatch }
}

impl Pipelines {
    /// Destroys the pipelines and their modules (the dispatch's buffers go
    /// with it).
    pub fn destroy(&self, dev: &TestDevice<'_>) {
        let d = &dev.device;
        // SAFETY: the device is idle after `submit_once`; the objects are these.
        unsafe {
            d.destroy_pipeline(self.graph, None);
            d.destroy_shader_module(self.graph_module, None);
            d.destroy_pipeline(self.compute, None);
            d.destroy_shader_module(self.compute_module, None);
        }
    }
}

/// A compute pipeline of `module`'s `main` on `layout`, with `flags`.
pub fn compute_pipeline(
    dev: &TestDevice<'_>,
    module: vk::ShaderModule,
    layout: vk::PipelineLayout,
    flags: vk::PipelineCreateFlags,
) -> vk::Pipeline {
    let stage =
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(c"main");
    let info = vk::ComputePipelineCreateInfo::default().flags(flags).stage(stage).layout(layout);
    // SAFETY: valid device; the create info's parts live across the call.
    unsafe { dev.device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None) }
        .map_err(|(_, e)| e)
        .expect("compute pipeline")[0]
}

/// A pipeline layout of `sets` with `push_bytes` of compute push constants
/// (none when 0).
pub fn pipeline_layout(dev: &TestDevice<'_>, sets: &[vk::DescriptorSetLayout], push_bytes: u32) -> vk::PipelineLayout {
    let ranges = [vk::PushConstantRange { stage_flags: vk::ShaderStageFlags::COMPUTE, offset: 0, size: push_bytes }];
    let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(sets);
    if push_bytes > 0 {
        info = info.push_constant_ranges(&ranges);
    }
    // SAFETY: valid device and create info.
    unsafe { dev.device.create_pipeline_layout(&info, None) }.expect("pipeline layout")
}

/// A set layout of `bindings` with `flags`.
pub fn set_layout(
    dev: &TestDevice<'_>,
    bindings: &[vk::DescriptorSetLayoutBinding<'_>],
    flags: vk::DescriptorSetLayoutCreateFlags,
) -> vk::DescriptorSetLayout {
    let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(bindings).flags(flags);
    // SAFETY: valid device and create info.
    unsafe { dev.device.create_descriptor_set_layout(&info, None) }.expect("set layout")
}

/// A compute-visible binding `binding` of one `ty` descriptor.
pub fn binding(binding: u32, ty: vk::DescriptorType) -> vk::DescriptorSetLayoutBinding<'static> {
    vk::DescriptorSetLayoutBinding::default()
        .binding(binding)
        .descriptor_type(ty)
        .descriptor_count(1)
        .stage_flags(vk::ShaderStageFlags::COMPUTE)
}

/// `VkPhysicalDeviceDescriptorBufferPropertiesEXT` of `dev`.
pub fn descriptor_buffer_properties(dev: &TestDevice<'_>) -> vk::PhysicalDeviceDescriptorBufferPropertiesEXT<'static> {
    let mut props = vk::PhysicalDeviceDescriptorBufferPropertiesEXT::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
    // SAFETY: valid physical device and output chain.
    unsafe { dev.instance.instance.get_physical_device_properties2(dev.physical, &mut p2) };
    props
}
