//! The `statistics` setting (issue 14): a hello-chain dispatch of four
//! entry records with grids 16, 3, 9 and 12 writes one JSON line whose
//! counts match the chain's known work: level 0, firstNode: 4 records, 40
//! workgroups (the grids' sum); level 1, secondNode: 80 records (2 per
//! firstNode workgroup), in workgroups of as many records as the layer
//! packs thread-node invocations into one; level 2, thirdNode: 80 records
//! (coalescing, up to 32 a workgroup: 3 workgroups); and the scratch frames
//! each level's records took (firstNode's 80 records of 8 bytes and
//! secondNode's 80: one frame each; thirdNode enqueues nothing) within the
//! pool. A second dispatch writes a second line. A third, of 17,000
//! records (past the layer's `GPU_GRIDS_FROM`, so level 0 is sized on the
//! GPU), is counted from what the GPU sized. Own file: the setting is read
//! from the environment once per process.
//!
//! The packing width is the layer's choice and it reports it nowhere; it is
//! read from what the driver was given: the lowered secondNode kernel that
//! `dump_spirv` writes runs one record per invocation, so its `LocalSize`
//! is the number of records a workgroup takes.

use ash::vk;
use conformance_tests::graph::{hello_chain_records, TestGraph};
use conformance_tests::models::hello_chain;
use conformance_tests::{env, InstanceOptions, TestDevice, TestInstance};

/// Invocations per workgroup of the one entry point of a lowered kernel
/// (its `OpExecutionMode LocalSize`; the lowering writes no `LocalSizeId`).
fn local_size(spv: &[u8]) -> u32 {
    let words: Vec<u32> = spv.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let mut sizes = Vec::new();
    let mut at = 5;
    while let Some(&first) = words.get(at) {
        let (opcode, count) = (first & 0xffff, (first >> 16) as usize);
        // OpExecutionMode (16) %entry LocalSize (17) x y z.
        if opcode == 16 && count == 6 && words[at + 2] == 17 {
            sizes.push(words[at + 3] * words[at + 4] * words[at + 5]);
        }
        assert!(opcode != 331 || words[at + 2] != 38, "LocalSizeId in a lowered kernel");
        at += count.max(1);
    }
    assert_eq!(sizes.len(), 1, "one LocalSize in the lowered kernel");
    sizes[0]
}

/// Records per workgroup of the packed thread node secondNode: the
/// `LocalSize` of its lowered kernel, as `dump_spirv` wrote it in `dir`.
fn secondnode_records_per_workgroup(dir: &std::path::Path) -> u64 {
    let lowered: Vec<_> = std::fs::read_dir(dir)
        .expect("dump_spirv directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(".secondNode.0.lowered.spv")))
        .collect();
    assert_eq!(lowered.len(), 1, "one lowered secondNode: {lowered:?}");
    u64::from(local_size(&std::fs::read(&lowered[0]).expect("lowered secondNode")))
}

#[test]
fn dispatches_are_counted_per_level_and_node() {
    let path = std::env::temp_dir().join(format!("emu-se-statistics-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let path_text = path.display().to_string();
    let dump = std::env::temp_dir().join(format!("emu-se-statistics-spirv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dump);
    let dump_text = dump.display().to_string();
    env::init_with(&[("VK_EMU_SE_STATISTICS", path_text.as_str()), ("VK_EMU_SE_DUMP_SPIRV", dump_text.as_str())])
        .expect("environment");
    let records: Vec<(u32, u32)> = [16, 3, 9, 12].iter().enumerate().map(|(i, &g)| (g, i as u32)).collect();
    let many: Vec<(u32, u32)> = (0..17_000u32).map(|i| (i % 5, i % 4)).collect();
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(&dev, &uav).expect("graph");
        let (min, max, _) = graph.scratch_sizes().expect("sizes");
        let scratch = graph.scratch(max.min(min * 64)).expect("scratch");
        let entry = graph.node_index("firstNode", 0).expect("entry");
        for (run, records) in [&records, &records, &many].into_iter().enumerate() {
            let bytes = hello_chain_records(records);
            dev.submit_once(|cb| graph.record(cb, &scratch, run == 0, &[(entry, &bytes, records.len() as u32, 8)]))
                .expect("submit");
        }
        let mut want = hello_chain(&records, &[]);
        want.iter_mut().for_each(|w| *w *= 2);
        let mut uav_want = hello_chain(&many, &[]);
        uav_want.iter_mut().zip(want).for_each(|(w, two)| *w += two);
        assert_eq!(uav.read_u32(8).expect("read"), uav_want);
    }
    inst.finish();
    let text = std::fs::read_to_string(&path).expect("statistics file");
    let _ = std::fs::remove_file(&path);
    let packed = secondnode_records_per_workgroup(&dump);
    let _ = std::fs::remove_dir_all(&dump);
    eprintln!("secondNode: {packed} records per workgroup");
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(lines.len(), 3, "one line per dispatch:\n{text}");
    for v in &lines[..2] {
        assert_eq!(node_counts(v), expected_counts(&records, packed), "{v}");
        let frames: Vec<u64> =
            v["levels"].as_array().expect("levels").iter().map(|l| l["frames"].as_u64().expect("frames")).collect();
        assert_eq!(frames, [1, 1, 0], "frames claimed per level: {v}");
        assert_eq!(v["frames_high_water"].as_u64(), Some(1), "{v}");
        assert!(v["frame_count"].as_u64() > Some(1), "{v}");
        assert_eq!(v["frame_bytes"].as_u64(), Some(4096), "{v}");
    }
    assert_eq!(node_counts(&lines[2]), expected_counts(&many, packed), "{}", lines[2]);
}

/// (node, records, workgroups) of each node of each level of a JSON line.
fn node_counts(v: &serde_json::Value) -> Vec<(String, u64, u64)> {
    v["levels"]
        .as_array()
        .expect("levels")
        .iter()
        .flat_map(|l| l["nodes"].as_array().expect("nodes").clone())
        .map(|n| {
            (
                n["node"].as_str().expect("name").to_string(),
                n["records"].as_u64().expect("records"),
                n["workgroups"].as_u64().expect("workgroups"),
            )
        })
        .collect()
}

/// The work of the entry records (grid, index): firstNode runs a grid's
/// workgroups, each sends 2 records to secondNode (`packed` a workgroup),
/// each of which sends one to thirdNode (MaxRecords(32) coalescing input).
fn expected_counts(records: &[(u32, u32)], packed: u64) -> Vec<(String, u64, u64)> {
    let grids: u64 = records.iter().map(|&(g, _)| u64::from(g)).sum();
    let (entries, second) = (records.len() as u64, 2 * grids);
    let expected = [
        ("firstNode", entries, grids),
        ("secondNode", second, second.div_ceil(packed)),
        ("thirdNode", second, second.div_ceil(32)),
    ];
    expected.iter().map(|&(n, r, w)| (n.to_string(), r, w)).collect()
}
