//! VAT texture compression (`vat.compression`, `--compression`) and output determinism:
//! lossless modes decode to exactly the uncompressed samples, PXR24 on
//! 32-bit floats loses exactly what its recorded error says (measured here
//! from the two files, with the exr crate, not from the writer's code), and
//! compressed EXRs and PNGs are byte-identical on 1 and 2 threads. The
//! OpenEXR reference library reads every mode (interop.rs).

use std::path::Path;

use rigbake_format::container::Container;
use rigbake_format::meta::{VatMetadata, VatStream};
use rigbake_types::{DirectionEncoding, TextureCompression, VatEncoding};

use crate::common::{bake, on_threads, read_exr, settings, tree, vat_only};

/// The VAT bake of `rigbake vat` on the tentacle into `out` with normals,
/// tangents, `encoding` and `compression`, on `threads` threads.
fn vat(out: &Path, encoding: VatEncoding, compression: TextureCompression, threads: usize) {
    vat_with(
        out,
        encoding,
        compression,
        DirectionEncoding::Octahedral,
        threads,
    );
}

/// [`vat`] with the PNG direction encoding given.
fn vat_with(
    out: &Path,
    encoding: VatEncoding,
    compression: TextureCompression,
    directions: DirectionEncoding,
    threads: usize,
) {
    let s = settings(|s| {
        vat_only(s);
        s.vat.options.normals = true;
        s.vat.options.tangents = true;
        s.vat.encoding = encoding;
        s.vat.compression = compression;
        s.vat.direction_encoding = directions;
    });
    let model = rigbake_fixtures::fixture("tentacle.glb");
    on_threads(Some(threads), || bake(&model, out, &s)).baked();
}

fn records(out: &Path) -> (VatMetadata, Vec<TextureCompression>) {
    let c = Container::open(&out.join("tentacle/tentacle.rigbake")).unwrap();
    let vat = c.records().vat.as_ref().expect("a VAT record").clone();
    let compression = c
        .records()
        .vat_compression
        .as_ref()
        .expect("a VAT compression record")
        .textures
        .clone();
    (vat, compression)
}

/// Every VAT texture of a bake, decoded with the exr crate, in table order.
fn decoded(out: &Path) -> Vec<Vec<f32>> {
    let (vat, _) = records(out);
    vat.textures
        .iter()
        .map(|t| read_exr(&out.join("tentacle").join(&t.name)).data)
        .collect()
}

fn size(out: &Path) -> u64 {
    records(out).0.textures.iter().map(|t| t.bytes).sum()
}

#[test]
fn lossless_modes_decode_to_the_uncompressed_samples_and_are_recorded() {
    for format in [VatEncoding::Exr16, VatEncoding::Exr32] {
        let plain = tempfile::tempdir().unwrap();
        vat(plain.path(), format, TextureCompression::None, 2);
        let (plain_vat, plain_modes) = records(plain.path());
        assert!(plain_modes.iter().all(|m| *m == TextureCompression::None));
        let exact = decoded(plain.path());
        let mut modes = vec![TextureCompression::Zip, TextureCompression::Piz];
        if format == VatEncoding::Exr16 {
            modes.push(TextureCompression::Pxr24);
        }
        for mode in modes {
            let out = tempfile::tempdir().unwrap();
            vat(out.path(), format, mode, 2);
            let (v, recorded) = records(out.path());
            assert_eq!(
                recorded,
                vec![mode; v.textures.len()],
                "{format:?} {mode:?}"
            );
            assert_eq!(
                decoded(out.path()),
                exact,
                "{format:?} {mode:?} is lossless"
            );
            for (a, b) in v.textures.iter().zip(&plain_vat.textures) {
                assert_eq!(
                    a.max_error, b.max_error,
                    "{format:?} {mode:?}: no added loss"
                );
            }
            assert!(
                size(out.path()) < size(plain.path()),
                "{format:?} {mode:?} is smaller"
            );
        }
    }
}

#[test]
fn pxr24_on_f32_records_exactly_the_loss_it_makes() {
    let plain = tempfile::tempdir().unwrap();
    vat(
        plain.path(),
        VatEncoding::Exr32,
        TextureCompression::None,
        2,
    );
    let out = tempfile::tempdir().unwrap();
    vat(out.path(), VatEncoding::Exr32, TextureCompression::Pxr24, 2);
    let (v, modes) = records(out.path());
    assert!(modes.iter().all(|m| *m == TextureCompression::Pxr24));
    let (exact, lossy) = (decoded(plain.path()), decoded(out.path()));
    for ((t, a), b) in v.textures.iter().zip(&exact).zip(&lossy) {
        // The worst texel, measured from the files: distance for positions,
        // angle for directions (xyz; tangent w is +-1, kept exactly).
        let mut worst = 0.0f64;
        let mut largest = 0.0f64;
        for (pa, pb) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
            let xa = [pa[0], pa[1], pa[2]].map(f64::from);
            let xb = [pb[0], pb[1], pb[2]].map(f64::from);
            largest = largest.max(xa.iter().fold(0.0f64, |m, v| m.max(v.abs())));
            let e = match t.stream {
                VatStream::Positions => xa
                    .iter()
                    .zip(&xb)
                    .map(|(p, q)| (p - q).powi(2))
                    .sum::<f64>()
                    .sqrt(),
                _ => {
                    let dot: f64 = xa.iter().zip(&xb).map(|(p, q)| p * q).sum();
                    let la = xa.iter().map(|p| p * p).sum::<f64>().sqrt();
                    let lb = xb.iter().map(|p| p * p).sum::<f64>().sqrt();
                    if la == 0.0 || lb == 0.0 {
                        0.0
                    } else {
                        (dot / (la * lb)).clamp(-1.0, 1.0).acos().to_degrees()
                    }
                }
            };
            worst = worst.max(e);
            if t.stream == VatStream::Tangents {
                assert_eq!(pa[3], pb[3], "handedness is exact");
            }
        }
        assert!(worst > 0.0, "{}: PXR24 rounds some value", t.name);
        // The recorded error is the measured one: rigbake measures in f32
        // lanes (formats/vat.md, "Recorded error"), good to about 1e-4 of
        // the error itself (1e-6 here), this check in f64.
        assert!(
            (t.max_error - worst).abs() <= worst * 1e-4 + 1e-12,
            "{}: recorded {} measured {worst}",
            t.name,
            t.max_error
        );
        // And within the analytic bound: 15 kept significand bits give a
        // relative error of at most 2^-16 per component.
        if t.stream == VatStream::Positions {
            assert!(t.max_error <= largest * 3f64.sqrt() * 2f64.powi(-16));
        } else {
            assert!(t.max_error < 0.01, "{}: {} degrees", t.name, t.max_error);
        }
    }
    assert!(size(out.path()) < size(plain.path()));
}

#[test]
fn compressed_and_png_outputs_are_identical_on_one_and_two_threads() {
    use DirectionEncoding::{Bounds, Octahedral};
    use TextureCompression::{None, Piz, Pxr24, Zip};
    use VatEncoding::{Exr16, Exr32, Png16};
    for case in [
        (Png16, None, Octahedral),
        (Png16, None, Bounds),
        (Exr16, Zip, Octahedral),
        (Exr16, Piz, Octahedral),
        (Exr32, Pxr24, Octahedral),
    ] {
        let (encoding, compression, directions) = case;
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        vat_with(a.path(), encoding, compression, directions, 1);
        vat_with(b.path(), encoding, compression, directions, 2);
        let (ta, tb) = (tree(a.path()), tree(b.path()));
        assert!(!ta.is_empty());
        assert!(ta == tb, "{case:?}: outputs differ between 1 and 2 threads");
    }
}

/// PNG16 files are deflate-compressed, and the record says so (asking for
/// an EXR compression with PNG16 is a usage error of the command line:
/// crates/cli/tests/usability.rs).
#[test]
fn png_records_deflate() {
    let out = tempfile::tempdir().unwrap();
    vat(out.path(), VatEncoding::Png16, TextureCompression::None, 2);
    let (_, modes) = records(out.path());
    assert!(modes.iter().all(|m| *m == TextureCompression::Deflate));
}
