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
//! - Output path: `rigbake vat` on khronos/BrainStem.glb (positions and
//!   normals) at EXR32, EXR16, EXR16 with ZIP and PXR24, EXR32 with PXR24
//!   and PNG16, each as a separate process into a temporary folder, each
//!   beside its write floor (a plain sequential write of the same bytes on
//!   the same disk, in the same run) and its peak resident memory; then the
//!   issue's ratios (PNG16 / EXR16, compressed size and time against
//!   uncompressed EXR16, EXR16 against three.js's 7.8 s).
//! - Corpus: one `rigbake bake --vat --normals --format exr16` over every
//!   folder of ../shared/models except `unsupported/`: wall time and peak
//!   memory. Rows needing the models say "skipped" without them.
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

    output_rows();
    corpus_rows();

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

/// One run of the `rigbake` binary as a child process: wall seconds, the
/// largest peak resident memory seen (`VmHWM`, polled every 2 ms), and the
/// bytes it left in its output folder.
struct Run {
    seconds: f64,
    /// User plus system CPU seconds of the child (from `/proc`, last seen
    /// before it exited): steadier than wall time on a shared machine.
    cpu: f64,
    peak_mib: Option<f64>,
    bytes: u64,
}

/// Runs `rigbake ARGS --out <temp> --quiet` `runs` times (after one
/// warm-up); returns the fastest run, with the largest peak memory of all.
fn best_run(args: &[&std::ffi::OsStr], runs: usize) -> Option<Run> {
    let mut best: Option<Run> = None;
    let mut peak: Option<f64> = None;
    for i in 0..=runs {
        let out = tempfile::tempdir().ok()?;
        let t = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_rigbake"))
            .args(args)
            .args(["--out".as_ref(), out.path().as_os_str()])
            .arg("--quiet")
            .spawn()
            .ok()?;
        let status_file = format!("/proc/{}/status", child.id());
        let stat_file = format!("/proc/{}/stat", child.id());
        let mut cpu = 0.0f64;
        let status = loop {
            if let Some(c) = std::fs::read_to_string(&stat_file)
                .ok()
                .and_then(|s| cpu_seconds(&s))
            {
                cpu = cpu.max(c);
            }
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
        let seconds = t.elapsed().as_secs_f64();
        if !status.success() {
            eprintln!("rigbake {args:?} failed");
            return None;
        }
        let bytes = folder_bytes(out.path());
        if i > 0 && best.as_ref().is_none_or(|b| seconds < b.seconds) {
            best = Some(Run {
                seconds,
                cpu,
                peak_mib: None,
                bytes,
            });
        }
    }
    best.map(|b| Run {
        peak_mib: peak,
        ..b
    })
}

/// utime + stime of a `/proc/<pid>/stat` line, in seconds (clock ticks of
/// 1/100 s, the Linux default).
fn cpu_seconds(stat: &str) -> Option<f64> {
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

fn folder_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}

/// The write floor: the best time of a plain sequential write of `bytes`
/// bytes (1 MiB `write` calls from one buffer, no sync, as rigbake writes)
/// into a new file in a temporary folder on the same disk as the bakes.
fn write_floor(bytes: u64) -> f64 {
    use std::io::Write as _;
    let block = vec![0x5au8; 1 << 20];
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let dir = tempfile::tempdir().expect("temporary folder");
        let t = Instant::now();
        let mut f = std::fs::File::create(dir.path().join("floor")).expect("file");
        let mut left = bytes;
        while left > 0 {
            let n = left.min(block.len() as u64) as usize;
            f.write_all(&block[..n]).expect("write");
            left -= n as u64;
        }
        drop(f);
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

/// The output-path rows on BrainStem (positions and normals): every
/// encoding and compression end to end, each beside its write floor, and
/// the ratios between them.
fn output_rows() {
    let Some(dir) = models_dir() else {
        row(
            "rigbake vat BrainStem.glb (end to end)",
            "skipped: ../shared/models not found (set RIGBAKE_MODELS)".to_owned(),
            "",
            None,
        );
        return;
    };
    let model = dir.join("khronos/BrainStem.glb");
    // Vertex-frames: skinned vertices x timeline rows, as the bake plans them.
    let vertex_frames = (|| {
        let imported = rigbake_core::import::import_file(&model, &Default::default()).ok()?;
        let timeline = Timeline::all_clips(&imported, Sampling::default()).ok()?;
        let plan = vat::plan(&imported, &timeline, &VatOptions::default()).ok()?;
        Some(
            plan.primitives
                .iter()
                .map(|p| p.vertices * p.layout.frames)
                .sum::<usize>(),
        )
    })()
    .unwrap_or(0);
    let configs: [(&str, &[&str]); 11] = [
        ("EXR32", &["--format", "exr32"]),
        (
            "KTX2 F32",
            &["--format", "exr32", "--texture-container", "ktx2"],
        ),
        (
            "DDS F32",
            &["--format", "exr32", "--texture-container", "dds"],
        ),
        (
            "KTX2 F16",
            &["--format", "exr16", "--texture-container", "ktx2"],
        ),
        (
            "DDS F16",
            &["--format", "exr16", "--texture-container", "dds"],
        ),
        (
            "KTX2-ZSTD F16",
            &["--format", "exr16", "--texture-container", "ktx2-zstd"],
        ),
        ("EXR16", &["--format", "exr16"]),
        ("EXR16 ZIP", &["--format", "exr16", "--compression", "zip"]),
        (
            "EXR16 PXR24",
            &["--format", "exr16", "--compression", "pxr24"],
        ),
        (
            "EXR32 PXR24",
            &["--format", "exr32", "--compression", "pxr24"],
        ),
        ("PNG16", &["--format", "png16"]),
    ];
    // Run in one process so the containers' ratios come from one machine
    // state (issue 33: KTX2 and DDS within 1.2x of EXR of the same type).
    let mut results = std::collections::HashMap::new();
    for (name, flags) in configs {
        let mut args: Vec<&std::ffi::OsStr> = vec!["vat".as_ref(), model.as_os_str()];
        args.push("--normals".as_ref());
        args.extend(flags.iter().map(std::ffi::OsStr::new));
        let Some(run) = best_run(&args, 3) else {
            row(
                &format!("rigbake vat BrainStem, {name}"),
                "failed".to_owned(),
                "",
                None,
            );
            continue;
        };
        let floor = write_floor(run.bytes);
        row(
            &format!("rigbake vat BrainStem, {name}, end to end"),
            format!(
                "{:.2} s ({:.2} s CPU), {:.0} MiB, {:.1} M vf/s",
                run.seconds,
                run.cpu,
                run.bytes as f64 / (1 << 20) as f64,
                vertex_frames as f64 / run.seconds / 1e6
            ),
            "",
            None,
        );
        if name == "EXR32" {
            let rate = vertex_frames as f64 / run.seconds;
            row(
                "  ... as a multiple of three.js (2.6 M vf/s)",
                format!("{:.1}x", rate / THREEJS_VF_PER_S),
                ">= 30x (78 M vf/s)",
                Some(rate >= 30.0 * THREEJS_VF_PER_S),
            );
        }
        let ratio = run.seconds / floor;
        let (target, met) = if name == "EXR32" {
            ("<= 1.3x", Some(ratio <= 1.3))
        } else {
            ("", None)
        };
        row(
            &format!(
                "  ... write floor (same bytes, plain write): {floor:.2} s; end to end / floor"
            ),
            format!("{ratio:.2}x"),
            target,
            met,
        );
        row(
            "  ... peak resident memory",
            run.peak_mib
                .map_or("n/a".to_owned(), |m| format!("{m:.0} MiB")),
            "< 256 MiB",
            run.peak_mib.map(|m| m < 256.0),
        );
        results.insert(name, run);
    }
    if let (Some(png), Some(exr16)) = (results.get("PNG16"), results.get("EXR16")) {
        let r = png.seconds / exr16.seconds;
        row(
            "PNG16 time / EXR16 time",
            format!("{r:.2}x"),
            "<= 2x",
            Some(r <= 2.0),
        );
        row(
            "  ... CPU time ratio",
            format!("{:.2}x", png.cpu / exr16.cpu.max(1e-9)),
            "",
            None,
        );
    }
    for (name, exr) in [
        ("KTX2 F32", "EXR32"),
        ("DDS F32", "EXR32"),
        ("KTX2 F16", "EXR16"),
        ("DDS F16", "EXR16"),
    ] {
        if let (Some(c), Some(e)) = (results.get(name), results.get(exr)) {
            let r = c.seconds / e.seconds;
            row(
                &format!("{name} time / {exr} time (same samples)"),
                format!("{r:.2}x"),
                "<= 1.2x",
                Some(r <= 1.2),
            );
        }
    }
    if let (Some(z), Some(plain)) = (results.get("KTX2-ZSTD F16"), results.get("KTX2 F16")) {
        row(
            "KTX2-ZSTD F16: uncompressed size / supercompressed size",
            format!("{:.2}x", plain.bytes as f64 / z.bytes.max(1) as f64),
            "",
            None,
        );
    }
    for name in ["EXR16 ZIP", "EXR16 PXR24"] {
        if let (Some(c), Some(plain)) = (results.get(name), results.get("EXR16")) {
            let smaller = plain.bytes as f64 / c.bytes as f64;
            let slower = c.seconds / plain.seconds;
            row(
                &format!("{name}: uncompressed size / compressed size"),
                format!("{smaller:.2}x"),
                ">= 2x",
                Some(smaller >= 2.0),
            );
            row(
                &format!("{name}: time / uncompressed time"),
                format!("{slower:.2}x"),
                "<= 1.5x",
                Some(slower <= 1.5),
            );
            row(
                "  ... CPU time ratio",
                format!("{:.2}x", c.cpu / plain.cpu.max(1e-9)),
                "",
                None,
            );
        }
    }
    if let Some(exr16) = results.get("EXR16") {
        // The figure for the same work, 7.8 s, stands in here;
        // tools/bench/issue20.sh measures three.js in the same run
        // (tools/bench/threejs_vat.mjs).
        let r = THREEJS_BRAINSTEM_S / exr16.seconds;
        row(
            "EXR16 speed-up over three.js (issue's 7.8 s, not measured here)",
            format!("{r:.1}x"),
            ">= 20x",
            Some(r >= 20.0),
        );
    }
}

/// three.js in Node doing the same VAT work, vertex-frames per second (the
/// earlier performance issue's figure on a 2-core AMD EPYC).
const THREEJS_VF_PER_S: f64 = 2.6e6;

/// three.js in Node on BrainStem with normals, seconds (the figure).
const THREEJS_BRAINSTEM_S: f64 = 7.8;

/// Every model of `../shared/models` with bones, weights and VAT (EXR16,
/// normals) in one `rigbake bake` run: total wall time and peak memory.
fn corpus_rows() {
    let Some(dir) = models_dir() else {
        row(
            "corpus bake (bones, weights, VAT EXR16 + normals)",
            "skipped: ../shared/models not found".to_owned(),
            "< 5 s",
            None,
        );
        return;
    };
    // Every folder holding models but `unsupported/` (files rigbake
    // refuses on purpose, such as Draco).
    let holds_models = |dir: &Path| {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                matches!(
                    e.path().extension().and_then(|x| x.to_str()),
                    Some("glb" | "gltf")
                )
            })
    };
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !p.ends_with("unsupported") && holds_models(p))
        .collect();
    folders.sort();
    let mut args: Vec<&std::ffi::OsStr> = vec!["bake".as_ref()];
    args.extend(folders.iter().map(|f| f.as_os_str()));
    args.extend(
        ["--vat", "--normals", "--format", "exr16"]
            .iter()
            .map(std::ffi::OsStr::new),
    );
    match best_run(&args, 2) {
        Some(run) => {
            row(
                &format!(
                    "corpus bake, {} folders (bones, weights, VAT EXR16 + normals), wall time",
                    folders.len()
                ),
                format!(
                    "{:.2} s ({:.2} s CPU), {:.0} MiB written",
                    run.seconds,
                    run.cpu,
                    run.bytes as f64 / (1 << 20) as f64
                ),
                "< 5 s",
                Some(run.seconds < 5.0),
            );
            row(
                "  ... peak resident memory",
                run.peak_mib
                    .map_or("n/a".to_owned(), |m| format!("{m:.0} MiB")),
                "< 256 MiB",
                run.peak_mib.map(|m| m < 256.0),
            );
        }
        None => row("corpus bake", "failed".to_owned(), "< 5 s", None),
    }
}

fn hwm_kib(status: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
