//! How each node's records sit in the frame pool (`spirv_lowering::abi`,
//! "Records stored per node, in frames"), decided once a graph is linked.
//!
//! Every producer of a node and the node itself must agree on its frame
//! geometry, and every target of one output must share one (a kernel bakes
//! its outputs' geometry in). So targets are grouped into classes: two nodes
//! that one output reaches are in the same class. A class's records have
//! one stride (linking checked that an output's record size is its targets'
//! input size); its tail holds the largest allocation any output into it
//! may make, less one; its frames keep a meta word per record when any of
//! its nodes needs one (recursion levels left, the count of an allocation a
//! dynamic-grid enqueue or an array-length query reads back). The frame size
//! is the smallest power of two, from 4 KiB, at which every class's frame
//! holds a whole allocation by rank.

use super::link::{input_stride, Graph};
use spirv_lowering::abi::{FrameGeometry, NO_NODE};
use spirv_lowering::LaunchMode;

/// Every node's frame geometry and the graph's frame shift.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frames {
    /// log2 of a frame's bytes.
    pub shift: u32,
    /// Per node slot: how its records are kept.
    pub geometry: Vec<FrameGeometry>,
}

/// What one class of nodes needs of its frames.
#[derive(Clone, Copy, Debug, Default)]
struct Need {
    stride: u32,
    max_count: u32,
    meta: bool,
    /// Every node of the class has empty records.
    empty: bool,
}

impl Frames {
    pub fn new(graph: &Graph) -> Frames {
        let n = graph.nodes.len();
        let mut class: Vec<usize> = (0..n).collect();
        let mut needs: Vec<Need> = graph
            .nodes
            .iter()
            .enumerate()
            .map(|(slot, node)| {
                let info = &node.decl.info;
                let recursion = info.max_recursion.is_some() && !recursion_from_level(graph, slot);
                Need {
                    stride: input_stride(info),
                    max_count: 1,
                    meta: recursion || matches!(info.launch, LaunchMode::BroadcastDynamic { .. }),
                    empty: info.input.as_ref().is_none_or(|i| i.size == 0),
                }
            })
            .collect();
        for node in &graph.nodes {
            for (out, linked) in node.decl.info.outputs.iter().zip(&node.outputs) {
                let mut targets = linked.slots.iter().filter(|&&s| s != NO_NODE).map(|&s| s as usize);
                let Some(first) = targets.next() else { continue };
                let root = find(&mut class, first);
                for t in targets {
                    let other = find(&mut class, t);
                    class[other] = root;
                }
                // Recorded on the first target; folded into the class below.
                let need = &mut needs[first];
                need.max_count = need.max_count.max(out.max_payloads);
                need.meta |= out.length_queried;
            }
        }
        let mut merged = vec![Need { empty: true, ..Need::default() }; n];
        for (slot, need) in needs.iter().enumerate() {
            let root = find(&mut class, slot);
            let m = &mut merged[root];
            m.stride = m.stride.max(need.stride);
            m.max_count = m.max_count.max(need.max_count);
            m.meta |= need.meta;
            m.empty &= need.empty;
        }
        let shift = merged
            .iter()
            .map(|m| FrameGeometry::frame_shift_for(m.stride.max(4), m.max_count, m.meta))
            .max()
            .unwrap_or(FrameGeometry::frame_shift_for(4, 1, false));
        let geometry = (0..n)
            .map(|slot| {
                let m = merged[find(&mut class, slot)];
                FrameGeometry::new(m.stride.max(4), m.max_count, m.meta, m.empty && !m.meta, shift)
            })
            .collect();
        Frames { shift, geometry }
    }

    /// The bytes of a frame.
    pub fn bytes(&self) -> u64 {
        1 << self.shift
    }
}

/// Whether the recursion levels node `slot`'s records have left follow
/// from the level alone, so that its frames need no meta word for them: a
/// recursive node that only it enqueues to (and shares no input) has
/// records of recursion depth `d` at level `d` (the API's at level 0), so
/// `max_recursion - d` left (what the kernels read when the node's
/// geometry has no meta word).
fn recursion_from_level(graph: &Graph, slot: usize) -> bool {
    let node = &graph.nodes[slot];
    let others_target = graph
        .nodes
        .iter()
        .enumerate()
        .any(|(s, other)| s != slot && other.outputs.iter().any(|o| o.slots.iter().any(|&t| t as usize == slot)));
    node.shares_with.is_none() && node.sharers.is_empty() && !others_target
}

/// The class of `slot` (union-find with path halving).
fn find(class: &mut [usize], mut slot: usize) -> usize {
    while class[slot] != slot {
        class[slot] = class[class[slot]];
        slot = class[slot];
    }
    slot
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::link::{LinkedNode, LinkedOutput, NodeDecl};
    use spirv_lowering::{InputPayload, NodeShaderInfo, OutputInfo};

    fn input(size: u32) -> InputPayload {
        InputPayload {
            size,
            stride: size.max(4),
            dispatch_grid: None,
            max_payloads: 1,
            track_finish_writing: false,
            implicit: false,
        }
    }

    fn output(max_payloads: u32, length_queried: bool) -> OutputInfo {
        OutputInfo {
            type_id: 1,
            name: "x".into(),
            name_spec_id: None,
            base_index: 0,
            array_size: None,
            sparse: false,
            max_payloads,
            shares_limits_with: None,
            payload_size: 12,
            record_stride: 12,
            track_finish_writing: false,
            visibilities: vec![],
            length_queried,
        }
    }

    fn node(size: Option<u32>, recursion: Option<u32>, outputs: Vec<(OutputInfo, Vec<u32>)>) -> LinkedNode {
        let (infos, linked): (Vec<_>, Vec<_>) = outputs
            .into_iter()
            .map(|(o, slots)| {
                let stride = o.record_stride;
                (o, LinkedOutput { slots, record_stride: stride })
            })
            .unzip();
        let info = NodeShaderInfo {
            max_recursion: recursion,
            ..crate::graph::link::test_node_info("n", 0, size.map(input), infos)
        };
        LinkedNode {
            decl: NodeDecl { name: "n".into(), index: 0, info },
            outputs: linked,
            successors: Default::default(),
            shares_with: None,
            sharers: vec![],
        }
    }

    #[test]
    fn one_output_s_targets_share_a_geometry() {
        // Slot 0 sends up to 16 records to the array [1, 2]; slot 3 sends
        // single records to 2 and asks their count; 4 is recursive and 5
        // enqueues to it too; 5 takes empty records; 6 is recursive and
        // only it enqueues to itself.
        let g = Graph {
            nodes: vec![
                node(None, None, vec![(output(16, false), vec![1, 2])]),
                node(Some(12), None, vec![]),
                node(Some(12), None, vec![]),
                node(None, None, vec![(output(1, true), vec![2])]),
                node(Some(8), Some(3), vec![]),
                node(Some(0), None, vec![(output(1, false), vec![4])]),
                node(Some(8), Some(3), vec![(output(1, false), vec![6])]),
            ],
            notes: vec![],
        };
        let f = Frames::new(&g);
        let [_, one, two, _, rec, empty, alone] = f.geometry[..] else { panic!("{f:?}") };
        assert_eq!(one, two, "an array's members share frames");
        assert_eq!((one.stride, one.tail), (12, 15), "the largest allocation into them, less one");
        assert!(one.meta && !one.frameless, "3 asks the count of its allocations into the class");
        assert!(rec.meta && rec.tail == 0, "recursion levels travel in meta words");
        assert!(!alone.meta, "recursion levels follow from the level");
        assert!(empty.frameless && !empty.meta);
        assert_eq!(f.shift, 12, "4 KiB hold 16 records of 16 bytes by rank and a tail");
        for g in &f.geometry {
            assert!(g.bytes() <= 1 << f.shift && g.per_frame > g.tail, "{g:?}");
        }
    }

    #[test]
    fn large_allocations_get_larger_frames() {
        let mut big = output(256, false);
        (big.payload_size, big.record_stride) = (128, 128);
        let mut target = node(Some(128), None, vec![]);
        target.decl.info.input.as_mut().unwrap().stride = 128;
        let g = Graph { nodes: vec![node(None, None, vec![(big, vec![1])]), target], notes: vec![] };
        let f = Frames::new(&g);
        assert_eq!(f.shift, 16, "511 records of 128 bytes and a word need 64 KiB");
        assert!(f.geometry[1].per_frame >= 256);
    }
}
