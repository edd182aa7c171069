//! Threads sharing one device (issue 12): every thread records on its own
//! command pool and, in each round,
//! - creates its own hello-chain graph, dispatches it and checks the result
//!   against the CPU model, then destroys it;
//! - dispatches one graph shared by all threads (its own scratch buffer),
//!   whose accumulated sums are checked once all threads are done.
//!
//! Run twice: with the validation layer beneath and the layer's debug labels
//! off, and with labels and no validation. Validation 1.3.239 (Debian 12)
//! erases a command buffer's labels in `vkFreeCommandBuffers` without the
//! lock that guards them elsewhere (KhronosGroup/Vulkan-ValidationLayers#5172,
//! fixed after that release): threads that free command buffers while
//! others record labels corrupt its heap. A plain compute program without
//! this layer crashes the same way in `vkFreeCommandBuffers` when its
//! command buffers carry labels, so it is not the layer's doing.
//!
//! [`THREADS`] x [`ROUNDS`] by default (seconds on lavapipe);
//! `EMU_SE_STRESS_ROUNDS=N` runs N rounds per thread for a longer soak (the
//! README gives the command).

use ash::vk;
use conformance_tests::graph::{hello_chain_records, TestGraph};
use conformance_tests::models::{add_hello_chain, hello_chain};
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};
use std::ffi::c_void;

const THREADS: u32 = 8;
const ROUNDS: u32 = 25;

/// The entry records of thread `t` in round `r`: (grid, record index).
fn records(t: u32, r: u32) -> Vec<(u32, u32)> {
    vec![(1 + (t + r) % 5, t % 4), (2 + r % 3, (t + 1) % 4)]
}

#[test]
fn with_validation_and_without_labels() {
    let off: [vk::Bool32; 1] = [vk::FALSE];
    let settings = [vk::LayerSettingEXT {
        p_layer_name: c"VK_LAYER_EMU_shader_enqueue".as_ptr(),
        p_setting_name: c"labels".as_ptr(),
        ty: vk::LayerSettingTypeEXT::BOOL32,
        value_count: 1,
        p_values: off.as_ptr().cast::<c_void>(),
        ..Default::default()
    }];
    stress(&InstanceOptions { layer_settings: &settings, ..InstanceOptions::with_layer() });
}

#[test]
fn with_labels_and_without_validation() {
    stress(&InstanceOptions { validation: false, ..InstanceOptions::with_layer() });
}

fn stress(opts: &InstanceOptions<'_>) {
    let rounds = std::env::var("EMU_SE_STRESS_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(ROUNDS);
    let inst = TestInstance::new(opts).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    {
        let dev = TestDevice::with_amdx(&inst, pd).expect("device");
        let shared_uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
        shared_uav.write_u32(&[0; 8]).expect("clear");
        let shared = TestGraph::hello_chain(&dev, &shared_uav).expect("shared graph");
        let sizes = shared.scratch_sizes().expect("sizes");
        let entry = shared.node_index("firstNode", 0).expect("entry");
        let started = std::time::Instant::now();
        std::thread::scope(|scope| {
            for t in 0..THREADS {
                let (dev, shared) = (&dev, &shared);
                scope.spawn(move || {
                    let pool = dev.create_command_pool().expect("pool");
                    let scratch = shared.scratch(sizes.0).expect("scratch");
                    for r in 0..rounds {
                        let own = records(t, r);
                        let uav = dev.create_host_buffer(32, vk::BufferUsageFlags::STORAGE_BUFFER).expect("uav");
                        uav.write_u32(&[0; 8]).expect("clear");
                        let graph = TestGraph::hello_chain(dev, &uav).expect("graph");
                        let own_scratch = graph.scratch(sizes.0).expect("scratch");
                        let own_bytes = hello_chain_records(&own);
                        dev.submit_once_in(pool, |cb| {
                            graph.record(cb, &own_scratch, true, &[(entry, &own_bytes, 2, 8)])
                        })
                        .expect("own graph");
                        assert_eq!(uav.read_u32(8).expect("read"), hello_chain(&own, &[]), "thread {t} round {r}");
                        drop(graph);
                        dev.submit_once_in(pool, |cb| shared.record(cb, &scratch, true, &[(entry, &own_bytes, 2, 8)]))
                            .expect("shared graph");
                    }
                });
            }
        });
        eprintln!(
            "{THREADS} threads x {rounds} rounds (2 graph dispatches and a graph creation each): {:.2} s",
            started.elapsed().as_secs_f64()
        );
        let mut want = vec![0; 8];
        for t in 0..THREADS {
            for r in 0..rounds {
                add_hello_chain(&mut want, &records(t, r), &[]);
            }
        }
        assert_eq!(shared_uav.read_u32(8).expect("read"), want);
    }
    inst.finish();
}
