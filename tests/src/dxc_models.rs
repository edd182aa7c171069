//! The DXC corpus (`spirv-lowering/tests/dxc/`: HLSL work graphs compiled by
//! a real DXC 1.9, at default optimisation and at `-O0`), a CPU model of
//! each of its graphs, and [`run_graph`], which runs one through the layer
//! on lavapipe and returns the storage buffer for comparison.
//!
//! Each model follows the header comment of its `.hlsl` file, which states
//! what every node adds where; all writes are integer atomics (or plain
//! stores of values every writer agrees on), so results do not depend on
//! scheduling order.

use ash::vk;

use crate::graph::{SpecEntries, Stage, TestGraph};
use crate::{InstanceOptions, TestDevice, TestInstance};

/// One corpus source compiled twice.
pub struct DxcModule {
    /// The `.hlsl` stem, for messages.
    pub name: &'static str,
    /// `dxc -T lib_6_8 -spirv -fspv-target-env=vulkan1.3` (default `-O3`).
    pub optimized: &'static [u8],
    /// The same with `-O0 -Vd`.
    pub o0: &'static [u8],
}

/// Which build of a [`DxcModule`] a test runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opt {
    /// Default optimisation (`-O3`).
    Default,
    /// `-O0` (the shape of debug builds: wrapper functions, Function-variable copies).
    O0,
}

impl DxcModule {
    /// The SPIR-V bytes of the build `opt`.
    pub fn spv(&self, opt: Opt) -> &'static [u8] {
        match opt {
            Opt::Default => self.optimized,
            Opt::O0 => self.o0,
        }
    }
}

macro_rules! dxc_module {
    ($name:literal) => {
        DxcModule {
            name: $name,
            optimized: include_bytes!(concat!("../../spirv-lowering/tests/dxc/", $name, ".spv")),
            o0: include_bytes!(concat!("../../spirv-lowering/tests/dxc/", $name, ".O0.spv")),
        }
    };
}

/// `spawn` (static grid) -> `grid1` (`uint` grid), `grid3` (`uint3` grid at offset 4).
pub const BROADCAST: DxcModule = dxc_module!("broadcast");
/// `layouts` (thread, scalar-layout `Wide` input) -> `grid16` (`uint16_t3` grid).
pub const LAYOUT16: DxcModule = dxc_module!("layout16");
/// `feed` -> `coal` (coalescing), `thr` (thread), `tick`/`tock` (empty records).
pub const COALESCE_THREAD: DxcModule = dxc_module!("coalesce_thread");
/// `start` -> `each` (thread records), `batch` (group records), through helpers.
pub const HELPERS: DxcModule = dxc_module!("helpers");
/// `deepen` (recursive, depth 3) -> itself, `leaf`.
pub const RECURSION: DxcModule = dxc_module!("recursion");
/// `split` -> `first` (+ `second` sharing its input), `gather` (RW shared input).
pub const SHARING: DxcModule = dxc_module!("sharing");
/// `main`, to be renamed ("fanout", 0): dense, sparse and unbounded output arrays.
pub const RENAMED_FANOUT: DxcModule = dxc_module!("renamed_fanout");
/// `main`, to be renamed to every array member; adds its specialization constant 0.
pub const RENAMED_SINK: DxcModule = dxc_module!("renamed_sink");

/// One graph run: what to create, what to dispatch, what to read back.
pub struct GraphRun<'a> {
    /// For messages: corpus file and build.
    pub label: String,
    /// Core features the node shaders need (e.g. `shaderInt16`).
    pub features: vk::PhysicalDeviceFeatures,
    /// Modules with the stages taken from each, in node-index order.
    pub modules: &'a [(&'a [u8], &'a [Stage<'a>])],
    /// Specialization data by stage position.
    pub specs: &'a [(usize, SpecEntries<'a>)],
    /// Words of the storage buffer at set 0 binding 0 (cleared to 0 first).
    pub out_words: usize,
    /// The node the host records go to.
    pub entry: (&'a str, u32),
    /// The host records, `count` of them, `stride` bytes apart.
    pub records: &'a [u8],
    pub count: u32,
    pub stride: u64,
}

/// Creates the graph through the layer, checks that every stage got the
/// node (name, index) it should (its override, else the entry point's name
/// and index 0, which is what DXC gives a library node without `[NodeID]`),
/// dispatches the records once and returns the buffer. Panics with the
/// run's label on any failure; fails on any validation message.
pub fn run_graph(run: &GraphRun<'_>) -> Vec<u32> {
    let label = &run.label;
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    let result = {
        let dev = TestDevice::with_amdx_features(&inst, pd, run.features).expect("device");
        let out = dev
            .create_host_buffer(4 * run.out_words as u64, vk::BufferUsageFlags::STORAGE_BUFFER)
            .expect("storage buffer");
        out.write_u32(&vec![0; run.out_words]).expect("clear");
        let graph = TestGraph::from_modules_specialized(&dev, run.modules, run.specs, &[&out], 0)
            .unwrap_or_else(|e| panic!("{label}: creating the graph: {e}"));
        let stages = run.modules.iter().flat_map(|(_, stages)| stages.iter());
        for (position, stage) in stages.enumerate() {
            let (name, index) = stage.node.unwrap_or((stage.entry, 0));
            let got = graph.node_index(name, index).unwrap_or_else(|e| panic!("{label}: node ({name}, {index}): {e}"));
            assert_eq!(got, position as u32, "{label}: node index of ({name}, {index})");
        }
        let entry = graph
            .node_index(run.entry.0, run.entry.1)
            .unwrap_or_else(|e| panic!("{label}: entry node {:?}: {e}", run.entry));
        let (min, _, _) = graph.scratch_sizes().expect("scratch sizes");
        let scratch = graph.scratch(min).expect("scratch");
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(entry, run.records, run.count, run.stride)]))
            .unwrap_or_else(|e| panic!("{label}: dispatch: {e}"));
        out.read_u32(run.out_words).expect("read back")
    };
    inst.finish();
    result
}

/// Asserts `got == want`, naming every differing word (at most 16) first.
pub fn assert_words(label: &str, got: &[u32], want: &[u32]) {
    let diffs: Vec<String> = got
        .iter()
        .zip(want)
        .enumerate()
        .filter(|(_, (g, w))| g != w)
        .take(16)
        .map(|(i, (g, w))| format!("word {i}: got {g}, model {w}"))
        .collect();
    assert!(diffs.is_empty() && got.len() == want.len(), "{label}: differs from the CPU model:\n{}", diffs.join("\n"));
}

/// Little-endian bytes of `words`.
pub fn bytes_of(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// broadcast.hlsl: one `SpawnRec { base, scale }` per entry; 256 words.
pub fn broadcast(records: &[(u32, u32)]) -> Vec<u32> {
    let mut out = vec![0u32; 256];
    let mut add = |i: u32, v: u32| out[i as usize] = out[i as usize].wrapping_add(v);
    for &(base, scale) in records {
        // spawn: static grid (3, 2, 1) of 4x2 threads, g = gid.y * 3 + gid.x.
        for g in 0..6u32 {
            for t in 0..8 {
                add(g * 8 + t, base);
            }
            // grid1: `uint` grid g % 4 + 1 groups of 16 threads.
            let value = base.wrapping_mul(scale).wrapping_add(g);
            for x in 0..g % 4 + 1 {
                for t in 0..16 {
                    add(64 + x * 16 + t, value);
                }
            }
            // grid3: `uint3` grid, groups of 2x2x2 threads.
            let tag = base.wrapping_add(100 * g);
            for z in 0..g % 3 + 1 {
                for y in 0..g / 3 + 1 {
                    for x in 0..g % 2 + 1 {
                        let l = x + 2 * (y + 2 * z);
                        for t in 0..8 {
                            add(128 + l * 8 + t, tag);
                        }
                    }
                }
            }
        }
    }
    out
}

/// layout16.hlsl's `Wide` record (HLSL scalar layout, 44 bytes).
#[derive(Debug, Clone, Copy)]
pub struct Wide {
    pub h: u16,
    pub k: u16,
    pub a: u32,
    pub s: [u32; 3],
    pub c: [u32; 2],
    pub d: [u32; 3],
    pub e: [u16; 2],
}

impl Wide {
    /// Size of the record as DXC lays it out (= the stride of an array of them).
    pub const SIZE: usize = 44;

    /// The record's bytes: h @0, k @2, a @4, s @8, c @20, d @28, e @40.
    pub fn bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(Self::SIZE);
        b.extend(self.h.to_le_bytes());
        b.extend(self.k.to_le_bytes());
        b.extend(self.a.to_le_bytes());
        for w in self.s.iter().chain(&self.c).chain(&self.d) {
            b.extend(w.to_le_bytes());
        }
        b.extend(self.e[0].to_le_bytes());
        b.extend(self.e[1].to_le_bytes());
        debug_assert_eq!(b.len(), Self::SIZE);
        b
    }
}

/// layout16.hlsl: one `Wide` per entry; 128 words.
pub fn layout16(records: &[Wide]) -> Vec<u32> {
    let mut out = vec![0u32; 128];
    let mut add = |i: u32, v: u32| out[i as usize] = out[i as usize].wrapping_add(v);
    for w in records {
        let fields = [
            u32::from(w.h),
            u32::from(w.k),
            w.a,
            w.s[0],
            w.s[1],
            w.s[2],
            w.c[0],
            w.c[1],
            w.d[0],
            w.d[1],
            w.d[2],
            u32::from(w.e[0]),
            u32::from(w.e[1]),
            1,
        ];
        for (i, &v) in fields.iter().enumerate() {
            add(i as u32, v);
        }
        // G16 { tag = h + k (16-bit arithmetic), grid, value = a } -> grid16.
        let tag = u32::from(w.h.wrapping_add(w.k));
        let grid = [w.s[0] % 4 + 1, w.c[1] % 2 + 1, w.d[2] % 2 + 1];
        for z in 0..grid[2] {
            for y in 0..grid[1] {
                for x in 0..grid[0] {
                    let l = x + 4 * (y + 2 * z);
                    for t in 0..4 {
                        add(64 + l * 4 + t, w.a.wrapping_add(tag));
                    }
                }
            }
        }
    }
    out
}

/// coalesce_thread.hlsl: one `FeedRec { n, mul }` per entry (n <= 32); 64 words.
pub fn coalesce_thread(records: &[(u32, u32)]) -> Vec<u32> {
    let mut out = vec![0u32; 64];
    let mut add = |i: u32, v: u32| out[i as usize] = out[i as usize].wrapping_add(v);
    for &(n, mul) in records {
        for i in 0..n {
            // coal: the record's value, and each group adds its Count().
            add(8 + i % 16, mul.wrapping_mul(i).wrapping_add(1));
            add(0, 1);
            // thr: two records a live thread.
            add(32 + i, mul.wrapping_add(i));
            add(32 + (i + 5) % 32, 1000);
            // tick: one empty record a live thread; per record a thread adds
            // 1 to word 1 and the group's Count() goes to word 4.
            add(1, 1);
            add(4, 1);
        }
        // tock: 3 empty records, each a static grid of 2 groups x 2 threads.
        add(2, 3 * 2 * 2);
    }
    out
}

/// helpers.hlsl: one `StartRec { seed }` per entry; 64 words.
pub fn helpers(seeds: &[u32]) -> Vec<u32> {
    let mut out = vec![0u32; 64];
    let mut add = |i: u32, v: u32| out[i as usize] = out[i as usize].wrapping_add(v);
    for &seed in seeds {
        for g in 0..2u32 {
            for t in 0..8 {
                let k = g * 8 + t;
                add(k, seed.wrapping_add(k));
                add(k + 16, seed.wrapping_mul(2).wrapping_add(k + 16));
            }
            // batch: value * weight, and the group's Count().
            add(40 + g, seed.wrapping_mul(3).wrapping_add(g).wrapping_mul(5));
            add(48, 1);
        }
    }
    out
}

/// recursion.hlsl: one `Rec { id, tag }` per entry; 48 words.
pub fn recursion(records: &[(u32, u32)]) -> Vec<u32> {
    fn visit(out: &mut [u32], id: u32, tag: u32, depth: u32) {
        let levels = 3 - depth;
        // The self output is valid while a level remains (it can be allocated).
        let valid = u32::from(levels > 0);
        out[depth as usize] += 1;
        out[8 + depth as usize] |= 1 << (levels * 2 + valid);
        out[16 + id as usize] = out[16 + id as usize].wrapping_add(tag);
        if levels > 0 {
            for t in 0..2 {
                visit(out, id * 2 + 1 + t, tag.wrapping_mul(2).wrapping_add(t), depth + 1);
            }
        } else {
            out[40] = out[40].wrapping_add(id);
            out[41] += 1;
        }
    }
    let mut out = vec![0u32; 48];
    for &(id, tag) in records {
        visit(&mut out, id, tag, 0);
    }
    out
}

/// sharing.hlsl: one `SplitRec { base }` per entry; 48 words.
pub fn sharing(bases: &[u32]) -> Vec<u32> {
    let mut out = vec![0u32; 48];
    let mut add = |i: u32, v: u32| out[i as usize] = out[i as usize].wrapping_add(v);
    for &base in bases {
        for t in 0..4 {
            let value = base.wrapping_add(t);
            add(4 * t, value); // first
            add(4 * t + 1, value.wrapping_mul(10)); // second, on first's records
        }
        // gather: 8 groups fill parts[g] = g * 10 + 1; one of them sums.
        add(32 + base % 4, (0..8).map(|g| g * 10 + 1).sum());
        add(36 + base % 4, 1);
    }
    out
}

/// The members of renamed_fanout's arrays that the graph has.
pub const FANOUT_DENSE: [u32; 4] = [2, 3, 4, 5];
pub const FANOUT_SPARSE: [u32; 4] = [1, 3, 4, 6];
pub const FANOUT_UNBOUNDED: [u32; 5] = [0, 5, 9, 17, 31];

/// renamed_fanout.hlsl + renamed_sink.hlsl: one `FanRec { bias }` per entry;
/// each sink adds `value * 256 + index`; 128 words.
pub fn fanout(biases: &[u32]) -> Vec<u32> {
    let answer = |valid: bool| if valid { 2 } else { 1 };
    let mut out = vec![0u32; 128];
    for &bias in biases {
        let mut sink = |slot: u32, value: u32, index: u32| {
            out[slot as usize] = out[slot as usize].wrapping_add(value.wrapping_mul(256).wrapping_add(index));
        };
        for t in 0..4 {
            sink(t, bias.wrapping_add(100 + t), FANOUT_DENSE[t as usize]);
        }
        for t in 0..8 {
            if FANOUT_SPARSE.contains(&t) {
                sink(8 + t, bias.wrapping_add(200 + t), t);
            }
        }
        for t in 0..32 {
            if FANOUT_UNBOUNDED.contains(&t) {
                sink(32 + t, bias.wrapping_add(300 + t), t);
            }
        }
        for t in 0..8u32 {
            out[64 + t as usize] = answer(FANOUT_SPARSE.contains(&t));
        }
        for t in 0..32u32 {
            out[96 + t as usize] = answer(FANOUT_UNBOUNDED.contains(&t));
        }
        out[72] = answer(false);
    }
    out
}
