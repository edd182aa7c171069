//! Layer settings: environment variables, overridden per instance by
//! `VK_EXT_layer_settings` values the application chains into
//! `VkInstanceCreateInfo`, and the logging subscriber they configure.
//!
//! | environment variable          | layer setting     | meaning                                   |
//! |-------------------------------|-------------------|-------------------------------------------|
//! | `VK_EMU_SE_LOG`               | `log`             | `tracing` filter, default `warn`          |
//! | `VK_EMU_SE_LOG_FILE`          | `log_file`        | append log lines to this file, not stderr |
//! | `VK_EMU_SE_FORCE_EMULATION`   | `force_emulation` | emulate even over a native AMDX driver    |
//! | `VK_EMU_SE_DUMP_SPIRV`        | `dump_spirv`      | write each node's input and lowered SPIR-V to this directory |
//! | `VK_EMU_SE_PROFILE`           | `profile`         | GPU time per pass of every graph dispatch: `log`, or a file for JSON lines (and the log) |
//! | `VK_EMU_SE_LABELS`            | `labels`          | debug-utils labels around the layer's passes (default on; `0` turns them off) |
//! | `VK_EMU_SE_DISABLE`           | (manifest)        | disables the implicit layer (loader)      |
//! | `VK_EMU_SE_TEST_PANIC`        |                   | debug builds: this hook panics (tests)    |

use std::sync::OnceLock;

/// Name under which `VK_EXT_layer_settings` values are addressed to us.
pub const LAYER_NAME: &str = "VK_LAYER_EMU_shader_enqueue";

/// Settings in force for one instance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    /// Profile every graph dispatch (see `graph::profile`): `log` logs each
    /// one (at info level); any other value is a file that gets one JSON
    /// line per dispatch as well.
    pub profile: Option<String>,
    /// Record no debug-utils labels around the layer's passes (they are on
    /// by default when the application enabled `VK_EXT_debug_utils`).
    pub without_labels: bool,
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
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        Settings {
            log: lookup("VK_EMU_SE_LOG").filter(|s| !s.is_empty()),
            log_file: lookup("VK_EMU_SE_LOG_FILE").filter(|s| !s.is_empty()),
            force_emulation: lookup("VK_EMU_SE_FORCE_EMULATION").is_some_and(|v| parse_bool(&v)),
            dump_spirv: lookup("VK_EMU_SE_DUMP_SPIRV").filter(|s| !s.is_empty()),
            profile: lookup("VK_EMU_SE_PROFILE").filter(|s| !s.is_empty()),
            without_labels: lookup("VK_EMU_SE_LABELS").is_some_and(|v| !v.trim().is_empty() && !parse_bool(&v)),
        }
    }

    /// Applies one `VK_EXT_layer_settings` value; unknown keys are reported.
    pub fn apply(&mut self, key: &str, value: SettingValue) -> Result<(), String> {
        match (key, value) {
            ("log", SettingValue::String(s)) => self.log = Some(s),
            ("log_file", SettingValue::String(s)) => self.log_file = Some(s),
            ("force_emulation", SettingValue::Bool(b)) => self.force_emulation = b,
            ("force_emulation", SettingValue::String(s)) => self.force_emulation = parse_bool(&s),
            ("dump_spirv", SettingValue::String(s)) => self.dump_spirv = Some(s).filter(|s| !s.is_empty()),
            ("profile", SettingValue::String(s)) => self.profile = Some(s).filter(|s| !s.is_empty()),
            ("labels", SettingValue::Bool(b)) => self.without_labels = !b,
            ("labels", SettingValue::String(s)) => self.without_labels = !parse_bool(&s),
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
    }

    #[test]
    fn empty_values_mean_unset() {
        let settings = Settings::from_lookup(|_| Some(String::new()));
        assert_eq!(settings, Settings::default());
    }
}
