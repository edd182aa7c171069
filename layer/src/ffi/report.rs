//! Reporting of graph dispatch problems (overflow, invalid nodes) to the
//! application: submissions that contain graph dispatches are remembered;
//! at the next host synchronisation point that proves one finished
//! (`vkWaitForFences`, `vkGetFenceStatus`, `vkResetFences`,
//! `vkQueueWaitIdle`, `vkDeviceWaitIdle`, device destruction) each
//! dispatch's status slot is read, and a non-zero status becomes a
//! `tracing` error and an error message through the application's
//! `VK_EXT_debug_utils` messengers naming the graph and what went wrong.

use super::guard::guard_result;
use super::lookup::device_of;
use super::slice;
use crate::device::{DeviceState, PendingReport, StatusSlot};
use ash::vk::{self, Handle};
use std::ffi::CString;

/// `pMessageIdName` of the messages the layer sends.
pub(crate) const MESSAGE_ID: &str = "EMU-SE-execution-graph-status";

/// What each `GraphContext.status` bit means (abi and meta-shader bits).
const STATUS_BITS: [(u32, &str); 7] = [
    (1 << 0, "the scratch frame pool had no room for a level's records (they were dropped; later levels did not run)"),
    (1 << 1, "a node's records ran past the frames a key can number (they were dropped; later levels did not run)"),
    (1 << 2, "a node allocated payloads for a node index that does not exist (dropped)"),
    (1 << 3, "a node enqueued to itself with no recursion levels left (dropped)"),
    (1 << 4, "an allocation asked for more payloads than NodeMaxPayloadsAMDX (dropped)"),
    (1 << 5, "the dispatch's inputs had more records than the scratch frames hold (later work was dropped)"),
    (1 << 6, "a dispatch info named a node out of range or one that is not an API entry (dropped)"),
];

/// A readable account of a non-zero status word.
pub(crate) fn describe(status: u32) -> String {
    let parts: Vec<&str> = STATUS_BITS.iter().filter(|(bit, _)| status & bit != 0).map(|(_, text)| *text).collect();
    if parts.is_empty() {
        format!("unknown status {status:#x}")
    } else {
        parts.join("; ")
    }
}

/// Submissions whose status is kept for checking at most: an application
/// that never waits on a fence (timeline semaphores, or none at all) must
/// not grow the list without bound. Past it the oldest are forgotten
/// unchecked (the status ring has fewer slots anyway, see `status`).
const MAX_PENDING: usize = 4096;

/// Remembers the graph dispatches of a submission.
fn track(state: &DeviceState, queue: vk::Queue, fence: vk::Fence, buffers: impl Iterator<Item = vk::CommandBuffer>) {
    let slots: Vec<StatusSlot> = {
        let map = state.command_buffers.read();
        buffers.filter_map(|cb| map.get(&cb).map(|s| s.lock().status_slots.clone())).flatten().collect()
    };
    if !slots.is_empty() {
        let mut pending = state.pending_reports.lock();
        pending.push(PendingReport { queue, fence, slots });
        if pending.len() > MAX_PENDING {
            let excess = pending.len() - MAX_PENDING;
            pending.drain(..excess);
            tracing::debug!("{excess} graph submissions never waited on: their status goes unchecked");
        }
    }
}

/// Checks and forgets the pending submissions `done` says finished, and
/// every one submitted earlier to the same queue as one of them (a fence
/// signal covers all earlier commands in submission order, so submissions
/// without a fence are checked once a later one's fence is seen signalled).
fn report_finished(state: &DeviceState, done: impl Fn(&PendingReport) -> bool) {
    let finished: Vec<PendingReport> = {
        let mut pending = state.pending_reports.lock();
        let marks: Vec<(vk::Queue, bool)> = pending.iter().map(|p| (p.queue, done(p))).collect();
        let (finished, rest): (Vec<_>, Vec<_>) = pending.drain(..).zip(settled(&marks)).partition(|(_, s)| *s);
        *pending = rest.into_iter().map(|(p, _)| p).collect();
        finished.into_iter().map(|(p, _)| p).collect()
    };
    if finished.is_empty() {
        return;
    }
    for slot in finished.iter().flat_map(|p| &p.slots) {
        if let Some(profile) = &slot.profile {
            write_profile(state, slot.graph, profile);
        }
        if let Some(statistics) = &slot.statistics {
            write_statistics(state, slot.graph, statistics);
        }
    }
    let problems: Vec<(&StatusSlot, Vec<u32>)> = {
        let status = state.status.lock();
        let Some(status) = status.as_ref() else { return };
        finished
            .iter()
            .flat_map(|p| &p.slots)
            .map(|s| (s, status.take(s.slot)))
            .filter(|(_, words)| words.last().is_some_and(|&w| w != 0))
            .collect()
    };
    for (slot, words) in problems {
        report(state, slot, &words);
    }
}

/// Which of the pending submissions (queue, finished?), in submission
/// order, are finished: those marked, and every earlier one on the queue of
/// a marked one.
fn settled(marks: &[(vk::Queue, bool)]) -> Vec<bool> {
    let mut last: Vec<(vk::Queue, usize)> = Vec::new();
    for (i, &(queue, done)) in marks.iter().enumerate() {
        if done {
            match last.iter_mut().find(|(q, _)| *q == queue) {
                Some(entry) => entry.1 = i,
                None => last.push((queue, i)),
            }
        }
    }
    marks.iter().enumerate().map(|(i, &(queue, _))| last.iter().any(|&(q, l)| q == queue && i <= l)).collect()
}

/// Logs a finished dispatch's timestamps (info level) and, when the
/// `profile` setting names a file, appends them to it as a JSON line.
fn write_profile(state: &DeviceState, graph: vk::Pipeline, profile: &crate::graph::profile::Slot) {
    use std::io::Write as _;
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let Some(timings) = profile.read(&state.dispatch, state.physical.timestamp_period) else { return };
    tracing::info!("{}", timings.summary(graph));
    let Some(path) = state.instance.settings.profile.as_deref().filter(|p| *p != "log") else { return };
    let line = timings.to_json(graph, SEQUENCE.fetch_add(1, Ordering::Relaxed)).to_string();
    let written =
        std::fs::OpenOptions::new().create(true).append(true).open(path).and_then(|mut file| writeln!(file, "{line}"));
    if let Err(e) = written {
        tracing::warn!("profile: cannot append to {path}: {e}");
    }
}

/// Logs a finished dispatch's counts (info level) and, when the
/// `statistics` setting names a file, appends them to it as a JSON line.
fn write_statistics(state: &DeviceState, graph: vk::Pipeline, statistics: &crate::graph::statistics::Statistics) {
    use std::io::Write as _;
    let mut counts = statistics.read();
    counts["graph"] = serde_json::json!(format!("{graph:?}"));
    let line = counts.to_string();
    tracing::info!("statistics: {line}");
    let Some(path) = state.instance.settings.statistics.as_deref().filter(|p| *p != "log") else { return };
    let written =
        std::fs::OpenOptions::new().create(true).append(true).open(path).and_then(|mut file| writeln!(file, "{line}"));
    if let Err(e) = written {
        tracing::warn!("statistics: cannot append to {path}: {e}");
    }
}

/// Every pending submission (device idle or being destroyed).
pub(crate) fn report_all(state: &DeviceState) {
    report_finished(state, |_| true);
}

/// Where a problem began: `words` holds the status after the inputs, after
/// each level, and the final status (see `graph::record`).
pub(crate) fn locate(slot: &StatusSlot, words: &[u32]) -> String {
    let first = words.iter().position(|&w| w != 0).unwrap_or(words.len().saturating_sub(1));
    if first == 0 {
        return "while reading the dispatch's inputs".into();
    }
    // Word d + 1 was taken after level d (the final word after the last level).
    let level = (first - 1).min(slot.levels.len().saturating_sub(1));
    match slot.levels.get(level) {
        Some(nodes) => format!("at level {level}, which ran {nodes}"),
        None => "before any level ran".into(),
    }
}

fn report(state: &DeviceState, slot: &StatusSlot, words: &[u32]) {
    let (graph, status) = (slot.graph, words.last().copied().unwrap_or(0));
    let message = format!("execution graph {graph:?}: {}: {}", locate(slot, words), describe(status));
    tracing::error!("{message}");
    let instance = &state.instance;
    let Some(debug) = &instance.dispatch.debug_utils else { return };
    let (Ok(id), Ok(text)) = (CString::new(MESSAGE_ID), CString::new(message)) else { return };
    let objects = [vk::DebugUtilsObjectNameInfoEXT {
        object_type: vk::ObjectType::PIPELINE,
        object_handle: graph.as_raw(),
        ..Default::default()
    }];
    let data = vk::DebugUtilsMessengerCallbackDataEXT::default().message_id_name(&id).message(&text).objects(&objects);
    // SAFETY: the application's instance, which enabled VK_EXT_debug_utils;
    // the callback data lives across the call.
    unsafe {
        (debug.submit_debug_utils_message_ext)(
            instance.dispatch.handle,
            vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
            vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION,
            &data,
        )
    };
}

pub(super) unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo<'static>,
    fence: vk::Fence,
) -> vk::Result {
    guard_result("vkQueueSubmit", || {
        // SAFETY: valid queue.
        let Some(state) = (unsafe { device_of(queue) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: forwarding.
        let result = unsafe { (state.dispatch.fp.fp_v1_0().queue_submit)(queue, count, submits, fence) };
        if result == vk::Result::SUCCESS {
            // SAFETY: the application's submit infos and their arrays.
            let infos = unsafe { slice(submits, count) };
            // SAFETY: as above.
            let buffers = infos.iter().flat_map(|s| unsafe { slice(s.p_command_buffers, s.command_buffer_count) });
            track(&state, queue, fence, buffers.copied());
        }
        result
    })
}

/// Shared body of `vkQueueSubmit2` and `vkQueueSubmit2KHR`.
fn queue_submit2(
    name: &'static str,
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'static>,
    fence: vk::Fence,
) -> vk::Result {
    guard_result(name, || {
        // SAFETY: valid queue.
        let Some(state) = (unsafe { device_of(queue) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: forwarding (the core entry point serves the KHR alias on 1.3 devices).
        let result = unsafe { (state.dispatch.fp.fp_v1_3().queue_submit2)(queue, count, submits, fence) };
        if result == vk::Result::SUCCESS {
            // SAFETY: the application's submit infos and their arrays.
            let infos = unsafe { slice(submits, count) };
            let buffers =
                // SAFETY: as above.
                infos.iter().flat_map(|s| unsafe { slice(s.p_command_buffer_infos, s.command_buffer_info_count) });
            track(&state, queue, fence, buffers.map(|b| b.command_buffer));
        }
        result
    })
}

pub(super) unsafe extern "system" fn queue_submit2_core(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'static>,
    fence: vk::Fence,
) -> vk::Result {
    queue_submit2("vkQueueSubmit2", queue, count, submits, fence)
}

pub(super) unsafe extern "system" fn queue_submit2_khr(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'static>,
    fence: vk::Fence,
) -> vk::Result {
    queue_submit2("vkQueueSubmit2KHR", queue, count, submits, fence)
}

pub(super) unsafe extern "system" fn wait_for_fences(
    device: vk::Device,
    count: u32,
    fences: *const vk::Fence,
    wait_all: vk::Bool32,
    timeout: u64,
) -> vk::Result {
    guard_result("vkWaitForFences", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        let fp = state.dispatch.fp.fp_v1_0();
        // SAFETY: forwarding.
        let result = unsafe { (fp.wait_for_fences)(device, count, fences, wait_all, timeout) };
        if result == vk::Result::SUCCESS {
            // SAFETY: the application's fence array.
            let waited = unsafe { slice(fences, count) };
            report_finished(&state, |p| {
                // SAFETY: valid device and fence; a status query has no side effects.
                waited.contains(&p.fence) && unsafe { (fp.get_fence_status)(device, p.fence) } == vk::Result::SUCCESS
            });
        }
        result
    })
}

pub(super) unsafe extern "system" fn get_fence_status(device: vk::Device, fence: vk::Fence) -> vk::Result {
    guard_result("vkGetFenceStatus", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: forwarding.
        let result = unsafe { (state.dispatch.fp.fp_v1_0().get_fence_status)(device, fence) };
        if result == vk::Result::SUCCESS {
            report_finished(&state, |p| p.fence == fence);
        }
        result
    })
}

pub(super) unsafe extern "system" fn reset_fences(
    device: vk::Device,
    count: u32,
    fences: *const vk::Fence,
) -> vk::Result {
    guard_result("vkResetFences", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // A fence may only be reset once its submission finished.
        // SAFETY: the application's fence array.
        let reset = unsafe { slice(fences, count) };
        report_finished(&state, |p| reset.contains(&p.fence));
        // SAFETY: forwarding.
        unsafe { (state.dispatch.fp.fp_v1_0().reset_fences)(device, count, fences) }
    })
}

pub(super) unsafe extern "system" fn queue_wait_idle(queue: vk::Queue) -> vk::Result {
    guard_result("vkQueueWaitIdle", || {
        // SAFETY: valid queue.
        let Some(state) = (unsafe { device_of(queue) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: forwarding.
        let result = unsafe { (state.dispatch.fp.fp_v1_0().queue_wait_idle)(queue) };
        if result == vk::Result::SUCCESS {
            report_finished(&state, |p| p.queue == queue);
        }
        result
    })
}

pub(super) unsafe extern "system" fn device_wait_idle(device: vk::Device) -> vk::Result {
    guard_result("vkDeviceWaitIdle", || {
        // SAFETY: valid device.
        let Some(state) = (unsafe { device_of(device) }) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
        // SAFETY: forwarding.
        let result = unsafe { (state.dispatch.fp.fp_v1_0().device_wait_idle)(device) };
        if result == vk::Result::SUCCESS {
            report_all(&state);
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signalled_fence_settles_the_earlier_submissions_of_its_queue() {
        use ash::vk::Handle;
        let (a, b) = (vk::Queue::from_raw(1), vk::Queue::from_raw(2));
        let marks = [(a, false), (b, false), (a, false), (a, true), (b, false), (a, false)];
        assert_eq!(settled(&marks), vec![true, false, true, true, false, false]);
        assert_eq!(settled(&[(b, false), (b, true)]), vec![true, true]);
        assert_eq!(settled(&[]), Vec::<bool>::new());
    }

    #[test]
    fn the_first_level_with_a_problem_is_named() {
        let slot = StatusSlot {
            slot: 0,
            graph: vk::Pipeline::null(),
            levels: vec!["\"a\"[0]".to_string(), "\"b\"[0]".to_string()].into(),
            profile: None,
            statistics: None,
        };
        assert_eq!(locate(&slot, &[0, 1, 1, 0, 1]), "at level 0, which ran \"a\"[0]");
        assert_eq!(locate(&slot, &[0, 0, 0, 0, 1]), "at level 1, which ran \"b\"[0]", "final word: last level");
        assert_eq!(locate(&slot, &[64, 64, 64, 64, 64]), "while reading the dispatch's inputs");
    }

    #[test]
    fn status_bits_are_described() {
        assert!(describe(1).contains("frame pool had no room"));
        assert!(describe(0b100_0001).contains("; "), "two bits, two parts");
        assert!(describe(1 << 20).contains("unknown"));
    }
}
