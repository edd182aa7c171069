//! The per-pass GPU profile of each workload's graph: after the timed runs
//! the bench runs itself again (`--profile-child FILE`, few runs, no scratch
//! search) with the layer's `profile` setting pointing at FILE, so the
//! timestamps the layer adds never touch the figures of the main run. The
//! child marks where each workload begins in FILE; the parent reads the
//! layer's JSON lines (one per graph dispatch), takes the median of each
//! figure over a workload's dispatches, prints the breakdown and keeps it
//! for the result JSON.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use crate::measure::median;

/// Environment variable of the layer's `profile` setting.
const PROFILE_ENV: &str = "VK_EMU_SE_PROFILE";

/// Median GPU µs of one workload's graph dispatch, broken down.
#[derive(Debug, Clone, Default)]
pub struct Breakdown {
    pub dispatches: usize,
    pub total_us: f64,
    /// Per pass kind (`upload`, `node`, `advance`, `barrier`, ...).
    pub kinds: Vec<(String, f64)>,
    /// Per level.
    pub levels: Vec<(u64, f64)>,
    /// Per node (`"name[index]"`).
    pub nodes: Vec<(String, f64)>,
}

/// Appends the child's marker that `workload` begins.
pub fn mark(file: &Path, workload: &str) -> Result<(), String> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    writeln!(f, "{}", json!({ "workload": workload })).map_err(|e| e.to_string())
}

/// Runs the child over `only` (all when empty) and reads its profile.
pub fn run_child(quick: bool, only: &[String]) -> Result<BTreeMap<String, Breakdown>, String> {
    let file = std::env::temp_dir().join(format!("bench-profile-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.arg("--profile-child").arg(&file).env(PROFILE_ENV, &file);
    if quick {
        cmd.arg("--quick");
    }
    if !only.is_empty() {
        cmd.arg("--only").arg(only.join(","));
    }
    let out = cmd.output().map_err(|e| format!("profile run: {e}"))?;
    if !out.status.success() {
        return Err(format!("profile run failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let _ = std::fs::remove_file(&file);
    Ok(parse(&text))
}

/// Groups the layer's lines by the workload markers and takes medians.
pub fn parse(text: &str) -> BTreeMap<String, Breakdown> {
    let mut by_workload: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        if let Some(w) = v["workload"].as_str() {
            current = Some(w.to_string());
        } else if let Some(w) = &current {
            by_workload.entry(w.clone()).or_default().push(v);
        }
    }
    by_workload.into_iter().map(|(w, lines)| (w, breakdown(&lines))).collect()
}

/// Medians of every figure over `lines` (one per dispatch).
fn breakdown(lines: &[Value]) -> Breakdown {
    let totals: Vec<f64> = lines.iter().filter_map(|l| l["total_gpu_us"].as_f64()).collect();
    let collect = |section: &str, key: &dyn Fn(&Value) -> Option<String>| -> Vec<(String, f64)> {
        let mut order: Vec<String> = Vec::new();
        let mut samples: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for l in lines {
            for item in l[section].as_array().into_iter().flatten() {
                let (Some(k), Some(us)) = (key(item), item["gpu_us"].as_f64()) else { continue };
                if !order.contains(&k) {
                    order.push(k.clone());
                }
                samples.entry(k).or_default().push(us);
            }
        }
        order.into_iter().map(|k| (k.clone(), median(&samples[&k]))).collect()
    };
    let kinds = collect("kinds", &|i| i["kind"].as_str().map(str::to_string));
    let levels = collect("levels", &|i| i["level"].as_u64().map(|l| l.to_string()))
        .into_iter()
        .filter_map(|(l, us)| Some((l.parse().ok()?, us)))
        .collect();
    let nodes = collect("nodes", &|i| Some(format!("{}[{}]", i["node"].as_str()?, i["index"].as_u64()?)));
    Breakdown { dispatches: lines.len(), total_us: median(&totals), kinds, levels, nodes }
}

/// Prints one workload's breakdown.
pub fn print(name: &str, b: &Breakdown) {
    let kinds: Vec<String> = b.kinds.iter().map(|(k, us)| format!("{k} {us:.1}")).collect();
    println!("{name:<14} {:>9.1} µs profiled ({} dispatches): {}", b.total_us, b.dispatches, kinds.join(", "));
    let levels: Vec<String> = b.levels.iter().map(|(l, us)| format!("{l}:{us:.1}")).collect();
    println!("{:<14} levels (µs) {}", "", levels.join(" "));
    let mut nodes = b.nodes.clone();
    nodes.sort_by(|a, b| b.1.total_cmp(&a.1));
    let shown: Vec<String> = nodes.iter().take(8).map(|(n, us)| format!("{n} {us:.1}")).collect();
    let more = if nodes.len() > 8 { format!(" (+{} more)", nodes.len() - 8) } else { String::new() };
    println!("{:<14} nodes (µs) {}{more}", "", shown.join(", "));
}

/// The breakdown as JSON.
pub fn to_json(b: &Breakdown) -> Value {
    let pairs = |v: &[(String, f64)], key: &str| -> Vec<Value> {
        v.iter().map(|(k, us)| json!({ key: k, "gpu_us_median": us })).collect()
    };
    let levels: Vec<Value> = b.levels.iter().map(|(l, us)| json!({ "level": l, "gpu_us_median": us })).collect();
    json!({
        "dispatches": b.dispatches,
        "total_gpu_us_median": b.total_us,
        "kinds": pairs(&b.kinds, "kind"),
        "levels": levels,
        "nodes": pairs(&b.nodes, "node"),
    })
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn lines_are_grouped_by_marker_and_medians_taken() {
        let text = r#"{"workload":"a"}
{"total_gpu_us":10.0,"kinds":[{"kind":"node","gpu_us":6.0}],"levels":[{"level":0,"gpu_us":10.0}],"nodes":[{"node":"n","index":0,"gpu_us":6.0}]}
{"total_gpu_us":30.0,"kinds":[{"kind":"node","gpu_us":8.0}],"levels":[{"level":0,"gpu_us":30.0}],"nodes":[{"node":"n","index":0,"gpu_us":8.0}]}
{"total_gpu_us":20.0,"kinds":[{"kind":"node","gpu_us":7.0}],"levels":[{"level":0,"gpu_us":20.0}],"nodes":[{"node":"n","index":0,"gpu_us":7.0}]}
{"workload":"b"}
"#;
        let p = parse(text);
        let a = &p["a"];
        assert_eq!((a.dispatches, a.total_us), (3, 20.0));
        assert_eq!(a.kinds, vec![("node".to_string(), 7.0)]);
        assert_eq!(a.levels, vec![(0, 20.0)]);
        assert_eq!(a.nodes, vec![("n[0]".to_string(), 7.0)]);
        assert!(!p.contains_key("b"), "no dispatches, no entry");
    }
}
