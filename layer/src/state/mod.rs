//! Layer state: instances and physical devices, found from a dispatchable
//! handle's dispatch key (the loader's dispatch table pointer stored in its
//! first word, shared by an instance and its physical devices, and by a
//! device and its queues and command buffers), the maps behind every
//! registry, and the plain data the runtime reads: a command buffer's
//! [`Shadow`](command_buffer::Shadow) and a pipeline layout's
//! [`PipelineLayoutInfo`](pipeline_layout::PipelineLayoutInfo).
//!
//! The fourth tier (see the crate's "Layers"): plain data only, importing
//! nothing but the bottom tier. Devices live a tier up, in
//! [`crate::device`], because a device holds the runtime's objects.

pub(crate) mod command_buffer;
pub(crate) mod instance;
pub(crate) mod pipeline_layout;
pub(crate) mod registry;

pub(crate) use instance::{InstanceState, PhysicalDeviceState};
pub(crate) use registry::{DispatchKey, Registry};

use std::sync::LazyLock;

pub(crate) static INSTANCES: LazyLock<Registry<InstanceState>> = LazyLock::new(Registry::default);
