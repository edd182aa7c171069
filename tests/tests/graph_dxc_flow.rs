//! End to end on lavapipe, node shaders as a real DXC 1.9 emits them
//! (`spirv-lowering/tests/dxc/`), each graph at default optimisation and at
//! `-O0`: recursion (`GetRemainingRecursionLevels`, `IsValid` on the self
//! output), input sharing (`[NodeShareInputOf]`, and RW records with
//! `FinishedCrossGroupSharing`), and node output arrays (dense, sparse,
//! unbounded, `IsValid`) whose producer and members are one-node modules
//! with every entry point named `main`, renamed by the application through
//! `VkPipelineShaderStageNodeCreateInfoAMDX`. Results are compared word for
//! word with the CPU models in `conformance_tests::dxc_models`.

use ash::vk;
use conformance_tests::dxc_models::{self as m, bytes_of, run_graph, GraphRun, Opt};
use conformance_tests::graph::{SpecEntries, Stage};

/// A binary tree of records three levels deep, then a coalescing leaf node.
fn recursion(opt: Opt) {
    // Entry ids 0 and 1 only: their trees' ids (at most 22) keep `Out[16 + id]`
    // below word 40, where the leaf node's counters are.
    let records = [(0u32, 3u32), (1, 10), (0, 1000)];
    let words: Vec<u32> = records.iter().flat_map(|&(id, tag)| [id, tag]).collect();
    let stages = [Stage { entry: "deepen", node: None }, Stage { entry: "leaf", node: None }];
    let label = format!("recursion.hlsl ({opt:?})");
    let got = run_graph(&GraphRun {
        label: label.clone(),
        features: vk::PhysicalDeviceFeatures::default(),
        modules: &[(m::RECURSION.spv(opt), &stages)],
        specs: &[],
        out_words: 48,
        entry: ("deepen", 0),
        records: &bytes_of(&words),
        count: records.len() as u32,
        stride: 8,
    });
    m::assert_words(&label, &got, &m::recursion(&records));
}

#[test]
fn recursion_tree_with_remaining_levels() {
    recursion(Opt::Default);
}

#[test]
fn recursion_tree_with_remaining_levels_o0() {
    recursion(Opt::O0);
}

/// `second` runs on every record sent to `first`; `gather`'s eight groups
/// share one RW record and the last to finish sums it.
fn sharing(opt: Opt) {
    let bases = [5u32, 40, 6, 7, 9];
    let stages = [
        Stage { entry: "split", node: None },
        Stage { entry: "first", node: None },
        Stage { entry: "second", node: None },
        Stage { entry: "gather", node: None },
    ];
    let label = format!("sharing.hlsl ({opt:?})");
    let got = run_graph(&GraphRun {
        label: label.clone(),
        features: vk::PhysicalDeviceFeatures::default(),
        modules: &[(m::SHARING.spv(opt), &stages)],
        specs: &[],
        out_words: 48,
        entry: ("split", 0),
        records: &bytes_of(&bases),
        count: bases.len() as u32,
        stride: 4,
    });
    m::assert_words(&label, &got, &m::sharing(&bases));
}

#[test]
fn share_input_of_and_rw_input_sharing() {
    sharing(Opt::Default);
}

#[test]
fn share_input_of_and_rw_input_sharing_o0() {
    sharing(Opt::O0);
}

/// renamed_fanout's `main` as ("fanout", 0) and renamed_sink's `main` as
/// every array member present, each told its index by specialization
/// constant 0 so that the buffer shows which member got which record.
fn renamed_arrays(opt: Opt) {
    let producer = [Stage { entry: "main", node: Some(("fanout", 0)) }];
    let members: Vec<(&str, u32)> = m::FANOUT_DENSE
        .iter()
        .map(|&k| ("dense", k))
        .chain(m::FANOUT_SPARSE.iter().map(|&k| ("sparse", k)))
        .chain(m::FANOUT_UNBOUNDED.iter().map(|&k| ("unbounded", k)))
        .collect();
    let sinks: Vec<Stage<'_>> = members.iter().map(|&node| Stage { entry: "main", node: Some(node) }).collect();
    let index_bytes: Vec<[u8; 4]> = members.iter().map(|&(_, k)| k.to_le_bytes()).collect();
    let entries: Vec<[(u32, &[u8]); 1]> = index_bytes.iter().map(|b| [(0, &b[..])]).collect();
    // Stage 0 is the producer; sink i is stage 1 + i.
    let specs: Vec<(usize, SpecEntries<'_>)> = entries.iter().enumerate().map(|(i, e)| (1 + i, &e[..])).collect();
    let biases = [7u32, 1000];
    let label = format!("renamed_fanout.hlsl + renamed_sink.hlsl ({opt:?})");
    let got = run_graph(&GraphRun {
        label: label.clone(),
        features: vk::PhysicalDeviceFeatures::default(),
        modules: &[(m::RENAMED_FANOUT.spv(opt), &producer), (m::RENAMED_SINK.spv(opt), &sinks)],
        specs: &specs,
        out_words: 128,
        entry: ("fanout", 0),
        records: &bytes_of(&biases),
        count: biases.len() as u32,
        stride: 4,
    });
    m::assert_words(&label, &got, &m::fanout(&biases));
}

#[test]
fn renamed_main_entries_and_node_arrays() {
    renamed_arrays(Opt::Default);
}

#[test]
fn renamed_main_entries_and_node_arrays_o0() {
    renamed_arrays(Opt::O0);
}
