//! Shared code of the `demo` and `cmd_cost` binaries: the revision-2 AMDX
//! items ([`amdx`]), small Vulkan helpers ([`vkutil`]), and the demo's
//! device ([`gpu`]), execution graph ([`graph`]), GPU timer ([`timer`]) and
//! the D3D12HelloWorkGraphs chain with its CPU model ([`hello`]).

pub mod amdx;
pub mod gpu;
pub mod graph;
pub mod hello;
pub mod timer;
pub mod vkutil;

/// Name of the layer the demo enables.
pub const LAYER_NAME: &std::ffi::CStr = c"VK_LAYER_EMU_shader_enqueue";
