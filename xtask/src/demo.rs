//! `cargo xtask demo`: release-build the layer and the demo, then run the
//! demo with `VK_LAYER_PATH=<repo>/manifests` and `--png <target>/demo/refine.png`
//! (the picture a graph renders): first on the system's default drivers; if
//! that fails (no driver, or none lists the extension), again on lavapipe.

use std::process::Command;

use crate::paths::{self, LAVAPIPE_ICD};
use crate::run;

/// The demo finishes in about a second; more means something hangs.
const DEMO_TIME_LIMIT_S: u64 = 120;

/// Builds and runs the demo; `extra` is passed to it.
pub fn run(extra: &[String]) -> Result<(), String> {
    let root = paths::repo_root();
    run::status(run::cargo(["build", "--release", "-p", "shader-enqueue-layer", "-p", "demo"]).current_dir(&root))?;
    let demo = paths::target_dir()?.join("release").join("demo");
    let manifests = paths::release_manifest_dir()?;
    let picture = paths::target_dir()?.join("demo").join("refine.png");
    let mut extra = extra.to_vec();
    if !extra.iter().any(|a| a == "--png") {
        extra.extend(["--png".to_string(), picture.display().to_string()]);
    }

    println!("xtask demo: running on the system's default Vulkan drivers");
    let mut cmd = Command::new(&demo);
    cmd.args(&extra).env("VK_LAYER_PATH", &manifests);
    match run::status_timeout(&mut cmd, DEMO_TIME_LIMIT_S) {
        Ok(()) => return Ok(()),
        Err(e) => println!("xtask demo: {e}\nxtask demo: falling back to lavapipe"),
    }
    let mut cmd = Command::new(&demo);
    cmd.args(&extra)
        .env("VK_LAYER_PATH", &manifests)
        .env("VK_ICD_FILENAMES", LAVAPIPE_ICD)
        .env("VK_DRIVER_FILES", LAVAPIPE_ICD);
    run::status_timeout(&mut cmd, DEMO_TIME_LIMIT_S)
}
