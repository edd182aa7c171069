//! `cargo xtask demo`: release-build the layer and the demo, then run the
//! demo with `VK_LAYER_PATH=<repo>/manifests`, `--png <target>/demo/refine.png`
//! (the picture a graph renders), `--mesh-png <target>/demo/sierpinski.png`
//! (the picture mesh nodes draw) and the `dump_graph` setting: first on the
//! system's default drivers; if that fails (no driver, or none lists the
//! extension), again on lavapipe. When no mesh picture came out (no driver
//! with mesh shaders, such as Debian 12's lavapipe) and the modern lane's
//! lavapipe is unpacked (`.ci/fetch-modern-lavapipe`), the mesh picture is
//! drawn there. Then, when Graphviz's `dot` is installed, the refinement
//! graph's DOT becomes `<target>/demo/refine-graph.png`.

use std::path::Path;
use std::process::Command;

use crate::paths::{self, LAVAPIPE_ICD, MODERN_LANE_ICD};
use crate::run;

/// The demo finishes in about a second; more means something hangs.
const DEMO_TIME_LIMIT_S: u64 = 120;

/// Builds and runs the demo; `extra` is passed to it.
pub fn run(extra: &[String]) -> Result<(), String> {
    let root = paths::repo_root();
    run::status(run::cargo(["build", "--release", "-p", "shader-enqueue-layer", "-p", "demo"]).current_dir(&root))?;
    let demo = paths::target_dir()?.join("release").join("demo");
    let manifests = paths::release_manifest_dir()?;
    let out = paths::target_dir()?.join("demo");
    let picture = out.join("refine.png");
    let graphs = out.join("graphs");
    let _ = std::fs::remove_dir_all(&graphs);
    let mesh_picture = out.join("sierpinski.png");
    let _ = std::fs::remove_file(&mesh_picture);
    let mut extra = extra.to_vec();
    if !extra.iter().any(|a| a == "--png") {
        extra.extend(["--png".to_string(), picture.display().to_string()]);
    }
    if !extra.iter().any(|a| a == "--mesh-png") {
        extra.extend(["--mesh-png".to_string(), mesh_picture.display().to_string()]);
    }

    println!("xtask demo: running on the system's default Vulkan drivers");
    let mut cmd = Command::new(&demo);
    cmd.args(&extra).env("VK_LAYER_PATH", &manifests).env("VK_EMU_SE_DUMP_GRAPH", &graphs);
    if let Err(e) = run::status_timeout(&mut cmd, DEMO_TIME_LIMIT_S) {
        println!("xtask demo: {e}\nxtask demo: falling back to lavapipe");
        let mut cmd = Command::new(&demo);
        cmd.args(&extra)
            .env("VK_LAYER_PATH", &manifests)
            .env("VK_EMU_SE_DUMP_GRAPH", &graphs)
            .env("VK_ICD_FILENAMES", LAVAPIPE_ICD)
            .env("VK_DRIVER_FILES", LAVAPIPE_ICD);
        run::status_timeout(&mut cmd, DEMO_TIME_LIMIT_S)?;
    }
    let modern = root.join(MODERN_LANE_ICD);
    if !mesh_picture.exists() && modern.exists() {
        println!("xtask demo: drawing the mesh-node picture on the modern lane's lavapipe (Mesa 25, mesh shaders)");
        let mut cmd = Command::new(&demo);
        cmd.args(["--mesh-only", "--mesh-png"])
            .arg(&mesh_picture)
            .env("VK_LAYER_PATH", &manifests)
            .env("VK_ICD_FILENAMES", &modern)
            .env("VK_DRIVER_FILES", &modern);
        run::status_timeout(&mut cmd, DEMO_TIME_LIMIT_S)?;
    }
    draw_refine_graph(&graphs, &out.join("refine-graph.png"));
    Ok(())
}

/// Renders the refinement graph's DOT (the described graph with a `tile`
/// node) with Graphviz's `dot`, when it is installed.
fn draw_refine_graph(graphs: &Path, png: &Path) {
    let Ok(entries) = std::fs::read_dir(graphs) else { return };
    let dot_file = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "dot"))
        .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("label=\"tile[0]")));
    let Some(dot_file) = dot_file else { return };
    let rendered = Command::new("dot").arg("-Tpng").arg(&dot_file).arg("-o").arg(png).status();
    match rendered {
        Ok(status) if status.success() => {
            println!("xtask demo: the refinement graph drawn by Graphviz: {}", png.display())
        }
        _ => println!(
            "xtask demo: the refinement graph as Graphviz DOT: {} (install graphviz to draw it)",
            dot_file.display()
        ),
    }
}
