//! Kernel reuse while one execution graph is created. Stages that come from
//! the same shader module parse and analyze it once; stages that lower to the
//! same kernel (same module, entry point, specialization and lowering options,
//! a kernel that does not read its shader index) share one lowering and one
//! driver pipeline. A node array of thousands of members built from one entry
//! point is the common case: driver compiles dominate creation time (lavapipe
//! 22.3: about 3 ms and 600 KB per compute pipeline), so a graph costs what
//! its distinct kernels cost, not what its stages count. Lowerings (and
//! analyses) also come from the device's [`super::lowered_cache`] when an
//! earlier creation made them.

use super::driver::compiled_pipeline;
use super::errors::GraphError;
use super::gpu::Gpu;
use super::lowered_cache::index_free;
use super::stage::NodeStage;
use ash::vk;
use spirv_lowering::{LowerOptions, LoweredNode, NodeShaderInfo, ParsedModule, SpecMap};
use std::collections::HashMap;
use std::ffi::CStr;
use std::rc::Rc;
use std::sync::Arc;

/// A shader module's words, identified by their allocation: stages created
/// from one `VkShaderModule` share it.
type ModuleKey = *const u32;

fn module_key(stage: &NodeStage) -> ModuleKey {
    Arc::as_ptr(&stage.words).cast()
}

/// What makes two stages the same kernel on the driver.
#[derive(Clone, PartialEq, Eq, Hash)]
struct KernelKey {
    module: ModuleKey,
    /// The raw specialization data the driver compiles with.
    specialization: Vec<(u32, Vec<u8>)>,
    options: LowerOptions,
}

/// A lowered kernel and its driver pipeline.
#[derive(Clone)]
pub struct Kernel {
    pub lowered: Arc<LoweredNode>,
    pub pipeline: vk::Pipeline,
    /// The driver found the pipeline in the application's pipeline cache.
    pub cache_hit: bool,
}

/// The modules, analyses and kernels of one graph under construction. It
/// owns the pipelines it creates until [`KernelCache::into_pipelines`]; if
/// creation fails it destroys them when dropped.
pub struct KernelCache<'a> {
    device: &'a Gpu,
    cache: vk::PipelineCache,
    layout: vk::PipelineLayout,
    flags: vk::PipelineCreateFlags,
    modules: HashMap<ModuleKey, Rc<ParsedModule>>,
    analyses: HashMap<(ModuleKey, SpecMap), Arc<[NodeShaderInfo]>>,
    /// Kernels that read no shader index, keyed with `shader_index` 0.
    any_index: HashMap<KernelKey, Kernel>,
    /// Kernels that read it, keyed with their own.
    per_index: HashMap<KernelKey, Kernel>,
    pipelines: Vec<vk::Pipeline>,
}

impl<'a> KernelCache<'a> {
    /// Kernels will be compiled for `layout` with `flags` through the
    /// application's `cache`.
    pub fn new(
        device: &'a Gpu,
        cache: vk::PipelineCache,
        layout: vk::PipelineLayout,
        flags: vk::PipelineCreateFlags,
    ) -> Self {
        KernelCache {
            device,
            cache,
            layout,
            flags,
            modules: HashMap::new(),
            analyses: HashMap::new(),
            any_index: HashMap::new(),
            per_index: HashMap::new(),
            pipelines: Vec::new(),
        }
    }

    fn parsed(&mut self, stage: &NodeStage) -> Result<Rc<ParsedModule>, GraphError> {
        let key = module_key(stage);
        if let Some(parsed) = self.modules.get(&key) {
            return Ok(parsed.clone());
        }
        let parsed = Rc::new(
            ParsedModule::parse(&stage.words)
                .map_err(|error| GraphError::Lower { node: stage.entry_point.clone(), error })?,
        );
        self.modules.insert(key, parsed.clone());
        Ok(parsed)
    }

    /// The analysis of every entry point of the stage's module under `spec`
    /// (from the device's cache when an earlier creation made it).
    pub fn analyze(&mut self, stage: &NodeStage, spec: &SpecMap) -> Result<Arc<[NodeShaderInfo]>, GraphError> {
        let key = (module_key(stage), spec.clone());
        if let Some(infos) = self.analyses.get(&key) {
            return Ok(infos.clone());
        }
        let kept = self.device.lowered.lock().analysis(&stage.words, spec);
        let infos = match kept {
            Some(infos) => infos,
            None => {
                let infos: Arc<[NodeShaderInfo]> = self
                    .parsed(stage)?
                    .analyze(spec)
                    .map_err(|error| GraphError::Lower { node: stage.entry_point.clone(), error })?
                    .into();
                self.device.lowered.lock().keep_analysis(&stage.words, spec, infos.clone());
                infos
            }
        };
        self.analyses.insert(key, infos.clone());
        Ok(infos)
    }

    /// The stage's kernel lowered with `options` and compiled with `entry`
    /// and `spec` (`node` names it in errors), from an earlier stage when one
    /// lowered to the same kernel. The lowering itself comes from the
    /// device's cache when an earlier creation made it.
    pub fn kernel(
        &mut self,
        stage: &NodeStage,
        options: LowerOptions,
        node: &str,
        (entry, spec): (&CStr, Option<&vk::SpecializationInfo<'_>>),
    ) -> Result<Kernel, GraphError> {
        let exact = KernelKey {
            module: module_key(stage),
            specialization: stage.specialization.clone(),
            options: options.clone(),
        };
        let any = KernelKey { options: index_free(&options), ..exact.clone() };
        if let Some(kernel) = self.any_index.get(&any).or_else(|| self.per_index.get(&exact)) {
            return Ok(kernel.clone());
        }
        let kept = self.device.lowered.lock().kernel(&stage.words, &options);
        let lowered = match kept {
            Some(lowered) => {
                tracing::debug!("node \"{node}\": lowered kernel taken from the device's cache");
                lowered
            }
            None => {
                let lowered = Arc::new(
                    self.parsed(stage)?
                        .lower(&options)
                        .map_err(|error| GraphError::Lower { node: node.to_string(), error })?,
                );
                self.device.lowered.lock().keep_kernel(&stage.words, &options, lowered.clone());
                lowered
            }
        };
        let compiled =
            compiled_pipeline(self.device, self.cache, self.flags, &lowered.words, entry, self.layout, spec)?;
        let pipeline = compiled.pipeline;
        if let Some(stats) = &compiled.statistics {
            tracing::info!("node \"{node}\" kernel: {stats}");
        }
        self.pipelines.push(pipeline);
        let reads_index = lowered.reads_shader_index;
        let cache_hit = compiled.feedback.contains(vk::PipelineCreationFeedbackFlags::APPLICATION_PIPELINE_CACHE_HIT);
        let kernel = Kernel { lowered, pipeline, cache_hit };
        if reads_index {
            self.per_index.insert(exact, kernel.clone());
        } else {
            self.any_index.insert(any, kernel.clone());
        }
        Ok(kernel)
    }

    /// The distinct pipelines created, handed to the graph that owns them now.
    pub fn into_pipelines(mut self) -> Vec<vk::Pipeline> {
        std::mem::take(&mut self.pipelines)
    }
}

impl Drop for KernelCache<'_> {
    fn drop(&mut self) {
        for &p in &self.pipelines {
            // Created for the graph under construction, never handed out.
            self.device.dispatch.destroy_pipeline(p);
        }
    }
}
