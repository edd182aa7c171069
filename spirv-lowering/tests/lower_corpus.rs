//! Every corpus module: analyze, lower every entry point (with and without
//! thread packing), validate with spirv-val, compare the snapshot, and check
//! the invariants.

mod common;

use spirv_lowering::{analyze, lower, LowerOptions};

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
                        if let Err(m) = common::check_invariants(&l.words, &info.name, 16) {
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
