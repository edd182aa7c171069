//! Pass-through: with the layer loaded, a plain compute dispatch (descriptor
//! set + push constants) gives the right result, both on a device without
//! the extension and on one with it enabled.

use conformance_tests::{run_scale_add, scale_add_reference, InstanceOptions, TestDevice, TestInstance};

#[test]
fn compute_without_extension() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        let dev = TestDevice::new(&inst, pd, &[]).expect("plain device");
        let input: Vec<u32> = (0..4099).map(|i| i * 7).collect();
        let out = run_scale_add(&dev, &input, 3, 11).expect("dispatch");
        assert_eq!(out, scale_add_reference(&input, 3, 11));
    }
    inst.finish();
}

#[test]
fn compute_with_extension_enabled() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device with AMDX");
        let input: Vec<u32> = (0..777).collect();
        let out = run_scale_add(&dev, &input, 2, 9).expect("dispatch");
        assert_eq!(out, scale_add_reference(&input, 2, 9));
    }
    inst.finish();
}
