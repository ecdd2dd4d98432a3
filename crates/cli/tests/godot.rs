//! VAT bakes played in Godot 3 through Godot's own importers.
//!
//! CesiumMan, Fox and girl (two primitives in one atlas) are baked with
//! `--vat`, and CesiumMan again with `--max-texture-size 2048` (two bands
//! per frame). tools/godot/make_project.py copies each bake's playback mesh
//! (`<model>.vat.glb`) and VAT position texture into a Godot 3 project
//! with the import presets docs/engines.md documents (tools/godot/*.import:
//! the default glTF import, which compresses meshes and so stores UVs as
//! half floats; textures as data). Godot's editor imports them (under
//! `xvfb-run`), then tools/godot/project/run.gd draws frames with
//! docs/shaders/godot3/vat.shader (the shader docs/engines.md quotes) as a
//! white silhouette from the CPU preview's orthographic camera
//! (`crates/bake/src/preview`, `crates/preview`), and saves them. Each frame
//! is compared with the CPU preview's coverage of the same frame:
//! intersection over union at least 0.95 (and better than with another
//! frame of the same clip, so the comparison can tell frames apart).
//!
//! Needs Godot 3 (`godot3` on PATH, Debian package `godot3`, or
//! `RIGBAKE_GODOT`), `xvfb-run` (package `xvfb`) and `python3`. Without them
//! the test is skipped with a message, unless `RIGBAKE_REQUIRE_GODOT` is set
//! (`.ci/run` sets it): then it fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{bake, bright_mask as mask_of, iou, shared_models};
use rigbake::playback;
use rigbake::preview::scene::{self, PathChoice, Producer, Topology};
use rigbake::preview::{fit_camera, render};
use rigbake_preview::camera::{AZIMUTH_DEGREES, ELEVATION_DEGREES};

/// Pixels per side of the compared frames.
const SIZE: u32 = 256;

/// Acceptance bound of the issue (as in tests/view.rs): Godot draws the
/// same triangles as the CPU preview from the same camera; they differ in
/// rasterisation rules at edges, f32 vs f64 arithmetic and the half floats
/// Godot 3 keeps of the positions texture (it loads EXRs as halves).
const MIN_IOU: f64 = 0.95;

/// How long one Godot run (import, or drawing) may take.
const GODOT_TIMEOUT: Duration = Duration::from_secs(300);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn required() -> bool {
    std::env::var_os("RIGBAKE_REQUIRE_GODOT").is_some_and(|v| !v.is_empty() && v != "0")
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|c| c.is_file())
    })
}

/// Godot 3 and xvfb-run, or `None` with a notice (a panic when
/// `RIGBAKE_REQUIRE_GODOT` is set).
fn godot(test: &str) -> Option<(PathBuf, PathBuf)> {
    let godot = std::env::var_os("RIGBAKE_GODOT")
        .map(PathBuf::from)
        .or_else(|| on_path("godot3"));
    let xvfb = on_path("xvfb-run");
    let python = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let why = match (&godot, &xvfb) {
        (None, _) => "godot3 is not on PATH (Debian: apt-get install godot3; or set RIGBAKE_GODOT)"
            .to_owned(),
        (Some(g), _) if !g.is_file() => format!("Godot not found at {}", g.display()),
        (_, None) => "xvfb-run is not on PATH (Debian: apt-get install xvfb)".to_owned(),
        _ if !python => "python3 is not on PATH".to_owned(),
        (Some(g), Some(x)) => {
            let version = Command::new(g).arg("--version").output();
            match version {
                Ok(o) if String::from_utf8_lossy(&o.stdout).starts_with("3.") => {
                    return Some((g.clone(), x.clone()));
                }
                Ok(o) => format!(
                    "{} is not Godot 3 (--version says {:?})",
                    g.display(),
                    String::from_utf8_lossy(&o.stdout).trim()
                ),
                Err(e) => format!("{} does not run: {e}", g.display()),
            }
        }
    };
    if required() {
        panic!("{test}: {why}, and RIGBAKE_REQUIRE_GODOT is set");
    }
    rigbake_fixtures::testkit::notice(&format!("SKIPPED {test}: {why}"));
    None
}

/// Runs Godot (under xvfb-run, with its settings and caches in `home`)
/// with `args`; returns its exit status and output. Panics past
/// [`GODOT_TIMEOUT`].
fn run_godot(
    (godot, xvfb): &(PathBuf, PathBuf),
    home: &Path,
    args: &[&std::ffi::OsStr],
    log: &Path,
) -> (Option<i32>, String) {
    let file = std::fs::File::create(log).unwrap();
    let mut child = Command::new(xvfb)
        .args(["-a", "-s", "-screen 0 640x480x24"])
        .arg(godot)
        .args(["--audio-driver", "Dummy"])
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .expect("start xvfb-run");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > GODOT_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "Godot ran past {GODOT_TIMEOUT:?}: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    (
        status.code(),
        std::fs::read_to_string(log).unwrap_or_default(),
    )
}

/// One frame to draw and its CPU preview.
struct Frame {
    what: String,
    clip: usize,
    row: u32,
    covered: Vec<bool>,
    shot: serde_json::Value,
    out: PathBuf,
}

/// One bake to play.
struct Case {
    /// Name of the case (the bake's folder).
    name: &'static str,
    /// The shared model.
    model: &'static str,
    /// Extra bake flags.
    flags: &'static [&'static str],
    /// Frames per clip to draw.
    frames_per_clip: u32,
    /// Clips to draw (the first ones).
    clips: usize,
}

/// The CPU preview of every frame of `case` to draw, with the camera
/// `run.gd` is to use for each (the preview's, fitted to that frame).
fn frames(case: &Case, container: &Path, model: &Path, shots: &Path) -> Vec<Frame> {
    let loaded = playback::load(container, Some(model), playback::Paths::All).unwrap();
    let topology = Topology::new(&loaded, PathChoice::Vat);
    let mut out = Vec::new();
    for (c, clip) in loaded.clips.iter().enumerate().take(case.clips) {
        let n = clip.info.frames;
        for k in 0..case.frames_per_clip {
            let frame = (n * k / case.frames_per_clip).min(n - 1);
            let meshes = scene::pose(
                &loaded,
                &topology,
                PathChoice::Vat,
                Producer::Bake,
                c,
                frame,
            );
            let camera = fit_camera(std::slice::from_ref(&meshes), SIZE);
            let picture = render(&meshes, &topology, &camera);
            let file = shots.join(format!("{}-{c}-{frame}.png", case.name));
            let center = camera.center;
            out.push(Frame {
                what: format!("{} {} frame {frame}", case.name, clip.name),
                clip: c,
                row: clip.info.start_row + frame,
                covered: picture.covered,
                shot: serde_json::json!({
                    "row": clip.info.start_row + frame,
                    "center": [center.x, center.y, center.z],
                    "half": camera.half_extent,
                    "azimuth": AZIMUTH_DEGREES,
                    "elevation": ELEVATION_DEGREES,
                    "out": file,
                }),
                out: file,
            });
        }
    }
    out
}

/// The rest-pose global matrix (column-major) of the VAT reference node:
/// where the preview stands the bake.
fn reference_placement(container: &Path, model: &Path) -> Vec<f64> {
    let loaded = playback::load(container, Some(model), playback::Paths::All).unwrap();
    let source = &loaded.source.model;
    let node = loaded.vat.as_ref().unwrap().reference_node;
    node.map_or(glam::DMat4::IDENTITY, |n| {
        rigbake_core::reference::direct_global(
            source,
            &rigbake_core::eval::sample::LocalPose::rest(source),
            n,
        )
    })
    .to_cols_array()
    .to_vec()
}

#[test]
fn godot3_plays_vat_bakes_like_the_cpu_preview() {
    let test = "godot3_plays_vat_bakes_like_the_cpu_preview";
    let Some(tools) = godot(test) else {
        return;
    };
    let Some(models) = shared_models(test) else {
        return;
    };
    let cases = [
        Case {
            name: "CesiumMan",
            model: "khronos/CesiumMan.glb",
            flags: &[],
            frames_per_clip: 3,
            clips: 1,
        },
        Case {
            name: "CesiumMan-bands",
            model: "khronos/CesiumMan.glb",
            flags: &["--max-texture-size", "2048"],
            frames_per_clip: 2,
            clips: 1,
        },
        Case {
            name: "Fox",
            model: "khronos/Fox.glb",
            flags: &[],
            frames_per_clip: 2,
            clips: 3,
        },
        Case {
            name: "girl",
            model: "raylib/girl.glb",
            flags: &[],
            frames_per_clip: 2,
            clips: 2,
        },
    ];
    let tmp = tempfile::tempdir().unwrap();
    let shots = tmp.path().join("shots");
    std::fs::create_dir_all(&shots).unwrap();
    let project = tmp.path().join("project");

    // Bake, and the CPU preview of every frame to draw.
    let mut sidecars = Vec::new();
    let mut all: Vec<(Vec<Frame>, Vec<f64>)> = Vec::new();
    for case in &cases {
        let out = tmp.path().join("out").join(case.name);
        let model = models.join(case.model);
        let o = bake(
            std::slice::from_ref(&model),
            &out,
            &[&["--vat"], case.flags].concat(),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stem = model.file_stem().unwrap().to_string_lossy().into_owned();
        let container = out.join(&stem).join(format!("{stem}.rigbake"));
        let sidecar = container.with_extension("rigbake.json");
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&sidecar).unwrap()).unwrap();
        assert_eq!(doc["vat"]["lookup_uv"], "split_index", "{}", case.name);
        // The playback mesh's node matrix carries the placement (format
        // 1.11): Godot's importer must stand the model there.
        all.push((
            frames(case, &container, &model, &shots),
            reference_placement(&container, &model),
        ));
        sidecars.push((case.name, sidecar, doc));
    }

    // The project: make_project.py copies the bakes and the presets.
    let mut make = Command::new("python3");
    make.arg(repo().join("tools/godot/make_project.py"))
        .arg(&project);
    for (name, sidecar, _) in &sidecars {
        make.arg(format!("{name}={}", sidecar.display()));
    }
    let made = make.output().unwrap();
    assert!(
        made.status.success(),
        "make_project.py failed: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    let entries: Vec<serde_json::Value> = String::from_utf8(made.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), cases.len());

    // Godot's editor imports the project's files with the presets beside
    // them. Godot 3.2.3 may crash on its way out after importing (signal
    // 11 in its exit path, seen here every time): what counts is that
    // every file was imported, checked below and when run.gd loads them.
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let started = Instant::now();
    let (code, log) = run_godot(
        &tools,
        &home,
        &[
            "--path".as_ref(),
            project.as_os_str(),
            "-e".as_ref(),
            "--quit".as_ref(),
        ],
        &tmp.path().join("import.log"),
    );
    rigbake_fixtures::testkit::notice(&format!(
        "godot3 import: exit {code:?} in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    for (entry, (name, _, _)) in entries.iter().zip(&sidecars) {
        for key in ["scene", "positions"] {
            let res = entry[key].as_str().unwrap();
            let import = project.join(format!("{}.import", &res["res://".len()..]));
            let text = std::fs::read_to_string(&import).unwrap();
            let dest = text
                .lines()
                .find_map(|l| l.strip_prefix("path=\"res://"))
                .unwrap_or_else(|| panic!("{name}: Godot did not import {res}: {text}\n{log}"));
            let dest = project.join(dest.trim_end_matches('"'));
            assert!(dest.is_file(), "{name}: {} missing\n{log}", dest.display());
        }
    }

    // Draw every frame.
    let job_models: Vec<serde_json::Value> = entries
        .iter()
        .zip(&all)
        .map(|(entry, (frames, _))| {
            let mut m = entry.clone();
            m["placement"] = serde_json::Value::Null;
            m["shots"] = frames.iter().map(|f| f.shot.clone()).collect();
            m
        })
        .collect();
    let report_file = tmp.path().join("report.json");
    let job = serde_json::json!({
        "size": SIZE, "models": job_models, "report": report_file,
    });
    let job_file = tmp.path().join("job.json");
    std::fs::write(&job_file, serde_json::to_vec_pretty(&job).unwrap()).unwrap();
    let started = Instant::now();
    let (code, log) = run_godot(
        &tools,
        &home,
        &[
            "--path".as_ref(),
            project.as_os_str(),
            "--".as_ref(),
            format!("--job={}", job_file.display()).as_ref(),
        ],
        &tmp.path().join("draw.log"),
    );
    rigbake_fixtures::testkit::notice(&format!(
        "godot3 drawing: exit {code:?} in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    let report: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&report_file)
            .unwrap_or_else(|e| panic!("run.gd wrote no report ({e}):\n{log}")),
    )
    .unwrap();
    assert!(
        report["error"].is_null(),
        "run.gd: {}\n{log}",
        report["error"]
    );
    // A shader Godot cannot compile draws nothing (or its fallback): say so.
    assert!(
        !log.contains("SHADER ERROR"),
        "Godot did not compile docs/shaders/godot3/vat.shader:\n{log}"
    );

    // What Godot's importers made of the files: the lookup UV set kept,
    // and (the point of the split index) compressed to half floats by the
    // default import; the positions as an uncompressed float image with no
    // filter, mipmaps or repeat.
    // Every mesh stands at the reference node's rest-pose global matrix,
    // as the preview stands the bake (and the sidecar's placement says).
    for (((model, (name, _, doc)), entry), (_, placement)) in report["models"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&sidecars)
        .zip(&entries)
        .zip(&all)
    {
        let uv2 = entry["lookup_uv_set"] == 1;
        let recorded: Vec<f64> = serde_json::from_value(doc["placement"]["matrix"].clone())
            .unwrap_or_else(|e| panic!("{name}: the sidecar's placement: {e}"));
        let scale = placement.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for (a, b) in recorded.iter().zip(placement) {
            assert!(
                (a - b).abs() <= 1e-6 * scale,
                "{name}: sidecar placement {recorded:?} != {placement:?}"
            );
        }
        for s in model["surfaces"].as_array().unwrap() {
            let global: Vec<f64> = serde_json::from_value(s["global"].clone()).unwrap();
            for (a, b) in global.iter().zip(placement) {
                assert!(
                    (a - b).abs() <= 1e-5 * scale,
                    "{name}: Godot placed {} at {global:?}, not {placement:?}",
                    s["node"]
                );
            }
            let (kept, compressed) = if uv2 {
                (s["uv2"].as_bool(), s["uv2_compressed"].as_bool())
            } else {
                (Some(true), s["uv_compressed"].as_bool())
            };
            assert_eq!(kept, Some(true), "{name}: no lookup UV: {s}");
            assert_eq!(
                compressed,
                Some(true),
                "{name}: the default import did not compress the lookup UV: {s}"
            );
        }
        let t = &model["texture"];
        rigbake_fixtures::testkit::notice(&format!("godot3 {name}: positions imported as {t}"));
        // Image.FORMAT_RF (8) .. FORMAT_RGBAH (15): float formats.
        let format = t["image_format"].as_u64().unwrap();
        assert!((8..=15).contains(&format), "{name}: not a float image: {t}");
        assert_eq!(
            t["flags"], 0,
            "{name}: texture flags (filter, mipmaps, repeat): {t}"
        );
        assert_eq!(t["mipmaps"], false, "{name}: {t}");
    }

    // Compare every frame with its CPU preview, and with another frame of
    // the same clip (the comparison must tell them apart).
    // Failures are gathered, the frames kept (with the preview's coverage
    // beside each, `*.preview.png`) and the folder named.
    let mut failures = Vec::new();
    for (frames, _) in &all {
        for f in frames {
            let (w, h, mask) = mask_of(&f.out);
            assert_eq!((w, h), (SIZE, SIZE), "{}: screenshot size", f.what);
            let (score, area) = iou(&mask, &f.covered);
            let other = frames
                .iter()
                .filter(|o| o.clip == f.clip && o.row != f.row)
                .map(|o| iou(&mask, &o.covered).0)
                .fold(0.0, f64::max);
            rigbake_fixtures::testkit::notice(&format!(
                "godot3 {}: IoU {score:.4} over {area} pixels (best other frame {other:.4})",
                f.what
            ));
            if area <= 500 {
                failures.push(format!("{}: almost nothing drawn ({area} pixels)", f.what));
            } else if score < MIN_IOU {
                failures.push(format!("{}: IoU {score:.4} < {MIN_IOU}", f.what));
            } else if score <= other {
                failures.push(format!(
                    "{}: another frame matches as well ({other:.4})",
                    f.what
                ));
            }
            write_mask(&f.out.with_extension("preview.png"), &f.covered);
        }
    }
    if !failures.is_empty() {
        let kept = tmp.keep();
        panic!(
            "{} frame(s) differ from the CPU preview (frames, logs and project kept in {}):\n{}",
            failures.len(),
            kept.display(),
            failures.join("\n")
        );
    }
}

/// A coverage mask as a grey PNG (white: covered).
fn write_mask(file: &Path, covered: &[bool]) {
    let mut encoder = png::Encoder::new(std::fs::File::create(file).unwrap(), SIZE, SIZE);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    let data: Vec<u8> = covered.iter().map(|&c| if c { 255 } else { 0 }).collect();
    encoder
        .write_header()
        .unwrap()
        .write_image_data(&data)
        .unwrap();
}

/// docs/engines.md quotes, in its "Godot 3" section, exactly the shader
/// and import presets the test above uses.
#[test]
fn the_godot3_docs_quote_the_tested_shader_and_presets() {
    let root = repo();
    let doc = std::fs::read_to_string(root.join("docs/engines.md")).unwrap();
    let start = doc
        .find("\n## Godot 3\n")
        .expect("docs/engines.md has a Godot 3 section");
    let end = doc[start + 1..]
        .find("\n## ")
        .map_or(doc.len(), |e| start + 1 + e);
    let section = &doc[start..end];
    for (file, fence) in [
        ("docs/shaders/godot3/vat.shader", "```glsl\n"),
        ("tools/godot/vat_texture.import", "```ini\n"),
        ("tools/godot/vat_mesh.import", "```ini\n"),
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(
            section.contains(&format!("{fence}{text}```\n")),
            "docs/engines.md, \"Godot 3\", does not quote {file} as it is"
        );
    }
    // make_project.py copies the presets and the shader the doc quotes.
    let make = std::fs::read_to_string(root.join("tools/godot/make_project.py")).unwrap();
    for file in [
        "docs/shaders/godot3/vat.shader",
        "vat_texture.import",
        "vat_mesh.import",
    ] {
        assert!(make.contains(file), "make_project.py does not use {file}");
    }
}
