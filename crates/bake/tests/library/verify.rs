//! `verify` streams its VAT textures (issue 34, item 1): loaded with
//! `Decode::Rows`, a bake's EXRs stay on disk and the measurement decodes
//! one window of rows at a time. The verdicts must not move: on every
//! shared model, the streamed measurement gives exactly the numbers
//! (`OutputStats`, compared with `==`, so to the last bit) of the
//! measurement over textures decoded whole by the exr crate's own reader,
//! with windows small enough that every group of samples crosses a window
//! edge. The same holds for half-float and folded (paged) textures, and
//! `preview` draws the same bytes from a window as from the whole
//! texture.

use std::path::Path;

use rigbake::playback::{self, Decode, Paths};
use rigbake::preview::scene::PathChoice;
use rigbake::verify::{self, Subject};

use crate::common::{bake, bake_all, containers, settings, shared_models, sheet, with_vat};

/// Measures both paths of `container` (whole; then with the VAT path
/// streamed in windows of `window_bytes`) and asserts the same numbers;
/// with `each_alone`, also that each path measured alone gives what it
/// gives beside the other. Returns how many clips were compared (0 when
/// the bake has no VAT path).
fn same_numbers(container: &Path, window_bytes: u64, each_alone: bool) -> usize {
    let subject = Subject::of;
    let paths = verify::Path::all;
    let whole = playback::load(container, None, Paths::All).unwrap();
    let rows = playback::load_with(container, None, Paths::All, Decode::Rows).unwrap();
    let (Some(a), Some(b)) = (&whole.vat, &rows.vat) else {
        return 0;
    };
    assert!(!a.is_deferred());
    assert!(
        b.is_deferred(),
        "{}: EXR files load deferred",
        container.display()
    );
    let all: Vec<usize> = (0..whole.clips.len()).collect();
    let want = verify::measure(&subject(&whole), &paths(&whole), &all, 1).unwrap();
    let got =
        verify::measure_windowed(&subject(&rows), &paths(&rows), &all, 1, window_bytes).unwrap();
    assert!(
        want.iter()
            .all(|o| o.clips.iter().all(|c| c.frames.samples > 0))
    );
    assert_eq!(got, want, "{}", container.display());
    // Each path alone gives what it gives beside the other (the direct
    // evaluations they share are the same numbers).
    for (k, path) in paths(&whole).into_iter().enumerate().filter(|_| each_alone) {
        let alone = verify::measure(&subject(&whole), &[path], &all, 1).unwrap();
        assert_eq!(alone[0], want[k], "{}", container.display());
    }
    all.len()
}

#[test]
fn streamed_vat_measurement_gives_the_whole_decodes_numbers_on_every_shared_model() {
    let Some(models) = shared_models(
        "streamed_vat_measurement_gives_the_whole_decodes_numbers_on_every_shared_model",
    ) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    // A low frame rate keeps the bakes small; windows of one row make
    // every group of samples its own window. The models `rigbake bake`
    // finds in the folder.
    let found: Vec<_> = rigbake::discover::find_models(&models)
        .unwrap()
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    let s = settings(|s| {
        with_vat(s);
        s.vat.options.normals = true;
        s.sampling.fps = 4.0;
    });
    bake_all(&found, out.path(), &s);
    let mut compared = 0;
    for container in containers(out.path()) {
        compared += same_numbers(&container, 1, false);
    }
    assert!(compared >= 10, "only {compared} clips compared");
}

#[test]
fn streamed_half_float_and_folded_textures_and_preview_match_the_whole_decode() {
    let model = rigbake_fixtures::fixture("walker.glb");
    let out = tempfile::tempdir().unwrap();
    // 32-bit floats; then half floats (the default) folded into pages by a
    // small size limit (each page a file of its own).
    for (dir, exr32, max_size) in [("exr32", true, None), ("folded", false, Some(64))] {
        let s = settings(|s| {
            with_vat(s);
            s.vat.options.normals = true;
            if exr32 {
                s.vat.encoding = rigbake_types::VatEncoding::Exr32;
            }
            if let Some(n) = max_size {
                crate::common::max_texture_size(s, n);
            }
        });
        let dir = out.path().join(dir);
        bake(&model, &dir, &s).baked();
        for container in containers(&dir) {
            assert!(same_numbers(&container, 1, true) > 0);
            assert!(same_numbers(&container, 1 << 30, false) > 0);
            // preview (which decodes the rows it draws) draws the bytes a
            // whole decode gives (the library's `picture` on `load`).
            let png = sheet(&container, None, PathChoice::Vat, Decode::Rows);
            let whole = playback::load(&container, None, Paths::Vat).unwrap();
            let plan = rigbake::preview::Plan {
                path: rigbake::preview::scene::PathChoice::Vat,
                cells: (0..whole.clips.len())
                    .flat_map(|c| {
                        rigbake::preview::spaced_frames(whole.clips[c].info.frames, 8)
                            .into_iter()
                            .map(move |f| (c, f))
                    })
                    .collect(),
                columns: 8,
                size: 160,
            };
            let picture = rigbake::preview::picture::picture(&whole, &plan, None).unwrap();
            assert_eq!(png, picture.png);
        }
    }
}
