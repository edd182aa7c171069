//! `unsafe` only at the C boundary and in the driver façade (issue 25).
//!
//! The compiler enforces the rule: `layer/src/lib.rs` denies `unsafe_code`
//! and allows it on the modules named in [`ALLOWED`]. This test reads
//! `layer/src/` and fails on the keyword (as a whole word, as `grep -w`
//! finds it, comments included) in any other file, so that the rule and
//! its short list of exceptions show in the test list, and a new
//! `#[allow(unsafe_code)]` elsewhere fails here until it is named.
//!
//! What to do instead: put the driver call behind a safe method of the
//! façade (`src/dispatch/`), or the conversion of the application's
//! pointers into Rust data in `src/ffi/`.

use std::path::{Path, PathBuf};

/// Where `unsafe_code` is allowed, relative to `src/` (folders end in `/`):
/// - `ffi/`: the C boundary, the exported entry points and hooks;
/// - `dispatch/`: the driver façade (dispatch tables, a safe method per
///   driver call, the mapped memory it owns).
const ALLOWED: &[&str] = &["ffi/", "dispatch/"];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The keyword as a whole word: `unsafe_code` in a lint name is not a use.
fn mentions_unsafe(line: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices("unsafe").any(|(at, _)| {
        !line[..at].chars().next_back().is_some_and(word) && !line[at + 6..].chars().next().is_some_and(word)
    })
}

fn allowed(relative: &str) -> bool {
    ALLOWED.iter().any(|a| if a.ends_with('/') { relative.starts_with(a) } else { relative == *a })
}

#[test]
fn words_are_matched_whole() {
    assert!(mentions_unsafe("unsafe { f() }"));
    assert!(mentions_unsafe("    // SAFETY: see `unsafe impl`"));
    assert!(!mentions_unsafe("#![deny(unsafe_code)]"));
    assert!(!mentions_unsafe("#![deny(unsafe_op_in_unsafe_fn)]"));
}

#[test]
fn unsafe_stays_at_the_boundary() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 20, "found the layer's sources");
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under src/").to_string_lossy().replace('\\', "/");
        if allowed(&relative) {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("a readable source");
        for (n, line) in text.lines().enumerate() {
            if mentions_unsafe(line) {
                found.push(format!("layer/src/{relative}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "`unsafe` outside {ALLOWED:?} (put the driver call behind a safe method of the façade in \
         src/dispatch/, or the pointer conversion in src/ffi/):\n{}",
        found.join("\n")
    );
}
