//! `VK_EXT_layer_settings`: `force_emulation = VK_TRUE`, `log = "debug"` and
//! `log_file` for `VK_LAYER_EMU_shader_enqueue`, chained at instance
//! creation, take effect: the layer writes its debug lines to that file,
//! naming what the test created; the extension is listed once at revision 2
//! and a device with it resolves the commands (`emulation_log` says why
//! `force_emulation`'s own effect cannot be observed on these drivers). Own
//! file: the layer's log is set up once per process.

mod emulation_log;

use ash::vk;
use conformance_tests::{string_setting, InstanceOptions, TestInstance};
use vk_amdx::COMMANDS;

#[test]
fn force_emulation_via_layer_settings() {
    let log_path = std::env::temp_dir().join(format!("emu-se-settings-log-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&log_path);
    let log_file = std::ffi::CString::new(log_path.display().to_string()).expect("path");
    let log_file = [log_file.as_ptr()];
    let force: [vk::Bool32; 1] = [vk::TRUE];
    let log = [c"debug".as_ptr()];
    let settings = [
        vk::LayerSettingEXT {
            p_layer_name: c"VK_LAYER_EMU_shader_enqueue".as_ptr(),
            p_setting_name: c"force_emulation".as_ptr(),
            ty: vk::LayerSettingTypeEXT::BOOL32,
            value_count: 1,
            p_values: force.as_ptr().cast(),
            ..Default::default()
        },
        string_setting(c"log", &log),
        string_setting(c"log_file", &log_file),
    ];
    let opts = InstanceOptions { layer_settings: &settings, ..InstanceOptions::with_layer() };
    let inst = TestInstance::new(&opts).expect("instance with layer settings");
    let want = emulation_log::run_hello_chain(&inst, &opts, |dev| {
        for name in COMMANDS {
            assert!(dev.proc_addr(name).is_some(), "{name:?} not resolved");
        }
    });
    inst.finish();
    emulation_log::assert_logged(&log_path, &want);
}
