//! Lowering time per node on the largest corpus module (plain std::time,
//! median of many runs). `cargo bench -p spirv-lowering --bench lowering`.

use spirv_lowering::{analyze, lower, LowerOptions, ParsedModule};
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "spv"))
        .collect();
    files.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    let largest = files.last().expect("a corpus module");
    let bytes = std::fs::read(largest).expect("read");
    let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let names: Vec<String> = analyze(&words).expect("analyze").into_iter().map(|i| i.name).collect();
    let runs = std::env::var("RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(2001);
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        for n in &names {
            let mut o = LowerOptions::new(n);
            o.push_offset = 64;
            let l = lower(&words, &o).expect("lower");
            std::hint::black_box(l);
        }
        samples.push(t.elapsed().as_secs_f64() * 1e6 / names.len() as f64);
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    // Parsed once, each entry point lowered from a clone (the runtime's path).
    let parsed = ParsedModule::parse(&words).expect("parse");
    let mut shared = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        for n in &names {
            let mut o = LowerOptions::new(n);
            o.push_offset = 64;
            std::hint::black_box(parsed.lower(&o).expect("lower"));
        }
        shared.push(t.elapsed().as_secs_f64() * 1e6 / names.len() as f64);
    }
    shared.sort_by(|a, b| a.total_cmp(b));
    let t = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(analyze(&words).expect("analyze"));
    }
    let analyze_us = t.elapsed().as_secs_f64() * 1e6 / runs as f64;
    println!(
        "{}: {} bytes, {} nodes; lower: median {:.1} us/node (p10 {:.1}, p90 {:.1}); parsed once: median {:.1} us/node; analyze (all nodes): {:.1} us",
        largest.file_name().unwrap().to_string_lossy(),
        bytes.len(),
        names.len(),
        samples[runs / 2],
        samples[runs / 10],
        samples[runs * 9 / 10],
        shared[runs / 2],
        analyze_us
    );
}
