//! Animated bounds gathered from the VAT bake's own rows
//! ([`RowBoxes::add_rows`], what `rigbake bake --vat` records) equal the
//! culled bounds pass of [`clip_bounds`] bit for bit, whatever the texture
//! layout: one atlas, a set per primitive, rows wrapped into bands, and
//! rows folded into column blocks and pages; batches of any size. The
//! culled bounds of a whole set ([`VatBaker::position_bounds`], what a
//! normalised VAT is quantised over) and of each clip equal a full pass
//! over every row, on the fixtures and on every shared model that bakes.

use std::path::Path;

use rigbake_core::Model;
use rigbake_core::bake::bounds::{RowBoxes, StaticPart, clip_bounds, clip_bounds_from};
use rigbake_core::bake::vat::{self, VatBaker, VatBatch, VatLayoutMode, VatOptions};
use rigbake_core::import::{ImportOptions, import_file};
use rigbake_core::timeline::{Sampling, Timeline};

fn fixture(name: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name);
    import_file(&path, &ImportOptions::default()).unwrap()
}

/// Every vertex of every primitive of `model`.
fn vertex_count(model: &Model) -> usize {
    model
        .meshes
        .iter()
        .flat_map(|m| &m.primitives)
        .map(|p| p.positions.len())
        .sum()
}

/// A maximum texture size wide enough that a frame's bands fit (bands <=
/// max), narrow enough that frames wrap into bands and, for most, fold.
fn narrow_size(model: &Model) -> usize {
    (vertex_count(model) as f64).sqrt().ceil() as usize + 1
}

/// Bakes every row of every set of `options`' plan in batches of `batch`
/// unfolded rows, gathering their boxes as the VAT job does.
fn boxes_from_vat(
    model: &Model,
    timeline: &Timeline,
    options: &VatOptions,
    batch: usize,
) -> Vec<[[f32; 3]; 2]> {
    let plan = vat::plan(model, timeline, options).unwrap();
    let statics = StaticPart::of_plan(&plan);
    let baker = VatBaker::new(model, timeline, plan, options.convention).unwrap();
    let mut rows = RowBoxes::new(timeline.rows);
    for (set, s) in baker.plan().sets.iter().enumerate() {
        let l = s.layout;
        let (w, total) = (l.width, l.frames * l.bands);
        let mut first = 0;
        while first < total {
            let n = batch.min(total - first);
            // Stale contents, as recycled buffers have: padding must be
            // left out of the boxes, not read.
            let mut pos = vec![f32::MAX; n * w * 3];
            let mut nrm = vec![f32::MIN; n * w * 3];
            baker
                .fill(
                    set,
                    first,
                    n,
                    VatBatch {
                        positions: &mut pos,
                        normals: s.normals.then_some(&mut nrm[..]),
                        tangents: None,
                    },
                )
                .unwrap();
            rows.add_rows(&l, first, &pos);
            first += n;
        }
    }
    clip_bounds_from(model, timeline, &statics, Some(&rows))
}

#[test]
fn bounds_from_the_vat_rows_equal_the_bounds_pass() {
    for name in [
        "two_skins.glb",
        "tentacle_lods.glb",
        "hierarchy.gltf",
        "walker.glb",
        "eight_influences.gltf",
    ] {
        let model = fixture(name);
        let timeline = Timeline::plan_all(&model, Sampling::default()).unwrap();
        let expected = clip_bounds(&model, &timeline).unwrap();
        assert!(!expected.is_empty(), "{name}: no clips");
        let (vertices, narrow) = (vertex_count(&model), narrow_size(&model));
        let half = (vertices / 2).max(narrow);
        for (layout, max, batch) in [
            (VatLayoutMode::Atlas, 8192, 16),
            (VatLayoutMode::PerPrimitive, 8192, 3),
            (VatLayoutMode::Atlas, half, 5),
            (VatLayoutMode::Atlas, narrow, 1),
            (VatLayoutMode::PerPrimitive, narrow, 7),
        ] {
            let options = VatOptions {
                normals: true,
                max_texture_size: max,
                layout,
                ..VatOptions::default()
            };
            let got = boxes_from_vat(&model, &timeline, &options, batch);
            assert_eq!(
                got, expected,
                "{name}: {layout:?}, max {max}, batches of {batch}"
            );
        }
    }
}

#[test]
fn gathered_boxes_hold_every_vertex_and_no_padding() {
    // An independent check of the gathering: a tiny hand-made layout, rows
    // of known values, padding texels holding huge stale values.
    let layout = vat::VatLayout::new(5, 2, 3, false).unwrap();
    assert_eq!((layout.width, layout.bands), (3, 2));
    // Two frames x two bands x (3 planes of 3 texels): vertex v of frame f
    // at (10 f + v, -v, f); texel 2 of band 1 is padding.
    let mut pos = Vec::new();
    for row in 0..4 {
        let (frame, band) = (row / 2, row % 2);
        for c in 0..3 {
            for x in 0..3 {
                let v = band * 3 + x;
                pos.push(if v >= 5 {
                    1e30
                } else {
                    [10.0 * frame as f32 + v as f32, -(v as f32), frame as f32][c]
                });
            }
        }
    }
    let mut rows = RowBoxes::new(2);
    rows.add_rows(&layout, 0, &pos[..9]);
    rows.add_rows(&layout, 1, &pos[9..]);
    let model = fixture("two_joint.gltf");
    let mut timeline = Timeline::plan_all(&model, Sampling::default()).unwrap();
    timeline.clips.truncate(1);
    timeline.clips[0].start_row = 0;
    timeline.clips[0].frames = 2;
    let statics = StaticPart {
        reference: None,
        primitives: Vec::new(),
    };
    let got = clip_bounds_from(&model, &timeline, &statics, Some(&rows));
    assert_eq!(got, vec![[[0.0, -4.0, 0.0], [14.0, 0.0, 1.0]]]);
}

/// The positions' bounds of set `set`, by deforming every row: the
/// reference [`VatBaker::position_bounds`] skips most of the work of.
fn full_position_bounds(baker: &VatBaker<'_>, set: usize) -> [[f32; 3]; 2] {
    let l = baker.plan().sets[set].layout;
    let w = l.width;
    let mut acc = [[f32::INFINITY; 4], [f32::NEG_INFINITY; 4]];
    let mut pos = vec![0.0; w * 3];
    for row in 0..l.frames * l.bands {
        baker
            .fill(
                set,
                row,
                1,
                VatBatch {
                    positions: &mut pos,
                    normals: None,
                    tangents: None,
                },
            )
            .unwrap();
        let real = (l.vertices - (row % l.bands) * w).min(w);
        rigbake_core::bake::bounds::planar_bounds(&pos, w, 3, real, &mut acc);
    }
    let positive = |v: f32| if v == 0.0 { 0.0 } else { v };
    [0, 1].map(|k| [0, 1, 2].map(|c| positive(acc[k][c])))
}

/// Asserts the culled bounds of every set of `model` under `options` equal
/// the full pass's, bit for bit.
fn assert_culled_bounds_exact(name: &str, model: &Model, options: &VatOptions) {
    let timeline = Timeline::plan_all(model, Sampling::default()).unwrap();
    let plan = vat::plan(model, &timeline, options).unwrap();
    let baker = VatBaker::new(model, &timeline, plan, options.convention).unwrap();
    for set in 0..baker.plan().sets.len() {
        let (got, expected) = (
            baker.position_bounds(set),
            full_position_bounds(&baker, set),
        );
        let bits = |b: [[f32; 3]; 2]| b.map(|m| m.map(f32::to_bits));
        assert_eq!(
            bits(got),
            bits(expected),
            "{name}: set {set} ({:?}): culled {got:?}, full pass {expected:?}",
            options.layout
        );
    }
}

#[test]
fn culled_position_bounds_equal_a_full_pass() {
    // Skins of one to eight influences, rigid nodes, morph targets (the
    // tentacle), an atlas and a set per primitive, rows in bands.
    for name in [
        "two_skins.glb",
        "tentacle_lods.glb",
        "tentacle.glb",
        "hierarchy.gltf",
        "walker.glb",
        "eight_influences.gltf",
        "two_joint.gltf",
    ] {
        let model = fixture(name);
        let narrow = narrow_size(&model);
        for layout in [VatLayoutMode::Atlas, VatLayoutMode::PerPrimitive] {
            for max in [8192, narrow] {
                let options = VatOptions {
                    layout,
                    max_texture_size: max,
                    ..VatOptions::default()
                };
                assert_culled_bounds_exact(name, &model, &options);
            }
        }
    }
}

#[test]
fn culled_position_bounds_equal_a_full_pass_on_shared_models() {
    let Some(dir) = rigbake_fixtures::testkit::models::shared_models(
        "culled_position_bounds_equal_a_full_pass_on_shared_models",
    ) else {
        return;
    };
    // Every shared model that imports and has something to bake (BrainStem:
    // one influence a vertex, many primitives; Knight: bound props; the
    // morph models: morph targets, deformed every frame).
    let mut checked = 0;
    for path in rigbake_fixtures::testkit::models::model_files(&dir) {
        let Ok(model) = import_file(&path, &ImportOptions::default()) else {
            continue;
        };
        let Ok(timeline) = Timeline::plan_all(&model, Sampling::default()) else {
            continue;
        };
        if vat::plan(&model, &timeline, &VatOptions::default()).is_err() {
            continue;
        }
        let name = path.display().to_string();
        assert_culled_bounds_exact(&name, &model, &VatOptions::default());
        // Per clip (the animated bounds every bake records): culled clip by
        // clip against the boxes of every row the VAT kernel writes.
        let culled = clip_bounds(&model, &timeline).unwrap();
        let full = boxes_from_vat(&model, &timeline, &VatOptions::default(), 64);
        assert_eq!(culled, full, "{name}: clip bounds");
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} shared models baked");
}
