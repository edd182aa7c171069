//! Advertisement: `VK_AMDX_shader_enqueue` is listed exactly once at
//! revision 2 (full query, count query, `VK_INCOMPLETE`, layer-named query),
//! and Features2/Properties2 fill the AMDX structs with the contract values.

use std::ptr;

use ash::vk;
use conformance_tests::env::LAYER_NAME;
use conformance_tests::{InstanceOptions, TestInstance};
use vk_amdx::{PhysicalDeviceShaderEnqueueFeatures, PhysicalDeviceShaderEnqueueProperties};

const AMDX: &str = "VK_AMDX_shader_enqueue";

#[test]
fn extension_listed_once_at_revision_2() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let exts = inst.device_extensions(pd).expect("extensions");
    let amdx: Vec<_> = exts.iter().filter(|(n, _)| n == AMDX).collect();
    assert_eq!(amdx.len(), 1, "listed {} times: {amdx:?}", amdx.len());
    assert_eq!(amdx[0].1, 2, "spec version");
    // The driver's own extensions are still there.
    assert!(exts.iter().any(|(n, _)| n == "VK_KHR_buffer_device_address"));
    inst.finish();
}

#[test]
fn count_query_and_incomplete() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let enumerate = inst.instance.fp_v1_0().enumerate_device_extension_properties;
    let mut count = 0u32;
    // SAFETY: count query with a null array.
    let r = unsafe { enumerate(pd, ptr::null(), &mut count, ptr::null_mut()) };
    assert_eq!(r, vk::Result::SUCCESS);
    let full = inst.device_extensions(pd).expect("extensions");
    assert_eq!(count as usize, full.len(), "count query matches full query");

    let mut short = vec![vk::ExtensionProperties::default(); count as usize - 1];
    let mut short_count = count - 1;
    // SAFETY: array of `short_count` elements.
    let r = unsafe { enumerate(pd, ptr::null(), &mut short_count, short.as_mut_ptr()) };
    assert_eq!(r, vk::Result::INCOMPLETE);
    assert_eq!(short_count, count - 1, "written count");

    let mut exact = vec![vk::ExtensionProperties::default(); count as usize];
    let mut exact_count = count;
    // SAFETY: array of `exact_count` elements.
    let r = unsafe { enumerate(pd, ptr::null(), &mut exact_count, exact.as_mut_ptr()) };
    assert_eq!(r, vk::Result::SUCCESS);
    let amdx = exact.iter().filter(|p| p.extension_name_as_c_str().ok() == Some(vk_amdx::EXTENSION_NAME)).count();
    assert_eq!(amdx, 1);

    let mut zero_count = 0u32;
    let mut one = [vk::ExtensionProperties::default()];
    // SAFETY: zero-length array.
    let r = unsafe { enumerate(pd, ptr::null(), &mut zero_count, one.as_mut_ptr()) };
    assert_eq!(r, vk::Result::INCOMPLETE);
    assert_eq!(zero_count, 0);
    inst.finish();
}

#[test]
fn layer_named_query_lists_only_amdx() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let name = std::ffi::CString::new(LAYER_NAME).expect("name");
    let enumerate = inst.instance.fp_v1_0().enumerate_device_extension_properties;
    let mut count = 0u32;
    // SAFETY: count query.
    let r = unsafe { enumerate(pd, name.as_ptr(), &mut count, ptr::null_mut()) };
    assert_eq!(r, vk::Result::SUCCESS);
    let mut props = vec![vk::ExtensionProperties::default(); count as usize];
    // SAFETY: array of `count` elements.
    let r = unsafe { enumerate(pd, name.as_ptr(), &mut count, props.as_mut_ptr()) };
    assert_eq!(r, vk::Result::SUCCESS);
    let listed: Vec<_> =
        props.iter().map(|p| (p.extension_name_as_c_str().map(|c| c.to_owned()), p.spec_version)).collect();
    assert_eq!(listed, vec![(Ok(vk_amdx::EXTENSION_NAME.to_owned()), 2)]);
    inst.finish();
}

#[test]
fn features2_fill_amdx_features() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let mut amdx = PhysicalDeviceShaderEnqueueFeatures {
        shader_enqueue: 0xdead,
        shader_mesh_enqueue: 0xdead,
        ..Default::default()
    };
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut amdx).push_next(&mut v12);
    // SAFETY: valid physical device and output chain.
    unsafe { inst.instance.get_physical_device_features2(pd, &mut f2) };
    let int64 = f2.features.shader_int64;
    assert_eq!(amdx.shader_enqueue, vk::TRUE);
    // Mesh nodes exactly where the driver has VK_EXT_mesh_shader's meshShader.
    let mut mesh = vk::PhysicalDeviceMeshShaderFeaturesEXT::default();
    let listed = inst.device_extensions(pd).expect("extensions").iter().any(|(n, _)| n == "VK_EXT_mesh_shader");
    if listed {
        let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut mesh);
        // SAFETY: valid physical device and output chain.
        unsafe { inst.instance.get_physical_device_features2(pd, &mut f2) };
    }
    assert_eq!(amdx.shader_mesh_enqueue, mesh.mesh_shader);
    if conformance_tests::env::modern_lane_required() {
        assert_eq!(amdx.shader_mesh_enqueue, vk::TRUE, "the modern lane's driver has mesh shaders");
    }
    // Structs around ours are still filled by the driver.
    assert_eq!(v12.buffer_device_address, vk::TRUE);
    assert_eq!(v12.timeline_semaphore, vk::TRUE);
    assert_eq!(int64, vk::TRUE);
    inst.finish();
}

#[test]
fn properties2_fill_amdx_properties() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let mut p = PhysicalDeviceShaderEnqueueProperties::default();
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut p).push_next(&mut driver);
    // SAFETY: valid physical device and output chain.
    unsafe { inst.instance.get_physical_device_properties2(pd, &mut p2) };
    assert_eq!(p.max_execution_graph_depth, 32);
    assert_eq!(p.max_execution_graph_shader_output_nodes, 256);
    assert_eq!(p.max_execution_graph_shader_payload_size, 32768);
    assert_eq!(p.max_execution_graph_shader_payload_count, 256);
    assert_eq!(p.execution_graph_dispatch_address_alignment, 4);
    assert_eq!(p.max_execution_graph_workgroup_count, [65535; 3]);
    assert_eq!(p.max_execution_graph_workgroups, 16_777_215);
    assert_ne!(driver.driver_id, vk::DriverId::from_raw(0), "driver struct still filled");
    inst.finish();
}
