//! Points the Vulkan loader at the layer under test, lavapipe and the Khronos
//! validation layer, once per process.
//!
//! The loader reads its environment when it scans for layers and drivers, so
//! everything is set in [`init`] before the first Vulkan call, exactly once
//! (tests of one binary run as threads and share it). A test that needs a
//! different environment lives in its own test file (its own process) and
//! calls [`init_with`] first.
//!
//! Inputs: `EMU_SE_LAYER_LIB` (absolute path of the layer library, else
//! `<target>/debug/libVkLayer_EMU_shader_enqueue.so` of this workspace) and
//! `EMU_SE_ICD` (driver manifest, else lavapipe). Outputs: a temp dir holding
//! a manifest for that library; `VK_LAYER_PATH` = that dir + the system
//! explicit layer dir; `VK_ICD_FILENAMES`/`VK_DRIVER_FILES` = the driver;
//! `XDG_DATA_HOME` = an empty dir (so a `cargo xtask install`ed implicit copy
//! of the layer cannot interfere); `VK_INSTANCE_LAYERS` removed.
//!
//! It also starts a watchdog: a deadlock inside the loader or a layer (seen
//! once: a layer calling the loader's own `vkCreateInstance`) would otherwise
//! hang CI; after `EMU_SE_TEST_TIMEOUT_S` seconds (default
//! [`DEFAULT_TIMEOUT_S`]) the process prints what happened and exits with
//! status 101. It is wall-clock on purpose: a deadlock burns no CPU.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// Name of the layer under test.
pub const LAYER_NAME: &str = "VK_LAYER_EMU_shader_enqueue";
/// Name of the Khronos validation layer.
pub const VALIDATION_LAYER_NAME: &str = "VK_LAYER_KHRONOS_validation";
/// File name of the layer library.
pub const LAYER_LIB_FILE: &str = "libVkLayer_EMU_shader_enqueue.so";
/// Env var: absolute path of the layer library under test.
pub const LAYER_LIB_ENV: &str = "EMU_SE_LAYER_LIB";
/// Env var: driver (ICD) manifest to use instead of lavapipe.
pub const ICD_ENV: &str = "EMU_SE_ICD";
/// Env var: `1` makes `InstanceOptions::with_layer()` leave the layer out.
pub const WITHOUT_LAYER_ENV: &str = "EMU_SE_TESTS_WITHOUT_LAYER";
/// Env var: `1` makes `InstanceOptions::with_layer()` leave the validation
/// layer out (for a driver the installed validation layer is too old to
/// judge, such as NVIDIA's Vulkan 1.4 driver under Debian 12's 1.3.239).
pub const WITHOUT_VALIDATION_ENV: &str = "EMU_SE_TESTS_WITHOUT_VALIDATION";
/// Env var: `modern` says the driver is the modern lane (Mesa 25's
/// lavapipe, set by `cargo xtask test`): tests of Vulkan 1.4 features then
/// fail where the driver lacks them instead of skipping.
pub const LANE_ENV: &str = "EMU_SE_LANE";

/// Whether the driver must have the modern lane's features (see [`LANE_ENV`]).
pub fn modern_lane_required() -> bool {
    std::env::var(LANE_ENV).is_ok_and(|v| v == "modern")
}

/// Env var: seconds after which a test process is killed (default
/// [`DEFAULT_TIMEOUT_S`]).
pub const TIMEOUT_ENV: &str = "EMU_SE_TEST_TIMEOUT_S";
/// Default watchdog time per test process. The slowest files, `graph_size`
/// and `stress`, take 3.5 s on a 2-core machine, 5 s with a cold Mesa shader
/// cache under a load of 6, and took 21 s in CI: 300 s stays well clear of
/// a slow or loaded machine (a Mesa shader cache that cannot be written
/// makes `stress` take two minutes) and still ends a deadlock long before
/// CI's own limit.
pub const DEFAULT_TIMEOUT_S: u64 = 300;
/// Debian's lavapipe driver manifest.
pub const LAVAPIPE_ICD: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
/// Where Debian installs explicit layers (the validation layer among them).
pub const SYSTEM_EXPLICIT_LAYER_DIR: &str = "/usr/share/vulkan/explicit_layer.d";
/// The in-tree explicit manifest; the harness copies it with an absolute
/// `library_path`, so the test manifest cannot drift from the shipped one.
pub const EXPLICIT_MANIFEST: &str = include_str!("../../manifests/VkLayer_EMU_shader_enqueue.json");

/// What [`init`] set up.
#[derive(Debug)]
pub struct TestEnv {
    /// The layer library the manifest points at.
    pub layer_lib: PathBuf,
    /// The temp dir holding the generated manifest.
    pub manifest_dir: PathBuf,
    /// The driver manifest in use.
    pub icd: PathBuf,
    /// Extra variables given to [`init_with`].
    pub extra: Vec<(String, String)>,
}

impl TestEnv {
    /// Whether the layer library exists (tests that need it fail clearly if not).
    pub fn layer_lib_present(&self) -> bool {
        self.layer_lib.is_file()
    }
}

static ENV: OnceLock<std::result::Result<TestEnv, String>> = OnceLock::new();

/// The workspace root (parent of this crate).
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// The layer library to test: `EMU_SE_LAYER_LIB`, else the workspace's debug build.
pub fn layer_lib_path() -> PathBuf {
    if let Some(p) = std::env::var_os(LAYER_LIB_ENV) {
        return PathBuf::from(p);
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("target"));
    target.join("debug").join(LAYER_LIB_FILE)
}

/// Renders the explicit manifest with `library_path` replaced by `lib`.
pub fn manifest_for(lib: &Path) -> Result<String> {
    let mut json: serde_json::Value = serde_json::from_str(EXPLICIT_MANIFEST)
        .map_err(|e| Error::Setup(format!("manifests/ JSON does not parse: {e}")))?;
    let layer = json
        .get_mut("layer")
        .and_then(|l| l.as_object_mut())
        .ok_or_else(|| Error::Setup("manifest has no \"layer\" object".into()))?;
    layer.insert("library_path".into(), serde_json::Value::String(lib.display().to_string()));
    serde_json::to_string_pretty(&json).map_err(|e| Error::Setup(format!("cannot render manifest: {e}")))
}

/// The implicit-layer form of the manifest, as `cargo xtask install` writes
/// it: absolute `library_path`, `disable_environment` `VK_EMU_SE_DISABLE=1`,
/// no `enable_environment` (enabled by default).
pub fn implicit_manifest_for(lib: &Path) -> Result<String> {
    let mut json: serde_json::Value =
        serde_json::from_str(&manifest_for(lib)?).map_err(|e| Error::Setup(format!("manifest does not parse: {e}")))?;
    json["layer"]["disable_environment"] = serde_json::json!({ "VK_EMU_SE_DISABLE": "1" });
    serde_json::to_string_pretty(&json).map_err(|e| Error::Setup(format!("cannot render manifest: {e}")))
}

impl TestEnv {
    /// Installs the layer under test as an implicit layer in this process's
    /// private `XDG_DATA_HOME` (what `cargo xtask install` does for a user).
    /// Call before creating the instance that should see it.
    pub fn install_implicit(&self) -> Result<PathBuf> {
        let dir = self.manifest_dir.join("xdg-data-home/vulkan/implicit_layer.d");
        std::fs::create_dir_all(&dir).map_err(Error::io(format!("create {}", dir.display())))?;
        let path = dir.join("VkLayer_EMU_shader_enqueue.json");
        std::fs::write(&path, implicit_manifest_for(&self.layer_lib)?)
            .map_err(Error::io(format!("write {}", path.display())))?;
        Ok(path)
    }
}

/// Sets up the environment once (no extra variables), or returns the one a
/// previous [`init_with`] set up.
pub fn init() -> Result<&'static TestEnv> {
    ENV.get_or_init(|| setup(&[]).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Error::Setup(format!("test environment setup failed: {e}")))
}

/// [`init_with`] `extra` and `VK_EMU_SE_LOG_FILE` naming a fresh file in
/// the temporary directory (`emu-se-<name>-<pid>.log`, removed first if an
/// earlier run left it), whose path it returns.
pub fn init_with_log_file(name: &str, extra: &[(&str, &str)]) -> Result<PathBuf> {
    let path = std::env::temp_dir().join(format!("emu-se-{name}-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let text = path.display().to_string();
    let mut vars = extra.to_vec();
    vars.push(("VK_EMU_SE_LOG_FILE", text.as_str()));
    init_with(&vars)?;
    Ok(path)
}

/// Sets up the environment once, also setting `extra` variables (e.g.
/// `VK_EMU_SE_TEST_PANIC`). Every call in a process must pass the same
/// `extra`; a mismatch is an error because the loader has already read them.
pub fn init_with(extra: &[(&str, &str)]) -> Result<&'static TestEnv> {
    let env = ENV
        .get_or_init(|| setup(extra).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Error::Setup(format!("test environment setup failed: {e}")))?;
    let same =
        env.extra.len() == extra.len() && env.extra.iter().zip(extra).all(|((k, v), (k2, v2))| k == k2 && v == v2);
    if !same {
        return Err(Error::Setup(format!(
            "environment already initialised with {:?}, asked for {extra:?}: \
             put this test in its own file",
            env.extra
        )));
    }
    Ok(env)
}

fn setup(extra: &[(&str, &str)]) -> Result<TestEnv> {
    let layer_lib = layer_lib_path();
    let icd = std::env::var_os(ICD_ENV).map(PathBuf::from).unwrap_or_else(|| PathBuf::from(LAVAPIPE_ICD));
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let manifest_dir = std::env::temp_dir().join(format!("emu-se-tests-{}-{nanos}", std::process::id()));
    let xdg = manifest_dir.join("xdg-data-home");
    std::fs::create_dir_all(&xdg).map_err(Error::io(format!("create {}", xdg.display())))?;
    let manifest = manifest_dir.join("VkLayer_EMU_shader_enqueue.json");
    std::fs::write(&manifest, manifest_for(&layer_lib)?).map_err(Error::io(format!("write {}", manifest.display())))?;

    let layer_path = format!("{}:{SYSTEM_EXPLICIT_LAYER_DIR}", manifest_dir.display());
    std::env::set_var("VK_LAYER_PATH", &layer_path);
    std::env::set_var("VK_ICD_FILENAMES", &icd);
    std::env::set_var("VK_DRIVER_FILES", &icd);
    std::env::set_var("XDG_DATA_HOME", &xdg);
    std::env::remove_var("VK_INSTANCE_LAYERS");
    for (k, v) in extra {
        std::env::set_var(k, v);
    }
    start_watchdog();
    Ok(TestEnv {
        layer_lib,
        manifest_dir,
        icd,
        extra: extra.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
    })
}

fn start_watchdog() {
    let secs = std::env::var(TIMEOUT_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_TIMEOUT_S);
    let spawned = std::thread::Builder::new().name("emu-se-watchdog".into()).spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(secs));
        // Straight to fd 2: libtest captures eprintln! of test threads
        // (and of threads they spawn), and the capture dies with us.
        let _ = writeln!(
            std::io::stderr(),
            "conformance-tests: this test process ran for more than {secs} s \
                 ({TIMEOUT_ENV}); a Vulkan call is probably deadlocked (e.g. a layer \
                 calling back into the loader). Exiting."
        );
        std::process::exit(101);
    });
    if let Err(e) = spawned {
        eprintln!("conformance-tests: no watchdog thread: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_gets_absolute_library_path() {
        let text = manifest_for(Path::new("/abs/libX.so")).expect("render");
        let v: serde_json::Value = serde_json::from_str(&text).expect("parse");
        assert_eq!(v["layer"]["library_path"], "/abs/libX.so");
        assert_eq!(v["layer"]["name"], LAYER_NAME);
    }
}
