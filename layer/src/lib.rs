//! `VK_LAYER_EMU_shader_enqueue`: a Vulkan layer that advertises
//! `VK_AMDX_shader_enqueue` (revision 2) on drivers without it and runs
//! execution graphs on plain compute.
//!
//! Only [`ffi`] touches the application's raw pointers: each hook turns the
//! loader's arguments into references, looks up its [`device`] (or instance
//! in [`state`]), calls safe code and converts the result. The runtime
//! calls the driver through the safe façade in [`dispatch`], which states
//! each driver call once. Everything else is ordinary safe Rust.
//!
//! # Where `unsafe_code` is allowed
//!
//! The crate denies `unsafe_code`; it is allowed, module by module, in
//! [`ffi`] (the C boundary) and [`dispatch`] (the driver façade and the
//! mapped memory it owns). Where other code needs a primitive built on
//! unchecked code (the cell of a command buffer's recording state, which
//! only [`ffi`] opens, the tests' counting allocator), it comes from a
//! crate (`sync_unsafe_cell`, `allocation_counter`). The
//! test `tests/unsafe_boundary.rs` reads `src/` and fails on the keyword
//! anywhere else, so that the rule shows in the test list too; its
//! `ALLOWED` is the same list.
//!
//! # Layers
//!
//! The modules form five tiers; a module imports only from tiers below its
//! own (and, inside a tier, no two files import each other in a loop):
//!
//! 1. [`ffi`]: the exported entry points and hooks, the only module with
//!    `extern "system"` functions and raw pointers.
//! 2. [`device`]: `DeviceState` and the `DEVICES` registry: the runtime's
//!    context on a device plus the registries of what the application
//!    created there and each command buffer's state.
//! 3. [`graph`]: the execution-graph runtime. Its functions take the
//!    runtime context `graph::gpu::Gpu` and plain data as arguments (a
//!    pipeline layout's info, a command buffer's shadow); it never names
//!    [`device`].
//! 4. [`state`]: plain data: instances and physical-device facts, handle
//!    maps, the command-buffer shadow, pipeline layout info.
//! 5. The bottom: [`dispatch`] (with its [`mapped`](dispatch::mapped)
//!    buffers), [`settings`], [`advertise`] and [`spirv_scan`], which name
//!    none of the above.
#![deny(unsafe_code)]
// The crate's API is the C ABI of its exports; these docs are for the
// layer's developers and are built with `--document-private-items`, where
// links to private modules resolve.
#![allow(rustdoc::private_intra_doc_links)]
// The cdylib must be called `libVkLayer_EMU_shader_enqueue.so` (DESIGN.md §2).
#![allow(non_snake_case)]

pub mod advertise;
/// The revision-2 declarations, shared with the tests, demo and bench.
pub use vk_amdx as amdx;
mod device;
#[allow(unsafe_code)]
mod dispatch;
#[allow(unsafe_code)]
mod ffi;
mod graph;
pub mod settings;
pub mod spirv_scan;
mod state;
