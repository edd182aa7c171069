//! Shared by `graph_misuse.rs` and `graph_hostile_counts.rs`: a device
//! with the extension and the SharesInputWithAMDX graph (corpus 21) that
//! misused dispatches must leave untouched.

use ash::vk;
use conformance_tests::dxc_models::bytes_of;
use conformance_tests::graph::{Stage, TestGraph};
use conformance_tests::{HostBuffer, InstanceOptions, TestDevice, TestInstance};

const SHARES: &[u8] = include_bytes!("../../../spirv-lowering/tests/corpus/21_shares_input.spv");

/// Runs `body` with a fresh instance and device with the extension.
pub fn with_device(body: impl FnOnce(&TestDevice<'_>)) {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        body(&dev);
    }
    inst.finish();
}

/// The SharesInputWithAMDX graph (corpus 21) writing into 16 words that
/// start as 7s, its smallest scratch, and a record for `base`.
pub struct Shares<'d> {
    pub dev: &'d TestDevice<'d>,
    pub out: HostBuffer,
    pub graph: TestGraph<'d>,
    pub min: u64,
    pub scratch: HostBuffer,
    pub address: u64,
    pub base: u32,
    pub record: Vec<u8>,
}

impl<'d> Shares<'d> {
    pub fn new(dev: &'d TestDevice<'d>) -> Self {
        let out = dev.create_host_buffer(64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("out");
        out.write_u32(&[7; 16]).expect("fill");
        let stages = [Stage { entry: "base", node: None }, Stage { entry: "sharer", node: None }];
        let graph = TestGraph::new(dev, SHARES, &stages, &[&out], 0).expect("graph");
        let (min, _, _) = graph.scratch_sizes().expect("sizes");
        let scratch = graph.scratch(min).expect("scratch");
        let address = scratch.address.expect("address");
        let base = graph.node_index("base", 0).expect("base");
        let record = bytes_of(&[2u32, 5]);
        Shares { dev, out, graph, min, scratch, address, base, record }
    }

    /// What the rejected dispatches left: nothing; then a valid dispatch works.
    pub fn untouched_then_works(&self, what: &str) {
        assert_eq!(self.out.read_u32(16).expect("read"), vec![7; 16], "{what} record nothing");
        let (graph, scratch) = (&self.graph, &self.scratch);
        self.dev
            .submit_once(|cb| graph.record(cb, scratch, false, &[(self.base, &self.record, 1, 8)]))
            .expect("valid dispatch");
        let got = self.out.read_u32(16).expect("read");
        assert_eq!((got[2], got[3]), (5, 6));
    }
}
