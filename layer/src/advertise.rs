//! What the layer advertises on a physical device, decided from facts the
//! driver reported. Pure logic; the hooks in `ffi` gather the facts.
//!
//! Prerequisites for emulation (checked per physical device):
//! - device API version 1.3 or later (the product targets Vulkan 1.3 drivers;
//!   lowered kernels are SPIR-V 1.4+ and the runtime uses 1.3 core commands),
//! - instance API version 1.2 or later requested by the application (buffer
//!   device addresses are core 1.2 commands the runtime calls),
//! - the `bufferDeviceAddress` feature (payloads and scratch are addressed
//!   through `PhysicalStorageBuffer64` pointers),
//! - the `shaderInt64` feature (lowered kernels do 64-bit address arithmetic),
//! - the `shaderBufferInt64Atomics` feature (the record counters are 64-bit:
//!   records and dynamic-grid workgroups numbered by one atomic),
//! - the `scalarBlockLayout` feature (node payloads keep the layout their
//!   compiler gave them; HLSL's puts a `uint3` at offset 4, which only scalar
//!   block layout allows for the storage-buffer pointers payloads become).

use crate::amdx;
use ash::vk;
use std::ffi::CStr;

/// What the driver beneath reported about one physical device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceFacts {
    pub api_version: u32,
    pub buffer_device_address: bool,
    pub shader_int64: bool,
    pub scalar_block_layout: bool,
    pub shader_buffer_int64_atomics: bool,
    /// The driver lists `VK_AMDX_shader_enqueue` itself.
    pub driver_lists_extension: bool,
    /// The driver's own `shaderEnqueue` feature bit (false when not listed).
    pub driver_shader_enqueue: bool,
}

/// How `VK_AMDX_shader_enqueue` is provided on a physical device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    /// The driver implements it; the layer stays out of the way.
    Native,
    /// The layer emulates it.
    Emulated,
    /// Not offered; the reasons name the missing prerequisites.
    Unavailable(Vec<&'static str>),
}

impl Support {
    pub fn decide(facts: &DeviceFacts, instance_api_version: u32, force_emulation: bool) -> Support {
        if facts.driver_lists_extension && facts.driver_shader_enqueue && !force_emulation {
            return Support::Native;
        }
        let mut missing = Vec::new();
        if facts.api_version < vk::API_VERSION_1_3 {
            missing.push("device API version 1.3");
        }
        if instance_api_version < vk::API_VERSION_1_2 {
            missing.push("instance created with apiVersion 1.2 or later");
        }
        if !facts.buffer_device_address {
            missing.push("bufferDeviceAddress feature");
        }
        if !facts.shader_int64 {
            missing.push("shaderInt64 feature");
        }
        if !facts.scalar_block_layout {
            missing.push("scalarBlockLayout feature");
        }
        if !facts.shader_buffer_int64_atomics {
            missing.push("shaderBufferInt64Atomics feature");
        }
        if missing.is_empty() {
            Support::Emulated
        } else {
            Support::Unavailable(missing)
        }
    }

    pub fn is_emulated(&self) -> bool {
        matches!(self, Support::Emulated)
    }
}

/// Extension name of a `VkExtensionProperties`.
fn name_of(props: &vk::ExtensionProperties) -> &CStr {
    props.extension_name_as_c_str().unwrap_or(c"")
}

/// The device extension list the application sees: the driver's list with
/// `VK_AMDX_shader_enqueue` listed exactly once at revision 2 when emulated
/// (a driver that lists it without supporting it, as Mesa 25 does, keeps one
/// entry), untouched when native, and without it when unavailable.
pub fn device_extensions(driver: &[vk::ExtensionProperties], support: &Support) -> Vec<vk::ExtensionProperties> {
    if *support == Support::Native {
        return driver.to_vec();
    }
    let mut list: Vec<_> = driver.iter().filter(|p| name_of(p) != amdx::EXTENSION_NAME).copied().collect();
    if support.is_emulated() {
        list.push(extension_properties());
    }
    list
}

/// `VK_AMDX_shader_enqueue` at the revision the layer implements.
pub fn extension_properties() -> vk::ExtensionProperties {
    let props = vk::ExtensionProperties { spec_version: amdx::SPEC_VERSION, ..Default::default() };
    // Cannot fail: the name is far shorter than VK_MAX_EXTENSION_NAME_SIZE.
    props.extension_name(amdx::EXTENSION_NAME).unwrap_or(props)
}

/// The limits the layer advertises: the revision-2 minimums, which is what
/// the runtime is built and tested for (depth 32 levels, 65535 workgroups per
/// dimension after splitting, 2^24-1 workgroups per node).
pub fn properties() -> amdx::PhysicalDeviceShaderEnqueueProperties {
    amdx::PhysicalDeviceShaderEnqueueProperties {
        s_type: amdx::STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES,
        p_next: std::ptr::null_mut(),
        max_execution_graph_depth: 32,
        max_execution_graph_shader_output_nodes: 256,
        max_execution_graph_shader_payload_size: 32 * 1024,
        max_execution_graph_shader_payload_count: 256,
        execution_graph_dispatch_address_alignment: 4,
        max_execution_graph_workgroup_count: [65535; 3],
        // The kernels drop records past it (see `abi`).
        max_execution_graph_workgroups: spirv_lowering::abi::MAX_RECORD_WORKGROUPS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(name: &CStr, version: u32) -> vk::ExtensionProperties {
        vk::ExtensionProperties { spec_version: version, ..Default::default() }.extension_name(name).unwrap()
    }

    fn capable() -> DeviceFacts {
        DeviceFacts {
            api_version: vk::API_VERSION_1_3,
            buffer_device_address: true,
            shader_int64: true,
            scalar_block_layout: true,
            shader_buffer_int64_atomics: true,
            ..Default::default()
        }
    }

    #[test]
    fn capable_device_is_emulated() {
        assert_eq!(Support::decide(&capable(), vk::API_VERSION_1_3, false), Support::Emulated);
    }

    #[test]
    fn missing_prerequisites_are_named() {
        let facts = DeviceFacts { shader_int64: false, api_version: vk::API_VERSION_1_1, ..capable() };
        assert_eq!(
            Support::decide(&facts, vk::API_VERSION_1_0, false),
            Support::Unavailable(vec![
                "device API version 1.3",
                "instance created with apiVersion 1.2 or later",
                "shaderInt64 feature"
            ])
        );
    }

    #[test]
    fn listed_but_unsupported_driver_is_emulated_and_listed_once() {
        // Mesa 25: lists the extension (revision 1), shaderEnqueue = 0.
        let facts = DeviceFacts { driver_lists_extension: true, ..capable() };
        let support = Support::decide(&facts, vk::API_VERSION_1_3, false);
        assert_eq!(support, Support::Emulated);
        let driver = [ext(c"VK_KHR_swapchain", 70), ext(amdx::EXTENSION_NAME, 1), ext(c"VK_EXT_foo", 1)];
        let list = device_extensions(&driver, &support);
        let ours: Vec<_> = list.iter().filter(|p| name_of(p) == amdx::EXTENSION_NAME).collect();
        assert_eq!(ours.len(), 1);
        assert_eq!(ours[0].spec_version, 2);
        assert_eq!(list.len(), 3);
    }

    #[test]
    fn native_driver_passes_through_unless_forced() {
        let facts = DeviceFacts { driver_lists_extension: true, driver_shader_enqueue: true, ..capable() };
        assert_eq!(Support::decide(&facts, vk::API_VERSION_1_3, false), Support::Native);
        assert_eq!(Support::decide(&facts, vk::API_VERSION_1_3, true), Support::Emulated);
        let driver = [ext(amdx::EXTENSION_NAME, 2)];
        assert_eq!(device_extensions(&driver, &Support::Native).len(), 1);
    }

    #[test]
    fn unavailable_hides_a_listed_extension() {
        let support = Support::Unavailable(vec!["shaderInt64 feature"]);
        let driver = [ext(amdx::EXTENSION_NAME, 1), ext(c"VK_KHR_swapchain", 70)];
        let list = device_extensions(&driver, &support);
        assert_eq!(list.len(), 1);
        assert_eq!(name_of(&list[0]), c"VK_KHR_swapchain");
    }

    #[test]
    fn properties_meet_the_spec_minimums() {
        let p = properties();
        assert!(p.max_execution_graph_depth >= 32);
        assert!(p.max_execution_graph_shader_output_nodes >= 256);
        assert!(p.max_execution_graph_shader_payload_size >= 32768);
        assert!(p.max_execution_graph_shader_payload_count >= 256);
        assert!(p.execution_graph_dispatch_address_alignment <= 4);
        assert!(p.max_execution_graph_workgroup_count.iter().all(|&c| c >= 65535));
        assert!(p.max_execution_graph_workgroups >= 16_777_215);
    }
}
