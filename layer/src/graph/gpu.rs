//! The runtime's context on one device: the next layer's entry points, the
//! instance's settings and the physical device's facts, and the runtime's
//! own per-device pools (lowered kernels kept across creations, staging
//! memory, timestamp queries). Every function of [`graph`](super) that
//! calls the driver takes a [`Gpu`]; what the application created (graphs,
//! libraries, pipeline layouts, scratch buffers, command buffers) is not
//! here but in `crate::device`, whose `DeviceState` holds a `Gpu` and
//! dereferences to it.
//!
//! Below the modules that create and record ([`driver`](super::driver),
//! [`kernels`](super::kernels), [`mesh`](super::mesh),
//! [`pipeline`](super::pipeline), [`commands`](super::commands),
//! [`record`](super::record)); above the pools it holds
//! ([`lowered_cache`](super::lowered_cache), [`staging`](super::staging),
//! [`profile`](super::profile)), which take the entry points they need as
//! arguments instead.

use super::lowered_cache::LoweredCache;
use super::profile::QueryRing;
use super::staging::StagingPool;
use crate::dispatch::DeviceDispatch;
use crate::state::{InstanceState, PhysicalDeviceState};
use ash::vk;
use parking_lot::Mutex;
use std::sync::Arc;

pub(crate) struct Gpu {
    pub dispatch: DeviceDispatch,
    pub instance: Arc<InstanceState>,
    pub physical: Arc<PhysicalDeviceState>,
    /// The application enabled `shaderMeshEnqueue` (the layer enabled
    /// `VK_EXT_mesh_shader` below): mesh nodes can be created and drawn.
    pub mesh_enqueue: bool,
    /// Timestamp queries of the `profile` setting (created on first use).
    pub profile_queries: Mutex<Option<QueryRing>>,
    /// Host-visible blocks holding host dispatches' records until their
    /// command buffers are reset.
    pub staging: Mutex<StagingPool>,
    /// Analyses and lowered kernels kept across pipeline creations.
    pub lowered: Mutex<LoweredCache>,
}

impl Gpu {
    /// The runtime's context on a device just created, with empty pools.
    pub(crate) fn new(
        dispatch: DeviceDispatch,
        instance: Arc<InstanceState>,
        physical: Arc<PhysicalDeviceState>,
        mesh_enqueue: bool,
    ) -> Self {
        Gpu {
            dispatch,
            instance,
            physical,
            mesh_enqueue,
            profile_queries: Default::default(),
            staging: Default::default(),
            lowered: Default::default(),
        }
    }

    /// Graphs time their kernels' phases: the `phase_clock` setting is on
    /// and the device has the SM clock (the layer enabled it).
    pub(crate) fn phase_clock(&self) -> bool {
        super::phases::timed(&self.instance.settings, &self.physical)
    }

    pub(crate) fn handle(&self) -> vk::Device {
        self.dispatch.fp.handle()
    }
}
