//! `cargo xtask test`'s last step: the Debian package, for real.
//!
//! Only as root on Debian (`/etc/debian_version`, `dpkg`); elsewhere it is
//! skipped with a line saying why, which `cargo xtask test` repeats in its
//! summary. It builds the package and the release demo, then:
//! 1. purges a copy an earlier run left installed, and checks that
//!    `vulkaninfo` (lavapipe, no `VK_LAYER_PATH`) does not know the layer;
//! 2. `dpkg -i`; `vulkaninfo` must list the layer, read from
//!    `/usr/share/vulkan/implicit_layer.d/`, and `VK_AMDX_shader_enqueue`
//!    at revision 2 among the device's extensions (the layer is active),
//!    but not with `VK_EMU_SE_DISABLE=1`; the demo must pass;
//! 3. `dpkg -r`, then `dpkg --purge`: none of the files `dpkg -L` listed
//!    may remain, the package must be gone from dpkg's database and
//!    `vulkaninfo` must not know the layer any more.
//!
//! A failure anywhere after `dpkg -i` still purges the package (see
//! [`Purge`]). Every command gets an empty `XDG_DATA_HOME` and none of the
//! loader's layer variables, so a per-user copy (`cargo xtask install`)
//! or the caller's environment cannot stand in for the package.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{build, PACKAGE, SYSTEM_LAYER_DIR};
use crate::paths::{self, LAVAPIPE_ICD, LAYER_LIB_FILE, LAYER_NAME, MANIFEST_FILE};
use crate::run;

/// The demo finishes in seconds on lavapipe; more means something hangs.
const DEMO_TIME_LIMIT_S: u64 = 120;

/// Runs the check; returns the line for the summary ("passed: ..." or
/// "SKIPPED: why").
pub fn run() -> Result<String, String> {
    if let Some(why) = cannot_run() {
        let line = format!("SKIPPED: {why}; the package was not built, installed or removed");
        println!("xtask test: system package check {line}");
        return Ok(line);
    }
    let root = paths::repo_root();
    run::status(run::cargo(["build", "--release", "-p", "demo"]).current_dir(&root))?;
    let target = paths::target_dir()?;
    let packages = build(&target.join("package"))?;
    let scratch = target.join("package-check");
    let xdg = scratch.join("xdg-data-home");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&xdg).map_err(|e| format!("cannot create {}: {e}", xdg.display()))?;

    if installed()? {
        println!("xtask test: {PACKAGE} is installed (an earlier run?): purging it first");
        dpkg(&["--purge", PACKAGE])?;
    }
    if vulkaninfo(&xdg, false)?.0.contains(LAYER_NAME) {
        return Err(format!(
            "vulkaninfo lists {LAYER_NAME} before {PACKAGE} is installed: another manifest \
             (/etc/vulkan, /usr/local/share/vulkan, /usr/share/vulkan) would hide what the package does"
        ));
    }

    let purge = Purge;
    run::status(Command::new("dpkg").arg("-i").arg(&packages.deb))?;
    let (files, own_dirs) = owned_paths()?;
    let manifest = Path::new(SYSTEM_LAYER_DIR).join(MANIFEST_FILE);
    if !files.contains(&manifest) {
        return Err(format!("{PACKAGE} does not install {}", manifest.display()));
    }
    if !files.iter().any(|f| f.starts_with("/usr/lib") && f.ends_with(LAYER_LIB_FILE)) {
        return Err(format!("{PACKAGE} does not install {LAYER_LIB_FILE} under /usr/lib"));
    }
    println!("xtask test: {PACKAGE} installed these files:");
    for f in files.iter().chain(&own_dirs) {
        println!("xtask test:   {}", f.display());
    }
    check_active(&xdg, &manifest)?;
    let mut demo = Command::new(target.join("release/demo"));
    demo.arg("--png").arg(scratch.join("refine.png")).arg("--mesh-png").arg(scratch.join("sierpinski.png"));
    plain_env(&mut demo, &xdg);
    run::status_timeout(&mut demo, DEMO_TIME_LIMIT_S)?;

    dpkg(&["-r", PACKAGE])?;
    let left: Vec<&PathBuf> = files.iter().chain(&own_dirs).filter(|f| f.exists()).collect();
    if !left.is_empty() {
        return Err(format!("`dpkg -r {PACKAGE}` left {left:?}"));
    }
    // Without conffiles `dpkg -r` already forgets the package entirely.
    if installed()? {
        dpkg(&["--purge", PACKAGE])?;
    } else {
        println!("xtask test: `dpkg -r` left no configuration files: nothing to purge");
    }
    if installed()? {
        return Err(format!("dpkg still knows {PACKAGE} after --purge"));
    }
    drop(purge);
    if vulkaninfo(&xdg, false)?.0.contains(LAYER_NAME) {
        return Err(format!("vulkaninfo still lists {LAYER_NAME} after {PACKAGE} was removed"));
    }
    let line = format!(
        "passed: {} installed, vulkaninfo and the demo used it without VK_LAYER_PATH, \
         then removed: its {} files, {:?} and its dpkg record are gone",
        packages.deb.file_name().unwrap_or_default().to_string_lossy(),
        files.len(),
        own_dirs
    );
    println!("xtask test: system package check {line}");
    Ok(line)
}

/// Why the check cannot run here, if it cannot.
fn cannot_run() -> Option<String> {
    if !Path::new("/etc/debian_version").is_file() {
        return Some("not a Debian machine (no /etc/debian_version)".into());
    }
    match Command::new("id").arg("-u").output() {
        Ok(out) if String::from_utf8_lossy(&out.stdout).trim() == "0" => {}
        _ => return Some("not running as root (dpkg -i needs it)".into()),
    }
    match Command::new("dpkg").arg("--version").output() {
        Ok(out) if out.status.success() => None,
        _ => Some("no dpkg".into()),
    }
}

/// Purges the package when dropped while it is still installed, so a
/// failed check leaves nothing behind.
struct Purge;

impl Drop for Purge {
    fn drop(&mut self) {
        if installed().unwrap_or(true) {
            println!("xtask test: purging {PACKAGE} after a failed check");
            if let Err(e) = dpkg(&["--purge", PACKAGE]) {
                eprintln!("xtask test: error: {e}: remove it with `dpkg --purge {PACKAGE}`");
            }
        }
    }
}

/// Whether dpkg knows the package in any state but "not installed".
fn installed() -> Result<bool, String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", PACKAGE])
        .output()
        .map_err(|e| format!("cannot run dpkg-query: {e}"))?;
    let status = String::from_utf8_lossy(&out.stdout);
    Ok(out.status.success() && !status.trim().is_empty() && !status.ends_with("not-installed"))
}

/// Runs `dpkg` with `args`.
fn dpkg(args: &[&str]) -> Result<(), String> {
    run::status(Command::new("dpkg").args(args))
}

/// What `dpkg -L` lists for the installed package: its plain files, and
/// the directories named after it (others, such as `/usr`, are shared).
fn owned_paths() -> Result<(Vec<PathBuf>, Vec<PathBuf>), String> {
    let out = run::output(Command::new("dpkg").args(["-L", PACKAGE]))?;
    if !out.status.success() {
        return Err(format!("dpkg -L {PACKAGE} failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let listed: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout).lines().map(PathBuf::from).collect();
    let files = listed.iter().filter(|p| p.is_file()).cloned().collect();
    let dirs = listed.into_iter().filter(|p| p.is_dir() && p.ends_with(PACKAGE)).collect();
    Ok((files, dirs))
}

/// The installed layer must be found in the system directory and be active.
fn check_active(xdg: &Path, manifest: &Path) -> Result<(), String> {
    let (stdout, loader_log) = vulkaninfo(xdg, true)?;
    if !stdout.contains(LAYER_NAME) {
        return Err(format!("vulkaninfo does not list {LAYER_NAME} after installing {PACKAGE}"));
    }
    if !loader_log.contains(&manifest.display().to_string()) {
        return Err(format!("the loader did not read {}", manifest.display()));
    }
    let lines = device_extension_lines(&stdout);
    if lines.is_empty() {
        return Err(
            "vulkaninfo lists VK_AMDX_shader_enqueue among no device's extensions: the layer is not active".into()
        );
    }
    for line in &lines {
        println!("xtask test: vulkaninfo (installed layer): {line}");
        if !line.ends_with("extension revision 2") {
            return Err(format!("wrong revision: {line}"));
        }
    }
    // disable_environment must have survived packaging.
    let mut cmd = Command::new("timeout");
    cmd.args(["120", "vulkaninfo"]);
    plain_env(&mut cmd, xdg);
    cmd.env("VK_EMU_SE_DISABLE", "1");
    let out = run::output(&mut cmd)?;
    if !out.status.success() {
        return Err(format!("VK_EMU_SE_DISABLE=1 vulkaninfo failed ({})", out.status));
    }
    if !device_extension_lines(&String::from_utf8_lossy(&out.stdout)).is_empty() {
        return Err("with VK_EMU_SE_DISABLE=1 the installed layer is still active".into());
    }
    println!("xtask test: with VK_EMU_SE_DISABLE=1 the installed layer stays out");
    Ok(())
}

/// `vulkaninfo` on lavapipe in [`plain_env`]: stdout and, with
/// `loader_log`, the loader's layer messages (stderr).
fn vulkaninfo(xdg: &Path, loader_log: bool) -> Result<(String, String), String> {
    // coreutils `timeout`: a hanging layer must not hang the task.
    let mut cmd = Command::new("timeout");
    cmd.args(["120", "vulkaninfo"]);
    plain_env(&mut cmd, xdg);
    if loader_log {
        cmd.env("VK_LOADER_DEBUG", "layer");
    }
    let out = run::output(&mut cmd)?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(format!("vulkaninfo failed ({}):\n{stderr}", out.status));
    }
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), stderr))
}

/// `VK_AMDX_shader_enqueue` lines of the devices' own extension lists: one
/// tab deep (the layer's section lists its extensions three tabs deep,
/// also where the layer is not active).
fn device_extension_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.strip_prefix('\t').is_some_and(|rest| rest.starts_with("VK_AMDX_shader_enqueue")))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// Lavapipe, the loader's default search paths and nothing else: no
/// layer variables, an empty `XDG_DATA_HOME`.
fn plain_env(cmd: &mut Command, xdg: &Path) {
    for var in [
        "VK_LAYER_PATH",
        "VK_ADD_LAYER_PATH",
        "VK_INSTANCE_LAYERS",
        "VK_LOADER_LAYERS_ENABLE",
        "VK_LOADER_LAYERS_DISABLE",
        "VK_EMU_SE_DISABLE",
        "XDG_DATA_DIRS",
        "XDG_CONFIG_DIRS",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("XDG_DATA_HOME", xdg).env("VK_ICD_FILENAMES", LAVAPIPE_ICD).env("VK_DRIVER_FILES", LAVAPIPE_ICD);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_extension_lines_skip_the_layer_section() {
        let out = "Device Extensions: count = 2\n\tVK_AMDX_shader_enqueue      : extension revision 2\n\
                   \tVK_KHR_x : extension revision 1\nLayers:\n\t\t\tVK_AMDX_shader_enqueue : extension revision 2\n";
        assert_eq!(device_extension_lines(out), ["VK_AMDX_shader_enqueue : extension revision 2"]);
        assert!(device_extension_lines("\t\t\tVK_AMDX_shader_enqueue : extension revision 2\n").is_empty());
    }
}
