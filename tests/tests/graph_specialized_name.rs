//! Specialised node names (issue 5, item 7) through the layer on lavapipe:
//! the thread node `route` (`shaders/graphs/val-exempt/spec_route`) forwards
//! each record to the node named by an `OpSpecConstantStringAMDX` with
//! `SpecId 7` (default `"left"`). The application supplies the name as a
//! `VkSpecializationInfo` map entry with `constantID` 7 whose data is the
//! UTF-8 bytes of the name (size = byte length, no NUL). The same producer
//! and the same two consumers (`sink` as `("left", 0)`, `tally` as
//! `("right", 0)`, from `shaders/graphs/consumers`) are linked differently
//! by changing only the specialization data; the CPU model says which
//! consumer wrote each slot.

use ash::vk;
use conformance_tests::graph::{SpecEntries, Stage, TestGraph};
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

const ROUTE: &[u8] = include_bytes!("../shaders/graphs/val-exempt/spec_route.spv");
const CONSUMERS: &[u8] = include_bytes!("../shaders/graphs/consumers.spv");

/// Records sent to `route`: (slot, value).
const RECORDS: u32 = 8;

/// `sink` writes `value * 256 + index` (index 0), `tally` writes `value + 0x40000000`.
fn model(target: &str) -> Vec<u32> {
    (0..RECORDS)
        .map(|slot| {
            let value = 10 + slot;
            match target {
                "left" => value * 256,
                _ => value + 0x4000_0000,
            }
        })
        .collect()
}

/// Runs route -> {left, right, nœud} with `spec` on stage 0 and returns the buffer.
fn run(spec: Option<&[u8]>) -> Vec<u32> {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    let got = {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let words = RECORDS as usize;
        let out = dev.create_host_buffer(4 * words as u64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        out.write_u32(&vec![0; words]).expect("clear");
        let producer = [Stage { entry: "route", node: None }];
        let consumers =
            [Stage { entry: "sink", node: Some(("left", 0)) }, Stage { entry: "tally", node: Some(("right", 0)) }];
        let entries: Vec<(u32, &[u8])> = spec.map(|name| vec![(7, name)]).unwrap_or_default();
        let specs: Vec<(usize, SpecEntries<'_>)> = vec![(0, &entries)];
        let graph = TestGraph::from_modules_specialized(
            &dev,
            &[(ROUTE, &producer), (CONSUMERS, &consumers)],
            &specs,
            &[&out],
            0,
        )
        .expect("graph");
        let records: Vec<u8> = (0..RECORDS).flat_map(|slot| [slot, 10 + slot]).flat_map(u32::to_le_bytes).collect();
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, &records, RECORDS, 8)])).expect("submit");
        out.read_u32(words).expect("read")
    };
    inst.finish();
    got
}

#[test]
fn specialization_routes_to_right() {
    assert_eq!(run(Some(b"right")), model("right"));
}

#[test]
fn specialization_routes_to_left() {
    assert_eq!(run(Some(b"left")), model("left"));
}

#[test]
fn default_name_without_specialization() {
    assert_eq!(run(None), model("left"));
}

/// A multi-byte UTF-8 name: `tally` renamed `("nœud", 0)` and the
/// specialization data the 5 bytes of "nœud".
#[test]
fn utf8_specialized_name() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let words = RECORDS as usize;
        let out = dev.create_host_buffer(4 * words as u64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        out.write_u32(&vec![0; words]).expect("clear");
        let producer = [Stage { entry: "route", node: None }];
        let consumers =
            [Stage { entry: "sink", node: Some(("left", 0)) }, Stage { entry: "tally", node: Some(("nœud", 0)) }];
        let name = "nœud".as_bytes();
        assert_eq!(name.len(), 5);
        let entries: [(u32, &[u8]); 1] = [(7, name)];
        let graph = TestGraph::from_modules_specialized(
            &dev,
            &[(ROUTE, &producer), (CONSUMERS, &consumers)],
            &[(0, &entries)],
            &[&out],
            0,
        )
        .expect("graph");
        let records: Vec<u8> = (0..RECORDS).flat_map(|slot| [slot, 10 + slot]).flat_map(u32::to_le_bytes).collect();
        let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, &records, RECORDS, 8)])).expect("submit");
        assert_eq!(out.read_u32(words).expect("read"), model("right"));
    }
    inst.finish();
}

/// Both links on one device, both graphs dispatched in one submission: the
/// layer must not confuse the two pipelines made from the same SPIR-V.
#[test]
fn two_specializations_on_one_device() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let words = RECORDS as usize;
        let producer = [Stage { entry: "route", node: None }];
        let consumers =
            [Stage { entry: "sink", node: Some(("left", 0)) }, Stage { entry: "tally", node: Some(("right", 0)) }];
        let records: Vec<u8> = (0..RECORDS).flat_map(|slot| [slot, 10 + slot]).flat_map(u32::to_le_bytes).collect();
        let mut runs = Vec::new();
        for name in ["right", "left"] {
            let out = dev.create_host_buffer(4 * words as u64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
            out.write_u32(&vec![0; words]).expect("clear");
            let entries: [(u32, &[u8]); 1] = [(7, name.as_bytes())];
            let graph = TestGraph::from_modules_specialized(
                &dev,
                &[(ROUTE, &producer), (CONSUMERS, &consumers)],
                &[(0, &entries)],
                &[&out],
                0,
            )
            .expect("graph");
            let scratch = graph.scratch(graph.scratch_sizes().expect("sizes").0).expect("scratch");
            runs.push((name, out, graph, scratch));
        }
        dev.submit_once(|cb| {
            for (_, _, graph, scratch) in &runs {
                graph.record(cb, scratch, true, &[(0, &records, RECORDS, 8)]);
            }
        })
        .expect("submit");
        for (name, out, _, _) in &runs {
            assert_eq!(out.read_u32(words).expect("read"), model(name), "graph specialised to {name:?}");
        }
    }
    inst.finish();
}
