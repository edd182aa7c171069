//! Host-side Vulkan plumbing that the conformance tests, the demo and the
//! bench all need, written once: device-address buffers ([`buffer`]),
//! command pools, submits and barriers ([`submit`]), shader modules, storage
//! descriptor sets and compute pipelines ([`pipeline`]), execution graph
//! creation, queries and host dispatches ([`graph`]), timestamps
//! ([`timer`]) and the drawing that mesh nodes need ([`render`]).
//!
//! A crate of its own rather than a feature of `vk-amdx`: `vk-amdx` is
//! declarations the layer (a cdylib) links, while this is application code
//! that the layer must never carry. Every helper takes an `ash::Device` and
//! returns plain handles (or a [`Timer`] that borrows the device); who owns
//! and destroys them stays with the caller, because the tests register
//! objects with their device while the demo and bench destroy them on drop.
//! A helper that fails destroys whatever it made before failing.

pub mod buffer;
pub mod graph;
pub mod pipeline;
pub mod render;
pub mod submit;
pub mod timer;

pub use buffer::Buffer;
pub use pipeline::StorageBindings;
pub use timer::Timer;

use std::fmt;

use ash::vk;

/// Name of the layer under test and on show.
pub const LAYER_NAME: &std::ffi::CStr = c"VK_LAYER_EMU_shader_enqueue";

/// A failed helper: the Vulkan call and its result, or what was missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    Vk { call: &'static str, result: vk::Result },
    Missing(String),
}

/// Wraps a `vk::Result` with the call that produced it (for `map_err`).
pub(crate) fn vk_err(call: &'static str) -> impl Fn(vk::Result) -> Error {
    move |result| Error::Vk { call, result }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Vk { call, result } => write!(f, "{call}: {result:?}"),
            Self::Missing(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for Error {}

/// The demo and bench report errors as strings.
impl From<Error> for String {
    fn from(e: Error) -> Self {
        e.to_string()
    }
}

pub type Result<T> = std::result::Result<T, Error>;
