//! A scratch buffer (`EXECUTION_GRAPH_SCRATCH_BIT_AMDX | SHADER_DEVICE_ADDRESS`)
//! is created without validation errors (the layer strips the bit the driver
//! does not know) and has a device address.

use ash::vk;
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

#[test]
fn scratch_buffer_has_device_address() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device with AMDX");
        let usage = vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let scratch = dev.create_host_buffer(1 << 16, usage).expect("scratch buffer");
        let address = scratch.address.expect("address queried");
        assert_ne!(address, 0, "device address");
        // The scratch memory is usable like any other mapped buffer.
        scratch.write_u32(&[1, 2, 3]).expect("write");
        assert_eq!(scratch.read_u32(3).expect("read"), [1, 2, 3]);
    }
    inst.finish();
}
