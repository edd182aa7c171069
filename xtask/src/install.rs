//! `cargo xtask install` / `uninstall`: the implicit-layer manifest.
//!
//! Install release-builds the layer and writes
//! `$XDG_DATA_HOME/vulkan/implicit_layer.d/VkLayer_EMU_shader_enqueue.json`
//! (default `~/.local/share/...`): the in-tree manifest with an absolute
//! `library_path` and `disable_environment: {"VK_EMU_SE_DISABLE": "1"}`;
//! enabled by default (no `enable_environment`). Every Vulkan application of
//! this user then loads the layer, unless `VK_EMU_SE_DISABLE=1`.

use std::path::PathBuf;

use crate::paths::{self, MANIFEST_FILE};
use crate::run;

/// The user's implicit layer directory.
fn implicit_dir() -> Result<PathBuf, String> {
    let data = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            let home = std::env::var_os("HOME").ok_or("neither XDG_DATA_HOME nor HOME is set")?;
            PathBuf::from(home).join(".local/share")
        }
    };
    Ok(data.join("vulkan/implicit_layer.d"))
}

/// The implicit manifest for `lib`: the in-tree one with an absolute
/// `library_path` and the `disable_environment` an implicit layer needs
/// (the Debian package installs the same, see `package`).
pub(crate) fn implicit_manifest(lib: &std::path::Path) -> Result<String, String> {
    let path = paths::manifests_dir().join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    let layer = json.get_mut("layer").and_then(|l| l.as_object_mut()).ok_or("manifest has no \"layer\" object")?;
    layer.insert("library_path".into(), lib.display().to_string().into());
    layer.insert("disable_environment".into(), serde_json::json!({ "VK_EMU_SE_DISABLE": "1" }));
    serde_json::to_string_pretty(&json).map_err(|e| format!("cannot render manifest: {e}"))
}

/// Builds the release layer and writes the implicit manifest.
pub fn install() -> Result<(), String> {
    let root = paths::repo_root();
    run::status(run::cargo(["build", "--release", "-p", "shader-enqueue-layer"]).current_dir(&root))?;
    let lib = paths::layer_lib("release")?;
    if !lib.is_file() {
        return Err(format!("{} was not produced", lib.display()));
    }
    let dir = implicit_dir()?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let dest = dir.join(MANIFEST_FILE);
    std::fs::write(&dest, implicit_manifest(&lib)? + "\n")
        .map_err(|e| format!("cannot write {}: {e}", dest.display()))?;
    println!("xtask install: wrote implicit layer manifest {}", dest.display());
    println!("xtask install: library {}", lib.display());
    println!(
        "xtask install: every Vulkan app of this user now loads {}; \
         set VK_EMU_SE_DISABLE=1 to turn it off for one run, `cargo xtask uninstall` to remove it",
        paths::LAYER_NAME
    );
    Ok(())
}

/// Removes the implicit manifest (nothing to do if absent).
pub fn uninstall() -> Result<(), String> {
    let dest = implicit_dir()?.join(MANIFEST_FILE);
    match std::fs::remove_file(&dest) {
        Ok(()) => println!("xtask uninstall: removed {}", dest.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("xtask uninstall: {} was not installed", dest.display())
        }
        Err(e) => return Err(format!("cannot remove {}: {e}", dest.display())),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implicit_manifest_has_absolute_path_and_disable_env() {
        let text = implicit_manifest(std::path::Path::new("/abs/lib.so")).expect("manifest");
        let v: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(v["layer"]["library_path"], "/abs/lib.so");
        assert_eq!(v["layer"]["disable_environment"]["VK_EMU_SE_DISABLE"], "1");
        assert!(v["layer"].get("enable_environment").is_none());
        assert_eq!(v["layer"]["name"], paths::LAYER_NAME);
    }
}
