//! Every module of the DXC-compiled corpus (`tests/dxc/`, HLSL compiled by
//! DXC 1.9 at -O0 and default optimisation): every entry point analyzed and
//! lowered (with and without thread packing), the result accepted by
//! `spirv-val` and free of AMDX constructs. No snapshots: these modules
//! change whenever the compiler does; `tests/tests/graph_dxc*.rs` in the
//! conformance tests run them against CPU models.

mod common;

#[test]
fn lower_every_dxc_entry_point() {
    let files = common::dxc_corpus();
    assert!(!files.is_empty(), "no DXC corpus found under tests/dxc");
    let (lowered, failures) = common::lower_every_entry_point(&files, 0, |_, _| Ok(()));
    eprintln!("lowered {lowered} entry points from {} DXC modules", files.len());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
