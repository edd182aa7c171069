//! Plain-compute baselines: compute pipelines from GLSL-compiled SPIR-V that
//! share one layout (set 0: up to four storage buffers at bindings 0..3, a
//! 16-byte push-constant block `uvec4 p`), and the few commands they record.

use ash::vk;

use demo::gpu::{Buffer, Gpu};
use vk_host::pipeline::{compute_pipeline, shader_module, spirv_words};
use vk_host::StorageBindings;

/// Compute pipelines, their shared layout and descriptor set; destroyed on drop.
pub struct Kernels<'d> {
    device: &'d ash::Device,
    bindings: StorageBindings,
    modules: Vec<vk::ShaderModule>,
    pipelines: Vec<vk::Pipeline>,
}

impl<'d> Kernels<'d> {
    /// One pipeline per SPIR-V blob of `spvs` (entry `main`), with
    /// `storage[i]` bound at binding `i` of set 0.
    pub fn new(gpu: &'d Gpu, spvs: &[&[u8]], storage: &[&Buffer<'_>]) -> Result<Self, String> {
        let d = &gpu.device;
        let bindings = StorageBindings::new(d, storage.len() as u32, 16)?;
        // From here `k` destroys everything on drop, also on error paths.
        let mut k = Kernels { device: d, bindings, modules: Vec::new(), pipelines: Vec::new() };
        let buffers: Vec<vk::Buffer> = storage.iter().map(|b| b.buffer).collect();
        k.bindings.write(d, &buffers);
        for spv in spvs {
            k.modules.push(shader_module(d, &spirv_words(spv)?)?);
            k.pipelines.push(compute_pipeline(d, k.modules[k.modules.len() - 1], c"main", bindings.layout)?);
        }
        Ok(k)
    }

    /// Binds pipeline `index` and the set, and pushes `p`.
    pub fn bind(&self, cb: vk::CommandBuffer, index: usize, p: [u32; 4]) {
        let (d, layout) = (self.device, self.bindings.layout);
        let bytes: Vec<u8> = p.iter().flat_map(|w| w.to_le_bytes()).collect();
        // SAFETY: `cb` is recording; pipeline, layout and set are valid.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, self.pipelines[index]);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[self.bindings.set], &[]);
            d.cmd_push_constants(cb, layout, vk::ShaderStageFlags::COMPUTE, 0, &bytes);
        }
    }

    /// `vkCmdDispatch(x, 1, 1)` of the bound pipeline.
    pub fn dispatch(&self, cb: vk::CommandBuffer, x: u32) {
        // SAFETY: `cb` is recording with a compute pipeline bound.
        unsafe { self.device.cmd_dispatch(cb, x, 1, 1) };
    }

    /// `vkCmdDispatch(x, y, 1)` of the bound pipeline.
    pub fn dispatch_2d(&self, cb: vk::CommandBuffer, x: u32, y: u32) {
        // SAFETY: `cb` is recording with a compute pipeline bound.
        unsafe { self.device.cmd_dispatch(cb, x, y, 1) };
    }

    /// `vkCmdDispatchIndirect` reading `args` at `offset`.
    pub fn dispatch_indirect(&self, cb: vk::CommandBuffer, args: &Buffer<'_>, offset: u64) {
        // SAFETY: `cb` is recording; `args` has INDIRECT_BUFFER usage.
        unsafe { self.device.cmd_dispatch_indirect(cb, args.buffer, offset) };
    }
}

impl Drop for Kernels<'_> {
    fn drop(&mut self) {
        let d = self.device;
        // SAFETY: idle objects of this device (null handles are ignored).
        unsafe {
            for &p in &self.pipelines {
                d.destroy_pipeline(p, None);
            }
            for &m in &self.modules {
                d.destroy_shader_module(m, None);
            }
            self.bindings.destroy(d);
        }
    }
}
