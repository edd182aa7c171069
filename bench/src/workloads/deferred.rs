//! `deferred-1080p`, `deferred-4k`: deferred shading by screen tiles, as in
//! the published deferred-shading work-graph case studies
//! (`deferred.hlsl`, compiled by DXC): the entry node classifies each 8x8
//! tile's materials (a G-buffer word per pixel, 16 materials with uneven
//! coverage) and sends the tile to the material's node of a 16-node array;
//! each material node shades its tiles' pixels of that material; the last
//! material of a tile sends it to `compose`, which writes the final pixels.
//! Baseline (`deferred_*.comp`): tile classification appending each tile to
//! its materials' lists (the list lengths are the indirect arguments), one
//! indirect dispatch per material, then a compose pass over every tile.
//!
//! Sizes: 1920x1080 and 3840x2160 (320x192 and 640x384 with `--quick`).

use crate::cmd;
use crate::pair::{self, Pair, Recording, Side};
use crate::report::Row;
use crate::scratch_search::{self, Probe};
use crate::workloads::{bytes_of, row, Ctx};

const SPV: &[u8] = include_bytes!("../../shaders/deferred.spv");
const CLASSIFY: &[u8] = include_bytes!("../../shaders/deferred_classify.comp.spv");
const SHADE: &[u8] = include_bytes!("../../shaders/deferred_shade.comp.spv");
const COMPOSE: &[u8] = include_bytes!("../../shaders/deferred_compose.comp.spv");

/// Material nodes (and the G-buffer's material bits).
pub const MATERIALS: u32 = 16;
/// Tile edge in pixels.
const TILE: u32 = 8;
/// First word of the baseline's tile lists in its meta buffer.
const LISTS: u32 = 64;

/// A 32-bit mix (the G-buffer generator's hash).
fn mix(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x7feb_352d);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846c_a68b);
    h ^ (h >> 16)
}

/// The G-buffer: per pixel, attribute bits above a material in the low 4
/// bits. Materials cover regions of about 40x24 pixels, drawn so that
/// material 0 covers about a quarter of the screen and material 15 about 3%
/// (`16 u^2` for uniform `u`); one pixel in 64 is a decal of any material,
/// so that many tiles hold several.
pub fn gbuffer(width: u32, height: u32) -> Vec<u32> {
    let mut g = Vec::with_capacity((width * height) as usize);
    for y in 0..height {
        for x in 0..width {
            let cell = mix((x / 40) ^ (y / 24) << 12 ^ 0x5bd1_e995);
            let u = u64::from(cell >> 16);
            let mut m = ((u * u * u64::from(MATERIALS)) >> 32) as u32;
            let px = mix(x | y << 16);
            if px % 64 == 0 {
                m = (px >> 8) % MATERIALS;
            }
            g.push((px & !(MATERIALS - 1)) | m.min(MATERIALS - 1));
        }
    }
    g
}

/// The shading of material `m` (as the shaders compute it).
pub fn shade_pixel(g: u32, m: u32) -> u32 {
    (0..16 + 2 * m).fold(g, |x, _| x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223) ^ m)
}

/// The final pixel (as the shaders compute it).
pub fn compose_pixel(c: u32, g: u32) -> u32 {
    (c ^ (c >> 15)).wrapping_mul(0x9E37_79B1).wrapping_add(g >> 4)
}

/// Runs the workload at `width` x `height` (multiples of 8).
pub fn run(ctx: &Ctx<'_>, name: &'static str, full: (u32, u32), quick: (u32, u32)) -> Result<Row, String> {
    let gpu = ctx.gpu;
    let (width, height) = if ctx.settings.quick { quick } else { full };
    let (across, down) = (width / TILE, height / TILE);
    let tiles = across * down;
    let pixels = width * height;
    let gbuf = gbuffer(width, height);
    let present: u32 = tile_materials(&gbuf, width, height).iter().map(|m| m.count_ones()).sum();
    let g_buf = cmd::upload(gpu, &gbuf)?;
    let words = u64::from(pixels);

    let color_g = cmd::device_buffer(gpu, 4 * words)?;
    let remaining = cmd::device_buffer(gpu, 4 * u64::from(tiles))?;
    let final_g = cmd::device_buffer(gpu, 4 * words)?;
    let mut stages = vec![(c"classify", u32::MAX)];
    stages.extend((0..MATERIALS).map(|m| (c"shade", m)));
    stages.push((c"compose", u32::MAX));
    // 128 bytes of scratch units a record at the fullest level, with room.
    let extra = 128 * u64::from(present + tiles) + (1 << 20);
    let setup = ctx.graph(SPV, &stages, &[&g_buf, &color_g, &remaining, &final_g], extra)?;
    let entry = setup.graph.node_index(c"classify", 0)?;
    let record = bytes_of(&[across, down, width]);

    let color_b = cmd::device_buffer(gpu, 4 * words)?;
    let meta = cmd::device_buffer(gpu, 4 * u64::from(LISTS + MATERIALS * tiles))?;
    let final_b = cmd::device_buffer(gpu, 4 * words)?;
    let k = crate::kernel::Kernels::new(gpu, &[CLASSIFY, SHADE, COMPOSE], &[&g_buf, &color_b, &meta, &final_b])?;

    let (g, s) = (&setup.graph, &setup.scratch);
    let graph_side = Side {
        zero: &[&final_g],
        prep: Box::new(|cb| g.record_setup(cb, s)),
        body: Box::new(|cb| g.record_dispatch(cb, s, entry, &record, 1)),
        out: &final_g,
    };
    let zero_b = [&final_b, &meta];
    let base_side = Side {
        zero: &zero_b,
        prep: Box::new(|_| {}),
        body: Box::new(|cb| {
            k.bind(cb, 0, [width, across, tiles, 0]);
            k.dispatch_2d(cb, across, down);
            cmd::compute_barrier(gpu, cb);
            for m in 0..MATERIALS {
                k.bind(cb, 1, [width, across, tiles, m]);
                k.dispatch_indirect(cb, &meta, 12 * u64::from(m));
            }
            cmd::compute_barrier(gpu, cb);
            k.bind(cb, 2, [width, across, tiles, 0]);
            k.dispatch_2d(cb, across, down);
        }),
        out: &final_b,
    };
    let want: Vec<u32> = gbuf.iter().map(|&px| compose_pixel(shade_pixel(px, px % MATERIALS), px)).collect();
    let recording = Recording::graph(g, s, entry, &record, 1);
    let pair = Pair { name, graph: graph_side, baseline: base_side, want: &want, record: recording };
    let measured = pair::measure(ctx, pair)?;
    let probe =
        Probe { graph: g, zero: &[&final_g], out: &final_g, node: entry, records: &record, count: 1, want: &want };
    // Level 1: a 12-byte TileRecord per (tile, material); level 2: an 8-byte ComposeRecord per tile.
    let levels = [record.len() as u64, 12 * u64::from(present), 8 * u64::from(tiles)];
    let scratch = scratch_search::search(ctx, &probe, scratch_search::Payload::of_levels(&levels))?;
    let detail = format!(
        "{width}x{height}, {tiles} tiles, {present} (tile, material) pairs, {MATERIALS} materials; \
         vs classify + {MATERIALS} indirect + compose"
    );
    Ok(row(name, detail, setup.figures(), measured, scratch))
}

/// The material bits present in each tile.
pub fn tile_materials(gbuf: &[u32], width: u32, height: u32) -> Vec<u32> {
    let across = width / TILE;
    let mut masks = vec![0u32; (across * (height / TILE)) as usize];
    for (i, px) in gbuf.iter().enumerate() {
        let (x, y) = (i as u32 % width, i as u32 / width);
        masks[((y / TILE) * across + x / TILE) as usize] |= 1 << (px % MATERIALS);
    }
    masks
}

#[cfg(test)]
mod tests {
    use super::{gbuffer, tile_materials, MATERIALS};

    #[test]
    fn coverage_is_uneven_and_every_material_appears() {
        let (w, h) = (1920, 1080);
        let g = gbuffer(w, h);
        let mut pixels = [0u32; MATERIALS as usize];
        g.iter().for_each(|px| pixels[(px % MATERIALS) as usize] += 1);
        assert!(pixels.iter().all(|&n| n > 0), "{pixels:?}");
        assert!(pixels[0] > 4 * pixels[15], "{pixels:?}");
        let masks = tile_materials(&g, w, h);
        let several = masks.iter().filter(|m| m.count_ones() > 1).count();
        assert!(several > masks.len() / 4, "{several} of {} tiles hold several materials", masks.len());
    }
}
