//! `cmd_cost`: pass-through cost of the layer per intercepted `vkCmd*` call.
//!
//! Runs [`demo::cmd_cost`] (three configurations in one process: no layer,
//! layer without the extension, layer with `VK_AMDX_shader_enqueue`) and
//! prints the median ns/call per command and configuration and the
//! difference to the baseline (the layer's added cost).
//!
//! Usage: `VK_LAYER_PATH=<repo>/manifests cmd_cost [--iters N] [--repeats R]
//! [--json PATH]`. Sets `VK_EMU_SE_DISABLE=1` for itself so that an
//! installed implicit copy cannot sneak into the "without" instance;
//! `CMD_COST_DEVICE_INDEX` picks the physical device (default 0).

use std::process::ExitCode;

use demo::cmd_cost::{self, PassThrough};

struct Args {
    iters: u32,
    repeats: u32,
    json: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args { iters: 1_000_000, repeats: 7, json: None };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--iters" => a.iters = value()?.parse().map_err(|e| format!("--iters: {e}"))?,
            "--repeats" => a.repeats = value()?.parse().map_err(|e| format!("--repeats: {e}"))?,
            "--json" => a.json = Some(value()?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.iters == 0 || a.repeats == 0 {
        return Err("--iters and --repeats must be > 0".into());
    }
    Ok(a)
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    cmd_cost::disable_implicit_layer();
    let device_index = std::env::var("CMD_COST_DEVICE_INDEX").ok().and_then(|v| v.parse().ok()).unwrap_or(0usize);
    let entry = ash::Entry::linked();
    let rigs = PassThrough::new(&entry, device_index)?;
    if rigs.plain_lists_amdx() {
        println!("note: the plain instance lists VK_AMDX_shader_enqueue (driver or implicit layer)");
    }
    println!("device: {}", rigs.device());
    println!(
        "recording {} calls of each command per repeat, {} repeats, rotating configurations",
        args.iters, args.repeats
    );
    let costs = rigs.measure(args.iters, args.repeats)?;
    cmd_cost::print_table(&costs);
    if let Some(path) = args.json {
        let rows: Vec<String> = costs
            .iter()
            .map(|c| {
                format!(
                    "{{\"command\":\"{}\",\"without_ns\":{:.2},\"layer_ns\":{:.2},\"layer_amdx_ns\":{:.2}}}",
                    c.command, c.without_ns, c.layer_ns, c.layer_amdx_ns
                )
            })
            .collect();
        let json = format!(
            "{{\"device\":{:?},\"iters\":{},\"repeats\":{},\"results\":[{}]}}\n",
            rigs.device(),
            args.iters,
            args.repeats,
            rows.join(",")
        );
        std::fs::write(&path, json).map_err(|e| format!("cannot write {path}: {e}"))?;
        println!("wrote {path}");
    }
    Ok(())
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
