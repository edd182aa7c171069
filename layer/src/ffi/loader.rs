//! The loader-layer interface of `vk_layer.h` (interface version 2): the
//! negotiation structure and the link structures the loader chains into
//! `VkInstanceCreateInfo` / `VkDeviceCreateInfo` (Vulkan-Loader's
//! LoaderLayerInterface.md). ash does not declare them.

use ash::vk;
use std::ffi::{c_char, c_void};

/// `LAYER_NEGOTIATE_INTERFACE_STRUCT`.
pub(crate) const NEGOTIATE_INTERFACE_STRUCT: u32 = 1;
/// The loader-layer interface version this layer implements.
pub(crate) const INTERFACE_VERSION: u32 = 2;

pub(crate) type PfnGetPhysicalDeviceProcAddr =
    Option<unsafe extern "system" fn(vk::Instance, *const c_char) -> vk::PFN_vkVoidFunction>;

/// `VkNegotiateLayerInterface`.
#[repr(C)]
pub(crate) struct NegotiateLayerInterface {
    pub s_type: u32,
    pub p_next: *mut c_void,
    pub loader_layer_interface_version: u32,
    pub pfn_get_instance_proc_addr: Option<vk::PFN_vkGetInstanceProcAddr>,
    pub pfn_get_device_proc_addr: Option<vk::PFN_vkGetDeviceProcAddr>,
    pub pfn_get_physical_device_proc_addr: PfnGetPhysicalDeviceProcAddr,
}

/// `VkLayerFunction::VK_LAYER_LINK_INFO`.
pub(crate) const LAYER_LINK_INFO: u32 = 0;

/// `VkLayerInstanceLink`.
#[repr(C)]
pub(crate) struct LayerInstanceLink {
    pub p_next: *mut LayerInstanceLink,
    pub pfn_next_get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    pub pfn_next_get_physical_device_proc_addr: PfnGetPhysicalDeviceProcAddr,
}

/// `VkLayerInstanceCreateInfo` (its union's largest member is two pointers).
#[repr(C)]
pub(crate) struct LayerInstanceCreateInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub function: u32,
    pub p_layer_info: *mut LayerInstanceLink,
    pub _union_rest: *const c_void,
}

/// `VkLayerDeviceLink`.
#[repr(C)]
pub(crate) struct LayerDeviceLink {
    pub p_next: *mut LayerDeviceLink,
    pub pfn_next_get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    pub pfn_next_get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
}

/// `VkLayerDeviceCreateInfo` (its union is one pointer).
#[repr(C)]
pub(crate) struct LayerDeviceCreateInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub function: u32,
    pub p_layer_info: *mut LayerDeviceLink,
}

/// Finds the loader's link structure of type `s_type` in a create info's
/// chain and returns it with its `function` == `VK_LAYER_LINK_INFO`.
///
/// # Safety
/// `p_next` must be a valid structure chain.
pub(crate) unsafe fn find_link<T>(mut p_next: *const c_void, s_type: vk::StructureType) -> *mut T {
    while !p_next.is_null() {
        // SAFETY: valid chain (caller's contract); link structs start like
        // every other node and carry `function` right after the header.
        let base = unsafe { &*p_next.cast::<LayerDeviceCreateInfo>() };
        if base.s_type == s_type && base.function == LAYER_LINK_INFO {
            return p_next as *mut T;
        }
        p_next = base.p_next;
    }
    std::ptr::null_mut()
}
