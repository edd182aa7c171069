//! Linking: node shaders (with their final name and index) become a graph
//! whose outputs point at node slots, after the checks the specification
//! asks for. Pure logic: no Vulkan, no SPIR-V parsing (the lowering crate's
//! `NodeShaderInfo` carries everything).
//!
//! Checks, each failing pipeline creation with a message naming the node:
//! - (name, index) unique;
//! - every output's target name exists unless the output is sparse;
//! - a bounded node array reaches existing nodes of its name past its
//!   declared size (noted, not an error: compatibility with AMD's driver);
//! - an output to the node's own name requires `MaxNodeRecursionAMDX`, and
//!   recursion through other nodes (cycles) is rejected;
//! - the longest chain, counting recursion levels, is at most 32 levels
//!   (`maxExecutionGraphDepth`);
//! - producer and consumer agree on the record size;
//! - a `SharesInputWithAMDX` node shares with an existing node that does
//!   not itself share, reads the same record size, and at most 256 nodes
//!   share one input.

use spirv_lowering::abi::NO_NODE;
use spirv_lowering::NodeShaderInfo;
use std::collections::{BTreeSet, HashMap};

/// `maxExecutionGraphDepth` as advertised.
pub const MAX_DEPTH: u32 = 32;

/// One node before linking.
#[derive(Clone, Debug)]
pub struct NodeDecl {
    /// Final name (the stage's `VkPipelineShaderStageNodeCreateInfoAMDX::pName` or entry point).
    pub name: String,
    /// Final index.
    pub index: u32,
    pub info: NodeShaderInfo,
}

/// One output of a linked node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkedOutput {
    /// Node slot per absolute array index ([`NO_NODE`] where none).
    pub slots: Vec<u32>,
    pub record_stride: u32,
}

/// A node of a linked graph; its slot is its position in [`Graph::nodes`].
#[derive(Clone, Debug)]
pub struct LinkedNode {
    pub decl: NodeDecl,
    pub outputs: Vec<LinkedOutput>,
    /// Distinct slots its outputs can reach (self included when recursive).
    pub successors: BTreeSet<usize>,
    /// The node whose input it shares (`SharesInputWithAMDX`).
    pub shares_with: Option<usize>,
    /// The nodes that share its input.
    pub sharers: Vec<usize>,
}

#[derive(Clone, Debug)]
pub struct Graph {
    pub nodes: Vec<LinkedNode>,
    /// Facts worth a log line that are no error (see [`link`]).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("two nodes are named (\"{name}\", {index})")]
    DuplicateNode { name: String, index: u32 },
    #[error("node \"{node}\": output {output} targets \"{target}\", which no node of the graph is named")]
    MissingTarget { node: String, output: usize, target: String },
    #[error("node \"{node}\" enqueues to itself without MaxNodeRecursionAMDX")]
    RecursionUndeclared { node: String },
    #[error("node \"{node}\" reaches itself through other nodes (only direct self-recursion is allowed)")]
    Cycle { node: String },
    #[error("the graph is {depth} levels deep through node \"{node}\" (recursion included); the limit is {MAX_DEPTH}")]
    TooDeep { node: String, depth: u32 },
    #[error(
        "node \"{node}\": output {output} writes {produced}-byte records but \"{target}\" reads {consumed}-byte records"
    )]
    RecordSizeMismatch { node: String, output: usize, target: String, produced: u32, consumed: u32 },
    #[error("node \"{node}\": {problem}")]
    SharedInput { node: String, problem: String },
    #[error("node (\"{node}\", {index}): {what}")]
    Limit { node: String, index: u32, what: String },
}

/// Highest node index (and node-array extent) a graph may use: output slot
/// tables are as long as the highest index they reach, so an index of
/// 0xFFFFFFFE cost 17 GB of scratch and a minute of pipeline creation.
/// A million entries is far beyond any published node array.
pub const MAX_NODE_INDEX: u32 = (1 << 20) - 1;

/// Rejects what exceeds the limits the layer advertises
/// (`VkPhysicalDeviceShaderEnqueuePropertiesAMDX`, see `advertise`) or
/// [`MAX_NODE_INDEX`], naming the node and the limit.
fn check_limits(decls: &[NodeDecl]) -> Result<(), LinkError> {
    let limits = crate::advertise::properties();
    for d in decls {
        let fail = |what: String| Err(LinkError::Limit { node: d.name.clone(), index: d.index, what });
        if d.index > MAX_NODE_INDEX {
            return fail(format!("the node index is above the layer's limit of {MAX_NODE_INDEX}"));
        }
        let max_size = limits.max_execution_graph_shader_payload_size;
        if let Some(input) = d.info.input.as_ref().filter(|i| i.size > max_size) {
            return fail(format!(
                "its input record is {} bytes; maxExecutionGraphShaderPayloadSize is {max_size}",
                input.size
            ));
        }
        // A node's own levels are 1 + its recursion: checked here, where
        // 0xFFFFFFFF cannot wrap, rather than in the depth walk.
        if let Some(levels) = d.info.max_recursion.filter(|&r| r >= MAX_DEPTH) {
            return Err(LinkError::TooDeep { node: d.name.clone(), depth: levels.saturating_add(1) });
        }
        let max_count = limits.max_execution_graph_shader_payload_count;
        for (o, out) in d.info.outputs.iter().enumerate() {
            if out.payload_size > max_size {
                return fail(format!(
                    "output {o} (\"{}\") writes {}-byte records; maxExecutionGraphShaderPayloadSize is {max_size}",
                    out.name, out.payload_size
                ));
            }
            if out.max_payloads > max_count {
                return fail(format!(
                    "output {o} (\"{}\") allocates up to {} records (NodeMaxPayloadsAMDX); \
                     maxExecutionGraphShaderPayloadCount is {max_count}",
                    out.name, out.max_payloads
                ));
            }
            let end = u64::from(out.base_index) + u64::from(out.array_size.unwrap_or(0));
            if end > u64::from(MAX_NODE_INDEX) + 1 {
                return fail(format!(
                    "output {o} (\"{}\") spans node indices up to {}; the layer's limit is {MAX_NODE_INDEX}",
                    out.name,
                    end - 1
                ));
            }
        }
    }
    Ok(())
}

/// Bytes between records as a consumer reads them (an empty payload is 4,
/// as the lowering's `record_stride` makes it).
pub fn input_stride(info: &NodeShaderInfo) -> u32 {
    info.input.as_ref().map_or(4, |i| i.stride.max(4))
}

/// Links `decls` (slot = position) into a checked graph.
pub fn link(decls: Vec<NodeDecl>) -> Result<Graph, LinkError> {
    check_limits(&decls)?;
    let mut by_key: HashMap<(&str, u32), usize> = HashMap::new();
    let mut by_name: HashMap<&str, Vec<(u32, usize)>> = HashMap::new();
    for (slot, d) in decls.iter().enumerate() {
        if by_key.insert((d.name.as_str(), d.index), slot).is_some() {
            return Err(LinkError::DuplicateNode { name: d.name.clone(), index: d.index });
        }
        by_name.entry(d.name.as_str()).or_default().push((d.index, slot));
    }
    let shares_with = sharing(&decls, &by_key)?;
    let mut nodes = Vec::with_capacity(decls.len());
    let mut notes = Vec::new();
    for (slot, d) in decls.iter().enumerate() {
        let mut outputs = Vec::new();
        let mut successors = BTreeSet::new();
        for (o, out) in d.info.outputs.iter().enumerate() {
            let named = by_name.get(out.name.as_str()).map(Vec::as_slice).unwrap_or(&[]);
            if named.is_empty() && !out.sparse {
                return Err(LinkError::MissingTarget { node: d.name.clone(), output: o, target: out.name.clone() });
            }
            // PayloadNodeArraySizeAMDX counts the indices a node may pass,
            // from the base index on (OpIsNodePayloadValidAMDX: "NodeIndex
            // must be less than" it; DXC emits NodeID("n", 2) with
            // NodeArraySize(4), nodes 2..5, as base 2 and size 4). A bounded
            // array still reaches nodes of its name past its declared end
            // (the specification leaves such an index undefined; AMD's driver
            // runs those records and published samples rely on it), as long
            // as they read records of the output's size.
            let declared_end = out.array_size.map(|n| n.saturating_add(out.base_index));
            let existing = named.iter().map(|&(i, _)| i.saturating_add(1)).max().unwrap_or(0);
            let len = declared_end.map_or(existing, |n| n.max(existing));
            let mut slots = vec![NO_NODE; len as usize];
            for &(index, target) in named {
                let past_declared = declared_end.is_some_and(|n| index >= n);
                let consumed = input_stride(&decls[target].info);
                if out.record_stride != consumed {
                    if past_declared {
                        continue;
                    }
                    return Err(LinkError::RecordSizeMismatch {
                        node: d.name.clone(),
                        output: o,
                        target: out.name.clone(),
                        produced: out.record_stride,
                        consumed,
                    });
                }
                if let Some(entry) = slots.get_mut(index as usize) {
                    *entry = target as u32;
                    successors.insert(target);
                    if past_declared {
                        notes.push(format!(
                            "node \"{}\": output {o} declares nodes {} to {} of \"{}\", but node (\"{}\", \
                             {index}) exists past them; records allocated for that index are delivered to it",
                            d.name,
                            out.base_index,
                            declared_end.unwrap_or(0).saturating_sub(1),
                            out.name,
                            out.name
                        ));
                    }
                }
            }
            outputs.push(LinkedOutput { slots, record_stride: out.record_stride });
        }
        if successors.contains(&slot) && d.info.max_recursion.is_none() {
            return Err(LinkError::RecursionUndeclared { node: d.name.clone() });
        }
        let sharers = (0..decls.len()).filter(|&s| shares_with[s] == Some(slot)).collect();
        nodes.push(LinkedNode { decl: d.clone(), outputs, successors, shares_with: shares_with[slot], sharers });
    }
    let graph = Graph { nodes, notes };
    graph.check_depth()?;
    Ok(graph)
}

/// The slot whose input each node shares, checked.
fn sharing(decls: &[NodeDecl], by_key: &HashMap<(&str, u32), usize>) -> Result<Vec<Option<usize>>, LinkError> {
    let error = |d: &NodeDecl, problem: String| LinkError::SharedInput { node: d.name.clone(), problem };
    let mut shares_with = vec![None; decls.len()];
    for (slot, d) in decls.iter().enumerate() {
        let Some((name, index)) = &d.info.shares_input_with else { continue };
        let Some(&base) = by_key.get(&(name.as_str(), *index)) else {
            return Err(error(
                d,
                format!("SharesInputWithAMDX names (\"{name}\", {index}), which is not in the graph"),
            ));
        };
        if decls[base].info.shares_input_with.is_some() || base == slot {
            return Err(error(d, format!("(\"{name}\", {index}) shares another node's input itself")));
        }
        if input_stride(&decls[base].info) != input_stride(&d.info) {
            return Err(error(d, format!("its record size differs from (\"{name}\", {index})'s")));
        }
        shares_with[slot] = Some(base);
    }
    for (base, d) in decls.iter().enumerate() {
        // The spec's limit counts the base node too.
        if shares_with.iter().filter(|&&s| s == Some(base)).count() + 1 > MAX_SHARING {
            return Err(error(d, format!("more than {MAX_SHARING} nodes share its input")));
        }
    }
    Ok(shares_with)
}

/// Nodes that may share one input, the base node included (spec limit).
pub const MAX_SHARING: usize = 256;

/// Applies specialised node names: an output whose target name is an
/// `OpSpecConstantStringAMDX` with a `SpecId` takes the UTF-8 bytes the
/// application gave for that id in `VkSpecializationInfo` (up to a NUL, if
/// any) instead of the string's default value.
pub fn specialize_output_names(info: &mut NodeShaderInfo, specialization: &[(u32, Vec<u8>)]) {
    for output in &mut info.outputs {
        let Some(id) = output.name_spec_id else { continue };
        if let Some((_, bytes)) = specialization.iter().rev().find(|(sid, _)| *sid == id) {
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            output.name = String::from_utf8_lossy(&bytes[..end]).into_owned();
        }
    }
}

impl Graph {
    /// Levels a node occupies by itself: 1 plus its recursion levels.
    fn own_levels(&self, slot: usize) -> u32 {
        1 + self.nodes[slot].decl.info.max_recursion.unwrap_or(0)
    }

    /// Rejects cycles through other nodes and graphs deeper than [`MAX_DEPTH`].
    fn check_depth(&self) -> Result<(), LinkError> {
        // Longest chain ending... starting at each node, by DFS with colours.
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Open,
            Done(u32),
        }
        fn visit(g: &Graph, n: usize, marks: &mut [Mark]) -> Result<u32, LinkError> {
            match marks[n] {
                Mark::Done(d) => return Ok(d),
                Mark::Open => return Err(LinkError::Cycle { node: g.nodes[n].decl.name.clone() }),
                Mark::New => {}
            }
            marks[n] = Mark::Open;
            let mut below = 0;
            for &s in g.nodes[n].successors.iter().filter(|&&s| s != n) {
                below = below.max(visit(g, s, marks)?);
            }
            let depth = g.own_levels(n).saturating_add(below);
            marks[n] = Mark::Done(depth);
            Ok(depth)
        }
        let mut marks = vec![Mark::New; self.nodes.len()];
        for n in 0..self.nodes.len() {
            let depth = visit(self, n, &mut marks)?;
            if depth > MAX_DEPTH {
                return Err(LinkError::TooDeep { node: self.nodes[n].decl.name.clone(), depth });
            }
        }
        Ok(())
    }

    /// The slot of node (name, index).
    pub fn find(&self, name: &str, index: u32) -> Option<usize> {
        self.nodes.iter().position(|n| n.decl.name == name && n.decl.index == index)
    }

    /// The nodes that can have records at each level when the graph is
    /// entered at `entries`: level 0 is the entries; a node's records reach
    /// its successors one level later, and a recursive node itself again
    /// while recursion levels remain. Ends at the first empty level.
    pub fn levels(&self, entries: &BTreeSet<usize>) -> Vec<BTreeSet<usize>> {
        let with_sharers = |level: BTreeSet<usize>| -> BTreeSet<usize> {
            let sharers: Vec<usize> = level.iter().flat_map(|&n| self.nodes[n].sharers.iter().copied()).collect();
            level.into_iter().chain(sharers).collect()
        };
        // States: (slot, remaining recursion of records at this level).
        let mut states: BTreeSet<(usize, u32)> =
            entries.iter().map(|&n| (n, self.nodes[n].decl.info.max_recursion.unwrap_or(0))).collect();
        let mut levels = Vec::new();
        while !states.is_empty() && levels.len() < MAX_DEPTH as usize {
            levels.push(with_sharers(states.iter().map(|&(n, _)| n).collect()));
            let mut next = BTreeSet::new();
            for &(n, remaining) in &states {
                for &s in &self.nodes[n].successors {
                    if s == n {
                        if remaining > 0 {
                            next.insert((n, remaining - 1));
                        }
                    } else {
                        next.insert((s, self.nodes[s].decl.info.max_recursion.unwrap_or(0)));
                    }
                }
            }
            states = next;
        }
        levels
    }
}

/// A thread node's info for the runtime's unit tests: `name`[`index`], an
/// API entry with `input` and `outputs`, no recursion.
#[cfg(test)]
pub(crate) fn test_node_info(
    name: &str,
    index: u32,
    input: Option<spirv_lowering::InputPayload>,
    outputs: Vec<spirv_lowering::OutputInfo>,
) -> NodeShaderInfo {
    NodeShaderInfo {
        name: name.into(),
        shader_index: index,
        launch: spirv_lowering::LaunchMode::Thread,
        workgroup_size: [1, 1, 1],
        input,
        outputs,
        max_recursion: None,
        shares_input_with: None,
        is_api_entry: true,
        track_finish_writing: false,
        uses_workgroup_memory: false,
        uses_control_barriers: false,
        input_needs_contiguous_records: false,
        mesh: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spirv_lowering::{InputPayload, OutputInfo};

    fn node(name: &str, index: u32, outputs: &[(&str, Option<u32>, bool)], recursion: Option<u32>) -> NodeDecl {
        NodeDecl {
            name: name.into(),
            index,
            info: NodeShaderInfo {
                max_recursion: recursion,
                ..test_node_info(
                    name,
                    index,
                    Some(InputPayload {
                        size: 8,
                        stride: 8,
                        dispatch_grid: None,
                        max_payloads: 1,
                        track_finish_writing: false,
                        implicit: false,
                    }),
                    outputs
                        .iter()
                        .map(|&(target, array_size, sparse)| OutputInfo {
                            type_id: 1,
                            name: target.into(),
                            name_spec_id: None,
                            base_index: 0,
                            array_size,
                            sparse,
                            max_payloads: 1,
                            shares_limits_with: None,
                            payload_size: 8,
                            record_stride: 8,
                            track_finish_writing: false,
                            visibilities: vec![],
                            length_queried: false,
                        })
                        .collect(),
                )
            },
        }
    }

    #[test]
    fn advertised_limits_are_enforced_at_link_time() {
        let limit = |decls: Vec<NodeDecl>| match link(decls) {
            Err(LinkError::Limit { what, .. }) => what,
            other => panic!("expected a limit error, got {other:?}"),
        };
        assert!(limit(vec![node("a", 0xFFFF_FFFE, &[], None)]).contains("node index"));
        let mut big_input = node("a", 0, &[], None);
        big_input.info.input.as_mut().unwrap().size = 32 * 1024 + 4;
        assert!(limit(vec![big_input]).contains("32772 bytes"));
        let mut big_input = node("a", 0, &[], None);
        big_input.info.input.as_mut().unwrap().size = 4 << 20;
        assert!(limit(vec![big_input]).contains("maxExecutionGraphShaderPayloadSize"));
        let mut big_output = node("a", 0, &[("b", None, false)], None);
        big_output.info.outputs[0].payload_size = 32 * 1024 + 4;
        assert!(limit(vec![big_output, node("b", 0, &[], None)]).contains("32772-byte records"));
        let mut many = node("a", 0, &[("b", None, false)], None);
        many.info.outputs[0].max_payloads = 257;
        assert!(limit(vec![many, node("b", 0, &[], None)]).contains("NodeMaxPayloadsAMDX"));
        assert_eq!(
            link(vec![node("a", 0, &[("a", None, false)], Some(u32::MAX))]).unwrap_err(),
            LinkError::TooDeep { node: "a".into(), depth: u32::MAX }
        );
        let mut wide = node("a", 0, &[("b", Some(u32::MAX), true)], None);
        wide.info.outputs[0].base_index = 2;
        assert!(limit(vec![wide]).contains("node indices"));
        // At the limits everything still links.
        let mut edge = node("a", MAX_NODE_INDEX, &[], Some(MAX_DEPTH - 1));
        edge.info.input.as_mut().unwrap().size = 32 * 1024;
        assert!(link(vec![edge]).is_ok());
    }

    #[test]
    fn chain_links_and_levels_follow_it() {
        let g = link(vec![
            node("a", 0, &[("b", None, false)], None),
            node("b", 0, &[("c", None, false)], None),
            node("c", 0, &[], None),
        ])
        .unwrap();
        assert_eq!(g.nodes[0].outputs[0].slots, vec![1]);
        let levels = g.levels(&BTreeSet::from([0]));
        assert_eq!(levels, vec![BTreeSet::from([0]), BTreeSet::from([1]), BTreeSet::from([2])]);
    }

    #[test]
    fn node_arrays_map_indices_to_slots() {
        let g = link(vec![
            node("root", 0, &[("bin", Some(4), true)], None),
            node("bin", 3, &[], None),
            node("bin", 1, &[], None),
        ])
        .unwrap();
        assert_eq!(g.nodes[0].outputs[0].slots, vec![NO_NODE, 2, NO_NODE, 1]);
        let unbounded = link(vec![node("root", 0, &[("bin", None, true)], None), node("bin", 2, &[], None)]).unwrap();
        assert_eq!(unbounded.nodes[0].outputs[0].slots, vec![NO_NODE, NO_NODE, 1]);
        // The size counts from the base index: base 2, size 3 declares nodes 2..=4.
        let mut based = node("root", 0, &[("bin", Some(3), true)], None);
        based.info.outputs[0].base_index = 2;
        let g = link(vec![based, node("bin", 4, &[], None)]).unwrap();
        assert_eq!(g.nodes[0].outputs[0].slots, vec![NO_NODE, NO_NODE, NO_NODE, NO_NODE, 1]);
        assert!(g.notes.is_empty(), "{:?}", g.notes);
    }

    #[test]
    fn nodes_past_a_declared_array_size_are_reached_and_noted() {
        let g = link(vec![node("root", 0, &[("bin", Some(2), true)], None), node("bin", 3, &[], None)]).unwrap();
        assert_eq!(g.nodes[0].outputs[0].slots, vec![NO_NODE, NO_NODE, NO_NODE, 1]);
        assert_eq!(g.notes.len(), 1);
        assert!(g.notes[0].contains("(\"bin\", 3)"), "{}", g.notes[0]);
        // One reading records of another size is left out, not an error.
        let mut wide = node("bin", 5, &[], None);
        wide.info.input.as_mut().unwrap().stride = 16;
        let g = link(vec![node("root", 0, &[("bin", Some(2), true)], None), wide]).unwrap();
        assert!(g.nodes[0].outputs[0].slots.iter().all(|&s| s == NO_NODE));
    }

    #[test]
    fn recursion_levels_count_down() {
        let g =
            link(vec![node("r", 0, &[("r", None, false), ("leaf", None, false)], Some(2)), node("leaf", 0, &[], None)])
                .unwrap();
        let levels = g.levels(&BTreeSet::from([0]));
        assert_eq!(levels.len(), 4, "r at levels 0..=2, leaf up to level 3: {levels:?}");
        assert_eq!(levels[3], BTreeSet::from([1]));
    }

    #[test]
    fn sharers_run_with_their_base() {
        let mut sharer = node("s", 0, &[], None);
        sharer.info.shares_input_with = Some(("b".into(), 0));
        let g = link(vec![node("a", 0, &[("b", None, false)], None), node("b", 0, &[], None), sharer]).unwrap();
        assert_eq!((g.nodes[2].shares_with, g.nodes[1].sharers.clone()), (Some(1), vec![2]));
        let levels = g.levels(&BTreeSet::from([0]));
        assert_eq!(levels[1], BTreeSet::from([1, 2]));
        let many: Vec<NodeDecl> = std::iter::once(node("b", 0, &[], None))
            .chain((0..MAX_SHARING as u32).map(|i| {
                let mut s = node("s", i, &[], None);
                s.info.shares_input_with = Some(("b".into(), 0));
                s
            }))
            .collect();
        assert!(matches!(link(many), Err(LinkError::SharedInput { .. })), "257 nodes on one input");
        let mut orphan = node("s", 0, &[], None);
        orphan.info.shares_input_with = Some(("zzz".into(), 0));
        assert!(matches!(link(vec![orphan]), Err(LinkError::SharedInput { .. })));
    }

    #[test]
    fn specialized_names_replace_the_default() {
        let mut decl = node("a", 0, &[("default", None, false)], None);
        decl.info.outputs[0].name_spec_id = Some(7);
        specialize_output_names(&mut decl.info, &[(3, b"other".to_vec()), (7, b"chosen\0junk".to_vec())]);
        assert_eq!(decl.info.outputs[0].name, "chosen");
    }

    #[test]
    fn errors_name_the_node() {
        assert_eq!(
            link(vec![node("a", 0, &[], None), node("a", 0, &[], None)]).unwrap_err(),
            LinkError::DuplicateNode { name: "a".into(), index: 0 }
        );
        assert_eq!(
            link(vec![node("a", 0, &[("zzz", None, false)], None)]).unwrap_err(),
            LinkError::MissingTarget { node: "a".into(), output: 0, target: "zzz".into() }
        );
        assert!(link(vec![node("a", 0, &[("zzz", None, true)], None)]).is_ok(), "sparse outputs may dangle");
        assert_eq!(
            link(vec![node("a", 0, &[("a", None, false)], None)]).unwrap_err(),
            LinkError::RecursionUndeclared { node: "a".into() }
        );
        assert!(matches!(
            link(vec![node("a", 0, &[("b", None, false)], None), node("b", 0, &[("a", None, false)], None)]),
            Err(LinkError::Cycle { .. })
        ));
        assert_eq!(
            link(vec![node("a", 0, &[], Some(40))]).unwrap_err(),
            LinkError::TooDeep { node: "a".into(), depth: 41 }
        );
        let mut wide = node("b", 0, &[], None);
        wide.info.input.as_mut().unwrap().stride = 16;
        assert!(matches!(
            link(vec![node("a", 0, &[("b", None, false)], None), wide]),
            Err(LinkError::RecordSizeMismatch { produced: 8, consumed: 16, .. })
        ));
    }
}
