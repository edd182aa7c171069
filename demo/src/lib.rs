//! Shared code of the `demo` and `cmd_cost` binaries (and of `bench`): small
//! Vulkan helpers ([`vkutil`]), the demo's device ([`gpu`]) and execution
//! graph ([`graph`]) on `vk_host`'s plumbing, the D3D12HelloWorkGraphs chain with its CPU model
//! ([`hello`]), the Mandelbrot refinement graph with its CPU model
//! ([`refine`]) and the PNG picture the demo renders with it ([`picture`]),
//! the mesh-node picture ([`sierpinski`]), and the pass-through cost
//! measurement ([`cmd_cost`]) with the cores it keeps busy ([`busy_cores`])
//! and the CPUs it pins its threads to ([`cpus`]).

pub mod busy_cores;
pub mod cmd_cost;
pub mod cpus;
pub mod gpu;
pub mod graph;
pub mod hello;
pub mod picture;
pub mod refine;
pub mod sierpinski;
pub mod vkutil;
