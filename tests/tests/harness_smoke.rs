//! Proves the harness on plain lavapipe, without the layer under test:
//! the loader environment, the validation layer and the messenger work (a
//! deliberate validation error is caught), and a compute dispatch is correct.

use ash::vk;
use conformance_tests::{run_scale_add, scale_add_reference, InstanceOptions, TestDevice, TestInstance};

#[test]
fn compute_dispatch_is_correct_without_layer() {
    let inst = TestInstance::new(&InstanceOptions::without_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        let dev = TestDevice::new(&inst, pd, &[]).expect("device");
        let input: Vec<u32> = (0..1000).collect();
        let out = run_scale_add(&dev, &input, 3, 7).expect("dispatch");
        assert_eq!(out, scale_add_reference(&input, 3, 7));
    }
    inst.finish();
}

#[test]
fn messenger_records_validation_errors() {
    let inst = TestInstance::new(&InstanceOptions::without_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        let dev = TestDevice::new(&inst, pd, &[]).expect("device");
        // Size 0 violates VUID-VkBufferCreateInfo-size-00912.
        let info = vk::BufferCreateInfo::default().size(0).usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        // SAFETY: deliberately invalid usage; lavapipe tolerates it.
        if let Ok(b) = unsafe { dev.device.create_buffer(&info, None) } {
            // SAFETY: the buffer is unused.
            unsafe { dev.device.destroy_buffer(b, None) };
        }
    }
    let errors = inst.log().errors();
    assert!(
        errors.iter().any(|e| e.contains("VUID-VkBufferCreateInfo-size-00912")),
        "expected the size-0 buffer error, got {errors:?}"
    );
    inst.log().clear();
    inst.finish();
}

#[test]
fn lavapipe_is_picked() {
    let inst = TestInstance::new(&InstanceOptions::without_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
    // SAFETY: valid physical device.
    unsafe { inst.instance.get_physical_device_properties2(pd, &mut props) };
    if std::env::var_os(conformance_tests::env::ICD_ENV).is_none() {
        assert_eq!(driver.driver_id, vk::DriverId::MESA_LLVMPIPE);
    }
    inst.finish();
}
