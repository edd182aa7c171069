//! `cargo xtask test`: the whole check, as CI runs it.
//!
//! 1. `cargo build -p shader-enqueue-layer` (debug: the panic-injection
//!    setting only exists there).
//! 2. `cargo test --workspace` with `EMU_SE_LAYER_LIB` = that library (extra
//!    arguments are passed to cargo test, e.g. `-- --nocapture`), on Debian
//!    12's lavapipe (Mesa 22.3, Vulkan 1.3): the old-driver lane,
//!    `EMU_SE_LANE=old`.
//! 3. `cargo test -p conformance-tests` and the lowering's GPU-harness tests
//!    (`spirv-lowering --test execute`) again on Mesa 25's lavapipe (Vulkan
//!    1.4, `.lanes/mesa25/`, fetched by `.ci/install-deps`): the modern lane,
//!    `EMU_SE_LANE=modern`.
//! 4. `cargo build --release -p shader-enqueue-layer`, then `vulkaninfo`
//!    through `manifests/` on lavapipe must print
//!    `VK_AMDX_shader_enqueue ... : extension revision 2`, and the README's
//!    first-graph examples (Rust and C) must compute their result
//!    ([`examples`]); on the modern lane the showcase's mesh-node picture
//!    (`demo --mesh-only`) must match its CPU rasterisation pixel for pixel;
//!    `cargo doc --workspace --no-deps --document-private-items` must
//!    finish without a warning.
//! 5. As root on Debian only (skipped otherwise, and the summary says so):
//!    build the Debian package, install it, check that `vulkaninfo` and the
//!    demo use it without `VK_LAYER_PATH`, remove it and check that nothing
//!    is left ([`package::check`]).
//!
//! Each lane's tests append their run-time skips to their own log
//! (`EMU_SE_SKIP_LOG` = `<target>/skip-logs/<lane>.log`, see [`skips`]);
//! after step 3 (or the failure of step 2 or 3) every lane's skips are
//! listed. A skip on a lane that has what the test needs fails the test
//! itself (`conformance_tests::skip`), so the list is for people to read.

use std::path::Path;
use std::process::Command;

use crate::examples;
use crate::package;
use crate::paths::{self, LAVAPIPE_ICD, LAYER_NAME, MODERN_LANE_ICD};
use crate::run;
use crate::skips::{self, LANE_ENV, SKIP_LOG_ENV};

/// Runs the five steps; stops at the first failure.
pub fn run(extra: &[String]) -> Result<(), String> {
    let root = paths::repo_root();
    let target = paths::target_dir()?;
    skips::reset(&target)?;
    println!("xtask test: [1/5] debug build of the layer");
    run::status(run::cargo(["build", "-p", "shader-enqueue-layer"]).current_dir(&root))?;
    let debug_lib = paths::layer_lib("debug")?;
    if !debug_lib.is_file() {
        return Err(format!("{} was not produced", debug_lib.display()));
    }

    let lanes = lanes(&root, &target, &debug_lib, extra);
    skips::report(&target)?;
    lanes?;

    println!("xtask test: [4/5] release build + vulkaninfo and the first-graph examples through manifests/, docs");
    run::status(run::cargo(["build", "--release", "-p", "shader-enqueue-layer"]).current_dir(&root))?;
    let layer_dir = paths::release_manifest_dir()?;
    vulkaninfo_lists_extension(&layer_dir)?;
    examples::run(&root, &layer_dir)?;
    mesh_picture_on_modern_lane(&root, &target, &layer_dir)?;
    println!("xtask test: [4/5] cargo doc without warnings (private items included)");
    let mut doc = run::cargo(["doc", "--workspace", "--no-deps", "--document-private-items"]);
    run::status(doc.current_dir(&root).env("RUSTDOCFLAGS", "-D warnings"))?;

    println!("xtask test: [5/5] the Debian package: build, install, check, remove (as root on Debian)");
    let package = package::check::run()?;
    println!("xtask test: all checks passed; system package check {package}");
    Ok(())
}

/// Steps 2 and 3: the tests on the old and the modern lane, each with its
/// own skip log.
fn lanes(root: &Path, target: &Path, debug_lib: &Path, extra: &[String]) -> Result<(), String> {
    println!("xtask test: [2/5] workspace tests against {} (old-driver lane: Mesa 22.3)", debug_lib.display());
    let old_log = skips::fresh_log(target, "old")?;
    let mut test = run::cargo(["test", "--workspace"]);
    test.args(extra)
        .current_dir(root)
        .env("EMU_SE_LAYER_LIB", debug_lib)
        .env(LANE_ENV, "old")
        .env(SKIP_LOG_ENV, &old_log);
    run::status(&mut test)?;

    let modern_icd = root.join(MODERN_LANE_ICD);
    if !modern_icd.is_file() {
        return Err(format!(
            "{} is missing: run `bash .ci/install-deps` (it fetches Mesa 25's lavapipe)",
            modern_icd.display()
        ));
    }
    println!("xtask test: [3/5] conformance tests on the modern lane ({})", modern_icd.display());
    let modern_log = skips::fresh_log(target, "modern")?;
    let mut modern = run::cargo(["test", "-p", "conformance-tests"]);
    modern
        .args(extra)
        .current_dir(root)
        .env("EMU_SE_LAYER_LIB", debug_lib)
        .env("EMU_SE_ICD", &modern_icd)
        .env(LANE_ENV, "modern")
        .env(SKIP_LOG_ENV, &modern_log);
    run::status(&mut modern)?;
    let mut kernels = run::cargo(["test", "-p", "spirv-lowering", "--test", "execute"]);
    kernels
        .args(extra)
        .current_dir(root)
        .env("VK_ICD_FILENAMES", &modern_icd)
        .env("VK_DRIVER_FILES", &modern_icd)
        .env(LANE_ENV, "modern")
        .env(SKIP_LOG_ENV, &modern_log);
    run::status(&mut kernels)
}

/// The showcase's mesh-node picture on the modern lane (`demo --mesh-only`:
/// a Sierpinski triangle of 2,187 records that a mesh node draws once,
/// after the levels), which the demo checks pixel for pixel. The
/// conformance scenes fill a few frames; this one fills dozens, where a
/// claim of a pinned frame once took the slot of a frame its level was
/// still reading (144 triangles lost, only on lavapipe's timing).
fn mesh_picture_on_modern_lane(root: &Path, target: &Path, layer_dir: &Path) -> Result<(), String> {
    let icd = root.join(MODERN_LANE_ICD);
    let out = target.join("demo");
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("xtask test: [4/5] the showcase's mesh-node picture on the modern lane");
    let mut demo = run::cargo(["run", "-q", "-p", "demo", "--bin", "demo", "--", "--mesh-only", "--mesh-png"]);
    demo.arg(out.join("sierpinski-check.png"))
        .current_dir(root)
        .env("VK_LAYER_PATH", layer_dir)
        .env("VK_ICD_FILENAMES", &icd)
        .env("VK_DRIVER_FILES", &icd);
    run::status_timeout(&mut demo, MESH_PICTURE_TIMEOUT_S)
}

/// A hung picture must not hang the task (it takes about a second).
const MESH_PICTURE_TIMEOUT_S: u64 = 300;

/// `VK_LAYER_PATH=<repo>/manifests VK_INSTANCE_LAYERS=... vulkaninfo` on
/// lavapipe must list the extension at revision 2.
fn vulkaninfo_lists_extension(layer_dir: &Path) -> Result<(), String> {
    // coreutils `timeout`: a hanging layer must not hang the task.
    let mut cmd = Command::new("timeout");
    cmd.args(["120", "vulkaninfo"])
        .env("VK_LAYER_PATH", layer_dir)
        .env("VK_INSTANCE_LAYERS", LAYER_NAME)
        .env("VK_ICD_FILENAMES", LAVAPIPE_ICD)
        .env("VK_DRIVER_FILES", LAVAPIPE_ICD);
    let out = run::output(&mut cmd)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("vulkaninfo failed ({}):\n{}", out.status, String::from_utf8_lossy(&out.stderr)));
    }
    // Extension lines look like `\tVK_AMDX_shader_enqueue   : extension revision 2`
    // (the layer's description also names the extension: skip such lines).
    let lines: Vec<&str> = stdout
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("VK_AMDX_shader_enqueue") && l.contains(": extension revision"))
        .collect();
    if lines.is_empty() {
        return Err("vulkaninfo does not list VK_AMDX_shader_enqueue".into());
    }
    for line in &lines {
        println!("xtask test: vulkaninfo: {line}");
        if !line.ends_with("extension revision 2") {
            return Err(format!("wrong revision: {line}"));
        }
    }
    let layer_listed = stdout.contains(LAYER_NAME);
    if !layer_listed {
        return Err(format!("vulkaninfo does not show {LAYER_NAME}"));
    }
    Ok(())
}
