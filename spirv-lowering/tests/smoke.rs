//! No-panic smoke test: at least 100,000 mutated and truncated corpus modules
//! (fixed seed) through `analyze` and `lower`; any result is fine, a panic is not.

mod common;

use spirv_lowering::{analyze, lower, LowerOptions};
use std::time::Instant;

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

const CASES: usize = 100_000;

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
    let mut rng = Rng(0x5EED_0000_0000_0003);
    let t = Instant::now();
    let (mut ok, mut lowered) = (0usize, 0usize);
    let mut slowest = (std::time::Duration::ZERO, 0usize);
    for case in 0..CASES {
        let t_case = Instant::now();
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
        if analyze(&w).is_ok() {
            ok += 1;
        }
        // Lowering is costlier: every 8th case, on an entry point name of the original.
        if case % 8 == 0 {
            if let Some(n) = names[k].first() {
                let mut o = LowerOptions::new(n);
                o.thread_pack_width = 1 + (case % 3) as u32 * 16;
                if case % 64 == 0 {
                    // Extreme options must not panic either.
                    o.push_offset = (rng.next() as u32) & !7;
                    o.max_push_constants_size = rng.next() as u32;
                    o.thread_pack_width = rng.next() as u32;
                    o.shader_index = rng.next() as u32;
                }
                if lower(&w, &o).is_ok() {
                    lowered += 1;
                }
            }
        }
        let took = t_case.elapsed();
        if took > slowest.0 {
            slowest = (took, case);
        }
    }
    // A malformed module must not cost much more than a valid one (no
    // exponential walks): pipeline creation would hang on it.
    assert!(slowest.0.as_millis() < 2000, "case {} took {:?}", slowest.1, slowest.0);
    eprintln!("smoke: slowest case {} took {:?}", slowest.1, slowest.0);
    eprintln!(
        "smoke: {CASES} mutated modules ({} files), {ok} analyzed ok, {lowered} lowered ok, {:.2?}",
        originals.len(),
        t.elapsed()
    );
}
