//! Runs lowered kernels on a real Vulkan device (lavapipe here; any Vulkan 1.3
//! device with buffer device address and int64) against a hand-built ABI
//! state, and checks what they wrote: record selection per launch mode, the
//! node-semantics builtins, allocation headers, output entries, node counters,
//! overflow and invalid-index handling. Without a usable device the tests fail
//! with a message (set SPIRV_LOWERING_NO_GPU=1 to skip them explicitly).

mod common;
mod gpu;

use gpu::{at, Gpu};
use spirv_lowering::abi::{ALLOC_FLAG_WORKGROUP, NO_NODE, STATUS_INVALID_NODE, STATUS_PAYLOAD_OVERFLOW};
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
    entry_capacity: u32,
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
            entry_capacity: 64,
            contiguous: None,
        }
    }
}

/// Writes the ABI state; payloads are scattered in reverse order 64 bytes apart
/// so that nothing can rely on records being contiguous.
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
    g.put32(at::DISPATCH + 12, s.workgroup_count);
    g.put32(at::DISPATCH + 16, n as u32);
    g.put32(at::DISPATCH + 20, s.node_slot);
    let a = g.addr(at::RECORDS);
    g.put64(at::DISPATCH + 24, a);
    for (i, (first, maxr)) in s.nodes.iter().enumerate() {
        let o = at::NODES + 16 * i;
        g.put32(o, *first);
        g.put32(o + 4, *maxr);
        g.put32(o + 8, i as u32);
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
    let a = g.addr(at::RING);
    g.put64(c, a);
    g.put32(c + 8, s.ring_capacity);
    let a = g.addr(at::ENTRIES);
    g.put64(c + 16, a);
    g.put32(c + 24, s.entry_capacity);
    let a = g.addr(at::NODE_COUNTS);
    g.put64(c + 32, a);
    let a = g.addr(at::LINKS);
    g.put64(c + 40, a);
    let a = g.addr(at::NODES);
    g.put64(c + 48, a);
    let a = g.addr(at::SINK);
    g.put64(c + 56, a);
    g.put32(c + 68, s.nodes.len() as u32);
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    payload: u64,
    slot: u32,
    rank: u32,
    count: u32,
    remaining: u32,
}

fn entries(g: &Gpu) -> Vec<Entry> {
    let n = g.get32(at::CTX + 28).min(g.get32(at::CTX + 24));
    (0..n as usize)
        .map(|e| {
            let o = at::ENTRIES + 24 * e;
            Entry {
                payload: g.get64(o),
                slot: g.get32(o + 8),
                rank: g.get32(o + 12),
                count: g.get32(o + 16),
                remaining: g.get32(o + 20),
            }
        })
        .collect()
}

fn status(g: &Gpu) -> u32 {
    g.get32(at::CTX + 64)
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
        entry_capacity: 64,
        contiguous: None,
    }
}

/// firstNode: dynamic-grid broadcast, two records' grids in one dispatch split
/// over x and y, Workgroup-visibility allocation of 2 records, enqueue.
#[test]
fn dynamic_broadcast_allocates_and_enqueues() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "firstNode", 0, 1);
    setup(&mut g, &first_node_setup(1 << 16, vec![1]));
    g.run(&words, "firstNode", 0, [2, 3, 1]); // 6 workgroups, 5 valid: L >= 5 returns
    assert_eq!(status(&g), 0, "status");
    let es = entries(&g);
    assert_eq!(es.len(), 5, "{es:?}");
    assert_eq!(g.get32(at::NODE_COUNTS + 4), 10);
    let mut ranks: Vec<u32> = es.iter().map(|e| e.rank).collect();
    ranks.sort();
    assert_eq!(ranks, vec![0, 2, 4, 6, 8]);
    let mut got = vec![];
    for e in &es {
        assert_eq!((e.slot, e.count, e.remaining), (1, 2, 4), "{e:?}");
        let p = g.off(e.payload);
        // AllocHeader just before the records.
        assert_eq!([g.get32(p - 16), g.get32(p - 12), g.get32(p - 4)], [1, 2, ALLOC_FLAG_WORKGROUP]);
        got.push([g.get32(p), g.get32(p + 4), g.get32(p + 8), g.get32(p + 12)]);
    }
    got.sort();
    // Record r, workgroup w of its grid, thread t: (recordIndex, (w*2+t)*2 + t + 1).
    let mut want = vec![];
    for (ri, grid) in [(7u32, 3u32), (9, 2)] {
        for w in 0..grid {
            want.push([ri, (w * 2) * 2 + 1, ri, (w * 2 + 1) * 2 + 2]);
        }
    }
    want.sort();
    assert_eq!(got, want);
    assert_eq!(g.get32(at::CTX + 12), 5 * 32, "ring top");
    // Entry 0 starts the first group of the meta pass after the level.
    assert_eq!(g.get32(at::CTX + 72), 1, "advance_groups.x");
}

/// The ring overflows after two allocations: status bit, sink, no entries for the rest.
#[test]
fn allocation_overflow_goes_to_sink() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "firstNode", 0, 1);
    setup(&mut g, &first_node_setup(64, vec![1]));
    g.run(&words, "firstNode", 0, [5, 1, 1]);
    assert_eq!(status(&g) & STATUS_PAYLOAD_OVERFLOW, STATUS_PAYLOAD_OVERFLOW);
    assert_eq!(entries(&g).len(), 2);
    assert_eq!(g.get32(at::NODE_COUNTS + 4), 4);
    assert_eq!(g.get32(at::SINK), NO_NODE, "failed allocations' header slot");
}

/// A missing node at the index: status bit, nothing enqueued.
#[test]
fn invalid_node_index_is_dropped() {
    let Some(mut g) = device() else { return };
    let words = lowered("01_hello_chain.spv", "firstNode", 0, 1);
    setup(&mut g, &first_node_setup(1 << 16, vec![NO_NODE]));
    g.run(&words, "firstNode", 0, [5, 1, 1]);
    assert_eq!(status(&g), STATUS_INVALID_NODE);
    assert_eq!(entries(&g).len(), 0);
    assert_eq!(g.get32(at::CTX + 12), 0, "nothing allocated in the ring");
    assert_eq!(g.get32(at::CTX + 72), 0, "no entry: advance_groups.x untouched");
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
            entry_capacity: 64,
            contiguous: None,
        },
    );
    g.run(&words, "secondNode", 8, [groups, 1, 1]);
    assert_eq!(status(g), 0);
    for k in 0..4u32 {
        let want: u32 = (0..n).filter(|i| i % 4 == k).map(|i| i + 1).sum();
        assert_eq!(g.get32(at::UAV + 4 * k as usize), want, "UAV[{k}] (pack {pack})");
    }
    let es = entries(g);
    assert_eq!(es.len(), n as usize);
    let mut eri: Vec<u32> = es.iter().map(|e| g.get32(g.off(e.payload))).collect();
    eri.sort();
    let mut want: Vec<u32> = (0..n).map(|i| i % 4).collect();
    want.sort();
    assert_eq!(eri, want);
    assert_eq!(g.get32(at::NODE_COUNTS + 8), n);
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
    let es = entries(&g);
    assert_eq!(es.len(), 1);
    assert_eq!((es[0].slot, es[0].count, es[0].remaining), (0, 1, 1));
    let p = g.off(es[0].payload);
    assert_eq!((g.get32(p), g.get32(p + 4)), (4, 2));
    setup(&mut g, &Setup { records: vec![(u32s(&[3, 1]), 0, 0)], ..base });
    g.run(&words, "recurse", 0, [1, 1, 1]);
    assert_eq!(g.get32(at::UAV + 12), 16);
    assert_eq!(entries(&g).len(), 0);
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
    let es = entries(&g);
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
    let mut got: Vec<(u32, u32)> = entries(&g).iter().map(|e| (e.slot, g.get32(g.off(e.payload)))).collect();
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
    setup(
        &mut g,
        &Setup { nodes: vec![(0, 0), (1, 0)], links: vec![vec![1]], ..Setup::new(vec![(u32s(&[5, 3]), 0, 0)], 1) },
    );
    g.run(&l.words, "funcParams", 0, [1, 1, 1]);
    let es = entries(&g);
    assert_eq!(es.len(), 1);
    assert_eq!(es[0].count, 4);
    let p = g.off(es[0].payload);
    let vals: Vec<u32> = (0..4).map(|i| g.get32(p + 4 * i)).collect();
    assert_eq!(vals, vec![5, 8, 11, 14]);
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
    let es = entries(&g);
    assert_eq!(es.len(), 8, "{es:?}");
    let mut got: Vec<(u32, u32)> = es
        .iter()
        .map(|e| {
            assert_eq!((e.slot, e.count), (1, 1));
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
    let mut got: Vec<[u32; 4]> = entries(&g)
        .iter()
        .map(|e| {
            let p = g.off(e.payload);
            [g.get32(p), g.get32(p + 4), g.get32(p + 8), g.get32(p + 12)]
        })
        .collect();
    got.sort();
    let mut want = vec![];
    for (i, gr) in grids.iter().enumerate() {
        for w in 0..*gr {
            let ri = 100 + i as u32;
            want.push([ri, (w * 2) * 2 + 1, ri, (w * 2 + 1) * 2 + 2]);
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
            entry_capacity: 256,
            ..Setup::new(vec![(u32s(&[1]), 0, 0)], 2)
        },
    );
    g.run(&words, "threadRecords", 0, [2, 1, 1]);
    assert_eq!(status(&g), 0);
    let mut got = vec![];
    for e in entries(&g) {
        assert_eq!(e.slot, 1);
        let p = g.off(e.payload);
        for i in 0..e.count as usize {
            got.push((g.get32(p + 8 * i), g.get32(p + 8 * i + 4)));
        }
    }
    got.sort();
    let mut want = vec![];
    for dtid in 0..64u32 {
        for i in 0..(dtid + 1) & 3 {
            want.push((dtid, i));
        }
    }
    assert_eq!(got, want);
    assert_eq!(g.get32(at::NODE_COUNTS + 4), want.len() as u32);
    assert_eq!(entries(&g).len(), (0..64u32).filter(|d| (d + 1) & 3 != 0).count());
}

/// 14: Workgroup-visibility allocation on a node array with base index 2; an
/// index past the array is dropped with a status bit.
#[test]
fn node_array_with_base_index() {
    let Some(mut g) = device() else { return };
    let words = lowered("14_output_group_records_array.spv", "groupRecords", 0, 1);
    let slots = vec![NO_NODE, NO_NODE, 10, 11, 12, 13];
    let s = Setup { nodes: vec![(0, 0); 14], links: vec![slots], ..Setup::new(vec![(u32s(&[5, 1]), 0, 0)], 1) };
    setup(&mut g, &s);
    g.run(&words, "groupRecords", 0, [1, 1, 1]);
    assert_eq!(status(&g), 0);
    let es = entries(&g);
    assert_eq!(es.len(), 1);
    assert_eq!((es[0].slot, es[0].count), (11, 5));
    let p = g.off(es[0].payload);
    assert_eq!((0..5).map(|i| g.get32(p + 4 * i)).collect::<Vec<_>>(), vec![1, 11, 21, 31, 41]);
    setup(&mut g, &Setup { records: vec![(u32s(&[5, 7]), 0, 0)], ..s });
    g.run(&words, "groupRecords", 0, [1, 1, 1]);
    assert_eq!(status(&g), STATUS_INVALID_NODE);
    assert_eq!(entries(&g).len(), 0);
}

/// 18: empty payloads: only counts travel (Invocation and Workgroup visibility).
#[test]
fn empty_outputs_count_only() {
    let Some(mut g) = device() else { return };
    let words = lowered("18_output_empty.spv", "emptyOutputs", 0, 1);
    let s =
        Setup { nodes: vec![(0, 0); 9], links: vec![vec![5], vec![6, 7, 8]], ..Setup::new(vec![(vec![], 0, 0)], 1) };
    setup(&mut g, &s);
    g.run(&words, "emptyOutputs", 0, [1, 1, 1]);
    assert_eq!(status(&g), 0);
    let mut got: Vec<(u32, u32)> = entries(&g).iter().map(|e| (e.slot, e.count)).collect();
    got.sort();
    let mut want = vec![(5, 1); 8];
    want.push((8, 4));
    assert_eq!(got, want);
    assert_eq!((g.get32(at::NODE_COUNTS + 20), g.get32(at::NODE_COUNTS + 32)), (8, 4));
}
