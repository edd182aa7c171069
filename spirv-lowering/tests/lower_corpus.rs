//! Every corpus module: analyze, lower every entry point (with and without
//! thread packing), validate with spirv-val, compare the snapshot, and check
//! the invariants.

mod common;

#[test]
fn lower_every_corpus_entry_point() {
    let files = common::corpus();
    assert!(!files.is_empty(), "no corpus found");
    let (lowered, failures) = common::lower_every_entry_point(&files, 7, |tag, words| {
        common::check_snapshot(&format!("{tag}.spvasm"), &common::disassemble(words))
    });
    eprintln!("lowered {lowered} entry points from {} files", files.len());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
