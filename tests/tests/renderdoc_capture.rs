//! RenderDoc end to end: the demo's hello graph captured with
//! `renderdoccmd capture` through the real loader, with the layer ABOVE
//! RenderDoc's capture layer, so that RenderDoc records the plain compute
//! the layer emits; then opened and replayed with RenderDoc's Python module
//! (`tests/renderdoc/check_capture.py`), which checks the layer's graph,
//! level and node markers and that the replayed result buffer equals the
//! CPU model (`models::hello_chain` of the grids the demo printed).
//!
//! The loader (1.3.239) enables implicit layers first, in the order their
//! manifests are found, directory by directory (XDG_CONFIG_HOME,
//! XDG_CONFIG_DIRS, /etc, XDG_DATA_HOME, XDG_DATA_DIRS: Vulkan-Loader
//! `docs/LoaderLayerInterface.md`, "Linux Layer Discovery"), and only then
//! the layers named in `VK_INSTANCE_LAYERS` and by the application. So the
//! layer's implicit manifest goes into a directory put in front of
//! XDG_CONFIG_DIRS (before RenderDoc's, in /usr/share), and the
//! `VK_LAYER_EMU_bda_replay` helper (`tests/renderdoc/bda_replay_layer.c`,
//! built here with `cc`) into one appended to XDG_DATA_DIRS (after
//! RenderDoc's): app -> layer -> RenderDoc -> helper -> lavapipe. The test
//! checks that order in the loader's own `VK_LOADER_DEBUG=layer` output.
//!
//! Lavapipe lacks `bufferDeviceAddressCaptureReplay`, without which RenderDoc
//! hides buffer device addresses (and Vulkan 1.3): the helper supplies it,
//! in the capture and in the replay.
//!
//! Runs on the old and the modern lane (CI installs `renderdoccmd` and
//! `python3-renderdoc`); skips only where those are not installed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use conformance_tests::env::{self, implicit_manifest_for, workspace_root};
use conformance_tests::models::hello_chain;
use conformance_tests::skip::{skip, Lane};

/// Lanes whose machines have RenderDoc (`.ci/install-deps`).
const LANES: &[Lane] = &[Lane::Old, Lane::Modern];
/// The Python that `python3-renderdoc` is built for.
const PYTHON: &str = "/usr/bin/python3";
/// Top to bottom, as the device call chain must be.
const ORDER: [&str; 3] = ["VK_LAYER_EMU_shader_enqueue", "VK_LAYER_RENDERDOC_Capture", "VK_LAYER_EMU_bda_replay"];

#[test]
fn hello_graph_capture_replays_to_the_cpu_model() {
    let env = env::init().expect("test environment");
    if let Some(why) = renderdoc_missing() {
        skip(LANES, &why);
        return;
    }
    let work = env.manifest_dir.join("renderdoc");
    let (config_dir, data_dir) = loader_dirs(&work, &env.layer_lib);
    let demo = build_demo();

    let template = work.join("hello");
    let start = Instant::now();
    let out = run(Command::new("renderdoccmd")
        .args(["capture", "-w", "-c"])
        .arg(&template)
        .arg(&demo)
        .args(["--runs", "1"])
        .env("XDG_CONFIG_DIRS", prepend(&config_dir, "XDG_CONFIG_DIRS", "/etc/xdg"))
        .env("XDG_DATA_DIRS", append(&data_dir, "XDG_DATA_DIRS", "/usr/local/share:/usr/share"))
        .env("VK_LOADER_DEBUG", "layer"));
    let capture_s = start.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // renderdoccmd exits 0 whatever the program did: judge by its output.
    assert!(
        stdout.contains("renderdoc: captured") && stdout.contains("verified:"),
        "the demo did not verify and capture its graph under RenderDoc:\n{stdout}\n{stderr}"
    );
    assert_eq!(device_chain(&stderr), ORDER, "device call chain (VK_LOADER_DEBUG=layer):\n{stderr}");
    let capture = template.with_file_name("hello_capture.rdc");
    assert!(capture.is_file(), "no {} after the capture:\n{stdout}", capture.display());

    let grids = printed_grids(&stdout);
    let records: Vec<(u32, u32)> = grids.iter().enumerate().map(|(i, &g)| (g, i as u32)).collect();
    let expect: Vec<String> = hello_chain(&records, &[]).iter().map(u32::to_string).collect();
    let script = workspace_root().join("tests/renderdoc/check_capture.py");
    let start = Instant::now();
    let check = run(Command::new(PYTHON)
        .arg(&script)
        .arg(&capture)
        .args(["--buffer", "hello UAV", "--expect", &expect.join(","), "--levels", "firstNode;secondNode;thirdNode"])
        .env("XDG_DATA_DIRS", append(&data_dir, "XDG_DATA_DIRS", "/usr/local/share:/usr/share")));
    let replay_s = start.elapsed().as_secs_f64();
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "check_capture.py: {}:\n{report}\n{}",
        check.status,
        String::from_utf8_lossy(&check.stderr)
    );
    eprintln!("{report}renderdoc_capture: capture {capture_s:.2} s (demo run included), open + replay {replay_s:.2} s");
}

/// Why RenderDoc cannot be used here, if it cannot.
fn renderdoc_missing() -> Option<String> {
    let rdc = Command::new("renderdoccmd").arg("version").output();
    if !rdc.is_ok_and(|o| o.status.success()) {
        return Some("renderdoccmd is not installed (Debian package renderdoccmd)".into());
    }
    let py = Command::new(PYTHON).args(["-c", "import renderdoc"]).output();
    if !py.is_ok_and(|o| o.status.success()) {
        return Some(format!("{PYTHON} cannot import renderdoc (Debian package python3-renderdoc)"));
    }
    None
}

/// Writes the layer's implicit manifest into `<work>/config/vulkan/implicit_layer.d`
/// and builds the helper layer into `<work>/data/vulkan/implicit_layer.d`;
/// returns (config dir, data dir).
fn loader_dirs(work: &Path, layer_lib: &Path) -> (PathBuf, PathBuf) {
    let (config, data) = (work.join("config"), work.join("data"));
    let (top, bottom) = (config.join("vulkan/implicit_layer.d"), data.join("vulkan/implicit_layer.d"));
    for dir in [&top, &bottom] {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    }
    let manifest = implicit_manifest_for(layer_lib).expect("implicit manifest");
    write(&top.join("VkLayer_EMU_shader_enqueue.json"), &manifest);
    let helper = workspace_root().join("tests/renderdoc");
    let built = run(Command::new("cc")
        .args(["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-fvisibility=hidden", "-o"])
        .arg(bottom.join("libVkLayer_EMU_bda_replay.so"))
        .arg(helper.join("bda_replay_layer.c"))
        .arg("-lpthread"));
    assert!(built.status.success(), "cc bda_replay_layer.c:\n{}", String::from_utf8_lossy(&built.stderr));
    let json = std::fs::read_to_string(helper.join("VkLayer_EMU_bda_replay.json")).expect("helper manifest");
    write(&bottom.join("VkLayer_EMU_bda_replay.json"), &json);
    (config, data)
}

/// Builds the demo (debug) with the cargo running this test; its path.
fn build_demo() -> PathBuf {
    let out = run(Command::new(env!("CARGO"))
        .args(["build", "-p", "demo", "--bin", "demo", "--message-format=json"])
        .current_dir(workspace_root()));
    assert!(out.status.success(), "cargo build -p demo:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "demo")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo reported no demo executable")
}

/// The layers of the loader's "vkCreateDevice layer callstack", top first.
fn device_chain(loader_log: &str) -> Vec<&str> {
    let block = loader_log.split("vkCreateDevice layer callstack setup to:").nth(1).unwrap_or("");
    let block = block.split("<Device>").next().unwrap_or("");
    block
        .lines()
        .map(|l| l.trim_start_matches("LAYER:").trim())
        .filter(|l| l.starts_with("VK_LAYER_") && !l.contains(' '))
        .filter(|l| ORDER.contains(l))
        .collect()
}

/// The grids of "dispatch: ... grids [16, 3, 9, 12]" in the demo's output.
fn printed_grids(stdout: &str) -> Vec<u32> {
    let line = stdout.lines().find(|l| l.starts_with("dispatch:")).expect("the demo printed no dispatch line");
    let list = line.split('[').nth(1).and_then(|s| s.split(']').next()).expect("no grid list");
    list.split(',').map(|g| g.trim().parse().expect("grid")).collect()
}

/// `dir` then `$var` (or `default`), colon-separated.
fn prepend(dir: &Path, var: &str, default: &str) -> String {
    format!("{}:{}", dir.display(), std::env::var(var).ok().filter(|v| !v.is_empty()).as_deref().unwrap_or(default))
}

/// `$var` (or `default`) then `dir`, colon-separated.
fn append(dir: &Path, var: &str, default: &str) -> String {
    format!("{}:{}", std::env::var(var).ok().filter(|v| !v.is_empty()).as_deref().unwrap_or(default), dir.display())
}

fn run(command: &mut Command) -> Output {
    command.output().unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"))
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}
