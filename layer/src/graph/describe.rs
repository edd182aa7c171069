//! The `dump_graph` setting: for every graph pipeline created, a JSON
//! description of the linked graph and a Graphviz DOT file of it, so that a
//! user can see what the layer made of their node shaders.
//!
//! Files: `<dir>/graph<N>.json` and `<dir>/graph<N>.dot`, where N is the
//! graph's number in the process (the same N as `dump_spirv`'s files). The
//! JSON has the nodes (name, index, launch mode, workgroup size, input record,
//! outputs and their targets, recursion, input sharing, the levels the node
//! can run at from the graph's entries), the edges, and the scratch sizes.
//! A failed write is logged, never an error of pipeline creation.
//!
//! It takes the plain parts of a graph pipeline it reads (its handle, the
//! linked [`Graph`] and its [`FixedLayout`]) rather than the pipeline
//! itself: [`pipeline`](super::pipeline) writes the description at the
//! point of creation it always has, and this module stays below it.

use super::link::{Graph, LinkedOutput};
use super::scratch::FixedLayout;
use ash::vk;
use serde_json::{json, Value};
use spirv_lowering::abi::NO_NODE;
use spirv_lowering::{LaunchMode, NodeShaderInfo};
use std::collections::BTreeSet;
use std::path::Path;

/// The launch mode's name, as HLSL's `NodeLaunch` spells it.
fn mode(launch: &LaunchMode) -> &'static str {
    match launch {
        LaunchMode::BroadcastStatic { .. } | LaunchMode::BroadcastDynamic { .. } => "broadcast",
        LaunchMode::Coalescing { .. } => "coalescing",
        LaunchMode::Thread => "thread",
    }
}

fn launch(info: &NodeShaderInfo) -> Value {
    let mode = mode(&info.launch);
    match &info.launch {
        LaunchMode::BroadcastStatic { grid } => json!({ "mode": mode, "static_grid": grid }),
        LaunchMode::BroadcastDynamic { max_grid } => json!({ "mode": mode, "max_grid": max_grid }),
        LaunchMode::Coalescing { max_payloads } => json!({ "mode": mode, "max_records": max_payloads }),
        LaunchMode::Thread => json!({ "mode": mode }),
    }
}

/// The node slots an output reaches (each once).
fn targets(linked: &LinkedOutput) -> BTreeSet<u32> {
    linked.slots.iter().copied().filter(|&s| s != NO_NODE).collect()
}

/// For each node slot, the levels it can have records at when the graph is
/// entered at its API entry nodes.
fn levels_of(graph: &Graph) -> Vec<Vec<usize>> {
    let entries: BTreeSet<usize> =
        graph.nodes.iter().enumerate().filter(|(_, n)| n.decl.info.is_api_entry).map(|(i, _)| i).collect();
    let mut per_node = vec![Vec::new(); graph.nodes.len()];
    for (level, nodes) in graph.levels(&entries).iter().enumerate() {
        for &n in nodes {
            per_node[n].push(level);
        }
    }
    per_node
}

/// The JSON description of the graph pipeline `handle`: its linked
/// `graph` and its scratch layout `fixed`.
pub fn describe(handle: vk::Pipeline, graph: &Graph, fixed: &FixedLayout) -> Value {
    let levels = levels_of(graph);
    let nodes: Vec<Value> = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(slot, node)| {
            let info = &node.decl.info;
            let outputs: Vec<Value> = info
                .outputs
                .iter()
                .zip(&node.outputs)
                .map(|(out, linked)| {
                    let targets: Vec<Value> = linked
                        .slots
                        .iter()
                        .enumerate()
                        .filter(|(_, &s)| s != NO_NODE)
                        .map(|(array_index, &s)| json!({ "array_index": array_index, "slot": s }))
                        .collect();
                    json!({
                        "name": out.name,
                        "base_index": out.base_index,
                        "array_size": out.array_size,
                        "sparse": out.sparse,
                        "max_records": out.max_payloads,
                        "record_bytes": out.payload_size,
                        "targets": targets,
                    })
                })
                .collect();
            json!({
                "slot": slot,
                "name": node.decl.name,
                "index": node.decl.index,
                "entry_point": info.name,
                "launch": launch(info),
                "workgroup_size": info.workgroup_size,
                "input": info.input.as_ref().map(|i| json!({ "record_bytes": i.size, "stride": i.stride })),
                "outputs": outputs,
                "max_recursion": info.max_recursion,
                "shares_input_with": node.shares_with,
                "api_entry": info.is_api_entry,
                "levels": levels[slot],
            })
        })
        .collect();
    let edges: Vec<Value> = graph
        .nodes
        .iter()
        .enumerate()
        .flat_map(|(from, node)| {
            node.decl.info.outputs.iter().zip(&node.outputs).flat_map(move |(out, linked)| {
                targets(linked).into_iter().map(move |to| json!({ "from": from, "to": to, "output": out.name }))
            })
        })
        .collect();
    let (min, max, granularity) = fixed.sizes();
    json!({
        "handle": format!("{:?}", handle),
        "nodes": nodes,
        "edges": edges,
        "scratch": { "min_size": min, "max_size": max, "granularity": granularity, "fixed_bytes": fixed.end },
    })
}

/// The Graphviz DOT form of `graph`: one box per node (name, index, launch
/// mode), one arrow per output and target.
pub fn dot(graph: &Graph) -> String {
    let quote = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    let mut text = String::from("digraph execution_graph {\n  rankdir=LR;\n  node [shape=box];\n");
    for (slot, node) in graph.nodes.iter().enumerate() {
        let mode = mode(&node.decl.info.launch);
        let entry = if node.decl.info.is_api_entry { ", peripheries=2" } else { "" };
        text += &format!("  n{slot} [label=\"{}[{}]\\n{mode}\"{entry}];\n", quote(&node.decl.name), node.decl.index);
    }
    for (from, node) in graph.nodes.iter().enumerate() {
        for (out, linked) in node.decl.info.outputs.iter().zip(&node.outputs) {
            for to in targets(linked) {
                text += &format!("  n{from} -> n{to} [label=\"{}\"];\n", quote(&out.name));
            }
        }
    }
    text + "}\n"
}

/// Writes `graph<number>.json` and `graph<number>.dot` into `dir`.
pub fn write(dir: &str, number: u64, handle: vk::Pipeline, graph: &Graph, fixed: &FixedLayout) {
    let json = serde_json::to_string_pretty(&describe(handle, graph, fixed)).unwrap_or_default();
    for (path, text) in [
        (Path::new(dir).join(format!("graph{number}.json")), json),
        (Path::new(dir).join(format!("graph{number}.dot")), dot(graph)),
    ] {
        match std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, text)) {
            Ok(()) => tracing::info!("dump_graph: wrote {}", path.display()),
            Err(e) => tracing::warn!("dump_graph: cannot write {}: {e}", path.display()),
        }
    }
}
