//! The execution-graph runtime: linking node shaders into a graph
//! ([`link`]), the layout of scratch memory ([`scratch`]), graph pipeline
//! objects ([`pipeline`], sharing kernels between stages through [`kernels`]
//! and across creations through [`lowered_cache`],
//! with [`dump`] writing node SPIR-V and [`describe`] the graph on request;
//! mesh nodes are lowered and compiled as graphics pipelines in [`mesh`]), GPU
//! timestamps per pass ([`profile`], on request), counts per level and node
//! ([`statistics`], on request), and the recording of graph dispatches
//! ([`record`], with its primitives in [`commands`], the host-built first
//! level in [`entry`] and its data staged in [`staging`]).

pub mod commands;
pub mod describe;
pub mod driver;
pub mod dump;
pub mod entry;
pub mod errors;
pub mod gpu;
pub mod kernels;
pub mod link;
pub mod lowered_cache;
pub mod mesh;
pub mod pipeline;
pub mod profile;
pub mod record;
pub mod scratch;
pub mod stage;
pub mod staging;
pub mod statistics;
pub mod status;
