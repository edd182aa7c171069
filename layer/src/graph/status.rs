//! The host's view of graph dispatch status: a small host-visible buffer
//! per device with one slot of [`SLOT_WORDS`] words per recorded graph
//! dispatch (a ring): the dispatch's `STATUS_WORDS` status words, then its
//! `FAULT_WORDS` fault record. The finisher of each level writes the
//! dispatch's status into its slot by device address (after the inputs,
//! after each level, and the final status), and the first kernel that meets
//! a fault describes it in the fault record; `ffi::report` reads and clears
//! the slot once the submission is known to have finished, and names what
//! the fault record numbers with the graph's [`GraphNames`].
//!
//! Moved from `ffi` so that `crate::device`, which holds each device's
//! buffer, imports nothing from the tier above it; it is created on first
//! use by `DeviceState::reserve_status_slot`.

use super::gpu::Gpu;
use super::link::Graph;
use super::scratch::{FAULT_WORDS, STATUS_WORDS};
use crate::dispatch::mapped::MappedBuffer;
use ash::vk;
use meta_shaders::NodeSchedule;
use spirv_lowering::abi::{NO_NODE, SCHEDULE_DYNAMIC};

/// Where one recorded dispatch leaves its status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusTarget {
    /// The slot of the device's ring (what the host reads).
    pub slot: u32,
    /// The device address of the slot's words (what the finishers write).
    pub address: u64,
}

/// Slots per device; a slot is reused after this many recorded dispatches.
pub(crate) const SLOTS: u32 = 1024;
/// Words of a slot: the status words, then the fault record (the kernels
/// write it at the slot's address plus `4 * STATUS_WORDS`).
pub(crate) const SLOT_WORDS: u32 = STATUS_WORDS + FAULT_WORDS;
/// Words of the mapping.
const WORDS: u32 = SLOTS * SLOT_WORDS;

pub(crate) struct StatusBuffer {
    /// `SLOTS` slots of `SLOT_WORDS` words.
    pub memory: MappedBuffer,
    next: u32,
}

impl StatusBuffer {
    /// Creates the buffer in host-visible, host-coherent memory, zeroed.
    pub(crate) fn create(device: &Gpu) -> Result<Self, vk::Result> {
        let memory = MappedBuffer::create(
            &device.dispatch,
            &device.physical.memory_properties,
            u64::from(WORDS) * 4,
            vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
            // Read by the host, written by a few GPU stores a level.
            vk::MemoryPropertyFlags::HOST_CACHED,
        )?;
        let status = StatusBuffer { memory, next: 0 };
        for word in 0..WORDS {
            status.write(word, 0);
        }
        Ok(status)
    }

    /// The device address of `slot`'s words (the level finishers write them).
    pub(crate) fn address(&self, slot: u32) -> u64 {
        self.memory.address + u64::from((slot % SLOTS) * SLOT_WORDS) * 4
    }

    /// The next slot of the ring.
    pub(crate) fn allocate_slot(&mut self) -> u32 {
        let slot = self.next;
        self.next = (self.next + 1) % SLOTS;
        slot
    }

    /// Reads a slot's words, status then fault record (finished
    /// submissions only), and clears them.
    pub(crate) fn take(&self, slot: u32) -> Vec<u32> {
        let first = (slot % SLOTS) * SLOT_WORDS;
        (first..first + SLOT_WORDS)
            .map(|word| {
                let value = self.read(word);
                self.write(word, 0);
                value
            })
            .collect()
    }

    /// Word `word % WORDS` of the mapping (host-coherent memory the GPU no
    /// longer writes for a finished submission; touched only under the
    /// device's `status` mutex).
    fn read(&self, word: u32) -> u32 {
        self.memory.host().read_word(u64::from(word % WORDS) * 4)
    }

    fn write(&self, word: u32, value: u32) {
        self.memory.host().write_word(u64::from(word % WORDS) * 4, value);
    }

    pub(crate) fn destroy(&self, device: &Gpu) {
        self.memory.destroy(&device.dispatch);
    }
}

/// What a fault record numbers, by name, for one graph: built once per
/// graph (`GraphPipeline::names`) and shared by its dispatches' slots,
/// so a report names nodes even after the graph was destroyed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GraphNames {
    /// Per node slot, `"name"[index]`.
    pub nodes: Vec<String>,
    /// Per node slot, its outputs in the order `abi::FAULT_OUTPUT` counts them.
    pub outputs: Vec<Vec<OutputNames>>,
}

/// One output of a node, as a fault report names it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputNames {
    /// The node name it enqueues to (`PayloadNodeNameAMDX`, specialized).
    pub target: String,
    /// `PayloadNodeBaseIndexAMDX`.
    pub base_index: u32,
    /// `NodeMaxPayloadsAMDX` (its MaxRecords).
    pub max_records: u32,
    /// The one node it reaches, `"name"[index]`; `None` for a node array
    /// that reaches several (or none).
    pub only_node: Option<String>,
    /// The `MaxNumWorkgroupsAMDX` of the dynamic-grid nodes it reaches,
    /// when there are some and they agree.
    pub max_grid: Option<[u32; 3]>,
}

/// A node as messages write it (the levels of `StatusSlot` too).
pub fn node_name(name: &str, index: u32) -> String {
    format!("\"{name}\"[{index}]")
}

impl GraphNames {
    /// The names of `graph`, whose nodes have `schedules`.
    pub fn new(graph: &Graph, schedules: &[NodeSchedule]) -> Self {
        let nodes: Vec<String> = graph.nodes.iter().map(|n| node_name(&n.decl.name, n.decl.index)).collect();
        let outputs = graph
            .nodes
            .iter()
            .map(|node| {
                node.decl
                    .info
                    .outputs
                    .iter()
                    .zip(&node.outputs)
                    .map(|(out, linked)| {
                        let mut reached: Vec<usize> =
                            linked.slots.iter().filter(|&&s| s != NO_NODE).map(|&s| s as usize).collect();
                        reached.sort_unstable();
                        reached.dedup();
                        let only_node = match reached[..] {
                            [only] => nodes.get(only).cloned(),
                            _ => None,
                        };
                        let mut grids = reached
                            .iter()
                            .filter_map(|&s| schedules.get(s))
                            .filter(|s| s.mode == SCHEDULE_DYNAMIC)
                            .map(|s| s.max_grid);
                        let first = grids.next();
                        let max_grid = first.filter(|&g| grids.all(|other| other == g));
                        OutputNames {
                            target: out.name.clone(),
                            base_index: out.base_index,
                            max_records: out.max_payloads,
                            only_node,
                            max_grid,
                        }
                    })
                    .collect()
            })
            .collect();
        GraphNames { nodes, outputs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::link::{link, NodeDecl};
    use spirv_lowering::{InputPayload, LaunchMode, NodeShaderInfo, OutputInfo};

    fn decl(name: &str, index: u32, launch: LaunchMode, outputs: Vec<OutputInfo>) -> NodeDecl {
        let input = InputPayload {
            size: 16,
            stride: 16,
            dispatch_grid: None,
            max_payloads: 1,
            track_finish_writing: false,
            implicit: false,
        };
        let info = NodeShaderInfo { launch, ..crate::graph::link::test_node_info(name, index, Some(input), outputs) };
        NodeDecl { name: name.into(), index, info }
    }

    fn output(name: &str, base_index: u32, max_payloads: u32) -> OutputInfo {
        OutputInfo {
            type_id: 1,
            name: name.into(),
            name_spec_id: None,
            base_index,
            array_size: None,
            sparse: false,
            max_payloads,
            shares_limits_with: None,
            payload_size: 16,
            record_stride: 16,
            track_finish_writing: false,
            visibilities: vec![],
            length_queried: false,
        }
    }

    /// A node reached alone is named with its index and limits; a node
    /// array by its name, with the limits its members share.
    #[test]
    fn outputs_name_their_targets() {
        let dynamic = |max_grid| LaunchMode::BroadcastDynamic { max_grid: Some(max_grid) };
        let graph = link(vec![
            decl("src", 0, LaunchMode::Thread, vec![output("one", 0, 4), output("arr", 1, 8), output("mixed", 0, 2)]),
            decl("one", 0, dynamic([8, 2, 1]), vec![]),
            decl("arr", 1, dynamic([4, 4, 4]), vec![]),
            decl("arr", 2, dynamic([4, 4, 4]), vec![]),
            decl("mixed", 0, dynamic([1, 1, 1]), vec![]),
            decl("mixed", 1, dynamic([2, 1, 1]), vec![]),
        ])
        .expect("links");
        let schedules: Vec<NodeSchedule> = graph
            .nodes
            .iter()
            .map(|n| match n.decl.info.launch {
                LaunchMode::BroadcastDynamic { max_grid: Some(max_grid) } => {
                    NodeSchedule { mode: SCHEDULE_DYNAMIC, max_grid, ..Default::default() }
                }
                _ => NodeSchedule::default(),
            })
            .collect();
        let names = GraphNames::new(&graph, &schedules);
        assert_eq!(names.nodes[2], "\"arr\"[1]");
        let outputs = &names.outputs[0];
        assert_eq!(
            outputs[0],
            OutputNames {
                target: "one".into(),
                base_index: 0,
                max_records: 4,
                only_node: Some("\"one\"[0]".into()),
                max_grid: Some([8, 2, 1]),
            }
        );
        assert_eq!((outputs[1].only_node.as_deref(), outputs[1].max_grid), (None, Some([4, 4, 4])));
        assert_eq!((outputs[1].base_index, outputs[1].max_records), (1, 8));
        assert_eq!(outputs[2].max_grid, None, "the members' limits differ");
        assert!(names.outputs[1].is_empty());
    }
}
