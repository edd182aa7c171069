//! Compute pipelines from SPIR-V words with one storage buffer (set 0,
//! binding 0) and a push-constant range, plus the committed test shaders.

use ash::vk;
use vk_host::pipeline::{compute_pipeline, shader_module};
use vk_host::submit::memory_barrier;
use vk_host::StorageBindings;

use crate::buffer::HostBuffer;
use crate::device::{Owned, TestDevice};
use crate::error::Result;

pub use vk_host::pipeline::spirv_words;

/// `tests/shaders/scale_add.comp`: `data[i] = data[i] * mul + add` for
/// `i < count`; push constants `{mul, add, count}`; 64 invocations a group.
pub const SCALE_ADD_SPV: &[u8] = include_bytes!("../shaders/scale_add.comp.spv");

/// A compute pipeline with its layout and one descriptor set.
#[derive(Debug, Clone, Copy)]
pub struct StorageCompute {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    pub set: vk::DescriptorSet,
    pub push_constant_size: u32,
}

impl TestDevice<'_> {
    /// Builds a compute pipeline (entry `main`) from `words` whose set 0
    /// binding 0 is `buffer` and whose push constants are `push_constant_size` bytes.
    pub fn create_storage_compute(
        &self,
        words: &[u32],
        push_constant_size: u32,
        buffer: &HostBuffer,
    ) -> Result<StorageCompute> {
        let d = &self.device;
        let module = shader_module(d, words)?;
        self.own(Owned::ShaderModule(module));
        let b = StorageBindings::new(d, 1, push_constant_size)?;
        self.own(Owned::SetLayout(b.set_layout));
        self.own(Owned::PipelineLayout(b.layout));
        self.own(Owned::DescriptorPool(b.pool));
        let pipeline = compute_pipeline(d, module, c"main", b.layout)?;
        self.own(Owned::Pipeline(pipeline));
        b.write(d, &[buffer.buffer]);
        let (layout, set) = (b.layout, b.set);
        Ok(StorageCompute { pipeline, layout, set, push_constant_size })
    }

    /// Records bind pipeline + descriptor set + push constants + dispatch of
    /// `groups` workgroups, followed by a compute-to-host barrier.
    pub fn record_dispatch(&self, cb: vk::CommandBuffer, p: &StorageCompute, push: &[u8], groups: u32) {
        let d = &self.device;
        // SAFETY: cb is recording; all handles belong to this device.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, p.pipeline);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, p.layout, 0, &[p.set], &[]);
            if !push.is_empty() {
                d.cmd_push_constants(cb, p.layout, vk::ShaderStageFlags::COMPUTE, 0, push);
            }
            d.cmd_dispatch(cb, groups, 1, 1);
        }
        let src = (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE);
        memory_barrier(d, cb, src, (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ));
    }
}

/// Push-constant bytes for `scale_add.comp`.
pub fn scale_add_push(mul: u32, add: u32, count: u32) -> [u8; 12] {
    let mut out = [0u8; 12];
    out[0..4].copy_from_slice(&mul.to_ne_bytes());
    out[4..8].copy_from_slice(&add.to_ne_bytes());
    out[8..12].copy_from_slice(&count.to_ne_bytes());
    out
}

/// Runs `scale_add.comp` over `input` on `dev` and returns the result.
pub fn run_scale_add(dev: &TestDevice<'_>, input: &[u32], mul: u32, add: u32) -> Result<Vec<u32>> {
    let bytes = std::mem::size_of_val(input).max(4) as vk::DeviceSize;
    let buf = dev.create_host_buffer(bytes, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    buf.write_u32(input)?;
    let words = spirv_words(SCALE_ADD_SPV)?;
    let p = dev.create_storage_compute(&words, 12, &buf)?;
    let push = scale_add_push(mul, add, input.len() as u32);
    let groups = (input.len() as u32).div_ceil(64).max(1);
    dev.submit_once(|cb| dev.record_dispatch(cb, &p, &push, groups))?;
    Ok(buf.read_u32(input.len())?)
}
