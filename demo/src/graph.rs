//! An execution graph pipeline as an application builds one: a shader
//! module of node shaders, one descriptor set of storage buffers (set 0),
//! `vkCreateExecutionGraphPipelinesAMDX`, the node-index and scratch-size
//! queries, and the recording of scratch initialisation and a host dispatch
//! (the calls themselves are `vk_host`'s).

use std::ffi::CStr;

use ash::vk;
use vk_amdx::{Commands, ExecutionGraphPipelineScratchSize, PIPELINE_BIND_POINT_EXECUTION_GRAPH};
use vk_host::graph::{self, GraphStage};
use vk_host::pipeline::{shader_module, spirv_words};
use vk_host::submit::memory_barrier;
use vk_host::StorageBindings;

use crate::gpu::{Buffer, Gpu};

/// A graph pipeline and the objects it was made from; destroyed on drop.
pub struct Graph<'d> {
    device: &'d ash::Device,
    fns: Commands,
    module: vk::ShaderModule,
    bindings: StorageBindings,
    pub pipeline: vk::Pipeline,
}

impl<'d> Graph<'d> {
    /// Creates a graph whose nodes are the entry points `entries` of `spv`
    /// (each `(entry, index)`: `index` overrides the node index through
    /// `VkPipelineShaderStageNodeCreateInfoAMDX`, `u32::MAX` keeps the
    /// shader's; no name overrides), with `storage` bound at set 0.
    pub fn new(gpu: &'d Gpu, spv: &[u8], entries: &[(&CStr, u32)], storage: &[&Buffer<'_>]) -> Result<Self, String> {
        let d = &gpu.device;
        let fns = Commands::load(&gpu.instance, d).map_err(|name| format!("{name:?} does not resolve"))?;
        let module = shader_module(d, &spirv_words(spv)?)?;
        let bindings = match StorageBindings::new(d, storage.len() as u32, 0) {
            Ok(b) => b,
            Err(e) => {
                // SAFETY: the module is unused.
                unsafe { d.destroy_shader_module(module, None) };
                return Err(e.into());
            }
        };
        // From here `g` destroys everything on drop, also on error paths.
        let mut g = Graph { device: d, fns, module, bindings, pipeline: vk::Pipeline::null() };
        let buffers: Vec<vk::Buffer> = storage.iter().map(|b| b.buffer).collect();
        g.bindings.write(d, &buffers);
        let stages: Vec<GraphStage<'_>> = entries
            .iter()
            .map(|&(entry, node_index)| GraphStage { module, entry, node_name: None, node_index, specialization: None })
            .collect();
        let (result, pipelines) =
            graph::create_graphs(&g.fns, d, vk::PipelineCache::null(), g.bindings.layout, &[&stages]);
        g.pipeline = pipelines[0];
        if result != vk::Result::SUCCESS {
            return Err(format!("vkCreateExecutionGraphPipelinesAMDX: {result:?}"));
        }
        Ok(g)
    }

    /// `vkGetExecutionGraphPipelineNodeIndexAMDX` of the node (name, index).
    pub fn node_index(&self, name: &CStr, index: u32) -> Result<u32, String> {
        graph::node_index(&self.fns, self.device, self.pipeline, name, index)
            .map_err(|e| format!("{e} ({name:?}, {index})"))
    }

    /// `vkGetExecutionGraphPipelineScratchSizeAMDX` (revision 2).
    pub fn scratch_size(&self) -> Result<ExecutionGraphPipelineScratchSize, String> {
        Ok(graph::scratch_size(&self.fns, self.device, self.pipeline)?)
    }

    /// Records: bind the graph and set 0, initialise `scratch`, barrier.
    pub fn record_setup(&self, cb: vk::CommandBuffer, scratch: &Buffer<'_>) {
        let d = self.device;
        let bind = PIPELINE_BIND_POINT_EXECUTION_GRAPH;
        // SAFETY: `cb` is recording; graph, set and scratch are valid.
        unsafe {
            d.cmd_bind_pipeline(cb, bind, self.pipeline);
            d.cmd_bind_descriptor_sets(cb, bind, self.bindings.layout, 0, &[self.bindings.set], &[]);
            (self.fns.init_scratch)(cb, self.pipeline, scratch.address.unwrap_or(0), scratch.size);
        }
        let (stage, write) = (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE);
        memory_barrier(d, cb, (stage, write), (stage, vk::AccessFlags::SHADER_READ | write));
    }

    /// Records `vkCmdDispatchGraphAMDX` of `count` host records of `stride`
    /// bytes (`records`) into node `node`. The layer copies the payloads
    /// while recording, as the extension allows.
    pub fn record_dispatch(&self, cb: vk::CommandBuffer, scratch: &Buffer<'_>, node: u32, records: &[u8], count: u32) {
        let stride = records.len() as u64 / u64::from(count.max(1));
        let infos = [graph::host_payloads(node, records, count, stride)];
        // SAFETY: `cb` is recording with the graph bound; `records` lives across the call.
        unsafe { graph::record_host_dispatch(&self.fns, cb, scratch.address.unwrap_or(0), scratch.size, &infos) };
    }

    /// Records the barrier that makes the graph's writes visible to the host.
    pub fn record_host_barrier(&self, cb: vk::CommandBuffer) {
        let src = (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE);
        memory_barrier(self.device, cb, src, (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ));
    }
}

impl Drop for Graph<'_> {
    fn drop(&mut self) {
        let d = self.device;
        // SAFETY: idle objects of this device (null handles are ignored); the
        // set is freed with its pool.
        unsafe {
            d.destroy_pipeline(self.pipeline, None);
            self.bindings.destroy(d);
            d.destroy_shader_module(self.module, None);
        }
    }
}
