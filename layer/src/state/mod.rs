//! Layer state: instances, physical devices, devices and command buffers,
//! found from a dispatchable handle's dispatch key (the loader's dispatch
//! table pointer stored in its first word, shared by an instance and its
//! physical devices, and by a device and its queues and command buffers).

pub(crate) mod command_buffer;
pub(crate) mod instance;
pub(crate) mod pipeline_layout;
pub(crate) mod registry;

pub(crate) use instance::{InstanceState, PhysicalDeviceState};
pub(crate) use registry::{DispatchKey, Registry};

use std::sync::LazyLock;

pub(crate) static INSTANCES: LazyLock<Registry<InstanceState>> = LazyLock::new(Registry::default);
