//! The bake kernels on synthetic models (no I/O): the VAT core (positions
//! and normals of 50,000 vertices x 300 frames, 100 joints, 4 influences), on
//! one thread and on all threads, its scaling over three sizes, and the
//! bone-matrix bake. Throughput is in vertex-frames or joint-frames per
//! second. `just bench` prints a summary table with the targets.

use rigbake_core::bake::vat::{self, NormalConvention, VatBaker, VatOptions};
use rigbake_core::bake::{BoneBakeOptions, bake_bone_textures};
use rigbake_core::timeline::{Sampling, Timeline};
use rigbake_fixtures::testkit::synthetic::{skinned_strip, vat_core_pass};

fn main() {
    divan::main();
}

fn vat_bench(bencher: divan::Bencher<'_, '_>, vertices: usize, frames: usize, threads: usize) {
    let model = skinned_strip(vertices, 100, frames);
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let options = VatOptions {
        normals: true,
        max_texture_size: 1 << 20,
        ..VatOptions::default()
    };
    let plan = vat::plan(&model, &timeline, &options).unwrap();
    let baker = VatBaker::new(&model, &timeline, plan, NormalConvention::InverseTranspose).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    bencher
        .counter(divan::counter::ItemsCount::new(vertices * frames))
        .bench_local(|| pool.install(|| vat_core_pass(&baker)));
}

/// The VAT core: 50,000 vertices x 300 frames, on 1 and 2 threads.
#[divan::bench(args = [1, 2], sample_count = 10, sample_size = 1)]
fn vat_core_50k_300f(bencher: divan::Bencher<'_, '_>, threads: usize) {
    vat_bench(bencher, 50_000, 300, threads);
}

/// Scaling: vertices x frames at three sizes (all threads).
#[divan::bench(args = [(12_500, 100), (25_000, 200), (50_000, 400)], sample_count = 10, sample_size = 1)]
fn vat_core_scaling(bencher: divan::Bencher<'_, '_>, size: (usize, usize)) {
    vat_bench(bencher, size.0, size.1, rayon::current_num_threads());
}

/// Bone-matrix bake: 100 joints x 3000 frames (all threads).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn bone_bake_100j_3000f(bencher: divan::Bencher<'_, '_>) {
    let model = skinned_strip(16, 100, 3000);
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let options = BoneBakeOptions::default();
    bencher
        .counter(divan::counter::ItemsCount::new(100 * timeline.rows))
        .bench(|| bake_bone_textures(&model, &timeline, &options).unwrap());
}
