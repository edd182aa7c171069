//! `VK_EXT_layer_settings`: `force_emulation = VK_TRUE` (and `log = "debug"`)
//! for `VK_LAYER_EMU_shader_enqueue`, chained at instance creation, are
//! accepted; the extension is still listed once at revision 2 and a device
//! with it still resolves the commands. Own file: settings are per process
//! in some layers.

use ash::vk;
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};
use vk_amdx::COMMANDS;

#[test]
fn force_emulation_via_layer_settings() {
    let force: [vk::Bool32; 1] = [vk::TRUE];
    let log: [*const std::ffi::c_char; 1] = [c"debug".as_ptr()];
    let settings = [
        vk::LayerSettingEXT {
            p_layer_name: c"VK_LAYER_EMU_shader_enqueue".as_ptr(),
            p_setting_name: c"force_emulation".as_ptr(),
            ty: vk::LayerSettingTypeEXT::BOOL32,
            value_count: 1,
            p_values: force.as_ptr().cast(),
            ..Default::default()
        },
        vk::LayerSettingEXT {
            p_layer_name: c"VK_LAYER_EMU_shader_enqueue".as_ptr(),
            p_setting_name: c"log".as_ptr(),
            ty: vk::LayerSettingTypeEXT::STRING,
            value_count: 1,
            p_values: log.as_ptr().cast(),
            ..Default::default()
        },
    ];
    let opts = InstanceOptions { layer_settings: &settings, ..InstanceOptions::with_layer() };
    let inst = TestInstance::new(&opts).expect("instance with layer settings");
    let pd = inst.pick_physical_device().expect("physical device");
    let exts = inst.device_extensions(pd).expect("extensions");
    let amdx: Vec<_> = exts.iter().filter(|(n, _)| n == "VK_AMDX_shader_enqueue").collect();
    assert_eq!(amdx.len(), 1, "{amdx:?}");
    assert_eq!(amdx[0].1, 2);
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device with AMDX");
        for name in COMMANDS {
            assert!(dev.proc_addr(name).is_some(), "{name:?} not resolved");
        }
    }
    inst.finish();
}
