//! Each launch mode alone, through the layer on lavapipe, against a CPU
//! model: broadcast with a static grid, with a u32x3 and a u16x3 grid from
//! the payload, coalescing (several records a workgroup, and empty
//! records), and thread nodes packed many to a workgroup.

use ash::vk;
use conformance_tests::graph::{Stage, TestGraph};
use conformance_tests::{InstanceOptions, TestDevice, TestInstance};

macro_rules! corpus {
    ($name:literal) => {
        include_bytes!(concat!("../../spirv-lowering/tests/corpus/", $name, ".spv"))
    };
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Runs one single-node graph over `payload` (count records at `stride`)
/// and returns the first `out_words` words of its storage buffer.
fn run(spv: &[u8], entry: &str, payload: &[u8], count: u32, stride: u64, out_words: usize) -> Vec<u32> {
    run_with(vk::PhysicalDeviceFeatures::default(), spv, entry, payload, count, stride, out_words)
}

/// [`run`] on a device with `features` enabled.
fn run_with(
    features: vk::PhysicalDeviceFeatures,
    spv: &[u8],
    entry: &str,
    payload: &[u8],
    count: u32,
    stride: u64,
    out_words: usize,
) -> Vec<u32> {
    let inst = TestInstance::new(&InstanceOptions::with_layer()).expect("instance");
    let pd = inst.pick_physical_device().expect("lavapipe");
    let result = {
        let dev = TestDevice::with_amdx_features(&inst, pd, features).expect("device");
        let out = dev.create_host_buffer(4 * out_words as u64, vk::BufferUsageFlags::STORAGE_BUFFER).expect("buffer");
        out.write_u32(&vec![0; out_words]).expect("clear");
        let graph = TestGraph::new(&dev, spv, &[Stage { entry, node: None }], &[&out], 0).expect("graph");
        let (min, _, _) = graph.scratch_sizes().expect("sizes");
        let scratch = graph.scratch(min).expect("scratch");
        dev.submit_once(|cb| graph.record(cb, &scratch, true, &[(0, payload, count, stride)])).expect("submit");
        out.read_u32(out_words).expect("read")
    };
    inst.finish();
    result
}

#[test]
fn broadcast_static_grid() {
    let (value, multiplier) = (3u32, 5u32);
    let got = run(corpus!("02_broadcast_static"), "staticGrid", &bytes(&[value, multiplier]), 1, 8, 256);
    let mut want = vec![0u32; 256];
    for (gx, gy, tx, ty) in itertools(4, 2, 8, 4) {
        let (dx, dy) = (gx * 8 + tx, gy * 4 + ty);
        want[(dy * 32 + dx) as usize] = value * multiplier + (gy * 4 + gx) * 100 + ty * 8 + tx;
    }
    assert_eq!(got, want);
}

/// (group x, group y, thread x, thread y) over a 2D grid of 2D groups.
fn itertools(gx: u32, gy: u32, tx: u32, ty: u32) -> Vec<(u32, u32, u32, u32)> {
    let mut v = Vec::new();
    for a in 0..gx {
        for b in 0..gy {
            for c in 0..tx {
                for d in 0..ty {
                    v.push((a, b, c, d));
                }
            }
        }
    }
    v
}

#[test]
fn broadcast_dynamic_u32x3_grid() {
    let (g, value) = ([5u32, 3, 2], 1000u32);
    let got = run(corpus!("03_broadcast_dynamic_uint3"), "dynGrid3", &bytes(&[g[0], g[1], g[2], value]), 1, 16, 512);
    let mut want = vec![0u32; 512];
    for flat_group in 0..g.iter().product::<u32>() {
        for gi in 0..16 {
            want[(flat_group * 16 + gi) as usize] = value + gi;
        }
    }
    assert_eq!(got, want);
}

#[test]
fn broadcast_dynamic_u16x3_grid() {
    let (value, g, extra) = (77u32, [3u16, 2, 4], 9u16);
    let mut payload = value.to_le_bytes().to_vec();
    for c in g.iter().chain([&extra]) {
        payload.extend(c.to_le_bytes());
    }
    // The node declares Int16: the application enables shaderInt16.
    let features = vk::PhysicalDeviceFeatures::default().shader_int16(true);
    let got = run_with(features, corpus!("06_broadcast_dynamic_u16x3"), "dynGrid16", &payload, 1, 12, 256);
    let groups: u32 = g.iter().map(|&c| u32::from(c)).product();
    let want: Vec<u32> = (0..256).map(|i| if i < groups * 8 { value + u32::from(extra) } else { 0 }).collect();
    assert_eq!(got, want);
}

#[test]
fn coalescing_several_records_per_workgroup() {
    let records: Vec<u32> = (0..150u32).flat_map(|i| [i % 50, i + 1]).collect();
    let got = run(corpus!("08_coalescing_array"), "coalesce", &bytes(&records), 150, 8, 1024);
    let mut want = vec![0u32; 1024];
    for i in 0..150u32 {
        want[(i % 50) as usize] += i + 1;
    }
    want[1023] = 150; // every workgroup adds its record count (gid.x reads 0)
    assert_eq!(got, want);
}

#[test]
fn coalescing_empty_records() {
    let got = run(corpus!("09_coalescing_empty_input"), "emptyIn", &[], 20, 0, 8);
    // 20 records, 8 a workgroup: counts 8, 8, 4.
    assert_eq!(got, vec![3, 3, 3, 3, 2, 2, 2, 2]);
}

#[test]
fn thread_nodes_packed() {
    let n = 300u32;
    let payload: Vec<u8> =
        (0..n).flat_map(|i| [i, (i as f32 * 0.5).to_bits(), 3.0f32.to_bits()]).flat_map(u32::to_le_bytes).collect();
    let got = run(corpus!("10_thread_packable"), "threadSum", &payload, n, 12, n as usize);
    let want: Vec<u32> = (0..n).map(|i| ((i as f32 * 0.5) * 3.0 + 1.0).to_bits()).collect();
    assert_eq!(got, want);
}
