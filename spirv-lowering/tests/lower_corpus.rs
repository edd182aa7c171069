//! Every corpus module: analyze, lower every entry point (with and without
//! thread packing), validate with spirv-val, compare the snapshot, and check
//! the invariants.

mod common;

use spirv_lowering::{analyze, lower, LowerOptions};

/// Words that must not appear as an opcode/capability/storage class/builtin after lowering.
fn check_invariants(words: &[u32], entry: &str, push_offset: u32) -> Result<(), String> {
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
                if get(1) != 5 {
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

#[test]
fn lower_every_corpus_entry_point() {
    let files = common::corpus();
    assert!(!files.is_empty(), "no corpus found");
    let mut failures = vec![];
    let mut lowered = 0;
    for f in &files {
        let words = common::read_spv(f);
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        let infos = match analyze(&words) {
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
                let mut o = LowerOptions::new(&info.name);
                o.push_offset = 16;
                o.thread_pack_width = pack;
                o.shader_index = 7;
                let tag = format!("{stem}.{}{}", info.name, if pack > 1 { ".packed" } else { "" });
                match lower(&words, &o) {
                    Ok(l) => {
                        lowered += 1;
                        if let Err(m) = common::validate(&l.words) {
                            failures.push(format!("{tag}: spirv-val: {m}"));
                            continue;
                        }
                        if let Err(m) = check_invariants(&l.words, &info.name, 16) {
                            failures.push(format!("{tag}: invariant: {m}"));
                        }
                        let text = common::disassemble(&l.words);
                        if let Err(m) = common::check_snapshot(&format!("{tag}.spvasm"), &text) {
                            failures.push(m);
                        }
                    }
                    Err(e) => failures.push(format!("{tag}: lower: {e}")),
                }
            }
        }
    }
    eprintln!("lowered {lowered} entry points from {} files", files.len());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
