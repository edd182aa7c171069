//! `cmd_cost`: pass-through cost of the layer per intercepted `vkCmd*` call.
//!
//! Runs [`demo::cmd_cost`] (three configurations in one process: no layer,
//! layer without the extension, layer with `VK_AMDX_shader_enqueue`) once
//! per thread count, and prints the median ns/call per thread per command
//! and configuration, the difference to the baseline (the layer's added
//! cost), and how that added cost grows from one thread to the most.
//!
//! Usage: `VK_LAYER_PATH=<repo>/manifests cmd_cost [--iters N] [--repeats R]
//! [--threads 1,4,16] [--idle-cores] [--json PATH]` (`--iters`: calls of
//! each command per thread and repeat; `--threads` default 1;
//! `--idle-cores`: leave the cores the threads do not use idle instead of
//! busy, see `demo::busy_cores`). Sets `VK_EMU_SE_DISABLE=1`
//! for itself so that an installed implicit copy cannot sneak into the
//! "without" instance; `CMD_COST_DEVICE_INDEX` picks the physical device
//! (default 0).

use std::process::ExitCode;

use demo::cmd_cost::{self, Cost, PassThrough, Skipped, ThreadRun};

struct Args {
    iters: u32,
    repeats: u32,
    threads: Vec<u32>,
    json: Option<String>,
    idle_cores: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args { iters: 1_000_000, repeats: 7, threads: vec![1], json: None, idle_cores: false };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--iters" => a.iters = value()?.parse().map_err(|e| format!("--iters: {e}"))?,
            "--repeats" => a.repeats = value()?.parse().map_err(|e| format!("--repeats: {e}"))?,
            "--threads" => a.threads = parse_threads(&value()?)?,
            "--idle-cores" => a.idle_cores = true,
            "--json" => a.json = Some(value()?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.iters == 0 || a.repeats == 0 {
        return Err("--iters and --repeats must be > 0".into());
    }
    Ok(a)
}

/// `"1,4,16"` -> `[1, 4, 16]` (each 1 to [`cmd_cost::MAX_THREADS`]).
fn parse_threads(list: &str) -> Result<Vec<u32>, String> {
    let counts = list
        .split(',')
        .map(|t| match t.trim().parse::<u32>() {
            Ok(n) if (1..=cmd_cost::MAX_THREADS).contains(&n) => Ok(n),
            _ => Err(format!("--threads: {t:?} is not a count of 1 to {}", cmd_cost::MAX_THREADS)),
        })
        .collect::<Result<Vec<u32>, String>>()?;
    Ok(counts)
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    cmd_cost::disable_implicit_layer();
    let device_index = std::env::var("CMD_COST_DEVICE_INDEX").ok().and_then(|v| v.parse().ok()).unwrap_or(0usize);
    let entry = ash::Entry::linked();
    let mut rigs = PassThrough::new(&entry, device_index)?;
    if args.idle_cores {
        rigs.leave_other_cores_idle();
    }
    if rigs.plain_lists_amdx() {
        println!("note: the plain instance lists VK_AMDX_shader_enqueue (driver or implicit layer)");
    }
    println!("device: {}", rigs.device());
    println!(
        "recording {} calls of each command per thread and repeat, {} repeats, rotating configurations, other cores {}, \
         threads pinned to {} CPUs in turn",
        args.iters,
        args.repeats,
        if args.idle_cores { "idle" } else { "busy" },
        rigs.pinned_cpus()
    );
    let cores = cmd_cost::cores();
    let skipped = rigs.skipped();
    let mut runs = Vec::new();
    for run in rigs.measure_counts(args.iters, args.repeats, &args.threads)? {
        println!("\n{} thread(s), each its own command pool:", run.threads);
        if let Some(c) = cores.filter(|&c| run.threads as usize > c) {
            println!("(more threads than the {c} cores: the times include waiting for a core)");
        }
        cmd_cost::print_table(&run.costs, &skipped);
        runs.push(run);
    }
    cmd_cost::print_scaling(&runs);
    if let Some(path) = &args.json {
        std::fs::write(path, to_json(rigs.device(), rigs.pinned_cpus(), &args, &runs, &skipped))
            .map_err(|e| format!("cannot write {path}: {e}"))?;
        println!("wrote {path}");
    }
    Ok(())
}

/// `{device, iters, repeats, other_cores_busy, pinned_cpus, results, by_threads, skipped}`:
/// `results` is the one-thread run (empty without one), as before threads were measured.
fn to_json(device: &str, pinned_cpus: usize, args: &Args, runs: &[ThreadRun], skipped: &[Skipped]) -> String {
    let single = runs.iter().find(|r| r.threads == 1).map(|r| costs_json(&r.costs)).unwrap_or_default();
    let by_threads: Vec<String> =
        runs.iter().map(|r| format!("{{\"threads\":{},\"results\":[{}]}}", r.threads, costs_json(&r.costs))).collect();
    let skipped: Vec<String> =
        skipped.iter().map(|s| format!("{{\"command\":{:?},\"why\":{:?}}}", s.command, s.why)).collect();
    format!(
        "{{\"device\":{:?},\"iters\":{},\"repeats\":{},\"other_cores_busy\":{},\"pinned_cpus\":{},\"results\":[{single}],\"by_threads\":[{}],\"skipped\":[{}]}}\n",
        device,
        args.iters,
        args.repeats,
        !args.idle_cores,
        pinned_cpus,
        by_threads.join(","),
        skipped.join(",")
    )
}

fn costs_json(costs: &[Cost]) -> String {
    let rows: Vec<String> = costs
        .iter()
        .map(|c| {
            format!(
                "{{\"command\":\"{}\",\"without_ns\":{:.2},\"layer_ns\":{:.2},\"layer_amdx_ns\":{:.2}}}",
                c.command, c.without_ns, c.layer_ns, c.layer_amdx_ns
            )
        })
        .collect();
    rows.join(",")
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cmd_cost: error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_threads;

    #[test]
    fn thread_lists() {
        assert_eq!(parse_threads("1,4,16"), Ok(vec![1, 4, 16]));
        assert_eq!(parse_threads("8"), Ok(vec![8]));
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("1,,4").is_err());
        assert!(parse_threads("many").is_err());
    }
}
