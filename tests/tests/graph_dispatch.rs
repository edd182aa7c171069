//! Host dispatch semantics through the layer on lavapipe, on the
//! D3D12HelloWorkGraphs chain (corpus module 01) and the coalescing node
//! (module 08), checked against CPU models: several entry nodes in one
//! dispatch, payload stride 0, zero counts, the same graph dispatched twice
//! in one command buffer and again in a later submission, two graphs
//! dispatched alternately, the application's compute state surviving a graph
//! dispatch, and a node shader the runtime rejects.

use ash::vk;
use conformance_tests::graph::{Stage, TestGraph, HELLO_CHAIN_STAGES};
use conformance_tests::models::add_hello_chain;
use conformance_tests::{compute, Error, InstanceOptions, TestDevice, TestInstance};

const COALESCE: &[u8] = include_bytes!("../../spirv-lowering/tests/corpus/08_coalescing_array.spv");
const SELF_WITHOUT_LIMIT: &[u8] =
    include_bytes!("../../spirv-lowering/tests/corpus/negative/n03_self_enqueue_without_recursion.spv");
const SCALE_ADD: &[u8] = include_bytes!("../shaders/scale_add.comp.spv");

fn le(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Runs `body` with a fresh instance and device with the extension.
fn with_device(body: impl FnOnce(&TestDevice<'_>)) {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        body(&dev);
    }
    inst.finish();
}

#[test]
fn several_entry_nodes_in_one_dispatch() {
    with_device(|dev| {
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(dev, &uav).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let first_node = graph.node_index("firstNode", 0).expect("first");
        let second_node = graph.node_index("secondNode", 0).expect("second");
        // (0, 2): a zero grid dispatches nothing.
        let first = [(2u32, 0u32), (0, 2), (5, 3)];
        let second = [(1u32, 100u32), (2, 7), (1, 11)];
        let first_bytes = le(&first.iter().flat_map(|&(g, r)| [g, r]).collect::<Vec<_>>());
        let second_bytes = le(&second.iter().flat_map(|&(r, i)| [r, i]).collect::<Vec<_>>());
        dev.submit_once(|cb| {
            graph.record(cb, &scratch, true, &[(first_node, &first_bytes, 3, 8), (second_node, &second_bytes, 3, 8)])
        })
        .expect("submit");
        let mut want = vec![0u32; 8];
        add_hello_chain(&mut want, &first, &second);
        assert_eq!(uav.read_u32(8).expect("read"), want);
    });
}

/// 4096 records (32 KiB, past the layer's staging threshold) twice in one
/// command buffer, then again in a second one: the staged host data of each
/// dispatch reaches the graph, and staging blocks are reused.
#[test]
fn large_host_dispatches_are_staged() {
    with_device(|dev| {
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(dev, &uav).expect("graph");
        let sizes = graph.scratch_sizes().expect("sizes");
        let scratch = graph.scratch((sizes.0 + (2 << 20)).next_multiple_of(sizes.2)).expect("scratch");
        let second_node = graph.node_index("secondNode", 0).expect("second");
        let second: Vec<(u32, u32)> = (0..4096).map(|i| (i % 4, i)).collect();
        let bytes = le(&second.iter().flat_map(|&(r, i)| [r, i]).collect::<Vec<_>>());
        let mut want = vec![0u32; 8];
        for (submission, dispatches) in [(0, 2), (1, 1)] {
            let list = vec![(second_node, &bytes[..], 4096, 8); dispatches];
            dev.submit_once(|cb| graph.record(cb, &scratch, submission == 0, &list)).expect("submit");
            for _ in 0..dispatches {
                add_hello_chain(&mut want, &[], &second);
            }
            assert_eq!(uav.read_u32(8).expect("read"), want, "after submission {submission}");
        }
    });
}

#[test]
fn stride_zero_and_zero_counts() {
    with_device(|dev| {
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(dev, &uav).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let one = le(&[3, 2]);
        // Stride 0: four copies of the same record; then a zero-count info.
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, &one, 4, 0), (0, &one, 0, 8)])).expect("submit");
        let mut want = vec![0u32; 8];
        add_hello_chain(&mut want, &[(3, 2); 4], &[]);
        assert_eq!(uav.read_u32(8).expect("read"), want);
        // A dispatch of nothing at all leaves everything as it was.
        dev.submit_once(|cb| graph.record(cb, &scratch, false, &[])).expect("empty dispatch");
        assert_eq!(uav.read_u32(8).expect("read"), want);
    });
}

#[test]
fn same_graph_twice_then_in_a_later_submission() {
    with_device(|dev| {
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(dev, &uav).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let records = [(4u32, 0u32), (1, 1)];
        let bytes = le(&records.iter().flat_map(|&(g, r)| [g, r]).collect::<Vec<_>>());
        dev.submit_once(|cb| {
            graph.record(cb, &scratch, true, &[(0, &bytes, 2, 8)]);
            graph.record(cb, &scratch, false, &[(0, &bytes, 2, 8)]);
        })
        .expect("submit");
        let mut want = vec![0u32; 8];
        add_hello_chain(&mut want, &records, &[]);
        add_hello_chain(&mut want, &records, &[]);
        assert_eq!(uav.read_u32(8).expect("read"), want);
        // Scratch stays initialised across submissions.
        dev.submit_once(|cb| graph.record(cb, &scratch, false, &[(0, &bytes, 2, 8)])).expect("second submit");
        add_hello_chain(&mut want, &records, &[]);
        assert_eq!(uav.read_u32(8).expect("read"), want);
    });
}

#[test]
fn two_graphs_dispatched_alternately() {
    with_device(|dev| {
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let out = dev.create_host_buffer(4096, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        out.write_u32(&[0; 1024]).expect("clear");
        let hello = TestGraph::hello_chain(dev, &uav).expect("hello graph");
        let coalesce =
            TestGraph::new(dev, COALESCE, &[Stage { entry: "coalesce", node: None }], &[&out], 0).expect("graph 2");
        let hello_scratch = hello.scratch(hello.scratch_sizes().expect("sizes").0).expect("scratch");
        let coalesce_scratch = coalesce.scratch(coalesce.scratch_sizes().expect("sizes").0).expect("scratch");
        let hello_bytes = le(&[2, 1]);
        let keyed = le(&(0..40u32).flat_map(|i| [i % 10, 1]).collect::<Vec<_>>());
        dev.submit_once(|cb| {
            hello.record(cb, &hello_scratch, true, &[(0, &hello_bytes, 1, 8)]);
            coalesce.record(cb, &coalesce_scratch, true, &[(0, &keyed, 40, 8)]);
            hello.record(cb, &hello_scratch, false, &[(0, &hello_bytes, 1, 8)]);
            coalesce.record(cb, &coalesce_scratch, false, &[(0, &keyed, 40, 8)]);
        })
        .expect("submit");
        let mut want_uav = vec![0u32; 8];
        add_hello_chain(&mut want_uav, &[(2, 1), (2, 1)], &[]);
        assert_eq!(uav.read_u32(8).expect("read"), want_uav);
        let got = out.read_u32(1024).expect("read");
        assert_eq!(&got[..10], &[8; 10], "each key 4 records x 2 dispatches");
        assert_eq!(got[1023], 80, "records counted by every workgroup");
    });
}

#[test]
fn compute_state_survives_a_graph_dispatch() {
    with_device(|dev| {
        let data: Vec<u32> = (0..256).collect();
        let buffer = dev.create_host_buffer(4 * 256, vk::BufferUsageFlags::STORAGE_BUFFER).expect("data");
        buffer.write_u32(&data).expect("write");
        let words = compute::spirv_words(SCALE_ADD).expect("spirv");
        let scale_add = dev.create_storage_compute(&words, 12, &buffer).expect("compute pipeline");
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(dev, &uav).expect("graph");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let hello_bytes = le(&[3, 0]);
        dev.submit_once(|cb| {
            dev.record_dispatch(cb, &scale_add, &compute::scale_add_push(3, 1, 256), 4);
            graph.record(cb, &scratch, true, &[(0, &hello_bytes, 1, 8)]);
            // No rebinding: the application's pipeline, set and push constants still hold.
            // SAFETY: recording into a valid command buffer.
            unsafe { dev.device.cmd_dispatch(cb, 4, 1, 1) };
            dev.host_read_barrier(cb);
        })
        .expect("submit");
        let want: Vec<u32> = data.iter().map(|v| (v * 3 + 1) * 3 + 1).collect();
        assert_eq!(buffer.read_u32(256).expect("read"), want);
        let mut want_uav = vec![0u32; 8];
        add_hello_chain(&mut want_uav, &[(3, 0)], &[]);
        assert_eq!(uav.read_u32(8).expect("read"), want_uav);
    });
}

#[test]
fn rejected_node_shader_fails_cleanly() {
    with_device(|dev| {
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        let result = TestGraph::new(dev, SELF_WITHOUT_LIMIT, &[Stage { entry: "recurse", node: None }], &[&uav], 0);
        match result {
            Err(Error::Vk { result, .. }) => assert_eq!(result, vk::Result::ERROR_INITIALIZATION_FAILED),
            Err(other) => panic!("unexpected error {other}"),
            Ok(_) => panic!("a node enqueueing to itself without MaxNodeRecursionAMDX was accepted"),
        }
        // The device stays usable: a valid graph created afterwards computes
        // what its model says.
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(dev, &uav).expect("graph after a rejected one");
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        let hello = le(&[4, 2]);
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, &hello, 1, 8)])).expect("submit");
        let mut want = vec![0u32; 8];
        add_hello_chain(&mut want, &[(4, 2)], &[]);
        assert_eq!(uav.read_u32(8).expect("read"), want);
    });
}

#[test]
fn node_overrides_and_partial_failure_in_one_call() {
    with_device(|dev| {
        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        uav.write_u32(&[0; 8]).expect("clear");
        let graph = TestGraph::hello_chain(dev, &uav).expect("graph");
        // Overrides: firstNode becomes ("entry", 7); the chain still links
        // (secondNode and thirdNode keep their names).
        let renamed = [
            Stage { entry: "firstNode", node: Some(("entry", 7)) },
            Stage { entry: "secondNode", node: None },
            Stage { entry: "thirdNode", node: None },
        ];
        let missing_entry = [Stage { entry: "noSuchEntryPoint", node: None }];
        let (result, pipelines) = graph.create_pipelines(&[&renamed, &missing_entry, &HELLO_CHAIN_STAGES]);
        assert_eq!(result, vk::Result::ERROR_INITIALIZATION_FAILED);
        assert!(pipelines[0] != vk::Pipeline::null() && pipelines[2] != vk::Pipeline::null());
        assert_eq!(pipelines[1], vk::Pipeline::null(), "the failed create info yields a null handle");
        // Node indices follow the stage order and honour the overrides.
        let other = TestGraph::adopt(&graph, pipelines[0]);
        assert_eq!(other.node_index("entry", 7).expect("renamed node"), 0);
        assert_eq!(other.node_index("thirdNode", 0).expect("third"), 2);
        assert!(other.node_index("firstNode", 0).is_err(), "the original name is gone");
        // SAFETY: created above, unused.
        unsafe { dev.device.destroy_pipeline(pipelines[2], None) };
    });
}
