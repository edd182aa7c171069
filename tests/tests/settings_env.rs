//! Environment settings: `VK_EMU_SE_LOG=trace` with `VK_EMU_SE_LOG_FILE`
//! writes the layer's debug lines to that file, naming what the test
//! created (the physical device, the device, the node shader module, the
//! graph), and `VK_EMU_SE_FORCE_EMULATION=1` leaves the extension emulated
//! and listed once at revision 2 (`emulation_log` says why the setting's
//! own effect cannot be observed on these drivers). Own file: the loader
//! and layer read the environment once per process.

mod emulation_log;

use conformance_tests::{env, InstanceOptions, TestInstance};

#[test]
fn log_file_and_force_emulation_from_env() {
    let log_path = env::init_with_log_file("log", &[("VK_EMU_SE_LOG", "trace"), ("VK_EMU_SE_FORCE_EMULATION", "1")])
        .expect("environment");
    let opts = InstanceOptions::with_layer();
    let inst = TestInstance::new(&opts).expect("instance");
    let want = emulation_log::run_hello_chain(&inst, &opts, |_| {});
    inst.finish();
    emulation_log::assert_logged(&log_path, &want);
}
