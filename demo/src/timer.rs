//! GPU time of a span of a command buffer: two timestamp queries, written
//! at the bottom of the pipe (once all earlier commands are done) before and
//! after the span.

use ash::vk;

use crate::gpu::Gpu;

/// A two-query timestamp pool; destroyed on drop.
pub struct Timer<'d> {
    device: &'d ash::Device,
    pool: vk::QueryPool,
    /// Nanoseconds per tick.
    period: f64,
    /// Valid bits of a timestamp.
    mask: u64,
}

impl<'d> Timer<'d> {
    /// A timer, or `None` when the queue does not write timestamps.
    pub fn new(gpu: &'d Gpu) -> Result<Option<Self>, String> {
        let Some((period, mask)) = gpu.timestamps else { return Ok(None) };
        let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2);
        // SAFETY: valid device and create info.
        let pool =
            unsafe { gpu.device.create_query_pool(&info, None) }.map_err(|e| format!("vkCreateQueryPool: {e:?}"))?;
        Ok(Some(Self { device: &gpu.device, pool, period, mask }))
    }

    /// Records the reset of both queries (before the span, outside it).
    pub fn record_reset(&self, cb: vk::CommandBuffer) {
        // SAFETY: `cb` is recording; the pool is ours.
        unsafe { self.device.cmd_reset_query_pool(cb, self.pool, 0, 2) };
    }

    /// Records timestamp `query` (0: start, 1: end) once all earlier work is done.
    pub fn record_stamp(&self, cb: vk::CommandBuffer, query: u32) {
        // SAFETY: `cb` is recording; the query was reset earlier in `cb`.
        unsafe { self.device.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, self.pool, query) };
    }

    /// Microseconds between the two stamps of the last completed submission.
    pub fn micros(&self) -> Result<f64, String> {
        let mut stamps = [0u64; 2];
        // SAFETY: valid pool; the submission that wrote both queries completed.
        unsafe {
            self.device.get_query_pool_results(
                self.pool,
                0,
                &mut stamps,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .map_err(|e| format!("vkGetQueryPoolResults: {e:?}"))?;
        let ticks = (stamps[1] & self.mask).wrapping_sub(stamps[0] & self.mask) & self.mask;
        Ok(ticks as f64 * self.period / 1000.0)
    }
}

impl Drop for Timer<'_> {
    fn drop(&mut self) {
        // SAFETY: the pool is idle (the device waits before this drops).
        unsafe { self.device.destroy_query_pool(self.pool, None) };
    }
}
