//! The execution-graph runtime: linking node shaders into a graph
//! ([`link`]), how records are kept in frames ([`frames`]) and the layout
//! of scratch memory ([`scratch`]), graph pipeline
//! objects ([`pipeline`], sharing kernels between stages through [`kernels`]
//! and across creations through [`lowered_cache`], compiled on the driver
//! through [`driver`], with [`dump`] writing node SPIR-V and [`describe`]
//! the graph on request; mesh nodes are lowered and compiled as graphics
//! pipelines in [`mesh`], and the node stages they are made of are kept as
//! [`stage`]s), GPU timestamps per pass ([`profile`], on request), counts
//! per level and node ([`statistics`], on request), the status readback
//! ring ([`status`]), and the recording of graph dispatches ([`record`],
//! with its primitives in [`commands`], the host-built first level in
//! [`entry`] and its data staged in [`staging`]). Errors are [`errors`].
//!
//! The third tier (see the crate's "Layers"): below `crate::device`, which
//! it never names, above [`crate::state`] and the bottom tier. Every
//! function that calls the driver takes the runtime context [`gpu::Gpu`];
//! what the application created reaches it as plain arguments (node
//! stages, a pipeline layout's info, a command buffer's shadow, a scratch
//! range), looked up by the hooks.
//!
//! Inside, from the bottom up (a module imports only from those before it):
//! [`link`], [`levels`], [`frames`], [`dump`], [`lowered_cache`], [`statistics`], [`staging`] and
//! [`profile`] (which take the driver's entry points as arguments, since
//! [`gpu::Gpu`] holds their pools); [`scratch`], [`errors`], [`describe`];
//! [`gpu`]; [`stage`], [`status`], [`driver`]; [`kernels`], [`mesh`];
//! [`pipeline`]; [`entry`], [`commands`]; [`record`].

pub mod commands;
pub mod describe;
pub mod driver;
pub mod dump;
pub mod entry;
pub mod errors;
pub mod frames;
pub mod gpu;
pub mod kernels;
pub mod levels;
pub mod link;
pub mod lowered_cache;
pub mod mesh;
pub mod phases;
pub mod pipeline;
pub mod profile;
pub mod record;
pub mod scratch;
pub mod stage;
pub mod staging;
pub mod statistics;
pub mod status;
