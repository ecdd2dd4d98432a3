//! three.js as an independent oracle (issue 21): every skinned model in the
//! shared models folder and every skinned fixture is baked with `rigbake
//! bake` (bone-matrix textures and weights) and `rigbake vat` (exr32), the
//! bakes are played back from their files through the shaders' CPU
//! reference (`rigbake_core::runtime`), and the vertices are compared with
//! what three.js computes for the same clip times: its GLTFLoader imports
//! the model, its AnimationMixer interpolates the keys, its scene graph
//! makes the world matrices, and `SkinnedMesh.applyBoneTransform` and
//! `Mesh.getVertexPosition` skin and morph the vertices
//! (`tools/node/oracle.mjs`, three.js pinned in `tools/node/package.json`).
//! The oracle shares no import, keyframe or pose code with rigbake, so a
//! bug there (a wrong slerp, a misread accessor, a swapped matrix order)
//! shows up here even when `rigbake verify` and `core::reference` agree with
//! the bake. See `docs/oracle.md`.
//!
//! Conventions, and how the comparison bridges them:
//!
//! - **Space.** The oracle reports world positions (the node's
//!   `matrixWorld` applied to three.js's mesh-local result) and every node's
//!   world matrix. Bone-path vertices are in the space of the bone set's
//!   mesh node, VAT vertices in the space of the VAT's reference node; the
//!   test maps three.js's world positions into that space with the inverse
//!   of three.js's own world matrix of that node. three.js binds glTF skins
//!   with an identity bind matrix and, in its attached bind mode, ends
//!   skinning with the inverse of the mesh's current world matrix: like the
//!   glTF spec it ignores the skinned mesh node's transform for placement,
//!   and the mesh-local result is exactly rigbake's "model space".
//! - **Weights.** three.js reads only JOINTS_0/WEIGHTS_0 and renormalises
//!   them back into the accessor's storage (re-quantising u8/u16 weights).
//!   The oracle skins with every set, renormalised in f64 (rigbake's rule);
//!   the bake keeps up to 8 influences (`--max-influences 8`), so no weight
//!   is dropped on either side.
//! - **Normals** are not compared: three.js uses the blended matrix for
//!   normals (its shader; the CPU path has none), rigbake the inverse
//!   transpose by default.
//! - **Clip time.** rigbake samples frame `i` at `min(i / fps, duration)` on
//!   the animation's own time axis (a clip whose first key is at 0.0417 s
//!   holds its first pose before it). The oracle gets those absolute times
//!   and plays each clip with `LoopOnce` and `clampWhenFinished`, so the
//!   last time holds the last pose instead of wrapping; every node and
//!   morph weight is reset to rest before each sample, as three.js would
//!   otherwise keep what the previous clip left on nodes the current clip
//!   does not animate.
//!
//! Tolerance: the largest position error, over every compared vertex and
//! row, must stay below [`REL_TOLERANCE`] (1e-5) of the diagonal of the box
//! around the oracle's compared positions. Both sides compute in f32 or
//! better from f32 data: three.js keeps key values and vertices as f32 and
//! composes matrices in f64; rigbake composes in f64, stores f32 matrices
//! or positions (exr32) and skins in f32. Each side's rounding is a few f32
//! ulps (6e-8 each) of the coordinates, times the depth of a joint chain
//! and the extent of the model against its size: measured on every shared
//! model and fixture, the largest difference is 4.4e-7 of the size
//! (BrainStem), so 1e-5 leaves a margin above twenty, and is the default
//! tolerance of `rigbake verify` too. Interpolation bugs are far larger:
//! slerp replaced by nlerp turns a joint by 0.9 degrees less at the
//! quarter point of a 90-degree key interval, 1.6e-2 of the length of what
//! it carries (docs/oracle.md lists the errors it produced here).
//!
//! Rows: every frame row would make big models slow, so each path compares
//! a deterministic subset ([`pick_rows`]: of every clip its first, second
//! and last frame and frames spread evenly between, thinned evenly to at
//! most [`MAX_ROWS`]). The VAT is baked at [`VAT_FPS`] (between the keys of
//! 30 fps animations, so the oracle checks interpolation there, where the
//! bone bake's 30 fps rows mostly land on keys) for at most
//! [`VAT_MAX_CLIPS`] clips, at a lower rate when the texture would exceed
//! [`VAT_BUDGET`] vertex-frames.
//!
//! Skips: without the models folder (`RIGBAKE_MODELS`, else
//! `../shared/models` beside the repository) or without node and three.js
//! (`npm ci --prefix tools/node`), the tests say so on stderr past the
//! harness's capture and pass; `RIGBAKE_REQUIRE_MODELS` and
//! `RIGBAKE_REQUIRE_THREEJS` (`.ci/run` sets the latter) make those
//! failures.

mod common;
#[path = "oracle_threejs/ours.rs"]
mod ours;
#[path = "oracle_threejs/threejs.rs"]
mod threejs;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use glam::{DMat4, DVec3};
use ours::{Bones, Named, Played, Vat};
use threejs::{Evaluation, Sample, Unavailable};

/// Largest position error relative to the model's size (see module docs).
const REL_TOLERANCE: f64 = 1e-5;
/// Most rows compared per path and model.
const MAX_ROWS: usize = 40;
/// VAT sampling rate.
const VAT_FPS: f64 = 24.0;
/// Most clips baked into the VAT.
const VAT_MAX_CLIPS: usize = 4;
/// Most vertex-frames baked into the VAT (about 24 MB of exr32).
const VAT_BUDGET: f64 = 2.0e6;

/// Writes `line` to stderr past the test harness's capture.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Whether environment variable `var` is set (and not empty or `0`).
fn required(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Skips the test (or fails it when `var` is set) for `reason`.
fn skip(test: &str, var: &str, reason: &str) {
    assert!(!required(var), "{test}: {reason} ({var} is set)");
    say(&format!("SKIPPED {test}: {reason}"));
}

/// The shared models folder, if present.
fn shared_models() -> Option<PathBuf> {
    let dir = std::env::var_os("RIGBAKE_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"));
    dir.join("SOURCES.md").is_file().then_some(dir)
}

/// Every .glb/.gltf under `dir` (recursively when `deep`), sorted.
fn model_files(dir: &Path, deep: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                if deep {
                    stack.push(p);
                }
            } else if matches!(p.extension().and_then(|e| e.to_str()), Some("glb" | "gltf")) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

/// Runs `rigbake` with `args`; panics with its stderr when it fails.
fn rigbake(args: &[&str], model: &Path, out: &Path) {
    let result = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .args(args)
        .arg(model)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .output()
        .expect("rigbake runs");
    assert!(
        result.status.success(),
        "rigbake {} {} failed:\n{}",
        args.join(" "),
        model.display(),
        String::from_utf8_lossy(&result.stderr)
    );
}

/// The rows compared on a clip table: of every clip, its first, second and
/// last frame and frames spread evenly between (about [`MAX_ROWS`] over
/// the whole table), then every k-th of those so that at most
/// [`MAX_ROWS`] remain (always keeping the last).
fn pick_rows(metadata: &rigbake_format::meta::Metadata) -> Vec<u32> {
    let per_clip = (MAX_ROWS / metadata.clips.len().max(1)).max(3) as u32;
    let mut rows = Vec::new();
    for c in &metadata.clips {
        let last = c.frames.saturating_sub(1);
        rows.push(c.start_row + 1.min(last));
        for i in 0..per_clip {
            rows.push(c.start_row + (i * last).div_ceil(per_clip - 1));
        }
    }
    rows.sort_unstable();
    rows.dedup();
    if rows.len() > MAX_ROWS {
        let step = rows.len().div_ceil(MAX_ROWS);
        let last = *rows.last().unwrap();
        rows = rows.into_iter().step_by(step).collect();
        if rows.last() != Some(&last) {
            rows.push(last);
        }
    }
    rows
}

/// The VAT bake's clips and rate for a model (see module docs).
fn vat_plan(eval: &Evaluation) -> (Vec<String>, f64) {
    let names = eval.clip_names();
    let durations: Vec<f64> = eval.header.animations.iter().map(|a| a.duration).collect();
    let chosen: Vec<usize> = if names.len() > VAT_MAX_CLIPS {
        (0..VAT_MAX_CLIPS)
            .map(|i| i * (names.len() - 1) / (VAT_MAX_CLIPS - 1))
            .collect()
    } else {
        (0..names.len()).collect()
    };
    let vertices: usize = eval.header.primitives.iter().map(|p| p.vertices).sum();
    let seconds: f64 = chosen.iter().map(|&i| durations[i]).sum();
    let frames_at = |fps: f64| seconds * fps + chosen.len().max(1) as f64;
    let mut fps = VAT_FPS;
    if vertices as f64 * frames_at(fps) > VAT_BUDGET && seconds > 0.0 {
        fps = ((VAT_BUDGET / vertices as f64 - chosen.len() as f64) / seconds).clamp(1.0, VAT_FPS);
        fps = (fps * 4.0).floor() / 4.0;
    }
    let clips = if chosen.len() < names.len() {
        chosen.iter().map(|&i| names[i].clone()).collect()
    } else {
        Vec::new()
    };
    (clips, fps)
}

/// The oracle's primitive matching a record's names: the k-th record
/// naming a node takes the k-th unused node of that name holding a mesh of
/// that name.
fn find_primitive(eval: &Evaluation, named: &Named, used: &mut Vec<usize>) -> usize {
    let found = eval
        .header
        .primitives
        .iter()
        .enumerate()
        .position(|(i, p)| {
            !used.contains(&i)
                && eval.node_name(p.node) == named.node
                && eval.mesh_name(p.mesh) == named.mesh
                && p.primitive == named.primitive as usize
        });
    let i = found.unwrap_or_else(|| {
        panic!(
            "three.js has no node `{}` with mesh `{}` primitive {}",
            named.node, named.mesh, named.primitive
        )
    });
    used.push(i);
    i
}

/// The first node named `name` that holds a mesh, as the bake names nodes.
fn mesh_node(eval: &Evaluation, name: &str) -> usize {
    (0..eval.header.nodes.len())
        .find(|&n| {
            let node = &eval.header.nodes[n];
            node.mesh.is_some() && node.in_scene && eval.node_name(n) == name
        })
        .unwrap_or_else(|| panic!("three.js has no mesh node `{name}` in its scene"))
}

/// The largest error of one path of one model.
#[derive(Debug, Default)]
struct PathError {
    /// Largest distance, model units.
    max: f64,
    /// Diagonal of the box around the oracle's positions.
    diagonal: f64,
    /// Where the largest distance was.
    worst: String,
    /// Rows, primitives and vertex positions compared.
    rows: usize,
    primitives: usize,
    positions: usize,
}

impl PathError {
    fn relative(&self) -> f64 {
        if self.diagonal > 0.0 {
            self.max / self.diagonal
        } else {
            self.max
        }
    }
}

/// Accumulates one path's comparison.
struct Compare {
    error: PathError,
    lo: DVec3,
    hi: DVec3,
}

impl Compare {
    fn new(rows: usize, primitives: usize) -> Self {
        Self {
            error: PathError {
                rows,
                primitives,
                ..PathError::default()
            },
            lo: DVec3::splat(f64::INFINITY),
            hi: DVec3::splat(f64::NEG_INFINITY),
        }
    }

    /// Compares `ours` with three.js's world positions of primitive `p` at
    /// sample `s`, mapped by `to_space`.
    fn add(
        &mut self,
        eval: &Evaluation,
        s: usize,
        p: usize,
        to_space: DMat4,
        ours: &[glam::Vec3],
        what: &dyn Fn() -> String,
    ) {
        for (v, ours) in ours.iter().enumerate() {
            let expected = to_space.transform_point3(eval.position(s, p, v));
            self.lo = self.lo.min(expected);
            self.hi = self.hi.max(expected);
            let d = (ours.as_dvec3() - expected).length();
            if d > self.error.max || d.is_nan() {
                self.error.max = if d.is_nan() { f64::INFINITY } else { d };
                self.error.worst = format!(
                    "{}, vertex {v}: ours {ours:?}, three.js {expected:?}",
                    what()
                );
            }
        }
        self.error.positions += ours.len();
    }

    fn finish(mut self) -> PathError {
        self.error.diagonal = if self.lo.x <= self.hi.x {
            (self.hi - self.lo).length()
        } else {
            0.0
        };
        self.error
    }
}

/// Maps a row to its oracle sample (clip name, or `None` for the rest
/// clip of a model without animations).
fn sample_of(metadata: &rigbake_format::meta::Metadata, row: u32, eval: &Evaluation) -> Sample {
    let (clip, time) = ours::row_time(metadata, row);
    let rest = clip == "rest" && eval.header.animations.is_empty();
    Sample {
        clip: (!rest).then_some(clip),
        time,
    }
}

/// What the comparison of one model found.
struct ModelResult {
    three: String,
    skinned: bool,
    bones: Option<PathError>,
    vat: Option<PathError>,
}

/// Compares one path of a bake with three.js: `rows` of `played` were
/// evaluated as `samples[first..]`. Every primitive three.js skins must be
/// among the path's primitives (`record` names the path in the message).
/// Primitives of the nodes in `unloaded` (MSFT_lod levels, which three.js
/// does not load) are left out.
fn compare_path(
    eval: &Evaluation,
    samples: &[Sample],
    first: usize,
    rows: &[u32],
    played: &dyn Played,
    record: &str,
    unloaded: &[String],
) -> PathError {
    let named = played.named();
    let mut used = Vec::new();
    let kept: Vec<usize> = (0..named.len())
        .filter(|&k| !unloaded.contains(&named[k].node))
        .collect();
    let matched: Vec<usize> = kept
        .iter()
        .map(|&k| find_primitive(eval, named[k], &mut used))
        .collect();
    for (i, p) in eval.header.primitives.iter().enumerate() {
        assert!(
            !p.skinned || matched.contains(&i),
            "skinned node `{}` primitive {} is not in the {record}",
            eval.node_name(p.node),
            p.primitive
        );
    }
    let spaces: Vec<Option<usize>> = kept
        .iter()
        .map(|&k| played.space_node(k).map(|n| mesh_node(eval, n)))
        .collect();
    let mut cmp = Compare::new(rows.len(), matched.len());
    for (i, &row) in rows.iter().enumerate() {
        let s = first + i;
        for (j, (&k, &p)) in kept.iter().zip(&matched).enumerate() {
            let to_space = spaces[j].map_or(DMat4::IDENTITY, |n| eval.node_world(s, n).inverse());
            let ours = played.vertices(k, row);
            assert_eq!(ours.len(), eval.header.primitives[p].vertices);
            cmp.add(eval, s, p, to_space, &ours, &|| {
                format!(
                    "row {row} ({:?} at {:.4} s), node `{}` primitive {}",
                    samples[s].clip, samples[s].time, named[k].node, named[k].primitive
                )
            });
        }
    }
    cmp.finish()
}

/// Bakes `model` both ways into `work` and compares both paths with
/// three.js, evaluated `shift` seconds after each row's time (0 but in the
/// test that the comparison notices a wrong pose). `Err` when three.js is
/// unavailable.
fn compare_model(model: &Path, work: &Path, shift: f64) -> Result<ModelResult, Unavailable> {
    let name = stem(model);
    let described = threejs::evaluate(model, &[], work)?;
    let skinned = described.header.primitives.iter().any(|p| p.skinned);

    let bones_out = work.join("bones");
    let bones = if skinned {
        rigbake(&["bake", "--max-influences", "8"], model, &bones_out);
        Some(
            Bones::read(&bones_out.join(&name), &name)
                .unwrap_or_else(|| panic!("{name}: the bone bake wrote no weights")),
        )
    } else {
        None
    };
    let (clips, fps) = vat_plan(&described);
    let fps_text = fps.to_string();
    let mut args = vec!["vat", "--format", "exr32", "--fps", &fps_text];
    for c in &clips {
        args.extend(["--clip", c.as_str()]);
    }
    let vat_out = work.join("vat");
    rigbake(&args, model, &vat_out);
    let vat = Vat::read(&vat_out.join(&name), &name);

    let bone_rows = bones
        .as_ref()
        .map(|b| pick_rows(b.metadata()))
        .unwrap_or_default();
    let vat_rows = vat
        .as_ref()
        .map(|v| pick_rows(v.metadata()))
        .unwrap_or_default();
    let mut samples = Vec::new();
    if let Some(b) = &bones {
        samples.extend(
            bone_rows
                .iter()
                .map(|&r| sample_of(&b.metadata, r, &described)),
        );
    }
    if let Some(v) = &vat {
        samples.extend(
            vat_rows
                .iter()
                .map(|&r| sample_of(&v.metadata, r, &described)),
        );
    }
    for s in &mut samples {
        s.time += shift;
    }
    let eval = threejs::evaluate(model, &samples, work)?;

    // three.js does not implement MSFT_lod: the lower levels, outside the
    // scene, are not loaded (lods.rs compares them with direct evaluation).
    let source = rigbake_core::import::import_file(model, &Default::default()).unwrap();
    let unloaded: Vec<String> = source
        .lods
        .iter()
        .filter(|g| g.source == rigbake_core::lod::LodSource::MsftLod)
        .flat_map(|g| g.levels[1..].iter().map(|&n| source.nodes[n].name.clone()))
        .collect();
    let bone_error = bones.as_ref().map(|b| {
        compare_path(
            &eval,
            &samples,
            0,
            &bone_rows,
            b,
            "bone-weight record",
            &unloaded,
        )
    });
    let vat_error = vat.as_ref().map(|v| {
        compare_path(
            &eval,
            &samples,
            bone_rows.len(),
            &vat_rows,
            v,
            "VAT",
            &unloaded,
        )
    });

    Ok(ModelResult {
        three: eval.header.three.clone(),
        skinned,
        bones: bone_error,
        vat: vat_error,
    })
}

fn describe(e: &Option<PathError>) -> String {
    match e {
        Some(e) => format!(
            "{:.2e} of {:.3} ({} rows, {} prims, {} positions)",
            e.relative(),
            e.diagonal,
            e.rows,
            e.primitives,
            e.positions
        ),
        None => "-".to_owned(),
    }
}

/// Compares every model of `models`; fails listing every model over the
/// tolerance.
fn run(test: &str, models: &[PathBuf]) {
    let mut failures = Vec::new();
    let mut compared = 0;
    for model in models {
        let work = tempfile::tempdir().unwrap();
        let name = stem(model);
        // A model that cannot be compared (a failed bake, a primitive
        // three.js does not have) is a failure of its own; the others are
        // still compared and reported.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            compare_model(model, work.path(), 0.0)
        }));
        let result = match outcome {
            Ok(Ok(r)) => r,
            Ok(Err(Unavailable::Missing(reason))) => {
                skip(test, "RIGBAKE_REQUIRE_THREEJS", &reason);
                return;
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|m| (*m).to_owned()))
                    .unwrap_or_default();
                failures.push(format!("{name}: {message}"));
                continue;
            }
        };
        say(&format!(
            "oracle three.js r{} {name}: bones {}; vat {}",
            result.three,
            describe(&result.bones),
            describe(&result.vat)
        ));
        if result.skinned && (result.bones.is_none() || result.vat.is_none()) {
            failures.push(format!("{name}: skinned but not compared on both paths"));
        }
        for (path, e) in [("bones", &result.bones), ("vat", &result.vat)] {
            if let Some(e) = e {
                compared += 1;
                if e.relative() > REL_TOLERANCE || e.relative().is_nan() {
                    failures.push(format!(
                        "{name} {path}: error {:.3e} of the size {:.4} (tolerance {REL_TOLERANCE:e}); worst at {}",
                        e.relative(),
                        e.diagonal,
                        e.worst
                    ));
                }
            }
        }
    }
    assert!(compared > 0, "{test}: nothing was compared");
    assert!(
        failures.is_empty(),
        "{test}: rigbake disagrees with three.js:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_shared_model_matches_threejs_on_both_paths() {
    let test = "every_shared_model_matches_threejs_on_both_paths";
    let Some(dir) = shared_models() else {
        skip(
            test,
            "RIGBAKE_REQUIRE_MODELS",
            "third-party models not found (set RIGBAKE_MODELS to their folder)",
        );
        return;
    };
    // `unsupported/` holds the Draco file, which three.js cannot decode
    // without its Draco decoder (rigbake decodes it: tests/compressed.rs
    // compares its bake with BrainStem's).
    let models: Vec<PathBuf> = model_files(&dir, true)
        .into_iter()
        .filter(|m| !m.components().any(|c| c.as_os_str() == "unsupported"))
        .collect();
    run(test, &models);
}

#[test]
fn every_skinned_fixture_matches_threejs_on_both_paths() {
    // Top-level fixtures only: `fixtures/degenerate/` holds inputs rigbake
    // must refuse.
    let models = model_files(&rigbake_fixtures::fixtures_dir(), false);
    run(
        "every_skinned_fixture_matches_threejs_on_both_paths",
        &models,
    );
}

/// The comparison is not vacuous: three.js evaluated half a frame late
/// (what a clip-time or interpolation bug looks like) is far outside the
/// tolerance on both paths.
#[test]
fn the_comparison_notices_poses_half_a_frame_late() {
    let test = "the_comparison_notices_poses_half_a_frame_late";
    let work = tempfile::tempdir().unwrap();
    let model = rigbake_fixtures::fixture("two_joint.gltf");
    let result = match compare_model(&model, work.path(), 0.5 / 30.0) {
        Ok(r) => r,
        Err(Unavailable::Missing(reason)) => {
            skip(test, "RIGBAKE_REQUIRE_THREEJS", &reason);
            return;
        }
    };
    for (path, e) in [("bones", &result.bones), ("vat", &result.vat)] {
        let e = e.as_ref().unwrap_or_else(|| panic!("{path} not compared"));
        assert!(
            e.relative() > 100.0 * REL_TOLERANCE,
            "{path}: {:.3e} of the size",
            e.relative()
        );
    }
}
