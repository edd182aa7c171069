//! Layer settings: environment variables, overridden per instance by
//! `VK_EXT_layer_settings` values the application chains into
//! `VkInstanceCreateInfo`, and the logging subscriber they configure.
//!
//! Every setting is declared once, in [`SETTINGS`]: the environment is read
//! from it, and tests check the layer manifest's `features.settings` (what
//! Vulkan Configurator shows) and the README's table against it.
//! `VK_EMU_SE_DISABLE` (the implicit manifest's `disable_environment`) and
//! `VK_EMU_SE_TEST_PANIC` (debug builds, panic-guard tests) are not settings.

use std::sync::OnceLock;

/// Name under which `VK_EXT_layer_settings` values are addressed to us.
pub const LAYER_NAME: &str = "VK_LAYER_EMU_shader_enqueue";

/// The type of a setting, as the layer manifest names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingType {
    String,
    Bool,
}

impl SettingType {
    /// The manifest's name (`VK_EXT_layer_settings` takes `STRING` or `BOOL32`).
    pub fn manifest_name(self) -> &'static str {
        match self {
            SettingType::String => "STRING",
            SettingType::Bool => "BOOL",
        }
    }
}

/// One setting: its `VK_EXT_layer_settings` key, environment variable,
/// type, default (as the manifest writes it) and description.
#[derive(Clone, Copy, Debug)]
pub struct SettingSpec {
    pub key: &'static str,
    pub env: &'static str,
    pub ty: SettingType,
    pub default: &'static str,
    pub description: &'static str,
}

/// Every setting of the layer.
pub const SETTINGS: [SettingSpec; 11] = [
    SettingSpec {
        key: "log",
        env: "VK_EMU_SE_LOG",
        ty: SettingType::String,
        default: "warn",
        description: "tracing filter of the layer's log, e.g. debug or info,shader_enqueue_layer=trace",
    },
    SettingSpec {
        key: "log_file",
        env: "VK_EMU_SE_LOG_FILE",
        ty: SettingType::String,
        default: "",
        description: "append the log to this file instead of stderr",
    },
    SettingSpec {
        key: "force_emulation",
        env: "VK_EMU_SE_FORCE_EMULATION",
        ty: SettingType::Bool,
        default: "false",
        description: "emulate VK_AMDX_shader_enqueue even where the driver implements it",
    },
    SettingSpec {
        key: "dump_spirv",
        env: "VK_EMU_SE_DUMP_SPIRV",
        ty: SettingType::String,
        default: "",
        description: "directory: every node's input and lowered SPIR-V is written there at pipeline creation",
    },
    SettingSpec {
        key: "dump_graph",
        env: "VK_EMU_SE_DUMP_GRAPH",
        ty: SettingType::String,
        default: "",
        description: "directory: every graph pipeline is described there at creation, as JSON and as Graphviz DOT",
    },
    SettingSpec {
        key: "profile",
        env: "VK_EMU_SE_PROFILE",
        ty: SettingType::String,
        default: "",
        description:
            "GPU time of every pass of every graph dispatch: log, or a file that gets one JSON line per dispatch",
    },
    SettingSpec {
        key: "statistics",
        env: "VK_EMU_SE_STATISTICS",
        ty: SettingType::String,
        default: "",
        description: "records and workgroups per node and level, and the scratch frames each level took, of every graph dispatch: log, or a file that gets one JSON line per dispatch",
    },
    SettingSpec {
        key: "shader_statistics",
        env: "VK_EMU_SE_SHADER_STATISTICS",
        ty: SettingType::Bool,
        default: "false",
        description: "log the driver's statistics of every node kernel (registers, instructions...) where the driver has VK_KHR_pipeline_executable_properties",
    },
    SettingSpec {
        key: "phase_clock",
        env: "VK_EMU_SE_PHASE_CLOCK",
        ty: SettingType::Bool,
        default: "false",
        description: "time the phases of every level inside its workgroups with the SM clock (records found, code done, counted done, finisher) and log each graph's averages when it is destroyed, where the driver has shaderSubgroupClock",
    },
    SettingSpec {
        key: "labels",
        env: "VK_EMU_SE_LABELS",
        ty: SettingType::Bool,
        default: "true",
        description: "debug-utils labels around the layer's passes, naming each pass, level and node",
    },
    SettingSpec {
        key: "checked_payloads",
        env: "VK_EMU_SE_CHECKED_PAYLOADS",
        ty: SettingType::Bool,
        default: if CHECKED_PAYLOADS_DEFAULT { "true" } else { "false" },
        description: "node kernels check every output and input record index against the records there are, clamp it and report the first one past them",
    },
];

/// The `checked_payloads` setting when none is given. The bench decides it
/// (what the checks cost on its graphs: figure to come).
pub const CHECKED_PAYLOADS_DEFAULT: bool = true;

/// Settings in force for one instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `tracing` filter directive (`warn`, `debug`, `shader_enqueue=trace`, ...).
    pub log: Option<String>,
    /// File to append log lines to; stderr when `None`.
    pub log_file: Option<String>,
    /// Emulate even where the driver supports `VK_AMDX_shader_enqueue` natively.
    pub force_emulation: bool,
    /// Directory to write every node's input and lowered SPIR-V to, so what
    /// the driver received can be checked with `spirv-val`.
    pub dump_spirv: Option<String>,
    /// Directory to describe every graph pipeline in (JSON and DOT, see
    /// `graph::describe`).
    pub dump_graph: Option<String>,
    /// Profile every graph dispatch (see `graph::profile`): `log` logs each
    /// one (at info level); any other value is a file that gets one JSON
    /// line per dispatch as well.
    pub profile: Option<String>,
    /// Count every graph dispatch's work per level and node (see
    /// `graph::statistics`): `log` logs each one, any other value is a file
    /// that gets one JSON line per dispatch as well.
    pub statistics: Option<String>,
    /// Record no debug-utils labels around the layer's passes (they are on
    /// by default when the application enabled `VK_EXT_debug_utils`).
    pub without_labels: bool,
    /// Log what the driver says of every node kernel it compiled
    /// (`VK_KHR_pipeline_executable_properties`: registers, instructions...).
    pub shader_statistics: bool,
    /// Time the phases of every level inside its workgroups (see
    /// `graph::phases`).
    pub phase_clock: bool,
    /// Lower node kernels with payload bounds checks
    /// (`spirv_lowering::LowerOptions::checked_payloads`).
    pub checked_payloads: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            log: None,
            log_file: None,
            force_emulation: false,
            dump_spirv: None,
            dump_graph: None,
            profile: None,
            statistics: None,
            without_labels: false,
            shader_statistics: false,
            phase_clock: false,
            checked_payloads: CHECKED_PAYLOADS_DEFAULT,
        }
    }
}

/// One value an application passed through `VK_EXT_layer_settings`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingValue {
    Bool(bool),
    String(String),
}

impl Settings {
    /// Settings from the process environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Settings from any variable lookup (the environment in production).
    /// An empty value counts as unset.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let mut settings = Settings::default();
        for spec in &SETTINGS {
            if let Some(value) = lookup(spec.env).filter(|v| !v.trim().is_empty()) {
                // Every key of the table is one `apply` knows (unit test).
                let _ = settings.apply(spec.key, SettingValue::String(value));
            }
        }
        settings
    }

    /// Applies one `VK_EXT_layer_settings` value; unknown keys are reported.
    pub fn apply(&mut self, key: &str, value: SettingValue) -> Result<(), String> {
        match (key, value) {
            ("log", SettingValue::String(s)) => self.log = Some(s).filter(|s| !s.is_empty()),
            ("log_file", SettingValue::String(s)) => self.log_file = Some(s).filter(|s| !s.is_empty()),
            ("force_emulation", SettingValue::Bool(b)) => self.force_emulation = b,
            ("force_emulation", SettingValue::String(s)) => self.force_emulation = parse_bool(&s),
            ("dump_spirv", SettingValue::String(s)) => self.dump_spirv = Some(s).filter(|s| !s.is_empty()),
            ("dump_graph", SettingValue::String(s)) => self.dump_graph = Some(s).filter(|s| !s.is_empty()),
            ("profile", SettingValue::String(s)) => self.profile = Some(s).filter(|s| !s.is_empty()),
            ("statistics", SettingValue::String(s)) => self.statistics = Some(s).filter(|s| !s.is_empty()),
            ("labels", SettingValue::Bool(b)) => self.without_labels = !b,
            ("labels", SettingValue::String(s)) => self.without_labels = !parse_bool(&s),
            ("shader_statistics", SettingValue::Bool(b)) => self.shader_statistics = b,
            ("shader_statistics", SettingValue::String(s)) => self.shader_statistics = parse_bool(&s),
            ("phase_clock", SettingValue::Bool(b)) => self.phase_clock = b,
            ("phase_clock", SettingValue::String(s)) => self.phase_clock = parse_bool(&s),
            ("checked_payloads", SettingValue::Bool(b)) => self.checked_payloads = b,
            ("checked_payloads", SettingValue::String(s)) => self.checked_payloads = parse_bool(&s),
            (key, value) => return Err(format!("unknown layer setting {key} = {value:?}")),
        }
        Ok(())
    }
}

fn parse_bool(value: &str) -> bool {
    matches!(value.trim().to_ascii_lowercase().as_str(), "1" | "true" | "on" | "yes")
}

/// Installs the layer's `tracing` subscriber the first time it is called;
/// later calls (other instances) keep the first configuration.
pub fn init_logging(settings: &Settings) {
    static INIT: OnceLock<()> = OnceLock::new();
    INIT.get_or_init(|| {
        let filter = tracing_subscriber::EnvFilter::try_new(settings.log.as_deref().unwrap_or("warn"))
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
        let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(false).with_ansi(false);
        let file = settings
            .log_file
            .as_deref()
            .and_then(|path| std::fs::OpenOptions::new().create(true).append(true).open(path).ok());
        // The subscriber lives in this library's copy of `tracing`, so it
        // never clashes with a host application that uses `tracing` itself.
        let _ = match file {
            Some(file) => builder.with_writer(std::sync::Mutex::new(file)).try_init(),
            None => builder.with_writer(std::io::stderr).try_init(),
        };
    });
}

/// Name of the hook that must panic, for the panic-guard tests (debug builds).
pub fn test_panic_hook() -> Option<&'static str> {
    static HOOK: OnceLock<Option<String>> = OnceLock::new();
    if !cfg!(debug_assertions) {
        return None;
    }
    HOOK.get_or_init(|| std::env::var("VK_EMU_SE_TEST_PANIC").ok()).as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_and_layer_settings_combine() {
        let env = |name: &str| match name {
            "VK_EMU_SE_LOG" => Some("debug".to_string()),
            "VK_EMU_SE_FORCE_EMULATION" => Some("1".to_string()),
            _ => None,
        };
        let mut settings = Settings::from_lookup(env);
        assert_eq!(settings.log.as_deref(), Some("debug"));
        assert!(settings.force_emulation);
        settings.apply("force_emulation", SettingValue::Bool(false)).unwrap();
        settings.apply("log_file", SettingValue::String("/tmp/x.log".into())).unwrap();
        settings.apply("dump_spirv", SettingValue::String("/tmp/spirv".into())).unwrap();
        assert_eq!(settings.dump_spirv.as_deref(), Some("/tmp/spirv"));
        assert!(!settings.force_emulation);
        assert_eq!(settings.log_file.as_deref(), Some("/tmp/x.log"));
        assert!(settings.apply("colour", SettingValue::Bool(true)).is_err());
        assert!(!settings.without_labels);
        settings.apply("labels", SettingValue::Bool(false)).unwrap();
        assert!(settings.without_labels);
        let off = Settings::from_lookup(|name| (name == "VK_EMU_SE_LABELS").then(|| "0".to_string()));
        assert!(off.without_labels);
        assert_eq!(settings.checked_payloads, CHECKED_PAYLOADS_DEFAULT);
        for (value, checked) in [("0", false), ("1", true)] {
            let set = Settings::from_lookup(|name| (name == "VK_EMU_SE_CHECKED_PAYLOADS").then(|| value.to_string()));
            assert_eq!(set.checked_payloads, checked, "{value}");
        }
    }

    /// Every setting of the table is read from its variable and accepted
    /// under its key with its type.
    #[test]
    fn the_table_drives_the_environment_and_the_keys() {
        for spec in &SETTINGS {
            let value = match spec.ty {
                SettingType::String => "x",
                SettingType::Bool => {
                    if spec.default == "true" {
                        "0"
                    } else {
                        "1"
                    }
                }
            };
            let from_env = Settings::from_lookup(|name| (name == spec.env).then(|| value.to_string()));
            assert_ne!(from_env, Settings::default(), "{} is not read", spec.env);
            let mut applied = Settings::default();
            let typed = match spec.ty {
                SettingType::String => SettingValue::String(value.into()),
                SettingType::Bool => SettingValue::Bool(spec.default != "true"),
            };
            applied.apply(spec.key, typed).unwrap_or_else(|e| panic!("{}: {e}", spec.key));
            assert_eq!(applied, from_env, "{}", spec.key);
        }
    }

    /// The layer manifest declares exactly the table's settings in the
    /// layer-settings format Vulkan Configurator reads.
    #[test]
    fn the_manifest_declares_every_setting() {
        let manifest: serde_json::Value =
            serde_json::from_str(include_str!("../../manifests/VkLayer_EMU_shader_enqueue.json")).unwrap();
        let declared = manifest["layer"]["features"]["settings"].as_array().expect("features.settings");
        assert_eq!(declared.len(), SETTINGS.len());
        for (d, spec) in declared.iter().zip(&SETTINGS) {
            assert_eq!(d["key"], spec.key);
            assert_eq!(d["env"], spec.env);
            assert_eq!(d["type"], spec.ty.manifest_name());
            assert_eq!(d["description"], spec.description);
            assert!(d["label"].as_str().is_some_and(|l| !l.is_empty()), "{}: label", spec.key);
            match spec.ty {
                SettingType::Bool => assert_eq!(d["default"], spec.default == "true", "{}", spec.key),
                SettingType::String => assert_eq!(d["default"], spec.default, "{}", spec.key),
            }
        }
    }

    /// The README's settings table names every variable and key.
    #[test]
    fn the_readme_lists_every_setting() {
        let readme = include_str!("../../README.md");
        for spec in &SETTINGS {
            let row = readme.lines().find(|l| l.starts_with(&format!("| `{}`", spec.env)));
            let row = row.unwrap_or_else(|| panic!("README has no row for {}", spec.env));
            assert!(row.contains(&format!("`{}`", spec.key)), "README row of {} lacks `{}`", spec.env, spec.key);
        }
    }

    #[test]
    fn empty_values_mean_unset() {
        let settings = Settings::from_lookup(|_| Some(String::new()));
        assert_eq!(settings, Settings::default());
    }
}
