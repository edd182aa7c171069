//! No-panic smoke test: 100,000 mutated and truncated corpus modules (fixed
//! seed) through `analyze` and `lower`; any result is fine, a panic is not.
//! A longer fuzzing run: `SPIRV_LOWERING_FUZZ_CASES=5000000
//! SPIRV_LOWERING_FUZZ_SEED=<any u64> cargo test --release -p spirv-lowering
//! --test smoke -- --nocapture` (the inputs that once failed are kept as
//! tests in `negative.rs`). A case that takes more than 20 s of CPU time
//! ends the run with its number; `SPIRV_LOWERING_FUZZ_DUMP=<case>` then writes
//! that case's module to `target/fuzz-case-<case>.spv` instead of running
//! anything.
//!
//! Both limits (a case under 2 s, a hang at 20 s) are in the test thread's
//! CPU time, which a loaded machine does not stretch: the slowest case takes
//! about 15 ms here, and lowering is single-threaded work that takes no lock,
//! so a hang burns CPU.

mod common;
mod cpu_time;

use spirv_lowering::{analyze, lower, LowerOptions};
use std::time::{Duration, Instant};

/// xorshift64*: tiny, deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Cases and seed: 100,000 from a fixed seed unless the environment says otherwise.
fn cases_and_seed() -> (usize, u64) {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
    (var("SPIRV_LOWERING_FUZZ_CASES").unwrap_or(100_000) as usize, var("SPIRV_LOWERING_FUZZ_SEED").unwrap_or(3))
}

#[test]
fn no_panic_on_mutated_modules() {
    let mut files = common::corpus();
    // The rejected inputs too: mutations of them must not panic either.
    if let Ok(rd) = std::fs::read_dir(common::crate_dir().join("tests/corpus/negative")) {
        let mut neg: Vec<_> =
            rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "spv")).collect();
        neg.sort();
        files.extend(neg);
    }
    let originals: Vec<Vec<u32>> = files.iter().map(|f| common::read_spv(f)).collect();
    let names: Vec<Vec<String>> = originals
        .iter()
        .map(|w| analyze(w).map(|v| v.into_iter().map(|i| i.name).collect()).unwrap_or_default())
        .collect();
    let (cases, seed) = cases_and_seed();
    let dump: Option<usize> = std::env::var("SPIRV_LOWERING_FUZZ_DUMP").ok().and_then(|v| v.parse().ok());
    let mut rng = Rng(0x5EED_0000_0000_0000 ^ seed.max(1));
    // A hang is a failure too: a watchdog names the case that has used
    // 20 s of this thread's CPU time.
    let clock = cpu_time::ThreadClock::current();
    let current = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    {
        let current = current.clone();
        std::thread::spawn(move || {
            let (mut last, mut since) = (usize::MAX, Duration::ZERO);
            loop {
                std::thread::sleep(Duration::from_secs(1));
                // The clock first, then the case: a case that starts in
                // between is charged from a little before its start.
                let Some(used) = clock.try_elapsed() else { return };
                let now = current.load(std::sync::atomic::Ordering::Relaxed);
                if now != last {
                    (last, since) = (now, used);
                } else if used - since > Duration::from_secs(20) {
                    eprintln!("smoke: case {now} (seed {seed}) used more than 20 s of CPU time: a hang");
                    std::process::exit(1);
                }
            }
        });
    }
    let t = Instant::now();
    let (mut ok, mut lowered) = (0usize, 0usize);
    let mut slowest = (Duration::ZERO, 0usize);
    for case in 0..cases {
        current.store(case, std::sync::atomic::Ordering::Relaxed);
        let t_case = clock.elapsed();
        let k = rng.below(originals.len());
        let mut w = originals[k].clone();
        match rng.below(6) {
            0 => w.truncate(rng.below(w.len())),
            1 | 2 => {
                // Flip a few words to small or random values (ids, opcodes, operands).
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(w.len());
                    w[i] = match rng.below(4) {
                        0 => rng.next() as u32,
                        1 => rng.below(64) as u32,
                        2 => w[i] ^ (1 << rng.below(32)),
                        _ => (w[i] & 0xffff_0000) | (5060 + rng.below(50)) as u32,
                    };
                }
            }
            3 => {
                // Change one instruction's word count.
                let i = 5 + rng.below(w.len().saturating_sub(5));
                w[i] = (w[i] & 0xffff) | ((rng.below(12) as u32) << 16);
            }
            4 => {
                // Delete a run of words.
                let i = rng.below(w.len());
                let n = 1 + rng.below(8);
                w.drain(i..(i + n).min(w.len()));
            }
            _ => {
                // Duplicate a run of words.
                let i = rng.below(w.len());
                let n = 1 + rng.below(8);
                let run: Vec<u32> = w[i..(i + n).min(w.len())].to_vec();
                w.splice(i..i, run);
            }
        }
        // Lowering is costlier: every 8th case, on an entry point name of the
        // original (the options drawn first, so that a dump replays the run).
        let options = names[k].first().filter(|_| case % 8 == 0).map(|n| {
            let mut o = LowerOptions::new(n);
            o.thread_pack_width = 1 + (case % 3) as u32 * 16;
            if case % 64 == 0 {
                // Extreme options must not panic either.
                o.push_offset = (rng.next() as u32) & !7;
                o.max_push_constants_size = rng.next() as u32;
                o.thread_pack_width = rng.next() as u32;
                o.shader_index = rng.next() as u32;
            }
            o
        });
        match dump {
            Some(d) if d != case => continue,
            Some(_) => {
                let path = common::crate_dir().join(format!("../target/fuzz-case-{case}.spv"));
                let bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
                std::fs::write(&path, bytes).expect("write the case");
                eprintln!("smoke: case {case} written to {} (options {options:?})", path.display());
                return;
            }
            None => {}
        }
        if analyze(&w).is_ok() {
            ok += 1;
        }
        if let Some(o) = options {
            if lower(&w, &o).is_ok() {
                lowered += 1;
            }
        }
        let took = clock.elapsed() - t_case;
        if took > slowest.0 {
            slowest = (took, case);
        }
    }
    // A malformed module must not cost much more than a valid one (no
    // exponential walks): pipeline creation would hang on it.
    assert!(slowest.0.as_millis() < 2000, "case {} took {:?} of CPU time", slowest.1, slowest.0);
    eprintln!("smoke: slowest case {} took {:?} of CPU time", slowest.1, slowest.0);
    eprintln!(
        "smoke: {cases} mutated modules (seed {seed}, {} files), {ok} analyzed ok, {lowered} lowered ok, {:.2?}",
        originals.len(),
        t.elapsed()
    );
}
