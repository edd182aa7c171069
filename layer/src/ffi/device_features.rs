//! The features the layer turns on when it creates a device with emulation:
//! merged into the application's own feature structures (never a duplicate
//! `sType`, never a `VkPhysicalDeviceVulkan1xFeatures` next to the
//! equivalent individual structure, which the spec forbids).
//!
//! Required (the extension is only advertised where they exist):
//! `bufferDeviceAddress`, `shaderInt64`, `scalarBlockLayout`,
//! `shaderBufferInt64Atomics`. Optional, when the device has them
//! (see [`OptionalFeatures`]): `storageBuffer16BitAccess`,
//! `storageBuffer8BitAccess`, `maintenance4`, `vulkanMemoryModel` with
//! `vulkanMemoryModelDeviceScope`.

use super::chain::OwnedChain;
use crate::state::instance::OptionalFeatures;
use ash::vk;

/// Enables the layer's features in `chain` (a copy of the application's
/// `VkDeviceCreateInfo::pNext`) and `legacy` (`pEnabledFeatures`).
pub(super) fn enable_layer_features(
    chain: &mut OwnedChain,
    legacy: &mut Option<vk::PhysicalDeviceFeatures>,
    optional: OptionalFeatures,
) {
    match chain.get_mut::<vk::PhysicalDeviceFeatures2>() {
        Some(f2) => f2.features.shader_int64 = vk::TRUE,
        None => legacy.get_or_insert_with(Default::default).shader_int64 = vk::TRUE,
    }

    if let Some(v12) = chain.get_mut::<vk::PhysicalDeviceVulkan12Features>() {
        v12.buffer_device_address = vk::TRUE;
        v12.scalar_block_layout = vk::TRUE;
        v12.shader_buffer_int64_atomics = vk::TRUE;
        if optional.storage_buffer_8bit_access {
            v12.storage_buffer8_bit_access = vk::TRUE;
        }
        if optional.vulkan_memory_model {
            v12.vulkan_memory_model = vk::TRUE;
            v12.vulkan_memory_model_device_scope = vk::TRUE;
        }
    } else {
        match chain.get_mut::<vk::PhysicalDeviceBufferDeviceAddressFeatures>() {
            Some(bda) => bda.buffer_device_address = vk::TRUE,
            None => chain.push(vk::PhysicalDeviceBufferDeviceAddressFeatures::default().buffer_device_address(true)),
        }
        match chain.get_mut::<vk::PhysicalDeviceScalarBlockLayoutFeatures>() {
            Some(sbl) => sbl.scalar_block_layout = vk::TRUE,
            None => chain.push(vk::PhysicalDeviceScalarBlockLayoutFeatures::default().scalar_block_layout(true)),
        }
        match chain.get_mut::<vk::PhysicalDeviceShaderAtomicInt64Features>() {
            Some(a) => a.shader_buffer_int64_atomics = vk::TRUE,
            None => {
                chain.push(vk::PhysicalDeviceShaderAtomicInt64Features::default().shader_buffer_int64_atomics(true))
            }
        }
        if optional.storage_buffer_8bit_access {
            match chain.get_mut::<vk::PhysicalDevice8BitStorageFeatures>() {
                Some(s8) => s8.storage_buffer8_bit_access = vk::TRUE,
                None => chain.push(vk::PhysicalDevice8BitStorageFeatures::default().storage_buffer8_bit_access(true)),
            }
        }
        if optional.vulkan_memory_model {
            match chain.get_mut::<vk::PhysicalDeviceVulkanMemoryModelFeatures>() {
                Some(mm) => {
                    mm.vulkan_memory_model = vk::TRUE;
                    mm.vulkan_memory_model_device_scope = vk::TRUE;
                }
                None => chain.push(
                    vk::PhysicalDeviceVulkanMemoryModelFeatures::default()
                        .vulkan_memory_model(true)
                        .vulkan_memory_model_device_scope(true),
                ),
            }
        }
    }

    if optional.storage_buffer_16bit_access {
        if let Some(v11) = chain.get_mut::<vk::PhysicalDeviceVulkan11Features>() {
            v11.storage_buffer16_bit_access = vk::TRUE;
        } else {
            match chain.get_mut::<vk::PhysicalDevice16BitStorageFeatures>() {
                Some(s16) => s16.storage_buffer16_bit_access = vk::TRUE,
                None => chain.push(vk::PhysicalDevice16BitStorageFeatures::default().storage_buffer16_bit_access(true)),
            }
        }
    }

    if optional.maintenance4 {
        if let Some(v13) = chain.get_mut::<vk::PhysicalDeviceVulkan13Features>() {
            v13.maintenance4 = vk::TRUE;
        } else {
            match chain.get_mut::<vk::PhysicalDeviceMaintenance4Features>() {
                Some(m4) => m4.maintenance4 = vk::TRUE,
                None => chain.push(vk::PhysicalDeviceMaintenance4Features::default().maintenance4(true)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::c_void;

    const ALL: OptionalFeatures = OptionalFeatures {
        storage_buffer_16bit_access: true,
        storage_buffer_8bit_access: true,
        maintenance4: true,
        vulkan_memory_model: true,
    };

    /// sTypes of a linked chain, in order.
    fn s_types(head: *const c_void) -> Vec<vk::StructureType> {
        let mut out = Vec::new();
        let mut p = head;
        while !p.is_null() {
            // SAFETY: test chains are valid.
            let base = unsafe { &*p.cast::<vk::BaseInStructure>() };
            out.push(base.s_type);
            p = base.p_next.cast();
        }
        out
    }

    #[test]
    fn app_vulkan12_features_are_extended_not_duplicated() {
        let v12 = vk::PhysicalDeviceVulkan12Features::default().shader_float16(true).descriptor_indexing(true);
        let f2 = vk::PhysicalDeviceFeatures2 {
            p_next: (&v12 as *const vk::PhysicalDeviceVulkan12Features).cast_mut().cast(),
            features: vk::PhysicalDeviceFeatures::default().robust_buffer_access(true),
            ..Default::default()
        };
        // SAFETY: valid chain on the stack.
        let mut chain = unsafe { OwnedChain::copy_from((&f2 as *const vk::PhysicalDeviceFeatures2).cast()) };
        let mut legacy = None;
        enable_layer_features(&mut chain, &mut legacy, OptionalFeatures::default());
        assert!(legacy.is_none(), "pEnabledFeatures must stay null next to VkPhysicalDeviceFeatures2");
        let got_f2 = chain.get::<vk::PhysicalDeviceFeatures2>().unwrap();
        assert_eq!((got_f2.features.shader_int64, got_f2.features.robust_buffer_access), (vk::TRUE, vk::TRUE));
        let got12 = chain.get::<vk::PhysicalDeviceVulkan12Features>().unwrap();
        assert_eq!((got12.buffer_device_address, got12.scalar_block_layout), (vk::TRUE, vk::TRUE));
        assert_eq!((got12.shader_float16, got12.descriptor_indexing), (vk::TRUE, vk::TRUE), "app fields survive");
        let order = s_types(chain.link());
        assert_eq!(
            order,
            vec![vk::StructureType::PHYSICAL_DEVICE_FEATURES_2, vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES]
        );
    }

    #[test]
    fn empty_chain_gets_individual_structures_and_legacy_features() {
        // SAFETY: an empty chain.
        let mut chain = unsafe { OwnedChain::copy_from(std::ptr::null()) };
        let mut legacy = Some(vk::PhysicalDeviceFeatures::default().shader_float64(true));
        enable_layer_features(&mut chain, &mut legacy, ALL);
        let legacy = legacy.unwrap();
        assert_eq!((legacy.shader_int64, legacy.shader_float64), (vk::TRUE, vk::TRUE));
        let order = s_types(chain.link());
        assert_eq!(
            order,
            vec![
                vk::StructureType::PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES,
                vk::StructureType::PHYSICAL_DEVICE_SCALAR_BLOCK_LAYOUT_FEATURES,
                vk::StructureType::PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES,
                vk::StructureType::PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES,
                vk::StructureType::PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES,
                vk::StructureType::PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                vk::StructureType::PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES,
            ]
        );
    }

    #[test]
    fn individual_app_structures_are_reused() {
        let bda = vk::PhysicalDeviceBufferDeviceAddressFeatures::default().buffer_device_address_capture_replay(true);
        let v11 = vk::PhysicalDeviceVulkan11Features {
            p_next: (&bda as *const vk::PhysicalDeviceBufferDeviceAddressFeatures).cast_mut().cast(),
            multiview: vk::TRUE,
            ..Default::default()
        };
        // SAFETY: valid chain on the stack.
        let mut chain = unsafe { OwnedChain::copy_from((&v11 as *const vk::PhysicalDeviceVulkan11Features).cast()) };
        let mut legacy = None;
        enable_layer_features(
            &mut chain,
            &mut legacy,
            OptionalFeatures { storage_buffer_16bit_access: true, ..Default::default() },
        );
        assert_eq!(legacy.unwrap().shader_int64, vk::TRUE, "no Features2: legacy struct is created");
        let got11 = chain.get::<vk::PhysicalDeviceVulkan11Features>().unwrap();
        assert_eq!((got11.storage_buffer16_bit_access, got11.multiview), (vk::TRUE, vk::TRUE));
        let got_bda = chain.get::<vk::PhysicalDeviceBufferDeviceAddressFeatures>().unwrap();
        assert_eq!((got_bda.buffer_device_address, got_bda.buffer_device_address_capture_replay), (vk::TRUE, vk::TRUE));
        assert_eq!(s_types(chain.link()).len(), 4, "only the scalar-layout and int64-atomic structures appended");
    }
}
