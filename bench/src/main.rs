//! `bench`: execution graphs through `VK_LAYER_EMU_shader_enqueue` against
//! hand-written plain compute, same process, same device, same inputs.
//!
//! For every workload ([`workloads`]), on a device created with the
//! features it needs ([`device::Features`], one device per run of workloads
//! needing the same ones), it runs the graph and the baseline through one
//! measuring path ([`pair::measure()`]), checks that both produce the same
//! words (and the CPU model's), measures GPU time with timestamp queries
//! (median of the measured runs after warm-up), the CPU time to record one `vkCmdDispatchGraphAMDX`, the graph
//! pipeline creation time per node, and the smallest scratch that still
//! gives the right result against the payload bytes live at the fullest
//! level ([`scratch_search`]); once per run, the layer's pass-through cost
//! per `vkCmd*` call ([`pass_through`]); then, in a second run of itself
//! with the layer's `profile` setting on, each graph's GPU time per pass,
//! level and node ([`profile`]). It prints tables and writes JSON to
//! `<out-dir>/<device-slug>.json`.
//!
//! Usage: `bench [--quick] [--runs N] [--warmup N] [--out-dir DIR] [--only a,b]
//! [--no-scratch-search] [--no-pass-through] [--no-profile]` (from a checkout: `cargo build
//! --release -p shader-enqueue-layer -p bench && VK_LAYER_PATH=$PWD/manifests
//! target/release/bench --quick`).

mod cmd;
mod context;
mod device;
mod kernel;
mod measure;
mod messages;
mod pair;
mod pass_through;
mod profile;
mod report;
mod scratch_search;
mod workloads;

use demo::vkutil;
use std::ffi::CStr;
use std::path::PathBuf;
use std::process::ExitCode;
use vk_host::LAYER_NAME;

use measure::Settings;
use messages::Messages;
use report::{Header, Row};
use workloads::Ctx;

/// Every workload, in order.
const ALL: [&str; 10] = [
    "chain",
    "empty-levels",
    "busy-levels",
    "fanout",
    "classify",
    "classify-4m",
    "refine",
    "deferred-1080p",
    "deferred-4k",
    "mesh-nodes",
];

/// Command-line options.
struct Options {
    settings: Settings,
    out_dir: PathBuf,
    only: Vec<String>,
    /// Search each graph's smallest working scratch size.
    scratch_search: bool,
    /// Measure the pass-through cost per `vkCmd*` call.
    pass_through: bool,
    /// Profile each graph per pass (in a second run of the bench).
    profile: bool,
    /// This is that second run: append workload markers to this file.
    profile_child: Option<PathBuf>,
}

/// The options after the workload names.
const USAGE: &str = "usage: bench [--quick] [--runs N] [--warmup N] [--out-dir DIR] [--no-scratch-search] \
                     [--no-pass-through] [--no-profile] [--only";

fn main() -> ExitCode {
    let opts = match parse(std::env::args().skip(1).collect()) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("bench: {e}\n{USAGE} {}]", ALL.join(","));
            return ExitCode::from(2);
        }
    };
    match run(&opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse(args: Vec<String>) -> Result<Options, String> {
    let mut quick = false;
    let mut runs = None;
    let mut warmup = None;
    let mut out_dir = None;
    let mut only = Vec::new();
    let (mut scratch_search, mut pass_through, mut profile) = (true, true, true);
    let mut profile_child = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--no-scratch-search" => scratch_search = false,
            "--no-pass-through" => pass_through = false,
            "--no-profile" => profile = false,
            "--profile-child" => {
                profile_child = Some(PathBuf::from(it.next().ok_or("--profile-child needs a file")?));
            }
            "--runs" => {
                let n = it.next().ok_or("--runs needs a number")?;
                runs = Some(n.parse::<u32>().ok().filter(|&r| r >= 1).ok_or(format!("bad --runs {n:?}"))?);
            }
            "--warmup" => {
                let n = it.next().ok_or("--warmup needs a number")?;
                warmup = Some(n.parse::<u32>().map_err(|_| format!("bad --warmup {n:?}"))?);
            }
            "--out-dir" => out_dir = Some(PathBuf::from(it.next().ok_or("--out-dir needs a folder")?)),
            "--only" => {
                let list = it.next().ok_or("--only needs a list")?;
                for w in list.split(',') {
                    if !ALL.contains(&w) {
                        return Err(format!("unknown workload {w:?}"));
                    }
                    only.push(w.to_string());
                }
            }
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    let mut settings = Settings::new(quick);
    if let Some(r) = runs {
        settings.runs = r;
    }
    if let Some(w) = warmup {
        settings.warmup = w;
    }
    let out_dir = out_dir.unwrap_or_else(default_out_dir);
    if profile_child.is_some() {
        // The profiled run: few runs, nothing else measured.
        (settings.warmup, settings.runs) = (1, 5);
        (scratch_search, pass_through, profile) = (false, false, false);
    }
    Ok(Options { settings, out_dir, only, scratch_search, pass_through, profile, profile_child })
}

/// `bench/results` under the current folder when it exists (a checkout's
/// root), else the crate's own `results` folder.
fn default_out_dir() -> PathBuf {
    let local = PathBuf::from("bench/results");
    if local.is_dir() {
        local
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results")
    }
}

fn run(opts: &Options) -> Result<(), String> {
    // First, while no driver thread can read the environment: the
    // pass-through baseline must not pick up an implicitly installed copy,
    // and the bench itself uses the layer it names, not such a copy.
    demo::cmd_cost::disable_implicit_layer();
    let entry = ash::Entry::linked();
    // The layer reports dropped work through VK_EXT_debug_utils messengers.
    let debug_utils = messages::available(&entry);
    let extensions: &[&CStr] = if debug_utils { &[messages::EXTENSION] } else { &[] };
    let instance = vkutil::create_instance_with(&entry, &[LAYER_NAME], extensions)?;
    let result = (|| {
        let messages = if debug_utils { Some(Messages::new(&entry, &instance)?) } else { None };
        let pd = device::pick(&instance)?;
        run_on(&entry, &instance, pd, messages.as_ref(), opts)
    })();
    // SAFETY: every child of the instance (device, messenger) was dropped above.
    unsafe { instance.destroy_instance(None) };
    result
}

fn run_on(
    entry: &ash::Entry,
    instance: &ash::Instance,
    pd: ash::vk::PhysicalDevice,
    messages: Option<&Messages>,
    opts: &Options,
) -> Result<(), String> {
    let (name, driver, info) = vkutil::describe(instance, pd);
    println!("device: {name}\ndriver: {driver} ({info})");
    let s = opts.settings;
    println!(
        "runs: {} measured after {} warm-up, {}",
        s.runs,
        s.warmup,
        if s.quick { "quick sizes" } else { "full sizes" }
    );
    // Before the bench's own device exists, so that nothing else runs.
    let pass = if opts.pass_through {
        Some(pass_through::run(entry, device::index_of(instance, pd)?, s.quick)?)
    } else {
        None
    };
    if opts.scratch_search {
        println!("(scratch search: the layer logs an error for every size it finds too small)");
        if messages.is_none() {
            println!("(no VK_EXT_debug_utils: the scratch search sees wrong words, not the layer's reports)");
        }
    }
    // SAFETY: valid physical device.
    if unsafe { instance.get_physical_device_properties(pd) }.device_type == ash::vk::PhysicalDeviceType::CPU {
        println!("(a CPU driver: timestamps are host clock readings as its worker runs the commands)");
    }
    let selected: Vec<&str> =
        ALL.into_iter().filter(|w| opts.only.is_empty() || opts.only.iter().any(|o| o == w)).collect();
    let mut rows = Vec::new();
    // One device per run of workloads (in `ALL` order) needing the same
    // features, dropped before the next is created.
    for group in selected.chunk_by(|a, b| workloads::features(a) == workloads::features(b)) {
        rows.extend(run_group(instance, pd, group, messages, opts)?);
    }
    if opts.profile_child.is_some() {
        return Ok(());
    }
    let profiles = if opts.profile {
        println!("profiling each graph (a second run of the bench with the layer's profile setting) ...");
        profile::run_child(s.quick, &opts.only)?
    } else {
        Default::default()
    };
    report::print_table(&name, &rows);
    if !profiles.is_empty() {
        println!(
            "
GPU time per pass kind, level and node (medians over the profiled dispatches)"
        );
        for r in &rows {
            if let Some(b) = profiles.get(r.name) {
                profile::print(r.name, b);
            }
        }
    }
    report::print_scratch(&rows);
    if let Some(p) = &pass {
        report::print_pass_through(p);
    }
    let header = Header {
        device: name.clone(),
        driver,
        driver_info: info,
        date: device::date(),
        commit: device::commit(),
        quick: s.quick,
        runs: s.runs,
        warmup: s.warmup,
    };
    let doc = report::to_json(&header, &rows, pass.as_ref(), &profiles);
    std::fs::create_dir_all(&opts.out_dir).map_err(|e| format!("{}: {e}", opts.out_dir.display()))?;
    let path = opts.out_dir.join(format!("{}.json", report::slug(&name)));
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// Runs `names` (workloads needing the same features) on one device with
/// those features; where the device offers none, says so for each.
fn run_group(
    instance: &ash::Instance,
    pd: ash::vk::PhysicalDevice,
    names: &[&str],
    messages: Option<&Messages>,
    opts: &Options,
) -> Result<Vec<Row>, String> {
    let features = workloads::features(names[0]);
    let marks = opts.profile_child.as_deref();
    if let Some(why) = features.missing(instance, pd) {
        for w in names {
            if let Some(file) = marks {
                profile::mark(file, w)?;
            }
            println!("running {w} ...\n  skipped: {why}");
        }
        return Ok(Vec::new());
    }
    let gpu = features.device(instance, pd)?;
    let ctx = Ctx::new(&gpu, opts.settings, opts.scratch_search, messages)?;
    run_workloads(&ctx, names, marks)
}

/// Runs `names` on `ctx`'s device; marks in `profile_marks` (the profiled
/// run) where each begins.
fn run_workloads(ctx: &Ctx<'_>, names: &[&str], profile_marks: Option<&std::path::Path>) -> Result<Vec<Row>, String> {
    let mut rows: Vec<Row> = Vec::new();
    for &w in names {
        if let Some(file) = profile_marks {
            profile::mark(file, w)?;
        }
        println!("running {w} ...");
        let row = match w {
            "chain" => workloads::chain::run(ctx)?,
            "empty-levels" => workloads::empty::run(ctx, "empty-levels", 0)?,
            "busy-levels" => workloads::empty::run(ctx, "busy-levels", workloads::empty::LEVELS - 1)?,
            "fanout" => workloads::fanout::run(ctx)?,
            "classify" => workloads::classify::run(ctx, "classify", 1 << 20, 64 << 10)?,
            "classify-4m" => workloads::classify::run(ctx, "classify-4m", 4 << 20, 256 << 10)?,
            "refine" => workloads::refine::run(ctx)?,
            "deferred-1080p" => workloads::deferred::run(ctx, "deferred-1080p", (1920, 1080), (320, 192))?,
            "deferred-4k" => workloads::deferred::run(ctx, "deferred-4k", (3840, 2160), (640, 384))?,
            _ => workloads::mesh::run(ctx)?,
        };
        println!(
            "  {:.1} µs graph, {:.1} µs baseline, ratio {:.2} (results match)",
            row.graph_us,
            row.baseline_us,
            row.ratio()
        );
        if let Some(line) = report::scratch_line(&row.scratch) {
            println!("  {line}");
        }
        rows.push(row);
    }
    Ok(rows)
}
