//! `cargo xtask package [--out DIR]`: the layer as a system package.
//!
//! Release-builds the layer and writes into DIR (default `<target>/package/`):
//! - `vulkan-layer-emu-shader-enqueue_<version>_<arch>.deb`: the stripped
//!   library as `/usr/lib/<multiarch>/libVkLayer_EMU_shader_enqueue.so`, the
//!   implicit manifest `/usr/share/vulkan/implicit_layer.d/VkLayer_EMU_shader_enqueue.json`
//!   (absolute `library_path`, `disable_environment` `VK_EMU_SE_DISABLE=1`,
//!   no `enable_environment`: on by default, like `cargo xtask install`),
//!   Debian's copyright and changelog files; `Depends` is what
//!   `dpkg-shlibdeps` finds plus `libvulkan1`;
//! - `vulkan-layer-emu-shader-enqueue-<version>-<multiarch>.tar.gz`: the
//!   same tree under one directory with an `INSTALL` note, for other
//!   distributions.
//!
//! Needs Debian's `dpkg-dev` (`dpkg-architecture`, `dpkg-shlibdeps`), plus
//! `strip`, `md5sum`, `tar` and `gzip`. The version is the workspace's;
//! the maintainer is `$DEBFULLNAME <$DEBEMAIL>` when both are set.
//! [`check`] installs, exercises and removes the package: the last step
//! of `cargo xtask test`, alone with `cargo xtask package --check`.

pub mod check;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::paths::{self, LAYER_LIB_FILE, LAYER_NAME, MANIFEST_FILE};
use crate::run;

/// The Debian package's name.
pub const PACKAGE: &str = "vulkan-layer-emu-shader-enqueue";
/// Where distributions put implicit layer manifests (a loader default).
pub const SYSTEM_LAYER_DIR: &str = "/usr/share/vulkan/implicit_layer.d";
/// xtask shares the workspace's version (`version.workspace = true`).
const VERSION: &str = env!("CARGO_PKG_VERSION");
const DEFAULT_MAINTAINER: &str = "shader-enqueue-layer maintainers <maintainers@shader-enqueue-layer.invalid>";

/// What [`build`] wrote.
pub struct Packages {
    pub deb: PathBuf,
    pub tarball: PathBuf,
}

/// `cargo xtask package [--out DIR | --check]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let out = match args {
        [] => paths::target_dir()?.join("package"),
        [flag, dir] if flag == "--out" => PathBuf::from(dir),
        [flag] if flag == "--check" => return check::run().map(drop),
        _ => return Err("usage: cargo xtask package [--out DIR | --check]".into()),
    };
    let packages = build(&out)?;
    run::status(Command::new("dpkg-deb").arg("--contents").arg(&packages.deb))?;
    println!("xtask package: {}", packages.deb.display());
    println!("xtask package: {}", packages.tarball.display());
    println!("xtask package: install with `sudo apt install {}`", packages.deb.display());
    Ok(())
}

/// Builds the release layer, then the .deb and the tarball into `out`.
pub fn build(out: &Path) -> Result<Packages, String> {
    run::status(run::cargo(["build", "--release", "-p", "shader-enqueue-layer"]).current_dir(paths::repo_root()))?;
    let lib = paths::layer_lib("release")?;
    if !lib.is_file() {
        return Err(format!("{} was not produced", lib.display()));
    }
    let arch = first_line(Command::new("dpkg").arg("--print-architecture"))?;
    let multiarch = first_line(Command::new("dpkg-architecture").arg("-qDEB_HOST_MULTIARCH"))?;
    let maintainer = match (std::env::var("DEBFULLNAME"), std::env::var("DEBEMAIL")) {
        (Ok(name), Ok(mail)) if !name.is_empty() && !mail.is_empty() => format!("{name} <{mail}>"),
        _ => DEFAULT_MAINTAINER.to_string(),
    };

    let stage = paths::target_dir()?.join("package-stage");
    remove_dir(&stage)?;
    let deb_root = stage.join(format!("{PACKAGE}_{VERSION}_{arch}"));
    let tar_name = format!("{PACKAGE}-{VERSION}-{multiarch}");
    let tar_root = stage.join(&tar_name);
    for root in [&deb_root, &tar_root] {
        write_tree(root, &lib, &multiarch, &maintainer)?;
    }
    // A layer is a plugin the loader opens by its manifest's absolute path;
    // nothing links against it, so it has no SONAME (as Debian's own
    // validation layer).
    write(
        &deb_root.join("usr/share/lintian/overrides").join(PACKAGE),
        format!("sharedobject-in-library-directory-missing-soname [{}]\n", lib_path(&multiarch)).as_bytes(),
    )?;
    let depends = format!("{}, libvulkan1", shlib_depends(&stage, &deb_root.join(lib_path(&multiarch)))?);

    let files = ["usr/lib", "usr/share"].map(|d| deb_root.join(d));
    let control = format!(
        "Package: {PACKAGE}\nVersion: {VERSION}\nArchitecture: {arch}\nMaintainer: {maintainer}\n\
         Installed-Size: {}\nDepends: {depends}\nSection: libs\nPriority: optional\n\
         Description: Vulkan layer emulating VK_AMDX_shader_enqueue on plain compute\n \
         {LAYER_NAME} offers the provisional extension\n \
         VK_AMDX_shader_enqueue (execution graphs, revision 2) on Vulkan 1.3\n \
         drivers without it and runs the graphs as ordinary compute dispatches.\n .\n \
         It is installed as an implicit layer: every Vulkan application loads it.\n \
         Set VK_EMU_SE_DISABLE=1 to keep it out of a process.\n",
        installed_size_kib(&files)?
    );
    write(&deb_root.join("DEBIAN/control"), control.as_bytes())?;
    let md5sums = run::output(Command::new("md5sum").args(relative_files(&deb_root)?).current_dir(&deb_root))?;
    if !md5sums.status.success() {
        return Err(format!("md5sum failed: {}", String::from_utf8_lossy(&md5sums.stderr)));
    }
    write(&deb_root.join("DEBIAN/md5sums"), &md5sums.stdout)?;
    write(&tar_root.join("INSTALL"), install_note(&multiarch, &depends).as_bytes())?;
    // The umask must not decide what the package installs.
    normalise_permissions(&stage)?;

    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let deb = out.join(format!("{PACKAGE}_{VERSION}_{arch}.deb"));
    run::status(Command::new("dpkg-deb").args(["--build", "--root-owner-group"]).arg(&deb_root).arg(&deb))?;
    let tarball = out.join(format!("{tar_name}.tar.gz"));
    let mut tar = Command::new("tar");
    tar.args(["--owner=0", "--group=0", "--numeric-owner", "--sort=name", "-czf"])
        .arg(&tarball)
        .arg("-C")
        .arg(&stage)
        .arg(&tar_name);
    run::status(&mut tar)?;
    Ok(Packages { deb, tarball })
}

/// The library's path below the root, e.g. `usr/lib/x86_64-linux-gnu/...`.
pub fn lib_path(multiarch: &str) -> String {
    format!("usr/lib/{multiarch}/{LAYER_LIB_FILE}")
}

/// The package's files below `root`: the stripped library, the implicit
/// manifest, copyright and changelog.
fn write_tree(root: &Path, lib: &Path, multiarch: &str, maintainer: &str) -> Result<(), String> {
    let lib_dest = root.join(lib_path(multiarch));
    write(&lib_dest, &std::fs::read(lib).map_err(|e| format!("cannot read {}: {e}", lib.display()))?)?;
    // What dh_strip does to a shared library (keeps the dynamic symbols).
    run::status(
        Command::new("strip")
            .args(["--remove-section=.comment", "--remove-section=.note", "--strip-unneeded"])
            .arg(&lib_dest),
    )?;
    let installed_lib = Path::new("/").join(lib_path(multiarch));
    // The same implicit manifest `cargo xtask install` writes.
    let manifest = crate::install::implicit_manifest(&installed_lib)? + "\n";
    write(&root.join(&SYSTEM_LAYER_DIR[1..]).join(MANIFEST_FILE), manifest.as_bytes())?;
    let doc = root.join("usr/share/doc").join(PACKAGE);
    write(&doc.join("copyright"), COPYRIGHT.replace("{years}", &copyright_years()?).as_bytes())?;
    let date = first_line(Command::new("date").arg("-R"))?;
    let changelog = format!(
        "{PACKAGE} ({VERSION}) unstable; urgency=medium\n\n  \
         * Built by `cargo xtask package` from shader-enqueue-layer {VERSION}.\n\n \
         -- {maintainer}  {date}\n"
    );
    write(&doc.join("changelog"), changelog.as_bytes())?;
    // -n: no name or time stamp in the gzip header.
    run::status(Command::new("gzip").args(["-9nf"]).arg(doc.join("changelog")))
}

/// `dpkg-shlibdeps`' dependencies of `lib` (it wants a `debian/control`).
fn shlib_depends(stage: &Path, lib: &Path) -> Result<String, String> {
    let dir = stage.join("shlibdeps");
    write(
        &dir.join("debian/control"),
        format!("Source: {PACKAGE}\n\nPackage: {PACKAGE}\nArchitecture: any\n").as_bytes(),
    )?;
    let mut cmd = Command::new("dpkg-shlibdeps");
    cmd.arg("-O").arg(format!("-e{}", lib.display())).current_dir(&dir);
    let out = run::output(&mut cmd)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let depends = stdout.lines().find_map(|l| l.strip_prefix("shlibs:Depends="));
    match depends {
        Some(d) if out.status.success() && !d.is_empty() => Ok(d.to_string()),
        _ => Err(format!("dpkg-shlibdeps failed ({}): {stdout}{}", out.status, String::from_utf8_lossy(&out.stderr))),
    }
}

/// The tarball's `INSTALL`.
fn install_note(multiarch: &str, depends: &str) -> String {
    let lib = lib_path(multiarch);
    let dir = &SYSTEM_LAYER_DIR[1..];
    let title = format!("{LAYER_NAME} {VERSION}, built for {multiarch} on Debian");
    let underline = "=".repeat(title.len());
    format!(
        "{title}
{underline}

It emulates VK_AMDX_shader_enqueue (revision 2) on Vulkan 1.3 drivers
without it. Needs (Debian's package names): {depends}.

Install (as root, from this directory):

    install -D -m 644 {lib} /{lib}
    install -D -m 644 {dir}/{MANIFEST_FILE} /{dir}/{MANIFEST_FILE}

It is an implicit layer: every Vulkan application now loads it, except
those started with VK_EMU_SE_DISABLE=1. To check, the first command must
print VK_AMDX_shader_enqueue as one of the device's extensions (one tab
deep, at revision 2), the second nothing:

    vulkaninfo | grep -P '^\\tVK_AMDX_shader_enqueue'
    VK_EMU_SE_DISABLE=1 vulkaninfo | grep -P '^\\tVK_AMDX_shader_enqueue'

The manifest's library_path is absolute: if you put the library elsewhere
(e.g. /usr/lib64), change library_path to match. The loader also reads
manifests from /usr/local/share/vulkan/implicit_layer.d/ and, for one
user, ~/.local/share/vulkan/implicit_layer.d/.

Opt-in instead of on by default: add an enable_environment to the
manifest's \"layer\" object, beside disable_environment:

    \"enable_environment\": {{ \"VK_EMU_SE_ENABLE\": \"1\" }},

The loader then loads the layer only into processes started with
VK_EMU_SE_ENABLE=1 (the variable's name and value are yours to choose).

Remove (as root):

    rm /{lib} /{dir}/{MANIFEST_FILE}
"
    )
}

/// Debian's machine-readable copyright file (the workspace's licences).
const COPYRIGHT: &str = "\
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: shader-enqueue-layer

Files: *
Copyright: {years} the shader-enqueue-layer authors
License: MIT or Apache-2.0

License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.

License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy
 of this software and associated documentation files (the \"Software\"), to deal
 in the Software without restriction, including without limitation the rights
 to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 copies of the Software, and to permit persons to whom the Software is
 furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in
 all copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
 THE SOFTWARE.
";

/// The years of the first and the last commit, or this year outside git.
fn copyright_years() -> Result<String, String> {
    let year = |args: &[&str]| {
        let mut git = Command::new("git");
        git.args(["log", "--date=format:%Y", "--format=%ad"]).args(args).current_dir(paths::repo_root());
        first_line(&mut git)
    };
    match (year(&["--reverse"]), year(&["-1"])) {
        (Ok(first), Ok(last)) if first == last => Ok(first),
        (Ok(first), Ok(last)) => Ok(format!("{first}-{last}")),
        _ => first_line(Command::new("date").arg("+%Y")),
    }
}

/// Writes `bytes` to `path`, creating its parents.
fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Removes `dir` and everything in it, if present.
fn remove_dir(dir: &Path) -> Result<(), String> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!("cannot remove {}: {e}", dir.display())),
        _ => Ok(()),
    }
}

/// Every file below `dir`, depth first.
fn files_below(dir: &Path, found: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?.path();
        if path.is_dir() {
            files_below(&path, found)?;
        }
        found.push(path);
    }
    Ok(())
}

/// The payload's files (not `DEBIAN/`) relative to `root`, for `md5sum`.
fn relative_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut all = Vec::new();
    files_below(&root.join("usr"), &mut all)?;
    let mut files: Vec<PathBuf> = all
        .into_iter()
        .filter(|p| p.is_file())
        .filter_map(|p| p.strip_prefix(root).ok().map(Path::to_path_buf))
        .collect();
    files.sort();
    Ok(files)
}

/// dpkg's estimate: 1 KiB per directory, each file rounded up to KiB.
fn installed_size_kib(dirs: &[PathBuf]) -> Result<u64, String> {
    let mut all = Vec::new();
    for dir in dirs {
        files_below(dir, &mut all)?;
    }
    Ok(all.iter().map(|p| p.metadata().map_or(0, |m| if m.is_dir() { 1 } else { m.len().div_ceil(1024) })).sum())
}

/// Directories 0755, files 0644 (the library too, as Debian ships them).
fn normalise_permissions(dir: &Path) -> Result<(), String> {
    let mut all = vec![dir.to_path_buf()];
    files_below(dir, &mut all)?;
    for path in all {
        let mode = if path.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("cannot chmod {}: {e}", path.display()))?;
    }
    Ok(())
}

/// The first line a tool prints (it must succeed).
fn first_line(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("cannot run {}: {e}", run::describe(cmd)))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.lines().next().map(str::trim) {
        Some(line) if out.status.success() && !line.is_empty() => Ok(line.to_string()),
        _ => Err(format!("`{}` failed ({}): {}", run::describe(cmd), out.status, String::from_utf8_lossy(&out.stderr))),
    }
}
