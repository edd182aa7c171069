//! A graph of 4,096 nodes (issue 12): the members `("leaf", 0..4096)` of one
//! node array, all made from the one `leaf` entry point of `size.spv` (a
//! thread node writing `Out[id] = 3 id + 1`). The layer lowers and compiles
//! their shared kernel once (`layer/src/graph/kernels.rs`), so creation takes
//! milliseconds rather than one driver compile per stage; host records sent
//! to the first, a middle and the last member all run. Timings are printed
//! (`--nocapture`); they are measured, not asserted.

use std::time::Instant;

use ash::vk;
use conformance_tests::dxc_models::bytes_of;
use conformance_tests::graph::{Stage, TestGraph};
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

const SIZE: &[u8] = include_bytes!("../shaders/graphs/size.spv");

/// Members of the node array.
const MEMBERS: u32 = 4096;

#[test]
fn node_array_of_4096_members() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    let dev = TestDevice::with_amdx(&inst, pd).expect("device");
    let out = dev.create_host_buffer(4 * 16, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
    out.write_u32(&[0; 16]).expect("clear");
    let stages: Vec<Stage> = (0..MEMBERS).map(|i| Stage { entry: "leaf", node: Some(("leaf", i)) }).collect();
    let started = Instant::now();
    let graph = TestGraph::from_modules(&dev, &[(SIZE, &stages)], &[&out], 0).expect("graph");
    eprintln!("{MEMBERS} stages created in {:.3} s", started.elapsed().as_secs_f64());
    let sizes = graph.scratch_sizes().expect("sizes");
    let scratch = graph.scratch(sizes.0).expect("scratch");
    // (member, id): each member writes Out[id].
    let sent = [(0, 5u32), (MEMBERS / 2, 6), (MEMBERS - 1, 7)];
    let nodes: Vec<u32> = sent.iter().map(|&(m, _)| graph.node_index("leaf", m).expect("member")).collect();
    let payloads: Vec<Vec<u8>> = sent.iter().map(|&(_, id)| bytes_of(&[id])).collect();
    let dispatches: Vec<_> = nodes.iter().zip(&payloads).map(|(&n, p)| (n, &p[..], 1, 4)).collect();
    let started = Instant::now();
    dev.submit_once(|cb| graph.record(cb, &scratch, true, &dispatches)).expect("submit");
    eprintln!("one dispatch to 3 of {MEMBERS} members in {:.3} s", started.elapsed().as_secs_f64());
    let mut want = vec![0u32; 16];
    for &(_, id) in &sent {
        want[id as usize] = 3 * id + 1;
    }
    assert_eq!(out.read_u32(16).expect("read"), want);
}
