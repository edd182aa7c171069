//! The run-time skip logs of `cargo xtask test`: one file per lane under
//! `<target>/skip-logs/`, emptied before the lane runs, named to the tests
//! by `EMU_SE_SKIP_LOG` (with the lane in `EMU_SE_LANE`), and listed at the
//! end. A test appends one `lane<TAB>binary<TAB>test<TAB>why` line per skip
//! (`conformance_tests::skip`); a skip on a lane that should run the test
//! already fails that test, so this module only reports.

use std::path::{Path, PathBuf};

/// Env var: the file the tests append their skips to.
pub const SKIP_LOG_ENV: &str = "EMU_SE_SKIP_LOG";
/// Env var: the lane the tests run on (`old`, `modern`, `gpu`).
pub const LANE_ENV: &str = "EMU_SE_LANE";

/// The lanes `cargo xtask test` runs, in order.
pub const LANES: [&str; 2] = ["old", "modern"];

/// `<target>/skip-logs`.
fn dir(target: &Path) -> PathBuf {
    target.join("skip-logs")
}

/// The log of `lane`.
fn log_path(target: &Path, lane: &str) -> PathBuf {
    dir(target).join(format!("{lane}.log"))
}

/// Removes the logs of an earlier run, so that a lane that does not run
/// this time is reported as such and not with stale skips.
pub fn reset(target: &Path) -> Result<(), String> {
    for lane in LANES {
        let path = log_path(target, lane);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {}: {e}", path.display())),
        }
    }
    Ok(())
}

/// Creates `lane`'s log, empty, and returns its path (for `EMU_SE_SKIP_LOG`).
pub fn fresh_log(target: &Path, lane: &str) -> Result<PathBuf, String> {
    let dir = dir(target);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = log_path(target, lane);
    std::fs::write(&path, "").map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    Ok(path)
}

/// The lines a person reads for one log's text: `binary::test: why`, each
/// distinct skip once (a test that skips in a loop writes several lines),
/// with `(lane L)` where a line names another lane than `lane`.
pub fn describe(lane: &str, text: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let fields: Vec<&str> = line.splitn(4, '\t').collect();
        let [written_lane, binary, test, why] = fields[..] else {
            return Err(format!("malformed skip log line (want lane, binary, test, why): {line:?}"));
        };
        let mut entry = format!("{binary}::{test}: {why}");
        if written_lane != lane {
            entry.push_str(&format!(" (lane {written_lane})"));
        }
        if !out.contains(&entry) {
            out.push(entry);
        }
    }
    Ok(out)
}

/// Prints, for every lane, the tests it skipped at run time and why, "none",
/// or that it did not run.
pub fn report(target: &Path) -> Result<(), String> {
    for lane in LANES {
        let path = log_path(target, lane);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                println!("xtask test: skipped at run time on the {lane} lane: (lane did not run)");
                continue;
            }
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let skips = describe(lane, &text)?;
        if skips.is_empty() {
            println!("xtask test: skipped at run time on the {lane} lane: none");
            continue;
        }
        println!("xtask test: skipped at run time on the {lane} lane ({}):", path.display());
        for skip in skips {
            println!("  {skip}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn lines_become_one_entry_per_distinct_skip() {
        let text = "old\tgraph_x\tt_a\tno queue\nold\tgraph_x\tt_a\tno queue\nunnamed\texecute\tt_b\tno 16-bit\n";
        let got = describe("old", text).expect("parses");
        assert_eq!(got, ["graph_x::t_a: no queue", "execute::t_b: no 16-bit (lane unnamed)"]);
    }

    #[test]
    fn a_line_without_four_fields_is_an_error() {
        assert!(describe("old", "old\tgraph_x\tno reason\n").is_err());
    }
}
