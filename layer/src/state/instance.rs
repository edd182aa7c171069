//! Per-instance state and the per-physical-device facts behind advertisement.

use super::registry::HandleMap;
use crate::advertise::Support;
use crate::dispatch::InstanceDispatch;
use crate::settings::Settings;
use ash::vk;
use parking_lot::RwLock;
use std::sync::Arc;

pub(crate) struct InstanceState {
    pub dispatch: InstanceDispatch,
    /// `VkApplicationInfo::apiVersion` (1.0 when absent).
    pub api_version: u32,
    pub settings: Settings,
    /// The application enabled `VK_EXT_debug_utils` on the instance.
    pub debug_utils: bool,
    physical_devices: RwLock<HandleMap<vk::PhysicalDevice, Arc<PhysicalDeviceState>>>,
}

/// What one physical device offers, probed once.
#[derive(Debug)]
pub(crate) struct PhysicalDeviceState {
    pub support: Support,
    /// Optional features the layer enables when present (see `ffi::device_features`).
    pub optional: OptionalFeatures,
    pub has_maintenance5: bool,
    /// `VK_EXT_mesh_shader` with `meshShader`: `shaderMeshEnqueue` is offered.
    pub mesh_shader: bool,
    /// The driver lists `VK_KHR_pipeline_executable_properties` (the
    /// `shader_statistics` setting's source).
    pub executable_properties: bool,
    /// `VK_KHR_shader_clock` with `shaderSubgroupClock` (the `phase_clock`
    /// setting's clock).
    pub subgroup_clock: bool,
    /// The device's version as the application sees it is 1.3 or later, so
    /// the layer may chain `VkPipelineCreationFeedbackCreateInfo` (core 1.3)
    /// to its own pipelines.
    pub creation_feedback: bool,
    /// `VkPhysicalDeviceLimits::maxPushConstantsSize`.
    pub max_push_constants_size: u32,
    /// `VkPhysicalDeviceLimits::timestampPeriod` (ns a tick).
    pub timestamp_period: f32,
    /// Compute shaders have subgroup arithmetic and ballot operations
    /// (`LowerOptions::subgroup_ops`).
    pub subgroup_ops: bool,
    pub memory_properties: ash::vk::PhysicalDeviceMemoryProperties,
}

/// Features the layer turns on if the device has them, because lowered
/// kernels may need them: node payloads with 8/16-bit members become
/// storage-buffer accesses, `LocalSizeId` needs maintenance4, and node
/// shaders written for the Vulkan memory model (DXC emits it for
/// `globallycoherent` and `[NodeTrackRWInputSharing]` inputs) need it and its
/// device scope (the lowering's atomics use Device scope).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OptionalFeatures {
    pub storage_buffer_16bit_access: bool,
    pub storage_buffer_8bit_access: bool,
    pub maintenance4: bool,
    pub vulkan_memory_model: bool,
}

impl InstanceState {
    pub(crate) fn new(dispatch: InstanceDispatch, api_version: u32, settings: Settings, debug_utils: bool) -> Self {
        InstanceState { dispatch, api_version, settings, debug_utils, physical_devices: RwLock::default() }
    }

    /// The device's state, probing it with `probe` the first time.
    pub(crate) fn physical_device(
        &self,
        pd: vk::PhysicalDevice,
        probe: impl FnOnce(&Self) -> PhysicalDeviceState,
    ) -> Arc<PhysicalDeviceState> {
        if let Some(state) = self.physical_devices.read().get(&pd) {
            return state.clone();
        }
        let state = Arc::new(probe(self));
        self.physical_devices.write().entry(pd).or_insert(state).clone()
    }
}
