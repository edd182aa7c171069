//! Shared code of the `demo` and `cmd_cost` binaries (and of `bench`): the
//! revision-2 AMDX items ([`amdx`]), small Vulkan helpers ([`vkutil`]), the
//! demo's device ([`gpu`]), execution graph ([`graph`]), GPU timer
//! ([`timer`]), the D3D12HelloWorkGraphs chain with its CPU model
//! ([`hello`]), the Mandelbrot refinement graph with its CPU model
//! ([`refine`]) and the PNG picture the demo renders with it ([`picture`]),
//! and the pass-through cost measurement ([`cmd_cost`]).

pub mod amdx;
pub mod cmd_cost;
pub mod gpu;
pub mod graph;
pub mod hello;
pub mod picture;
pub mod refine;
pub mod timer;
pub mod vkutil;

/// Name of the layer the demo enables.
pub const LAYER_NAME: &std::ffi::CStr = c"VK_LAYER_EMU_shader_enqueue";
