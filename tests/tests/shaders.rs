//! The committed shader binaries of the tests, demo and bench match their
//! GLSL (and the demo's mesh node its assembly) when glslangValidator (and
//! SPIRV-Tools 2025.x) are installed, and pass spirv-val when installed.

use std::path::Path;
use std::process::Command;

use conformance_tests::env::workspace_root;

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok()
}

/// `name` in `dir` against `name.spv`, compiled for Vulkan 1.2 (the
/// compute baselines) or 1.3 (mesh shaders, buffer references).
fn check(dir: &Path, name: &str) {
    check_for(dir, name, "vulkan1.2");
}

fn check_for(dir: &Path, name: &str, env: &str) {
    let src = dir.join(name);
    let spv = dir.join(format!("{name}.spv"));
    let committed = std::fs::read(&spv).expect("committed .spv");
    if have("glslangValidator") {
        let out = std::env::temp_dir().join(format!("{name}.{}.spv", std::process::id()));
        let status = Command::new("glslangValidator")
            .args(["-V", "--target-env", env, "-o"])
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
    validate(&spv, env);
}

fn validate(spv: &Path, env: &str) {
    if have("spirv-val") {
        let status = Command::new("spirv-val")
            .args(["--target-env", env, "--scalar-block-layout"])
            .arg(spv)
            .status()
            .expect("run spirv-val");
        assert!(status.success(), "spirv-val rejects {}", spv.display());
    }
}

#[test]
fn test_shaders_are_up_to_date() {
    check(&workspace_root().join("tests/shaders"), "scale_add.comp");
    check(&workspace_root().join("tests/shaders"), "sample_embedded.comp");
    check(&workspace_root().join("demo/shaders"), "scale_add.comp");
    // cmd_cost's graphics pipeline (its bind is one of the measured calls).
    check(&workspace_root().join("demo/shaders"), "cmd_cost.vert");
    check(&workspace_root().join("demo/shaders"), "cmd_cost.frag");
}

#[test]
fn mesh_node_shaders_are_up_to_date() {
    let root = workspace_root();
    check_for(&root.join("tests/shaders/mesh"), "marker.mesh", "vulkan1.3");
    check_for(&root.join("tests/shaders/mesh"), "marker_set.mesh", "vulkan1.3");
    check_for(&root.join("demo/shaders/mesh"), "color.frag", "vulkan1.3");
    check_for(&root.join("bench/shaders"), "sierpinski_split.comp", "vulkan1.3");
    check_for(&root.join("bench/shaders"), "sierpinski_draw.mesh", "vulkan1.3");
    // The demo's mesh node: assembly needs SPIRV-Tools 2025.x (the 2024 AMDX opcodes).
    let dir = root.join("demo/shaders/mesh");
    let spv = dir.join("sierpinski_tri.spv");
    let fresh = std::env::temp_dir().join(format!("sierpinski_tri.{}.spv", std::process::id()));
    let assembled = Command::new("spirv-as")
        .args(["--target-env", "vulkan1.3", "-o"])
        .arg(&fresh)
        .arg(dir.join("sierpinski_tri.spvasm"))
        .output();
    match assembled {
        Ok(out) if out.status.success() => {
            let same = std::fs::read(&fresh).expect("assembled") == std::fs::read(&spv).expect("committed .spv");
            let _ = std::fs::remove_file(&fresh);
            assert!(same, "{} is stale: run demo/shaders/mesh/build.sh", spv.display());
        }
        _ => eprintln!("no spirv-as that knows SPV_AMDX_shader_enqueue: not re-assembling sierpinski_tri"),
    }
    validate(&spv, "vulkan1.3");
}
