//! Reporting of graph dispatch problems (overflow, invalid nodes) to the
//! application: submissions that contain graph dispatches are remembered;
//! at the next host synchronisation point that proves one finished
//! (`vkWaitForFences`, `vkGetFenceStatus`, `vkResetFences`,
//! `vkQueueWaitIdle`, `vkDeviceWaitIdle`, device destruction) each
//! dispatch's status slot is read, and a non-zero status becomes a
//! `tracing` error and an error message through the application's
//! `VK_EXT_debug_utils` messengers naming the graph and what went wrong:
//! the first fault a kernel recorded (which node, at which level, on which
//! output, with which value) when there is one, else the level the status
//! first shows and what its bits mean.

use super::guard::guard_result;
use super::lookup::{device_of, with_submitted};
use super::slice;
use crate::device::{DeviceState, PendingReport, StatusSlot};
use crate::graph::scratch::STATUS_WORDS;
use crate::graph::status::{GraphNames, OutputNames};
use ash::vk::{self, Handle};
use spirv_lowering::abi::{
    FAULT_GRID, FAULT_INPUT_INDEX, FAULT_KIND, FAULT_LEVEL, FAULT_LEVEL_WORKGROUPS, FAULT_NODE, FAULT_NODE_INDEX,
    FAULT_OUTPUT, FAULT_PAYLOAD_INDEX, FAULT_RECURSION, FAULT_TOO_MANY_PAYLOADS, FAULT_VALUES, MAX_LEVEL_WORKGROUPS,
    MAX_RECORD_WORKGROUPS, NO_NODE, STATUS_GRID_LIMIT, STATUS_INVALID_NODE, STATUS_LEVEL_WORKGROUPS,
    STATUS_PAYLOAD_BOUNDS, STATUS_RECURSION_LIMIT, STATUS_TOO_MANY_PAYLOADS,
};
use std::ffi::CString;

/// `pMessageIdName` of the messages the layer sends.
pub(crate) const MESSAGE_ID: &str = "EMU-SE-execution-graph-status";

/// What each `GraphContext.status` bit means (abi and meta-shader bits).
const STATUS_BITS: [(u32, &str); 10] = [
    (1 << 0, "the scratch frame pool had no room for a level's records (they were dropped; later levels did not run)"),
    (1 << 1, "a node's records ran past the frames a key can number (they were dropped; later levels did not run)"),
    (1 << 2, "a node allocated payloads for a node index that does not exist (dropped)"),
    (1 << 3, "a node enqueued to itself with no recursion levels left (dropped)"),
    (1 << 4, "an allocation asked for more payloads than NodeMaxPayloadsAMDX (dropped)"),
    (1 << 5, "the dispatch's inputs had more records than the scratch frames hold (later work was dropped)"),
    (1 << 6, "a dispatch info named a node out of range or one that is not an API entry (dropped)"),
    (
        1 << 7,
        "a record's dispatch grid was past its target's MaxNumWorkgroupsAMDX or the workgroups a record may ask for \
         (dropped)",
    ),
    (1 << 8, "a level's launches asked for more workgroups than a level launches, one alone or all together (dropped)"),
    (
        1 << 9,
        "a node indexed an output record past its allocation or an input record past those it received (clamped \
         to the last one)",
    ),
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

/// The final status word of a slot's words (status words, then the fault record).
fn final_status(words: &[u32]) -> u32 {
    words.get(STATUS_WORDS as usize - 1).copied().unwrap_or(0)
}

/// `FAULT_NODE_INDEX`'s value word holding the node-array index: the
/// allocation faults all record (count, index) (`spirv_lowering`'s
/// `passes::allocate`).
const NODE_INDEX_VALUE: u32 = 1;

/// `FAULT_LEVEL_WORKGROUPS`'s third value when the launch alone fitted but
/// not with the level's other launches (the count is the launch's alone).
const LEVEL_PAST_WITH_OTHERS: u32 = 2;

/// How a message names output `k` of a node: its target name (`to "item"`)
/// or, unknown, its number.
fn output_phrase(k: u32, output: Option<&OutputNames>) -> String {
    match output {
        Some(out) => format!("its output to \"{}\"", out.target),
        None if k == NO_NODE => "an output".into(),
        None => format!("its output {k}"),
    }
}

/// The sentence a dispatch's fault record (`abi::FAULT_WORDS` words) makes
/// with its graph's `names`, and the status bit that fault raises; `None`
/// when the record holds no fault. Numbers `names` lacks are written as
/// numbers.
pub(crate) fn fault_sentence(fault: &[u32], names: &GraphNames) -> Option<(String, u32)> {
    let word = |i: u32| fault.get(i as usize).copied().unwrap_or(0);
    let value = |i: u32| word(FAULT_VALUES + i);
    let kind = word(FAULT_KIND);
    if kind == 0 {
        return None;
    }
    let (slot, level, k) = (word(FAULT_NODE), word(FAULT_LEVEL), word(FAULT_OUTPUT));
    let node = match names.nodes.get(slot as usize) {
        Some(name) => format!("node {name}"),
        None => format!("node slot {slot}"),
    };
    let output = names.outputs.get(slot as usize).and_then(|outputs| outputs.get(k as usize));
    let on_output = output_phrase(k, output);
    let at = format!("{node} at level {level}");
    let sentence = match kind {
        FAULT_GRID => {
            let target = match output {
                Some(OutputNames { only_node: Some(target), .. }) => format!("to {target}"),
                Some(out) => format!("to node array \"{}\" (from index {})", out.target, out.base_index),
                None => format!("on {on_output}"),
            };
            let limit = match output.and_then(|o| o.max_grid) {
                Some([x, y, z]) => format!("its MaxNumWorkgroupsAMDX ({x}, {y}, {z})"),
                None => "its target's MaxNumWorkgroupsAMDX".into(),
            };
            format!(
                "{at} enqueued a grid of ({}, {}, {}) {target}, past {limit} or the {MAX_RECORD_WORKGROUPS} \
                 workgroups a record may ask for (the record was dropped)",
                value(0),
                value(1),
                value(2)
            )
        }
        FAULT_LEVEL_WORKGROUPS => {
            let count = u64::from(value(0)) | u64::from(value(1)) << 32;
            let most = u64::from(MAX_LEVEL_WORKGROUPS);
            match value(2) {
                LEVEL_PAST_WITH_OTHERS => format!(
                    "{at}: its records asked for {count} workgroups, which with the level's other launches are \
                     more than the {most} a level launches (they were dropped)"
                ),
                // The enqueues saw the count pass the limit: it may have wrapped since.
                1 if count <= most => format!(
                    "{at}: its records asked for more than {most} workgroups, more than the {most} a level \
                     launches (they were dropped)"
                ),
                _ => format!(
                    "{at}: its records asked for {count} workgroups, more than the {most} a level launches (they \
                     were dropped)"
                ),
            }
        }
        FAULT_TOO_MANY_PAYLOADS => {
            let limit = match output {
                Some(out) => format!(", whose MaxRecords is {}", out.max_records),
                None => ", more than its MaxRecords".into(),
            };
            format!("{at} allocated {} records on {on_output}{limit} (the allocation was dropped)", value(0))
        }
        FAULT_NODE_INDEX => {
            let base = output.map_or(String::new(), |out| format!(" (from index {})", out.base_index));
            format!(
                "{at} allocated for node-array index {} of {on_output}{base}, where there is no node (the \
                 allocation was dropped)",
                value(NODE_INDEX_VALUE)
            )
        }
        FAULT_RECURSION => format!(
            "{at} enqueued to itself with no recursion levels left (NodeMaxRecursionDepth; the records were dropped)"
        ),
        FAULT_PAYLOAD_INDEX => {
            let (index, count) = (value(0), value(1));
            let records = if count == 1 { "record" } else { "records" };
            format!(
                "{at} accessed record {index} of an allocation of {count} {records} on {on_output} (clamped to the \
                 last record)"
            )
        }
        FAULT_INPUT_INDEX => {
            format!("{at} read input record {} of {} (clamped to the last one)", value(0), value(1))
        }
        _ => format!("{at} met a fault of unknown kind {kind}"),
    };
    let explains = match kind {
        FAULT_GRID => STATUS_GRID_LIMIT,
        FAULT_LEVEL_WORKGROUPS => STATUS_LEVEL_WORKGROUPS,
        FAULT_TOO_MANY_PAYLOADS => STATUS_TOO_MANY_PAYLOADS,
        FAULT_NODE_INDEX => STATUS_INVALID_NODE,
        FAULT_RECURSION => STATUS_RECURSION_LIMIT,
        FAULT_PAYLOAD_INDEX | FAULT_INPUT_INDEX => STATUS_PAYLOAD_BOUNDS,
        _ => 0,
    };
    Some((sentence, explains))
}

/// The message of a finished dispatch with a non-zero final status, from
/// its slot's words: the fault record's sentence and what else the status
/// says, or, without a fault, where the status first shows and what it says.
pub(crate) fn message(slot: &StatusSlot, words: &[u32]) -> String {
    let graph = slot.graph;
    let (status_words, fault) = words.split_at(words.len().min(STATUS_WORDS as usize));
    let status = final_status(words);
    match fault_sentence(fault, &slot.names) {
        Some((sentence, explained)) => match status & !explained {
            0 => format!("execution graph {graph:?}: {sentence}"),
            rest => format!("execution graph {graph:?}: {sentence}; also: {}", describe(rest)),
        },
        None => format!("execution graph {graph:?}: {}: {}", locate(slot, status_words), describe(status)),
    }
}

/// Submissions whose status is kept for checking at most: an application
/// that never waits on a fence (timeline semaphores, or none at all) must
/// not grow the list without bound. Past it the oldest are forgotten
/// unchecked (the status ring has fewer slots anyway, see `status`).
const MAX_PENDING: usize = 4096;

/// The status slots of the graph dispatches in a submission's command
/// buffers, read before the driver has the submission: once it has, the
/// work may finish, and another thread reset and record a buffer again.
///
/// # Safety
/// `buffers` are the command buffers of a valid submission (see
/// [`with_submitted`]).
unsafe fn submitted_slots(state: &DeviceState, buffers: impl Iterator<Item = vk::CommandBuffer>) -> Vec<StatusSlot> {
    let map = state.command_buffers.read();
    buffers
        .filter_map(|cb| map.get(&cb))
        // SAFETY: a submission's command buffers (caller's contract).
        .flat_map(|entry| unsafe { with_submitted(entry, |s| s.status_slots.clone()) })
        .collect()
}

/// Remembers the graph dispatches of a submission the driver took.
fn track(state: &DeviceState, queue: vk::Queue, fence: vk::Fence, slots: Vec<StatusSlot>) {
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
            .filter(|(_, words)| final_status(words) != 0)
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
/// each level, and the final status (the slot's `STATUS_WORDS`, see
/// `graph::record`).
pub(crate) fn locate(slot: &StatusSlot, words: &[u32]) -> String {
    let first = words.iter().position(|&w| w != 0).unwrap_or(words.len().saturating_sub(1));
    if first == 0 {
        return "while reading the dispatch's inputs".into();
    }
    // Word d + 1 was taken after level d (the final word after the last level).
    let level = (first - 1).min(slot.levels.len().saturating_sub(1));
    match slot.levels.get(level) {
        Some(nodes) => {
            let names: Vec<&str> = nodes.iter().filter_map(|&n| slot.names.nodes.get(n)).map(String::as_str).collect();
            format!("at level {level}, which ran {}", names.join(", "))
        }
        None => "before any level ran".into(),
    }
}

fn report(state: &DeviceState, slot: &StatusSlot, words: &[u32]) {
    let (graph, message) = (slot.graph, message(slot, words));
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
        // SAFETY: the application's submit infos and their arrays.
        let infos = unsafe { slice(submits, count) };
        // SAFETY: as above.
        let buffers = infos.iter().flat_map(|s| unsafe { slice(s.p_command_buffers, s.command_buffer_count) });
        // SAFETY: a submission's command buffers.
        let slots = unsafe { submitted_slots(&state, buffers.copied()) };
        // SAFETY: forwarding.
        let result = unsafe { (state.dispatch.fp.fp_v1_0().queue_submit)(queue, count, submits, fence) };
        if result == vk::Result::SUCCESS {
            track(&state, queue, fence, slots);
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
        // SAFETY: the application's submit infos and their arrays.
        let infos = unsafe { slice(submits, count) };
        let buffers =
            // SAFETY: as above.
            infos.iter().flat_map(|s| unsafe { slice(s.p_command_buffer_infos, s.command_buffer_info_count) });
        // SAFETY: a submission's command buffers.
        let slots = unsafe { submitted_slots(&state, buffers.map(|b| b.command_buffer)) };
        // SAFETY: forwarding (the core entry point serves the KHR alias on 1.3 devices).
        let result = unsafe { (state.dispatch.fp.fp_v1_3().queue_submit2)(queue, count, submits, fence) };
        if result == vk::Result::SUCCESS {
            track(&state, queue, fence, slots);
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
    use std::collections::BTreeSet;

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
        let names = GraphNames { nodes: vec!["\"a\"[0]".into(), "\"b\"[0]".into()], ..Default::default() };
        let slot = StatusSlot {
            slot: 0,
            graph: vk::Pipeline::null(),
            levels: vec![BTreeSet::from([0]), BTreeSet::from([1])].into(),
            names: names.into(),
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
        for bit in [STATUS_GRID_LIMIT, STATUS_LEVEL_WORKGROUPS, STATUS_PAYLOAD_BOUNDS] {
            assert!(!describe(bit).contains("unknown"), "{bit:#x}");
        }
    }

    /// One output of a fixture node.
    fn output(target: &str, base_index: u32, max_records: u32) -> OutputNames {
        OutputNames { target: target.into(), base_index, max_records, ..Default::default() }
    }

    /// Slots: 0 "grids" (to "open"), 1 "open" (dynamic grid), 2 "spill" (to
    /// "item", 4 records), 3 "pick" (to the "member" array from 1), 4 "deep",
    /// 5 "scribble" (to "item"), 6 "batch", 7 "many" (to the "open" array).
    fn names() -> GraphNames {
        let to_open = OutputNames {
            only_node: Some("\"open\"[0]".into()),
            max_grid: Some([65535, 256, 1]),
            ..output("open", 0, 1)
        };
        let nodes = ["grids", "open", "spill", "pick", "deep", "scribble", "batch", "many"];
        GraphNames {
            nodes: nodes.iter().map(|n| crate::graph::status::node_name(n, 0)).collect(),
            outputs: vec![
                vec![to_open],
                vec![],
                vec![output("other", 0, 1), output("item", 0, 4)],
                vec![output("member", 1, 1)],
                vec![output("deep", 0, 1)],
                vec![output("item", 0, 8)],
                vec![],
                vec![output("open", 2, 1)],
            ],
        }
    }

    /// A fault record.
    fn fault(kind: u32, node: u32, level: u32, output: u32, values: [u32; 4]) -> Vec<u32> {
        let mut words = vec![kind, node, level, output];
        words.extend(values);
        assert_eq!(words.len(), crate::graph::scratch::FAULT_WORDS as usize);
        words
    }

    fn sentence(words: &[u32]) -> (String, u32) {
        fault_sentence(words, &names()).expect("a fault")
    }

    #[test]
    fn a_grid_fault_names_the_target_and_its_limits() {
        let (text, bit) = sentence(&fault(FAULT_GRID, 0, 0, 0, [65535, 65535, 1, 0]));
        assert_eq!(
            text,
            "node \"grids\"[0] at level 0 enqueued a grid of (65535, 65535, 1) to \"open\"[0], past its \
             MaxNumWorkgroupsAMDX (65535, 256, 1) or the 16777215 workgroups a record may ask for (the record was \
             dropped)"
        );
        assert_eq!(bit, STATUS_GRID_LIMIT);
        let (array, _) = sentence(&fault(FAULT_GRID, 7, 3, 0, [1, 2, 3, 0]));
        assert!(
            array
                .contains("(1, 2, 3) to node array \"open\" (from index 2), past its target's MaxNumWorkgroupsAMDX or"),
            "{array}"
        );
    }

    #[test]
    fn a_level_workgroups_fault_counts_in_64_bits() {
        let (text, bit) = sentence(&fault(FAULT_LEVEL_WORKGROUPS, 1, 1, NO_NODE, [2164227840, 0, 0, 0]));
        assert_eq!(
            text,
            "node \"open\"[0] at level 1: its records asked for 2164227840 workgroups, more than the 2147483648 a \
             level launches (they were dropped)"
        );
        assert_eq!(bit, STATUS_LEVEL_WORKGROUPS);
        let (high, _) = sentence(&fault(FAULT_LEVEL_WORKGROUPS, 1, 1, NO_NODE, [5, 1, 1, 0]));
        assert!(high.contains("asked for 4294967301 workgroups, more than"), "{high}");
        let (wrapped, _) = sentence(&fault(FAULT_LEVEL_WORKGROUPS, 1, 1, NO_NODE, [5, 0, 1, 0]));
        assert!(wrapped.contains("asked for more than 2147483648 workgroups, more than the"), "{wrapped}");
        let (others, _) = sentence(&fault(FAULT_LEVEL_WORKGROUPS, 1, 1, NO_NODE, [5, 0, 2, 0]));
        assert!(others.contains("asked for 5 workgroups, which with the level's other launches are more"), "{others}");
    }

    #[test]
    fn an_allocation_fault_names_the_output_and_its_limit() {
        let (text, bit) = sentence(&fault(FAULT_TOO_MANY_PAYLOADS, 2, 0, 1, [100000, 0, 0, 0]));
        assert_eq!(
            text,
            "node \"spill\"[0] at level 0 allocated 100000 records on its output to \"item\", whose MaxRecords is 4 \
             (the allocation was dropped)"
        );
        assert_eq!(bit, STATUS_TOO_MANY_PAYLOADS);
        let (text, bit) = sentence(&fault(FAULT_NODE_INDEX, 3, 0, 0, [1, u32::MAX, 0, 0]));
        assert_eq!(
            text,
            "node \"pick\"[0] at level 0 allocated for node-array index 4294967295 of its output to \"member\" (from \
             index 1), where there is no node (the allocation was dropped)"
        );
        assert_eq!(bit, STATUS_INVALID_NODE);
        let (text, bit) = sentence(&fault(FAULT_RECURSION, 4, 2, 0, [1, 0, 0, 0]));
        assert_eq!(
            text,
            "node \"deep\"[0] at level 2 enqueued to itself with no recursion levels left (NodeMaxRecursionDepth; \
             the records were dropped)"
        );
        assert_eq!(bit, STATUS_RECURSION_LIMIT);
    }

    #[test]
    fn a_record_index_fault_says_what_it_was_clamped_to() {
        let (text, bit) = sentence(&fault(FAULT_PAYLOAD_INDEX, 5, 0, 0, [1000000, 1, 0, 0]));
        assert_eq!(
            text,
            "node \"scribble\"[0] at level 0 accessed record 1000000 of an allocation of 1 record on its output to \
             \"item\" (clamped to the last record)"
        );
        assert_eq!(bit, STATUS_PAYLOAD_BOUNDS);
        let (plural, _) = sentence(&fault(FAULT_PAYLOAD_INDEX, 5, 0, 0, [9, 3, 0, 0]));
        assert!(plural.contains("record 9 of an allocation of 3 records on"), "{plural}");
        let (text, bit) = sentence(&fault(FAULT_INPUT_INDEX, 6, 0, NO_NODE, [4, 3, 0, 0]));
        assert_eq!(text, "node \"batch\"[0] at level 0 read input record 4 of 3 (clamped to the last one)");
        assert_eq!(bit, STATUS_PAYLOAD_BOUNDS);
    }

    #[test]
    fn unknown_numbers_are_written_as_numbers() {
        assert_eq!(fault_sentence(&fault(0, 1, 2, 3, [4, 5, 6, 7]), &names()), None, "kind 0: no fault");
        assert_eq!(fault_sentence(&[], &names()), None);
        let (text, _) = sentence(&fault(FAULT_TOO_MANY_PAYLOADS, 70, 1, 9, [300, 0, 0, 0]));
        assert_eq!(
            text,
            "node slot 70 at level 1 allocated 300 records on its output 9, more than its MaxRecords (the allocation \
             was dropped)"
        );
        let (text, _) = sentence(&fault(FAULT_GRID, 2, 0, 9, [1, 1, 1, 0]));
        assert!(text.contains("(1, 1, 1) on its output 9, past its target's"), "{text}");
        let (text, bit) = sentence(&fault(99, 1, 0, NO_NODE, [0; 4]));
        assert_eq!((text.as_str(), bit), ("node \"open\"[0] at level 0 met a fault of unknown kind 99", 0));
        let (text, _) = fault_sentence(&[FAULT_NODE_INDEX, 3], &names()).unwrap();
        assert!(text.starts_with("node \"pick\"[0] at level 0 allocated for node-array index 0 of its output"));
    }

    #[test]
    fn the_message_is_the_fault_then_what_else_the_status_says() {
        let slot = StatusSlot {
            slot: 0,
            graph: vk::Pipeline::null(),
            levels: vec![BTreeSet::from([2])].into(),
            names: names().into(),
            profile: None,
            statistics: None,
        };
        let words = |status: u32, fault: Vec<u32>| {
            let mut words = vec![0; STATUS_WORDS as usize];
            words[1] = status;
            words[STATUS_WORDS as usize - 1] = status;
            words.extend(fault);
            words
        };
        let spill = || fault(FAULT_TOO_MANY_PAYLOADS, 2, 0, 1, [100000, 0, 0, 0]);
        let alone = message(&slot, &words(STATUS_TOO_MANY_PAYLOADS, spill()));
        assert!(alone.starts_with("execution graph 0x0: node \"spill\"[0] at level 0 allocated 100000"), "{alone}");
        assert!(alone.ends_with("(the allocation was dropped)"), "{alone}");
        let more = message(&slot, &words(STATUS_TOO_MANY_PAYLOADS | 1, spill()));
        assert!(more.ends_with("(the allocation was dropped); also: the scratch frame pool had no room for a level's records (they were dropped; later levels did not run)"), "{more}");
        let plain = message(&slot, &words(STATUS_TOO_MANY_PAYLOADS, vec![0; 8]));
        assert_eq!(
            plain,
            "execution graph 0x0: at level 0, which ran \"spill\"[0]: an allocation asked for more payloads than \
             NodeMaxPayloadsAMDX (dropped)"
        );
        assert_eq!(final_status(&words(5, spill())), 5, "the final status word, not the fault's last");
    }
}
