//! `cargo xtask capture [-o FILE.rdc] -- <program> [args]`: runs a program
//! under `renderdoccmd capture` with the layer ABOVE RenderDoc's capture
//! layer (app -> layer -> RenderDoc -> driver), so that RenderDoc records
//! the plain compute the layer emits instead of hiding the AMDX extension
//! it does not know.
//!
//! The loader enables implicit layers before any named in
//! `VK_INSTANCE_LAYERS` or by the application, in the order it finds their
//! manifests, directory by directory: XDG_CONFIG_HOME, XDG_CONFIG_DIRS,
//! /etc, XDG_DATA_HOME, XDG_DATA_DIRS (Vulkan-Loader
//! `docs/LoaderLayerInterface.md`, "Linux Layer Discovery"; in 1.3.239
//! `VK_INSTANCE_LAYERS` cannot place an implicit layer such as RenderDoc's at
//! all). So this writes, under `<target>/capture/`:
//! - `config/vulkan/implicit_layer.d/`: the layer's implicit manifest (the
//!   release library), in front of XDG_CONFIG_DIRS: found before RenderDoc's
//!   manifest in /usr/share, so it is the top layer;
//! - `data/vulkan/implicit_layer.d/`: `VK_LAYER_EMU_bda_replay`, built with
//!   `cc` from `tests/renderdoc/bda_replay_layer.c`, after XDG_DATA_DIRS:
//!   below RenderDoc. RenderDoc captures buffer device addresses only with
//!   `bufferDeviceAddressCaptureReplay`, which lavapipe lacks; the helper
//!   supplies it there and does nothing on other drivers. A lavapipe capture
//!   replays only with it too: the command printed at the end opens it.
//!
//! RenderDoc captures a frame at a present, or between the in-application
//! API's `StartFrameCapture` and `EndFrameCapture` (the demo calls them when
//! RenderDoc is loaded). `renderdoccmd` does not pass on the program's exit
//! status: the capture files are the result.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use crate::paths::{self, MANIFEST_FILE};
use crate::run;

const USAGE: &str = "usage: cargo xtask capture [-o FILE.rdc] -- <program> [args ...]";
/// The helper layer's manifest and source, in the repository.
const HELPER_DIR: &str = "tests/renderdoc";
const HELPER_LIB: &str = "libVkLayer_EMU_bda_replay.so";
const HELPER_MANIFEST: &str = "VkLayer_EMU_bda_replay.json";

/// Parses the arguments, prepares the layers and runs the capture.
pub fn run(args: &[String]) -> Result<(), String> {
    let (output, program) = parse(args)?;
    let root = paths::repo_root();
    run::status(run::cargo(["build", "--release", "-p", "shader-enqueue-layer"]).current_dir(&root))?;
    let lib = paths::layer_lib("release")?;
    let dir = paths::target_dir()?.join("capture");
    let (config, data) = write_layers(&dir, &lib)?;
    let output = match output {
        Some(o) => std::path::absolute(&o).map_err(|e| format!("bad path {}: {e}", o.display()))?,
        None => dir.join("capture.rdc"),
    };
    let out_dir = output.parent().map_or_else(|| dir.clone(), Path::to_path_buf);
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let stem = output.file_stem().and_then(|s| s.to_str()).unwrap_or("capture").to_string();

    let started = SystemTime::now();
    let clock = Instant::now();
    let mut cmd = Command::new("renderdoccmd");
    cmd.args(["capture", "-w", "-c"])
        .arg(out_dir.join(&stem))
        .args(&program)
        .env("XDG_CONFIG_DIRS", search_path(Some(&config), "XDG_CONFIG_DIRS", "/etc/xdg", None))
        .env("XDG_DATA_DIRS", search_path(None, "XDG_DATA_DIRS", "/usr/local/share:/usr/share", Some(&data)));
    run::status(&mut cmd).map_err(|e| format!("{e} (is renderdoccmd installed? Debian: renderdoccmd)"))?;
    let seconds = clock.elapsed().as_secs_f64();

    let made = new_captures(&out_dir, &stem, started)?;
    let written = match made.as_slice() {
        [] => {
            return Err("no capture was written: the program must present a frame or call RenderDoc's \
                        StartFrameCapture/EndFrameCapture (the demo does)"
                .into())
        }
        [one] => {
            std::fs::rename(one, &output)
                .map_err(|e| format!("cannot move {} to {}: {e}", one.display(), output.display()))?;
            vec![output]
        }
        many => many.to_vec(),
    };
    println!("xtask capture: {:.2} s (program run included)", seconds);
    let replay = search_path(None, "XDG_DATA_DIRS", "/usr/local/share:/usr/share", Some(&data));
    for file in &written {
        println!("xtask capture: wrote {}", file.display());
        println!("xtask capture: open it with: XDG_DATA_DIRS={replay} qrenderdoc {}", file.display());
    }
    Ok(())
}

/// `[-o FILE] -- program args...`
fn parse(args: &[String]) -> Result<(Option<PathBuf>, Vec<String>), String> {
    let split = args.iter().position(|a| a == "--").ok_or(USAGE)?;
    let (options, program) = (&args[..split], &args[split + 1..]);
    if program.is_empty() {
        return Err(format!("no program to run\n{USAGE}"));
    }
    let output = match options {
        [] => None,
        [flag, path] if flag == "-o" => Some(PathBuf::from(path)),
        _ => return Err(format!("unexpected options {options:?}\n{USAGE}")),
    };
    Ok((output, program.to_vec()))
}

/// Writes the layer's implicit manifest and builds the helper layer;
/// returns the directories (config, data) the loader is pointed at.
fn write_layers(dir: &Path, lib: &Path) -> Result<(PathBuf, PathBuf), String> {
    let (config, data) = (dir.join("config"), dir.join("data"));
    let (top, bottom) = (config.join("vulkan/implicit_layer.d"), data.join("vulkan/implicit_layer.d"));
    for d in [&top, &bottom] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let manifest = paths::manifests_dir().join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&manifest).map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let mut json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", manifest.display()))?;
    json["layer"]["library_path"] = lib.display().to_string().into();
    json["layer"]["disable_environment"] = serde_json::json!({ "VK_EMU_SE_DISABLE": "1" });
    write(&top.join(MANIFEST_FILE), &(json.to_string() + "\n"))?;

    let helper = paths::repo_root().join(HELPER_DIR);
    let mut cc = Command::new("cc");
    cc.args(["-std=c11", "-O2", "-Wall", "-Wextra", "-shared", "-fPIC", "-fvisibility=hidden", "-o"])
        .arg(bottom.join(HELPER_LIB))
        .arg(helper.join("bda_replay_layer.c"))
        .arg("-lpthread");
    run::status(&mut cc)?;
    let text = std::fs::read_to_string(helper.join(HELPER_MANIFEST))
        .map_err(|e| format!("cannot read {}: {e}", helper.join(HELPER_MANIFEST).display()))?;
    write(&bottom.join(HELPER_MANIFEST), &text)?;
    Ok((config, data))
}

/// `front:$var:back`, `$var` defaulting to `default` when unset or empty.
fn search_path(front: Option<&Path>, var: &str, default: &str, back: Option<&Path>) -> String {
    let current = std::env::var(var).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_string());
    let mut parts: Vec<String> = front.map(|p| p.display().to_string()).into_iter().collect();
    parts.push(current);
    parts.extend(back.map(|p| p.display().to_string()));
    parts.join(":")
}

/// The `<stem>_*.rdc` files of `dir` modified since `since`, sorted.
fn new_captures(dir: &Path, stem: &str, since: SystemTime) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with(&format!("{stem}_")) && name.ends_with(".rdc")
        })
        .filter(|p| std::fs::metadata(p).and_then(|m| m.modified()).is_ok_and(|t| t >= since))
        .collect();
    found.sort();
    Ok(found)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_output_and_program() {
        let args: Vec<String> = ["-o", "x.rdc", "--", "demo", "--runs", "1"].map(String::from).to_vec();
        let (out, program) = parse(&args).expect("parse");
        assert_eq!(out, Some(PathBuf::from("x.rdc")));
        assert_eq!(program, ["demo", "--runs", "1"]);
    }

    #[test]
    fn needs_a_program_after_the_separator() {
        assert!(parse(&["--".to_string()]).is_err());
        assert!(parse(&["demo".to_string()]).is_err());
    }

    #[test]
    fn search_path_keeps_the_default_between() {
        let p = search_path(Some(Path::new("/a")), "EMU_SE_XTASK_UNSET_VAR", "/d1:/d2", Some(Path::new("/z")));
        assert_eq!(p, "/a:/d1:/d2:/z");
    }
}
