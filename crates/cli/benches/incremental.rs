//! Incremental bakes: a second run with nothing changed only checks keys.
//! Bakes the shared models (or the fixtures when they are absent) into a
//! temporary folder twice and reports both times and their ratio (best of 3
//! for the second run; the machine is small and noisy).
//!
//! Run: `cargo bench -p rigbake-cli --bench incremental`.

use std::path::{Path, PathBuf};
use std::time::Instant;

fn main() {
    let shared = std::env::var_os("RIGBAKE_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"));
    let input = if shared.join("SOURCES.md").is_file() {
        shared
    } else {
        rigbake_fixtures::fixtures_dir()
    };
    let out = tempfile::tempdir().expect("temp dir");
    let run = || {
        let args = [
            "rigbake",
            "bake",
            input.to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
            "--quiet",
            "--vat",
        ];
        let t0 = Instant::now();
        let _ = rigbake_cli::run(args); // some inputs fail on purpose (exit 1)
        t0.elapsed().as_secs_f64()
    };
    let first = run();
    let second = (0..3).map(|_| run()).fold(f64::INFINITY, f64::min);
    println!("input: {}", input.display());
    println!("| run | seconds |");
    println!("|---|---:|");
    println!("| first (bakes everything) | {first:.3} |");
    println!("| second (all up to date) | {second:.3} |");
    println!("| ratio second / first | {:.3} |", second / first);
}
