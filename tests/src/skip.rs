//! Run-time skips that a person and CI both see.
//!
//! A test that cannot run on the driver it was given (no second queue, no
//! mesh shaders, a driver bug) calls [`skip`] and returns. The skip is
//! printed, and appended to the file named by [`SKIP_LOG_ENV`] (set by
//! `cargo xtask test`, which lists every skip of each lane at the end, and
//! by the `run.sh` of `cargo xtask gpu-tests`, which lists the GPU's). Each
//! skip names the lanes that have what the test needs: a skip on one of
//! those lanes (the lane is [`LANE_ENV`](crate::env::LANE_ENV)) fails the
//! test instead, so a lane can never silently stop running it.

use std::io::Write;

/// Env var: file every skip is appended to, one line each:
/// `lane<TAB>binary<TAB>test<TAB>why`.
pub const SKIP_LOG_ENV: &str = "EMU_SE_SKIP_LOG";

/// The drivers the suite runs on (`EMU_SE_LANE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// Debian 12's lavapipe (Mesa 22.3, Vulkan 1.3): `old`.
    Old,
    /// Mesa 25's lavapipe (Vulkan 1.4): `modern`.
    Modern,
    /// NVIDIA's driver on the GPU machine: `gpu`.
    Gpu,
}

impl Lane {
    /// The lane's `EMU_SE_LANE` value.
    pub fn name(self) -> &'static str {
        match self {
            Lane::Old => "old",
            Lane::Modern => "modern",
            Lane::Gpu => "gpu",
        }
    }

    /// The lane this process runs on, from `EMU_SE_LANE` (`None`: not set,
    /// as in a plain `cargo test`).
    pub fn current() -> Option<Lane> {
        let name = std::env::var(crate::env::LANE_ENV).ok()?;
        [Lane::Old, Lane::Modern, Lane::Gpu].into_iter().find(|l| l.name() == name)
    }
}

/// Says that the calling test does not run here because `why`, where
/// `runs_on` are the lanes whose driver has what it needs. Panics (the test
/// fails) when the current lane is one of them.
pub fn skip(runs_on: &[Lane], why: &str) {
    let lane = Lane::current();
    let test = std::thread::current().name().unwrap_or("?").to_string();
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_default();
    // Cargo names test binaries `<file>-<hash>`.
    let binary = binary.rsplit_once('-').map_or(binary.as_str(), |(name, _)| name).to_string();
    if let Some(lane) = lane.filter(|l| runs_on.contains(l)) {
        panic!("{binary}::{test} cannot run on the {} lane, which should have what it needs: {why}", lane.name());
    }
    let lanes: Vec<&str> = runs_on.iter().map(|l| l.name()).collect();
    eprintln!("skipped: {why} (runs on: {})", lanes.join(", "));
    let Some(path) = std::env::var_os(SKIP_LOG_ENV) else { return };
    let line = format!("{}\t{binary}\t{test}\t{why}\n", lane.map_or("unnamed", Lane::name));
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    // The skip log is how CI sees skips: not being able to write it fails.
    if let Err(e) = written {
        panic!("cannot append to the skip log {}: {e}", std::path::Path::new(&path).display());
    }
}
