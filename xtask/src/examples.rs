//! The README's examples, run as a reader would run them: `examples/first-graph`
//! in Rust (`cargo run -p first-graph`) and in C (`make -C
//! examples/first-graph/c run`), each with the release layer through
//! `manifests/` on lavapipe. Each exits nonzero when the graph's result is
//! wrong, so a broken tutorial fails CI.

use std::path::Path;
use std::process::Command;

use crate::paths::{LAVAPIPE_ICD, LAYER_NAME};
use crate::run;

/// A hung example must not hang the task (each runs in about a second).
const EXAMPLE_TIMEOUT_S: u64 = 300;

/// Runs both examples from `root` with the layer manifests in `layer_dir`.
pub fn run(root: &Path, layer_dir: &Path) -> Result<(), String> {
    let rust = run::cargo(["run", "-q", "-p", "first-graph"]);
    let mut c = Command::new("make");
    c.args(["-C", "examples/first-graph/c", "run"]);
    for mut cmd in [rust, c] {
        cmd.current_dir(root)
            .env("VK_LAYER_PATH", layer_dir)
            .env("VK_INSTANCE_LAYERS", LAYER_NAME)
            .env("VK_ICD_FILENAMES", LAVAPIPE_ICD)
            .env("VK_DRIVER_FILES", LAVAPIPE_ICD);
        run::status_timeout(&mut cmd, EXAMPLE_TIMEOUT_S)?;
    }
    Ok(())
}
