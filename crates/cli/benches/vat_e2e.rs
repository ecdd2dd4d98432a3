//! End-to-end VAT throughput: `rigbake vat` on the largest shared model
//! (by vertices x frames), positions + normals, at EXR16 and EXR32, written
//! to a temporary folder. Reports vertex-frames per second and the process's
//! peak resident memory (Linux `VmHWM`).
//!
//! Run: `cargo bench -p rigbake-cli --bench vat_e2e` (needs ../shared/models;
//! set RIGBAKE_MODELS to point elsewhere). Each configuration runs 3 times;
//! the best time is reported (the machine is small and noisy).

use std::path::{Path, PathBuf};
use std::time::Instant;

use rigbake_core::import::{ImportOptions, import_file};
use rigbake_core::timeline::{Sampling, Timeline};

fn models_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("RIGBAKE_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"));
    dir.join("SOURCES.md").is_file().then_some(dir)
}

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn main() {
    let Some(dir) = models_dir() else {
        eprintln!("SKIPPED vat_e2e: ../shared/models not found (set RIGBAKE_MODELS)");
        return;
    };
    // The largest model by animated vertex-frames.
    let mut best: Option<(u64, PathBuf)> = None;
    for sub in std::fs::read_dir(&dir).unwrap() {
        let sub = sub.unwrap().path();
        if !sub.is_dir() || sub.ends_with("unsupported") {
            continue;
        }
        for f in std::fs::read_dir(&sub).unwrap() {
            let f = f.unwrap().path();
            if !matches!(f.extension().and_then(|e| e.to_str()), Some("glb" | "gltf")) {
                continue;
            }
            let Ok(model) = import_file(&f, &ImportOptions::default()) else {
                continue;
            };
            let rows =
                Timeline::all_clips(&model, Sampling::default()).map_or(0, |t| t.rows) as u64;
            let verts: u64 = model
                .nodes
                .iter()
                .filter_map(|n| n.mesh)
                .flat_map(|m| &model.meshes[m].primitives)
                .map(|p| p.vertex_count() as u64)
                .sum();
            if best.as_ref().is_none_or(|(b, _)| verts * rows > *b) {
                best = Some((verts * rows, f));
            }
        }
    }
    let (vertex_frames, model) = best.expect("at least one model");
    println!("model: {} ({vertex_frames} vertex-frames)", model.display());
    println!("| encoding | best time (s) | vertex-frames/s (M) | peak RSS (MiB) |");
    println!("|---|---:|---:|---:|");
    for format in ["exr16", "exr32"] {
        let mut best_time = f64::INFINITY;
        for _ in 0..3 {
            let out = tempfile::tempdir().unwrap();
            let args = [
                "rigbake",
                "vat",
                model.to_str().unwrap(),
                "--out",
                out.path().to_str().unwrap(),
                "--normals",
                "--format",
                format,
                "--quiet",
            ];
            let t0 = Instant::now();
            let code = rigbake_cli::run(args);
            let dt = t0.elapsed().as_secs_f64();
            assert_eq!(code, std::process::ExitCode::SUCCESS);
            best_time = best_time.min(dt);
        }
        println!(
            "| {format} | {best_time:.3} | {:.1} | {} |",
            vertex_frames as f64 / best_time / 1e6,
            peak_rss_mib().map_or("n/a".to_owned(), |m| format!("{m:.0}"))
        );
    }
}
