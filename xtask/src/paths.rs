//! Where things are: the repository root, cargo's target directory, the
//! layer library of a profile, the in-tree manifest, lavapipe.

use std::path::{Path, PathBuf};

use crate::run;

/// Name of the layer.
pub const LAYER_NAME: &str = "VK_LAYER_EMU_shader_enqueue";
/// File name of the layer library.
pub const LAYER_LIB_FILE: &str = "libVkLayer_EMU_shader_enqueue.so";
/// Manifest file name (explicit in `manifests/`, implicit when installed).
pub const MANIFEST_FILE: &str = "VkLayer_EMU_shader_enqueue.json";
/// Debian's lavapipe driver manifest.
pub const LAVAPIPE_ICD: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// The modern lane's driver manifest (Mesa 25's lavapipe, unpacked by
/// `.ci/fetch-modern-lavapipe`), relative to the repository root.
pub const MODERN_LANE_ICD: &str = ".lanes/mesa25/lvp_icd.json";

/// The repository (workspace) root.
pub fn repo_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
}

/// The in-tree manifests directory.
pub fn manifests_dir() -> PathBuf {
    repo_root().join("manifests")
}

/// Cargo's target directory (asks `cargo metadata`, honours CARGO_TARGET_DIR).
pub fn target_dir() -> Result<PathBuf, String> {
    let mut cmd = run::cargo(["metadata", "--format-version", "1", "--no-deps"]);
    cmd.current_dir(repo_root());
    let out = cmd.output().map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata output is not JSON: {e}"))?;
    v["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| "cargo metadata has no target_directory".to_string())
}

/// The layer library built with `profile` ("debug" or "release").
pub fn layer_lib(profile: &str) -> Result<PathBuf, String> {
    Ok(target_dir()?.join(profile).join(LAYER_LIB_FILE))
}

/// `<repo>/manifests`, whose manifest points at `../target/release/`. When
/// cargo's target directory is elsewhere (CARGO_TARGET_DIR), that manifest
/// cannot find the library: use a temporary copy with the absolute path.
pub fn release_manifest_dir() -> Result<PathBuf, String> {
    let release_lib = layer_lib("release")?;
    let in_tree = repo_root().join("target/release").join(LAYER_LIB_FILE);
    if release_lib == in_tree {
        return Ok(manifests_dir());
    }
    println!(
        "xtask: warning: target dir is not <repo>/target, so manifests/ cannot find \
         the library; using a temporary manifest pointing at {}",
        release_lib.display()
    );
    let manifest = manifests_dir().join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&manifest).map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let mut json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", manifest.display()))?;
    json["layer"]["library_path"] = release_lib.display().to_string().into();
    let dir = std::env::temp_dir().join(format!("xtask-manifest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let dest = dir.join(MANIFEST_FILE);
    std::fs::write(&dest, json.to_string()).map_err(|e| format!("cannot write {}: {e}", dest.display()))?;
    Ok(dir)
}
