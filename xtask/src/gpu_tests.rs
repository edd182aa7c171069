//! `cargo xtask gpu-tests <dir> [test ...]`: a folder that runs the
//! conformance tests needing hardware lavapipe lacks on a machine with a GPU
//! and no Rust toolchain (the GPU lane).
//!
//! Builds the layer (release) and the named test files of `tests/tests/`
//! (release; default [`DEFAULT_TESTS`]: a compute-only queue family, several
//! queues of one family, embedded samplers in compute, mesh nodes and the application's sets
//! around their draws, the compute state restored after
//! a graph, embedded samplers included, node shaders with bad values: a
//! driver that loses the device or hangs on them fails; and host dispatches,
//! several to one command buffer and scratch, which only a GPU runs at once;
//! the `phase_clock` setting on a real SM clock; and the hello chain, whose
//! many-record dispatches have their grids summed by a meta shader), and
//! writes into `<dir>`: `bin/<test>` (stripped test binaries),
//! `libVkLayer_EMU_shader_enqueue.so` (stripped), the explicit manifest
//! pointing at it by a relative path (for `VK_LAYER_PATH=<dir>` by hand) and
//! `run.sh` ([`RUN_SH`]), which runs every binary with `EMU_SE_LANE=gpu` and
//! prints what passed, failed and skipped. The binaries link
//! `libvulkan.so.1` dynamically: the GPU machine brings its own loader.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::paths::{self, LAYER_LIB_FILE, MANIFEST_FILE};
use crate::run;

/// Test files carried when none are named.
pub const DEFAULT_TESTS: [&str; 10] = [
    "graph_async_compute",
    "graph_multi_queue",
    "graph_descriptor_buffer",
    "graph_mesh_nodes",
    "graph_mesh_sets",
    "graph_restore_state",
    "graph_hostile_shaders",
    "graph_dispatch",
    "settings_phase_clock",
    "graph_hello_chain",
];

/// The script carried into `<dir>` (POSIX sh).
pub const RUN_SH: &str = include_str!("gpu_run.sh");

/// What the GPU machine takes comfortably (each test binary is ~1 MiB, the
/// layer ~4 MiB, stripped).
const CARRY_LIMIT: u64 = 50 << 20;

/// A file that marks `<dir>` as made here, so that a rerun may empty it.
const MARKER: &str = ".emu-se-gpu-tests";

/// Builds and fills `<dir>` (args: the dir, then optional test file stems).
pub fn run(args: &[String]) -> Result<(), String> {
    let Some((dir, named)) = args.split_first() else {
        return Err("usage: cargo xtask gpu-tests <dir> [test ...]".into());
    };
    let tests: Vec<&str> =
        if named.is_empty() { DEFAULT_TESTS.to_vec() } else { named.iter().map(String::as_str).collect() };
    let dir = std::path::absolute(dir).map_err(|e| format!("bad directory {dir:?}: {e}"))?;
    let root = paths::repo_root();

    println!("xtask gpu-tests: release build of the layer and of {}", tests.join(", "));
    run::status(run::cargo(["build", "--release", "-p", "shader-enqueue-layer"]).current_dir(&root))?;
    let lib = paths::layer_lib("release")?;
    let binaries = test_binaries(&root, &tests)?;

    empty_dir(&dir)?;
    std::fs::create_dir_all(dir.join("bin")).map_err(|e| format!("cannot create {}/bin: {e}", dir.display()))?;
    for (name, exe) in &binaries {
        strip(exe, &dir.join("bin").join(name))?;
    }
    strip(&lib, &dir.join(LAYER_LIB_FILE))?;
    write(&dir.join(MANIFEST_FILE), &manifest()?)?;
    let script = dir.join("run.sh");
    write(&script, RUN_SH)?;
    make_executable(&script)?;
    write(&dir.join(MARKER), "made by cargo xtask gpu-tests; the next run empties this folder\n")?;

    let total = report_sizes(&dir)?;
    if total > CARRY_LIMIT {
        println!("xtask gpu-tests: warning: more than {} MiB to carry: name fewer tests", CARRY_LIMIT >> 20);
    }
    println!(
        "xtask gpu-tests: {} ({:.1} MiB). On the GPU machine: \
         LD_LIBRARY_PATH=<dir of libvulkan.so.1> VK_DRIVER_FILES=<driver manifest> sh run.sh [out-dir]",
        dir.display(),
        total as f64 / (1024.0 * 1024.0)
    );
    Ok(())
}

/// `cargo test --release -p conformance-tests --no-run` for `tests`: each
/// test file's name and executable, from cargo's JSON messages.
fn test_binaries(root: &Path, tests: &[&str]) -> Result<Vec<(String, PathBuf)>, String> {
    let mut cmd = run::cargo(["test", "--release", "-p", "conformance-tests", "--no-run", "--message-format=json"]);
    for t in tests {
        cmd.args(["--test", t]);
    }
    // JSON on stdout, cargo's progress on the terminal.
    cmd.current_dir(root).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let out = run::output(&mut cmd)?;
    if !out.status.success() {
        return Err(format!("`{}` failed ({})", run::describe(&cmd), out.status));
    }
    let mut found = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let is_test = msg["reason"] == "compiler-artifact" && msg["target"]["kind"] == serde_json::json!(["test"]);
        if let (true, Some(name), Some(exe)) = (is_test, msg["target"]["name"].as_str(), msg["executable"].as_str()) {
            found.push((name.to_string(), PathBuf::from(exe)));
        }
    }
    for t in tests {
        if !found.iter().any(|(name, _)| name == t) {
            return Err(format!("cargo built no test binary named {t}"));
        }
    }
    Ok(found)
}

/// Refuses a non-empty `dir` that this command did not make; empties one it did.
fn empty_dir(dir: &Path) -> Result<(), String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries.count(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
    };
    if entries == 0 {
        return Ok(());
    }
    if !dir.join(MARKER).is_file() {
        return Err(format!("{} is not empty and was not made by gpu-tests: choose another", dir.display()));
    }
    std::fs::remove_dir_all(dir).map_err(|e| format!("cannot empty {}: {e}", dir.display()))
}

/// `strip -o to from`: debug info and symbol tables make up most of a
/// binary, and the carried folder should stay small.
fn strip(from: &Path, to: &Path) -> Result<(), String> {
    let mut cmd = Command::new("strip");
    cmd.arg("-o").arg(to).arg(from);
    run::status(&mut cmd)
}

/// The in-tree explicit manifest with `library_path` next to it.
fn manifest() -> Result<String, String> {
    let path = paths::manifests_dir().join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    // The loader resolves a relative path against the manifest's folder.
    json["layer"]["library_path"] = format!("./{LAYER_LIB_FILE}").into();
    serde_json::to_string_pretty(&json).map_err(|e| format!("cannot render the manifest: {e}"))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn make_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot chmod {}: {e}", path.display()))
}

/// Prints every carried file's size; returns the total in bytes.
fn report_sizes(dir: &Path) -> Result<u64, String> {
    let mut files = vec![dir.join(LAYER_LIB_FILE), dir.join(MANIFEST_FILE), dir.join("run.sh")];
    let bin = dir.join("bin");
    let entries = std::fs::read_dir(&bin).map_err(|e| format!("cannot read {}: {e}", bin.display()))?;
    files.extend(entries.filter_map(|e| e.ok().map(|e| e.path())));
    let mut total = 0;
    for f in files {
        let len = std::fs::metadata(&f).map_err(|e| format!("cannot stat {}: {e}", f.display()))?.len();
        println!("xtask gpu-tests: {:>8.1} KiB  {}", len as f64 / 1024.0, f.display());
        total += len;
    }
    Ok(total)
}
