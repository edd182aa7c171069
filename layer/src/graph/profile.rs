//! The `profile` setting: GPU timestamps around every pass the layer records
//! for a graph dispatch (the upload of the inputs, each node dispatch, each
//! meta pass, each barrier, the status copy), turned into GPU time per pass,
//! per level and per node once the submission has finished.
//!
//! A timestamp is written at the start of the dispatch and after each pass
//! (`VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT`: when everything recorded before
//! it has completed); a pass's time is the difference to the previous one.
//! Node dispatches of one level run concurrently, so each one's time is how
//! much later it finished than the one recorded before it; the level's total
//! is exact. Barrier passes hold the time the GPU spent draining the work
//! before them and starting what follows.
//!
//! Queries come from one pool per device used as a ring ([`QueryRing`]); a
//! dispatch reserves as many as it can need when it is recorded.

use crate::dispatch::DeviceDispatch;
use ash::vk;
use parking_lot::Mutex;
use std::cell::RefCell;
use std::fmt::Write as _;
use std::sync::Arc;

/// Queries in a device's ring (a dispatch of 32 levels of 4 nodes uses ~260).
pub const RING_QUERIES: u32 = 16384;

/// What one profiled pass was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pass {
    /// `upload`, `node`, `plan`, `advance`, `gridscan`, `entry_rank`,
    /// `entry_records`, `barrier`, `status`.
    pub kind: &'static str,
    /// The level it belongs to (none for the inputs and the status copy).
    pub level: Option<u32>,
    /// The node it ran: (name, index).
    pub node: Option<(String, u32)>,
}

impl Pass {
    pub fn new(kind: &'static str, level: Option<usize>) -> Pass {
        Pass { kind, level: level.map(|l| l as u32), node: None }
    }
}

/// The device's timestamp pool, handed out in contiguous ranges.
pub struct QueryRing {
    pool: vk::QueryPool,
    next: u32,
}

impl QueryRing {
    pub fn create(device: &DeviceDispatch) -> Result<Self, vk::Result> {
        let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(RING_QUERIES);
        let pool = device.create_query_pool(&info)?;
        Ok(QueryRing { pool, next: 0 })
    }

    /// `count` consecutive queries (wrapping to the start of the pool).
    fn reserve(&mut self, count: u32) -> Option<u32> {
        if count > RING_QUERIES {
            return None;
        }
        if self.next + count > RING_QUERIES {
            self.next = 0;
        }
        let first = self.next;
        self.next += count;
        Some(first)
    }

    pub fn destroy(&self, device: &DeviceDispatch) {
        // The device is idle at destruction; the pool is ours.
        device.destroy_query_pool(self.pool);
    }
}

/// The profile of one dispatch being recorded.
pub struct Recording {
    pool: vk::QueryPool,
    first: u32,
    capacity: u32,
    passes: RefCell<Vec<Pass>>,
}

impl Recording {
    /// Reserves `capacity` queries (the start and up to `capacity - 1`
    /// passes) from the device's `ring` (created on first use); `None`
    /// (after a warning) when no pool can be had.
    pub fn reserve(device: &DeviceDispatch, ring: &Mutex<Option<QueryRing>>, capacity: u32) -> Option<Recording> {
        let mut ring = ring.lock();
        if ring.is_none() {
            match QueryRing::create(device) {
                Ok(created) => *ring = Some(created),
                Err(e) => {
                    tracing::warn!("profile: no timestamp query pool ({e:?}); dispatches are not profiled");
                    return None;
                }
            }
        }
        let ring = ring.as_mut()?;
        let first = ring.reserve(capacity)?;
        Some(Recording { pool: ring.pool, first, capacity, passes: RefCell::new(Vec::new()) })
    }

    /// Resets the range and writes the start timestamp.
    pub fn begin(&self, device: &DeviceDispatch, cb: vk::CommandBuffer) {
        // Outside a render pass; the range is ours.
        device.cmd_reset_query_pool(cb, self.pool, self.first, self.capacity);
        device.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, self.pool, self.first);
    }

    /// Writes the timestamp that ends `pass` (dropped past the capacity).
    pub fn end_pass(&self, device: &DeviceDispatch, cb: vk::CommandBuffer, pass: Pass) {
        let mut passes = self.passes.borrow_mut();
        let index = passes.len() as u32 + 1;
        if index >= self.capacity {
            return;
        }
        // The query lies in the reserved range.
        device.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, self.pool, self.first + index);
        passes.push(pass);
    }

    /// What the host needs once the submission finished.
    pub fn finish(self) -> Slot {
        Slot { pool: self.pool, first: self.first, passes: self.passes.into_inner().into() }
    }
}

/// A recorded dispatch's profile, kept with its status slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub pool: vk::QueryPool,
    pub first: u32,
    pub passes: Arc<[Pass]>,
}

/// GPU time of each pass of one finished dispatch, in ns.
#[derive(Clone, Debug, PartialEq)]
pub struct Timings {
    pub passes: Vec<(Pass, f64)>,
}

impl Slot {
    /// Reads the timestamps of a finished submission (`timestamp_period`:
    /// the device's ns a tick).
    pub fn read(&self, device: &DeviceDispatch, timestamp_period: f32) -> Option<Timings> {
        let count = self.passes.len() + 1;
        let mut ticks = vec![0u64; count];
        // The range is ours and its submission finished.
        let result = device.get_query_pool_results_u64(self.pool, self.first, &mut ticks);
        if result != vk::Result::SUCCESS {
            tracing::warn!("profile: timestamps unavailable ({result:?})");
            return None;
        }
        let period = f64::from(timestamp_period);
        let passes = self
            .passes
            .iter()
            .zip(ticks.windows(2))
            .map(|(p, w)| (p.clone(), w[1].saturating_sub(w[0]) as f64 * period))
            .collect();
        Some(Timings { passes })
    }
}

impl Timings {
    pub fn total_ns(&self) -> f64 {
        self.passes.iter().map(|(_, ns)| ns).sum()
    }

    /// GPU time of each level (passes tagged with it), in level order.
    pub fn per_level(&self) -> Vec<(u32, f64)> {
        let mut levels: Vec<(u32, f64)> = Vec::new();
        for (pass, ns) in &self.passes {
            let Some(level) = pass.level else { continue };
            match levels.iter_mut().find(|(l, _)| *l == level) {
                Some(entry) => entry.1 += ns,
                None => levels.push((level, *ns)),
            }
        }
        levels.sort_by_key(|(l, _)| *l);
        levels
    }

    /// GPU time of each node's dispatches over all levels.
    pub fn per_node(&self) -> Vec<((String, u32), f64)> {
        let mut nodes: Vec<((String, u32), f64)> = Vec::new();
        for (pass, ns) in &self.passes {
            let Some(node) = &pass.node else { continue };
            match nodes.iter_mut().find(|(n, _)| n == node) {
                Some(entry) => entry.1 += ns,
                None => nodes.push((node.clone(), *ns)),
            }
        }
        nodes
    }

    /// GPU time of each pass kind (summed), in first-seen order.
    pub fn per_kind(&self) -> Vec<(&'static str, f64)> {
        let mut kinds: Vec<(&'static str, f64)> = Vec::new();
        for (pass, ns) in &self.passes {
            match kinds.iter_mut().find(|(k, _)| *k == pass.kind) {
                Some(entry) => entry.1 += ns,
                None => kinds.push((pass.kind, *ns)),
            }
        }
        kinds
    }

    /// One log line: total, per kind, per level.
    pub fn summary(&self, graph: vk::Pipeline) -> String {
        let mut line = format!("profile: graph {graph:?}: {:.1} µs;", self.total_ns() / 1e3);
        for (kind, ns) in self.per_kind() {
            let _ = write!(line, " {kind} {:.1}", ns / 1e3);
        }
        line.push_str("; levels");
        for (level, ns) in self.per_level() {
            let _ = write!(line, " {level}:{:.1}", ns / 1e3);
        }
        line
    }

    /// One JSON object (a line of the profile file).
    pub fn to_json(&self, graph: vk::Pipeline, sequence: u64) -> serde_json::Value {
        use serde_json::json;
        let passes: Vec<_> = self
            .passes
            .iter()
            .map(|(p, ns)| {
                json!({
                    "kind": p.kind,
                    "level": p.level,
                    "node": p.node.as_ref().map(|(n, _)| n.clone()),
                    "index": p.node.as_ref().map(|(_, i)| *i),
                    "gpu_us": ns / 1e3,
                })
            })
            .collect();
        let levels: Vec<_> =
            self.per_level().into_iter().map(|(l, ns)| json!({ "level": l, "gpu_us": ns / 1e3 })).collect();
        let nodes: Vec<_> = self
            .per_node()
            .into_iter()
            .map(|((n, i), ns)| json!({ "node": n, "index": i, "gpu_us": ns / 1e3 }))
            .collect();
        let kinds: Vec<_> =
            self.per_kind().into_iter().map(|(k, ns)| json!({ "kind": k, "gpu_us": ns / 1e3 })).collect();
        json!({
            "graph": format!("{graph:?}"),
            "dispatch": sequence,
            "total_gpu_us": self.total_ns() / 1e3,
            "kinds": kinds,
            "levels": levels,
            "nodes": nodes,
            "passes": passes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_by_level_node_and_kind() {
        let node = |name: &str, level| Pass { kind: "node", level: Some(level), node: Some((name.into(), 0)) };
        let t = Timings {
            passes: vec![
                (Pass::new("upload", None), 1000.0),
                (node("a", 0), 2000.0),
                (Pass::new("barrier", Some(0)), 500.0),
                (node("b", 1), 3000.0),
                (node("a", 1), 1000.0),
            ],
        };
        assert_eq!(t.total_ns(), 7500.0);
        assert_eq!(t.per_level(), vec![(0, 2500.0), (1, 4000.0)]);
        assert_eq!(t.per_node(), vec![(("a".into(), 0), 3000.0), (("b".into(), 0), 3000.0)]);
        assert_eq!(t.per_kind(), vec![("upload", 1000.0), ("node", 6000.0), ("barrier", 500.0)]);
        let json = t.to_json(vk::Pipeline::null(), 3);
        assert_eq!(json["passes"].as_array().map(Vec::len), Some(5));
        assert_eq!(json["levels"][1]["gpu_us"], 4.0);
    }
}
