//! Runs lowered kernels on a real Vulkan device (lavapipe here; any Vulkan 1.3
//! device with buffer device address and int64) against a hand-built ABI
//! state, and checks what they wrote: record selection per launch mode, the
//! node-semantics builtins, allocation headers, output entries, node counters,
//! overflow and invalid-index handling. Without a usable device the tests fail
//! with a message (set SPIRV_LOWERING_NO_GPU=1 to skip them explicitly).

mod common;
mod gpu;

use gpu::{at, Gpu};
use spirv_lowering::abi::{
    ALLOC_FLAG_WORKGROUP, NO_NODE, RECORDS_INDEXED, RECORDS_LISTED, SCHEDULE_BATCHED, STATUS_INVALID_NODE,
    STATUS_PAYLOAD_OVERFLOW,
};
use spirv_lowering::{lower, LowerOptions};

fn device() -> Option<Gpu> {
    if std::env::var("SPIRV_LOWERING_NO_GPU").is_ok_and(|v| v == "1") {
        return None;
    }
    match Gpu::new() {
        Ok(g) => Some(g),
        Err(e) => panic!(
            "no usable Vulkan device ({e}); lavapipe: apt install mesa-vulkan-drivers; SPIRV_LOWERING_NO_GPU=1 skips"
        ),
    }
}

/// (schedule mode, records per workgroup, input stride, grid (offset, bytes, components)).
type Schedule = (u32, u32, u32, (u32, u32, u32));

struct Setup {
    /// (payload bytes, workgroup_start, remaining recursion)
    records: Vec<(Vec<u8>, u32, u32)>,
    workgroup_count: u32,
    node_slot: u32,
    /// (first_link, max_recursion) per slot
    nodes: Vec<(u32, u32)>,
    /// node slots per output link
    links: Vec<Vec<u32>>,
    ring_capacity: u32,
    /// Per slot: (schedule mode, records per workgroup, input stride, grid
    /// (offset, bytes, components)); slots without one are batched, one
    /// record a workgroup, stride 16.
    schedules: Vec<Schedule>,
    /// Place payloads contiguously at this stride (nodes that walk records with
    /// OpPtrAccessChain need it); default: scattered in reverse, 64 bytes apart.
    contiguous: Option<usize>,
}

impl Setup {
    fn new(records: Vec<(Vec<u8>, u32, u32)>, workgroup_count: u32) -> Setup {
        Setup {
            records,
            workgroup_count,
            node_slot: 0,
            nodes: vec![(0, 0)],
            links: vec![],
            ring_capacity: 1 << 16,
            schedules: vec![],
            contiguous: None,
        }
    }
}

/// Tag of the records a level reads in these tests (published records get `TAG + 1`).
const TAG: u32 = 2;

/// Writes the ABI state (version 3) for one kernel run at level 0 with
/// listed records; payloads are scattered in reverse order 64 bytes apart so
/// that nothing can rely on records being contiguous. `launched` is left at
/// u32::MAX so no workgroup becomes the level's finisher.
fn setup(g: &mut Gpu, s: &Setup) {
    g.bytes().fill(0);
    let n = s.records.len();
    for (i, (p, start, rem)) in s.records.iter().enumerate() {
        let off = match s.contiguous {
            Some(stride) => at::INPUTS + i * stride,
            None => at::INPUTS + (n - 1 - i) * 64,
        };
        g.bytes()[off..off + p.len()].copy_from_slice(p);
        let r = at::RECORDS + 16 * i;
        let a = g.addr(off);
        g.put64(r, a);
        g.put32(r + 8, *start);
        g.put32(r + 12, *rem);
    }
    // The harness pushes this dispatch whatever the node's slot.
    let d = at::DISPATCH;
    g.put32(d + 12, s.workgroup_count);
    g.put32(d + 16, n as u32);
    g.put32(d + 20, 0); // workgroup base
    g.put32(d + 24, RECORDS_LISTED);
    g.put32(d + 28, s.node_slot);
    let a = g.addr(at::RECORDS);
    g.put64(d + 32, a);
    for (i, (first, maxr)) in s.nodes.iter().enumerate() {
        let o = at::NODES + 16 * i;
        g.put32(o, *first);
        g.put32(o + 4, *maxr);
        g.put32(o + 8, i as u32);
    }
    for i in 0..s.nodes.len() {
        let (mode, per, stride, (goff, gbytes, gcomps)) =
            s.schedules.get(i).copied().unwrap_or((SCHEDULE_BATCHED, 1, 16, (0, 4, 0)));
        let o = at::SCHEDULES + 40 * i;
        for (k, v) in [mode, per, 1, goff, gbytes, gcomps, stride, 0, 0, 0].iter().enumerate() {
            g.put32(o + 4 * k, *v);
        }
    }
    for (k, slots) in s.links.iter().enumerate() {
        let o = at::LINKS + 16 * k;
        let a = g.addr(at::SLOTS + 64 * k);
        g.put64(o, a);
        g.put32(o + 8, slots.len() as u32);
        for (j, v) in slots.iter().enumerate() {
            g.put32(at::SLOTS + 64 * k + 4 * j, *v);
        }
    }
    let c = at::CTX;
    let ring = g.addr(at::RING);
    g.put64(c, ring);
    g.put64(c + 8, ring + u64::from(s.ring_capacity));
    g.put32(c + 24, s.ring_capacity);
    g.put32(c + 28, s.nodes.len() as u32);
    for (k, off) in
        [at::COUNTS, at::COUNTS1, at::DISPATCH, at::DISPATCH1, at::SCHEDULES, at::LINKS, at::NODES, at::SINK, at::INDEX]
            .iter()
            .enumerate()
    {
        let a = g.addr(*off);
        g.put64(c + 32 + 8 * k, a);
    }
    g.put32(c + 104, at::INDEX_SLOTS as u32 - 1);
    g.put32(c + 120, u32::MAX); // launched: never the finisher
    let a = g.addr(at::LEVEL_STATUS);
    g.put64(c + 128, a);
    g.put32(c + 136, TAG);
    // The sink's header says "nothing", as the layer writes it at scratch initialisation.
    g.put32(at::SINK, NO_NODE);
    g.put32(at::SINK + 4, 0);
    let a = g.addr(at::DONE_GROUPS);
    g.put64(c + 144, a);
}

/// A record the kernel published in the record index.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Published {
    node: u32,
    rank: u32,
    payload: u64,
    workgroup_start: u32,
    remaining: u32,
}

/// Every record published under `TAG + 1`, by (node, rank).
fn published(g: &Gpu) -> Vec<Published> {
    let ring = g.get64(at::CTX);
    let mut out: Vec<Published> = (0..at::INDEX_SLOTS)
        .map(|k| at::INDEX + 24 * k)
        .filter(|&o| g.get32(o) == TAG + 1)
        .map(|o| Published {
            node: g.get32(o + 4),
            rank: g.get32(o + 8),
            payload: ring + u64::from(g.get32(o + 12)),
            workgroup_start: g.get32(o + 16),
            remaining: g.get32(o + 20),
        })
        .collect();
    out.sort();
    out
}

/// Records counted for `node` at level 0 (low word of its counter).
fn counted(g: &Gpu, node: usize) -> u32 {
    g.get32(at::COUNTS + 8 * node)
}

fn status(g: &Gpu) -> u32 {
    g.get32(at::CTX + 108)
}

fn lowered(file: &str, entry: &str, push_offset: u32, pack: u32) -> Vec<u32> {
    lowered_with(file, entry, push_offset, pack, 0)
}

fn lowered_with(file: &str, entry: &str, push_offset: u32, pack: u32, shader_index: u32) -> Vec<u32> {
    let w = common::read_spv(&common::crate_dir().join("tests/corpus").join(file));
    let mut o = LowerOptions::new(entry);
    o.push_offset = push_offset;
    o.thread_pack_width = pack;
    o.shader_index = shader_index;
    let l = lower(&w, &o).unwrap();
    if std::env::var("SPIRV_LOWERING_SKIP_VAL").is_err() {
        common::validate(&l.words).unwrap();
    }
    l.words
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn first_node_setup(ring: u32, slots: Vec<u32>) -> Setup {
    // Two records: grid 3 (recordIndex 7) and grid 2 (recordIndex 9): 5 workgroups.
    Setup {
        records: vec![(u32s(&[3, 7]), 0, 0), (u32s(&[2, 9]), 3, 0)],
        workgroup_count: 5,
        node_slot: 0,
        nodes: vec![(0, 0), (1, 4)],
        links: vec![slots],
        ring_capacity: ring,
        // secondNode reads 8-byte records.
        schedules: vec![(SCHEDULE_BATCHED, 1, 16, (0, 4, 0)), (SCHEDULE_BATCHED, 1, 8, (0, 4, 0))],
        contiguous: None,
    }
}

/// firstNode: dynamic-grid broadcast, two records' grids in one dispatch split
/// over x and y, Workgroup-visibility allocation of 2 records, enqueue: every
/// record numbered for its target and published in the record index.
#[test]
fn dynamic_broadcast_allocates_and_enqueues() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "firstNode", 0, 1);
    setup(&mut g, &first_node_setup(1 << 16, vec![1]));
    g.run(&words, "firstNode", 0, [2, 3, 1]); // 6 workgroups, 5 valid: L >= 5 returns
    assert_eq!(status(&g), 0, "status");
    let ps = published(&g);
    assert_eq!(ps.iter().map(|p| p.rank).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>(), "{ps:?}");
    assert_eq!(counted(&g, 1), 10);
    let mut got = vec![];
    for p in &ps {
        assert_eq!((p.node, p.remaining), (1, 4), "{p:?}");
        let o = g.off(p.payload);
        got.push([g.get32(o), g.get32(o + 4)]);
    }
    // Records of one allocation are adjacent, after its AllocHeader.
    for pair in ps.chunks(2) {
        let o = g.off(pair[0].payload);
        if pair[1].payload == pair[0].payload + 8 {
            assert_eq!([g.get32(o - 16), g.get32(o - 12), g.get32(o - 4)], [1, 2, ALLOC_FLAG_WORKGROUP]);
        }
    }
    got.sort();
    // Record r, workgroup w of its grid, thread t: (recordIndex, (w*2+t)*2 + t + 1).
    let mut want = vec![];
    for (ri, grid) in [(7u32, 3u32), (9, 2)] {
        for w in 0..grid {
            want.push([ri, (w * 2) * 2 + 1]);
            want.push([ri, (w * 2 + 1) * 2 + 2]);
        }
    }
    want.sort();
    assert_eq!(got, want);
    assert_eq!(g.get32(at::CTX + 16), 5 * 32, "ring top");
}

/// Two levels with no pass between them: firstNode's last workgroup (the
/// finisher) sets up level 1 from the counters; secondNode then finds its
/// records in the record index, and its own finisher sets up level 2.
#[test]
fn the_last_workgroup_sets_up_the_next_level() {
    let Some(mut g) = device() else { return };
    let first = lowered("01_hello_chain.spv", "firstNode", 0, 1);
    let second = lowered("01_hello_chain.spv", "secondNode", 0, 8);
    let mut s = first_node_setup(1 << 16, vec![1]);
    s.nodes = vec![(0, 0), (1, 0), (2, 0)];
    s.links = vec![vec![1], vec![2]];
    s.schedules = vec![
        (SCHEDULE_BATCHED, 1, 8, (0, 4, 0)),
        (SCHEDULE_BATCHED, 8, 8, (0, 4, 0)),
        (SCHEDULE_BATCHED, 32, 4, (0, 4, 0)),
    ];
    setup(&mut g, &s);
    g.put32(at::CTX + 120, 6); // launched at level 0: the 2 x 3 grid below
    g.run(&first, "firstNode", 0, [2, 3, 1]);
    assert_eq!(status(&g), 0);
    assert_eq!(g.get32(at::CTX + 136), TAG + 1, "tag advanced");
    assert_eq!((g.get32(at::CTX + 124), g.get32(at::CTX + 116)), (2, 0), "launched and done at level 1");
    let d1 = at::DISPATCH1 + 48;
    let words: Vec<u32> = (0..8).map(|k| g.get32(d1 + 4 * k)).collect();
    // (Workgroup base 0: the other nodes launch nothing.)
    assert_eq!(words, vec![2, 1, 1, 2, 10, 0, RECORDS_INDEXED, 1], "node 1 at level 1: 8 records a workgroup");
    assert_eq!(g.get64(d1 + 40), g.get64(at::CTX), "input base: ring half 0");
    assert_eq!(g.get64(at::COUNTS1 + 8), 0, "level 1 counts from zero");
    // Level 1: secondNode adds each record's increment to UAV[recordIndex].
    g.run_at(&second, "secondNode", 0, [2, 1, 1], d1, 1);
    assert_eq!(status(&g), 0);
    let sum = |grid: u32| (0..grid * 2).map(|t| t * 2 + t % 2 + 1).sum::<u32>();
    assert_eq!((g.get32(at::UAV + 4 * 7), g.get32(at::UAV + 4 * 9)), (sum(3), sum(2)));
    assert_eq!(g.get32(at::CTX + 136), TAG + 2, "tag advanced again");
    let d2 = at::DISPATCH + 48 * 2;
    assert_eq!((g.get32(d2 + 16), g.get32(d2 + 12), g.get32(d2 + 24)), (10, 1, RECORDS_INDEXED), "node 2 at level 2");
    assert_eq!(g.get32(at::CTX + 120), 1, "launched at level 2");
}

/// The ring overflows after two allocations: status bit, sink, nothing published for the rest.
#[test]
fn allocation_overflow_goes_to_sink() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "firstNode", 0, 1);
    setup(&mut g, &first_node_setup(64, vec![1]));
    g.run(&words, "firstNode", 0, [5, 1, 1]);
    assert_eq!(status(&g) & STATUS_PAYLOAD_OVERFLOW, STATUS_PAYLOAD_OVERFLOW);
    assert_eq!(published(&g).len(), 4);
    assert_eq!(counted(&g, 1), 4);
    assert_eq!((g.get32(at::SINK), g.get32(at::SINK + 4)), (NO_NODE, 0), "the sink's header is left alone");
}

/// A missing node at the index: status bit, nothing enqueued.
#[test]
fn invalid_node_index_is_dropped() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "firstNode", 0, 1);
    setup(&mut g, &first_node_setup(1 << 16, vec![NO_NODE]));
    g.run(&words, "firstNode", 0, [5, 1, 1]);
    assert_eq!(status(&g), STATUS_INVALID_NODE);
    assert_eq!(published(&g).len(), 0);
    assert_eq!(g.get32(at::CTX + 16), 0, "nothing allocated in the ring");
}

fn second_node(g: &mut Gpu, pack: u32) {
    let words = lowered("01_hello_chain.spv", "secondNode", 8, pack);
    let n = 10u32;
    let records = (0..n).map(|i| (u32s(&[i % 4, i + 1]), 0, 0)).collect();
    let groups = n.div_ceil(pack);
    setup(
        g,
        &Setup {
            records,
            workgroup_count: groups,
            node_slot: 1,
            nodes: vec![(0, 0), (1, 0), (2, 0)],
            links: vec![vec![], vec![2]],
            ring_capacity: 1 << 16,
            schedules: vec![],
            contiguous: None,
        },
    );
    g.run(&words, "secondNode", 8, [groups, 1, 1]);
    assert_eq!(status(g), 0);
    for k in 0..4u32 {
        let want: u32 = (0..n).filter(|i| i % 4 == k).map(|i| i + 1).sum();
        assert_eq!(g.get32(at::UAV + 4 * k as usize), want, "UAV[{k}] (pack {pack})");
    }
    let es = published(g);
    assert_eq!(es.len(), n as usize);
    let mut eri: Vec<u32> = es.iter().map(|e| g.get32(g.off(e.payload))).collect();
    eri.sort();
    let mut want: Vec<u32> = (0..n).map(|i| i % 4).collect();
    want.sort();
    assert_eq!(eri, want);
    assert_eq!(counted(g, 2), n);
}

/// secondNode: thread launch, one record per workgroup and packed 8 per workgroup.
#[test]
fn thread_node_unpacked_and_packed() {
    let Some(mut g) = device() else { return };
    second_node(&mut g, 1);
    second_node(&mut g, 8);
}

/// thirdNode: coalescing, 32 records per workgroup, 40 records; counts per key.
#[test]
fn coalescing_node_sees_its_records() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "thirdNode", 0, 1);
    let records = (0..40u32).map(|i| (u32s(&[i % 4]), 0, 0)).collect();
    setup(&mut g, &Setup { node_slot: 2, nodes: vec![(0, 0); 3], ..Setup::new(records, 2) });
    g.run(&words, "thirdNode", 0, [2, 1, 1]);
    for k in 0..4 {
        assert_eq!(g.get32(at::UAV + 16 + 4 * k), 10, "UAV[4+{k}]");
    }
}

/// 02: static 4x2x1 grid of 8x4 workgroups; the dispatch is split over x/y with
/// extra workgroups past workgroup_count; ids are the node's own.
#[test]
fn static_broadcast_ids() {
    let Some(mut g) = device() else { return };
    let words = lowered("02_broadcast_static.spv", "staticGrid", 0, 1);
    setup(&mut g, &Setup::new(vec![(u32s(&[3, 5]), 0, 0)], 8));
    g.run(&words, "staticGrid", 0, [3, 3, 1]);
    for gy in 0..2u32 {
        for gx in 0..4u32 {
            for ty in 0..4u32 {
                for tx in 0..8u32 {
                    let (dx, dy) = (gx * 8 + tx, gy * 4 + ty);
                    let want = 15 + (gy * 4 + gx) * 100 + ty * 8 + tx;
                    assert_eq!(
                        g.get32(at::UAV + 4 * (dy * 32 + dx) as usize),
                        want,
                        "gid ({gx},{gy}) gtid ({tx},{ty})"
                    );
                }
            }
        }
    }
}

/// 19: RemainingRecursionLevelsAMDX from the record; a self-enqueue gets
/// parent - 1; with no levels left the node allocates 0 records (no entry).
#[test]
fn recursion_levels() {
    let Some(mut g) = device() else { return };
    let words = lowered("19_recursion.spv", "recurse", 0, 1);
    let base = Setup { nodes: vec![(0, 5)], links: vec![vec![0]], ..Setup::new(vec![(u32s(&[3, 1]), 0, 2)], 1) };
    setup(&mut g, &base);
    g.run(&words, "recurse", 0, [1, 1, 1]);
    assert_eq!(g.get32(at::UAV + 12), 16 + 2);
    let es = published(&g);
    assert_eq!(es.len(), 1);
    assert_eq!((es[0].node, es[0].rank, es[0].remaining), (0, 0, 1));
    let p = g.off(es[0].payload);
    assert_eq!((g.get32(p), g.get32(p + 4)), (4, 2));
    setup(&mut g, &Setup { records: vec![(u32s(&[3, 1]), 0, 0)], ..base });
    g.run(&words, "recurse", 0, [1, 1, 1]);
    assert_eq!(g.get32(at::UAV + 12), 16);
    assert_eq!(published(&g).len(), 0);
    assert_eq!(status(&g), 0);
}

/// 23: TrackFinishWritingAMDX: the producer zeroes the hidden counter; of the
/// consumer's 8 workgroups exactly the last one sees FinishWriting true.
#[test]
fn finish_writing_two_levels() {
    let Some(mut g) = device() else { return };
    let spawner = lowered("23_finish_writing.spv", "spawner", 0, 1);
    let gather = lowered("23_finish_writing.spv", "gather", 0, 1);
    setup(&mut g, &Setup { nodes: vec![(0, 0), (1, 0)], links: vec![vec![1]], ..Setup::new(vec![(vec![], 0, 0)], 1) });
    g.bytes()[at::RING..at::RING + 4096].fill(0xAB); // garbage the kernel must overwrite
    g.run(&spawner, "spawner", 0, [1, 1, 1]);
    let es = published(&g);
    assert_eq!(es.len(), 1);
    let p = g.off(es[0].payload);
    assert_eq!(g.get32(p), 8, "grid");
    assert_eq!(g.get32(p + 36), 0, "hidden counter zeroed");
    // Level 2: gather consumes that record.
    g.put64(at::RECORDS, es[0].payload);
    g.put32(at::RECORDS + 8, 0);
    g.put32(at::RECORDS + 12, 0);
    g.put32(at::DISPATCH + 12, 8);
    g.put32(at::DISPATCH + 16, 1);
    g.put32(at::DISPATCH + 20, 1);
    g.run(&gather, "gather", 0, [8, 1, 1]);
    assert_eq!(g.get32(p + 36), 8, "8 workgroups finished");
    assert_eq!(g.get32(at::UAV), (0..8).map(|i| i * 10 + 1).sum::<u32>());
}

/// 08: coalescing with 64 records per workgroup over 100 records; WorkgroupId reads 0.
#[test]
fn coalescing_count_and_workgroup_id() {
    let Some(mut g) = device() else { return };
    let words = lowered("08_coalescing_array.spv", "coalesce", 0, 1);
    let records = (0..100u32).map(|i| (u32s(&[i % 8, 1]), 0, 0)).collect();
    setup(&mut g, &Setup::new(records, 2));
    g.run(&words, "coalesce", 0, [2, 1, 1]);
    for k in 0..8usize {
        let want = (0..100).filter(|i| i % 8 == k).count() as u32;
        assert_eq!(g.get32(at::UAV + 4 * k), want, "key {k}");
    }
    assert_eq!(g.get32(at::UAV + 4 * 1023), 100, "sum of counts + gid.x (0)");
}

/// 24: RW coalesced input records are written in place.
#[test]
fn rw_input_records() {
    let Some(mut g) = device() else { return };
    let words = lowered("24_rw_input.spv", "rwInput", 0, 1);
    let records = (0..12u32).map(|i| (u32s(&[i * 3, 0]), 0, 0)).collect();
    setup(&mut g, &Setup::new(records, 2));
    g.run(&words, "rwInput", 0, [2, 1, 1]);
    for i in 0..12u32 {
        assert_eq!(g.get32(at::UAV + 4 * (i * 3) as usize), i * 6 + 1);
        let off = at::INPUTS + (11 - i as usize) * 64;
        assert_eq!(g.get32(off + 4), i * 6 + 1, "record {i} result member");
    }
}

/// 20: the ShaderIndexAMDX builtin reads LowerOptions::shader_index.
#[test]
fn shader_index_builtin() {
    let Some(mut g) = device() else { return };
    let words = lowered_with("20_shader_index_builtin.spv", "material", 0, 4, 42);
    let records = (0..6u32).map(|i| (u32s(&[i]), 0, 0)).collect();
    setup(&mut g, &Setup::new(records, 2));
    g.run(&words, "material", 0, [2, 1, 1]);
    for i in 0..6 {
        assert_eq!(g.get32(at::UAV + 4 * i), 42);
    }
}

/// 06: a u16x3 dispatch grid at offset 4.
#[test]
fn dynamic_grid_u16() {
    let Some(mut g) = device() else { return };
    if !g.has16 {
        eprintln!("skipped: device without 16-bit storage");
        return;
    }
    let words = lowered("06_broadcast_dynamic_u16x3.spv", "dynGrid16", 0, 1);
    let mut p = 5u32.to_le_bytes().to_vec();
    for v in [2u16, 3, 2, 7] {
        p.extend(v.to_le_bytes());
    }
    setup(&mut g, &Setup::new(vec![(p, 0, 0)], 12));
    g.run(&words, "dynGrid16", 0, [12, 1, 1]);
    for flat in 0..96 {
        assert_eq!(g.get32(at::UAV + 4 * flat), 12, "flat {flat}");
    }
    assert_eq!(g.get32(at::UAV + 4 * 96), 0);
}

/// v15: OpIsNodePayloadValidAMDX on a sparse node array guards the allocation.
#[test]
fn sparse_array_is_valid() {
    let Some(mut g) = device() else { return };
    let w = common::read_spv(&common::crate_dir().join("tests/corpus/val-exempt/v15_output_sparse_array.spv"));
    let l = lower(&w, &LowerOptions::new("sparseArray")).unwrap();
    let slots = vec![1, NO_NODE, 3, NO_NODE, 5, NO_NODE, 7, NO_NODE];
    let records = (0..16u32).map(|i| (u32s(&[i]), 0, 0)).collect();
    setup(&mut g, &Setup { nodes: vec![(0, 0); 8], links: vec![slots], ..Setup::new(records, 16) });
    g.run(&l.words, "sparseArray", 0, [16, 1, 1]);
    assert_eq!(status(&g), 0, "no invalid allocation happened");
    let mut got: Vec<(u32, u32)> = published(&g).iter().map(|e| (e.node, g.get32(g.off(e.payload)))).collect();
    got.sort();
    let mut want: Vec<(u32, u32)> = (0..16u32).filter(|v| (v & 7) % 2 == 0).map(|v| ((v & 7) + 1, v)).collect();
    want.sort();
    assert_eq!(got, want);
}

/// v25: payload pointers passed to helper functions (input array, record, output array).
#[test]
fn payload_pointers_through_functions() {
    let Some(mut g) = device() else { return };
    let w = common::read_spv(&common::crate_dir().join("tests/corpus/val-exempt/v25_payload_function_param.spv"));
    let l = lower(&w, &LowerOptions::new("funcParams")).unwrap();
    let stride4 = (SCHEDULE_BATCHED, 1, 4, (0, 4, 0));
    setup(
        &mut g,
        &Setup {
            nodes: vec![(0, 0), (1, 0)],
            links: vec![vec![1]],
            schedules: vec![stride4, stride4],
            ..Setup::new(vec![(u32s(&[5, 3]), 0, 0)], 1)
        },
    );
    g.run(&l.words, "funcParams", 0, [1, 1, 1]);
    let es = published(&g);
    assert_eq!(es.iter().map(|e| (e.node, e.rank)).collect::<Vec<_>>(), vec![(1, 0), (1, 1), (1, 2), (1, 3)]);
    let vals: Vec<u32> = es.iter().map(|e| g.get32(g.off(e.payload))).collect();
    assert_eq!(vals, vec![5, 8, 11, 14]);
    assert_eq!(es[1].payload, es[0].payload + 4, "one allocation: adjacent records");
}

/// 34: handles as values (Function variables, copies, phis, a helper taking
/// the variable and returning the handle, length and validity asked of the
/// variable): every write lands in the enqueued records.
#[test]
fn handles_as_values() {
    let Some(mut g) = device() else { return };
    let words = lowered("34_handles_as_values.spv", "handles", 0, 1);
    let base = 40;
    setup(
        &mut g,
        &Setup { nodes: vec![(0, 0), (1, 0)], links: vec![vec![1]], ..Setup::new(vec![(u32s(&[base]), 0, 0)], 1) },
    );
    g.run(&words, "handles", 0, [1, 1, 1]);
    assert_eq!(status(&g), 0);
    let es = published(&g);
    assert_eq!(es.len(), 8, "{es:?}");
    let mut got: Vec<(u32, u32)> = es
        .iter()
        .map(|e| {
            assert_eq!(e.node, 1);
            let p = g.off(e.payload);
            (g.get32(p), g.get32(p + 4))
        })
        .collect();
    got.sort();
    let mut want: Vec<(u32, u32)> = (0..4).flat_map(|t| [(base + t, 11), (100 + t, 11)]).collect();
    want.sort();
    assert_eq!(got, want);
}

/// v26: OpPtrAccessChain across input records, with the records contiguous
/// (`input_needs_contiguous_records`).
#[test]
fn ptr_access_chain_over_contiguous_records() {
    let Some(mut g) = device() else { return };
    let w = common::read_spv(&common::crate_dir().join("tests/corpus/val-exempt/v26_ptr_access_chain.spv"));
    let l = lower(&w, &LowerOptions::new("ptrWalk")).unwrap();
    assert!(l.info.input_needs_contiguous_records);
    let records = (0..20u32).map(|i| (u32s(&[if i < 16 { 2 } else { 3 }, i]), 0, 0)).collect();
    setup(&mut g, &Setup { contiguous: Some(8), ..Setup::new(records, 2) });
    g.run(&l.words, "ptrWalk", 0, [2, 1, 1]);
    assert_eq!(g.get32(at::UAV + 8), (0..16).sum::<u32>());
    assert_eq!(g.get32(at::UAV + 12), (16..20).sum::<u32>());
}

/// firstNode with 7 records (grids 1, 0, 4, 2, 16, 3, 1: one empty) in one
/// dispatch of 5x6 workgroups: the binary search finds each workgroup's record.
#[test]
fn dynamic_broadcast_many_records() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "firstNode", 0, 1);
    let grids = [1u32, 0, 4, 2, 16, 3, 1];
    let mut start = 0;
    let mut records = vec![];
    for (i, gr) in grids.iter().enumerate() {
        records.push((u32s(&[*gr, 100 + i as u32]), start, 0));
        start += gr;
    }
    let mut s = first_node_setup(1 << 20, vec![1]);
    s.records = records;
    s.workgroup_count = start;
    setup(&mut g, &s);
    g.run(&words, "firstNode", 0, [5, 6, 1]);
    assert_eq!(status(&g), 0);
    let mut got: Vec<[u32; 2]> = published(&g)
        .iter()
        .map(|e| {
            let p = g.off(e.payload);
            [g.get32(p), g.get32(p + 4)]
        })
        .collect();
    got.sort();
    let mut want = vec![];
    for (i, gr) in grids.iter().enumerate() {
        for w in 0..*gr {
            let ri = 100 + i as u32;
            want.push([ri, (w * 2) * 2 + 1]);
            want.push([ri, (w * 2 + 1) * 2 + 2]);
        }
    }
    want.sort();
    assert_eq!(got, want);
}

/// 03: a 3-D dynamic grid (uint3 at offset 0) decomposed x-fastest.
#[test]
fn dynamic_grid_3d() {
    let Some(mut g) = device() else { return };
    let words = lowered("03_broadcast_dynamic_uint3.spv", "dynGrid3", 0, 1);
    setup(&mut g, &Setup::new(vec![(u32s(&[3, 2, 2, 1000]), 0, 0)], 12));
    g.run(&words, "dynGrid3", 0, [4, 4, 1]);
    for flat in 0..12 * 16u32 {
        assert_eq!(g.get32(at::UAV + 4 * flat as usize), 1000 + flat % 16, "flat {flat}");
    }
    assert_eq!(g.get32(at::UAV + 4 * 12 * 16), 0);
}

/// 07: no input variable: the grid comes from the implicit uvec3 payload.
#[test]
fn implicit_grid_payload() {
    let Some(mut g) = device() else { return };
    let words = lowered("07_broadcast_no_input.spv", "noInput", 0, 1);
    setup(&mut g, &Setup::new(vec![(u32s(&[3, 2, 1]), 0, 0)], 6));
    g.run(&words, "noInput", 0, [6, 1, 1]);
    for y in 0..2u32 {
        for x in 0..3u32 {
            assert_eq!(g.get32(at::UAV + 4 * (y * 128 + x) as usize), x + y * 65536);
        }
    }
}

/// 04: a 1-D grid of 70000 workgroups (> 65535) dispatched as 65535 x 2: the
/// kernel still sees ids inside the full grid.
#[test]
fn grid_larger_than_65535_is_split() {
    let Some(mut g) = device() else { return };
    let words = lowered("04_broadcast_dynamic_uint1.spv", "dynGrid1", 0, 1);
    let mut p = u32s(&[1, 70000]);
    p.extend(0.5f32.to_le_bytes());
    p.extend(1.5f32.to_le_bytes());
    setup(&mut g, &Setup::new(vec![(p, 0, 0)], 70000));
    g.run(&words, "dynGrid1", 0, [65535, 2, 1]);
    let total = 70000 * 32;
    for dtid in [0usize, 1, 31, 32, 65535 * 32 - 1, 65535 * 32, 65535 * 32 + 1, total - 1] {
        let v = f32::from_bits(g.get32(at::UAV + 4 * dtid));
        let want = if dtid & 1 == 0 { 0.5 } else { 1.5 } + 70001.0;
        assert_eq!(v, want, "dtid {dtid}");
    }
    assert_eq!(g.get32(at::UAV + 4 * total), 0, "nothing past the grid");
}

/// 13: Invocation-visibility allocations with a per-thread count (0..3).
#[test]
fn per_thread_allocations() {
    let Some(mut g) = device() else { return };
    let words = lowered("13_output_thread_records.spv", "threadRecords", 0, 1);
    setup(
        &mut g,
        &Setup {
            nodes: vec![(0, 0), (1, 0)],
            links: vec![vec![1]],
            schedules: vec![(SCHEDULE_BATCHED, 1, 8, (0, 4, 0)); 2],
            ..Setup::new(vec![(u32s(&[1]), 0, 0)], 2)
        },
    );
    g.run(&words, "threadRecords", 0, [2, 1, 1]);
    assert_eq!(status(&g), 0);
    let mut got = vec![];
    for e in published(&g) {
        assert_eq!(e.node, 1);
        let p = g.off(e.payload);
        got.push((g.get32(p), g.get32(p + 4)));
    }
    got.sort();
    let mut want = vec![];
    for dtid in 0..64u32 {
        for i in 0..(dtid + 1) & 3 {
            want.push((dtid, i));
        }
    }
    assert_eq!(got, want);
    assert_eq!(counted(&g, 1), want.len() as u32);
    // 16 invocations each of 1, 2, 3 and 0 records of 8 bytes: headers and
    // records rounded to 16 (32, 32, 48), nothing for the zero allocations.
    assert_eq!(g.get32(at::CTX + 16), 16 * (32 + 32 + 48), "ring bytes");
}

/// 14: Workgroup-visibility allocation on a node array with base index 2; an
/// index past the array is dropped with a status bit.
#[test]
fn node_array_with_base_index() {
    let Some(mut g) = device() else { return };
    let words = lowered("14_output_group_records_array.spv", "groupRecords", 0, 1);
    let slots = vec![NO_NODE, NO_NODE, 10, 11, 12, 13];
    let s = Setup {
        nodes: vec![(0, 0); 14],
        links: vec![slots],
        schedules: vec![(SCHEDULE_BATCHED, 1, 4, (0, 4, 0)); 14],
        ..Setup::new(vec![(u32s(&[5, 1]), 0, 0)], 1)
    };
    setup(&mut g, &s);
    g.run(&words, "groupRecords", 0, [1, 1, 1]);
    assert_eq!(status(&g), 0);
    let es = published(&g);
    assert_eq!(es.iter().map(|e| (e.node, e.rank)).collect::<Vec<_>>(), (0..5).map(|r| (11, r)).collect::<Vec<_>>());
    assert_eq!(es.iter().map(|e| g.get32(g.off(e.payload))).collect::<Vec<_>>(), vec![1, 11, 21, 31, 41]);
    setup(&mut g, &Setup { records: vec![(u32s(&[5, 7]), 0, 0)], ..s });
    g.run(&words, "groupRecords", 0, [1, 1, 1]);
    assert_eq!(status(&g), STATUS_INVALID_NODE);
    assert_eq!(published(&g).len(), 0);
}

/// 18: empty payloads: only counts travel (Invocation and Workgroup visibility).
#[test]
fn empty_outputs_count_only() {
    let Some(mut g) = device() else { return };
    let words = lowered("18_output_empty.spv", "emptyOutputs", 0, 1);
    let s = Setup {
        nodes: vec![(0, 0); 9],
        links: vec![vec![5], vec![6, 7, 8]],
        schedules: vec![(SCHEDULE_BATCHED, 1, 4, (0, 4, 0)); 9],
        ..Setup::new(vec![(vec![], 0, 0)], 1)
    };
    setup(&mut g, &s);
    g.run(&words, "emptyOutputs", 0, [1, 1, 1]);
    assert_eq!(status(&g), 0);
    let got: Vec<(u32, u32)> = published(&g).iter().map(|e| (e.node, e.rank)).collect();
    let want: Vec<(u32, u32)> = (0..8).map(|r| (5, r)).chain((0..4).map(|r| (8, r))).collect();
    assert_eq!(got, want);
    assert_eq!((counted(&g, 5), counted(&g, 8)), (8, 4));
}
