//! Every module of the DXC-compiled corpus (`tests/dxc/`, HLSL compiled by
//! DXC 1.9 at -O0 and default optimisation): every entry point analyzed and
//! lowered (with and without thread packing), the result accepted by
//! `spirv-val` and free of AMDX constructs. No snapshots: these modules
//! change whenever the compiler does; `tests/tests/graph_dxc*.rs` in the
//! conformance tests run them against CPU models.

mod common;

use spirv_lowering::{analyze, lower, LowerOptions};

#[test]
fn lower_every_dxc_entry_point() {
    let files = common::dxc_corpus();
    assert!(!files.is_empty(), "no DXC corpus found under tests/dxc");
    let mut failures = vec![];
    let mut lowered = 0;
    for f in &files {
        let words = common::read_spv(f);
        let stem = f.file_name().unwrap().to_string_lossy().into_owned();
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
                let tag = format!("{stem}:{}{}", info.name, if pack > 1 { " (packed)" } else { "" });
                match lower(&words, &o) {
                    Ok(l) => {
                        lowered += 1;
                        if let Err(m) = common::validate(&l.words) {
                            failures.push(format!("{tag}: spirv-val: {m}"));
                        } else if let Err(m) = common::check_invariants(&l.words, &info.name, 16) {
                            failures.push(format!("{tag}: invariant: {m}"));
                        }
                    }
                    Err(e) => failures.push(format!("{tag}: lower: {e}")),
                }
            }
        }
    }
    eprintln!("lowered {lowered} entry points from {} DXC modules", files.len());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
