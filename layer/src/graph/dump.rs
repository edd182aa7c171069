//! The `dump_spirv` setting: every node's SPIR-V as the application gave it
//! and as the layer handed it to the driver, one file each, so a user can
//! run `spirv-val` or `spirv-dis` on exactly what the driver received.
//!
//! Files: `<dir>/graph<N>.node<slot>.<name>.<index>.{input,lowered}.spv`,
//! where N counts graphs in the process. A failed write is logged, never an
//! error of pipeline creation.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A new graph number (unique in the process).
pub fn next_graph_number() -> u64 {
    static GRAPHS: AtomicU64 = AtomicU64::new(0);
    GRAPHS.fetch_add(1, Ordering::Relaxed)
}

/// Writes `words` as `<dir>/graph<graph>.node<slot>.<name>.<index>.<kind>.spv`.
pub fn write(dir: &str, graph: u64, slot: usize, name: &str, index: u32, kind: &str, words: &[u32]) {
    let safe: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '-' }).collect();
    let path: PathBuf = Path::new(dir).join(format!("graph{graph}.node{slot}.{safe}.{index}.{kind}.spv"));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let written = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, bytes));
    match written {
        Ok(()) => tracing::info!("dump_spirv: wrote {}", path.display()),
        Err(e) => tracing::warn!("dump_spirv: cannot write {}: {e}", path.display()),
    }
}
