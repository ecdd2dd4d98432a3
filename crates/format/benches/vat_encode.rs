//! The per-texel encoders of a VAT bake, on one thread, over one row of
//! 8,192 texels (no I/O): packing normals into 16-bit octahedral codes
//! (`--direction-encoding packed`) and quantising planar rows to 16-bit
//! samples over bounds, with what a reader decodes. Throughput is in
//! texels per second. Normals are spread over the whole sphere
//! (a Fibonacci lattice), positions over their bounds.

use rigbake_format::texture::quantize::{RowQuantizer, pack_normals_planar, quantize_planar_row};

fn main() {
    divan::main();
}

/// Texels a row.
const WIDTH: usize = 8192;

/// Unit normals over the sphere, planar (x, y, z planes).
fn normals() -> Vec<f32> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    let mut planes = vec![0.0f32; 3 * WIDTH];
    for i in 0..WIDTH {
        let z = 1.0 - 2.0 * (i as f64 + 0.5) / WIDTH as f64;
        let r = (1.0 - z * z).sqrt();
        let a = golden * i as f64;
        planes[i] = (r * a.cos()) as f32;
        planes[WIDTH + i] = (r * a.sin()) as f32;
        planes[2 * WIDTH + i] = z as f32;
    }
    planes
}

#[divan::bench(sample_count = 50)]
fn pack_normals(bencher: divan::Bencher<'_, '_>) {
    let n = normals();
    let planes = [&n[..WIDTH], &n[WIDTH..2 * WIDTH], &n[2 * WIDTH..]];
    let (mut codes, mut scores) = (vec![0u16; WIDTH], vec![0f32; WIDTH]);
    bencher
        .counter(divan::counter::ItemsCount::new(WIDTH))
        .bench_local(|| pack_normals_planar(planes, &mut codes, &mut scores));
}

#[divan::bench(sample_count = 50)]
fn quantize_unorm16_rgba(bencher: divan::Bencher<'_, '_>) {
    let mut row = normals();
    row.extend(std::iter::repeat_n(0.25, WIDTH));
    let quantizer = RowQuantizer::Bounds {
        bounds: [[-1.0, -1.0, -1.0, 0.0], [1.0, 1.0, 1.0, 1.0]],
        codes: [65535; 4],
    };
    let (mut q, mut decoded) = (vec![0u16; 4 * WIDTH], vec![0f32; 4 * WIDTH]);
    bencher
        .counter(divan::counter::ItemsCount::new(WIDTH))
        .bench_local(|| quantize_planar_row(&quantizer, &row, WIDTH, 4, &mut q, &mut decoded));
}
