//! The façade's object commands: the driver objects the runtime creates,
//! queries and destroys for itself (shader modules, pipelines, pipeline
//! layouts, query pools), as safe methods of [`DeviceDispatch`].
//!
//! Each method relies on the façade's invariant (see [`super`]): every
//! handle is a live object of this device, and one the runtime destroys is
//! its own and no longer in use by pending work. Creation takes Rust data
//! (create infos borrow what they point to) and returns the handle or the
//! driver's error; nothing takes allocation callbacks (the layer passes
//! none for its own objects).

use super::DeviceDispatch;
use ash::vk;
use std::fmt;

/// One value of `VK_KHR_pipeline_executable_properties`, read from the
/// union by its format.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum StatisticValue {
    Bool(vk::Bool32),
    Int(i64),
    Uint(u64),
    Float(f64),
}

impl fmt::Display for StatisticValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatisticValue::Bool(v) => v.fmt(f),
            StatisticValue::Int(v) => v.fmt(f),
            StatisticValue::Uint(v) => v.fmt(f),
            StatisticValue::Float(v) => v.fmt(f),
        }
    }
}

fn check<T>(result: vk::Result, value: T) -> Result<T, vk::Result> {
    if result == vk::Result::SUCCESS {
        Ok(value)
    } else {
        Err(result)
    }
}

impl DeviceDispatch {
    /// `vkCreateShaderModule` of `words`.
    pub(crate) fn create_shader_module(&self, words: &[u32]) -> Result<vk::ShaderModule, vk::Result> {
        let info = vk::ShaderModuleCreateInfo::default().code(words);
        let mut module = vk::ShaderModule::null();
        // SAFETY: the façade's invariant; the create info borrows `words`.
        let result =
            unsafe { (self.fp.fp_v1_0().create_shader_module)(self.handle(), &info, std::ptr::null(), &mut module) };
        check(result, module)
    }

    /// `vkDestroyShaderModule` of the runtime's own `module`.
    pub(crate) fn destroy_shader_module(&self, module: vk::ShaderModule) {
        // SAFETY: the façade's invariant.
        unsafe { (self.fp.fp_v1_0().destroy_shader_module)(self.handle(), module, std::ptr::null()) };
    }

    /// `vkCreateComputePipelines` of one pipeline (`info`'s chain borrows
    /// what it points to).
    pub(crate) fn create_compute_pipeline(
        &self,
        cache: vk::PipelineCache,
        info: &vk::ComputePipelineCreateInfo<'_>,
    ) -> Result<vk::Pipeline, vk::Result> {
        let mut pipeline = vk::Pipeline::null();
        // SAFETY: the façade's invariant; one create info, one handle.
        let result = unsafe {
            (self.fp.fp_v1_0().create_compute_pipelines)(self.handle(), cache, 1, info, std::ptr::null(), &mut pipeline)
        };
        check(result, pipeline)
    }

    /// `vkCreateGraphicsPipelines` of one pipeline: `info` with `stages`
    /// and `layout` in place of its own.
    ///
    /// `info` comes from the application's create info (its other arrays
    /// and `pNext` chain are the application's, valid for the call that
    /// passed them to the layer: the façade's invariant for it).
    pub(crate) fn create_graphics_pipeline(
        &self,
        cache: vk::PipelineCache,
        info: &vk::GraphicsPipelineCreateInfo<'_>,
        stages: &[vk::PipelineShaderStageCreateInfo<'_>],
        layout: vk::PipelineLayout,
    ) -> Result<vk::Pipeline, vk::Result> {
        let mut copy = *info;
        copy.stage_count = stages.len() as u32;
        copy.p_stages = stages.as_ptr();
        copy.layout = layout;
        let mut pipeline = vk::Pipeline::null();
        // SAFETY: the façade's invariant; `copy` and its stages live across
        // the call.
        let result = unsafe {
            (self.fp.fp_v1_0().create_graphics_pipelines)(
                self.handle(),
                cache,
                1,
                &copy,
                std::ptr::null(),
                &mut pipeline,
            )
        };
        check(result, pipeline)
    }

    /// `vkDestroyPipeline` of the runtime's own `pipeline` (null is ignored).
    pub(crate) fn destroy_pipeline(&self, pipeline: vk::Pipeline) {
        // SAFETY: the façade's invariant.
        unsafe { (self.fp.fp_v1_0().destroy_pipeline)(self.handle(), pipeline, std::ptr::null()) };
    }

    /// `vkCreatePipelineLayout`.
    pub(crate) fn create_pipeline_layout(
        &self,
        info: &vk::PipelineLayoutCreateInfo<'_>,
    ) -> Result<vk::PipelineLayout, vk::Result> {
        let mut layout = vk::PipelineLayout::null();
        // SAFETY: the façade's invariant; the create info borrows its arrays.
        let result =
            unsafe { (self.fp.fp_v1_0().create_pipeline_layout)(self.handle(), info, std::ptr::null(), &mut layout) };
        check(result, layout)
    }

    /// `vkDestroyPipelineLayout` of the runtime's own `layout` (null is ignored).
    pub(crate) fn destroy_pipeline_layout(&self, layout: vk::PipelineLayout) {
        // SAFETY: the façade's invariant.
        unsafe { (self.fp.fp_v1_0().destroy_pipeline_layout)(self.handle(), layout, std::ptr::null()) };
    }

    /// `vkCreateQueryPool`.
    pub(crate) fn create_query_pool(&self, info: &vk::QueryPoolCreateInfo<'_>) -> Result<vk::QueryPool, vk::Result> {
        let mut pool = vk::QueryPool::null();
        // SAFETY: the façade's invariant.
        let result = unsafe { (self.fp.fp_v1_0().create_query_pool)(self.handle(), info, std::ptr::null(), &mut pool) };
        check(result, pool)
    }

    /// `vkDestroyQueryPool` of the runtime's own `pool`.
    pub(crate) fn destroy_query_pool(&self, pool: vk::QueryPool) {
        // SAFETY: the façade's invariant.
        unsafe { (self.fp.fp_v1_0().destroy_query_pool)(self.handle(), pool, std::ptr::null()) };
    }

    /// `vkGetQueryPoolResults` of `results.len()` queries from `first` as
    /// 64-bit values, without waiting.
    pub(crate) fn get_query_pool_results_u64(
        &self,
        pool: vk::QueryPool,
        first: u32,
        results: &mut [u64],
    ) -> vk::Result {
        let count = results.len();
        // SAFETY: the façade's invariant; `results` holds `count` 64-bit
        // values, one every 8 bytes.
        unsafe {
            (self.fp.fp_v1_0().get_query_pool_results)(
                self.handle(),
                pool,
                first,
                count as u32,
                8 * count,
                results.as_mut_ptr().cast(),
                8,
                vk::QueryResultFlags::TYPE_64,
            )
        }
    }

    /// The statistics of `pipeline`'s first executable as (name, value),
    /// with the two-call idiom (`VK_KHR_pipeline_executable_properties`;
    /// `pipeline` created with `CAPTURE_STATISTICS`): `None` without the
    /// table, the driver's error when a call fails (`INCOMPLETE` on the
    /// second keeps what it wrote).
    pub(crate) fn pipeline_executable_statistics(
        &self,
        pipeline: vk::Pipeline,
    ) -> Option<Result<Vec<(String, StatisticValue)>, vk::Result>> {
        let fns = self.executable_properties.as_ref()?;
        let info = vk::PipelineExecutableInfoKHR::default().pipeline(pipeline).executable_index(0);
        let mut count = 0u32;
        // SAFETY: the façade's invariant; a count query.
        let result = unsafe {
            (fns.get_pipeline_executable_statistics_khr)(self.handle(), &info, &mut count, std::ptr::null_mut())
        };
        if result != vk::Result::SUCCESS {
            return Some(Err(result));
        }
        let mut stats = vec![vk::PipelineExecutableStatisticKHR::default(); count as usize];
        // SAFETY: as above, with room for `count` statistics.
        let result = unsafe {
            (fns.get_pipeline_executable_statistics_khr)(self.handle(), &info, &mut count, stats.as_mut_ptr())
        };
        if result != vk::Result::SUCCESS && result != vk::Result::INCOMPLETE {
            return Some(Err(result));
        }
        let read = |s: &vk::PipelineExecutableStatisticKHR<'_>| {
            let name = s.name_as_c_str().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            // SAFETY: the union member `format` names.
            let value = unsafe {
                match s.format {
                    vk::PipelineExecutableStatisticFormatKHR::BOOL32 => StatisticValue::Bool(s.value.b32),
                    vk::PipelineExecutableStatisticFormatKHR::INT64 => StatisticValue::Int(s.value.i64),
                    vk::PipelineExecutableStatisticFormatKHR::UINT64 => StatisticValue::Uint(s.value.u64),
                    _ => StatisticValue::Float(s.value.f64),
                }
            };
            (name, value)
        };
        Some(Ok(stats.iter().take(count as usize).map(read).collect()))
    }
}
