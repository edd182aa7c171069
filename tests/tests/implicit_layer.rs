//! The implicit manifest `cargo xtask install` writes (enabled by default):
//! an application that does not name the layer still sees
//! `VK_AMDX_shader_enqueue` once at revision 2, and can create a device with
//! it. Own file: the manifest is installed into this process's private
//! `XDG_DATA_HOME` before the first instance.

use conformance_tests::{env, InstanceOptions, TestDevice, TestInstance};

#[test]
fn implicit_layer_is_enabled_by_default() {
    let test_env = env::init().expect("environment");
    assert!(test_env.layer_lib_present(), "layer library {} missing", test_env.layer_lib.display());
    test_env.install_implicit().expect("install implicit manifest");
    let inst = TestInstance::new(&InstanceOptions::without_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    let exts = inst.device_extensions(pd).expect("extensions");
    let listed: Vec<_> = exts.iter().filter(|(n, _)| n == "VK_AMDX_shader_enqueue").collect();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].1, 2);
    {
        let _dev = TestDevice::with_amdx(&inst, pd).expect("device with AMDX through the implicit layer");
    }
    inst.finish();
}
