//! The performance summary behind `just bench`: one table with every
//! throughput target of the performance issue, each figure beside its
//! target, measured here and now (best of several runs; these machines are
//! small and noisy). docs/performance.md explains the workloads, the limits
//! each loop hits and what was tried.
//!
//! Rows:
//! - VAT core: the synthetic 50,000-vertex, 100-joint, 4-influence mesh over
//!   300 frames, positions and normals in f32 (no I/O), on 1 thread and on
//!   every thread; its scaling over three sizes (cost per vertex-frame
//!   should not change with size).
//! - A straightforward reference loop on the same mesh (4 influences, 3x4
//!   f32 matrices, rayon over frames, as the issue describes), to read the
//!   VAT core as a ratio on this machine.
//! - End to end: `rigbake vat` on khronos/BrainStem.glb (EXR32, positions
//!   and normals, to a temporary folder), as a separate process, with its
//!   peak resident memory (skipped when ../shared/models is absent).
//! - Bone-matrix bake: 100 joints x 3000 frames.
//!
//! Run: `cargo bench -p rigbake-cli --bench summary` (or `just bench`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use rigbake_core::bake::vat::{self, NormalConvention, VatBaker, VatOptions};
use rigbake_core::bake::{BoneBakeOptions, bake_bone_textures};
use rigbake_core::model::Model;
use rigbake_core::timeline::{Sampling, Timeline};
use rigbake_fixtures::testkit::synthetic::{skinned_strip, vat_core_pass};

/// three.js in Node doing the same VAT work, vertex-frames per second (the
/// issue's figure on a 2-core AMD EPYC).
const THREEJS_VF_PER_S: f64 = 2.6e6;

fn main() {
    let threads = rayon::current_num_threads();
    println!(
        "rigbake performance summary: {} ({} threads)",
        cpu_name(),
        threads
    );
    println!();
    println!("| benchmark | measured | target | |");
    println!("|---|---:|---:|---|");

    let core_1 = vat_core(50_000, 300, 1);
    let core_n = vat_core(50_000, 300, threads);
    row("VAT core, 1 thread", mvf(core_1), "", None);
    row(
        &format!("VAT core, {threads} threads"),
        mvf(core_n),
        ">= 250 M vf/s",
        Some(core_n >= 250e6),
    );
    let speedup = core_n / core_1;
    row(
        &format!("VAT core, {threads} threads / 1 thread"),
        format!("{speedup:.2}x"),
        ">= 1.8x",
        Some(speedup >= 1.8),
    );
    let naive = reference_loop(50_000, 300, threads);
    row(
        &format!("straightforward loop, {threads} threads (reference)"),
        mvf(naive),
        "",
        None,
    );
    row(
        "VAT core / straightforward loop",
        format!("{:.2}x", core_n / naive),
        "",
        None,
    );

    // Scaling: cost per vertex-frame at three sizes.
    let sizes = [(12_500, 100), (25_000, 200), (50_000, 400)];
    let rates: Vec<f64> = sizes
        .iter()
        .map(|&(v, f)| vat_core(v, f, threads))
        .collect();
    for (&(v, f), r) in sizes.iter().zip(&rates) {
        row(
            &format!("VAT core scaling, {v} vertices x {f} frames"),
            format!("{:.2} ns/vf", 1e9 / r),
            "",
            None,
        );
    }
    let spread = rates.iter().cloned().fold(f64::MIN, f64::max)
        / rates.iter().cloned().fold(f64::MAX, f64::min);
    row(
        "VAT core scaling, slowest / fastest cost per vf",
        format!("{spread:.2}x"),
        "<= 1.25x (linear)",
        Some(spread <= 1.25),
    );

    match end_to_end() {
        Some((rate, rss)) => {
            let target = 30.0 * THREEJS_VF_PER_S;
            row(
                "rigbake vat BrainStem.glb, EXR32 pos+normals, end to end",
                mvf(rate),
                ">= 78 M vf/s (30x three.js)",
                Some(rate >= target),
            );
            row(
                "  ... as a multiple of three.js (2.6 M vf/s)",
                format!("{:.1}x", rate / THREEJS_VF_PER_S),
                ">= 30x",
                Some(rate >= target),
            );
            row(
                "  ... peak resident memory",
                rss.map_or("n/a".to_owned(), |m| format!("{m:.0} MiB")),
                "< 256 MiB",
                rss.map(|m| m < 256.0),
            );
        }
        None => row(
            "rigbake vat BrainStem.glb (end to end)",
            "skipped: ../shared/models not found (set RIGBAKE_MODELS)".to_owned(),
            ">= 78 M vf/s",
            None,
        ),
    }

    let bones = bone_bake(100, 3000);
    row(
        &format!("bone-matrix bake, 100 joints x 3000 frames, {threads} threads"),
        format!("{:.1} M joint-frames/s", bones / 1e6),
        ">= 20 M jf/s",
        Some(bones >= 20e6),
    );
}

fn row(name: &str, measured: String, target: &str, met: Option<bool>) {
    let verdict = match met {
        Some(true) => "met",
        Some(false) => "**not met**",
        None => "",
    };
    println!("| {name} | {measured} | {target} | {verdict} |");
}

fn mvf(rate: f64) -> String {
    format!("{:.1} M vf/s", rate / 1e6)
}

fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|n| n.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned())
}

/// Best time of `runs` runs of `f` (after one warm-up run).
fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

fn vat_baker(model: &Model, timeline: &Timeline) -> vat::VatPlan {
    let options = VatOptions {
        normals: true,
        max_texture_size: 1 << 20,
        ..VatOptions::default()
    };
    vat::plan(model, timeline, &options).expect("plan")
}

/// VAT core throughput (vertex-frames per second) on `threads` threads.
fn vat_core(vertices: usize, frames: usize, threads: usize) -> f64 {
    let model = skinned_strip(vertices, 100, frames);
    let timeline = Timeline::all_clips(&model, Sampling::default()).expect("timeline");
    let plan = vat_baker(&model, &timeline);
    let baker =
        VatBaker::new(&model, &timeline, plan, NormalConvention::InverseTranspose).expect("baker");
    let pool = pool(threads);
    let mut done = 0;
    let t = best(7, || done = pool.install(|| vat_core_pass(&baker)));
    done as f64 / t.as_secs_f64()
}

/// The straightforward loop: per frame (rayon), per vertex, blend four 3x4
/// f32 matrices and transform the position and normal (renormalised),
/// written interleaved per frame.
fn reference_loop(vertices: usize, frames: usize, threads: usize) -> f64 {
    let model = skinned_strip(vertices, 100, frames);
    let prim = &model.meshes[0].primitives[0];
    let inf = prim.influences.as_ref().expect("skinned");
    let joints = model.skins[0].joints.len();
    // Per frame, 100 3x4 matrices (any values do: the work is the same).
    let palettes: Vec<[f32; 12]> = (0..frames * joints)
        .map(|i| {
            let a = i as f32 * 1e-3;
            [
                a.cos(),
                a.sin(),
                0.0,
                -a.sin(),
                a.cos(),
                0.0,
                0.0,
                0.0,
                1.0,
                0.1,
                0.2,
                0.3,
            ]
        })
        .collect();
    let pool = pool(threads);
    let t = best(5, || {
        pool.install(|| {
            (0..frames).into_par_iter().for_each_init(
                || vec![0.0f32; vertices * 6],
                |out, f| {
                    let pal = &palettes[f * joints..(f + 1) * joints];
                    for v in 0..vertices {
                        let mut m = [0.0f32; 12];
                        for k in 0..4 {
                            let j = usize::from(inf.joints[v * 4 + k]);
                            let w = inf.weights[v * 4 + k];
                            for e in 0..12 {
                                m[e] += w * pal[j][e];
                            }
                        }
                        let p = prim.positions[v];
                        let n = prim.normals.as_ref().expect("normals")[v];
                        let o = &mut out[v * 6..v * 6 + 6];
                        for r in 0..3 {
                            o[r] = m[r] * p.x + m[3 + r] * p.y + m[6 + r] * p.z + m[9 + r];
                            o[3 + r] = m[r] * n.x + m[3 + r] * n.y + m[6 + r] * n.z;
                        }
                        let len = (o[3] * o[3] + o[4] * o[4] + o[5] * o[5]).sqrt().max(1e-20);
                        for x in &mut o[3..6] {
                            *x /= len;
                        }
                    }
                    std::hint::black_box(&out[0]);
                },
            )
        })
    });
    (vertices * frames) as f64 / t.as_secs_f64()
}

/// Bone-matrix bake throughput (joint-frames per second).
fn bone_bake(joints: usize, frames: usize) -> f64 {
    let model = skinned_strip(16, joints, frames);
    let timeline = Timeline::all_clips(&model, Sampling::default()).expect("timeline");
    let options = BoneBakeOptions::default();
    let t = best(7, || {
        std::hint::black_box(bake_bone_textures(&model, &timeline, &options).expect("bake"));
    });
    (joints * timeline.rows) as f64 / t.as_secs_f64()
}

fn models_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("RIGBAKE_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"));
    dir.join("SOURCES.md").is_file().then_some(dir)
}

/// `rigbake vat` on BrainStem as a child process: vertex-frames per second
/// (best of 5) and the largest peak resident memory seen (`VmHWM`, polled).
fn end_to_end() -> Option<(f64, Option<f64>)> {
    let model = models_dir()?.join("khronos/BrainStem.glb");
    if !model.is_file() {
        return None;
    }
    // Vertex-frames: skinned vertices x timeline rows, as the bake plans them.
    let imported = rigbake_core::import::import_file(&model, &Default::default()).ok()?;
    let timeline = Timeline::all_clips(&imported, Sampling::default()).ok()?;
    let plan = vat::plan(&imported, &timeline, &VatOptions::default()).ok()?;
    let vertex_frames: usize = plan
        .primitives
        .iter()
        .map(|p| p.vertices * p.layout.frames)
        .sum();
    let mut best_time = f64::INFINITY;
    let mut peak: Option<f64> = None;
    for _ in 0..5 {
        let out = tempfile::tempdir().ok()?;
        let t = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_rigbake"))
            .args(["vat".as_ref(), model.as_os_str()])
            .args(["--out".as_ref(), out.path().as_os_str()])
            .args(["--normals", "--format", "exr32", "--quiet"])
            .spawn()
            .ok()?;
        let status_file = format!("/proc/{}/status", child.id());
        let status = loop {
            if let Some(kib) = std::fs::read_to_string(&status_file)
                .ok()
                .and_then(|s| hwm_kib(&s))
            {
                let mib = kib / 1024.0;
                peak = Some(peak.map_or(mib, |p| p.max(mib)));
            }
            if let Some(status) = child.try_wait().ok()? {
                break status;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let dt = t.elapsed().as_secs_f64();
        if !status.success() {
            eprintln!("rigbake vat failed on {}", model.display());
            return None;
        }
        best_time = best_time.min(dt);
    }
    Some((vertex_frames as f64 / best_time, peak))
}

fn hwm_kib(status: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
