//! Results: one [`Row`] per workload, the printed tables (timings, scratch,
//! pass-through), and the JSON file under `bench/results/<device-slug>.json`.

use demo::cmd_cost::{scaling, Cost};
use serde_json::{json, Value};

use crate::pass_through::Figures;

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
    /// Smallest working scratch against the live payload bytes.
    pub scratch: Scratch,
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

/// Bytes for people: `640 B`, `68.0 KiB`, `8.3 MiB`.
pub fn human(bytes: u64) -> String {
    match bytes {
        b if b < 1 << 10 => format!("{b} B"),
        b if b < 1 << 20 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// The progress line of a workload's scratch search (`None` when skipped).
pub fn scratch_line(s: &Scratch) -> Option<String> {
    let live = human(s.live_payload_bytes);
    match &s.outcome {
        Outcome::Skipped => None,
        Outcome::Found { bytes, runs, .. } => Some(format!(
            "scratch: {} needed, {:.1} x the {live} of payload alive at once at the fullest level \
             ({:.1} x the {} it reads) ({runs} runs)",
            human(*bytes),
            s.needed_over_live().unwrap_or(f64::NAN),
            s.needed_over_consumed().unwrap_or(f64::NAN),
            human(s.consumed_payload_bytes)
        )),
        Outcome::MaxFails(why) => {
            Some(format!("scratch: maxSize ({}) gives a wrong result, not searched: {why}", human(s.max_size)))
        }
    }
}

/// Prints the scratch table: smallest working size against live payload.
pub fn print_scratch(rows: &[Row]) {
    if rows.iter().all(|r| r.scratch.outcome == Outcome::Skipped) {
        println!("\nscratch search skipped (--no-scratch-search)");
        return;
    }
    println!(
        "\nsmallest working scratch (multiples of sizeGranularity) against the payload alive at once at the \
         fullest level (a level's inputs and outputs) and against the payload a level reads"
    );
    println!(
        "{:<14} {:>12} {:>12} {:>12} {:>12} {:>14} {:>12} {:>5}",
        "workload", "live", "needed", "needed/live", "consumed", "needed/consumed", "minSize", "runs"
    );
    let ratio = |r: Option<f64>| format!("{:.1}", r.unwrap_or(f64::NAN));
    for r in rows {
        let s = &r.scratch;
        let (needed, over_live, over_consumed, runs) = match &s.outcome {
            Outcome::Found { bytes, runs, .. } => {
                (human(*bytes), ratio(s.needed_over_live()), ratio(s.needed_over_consumed()), runs.to_string())
            }
            Outcome::MaxFails(_) => ("> maxSize".into(), "-".into(), "-".into(), "1".into()),
            Outcome::Skipped => ("-".into(), "-".into(), "-".into(), "0".into()),
        };
        let (live, consumed, min) = (human(s.live_payload_bytes), human(s.consumed_payload_bytes), human(s.min_size));
        println!(
            "{:<14} {live:>12} {needed:>12} {over_live:>12} {consumed:>12} {over_consumed:>14} {min:>12} {runs:>5}",
            r.name
        );
        match &s.outcome {
            Outcome::Found { failure_below: Some(why), .. } => println!("{:<14} one granule less: {why}", ""),
            Outcome::MaxFails(why) => println!("{:<14} at maxSize: {why}", ""),
            _ => {}
        }
    }
}

/// Prints the pass-through tables (`demo`'s `cmd_cost` layout), one per
/// thread count, then how the added cost grows with the threads.
pub fn print_pass_through(p: &Figures) {
    println!(
        "\npass-through per vkCmd* call, CPU ns per call per thread ({} calls x {} repeats per thread, \
         medians over threads and repeats, other cores {}, threads pinned to {} CPUs in turn): {}",
        p.iters,
        p.repeats,
        if p.other_cores_busy { "busy" } else { "idle" },
        p.pinned_cpus,
        p.device
    );
    if p.plain_lists_amdx {
        println!("(the instance without the layer lists VK_AMDX_shader_enqueue too: driver or implicit layer)");
    }
    for run in &p.runs {
        println!("\n{} thread(s), each its own command pool:", run.threads);
        if let Some(c) = p.cores.filter(|&c| run.threads as usize > c) {
            println!("(more threads than the {c} cores: the times include waiting for a core)");
        }
        demo::cmd_cost::print_table(&run.costs, &p.skipped);
    }
    demo::cmd_cost::print_scaling(&p.runs);
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

/// A workload's scratch search, for its JSON object.
fn scratch_json(s: &Scratch) -> Value {
    let (outcome, runs, failure) = match &s.outcome {
        Outcome::Skipped => ("skipped", 0, None),
        Outcome::Found { runs, failure_below, .. } => ("found", *runs, failure_below.as_deref()),
        Outcome::MaxFails(why) => ("max_size_fails", 1, Some(why.as_str())),
    };
    json!({
        "outcome": outcome,
        "runs": runs,
        "min_size_bytes": s.min_size,
        "max_size_bytes": s.max_size,
        "granularity_bytes": s.granularity,
        // Why one granule less (or maxSize itself) failed.
        "failure": failure,
    })
}

/// One command's medians and added costs.
fn cost_json(c: &Cost) -> Value {
    json!({
        "command": c.command,
        "without_ns": c.without_ns,
        "layer_ns": c.layer_ns,
        "layer_amdx_ns": c.layer_amdx_ns,
        "layer_added_ns": c.layer_added_ns(),
        "layer_amdx_added_ns": c.layer_amdx_added_ns(),
    })
}

/// The pass-through section: `commands` is the one-thread run (as before
/// threads were measured), `by_threads` every run, `skipped` the commands
/// the device cannot record, `layer_amdx_added_ratio` the added cost
/// (layer+amdx) at the most threads over that at one thread.
fn pass_through_json(p: &Figures) -> Value {
    let commands: Vec<Value> = p.single().map(|r| r.costs.iter().map(cost_json).collect()).unwrap_or_default();
    let by_threads: Vec<Value> = p
        .runs
        .iter()
        .map(|r| json!({ "threads": r.threads, "costs": r.costs.iter().map(cost_json).collect::<Vec<_>>() }))
        .collect();
    let skipped: Vec<Value> = p.skipped.iter().map(|s| json!({ "command": s.command, "why": s.why })).collect();
    let ratios: Vec<Value> = scaling(&p.runs)
        .iter()
        .map(|s| json!({ "command": s.command, "threads": s.threads, "ratio": s.ratio }))
        .collect();
    json!({
        "device": p.device,
        "iters": p.iters,
        "repeats": p.repeats,
        "plain_instance_lists_amdx": p.plain_lists_amdx,
        "commands": commands,
        "cores": p.cores,
        "other_cores_busy": p.other_cores_busy,
        "pinned_cpus": p.pinned_cpus,
        "skipped": skipped,
        "by_threads": by_threads,
        "layer_amdx_added_ratio": ratios,
    })
}

/// The whole result document (`pass_through` null when not measured; a
/// workload's `profile` null when not profiled).
pub fn to_json(
    h: &Header,
    rows: &[Row],
    pass: Option<&Figures>,
    profiles: &std::collections::BTreeMap<String, crate::profile::Breakdown>,
) -> Value {
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
                "live_payload_bytes": r.scratch.live_payload_bytes,
                "scratch_needed_bytes": r.scratch.needed_bytes(),
                "scratch_needed_over_live": r.scratch.needed_over_live(),
                "consumed_payload_bytes": r.scratch.consumed_payload_bytes,
                "scratch_needed_over_consumed": r.scratch.needed_over_consumed(),
                "scratch_search": scratch_json(&r.scratch),
                "extra": extra,
                "profile": profiles.get(r.name).map(crate::profile::to_json),
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
        "pass_through": pass.map(pass_through_json),
    })
}

// The scratch figures live here, with the rows that carry them, so that
// the search (which runs workloads) sits above the report it fills.

/// How the search ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// `--no-scratch-search`.
    Skipped,
    /// The smallest working size, the runs it took, and why the next
    /// smaller size failed (`None` when the smallest is `minSize`).
    Found { bytes: u64, runs: u32, failure_below: Option<String> },
    /// Even `maxSize` does not give the right result (why).
    MaxFails(String),
}

/// The scratch figures of one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Scratch {
    /// Payload bytes of the records alive at once at the fullest level: a
    /// level's inputs and outputs (the model's, `scratch_search::Payload`).
    pub live_payload_bytes: u64,
    /// Payload bytes of the records a level reads, at the level reading the
    /// most.
    pub consumed_payload_bytes: u64,
    /// `minSize`, `maxSize` and `sizeGranularity` the layer reports.
    pub min_size: u64,
    pub max_size: u64,
    pub granularity: u64,
    pub outcome: Outcome,
}

impl Scratch {
    /// The smallest working size, when searched and found.
    pub fn needed_bytes(&self) -> Option<u64> {
        match self.outcome {
            Outcome::Found { bytes, .. } => Some(bytes),
            _ => None,
        }
    }

    /// needed / live (`None` without a result or without live bytes).
    pub fn needed_over_live(&self) -> Option<f64> {
        self.needed_over(self.live_payload_bytes)
    }

    /// needed / consumed (`None` without a result or without such bytes).
    pub fn needed_over_consumed(&self) -> Option<f64> {
        self.needed_over(self.consumed_payload_bytes)
    }

    fn needed_over(&self, payload: u64) -> Option<f64> {
        let needed = self.needed_bytes()?;
        (payload > 0).then(|| needed as f64 / payload as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::{human, pass_through_json, slug};
    use crate::pass_through::Figures;
    use demo::cmd_cost::{Cost, Skipped, ThreadRun};

    #[test]
    fn human_bytes() {
        assert_eq!(human(640), "640 B");
        assert_eq!(human(69_632), "68.0 KiB");
        assert_eq!(human(3 << 20), "3.0 MiB");
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("llvmpipe (LLVM 15.0.6, 256 bits)"), "llvmpipe-llvm-15-0-6-256-bits");
        assert_eq!(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
    }

    #[test]
    fn pass_through_sections() {
        let cost = |without_ns, layer_amdx_ns| Cost::new("c", without_ns, without_ns, layer_amdx_ns);
        let p = Figures {
            device: "d".into(),
            iters: 10,
            repeats: 3,
            plain_lists_amdx: false,
            cores: Some(2),
            other_cores_busy: true,
            pinned_cpus: 2,
            skipped: vec![Skipped { command: "s", why: "w" }],
            runs: vec![
                ThreadRun { threads: 1, costs: vec![cost(10.0, 12.0)] },
                ThreadRun { threads: 16, costs: vec![cost(10.0, 16.0)] },
            ],
        };
        let v = pass_through_json(&p);
        assert_eq!(v["commands"][0]["layer_amdx_added_ns"], 2.0);
        assert_eq!(v["by_threads"][1]["threads"], 16);
        assert_eq!(v["by_threads"][1]["costs"][0]["layer_amdx_added_ns"], 6.0);
        assert_eq!(v["skipped"][0]["command"], "s");
        assert_eq!(v["layer_amdx_added_ratio"][0]["ratio"], 3.0);
    }
}
