//! Analysis results for the corpus: launch modes, grids, payload layouts,
//! outputs and node attributes, plus specialization and the ABI mirror.

mod common;

use spirv_lowering::abi::{self, spirv_layout as L, Field};
use spirv_lowering::{analyze, analyze_with, lower, LaunchMode, LowerOptions, NodeShaderInfo, SpecMap, Visibility};

fn info(file: &str, entry: &str) -> NodeShaderInfo {
    let w = common::read_spv(&common::crate_dir().join("tests/corpus").join(file));
    analyze(&w).unwrap().into_iter().find(|i| i.name == entry).unwrap()
}

#[test]
fn launch_modes_and_grids() {
    let first = info("01_hello_chain.spv", "firstNode");
    assert_eq!(first.launch, LaunchMode::BroadcastDynamic { max_grid: Some([16, 1, 1]) });
    assert_eq!(first.workgroup_size, [2, 1, 1]);
    let g = first.input.unwrap().dispatch_grid.unwrap();
    assert_eq!((g.offset, g.component_bytes, g.components), (0, 4, 1));
    assert_eq!(info("01_hello_chain.spv", "secondNode").launch, LaunchMode::Thread);
    let third = info("01_hello_chain.spv", "thirdNode");
    assert_eq!(third.launch, LaunchMode::Coalescing { max_payloads: 32 });
    assert!(third.uses_workgroup_memory && third.uses_control_barriers);
    assert_eq!(info("02_broadcast_static.spv", "staticGrid").launch, LaunchMode::BroadcastStatic { grid: [4, 2, 1] });
    let g = info("04_broadcast_dynamic_uint1.spv", "dynGrid1").input.unwrap().dispatch_grid.unwrap();
    assert_eq!((g.offset, g.component_bytes, g.components), (4, 4, 1));
    let g = info("05_broadcast_dynamic_uint2.spv", "dynGrid2").input.unwrap().dispatch_grid.unwrap();
    assert_eq!((g.offset, g.component_bytes, g.components), (8, 4, 2));
    let g = info("06_broadcast_dynamic_u16x3.spv", "dynGrid16").input.unwrap().dispatch_grid.unwrap();
    assert_eq!((g.offset, g.component_bytes, g.components), (4, 2, 3));
    let no_input = info("07_broadcast_no_input.spv", "noInput").input.unwrap();
    assert!(no_input.implicit);
    assert_eq!(no_input.size, 12);
    let empty = info("09_coalescing_empty_input.spv", "emptyIn").input.unwrap();
    assert_eq!((empty.size, empty.stride, empty.max_payloads), (0, 4, 8));
    assert!(info("10_thread_packable.spv", "threadSum").thread_packable());
    assert!(!info("11_thread_shape_workgroup_memory.spv", "oneThreadShared").thread_packable());
    assert!(!info("12_thread_shape_barrier.spv", "oneThreadBarrier").thread_packable());
}

#[test]
fn outputs() {
    let o = &info("14_output_group_records_array.spv", "groupRecords").outputs[0];
    assert_eq!(
        (o.name.as_str(), o.base_index, o.array_size, o.sparse, o.max_payloads),
        ("target", 2, Some(6), false, 64)
    );
    assert_eq!(o.visibilities, vec![Visibility::Workgroup]);
    let o = &info("15_output_sparse_array.spv", "sparseArray").outputs[0];
    assert_eq!((o.array_size, o.sparse), (Some(8), true));
    let o = &info("16_output_unbounded_sparse.spv", "unboundedSparse").outputs[0];
    assert_eq!((o.array_size, o.sparse), (None, true));
    let s = info("17_output_shares_limits.spv", "sharedLimits");
    assert_eq!(s.outputs[1].shares_limits_with, Some(0));
    assert!(s.input.is_none());
    let e = info("18_output_empty.spv", "emptyOutputs");
    assert_eq!((e.outputs[0].payload_size, e.outputs[0].record_stride), (0, 4));
    let t = info("13_output_thread_records.spv", "threadRecords");
    assert_eq!(t.outputs[0].visibilities, vec![Visibility::Invocation]);
    let f = info("23_finish_writing.spv", "spawner");
    assert_eq!(
        (f.outputs[0].payload_size, f.outputs[0].record_stride, f.outputs[0].track_finish_writing),
        (36, 40, true)
    );
}

/// A kernel that does not read the ShaderIndexAMDX builtin is the same for
/// every shader index (the layer shares it between node-array members); one
/// that reads it is not.
#[test]
fn kernels_depend_on_the_shader_index_only_when_read() {
    let lower_at = |file: &str, entry: &str, index: u32| {
        let w = common::read_spv(&common::crate_dir().join("tests/corpus").join(file));
        let mut o = LowerOptions::new(entry);
        o.shader_index = index;
        lower(&w, &o).unwrap()
    };
    let (a, b) = (lower_at("01_hello_chain.spv", "secondNode", 0), lower_at("01_hello_chain.spv", "secondNode", 9));
    assert!(!a.reads_shader_index);
    assert_eq!(a.words, b.words);
    let (a, b) = (
        lower_at("20_shader_index_builtin.spv", "material", 0),
        lower_at("20_shader_index_builtin.spv", "material", 9),
    );
    assert!(a.reads_shader_index);
    assert_ne!(a.words, b.words);
}

#[test]
fn node_attributes() {
    assert_eq!(info("19_recursion.spv", "recurse").max_recursion, Some(5));
    assert_eq!(info("20_shader_index_builtin.spv", "material").shader_index, 3);
    let s = info("21_shares_input.spv", "sharer");
    assert_eq!(s.shares_input_with, Some(("base".to_string(), 0)));
    assert!(!s.is_api_entry);
    assert!(!info("22_not_api_entry.spv", "innerOnly").is_api_entry);
    assert!(info("23_finish_writing.spv", "gather").track_finish_writing);
    let w = common::read_spv(&common::crate_dir().join("tests/corpus/val-exempt/v29_spec_string_specid.spv"));
    assert_eq!(analyze(&w).unwrap()[0].outputs[0].name_spec_id, Some(7));
    let w = common::read_spv(&common::crate_dir().join("tests/corpus/val-exempt/v26_ptr_access_chain.spv"));
    assert!(analyze(&w).unwrap()[0].input_needs_contiguous_records);
}

#[test]
fn specialization_changes_analysis_and_lowering() {
    let w = common::read_spv(&common::crate_dir().join("tests/corpus/28_spec_constants_static.spv"));
    let d = analyze(&w).unwrap().remove(0);
    assert_eq!(d.launch, LaunchMode::BroadcastStatic { grid: [4, 2, 1] });
    assert_eq!(d.workgroup_size, [64, 1, 1]);
    let spec: SpecMap = [(0, 9), (1, 16), (2, 5), (3, 32)].into_iter().collect();
    let s = analyze_with(&w, &spec).unwrap().remove(0);
    assert_eq!(s.launch, LaunchMode::BroadcastStatic { grid: [16, 2, 1] });
    assert_eq!(s.workgroup_size, [32, 1, 1]);
    assert_eq!((s.outputs[0].max_payloads, s.outputs[0].base_index), (9, 5));
    let mut o = LowerOptions::new(&s.name);
    o.specialization = spec;
    let l = lower(&w, &o).unwrap();
    common::validate(&l.words).unwrap();
    // The application's spec constants survive lowering.
    let text = common::disassemble(&l.words);
    for id in 0..5 {
        assert!(text.contains(&format!("SpecId {id}")), "SpecId {id} lost");
    }
}

#[test]
fn application_push_block_is_extended() {
    let w = common::read_spv(&common::crate_dir().join("tests/corpus/27_app_resources.spv"));
    let name = analyze(&w).unwrap().remove(0).name;
    let mut o = LowerOptions::new(&name);
    o.push_offset = 16;
    let l = lower(&w, &o).unwrap();
    common::validate(&l.words).unwrap();
    let text = common::disassemble(&l.words);
    assert_eq!(text.lines().filter(|l| l.contains("OpVariable") && l.ends_with("PushConstant")).count(), 1);
    assert!(text.contains("Offset 16"));
}

#[test]
fn thread_packing_sets_workgroup_size() {
    let w = common::read_spv(&common::crate_dir().join("tests/corpus/10_thread_packable.spv"));
    let mut o = LowerOptions::new("threadSum");
    o.thread_pack_width = 32;
    let l = lower(&w, &o).unwrap();
    assert_eq!((l.dispatch_workgroup_size, l.records_per_workgroup), ([32, 1, 1], 32));
    let w = common::read_spv(&common::crate_dir().join("tests/corpus/12_thread_shape_barrier.spv"));
    let mut o = LowerOptions::new("oneThreadBarrier");
    o.thread_pack_width = 32;
    let l = lower(&w, &o).unwrap();
    assert_eq!((l.dispatch_workgroup_size, l.records_per_workgroup), ([1, 1, 1], 1));
}

/// The SPIR-V member tables the lowering declares match the `#[repr(C)]` structs.
#[test]
fn abi_spirv_mirror_matches_repr_c() {
    use core::mem::{offset_of, size_of};
    fn end(t: &[(Field, u32)]) -> usize {
        t.iter()
            .map(|(f, o)| {
                *o as usize
                    + match f {
                        Field::U32 => 4,
                        Field::U64 => 8,
                        Field::U32x3 => 12,
                    }
            })
            .max()
            .unwrap()
    }
    let offsets = |t: &[(Field, u32)]| t.iter().map(|x| x.1 as usize).collect::<Vec<_>>();
    assert_eq!(
        offsets(L::NODE_PUSH),
        [
            offset_of!(abi::NodePush, dispatch),
            offset_of!(abi::NodePush, ctx),
            offset_of!(abi::NodePush, level),
            offset_of!(abi::NodePush, slot)
        ]
    );
    assert_eq!(end(L::NODE_PUSH), size_of::<abi::NodePush>());
    assert_eq!(
        offsets(L::NODE_DISPATCH),
        [
            offset_of!(abi::NodeDispatch, indirect),
            offset_of!(abi::NodeDispatch, workgroup_count),
            offset_of!(abi::NodeDispatch, record_count),
            offset_of!(abi::NodeDispatch, workgroup_base),
            offset_of!(abi::NodeDispatch, level_workgroups),
            offset_of!(abi::NodeDispatch, mode),
            offset_of!(abi::NodeDispatch, key_node),
            offset_of!(abi::NodeDispatch, status_in),
            offset_of!(abi::NodeDispatch, records),
            offset_of!(abi::NodeDispatch, starts),
            offset_of!(abi::NodeDispatch, status),
        ]
    );
    assert_eq!(end(L::NODE_DISPATCH), size_of::<abi::NodeDispatch>());
    assert_eq!(offsets(L::GRID_ENTRY), [offset_of!(abi::GridEntry, start), offset_of!(abi::GridEntry, rank)]);
    assert_eq!(end(L::GRID_ENTRY), size_of::<abi::GridEntry>());
    use abi::GraphContext as G;
    let pair = |o: usize, size: usize| [o, o + size];
    let mut want: Vec<usize> = vec![];
    want.extend([
        offset_of!(G, pool),
        offset_of!(G, keys),
        offset_of!(G, frame_count),
        offset_of!(G, frame_shift),
        offset_of!(G, node_count),
        offset_of!(G, tag),
    ]);
    want.extend(pair(offset_of!(G, rank_counts), 8));
    want.extend(pair(offset_of!(G, grid_counts), 8));
    want.extend(pair(offset_of!(G, dispatches), 8));
    want.extend([offset_of!(G, schedules), offset_of!(G, links), offset_of!(G, nodes), offset_of!(G, sink)]);
    want.extend(pair(offset_of!(G, status), 4));
    want.extend(pair(offset_of!(G, done), 4));
    want.extend([
        offset_of!(G, carried),
        offset_of!(G, homes),
        offset_of!(G, done_groups),
        offset_of!(G, entry_counts),
    ]);
    want.extend(pair(offset_of!(G, claimed), 4));
    want.extend([offset_of!(G, pinned), offset_of!(G, _reserved)]);
    assert_eq!(offsets(L::GRAPH_CONTEXT), want);
    assert_eq!(end(L::GRAPH_CONTEXT), size_of::<G>());
    assert_eq!(end(L::OUTPUT_LINK), size_of::<abi::OutputLink>());
    assert_eq!(L::NODE_INFO[3].1 as usize, offset_of!(abi::NodeInfo, shader_index));
    assert_eq!(end(L::NODE_INFO), size_of::<abi::NodeInfo>());
    assert_eq!(L::NODE_SCHEDULE[7].1 as usize, offset_of!(abi::NodeSchedule, share_base));
    assert_eq!(L::NODE_SCHEDULE[9].1 as usize, offset_of!(abi::NodeSchedule, per_frame));
    assert_eq!(L::NODE_SCHEDULE[10].1 as usize, offset_of!(abi::NodeSchedule, tail));
    assert_eq!(end(L::NODE_SCHEDULE), size_of::<abi::NodeSchedule>());
}

#[test]
fn consecutive_targets_need_no_table() {
    use spirv_lowering::{abi::NO_NODE, OutputTargets};
    let t = |slots: Vec<u32>| OutputTargets { table: 0, slots, ..Default::default() }.consecutive();
    assert_eq!(t(vec![4, 5, 6]), Some(4));
    assert_eq!(t(vec![7]), Some(7));
    assert_eq!(t(vec![]), None);
    assert_eq!(t(vec![4, 6]), None);
    assert_eq!(t(vec![4, NO_NODE]), None);
    assert_eq!(t(vec![NO_NODE]), None);
}

#[test]
fn mesh_nodes_are_analyzed_and_lowered_as_mesh_shaders() {
    let mesh = info("35_mesh_node.spv", "main");
    assert!(mesh.mesh && !info("01_hello_chain.spv", "firstNode").mesh);
    assert_eq!(mesh.launch, LaunchMode::BroadcastDynamic { max_grid: Some([2, 2, 1]) });
    let g = mesh.input.unwrap().dispatch_grid.unwrap();
    assert_eq!((g.offset, g.component_bytes, g.components), (4, 4, 2));
    let w = common::read_spv(&common::crate_dir().join("tests/corpus/35_mesh_node.spv"));
    let lowered = lower(&w, &LowerOptions::new("main")).unwrap();
    assert!(lowered.reads_shader_index && lowered.info.mesh);
    let text = common::disassemble(&lowered.words);
    assert!(text.contains("OpEntryPoint MeshEXT"), "{text}");
    // No finisher: a mesh node never counts a compute level done.
    assert!(!text.contains("node_level_finish"), "{text}");
}

#[test]
fn a_mesh_node_that_enqueues_is_refused() {
    // The mesh node's module with an output declared and allocated: turn the
    // hello chain's first node into a MeshEXT entry point.
    let path = common::crate_dir().join("tests/corpus/01_hello_chain.spv");
    let mut w = common::read_spv(&path);
    let mut i = 5;
    while i < w.len() {
        let (wc, op) = ((w[i] >> 16) as usize, w[i] & 0xffff);
        if op == 15 && w[i + 1] == 5 {
            w[i + 1] = 5365; // MeshEXT
            break;
        }
        i += wc.max(1);
    }
    let err = analyze(&w).unwrap_err().to_string();
    assert!(err.contains("a mesh node cannot enqueue"), "{err}");
}

/// The lowered text of `entry` in corpus module `file`: the lines of the
/// calls to the functions named `names`, in text order, and then those of
/// the barriers a done count starts with (acquire-release of device and
/// workgroup memory, semantics 0x148).
fn lowered_calls(file: &str, entry: &str, names: &[&str]) -> Vec<Vec<usize>> {
    let w = common::read_spv(&common::crate_dir().join("tests/corpus").join(file));
    let text = common::disassemble(&lower(&w, &LowerOptions::new(entry)).unwrap().words);
    let lines_where = |f: &dyn Fn(&[&str]) -> bool| -> Vec<usize> {
        text.lines().enumerate().filter(|(_, l)| f(&l.split_whitespace().collect::<Vec<_>>())).map(|(i, _)| i).collect()
    };
    let id_of = |name: &str| {
        let quoted = format!("\"{name}\"");
        text.lines().find(|l| l.contains("OpName") && l.ends_with(&quoted)).and_then(|l| l.split_whitespace().nth(1))
    };
    let mut found: Vec<Vec<usize>> = names
        .iter()
        .map(|name| match id_of(name) {
            None => vec![],
            Some(fid) => lines_where(&|w| w.get(2) == Some(&"OpFunctionCall") && w.get(4) == Some(&fid)),
        })
        .collect();
    let semantics: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("OpConstant ") && l.ends_with(" 328"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    found.push(lines_where(&|w| {
        w.first() == Some(&"OpControlBarrier") && w.get(3).is_some_and(|s| semantics.contains(s))
    }));
    found
}

#[test]
fn workgroups_count_done_where_their_last_counter_changes() {
    // No outputs: counted before the node's code, finished (when last) after it.
    let calls = lowered_calls("01_hello_chain.spv", "thirdNode", &["node_level_finish", "thirdNode_node_code"]);
    let (finish, code, count) = (&calls[0], &calls[1], &calls[2]);
    assert!(finish.len() == 1 && code.len() == 1 && count.len() == 1, "{calls:?}");
    assert!(count[0] < code[0] && code[0] < finish[0], "{calls:?}");
    // One allocation every invocation passes once: counted right after it.
    let names = ["node_output0_allocate_workgroup", "node_count_done_at_last_change"];
    let calls = lowered_calls("01_hello_chain.spv", "firstNode", &names);
    let (allocate, count) = (&calls[0], &calls[1]);
    assert!(allocate.len() == 1 && count.len() == 1 && allocate[0] < count[0], "{calls:?}");
    // An allocation under a branch: counted at the end, after the code.
    let names = ["node_count_done_at_last_change", "sparseArray_node_code"];
    let calls = lowered_calls("val-exempt/v15_output_sparse_array.spv", "sparseArray", &names);
    let (site, code, count) = (&calls[0], &calls[1], &calls[2]);
    assert!(site.is_empty() && code.len() == 1 && count.len() == 1 && code[0] < count[0], "{calls:?}");
}

/// The `phase_clock` diagnostic: a valid kernel that reads the clock at the
/// start and at each phase (a count inside the code included), adding to
/// the table at the address given; without it, no clock at all.
#[test]
fn phase_clock_reads_the_clock_at_every_phase_only_when_asked() {
    let w = common::read_spv(&common::crate_dir().join("tests/corpus/01_hello_chain.spv"));
    for entry in ["firstNode", "secondNode", "thirdNode"] {
        let plain = common::disassemble(&lower(&w, &LowerOptions::new(entry)).unwrap().words);
        assert!(!plain.contains("OpReadClockKHR") && !plain.contains("ShaderClockKHR"), "{entry}");
        let table = 0x1234_5678_9ab0_u64;
        let options = LowerOptions { phase_clock: Some(table), ..LowerOptions::new(entry) };
        let words = lower(&w, &options).unwrap().words;
        common::validate(&words).unwrap_or_else(|e| panic!("{entry}: {e}"));
        let text = common::disassemble(&words);
        // The start, then records found, code done, counted done, finisher
        // start and end, and the end; a kernel that counts at its last
        // allocation counts again (and may finish) where its code did not run.
        let at_site = text.contains("\"node_count_done_at_last_change\"");
        let reads = if at_site { 10 } else { 7 };
        assert_eq!(text.matches("OpReadClockKHR").count(), reads, "{entry}");
        assert!(text.contains("OpCapability ShaderClockKHR") && text.contains("SPV_KHR_shader_clock"), "{entry}");
        assert!(text.contains(&table.to_string()), "{entry}: the table's address is a constant");
    }
}
