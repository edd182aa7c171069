//! Results: one [`Row`] per workload, the printed table, and the JSON file
//! under `bench/results/<device-slug>.json`.

use serde_json::{json, Value};

/// The figures of one workload.
#[derive(Debug, Clone)]
pub struct Row {
    /// Workload name (`chain`, `empty-levels`, ...).
    pub name: &'static str,
    /// What was run (sizes), one line.
    pub detail: String,
    /// Median GPU µs of the graph dispatch.
    pub graph_us: f64,
    /// Median GPU µs of the baseline's dispatches.
    pub baseline_us: f64,
    /// Median CPU µs to record the one `vkCmdDispatchGraphAMDX`.
    pub record_cpu_us: f64,
    /// Graph pipeline creation, milliseconds per node.
    pub pipeline_ms_per_node: f64,
    /// Nodes in the graph.
    pub nodes: u32,
    /// Scratch bytes allocated for the graph.
    pub scratch_bytes: u64,
    /// Extra named figures (e.g. fixed cost per level).
    pub extra: Vec<(&'static str, f64)>,
    /// Every measured GPU sample (graph, baseline), µs.
    pub samples: (Vec<f64>, Vec<f64>),
}

impl Row {
    /// graph / baseline.
    pub fn ratio(&self) -> f64 {
        self.graph_us / self.baseline_us
    }
}

/// Prints the table.
pub fn print_table(device: &str, rows: &[Row]) {
    println!("\n{device}");
    println!(
        "{:<14} {:>12} {:>12} {:>7} {:>11} {:>11}  detail",
        "workload", "graph µs", "baseline µs", "ratio", "record µs", "pipe ms/nd"
    );
    for r in rows {
        println!(
            "{:<14} {:>12.1} {:>12.1} {:>7.2} {:>11.1} {:>11.2}  {}",
            r.name,
            r.graph_us,
            r.baseline_us,
            r.ratio(),
            r.record_cpu_us,
            r.pipeline_ms_per_node,
            r.detail
        );
        for (k, v) in &r.extra {
            println!("{:<14} {k}: {v:.2}", "");
        }
    }
    let logs: Vec<f64> = rows.iter().map(|r| r.ratio().ln()).collect();
    if !logs.is_empty() {
        let geo = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
        println!("geometric mean of graph/baseline: {geo:.2}");
    }
}

/// A file-name slug of a device name: lowercase ASCII alphanumerics and dashes.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// Device description and run settings for the JSON header.
#[derive(Debug, Clone)]
pub struct Header {
    pub device: String,
    pub driver: String,
    pub driver_info: String,
    pub date: String,
    pub commit: Option<String>,
    pub quick: bool,
    pub runs: u32,
    pub warmup: u32,
}

/// The whole result document.
pub fn to_json(h: &Header, rows: &[Row]) -> Value {
    let workloads: Vec<Value> = rows
        .iter()
        .map(|r| {
            let extra: serde_json::Map<String, Value> =
                r.extra.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
            json!({
                "name": r.name,
                "detail": r.detail,
                "graph_us_median": r.graph_us,
                "baseline_us_median": r.baseline_us,
                "ratio": r.ratio(),
                "record_dispatch_cpu_us_median": r.record_cpu_us,
                "pipeline_creation_ms_per_node": r.pipeline_ms_per_node,
                "nodes": r.nodes,
                "scratch_bytes": r.scratch_bytes,
                "extra": extra,
                "graph_us_samples": r.samples.0,
                "baseline_us_samples": r.samples.1,
            })
        })
        .collect();
    json!({
        "device": h.device,
        "driver": h.driver,
        "driver_info": h.driver_info,
        "date": h.date,
        "commit": h.commit,
        "quick": h.quick,
        "runs": h.runs,
        "warmup": h.warmup,
        "workloads": workloads,
    })
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn slugs() {
        assert_eq!(slug("llvmpipe (LLVM 15.0.6, 256 bits)"), "llvmpipe-llvm-15-0-6-256-bits");
        assert_eq!(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
    }
}
