//! Graph dispatches from several threads on several queues at once
//! (issue 13): a device with up to four queues of one compute family; each
//! thread owns one queue and a command pool, creates its own hello-chain
//! graph and also dispatches one graph shared by all, round after round,
//! checked against the CPU model. Lavapipe has one queue per family, so
//! there the test skips (see `conformance_tests::skip`); the GPU lane
//! (NVIDIA's driver has many) must run it.

use ash::vk;
use conformance_tests::graph::{hello_chain_records, TestGraph};
use conformance_tests::models::{add_hello_chain, hello_chain};
use conformance_tests::skip::{skip, Lane};
use conformance_tests::{Extras, InstanceOptions, TestDevice, TestInstance};

const ROUNDS: u32 = 20;

/// The entry records of queue `q` in round `r`: (grid, record index).
fn records(q: u32, r: u32) -> Vec<(u32, u32)> {
    vec![(1 + (q + r) % 4, q % 4)]
}

#[test]
fn threads_dispatch_graphs_on_their_own_queues() {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("physical device");
    // SAFETY: valid physical device.
    let families = unsafe { inst.instance.get_physical_device_queue_family_properties(pd) };
    let Some((family, props)) = families
        .iter()
        .enumerate()
        .find(|(_, f)| f.queue_flags.contains(vk::QueueFlags::COMPUTE) && f.queue_count >= 2)
    else {
        skip(&[Lane::Gpu], "no compute queue family with two queues or more");
        inst.finish();
        return;
    };
    let queue_count = props.queue_count.min(4);
    {
        let dev = TestDevice::with_amdx_extras(&inst, pd, family as u32, queue_count, Extras::default())
            .expect("device with several queues");
        let shared_uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        shared_uav.write_u32(&[0; 8]).expect("clear");
        let shared = TestGraph::hello_chain(&dev, &shared_uav).expect("shared graph");
        let sizes = shared.scratch_sizes().expect("sizes");
        let entry = shared.node_index("firstNode", 0).expect("entry");
        std::thread::scope(|scope| {
            for q in 0..queue_count {
                let (dev, shared) = (&dev, &shared);
                scope.spawn(move || {
                    // SAFETY: queue `q` of the family was created above; this thread owns it.
                    let queue = unsafe { dev.device.get_device_queue(family as u32, q) };
                    let pool = dev.create_command_pool().expect("pool");
                    let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
                    let own = TestGraph::hello_chain(dev, &uav).expect("graph");
                    let own_scratch = own.scratch(sizes.0).expect("scratch");
                    let shared_scratch = shared.scratch(sizes.0).expect("scratch");
                    for r in 0..ROUNDS {
                        let recs = records(q, r);
                        let b = hello_chain_records(&recs);
                        uav.write_u32(&[0; 8]).expect("clear");
                        dev.submit_once_to(Some(queue), pool, |cb| {
                            own.record(cb, &own_scratch, true, &[(entry, &b, 1, 8)])
                        })
                        .expect("own graph");
                        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&recs, &[]), "queue {q} round {r}");
                        dev.submit_once_to(Some(queue), pool, |cb| {
                            shared.record(cb, &shared_scratch, true, &[(entry, &b, 1, 8)])
                        })
                        .expect("shared graph");
                    }
                });
            }
        });
        let mut want = vec![0; 8];
        for q in 0..queue_count {
            for r in 0..ROUNDS {
                add_hello_chain(&mut want, &records(q, r), &[]);
            }
        }
        assert_eq!(shared_uav.read_u32(8).expect("read"), want);
        eprintln!("{queue_count} queues of family {family}, {ROUNDS} rounds each: correct");
    }
    inst.finish();
}
