//! Node arrays and `OpIsNodePayloadValidAMDX` (issue 5, item 3) through the
//! layer on lavapipe, against a CPU model. The producer
//! (`shaders/graphs/val-exempt/arrays_fanout`) sends records to three output
//! arrays: `("dense", 2 + t)` through `PayloadNodeBaseIndexAMDX 2` and
//! `PayloadNodeArraySizeAMDX 6`, a bounded sparse array `"sparse"` (size 8)
//! and an unbounded sparse array `"unb"`, each member a `sink` consumer from
//! a second module (`shaders/graphs/consumers`) renamed and re-indexed by the
//! application. Every consumer writes `value * 256 + ShaderIndexAMDX` at the
//! slot its record names, so the buffer shows which node index received
//! which record; the producer writes each validity answer it got. A second
//! test checks that the self output of a recursive node reads invalid
//! exactly when no recursion levels remain.

use ash::vk;
use conformance_tests::graph::{Stage, TestGraph};
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

const FANOUT: &[u8] = include_bytes!("../shaders/graphs/val-exempt/arrays_fanout.spv");
const RECURSION_ISVALID: &[u8] = include_bytes!("../shaders/graphs/val-exempt/recursion_isvalid.spv");
const CONSUMERS: &[u8] = include_bytes!("../shaders/graphs/consumers.spv");

/// Node indices that exist in the graph for each array.
const DENSE: [u32; 4] = [2, 3, 4, 5];
const SPARSE: [u32; 4] = [1, 3, 4, 6];
const UNBOUNDED: [u32; 5] = [0, 5, 9, 17, 31];

/// The validity words of the producer: 2 = true, 1 = false.
fn answer(valid: bool) -> u32 {
    if valid {
        2
    } else {
        1
    }
}

/// What `fanout` (input `bias`) and its consumers leave in the 128-word buffer.
fn model(bias: u32) -> Vec<u32> {
    let mut want = vec![0u32; 128];
    // Dense: threads 0..4 send to node index t = ("dense", 2 + t).
    for t in 0..4 {
        let index = 2 + t;
        want[index as usize] = (bias + 100 + t) * 256 + index;
        want[72 + t as usize] = answer(true);
    }
    // Sparse, size 8: threads 0..8 ask, send where present.
    for t in 0..8u32 {
        let present = SPARSE.contains(&t);
        want[64 + t as usize] = answer(present);
        if present {
            want[16 + t as usize] = (bias + 200 + t) * 256 + t;
        }
    }
    // Unbounded: all 32 threads ask, send where present.
    for t in 0..32u32 {
        let present = UNBOUNDED.contains(&t);
        want[80 + t as usize] = answer(present);
        if present {
            want[32 + t as usize] = (bias + 300 + t) * 256 + t;
        }
    }
    // Index 1,000,000 of the unbounded array.
    want[112] = answer(false);
    want
}

#[test]
fn node_arrays_dense_sparse_unbounded() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let out = dev.create_host_buffer(4 * 128, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        out.write_u32(&[0; 128]).expect("clear");
        let producer = [Stage { entry: "fanout", node: None }];
        let members: Vec<(&str, u32)> = DENSE
            .iter()
            .map(|&k| ("dense", k))
            .chain(SPARSE.iter().map(|&k| ("sparse", k)))
            .chain(UNBOUNDED.iter().map(|&k| ("unb", k)))
            .collect();
        let consumers: Vec<Stage<'_>> = members.iter().map(|&m| Stage { entry: "sink", node: Some(m) }).collect();
        let graph =
            TestGraph::from_modules(&dev, &[(FANOUT, &producer), (CONSUMERS, &consumers)], &[&out], 0).expect("graph");
        // Node order is the order of the stages as given.
        assert_eq!(graph.node_index("fanout", 0).expect("fanout"), 0);
        for (i, &(name, k)) in members.iter().enumerate() {
            assert_eq!(graph.node_index(name, k).expect("member"), 1 + i as u32, "({name}, {k})");
        }
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let bias = 7u32;
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, &bias.to_le_bytes(), 1, 4)])).expect("submit");
        let got = out.read_u32(128).expect("read");
        let want = model(bias);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "word {i}: got {g:#x}, model {w:#x}\ngot   {got:x?}\nmodel {want:x?}");
        }
    }
    inst.finish();
}

#[test]
fn is_valid_false_when_recursion_is_exhausted() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let out = dev.create_host_buffer(4 * 8, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        out.write_u32(&[0; 8]).expect("clear");
        let stages = [Stage { entry: "deepen", node: None }];
        let graph = TestGraph::from_modules(&dev, &[(RECURSION_ISVALID, &stages)], &[&out], 0).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, &0u32.to_le_bytes(), 1, 4)])).expect("submit");
        // MaxNodeRecursionAMDX 3: depth d sees 3 - d levels left; the self
        // output is valid while levels remain, so depth 3 is the last.
        let mut want = vec![0u32; 8];
        for depth in 0..=3u32 {
            let remaining = 3 - depth;
            want[depth as usize] = 0x100 | remaining << 4 | u32::from(remaining > 0);
        }
        assert_eq!(out.read_u32(8).expect("read"), want);
    }
    inst.finish();
}
