//! The harness error type: every fallible helper says what it was doing.

use std::fmt;

use ash::vk;

/// An error from a harness helper, with the step that failed.
#[derive(Debug)]
pub enum Error {
    /// A Vulkan call failed.
    Vk { what: String, result: vk::Result },
    /// A file-system or process step failed.
    Io { what: String, source: std::io::Error },
    /// The environment is not what the harness needs (missing layer, device...).
    Setup(String),
}

impl Error {
    /// Wraps a `vk::Result` with the call that produced it.
    pub fn vk(what: impl Into<String>) -> impl FnOnce(vk::Result) -> Self {
        let what = what.into();
        move |result| Self::Vk { what, result }
    }

    /// Wraps an I/O error with what was being done.
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Vk { what, result } => write!(f, "{what}: {result:?}"),
            Self::Io { what, source } => write!(f, "{what}: {source}"),
            Self::Setup(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for Error {}

/// `vk_host`'s helpers fail with the call, or with what was missing.
impl From<vk_host::Error> for Error {
    fn from(e: vk_host::Error) -> Self {
        match e {
            vk_host::Error::Vk { call, result } => Self::Vk { what: call.into(), result },
            vk_host::Error::Missing(what) => Self::Setup(what),
        }
    }
}

/// Result alias used throughout the harness.
pub type Result<T> = std::result::Result<T, Error>;
