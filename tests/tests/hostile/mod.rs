//! The graph of `tests/shaders/graphs/hostile.hlsl` on a fresh device, for
//! `graph_hostile_shaders.rs`: its scratch inside a larger buffer whose
//! guard words before and after are checked, an `Out` buffer whose second
//! half is a guard, dispatches waited on for a bounded time (a hang aborts
//! the test process with a message instead of hanging it), and the layer's
//! reports collected from the application's debug-utils messenger.

use std::io::Write as _;
use std::time::Duration;

use ash::vk;
use conformance_tests::graph::{Stage, TestGraph};
use conformance_tests::{HostBuffer, InstanceOptions, TestDevice, TestInstance};
use vk_host::graph::{host_payloads, record_host_dispatch};

const HOSTILE: &[u8] = include_bytes!("../../shaders/graphs/hostile.spv");

/// Every entry point of the module, one node each. DXC names a node after
/// its entry point whatever its `NodeID`: the members of "member" are named
/// by the application.
const ENTRIES: [(&str, Option<(&str, u32)>); 15] = [
    ("grids", None),
    ("open", None),
    ("capped", None),
    ("spill", None),
    ("scribble", None),
    ("item", None),
    ("flood", None),
    ("wide", None),
    ("pick", None),
    ("member0", Some(("member", 0))),
    ("member1", Some(("member", 1))),
    ("member2", Some(("member", 2))),
    ("deep", None),
    ("batch", None),
    ("dyn_entry", None),
];

/// Words of `Out` the nodes write (tags stay below it); the rest is a guard.
pub const RESULT_WORDS: usize = 512;
const OUT_WORDS: usize = 2 * RESULT_WORDS;
/// Guard bytes before the scratch, and after it: the latter holds a write
/// of record 1,000,000 of 8-byte records past the scratch's end.
const GUARD_BEFORE: u64 = 64 << 10;
const GUARD_AFTER: u64 = 16 << 20;
const PATTERN: u32 = 0xA5A5_5A5A;
/// A dispatch of this graph takes milliseconds on lavapipe; one that has not
/// finished after this long never will (4 billion workgroups).
const WAIT: Duration = Duration::from_secs(60);
/// `pMessageIdName` of the layer's dispatch reports.
const REPORT_ID: &str = "EMU-SE-execution-graph-status";

/// Runs `body` on the hostile graph of a fresh instance and device, with
/// the `checked_payloads` setting given through `VK_EXT_layer_settings`
/// when `checked` is set.
pub fn with_graph(checked: Option<bool>, body: impl FnOnce(&Hostile<'_>)) {
    let value: [vk::Bool32; 1] = [checked.map_or(vk::FALSE, vk::Bool32::from)];
    let setting = [vk::LayerSettingEXT {
        p_layer_name: c"VK_LAYER_EMU_shader_enqueue".as_ptr(),
        p_setting_name: c"checked_payloads".as_ptr(),
        ty: vk::LayerSettingTypeEXT::BOOL32,
        value_count: 1,
        p_values: value.as_ptr().cast(),
        ..Default::default()
    }];
    let settings: &[vk::LayerSettingEXT<'_>] = if checked.is_some() { &setting } else { &[] };
    let opts = InstanceOptions { layer_settings: settings, ..InstanceOptions::with_layer() };
    let inst = TestInstance::new(&opts).expect("instance");
    // The layer's reports are error messages: expected here, checked by the tests.
    inst.log().tolerate(REPORT_ID);
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let hostile = Hostile::new(&inst, &dev);
        body(&hostile);
    }
    inst.finish();
}

/// What one dispatch left: `Out`'s result words and the reports it caused.
#[derive(Debug)]
pub struct Outcome {
    pub out: Vec<u32>,
    pub reports: Vec<String>,
}

impl Outcome {
    /// The one report, which must name everything in `parts`.
    pub fn reported(&self, parts: &[&str]) {
        assert_eq!(self.reports.len(), 1, "one report expected: {:#?}", self.reports);
        for part in parts {
            assert!(self.reports[0].contains(part), "the report does not say {part:?}:\n{}", self.reports[0]);
        }
    }
}

/// The hostile graph, its buffers and the reports seen so far.
pub struct Hostile<'d> {
    inst: &'d TestInstance,
    dev: &'d TestDevice<'d>,
    graph: TestGraph<'d>,
    out: HostBuffer,
    buffer: HostBuffer,
    scratch: u64,
    size: u64,
    seen: std::cell::Cell<usize>,
}

impl<'d> Hostile<'d> {
    fn new(inst: &'d TestInstance, dev: &'d TestDevice<'d>) -> Self {
        let out = dev.create_host_buffer(4 * OUT_WORDS as u64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        let stages: Vec<Stage<'_>> = ENTRIES.iter().map(|&(entry, node)| Stage { entry, node }).collect();
        let graph = TestGraph::new(dev, HOSTILE, &stages, &[&out], 0).expect("graph");
        let (min, _, granularity) = graph.scratch_sizes().expect("sizes");
        // Room for a level of a few thousand records.
        let size = min + 64 * granularity;
        let buffer = dev
            .create_host_buffer(
                GUARD_BEFORE + size + GUARD_AFTER,
                vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
            )
            .expect("scratch buffer");
        buffer.write_u32(&vec![PATTERN; (buffer.size / 4) as usize]).expect("fill");
        let scratch = buffer.address.expect("address") + GUARD_BEFORE;
        let hostile = Hostile { inst, dev, graph, out, buffer, scratch, size, seen: 0.into() };
        hostile.submit(|cb| {
            // SAFETY: recording; the scratch lies inside `buffer`.
            unsafe { (hostile.graph.fns.init_scratch)(cb, hostile.graph.pipeline, scratch, size) };
            hostile.dev.compute_barrier(cb);
        });
        hostile
    }

    /// One dispatch of `records` (words, `stride` bytes each) into node
    /// `entry`, on the scratch initialised once: what it left.
    pub fn dispatch(&self, entry: &str, records: &[u32], stride: u64) -> Outcome {
        self.dispatch_many(&[(entry, records, stride)])
    }

    /// One dispatch with an info per entry of `infos` (node, words, stride).
    pub fn dispatch_many(&self, infos: &[(&str, &[u32], u64)]) -> Outcome {
        let mut out = vec![0; RESULT_WORDS];
        out.resize(OUT_WORDS, PATTERN);
        self.out.write_u32(&out).expect("clear");
        let bytes: Vec<Vec<u8>> =
            infos.iter().map(|(_, words, _)| words.iter().flat_map(|w| w.to_le_bytes()).collect()).collect();
        let infos: Vec<vk::DispatchGraphInfoAMDX> = infos
            .iter()
            .zip(&bytes)
            .map(|(&(entry, _, stride), bytes)| {
                let node = self.graph.node_index(entry, 0).expect("node index");
                host_payloads(node, bytes, (bytes.len() as u64 / stride) as u32, stride)
            })
            .collect();
        self.submit(|cb| {
            self.graph.bind(cb, self.graph.pipeline);
            // SAFETY: recording; the payloads live across the call.
            unsafe { record_host_dispatch(&self.graph.fns, cb, self.scratch, self.size, &infos) };
            self.dev.host_read_barrier(cb);
        });
        self.check_guards();
        self.outcome()
    }

    /// One `vkCmdDispatchGraphIndirectAMDX` of `records` (words, `stride`
    /// bytes each) into node `entry`, the info and the records in device
    /// memory, where the host does not look at them: what it left.
    pub fn dispatch_device(&self, entry: &str, records: &[u32], stride: u64) -> Outcome {
        let mut out = vec![0; RESULT_WORDS];
        out.resize(OUT_WORDS, PATTERN);
        self.out.write_u32(&out).expect("clear");
        let usage = vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS | vk::BufferUsageFlags::INDIRECT_BUFFER;
        let payloads = self.dev.create_host_buffer(4 * records.len() as u64, usage).expect("payloads");
        payloads.write_u32(records).expect("write payloads");
        let node = self.graph.node_index(entry, 0).expect("node index");
        let count = (4 * records.len() as u64 / stride) as u32;
        let at = payloads.address.expect("address");
        // VkDispatchGraphInfoAMDX: nodeIndex, payloadCount, payloads, payloadStride.
        let info = [node, count, at as u32, (at >> 32) as u32, stride as u32, (stride >> 32) as u32];
        let infos = self.dev.create_host_buffer(24, usage).expect("infos");
        infos.write_u32(&info).expect("write infos");
        let count_info = vk::DispatchGraphCountInfoAMDX {
            count: 1,
            infos: vk::DeviceOrHostAddressConstAMDX { device_address: infos.address.expect("address") },
            stride: 24,
        };
        self.submit(|cb| {
            self.graph.bind(cb, self.graph.pipeline);
            // SAFETY: recording; the info and payloads live until the submission ends.
            unsafe { (self.graph.fns.dispatch_indirect)(cb, self.scratch, self.size, &count_info) };
            self.dev.host_read_barrier(cb);
        });
        self.check_guards();
        self.outcome()
    }

    /// `Out`'s result words and the reports since the last outcome.
    fn outcome(&self) -> Outcome {
        let all = self.inst.log().tolerated();
        // Validation 1.3.239's word on the layer-settings structure is
        // tolerated too (see `InstanceOptions`): not a report.
        let reports: Vec<String> = all[self.seen.get()..].iter().filter(|m| m.contains(REPORT_ID)).cloned().collect();
        self.seen.set(all.len());
        Outcome { out: self.out.read_u32(RESULT_WORDS).expect("read"), reports }
    }

    /// Nothing was written before or after the scratch, or past `Out`'s results.
    fn check_guards(&self) {
        let words = (self.buffer.size / 4) as usize;
        let all = self.buffer.read_u32(words).expect("read scratch buffer");
        let before = (GUARD_BEFORE / 4) as usize;
        let after = words - (GUARD_AFTER / 4) as usize;
        let stray = |range: std::ops::Range<usize>| range.clone().find(|&w| all[w] != PATTERN);
        assert_eq!(stray(0..before), None, "a word before the scratch was written");
        assert_eq!(stray(after..words), None, "a word after the scratch was written (word of the buffer)");
        let out = self.out.read_u32(OUT_WORDS).expect("read out");
        let past = (RESULT_WORDS..OUT_WORDS).find(|&w| out[w] != PATTERN);
        assert_eq!(past, None, "a word of Out past the results was written");
    }

    /// A correct dispatch after the hostile one, on the same scratch: every
    /// node kind involved runs exactly, and nothing is reported.
    pub fn still_works(&self) {
        let grids = [2, 3, 1, 10, 0, 1, 1, 1, 11, 1, 0, 0, 0, 12, 0];
        let spill = [4, 20, 0, 0, 1, 30, 0, 0];
        let pick = [0, 40, 1, 50];
        let outcome = self.dispatch_many(&[("grids", &grids, 20), ("spill", &spill, 16), ("pick", &pick, 8)]);
        assert_eq!(outcome.reports, Vec::<String>::new(), "a correct dispatch reports nothing");
        let mut want = vec![0; RESULT_WORDS];
        want[10] = 6;
        want[11] = 1;
        want[20..24].fill(1);
        want[30] = 1;
        want[41] = 1;
        want[52] = 1;
        assert_eq!(outcome.out, want, "the correct dispatch after the hostile one");
    }

    /// Records, waits for at most [`WAIT`]; a dispatch that does not finish
    /// by then aborts the process (its GPU work cannot be cancelled, and the
    /// device's destruction would wait for it).
    fn submit(&self, record: impl FnOnce(vk::CommandBuffer)) {
        let d = &self.dev.device;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.dev.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: valid device and pool, used by this thread only.
        let cb = unsafe { d.allocate_command_buffers(&alloc) }.expect("command buffer")[0];
        let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: a fresh primary command buffer.
        unsafe { d.begin_command_buffer(cb, &begin) }.expect("begin");
        record(cb);
        // SAFETY: recording.
        unsafe { d.end_command_buffer(cb) }.expect("end");
        // SAFETY: valid device.
        let fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }.expect("fence");
        let cbs = [cb];
        let submit = vk::SubmitInfo::default().command_buffers(&cbs);
        // SAFETY: an executable command buffer, an unsignalled fence; this
        // test's device and queue are used by this thread only.
        unsafe { d.queue_submit(self.dev.queue, &[submit], fence) }.expect("submit");
        // SAFETY: the fence was submitted.
        match unsafe { d.wait_for_fences(&[fence], true, WAIT.as_nanos() as u64) } {
            Ok(()) => {}
            Err(vk::Result::TIMEOUT) => {
                // Straight to stderr: the test harness's capture would be
                // lost with the process.
                let _ = writeln!(
                    std::io::stderr(),
                    "graph_hostile_shaders: a graph dispatch did not finish within {WAIT:?}: a node shader's bad \
                     values hang the GPU; aborting (the work cannot be cancelled)"
                );
                std::process::abort();
            }
            Err(e) => panic!("vkWaitForFences: {e}"),
        }
        // SAFETY: the submission finished.
        unsafe {
            d.destroy_fence(fence, None);
            d.free_command_buffers(self.dev.pool, &cbs);
        }
    }
}

/// A `grids` record: grid, tag, and whether it goes to "capped".
pub fn grid(grid: [u32; 3], tag: u32, capped: bool) -> [u32; 5] {
    [grid[0], grid[1], grid[2], tag, u32::from(capped)]
}
