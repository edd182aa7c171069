//! The demo's picture: the Mandelbrot refinement graph ([`crate::refine`])
//! run once through the layer, its image checked pixel by pixel against the
//! CPU model, coloured by iteration count and written as a PNG.

use crate::gpu::Gpu;
use crate::graph::Graph;
use crate::refine;
use ash::vk;
use std::path::Path;

/// Side of the picture in pixels (a power of two).
pub const SIZE: u32 = 256;

/// Scratch beyond `minSize` for the refinement's fullest level at [`SIZE`].
const EXTRA_SCRATCH: u64 = 16 << 20;

/// The colour of an iteration count: black inside the set (64), a
/// blue-to-orange ramp outside.
pub fn colour(iterations: u32) -> [u8; 3] {
    if iterations >= 64 {
        return [0, 0, 0];
    }
    let t = (iterations as f32 / 63.0).sqrt();
    let ramp = |a: f32, b: f32| (a + (b - a) * t).round().clamp(0.0, 255.0) as u8;
    [ramp(10.0, 255.0), ramp(20.0, 170.0), ramp(90.0, 40.0)]
}

/// Encodes an n x n image of iteration counts as an RGB PNG.
pub fn encode(image: &[u32], n: u32) -> Result<Vec<u8>, String> {
    let rgb: Vec<u8> = image.iter().flat_map(|&it| colour(it)).collect();
    encode_rgb(&rgb, n)
}

/// Encodes n x n RGB bytes as a PNG.
pub fn encode_rgb(rgb: &[u8], n: u32) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, n, n);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Best);
        let mut writer = encoder.write_header().map_err(|e| format!("PNG header: {e}"))?;
        writer.write_image_data(rgb).map_err(|e| format!("PNG data: {e}"))?;
    }
    Ok(out)
}

/// Renders the picture on `gpu` through the graph, checks it against the
/// CPU model and writes it to `path`; returns the 2 x 2 leaves shaded.
pub fn render(gpu: &Gpu, path: &Path) -> Result<u32, String> {
    let n = SIZE;
    let params = gpu.buffer(8, vk::BufferUsageFlags::STORAGE_BUFFER, true)?;
    params.write_u32(&[n, refine::step(n)])?;
    let image = gpu.buffer(4 * u64::from(n * n), vk::BufferUsageFlags::STORAGE_BUFFER, true)?;
    image.write_u32(&vec![0; (n * n) as usize])?;
    let graph = Graph::new(gpu, refine::SPV, &refine::NODES, &[&image, &params])?;
    let size = graph.scratch_size()?;
    let granularity = size.size_granularity.max(1);
    let bytes = ((size.min_size + EXTRA_SCRATCH).div_ceil(granularity) * granularity).min(size.max_size);
    let scratch = gpu.buffer(
        bytes,
        vk::BufferUsageFlags::EXECUTION_GRAPH_SCRATCH_AMDX | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
        false,
    )?;
    let entry = graph.node_index(c"tile", 0)?;
    let cb = gpu.command_buffer()?;
    // SAFETY: a fresh command buffer of this device.
    unsafe { gpu.device.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default()) }
        .map_err(|e| format!("vkBeginCommandBuffer: {e:?}"))?;
    graph.record_setup(cb, &scratch);
    graph.record_dispatch(cb, &scratch, entry, &refine::entry_record(n), 1);
    graph.record_host_barrier(cb);
    // SAFETY: recording.
    unsafe { gpu.device.end_command_buffer(cb) }.map_err(|e| format!("vkEndCommandBuffer: {e:?}"))?;
    gpu.submit_and_wait(cb)?;
    let got = image.read_u32((n * n) as usize)?;
    let model = refine::model(n, refine::step(n));
    if let Some(i) = (0..got.len()).find(|&i| got[i] != model.image[i]) {
        return Err(format!(
            "the picture differs from the CPU model at pixel ({}, {}): {} vs {}",
            i as u32 % n,
            i as u32 / n,
            got[i],
            model.image[i]
        ));
    }
    let png = encode(&got, n)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, png).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(model.leaves)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_is_black_and_the_ramp_rises() {
        assert_eq!(colour(64), [0, 0, 0]);
        assert!(colour(63)[0] > colour(1)[0]);
    }

    #[test]
    fn the_png_decodes_to_the_colours() {
        let image = [0, 10, 64, 63];
        let png = encode(&image, 2).expect("encode");
        let decoder = png::Decoder::new(png.as_slice());
        let mut reader = decoder.read_info().expect("header");
        let mut pixels = vec![0; reader.output_buffer_size()];
        reader.next_frame(&mut pixels).expect("frame");
        let want: Vec<u8> = image.iter().flat_map(|&it| colour(it)).collect();
        assert_eq!(pixels, want);
    }
}
