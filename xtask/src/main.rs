//! `cargo xtask <command>`: the project's task runner (std + serde_json).
//!
//! - `test`: debug-build the layer, `cargo test --workspace` against it on
//!   the old lane (Debian's lavapipe) and the conformance tests on the
//!   modern lane (Mesa 25's), list every lane's run-time skips, then
//!   release-build it and check that `vulkaninfo` through the in-tree
//!   manifest lists `VK_AMDX_shader_enqueue` at revision 2; as root on
//!   Debian, install, check and remove the Debian package (`package`).
//! - `gpu-tests <dir>`: a folder (test binaries, layer, `run.sh`) that runs
//!   the tests needing hardware lavapipe lacks on a GPU machine without Rust.
//! - `demo`: release-build layer and demo, run the demo through the in-tree
//!   manifest (system drivers first, lavapipe as fallback).
//! - `install` / `uninstall`: write / remove the implicit-layer manifest
//!   under `$XDG_DATA_HOME/vulkan/implicit_layer.d/`.
//! - `package [--out DIR | --check]`: a Debian package and a tarball
//!   installing the layer system-wide as an implicit layer (`--check`: as
//!   root on Debian, install, check and remove the package).
//! - `struct-sizes`: regenerate the layer's `pNext` size table from ash.
//! - `capture`: run a program under RenderDoc with the layer above it.

mod capture;
mod demo;
mod examples;
mod gpu_tests;
mod install;
mod package;
mod paths;
mod run;
mod skips;
mod struct_sizes;
mod test;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <test|gpu-tests|demo|install|uninstall|package|struct-sizes|capture>

  test       build the layer (debug), run `cargo test --workspace` against it (old lane)
             and the conformance tests on Mesa 25 (modern lane), list run-time skips,
             build it (release) and check vulkaninfo lists VK_AMDX_shader_enqueue rev 2;
             as root on Debian, install, check and remove the .deb of `package`
  gpu-tests <dir> [test ...]
             build the layer and the hardware-only test files (release) into <dir>
             with a run.sh for a GPU machine without Rust (see xtask/src/gpu_tests.rs)
  demo       build layer + demo (release) and run the demo through manifests/
  install    build the layer (release) and write the implicit manifest to
             $XDG_DATA_HOME/vulkan/implicit_layer.d/ (default ~/.local/share/...)
  uninstall  remove that implicit manifest
  package [--out DIR | --check]
             build the layer (release) and a .deb + tarball that install it system-wide
             (/usr/lib/<multiarch>/, /usr/share/vulkan/implicit_layer.d/); default DIR target/package;
             --check: as root on Debian, install the .deb, check it works, remove it (test's last step)
  struct-sizes [--check]
             regenerate (or check) layer/src/ffi/struct_sizes.rs from ash's definitions
  capture [-o FILE.rdc] -- <program> [args]
             run a program under renderdoccmd capture with the layer above RenderDoc";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test::run(&args[1..]),
        Some("gpu-tests") => gpu_tests::run(&args[1..]),
        Some("demo") => demo::run(&args[1..]),
        Some("install") => install::install(),
        Some("uninstall") => install::uninstall(),
        Some("package") => package::run(&args[1..]),
        Some("struct-sizes") => struct_sizes::run(&args[1..]),
        Some("capture") => capture::run(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(format!("unknown or missing command\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}
