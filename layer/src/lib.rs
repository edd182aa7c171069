//! `VK_LAYER_EMU_shader_enqueue`: a Vulkan layer that advertises
//! `VK_AMDX_shader_enqueue` (revision 2) on drivers without it and runs
//! execution graphs on plain compute.
//!
//! Only [`ffi`] touches raw pointers: each hook turns the loader's arguments
//! into references, looks up [`state`], calls safe code and converts the
//! result. Everything else is ordinary safe Rust.
#![deny(unsafe_op_in_unsafe_fn)]
// The cdylib must be called `libVkLayer_EMU_shader_enqueue.so` (DESIGN.md §2).
#![allow(non_snake_case)]

pub mod advertise;
/// The revision-2 declarations, shared with the tests, demo and bench.
pub use vk_amdx as amdx;
mod device;
mod dispatch;
mod ffi;
mod graph;
mod mapped;
pub mod settings;
pub mod spirv_scan;
mod state;
