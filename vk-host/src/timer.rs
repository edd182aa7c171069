//! GPU time of a span of a command buffer: two timestamp queries, written
//! at the bottom of the pipe (once all earlier commands are done) before and
//! after the span; and the queue family's tick length and valid bits.

use ash::vk;

use crate::{vk_err, Result};

/// `(ns per tick, valid-bit mask)` of `family`, when it writes timestamps.
pub fn timestamp_info(instance: &ash::Instance, pd: vk::PhysicalDevice, family: u32) -> Option<(f64, u64)> {
    // SAFETY: valid physical device.
    let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
    let bits = families.get(family as usize)?.timestamp_valid_bits;
    // SAFETY: as above.
    let period = unsafe { instance.get_physical_device_properties(pd) }.limits.timestamp_period;
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    (bits > 0).then_some((f64::from(period), mask))
}

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
    /// A timer on `device`, or `None` when its queue does not write
    /// timestamps (`timestamps` as [`timestamp_info`] gives them).
    pub fn new(device: &'d ash::Device, timestamps: Option<(f64, u64)>) -> Result<Option<Self>> {
        let Some((period, mask)) = timestamps else { return Ok(None) };
        let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2);
        // SAFETY: valid device and create info.
        let pool = unsafe { device.create_query_pool(&info, None) }.map_err(vk_err("vkCreateQueryPool"))?;
        Ok(Some(Self { device, pool, period, mask }))
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
    pub fn micros(&self) -> Result<f64> {
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
        .map_err(vk_err("vkGetQueryPoolResults"))?;
        let ticks = (stamps[1] & self.mask).wrapping_sub(stamps[0] & self.mask) & self.mask;
        Ok(ticks as f64 * self.period / 1000.0)
    }
}

impl Drop for Timer<'_> {
    fn drop(&mut self) {
        // SAFETY: the pool is idle (its user waits for the device before this drops).
        unsafe { self.device.destroy_query_pool(self.pool, None) };
    }
}
