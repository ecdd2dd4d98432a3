//! Caps on the errors a VAT bake RECORDS (`max_error` of every VAT texture
//! in the container), derived from the encodings' definitions, not from the
//! bake. `vat.rs` checks that the measured error stays under the recorded
//! one; that alone would let a broken encoder record a large error and pass.
//! Here the recorded error itself must stay under what the encoding can
//! introduce at most:
//!
//! The recorded position error is a distance (the largest, over texels, of
//! the Euclidean distance between the baked and the decoded position), so
//! the per-channel caps combine as `sqrt(sum_c cap_c^2)`.
//!
//! - EXR16 positions: f16 has 10 fraction bits, so rounding `x` to nearest
//!   errs by at most half an ulp of its binade, `2^(floor(log2|x|) - 11)`,
//!   largest for the largest absolute coordinate `m_c` of channel `c`. The
//!   values reach the encoder as f32, which adds at most half an f32 ulp
//!   (`m_c * 2^-24`): `cap_c = 2^(floor(log2 m_c) - 11) + m_c * 2^-23`.
//! - PNG16 positions: channel `c` stores `round((x - min_c) / (max_c -
//!   min_c) * 65535)`, off by at most half a step, `(max_c - min_c) / 65535
//!   / 2`; the f32 arithmetic of the mapping adds a few f32 ulps of the
//!   coordinates (`m_c * 2^-21` covers them): `cap_c = (max_c - min_c) /
//!   131070 + m_c * 2^-21`.
//! - PNG16 octahedral normals: each of the two octahedral coordinates in
//!   [-1, 1] is rounded to a 16-bit step of 2/65535, so the point moves by at
//!   most `sqrt(2) / 65535` in the square. The map from the square to the
//!   sphere stretches distances by at most 3: on a face `x + y + z = 1` a
//!   parameter step `d` moves the 3D point by at most `sqrt(3) |d|`, which at
//!   the face's centre (distance `1/sqrt(3)` from the origin, moving
//!   perpendicular to the ray) turns the direction by `sqrt(3) * sqrt(3) |d|`;
//!   the lower hemisphere's fold is a reflection of those faces. Cap: `3 *
//!   sqrt(2) / 65535` rad = 0.003709 degrees (a 4-million-sample f64 brute
//!   force of the documented mapping peaks at 0.003685), plus
//!   `NORMAL_SLACK_DEGREES` for the f32 arithmetic around it.
//! - PNG16 normals with `bounds` direction encoding: each unit component
//!   errs by half a step of its channel's bounds, so the vector by `e =
//!   sqrt(sum_c ((max_c - min_c) / 131070)^2)` and the direction by at most
//!   `asin(e)`: cap `asin(e)` + `NORMAL_SLACK_DEGREES`.
//! - EXR16 normals: each unit component `|c| <= 1` rounds to f16 with an
//!   error of at most `2^-12` (half an ulp of [0.5, 1), the largest binade
//!   below 1; 1 itself is exact), so the vector errs by at most `sqrt(3) *
//!   2^-12` and the direction by `asin(sqrt(3) * 2^-12)` = 0.024228 degrees
//!   (the brute force peaks at 0.02289), plus `NORMAL_SLACK_DEGREES`.

mod common;

use std::path::{Path, PathBuf};

use common::{model_files, rigbake, shared_models};
use rigbake_format::container::Container;
use rigbake_format::meta::{DirectionEncoding, VatEncoding, VatMetadata, VatStream};

/// The f32 arithmetic around a normal's quantisation, in degrees: the
/// normal is rounded to f32 before encoding, and the octahedral projection
/// (a division by the L1 norm), the decode and its normalisation each err by
/// a few f32 ulps (2^-24 rad = 3.4e-6 degrees each), which the octahedral
/// map may stretch by up to 3. 5e-5 degrees is about 15 such ulps, and 75
/// times smaller than the octahedral cap itself, so an encoding bug still
/// shows. (A shared model's normal measured 1.05e-5 degrees past the exact
/// f64 bound.)
const NORMAL_SLACK_DEGREES: f64 = 5e-5;

fn vat(models: &[PathBuf], out: &Path, flags: &[&str]) {
    let mut args: Vec<&std::ffi::OsStr> = vec!["vat".as_ref()];
    args.extend(models.iter().map(|m| m.as_os_str()));
    args.extend(["--out".as_ref(), out.as_os_str()]);
    args.extend(flags.iter().map(std::ffi::OsStr::new));
    let r = rigbake(&args);
    assert!(
        r.status.success(),
        "{flags:?}: {}",
        String::from_utf8_lossy(&r.stderr)
    );
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

/// The VAT record of `name`'s container under `out`; `None` when the model
/// was skipped (nothing moves).
fn record(out: &Path, name: &str) -> Option<VatMetadata> {
    let path = out.join(name).join(format!("{name}.rigbake"));
    if !path.exists() {
        return None;
    }
    let c = Container::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(c.records().vat.as_ref().expect("a VAT record").clone())
}

/// The texture's file name without its extension, which differs between
/// EXR and PNG bakes of the same primitive.
fn texture_key(name: &str) -> String {
    name.rsplit_once('.').map_or(name, |(s, _)| s).to_owned()
}

/// Half an f16 ulp at a channel's largest absolute coordinate `m`, plus the
/// f32 rounding before it (see the module docs).
fn exr16_position_cap(m: f64) -> f64 {
    if m == 0.0 {
        return 0.0;
    }
    2f64.powi(m.log2().floor() as i32 - 11) + m * 2f64.powi(-23)
}

/// Checks every recorded error of `models` against its cap, baking them at
/// EXR16 and PNG16 (octahedral and bounds normals). Returns the textures
/// checked.
fn check_caps(models: &[PathBuf]) -> usize {
    let exr16 = tempfile::tempdir().unwrap();
    let octa = tempfile::tempdir().unwrap();
    let bounds = tempfile::tempdir().unwrap();
    vat(models, exr16.path(), &["--format", "exr16", "--normals"]);
    let png = ["--format", "png16", "--normals", "--direction-encoding"];
    vat(models, octa.path(), &[&png[..], &["octahedral"]].concat());
    vat(models, bounds.path(), &[&png[..], &["bounds"]].concat());
    let octa_cap = (3.0 * 2f64.sqrt() / 65535.0).to_degrees() + NORMAL_SLACK_DEGREES;
    let exr16_normal_cap =
        (3f64.sqrt() * 2f64.powi(-12)).asin().to_degrees() + NORMAL_SLACK_DEGREES;
    let mut checked = 0;
    for m in models {
        let name = stem(m);
        let Some(half) = record(exr16.path(), &name) else {
            assert!(record(octa.path(), &name).is_none(), "{name}");
            continue;
        };
        let octa_vat = record(octa.path(), &name).unwrap();
        let bounds_vat = record(bounds.path(), &name).unwrap();
        assert_eq!(half.encoding, VatEncoding::Exr16);
        assert_eq!(octa_vat.encoding, VatEncoding::Png16);
        assert_eq!(half.textures.len(), octa_vat.textures.len(), "{name}");
        for (png_vat, direction) in [
            (&octa_vat, DirectionEncoding::Octahedral),
            (&bounds_vat, DirectionEncoding::Bounds),
        ] {
            for t in &png_vat.textures {
                let what = format!("{name}: {} ({direction:?})", t.name);
                let b = t.bounds;
                let cap = match t.stream {
                    VatStream::Positions => {
                        let b = b.expect("PNG16 positions have bounds");
                        (0..3)
                            .map(|c| {
                                let m = f64::from(b[0][c].abs().max(b[1][c].abs()));
                                let half_step = f64::from(b[1][c] - b[0][c]) / 131_070.0;
                                (half_step + m * 2f64.powi(-21)).powi(2)
                            })
                            .sum::<f64>()
                            .sqrt()
                    }
                    VatStream::Normals if t.direction_encoding == DirectionEncoding::Octahedral => {
                        octa_cap
                    }
                    VatStream::Normals => {
                        let b = b.expect("bounds-encoded normals have bounds");
                        let e = (0..3)
                            .map(|c| (f64::from(b[1][c] - b[0][c]) / 131_070.0).powi(2))
                            .sum::<f64>()
                            .sqrt();
                        e.min(1.0).asin().to_degrees() + NORMAL_SLACK_DEGREES
                    }
                    _ => continue,
                };
                assert!(
                    t.max_error <= cap,
                    "{what}: recorded error {} is over the PNG16 cap {cap}",
                    t.max_error
                );
                checked += 1;
            }
        }
        // EXR16: the largest coordinate comes from the PNG16 bake's bounds
        // of the same primitive (each channel's min and max of the baked
        // values).
        for t in &half.textures {
            let what = format!("{name}: {} (exr16)", t.name);
            let cap = match t.stream {
                VatStream::Positions => {
                    let png = octa_vat
                        .textures
                        .iter()
                        .find(|p| texture_key(&p.name) == texture_key(&t.name))
                        .unwrap_or_else(|| panic!("{what}: no PNG16 twin"));
                    let b = png.bounds.expect("PNG16 positions have bounds");
                    (0..3)
                        .map(|c| {
                            let m = f64::from(b[0][c].abs().max(b[1][c].abs()));
                            exr16_position_cap(m).powi(2)
                        })
                        .sum::<f64>()
                        .sqrt()
                }
                VatStream::Normals => exr16_normal_cap,
                _ => continue,
            };
            assert!(
                t.max_error <= cap,
                "{what}: recorded error {} is over the EXR16 cap {cap}",
                t.max_error
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_caps_are_what_the_module_docs_derive() {
    // Half an f16 ulp: 1.0 -> 2^-11, 1.5 -> 2^-11, 2.0 -> 2^-10, 0.3 -> 2^-13.
    for (m, half_ulp) in [(1.0, -11), (1.5, -11), (2.0, -10), (0.3, -13)] {
        let cap = exr16_position_cap(m);
        let exact = 2f64.powi(half_ulp);
        assert!(cap >= exact && cap <= exact * 1.001, "{m}: {cap}");
    }
    let octa = (3.0 * 2f64.sqrt() / 65535.0).to_degrees();
    assert!((octa - 0.003_709).abs() < 1e-6, "{octa}");
    let half = (3f64.sqrt() * 2f64.powi(-12)).asin().to_degrees();
    assert!((half - 0.024_228).abs() < 1e-6, "{half}");
    assert_eq!(texture_key("mesh.p0.positions.exr"), "mesh.p0.positions");
}

#[test]
fn fixtures_record_errors_within_the_encoding_caps() {
    let models: Vec<PathBuf> = [
        "two_joint.gltf",
        "tentacle.glb",
        "hierarchy.gltf",
        "spec_worked_example.glb",
        "eight_influences.gltf",
        "two_skins.glb",
    ]
    .iter()
    .map(|f| rigbake_fixtures::fixture(f))
    .collect();
    let checked = check_caps(&models);
    assert!(checked >= 4 * models.len(), "{checked} textures checked");
}

#[test]
fn shared_models_record_errors_within_the_encoding_caps() {
    let Some(models) = shared_models("shared_models_record_errors_within_the_encoding_caps") else {
        return;
    };
    let files: Vec<PathBuf> = model_files(&models)
        .into_iter()
        // BrainStem's Draco copy is compared with BrainStem in compressed.rs.
        .filter(|p| !stem(p).contains("draco"))
        .collect();
    let checked = check_caps(&files);
    assert!(checked > 0, "no texture checked");
}
