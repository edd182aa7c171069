//! The committed test shader binaries match their GLSL sources (when
//! glslangValidator is installed) and pass spirv-val (when installed).

use std::path::Path;
use std::process::Command;

use conformance_tests::env::workspace_root;

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok()
}

fn check(dir: &Path, name: &str) {
    let src = dir.join(name);
    let spv = dir.join(format!("{name}.spv"));
    let committed = std::fs::read(&spv).expect("committed .spv");
    if have("glslangValidator") {
        let out = std::env::temp_dir().join(format!("{name}.{}.spv", std::process::id()));
        let status = Command::new("glslangValidator")
            .args(["-V", "--target-env", "vulkan1.2", "-o"])
            .arg(&out)
            .arg(&src)
            .output()
            .expect("run glslangValidator");
        assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stdout));
        let fresh = std::fs::read(&out).expect("compiled");
        let _ = std::fs::remove_file(&out);
        assert!(fresh == committed, "{} is stale: recompile it", spv.display());
    } else {
        eprintln!("glslangValidator not installed: not recompiling {name}");
    }
    if have("spirv-val") {
        let status =
            Command::new("spirv-val").args(["--target-env", "vulkan1.2"]).arg(&spv).status().expect("run spirv-val");
        assert!(status.success(), "spirv-val rejects {}", spv.display());
    }
}

#[test]
fn test_shaders_are_up_to_date() {
    check(&workspace_root().join("tests/shaders"), "scale_add.comp");
    check(&workspace_root().join("demo/shaders"), "scale_add.comp");
}
