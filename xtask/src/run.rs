//! Running child processes: print the command line (with the environment
//! variables it sets) before running it, fail with a clear message.

use std::ffi::OsStr;
use std::process::{Command, Output};

/// Prints `cmd` the way a person would type it.
pub fn describe(cmd: &Command) -> String {
    let mut parts: Vec<String> = cmd
        .get_envs()
        .filter_map(|(k, v)| v.map(|v| format!("{}={}", k.to_string_lossy(), v.to_string_lossy())))
        .collect();
    parts.push(cmd.get_program().to_string_lossy().into_owned());
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    parts.join(" ")
}

/// Runs `cmd` with inherited stdio; an error unless it exits 0.
pub fn status(cmd: &mut Command) -> Result<(), String> {
    println!("xtask: $ {}", describe(cmd));
    let status = cmd.status().map_err(|e| format!("cannot run {}: {e}", describe(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", describe(cmd)))
    }
}

/// Runs `cmd` capturing its output (stderr still shown on failure).
pub fn output(cmd: &mut Command) -> Result<Output, String> {
    println!("xtask: $ {}", describe(cmd));
    cmd.output().map_err(|e| format!("cannot run {}: {e}", describe(cmd)))
}

/// A `cargo` command using the same cargo that runs xtask.
pub fn cargo<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(args);
    cmd
}

/// Like [`status`], but kills the child after `secs` seconds (a deadlocked
/// Vulkan program must not hang the task).
pub fn status_timeout(cmd: &mut Command, secs: u64) -> Result<(), String> {
    println!("xtask: $ {}  (time limit {secs} s)", describe(cmd));
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {}: {e}", describe(cmd)))?;
    let start = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("`{}` failed ({status})", describe(cmd))),
            Ok(None) if start.elapsed().as_secs() >= secs => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`{}` did not finish in {secs} s: killed", describe(cmd)));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(100)),
            Err(e) => return Err(format!("waiting for {}: {e}", describe(cmd))),
        }
    }
}
