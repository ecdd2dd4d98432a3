//! `--max-error`: the smallest encoding whose measured error fits, on a
//! fixture and on the shared models, checked by baking every smaller form
//! explicitly (not through the chooser) and by verify.

use std::path::Path;

use rigbake::playback::{self, Paths};
use rigbake::settings::BakeSettings;
use rigbake::verify::{self, Tolerances};
use rigbake_format::container::Container;
use rigbake_format::meta::{DirectionEncoding, ErrorSubject, VatEncoding};
use rigbake_format::texture::gpu::TextureContainer;
use rigbake_types::{ErrorBudget, MatrixLayout, Precision};

use crate::common::{bake, containers, measure_all, settings, shared_models, with_vat};

/// The bone forms a budget tries, smallest first (docs/encodings.md).
const BONE_FORMS: [(MatrixLayout, Precision); 5] = [
    (MatrixLayout::Qts, Precision::Unorm16),
    (MatrixLayout::Qts, Precision::F16),
    (MatrixLayout::Mat3x4, Precision::F16),
    (MatrixLayout::Qts, Precision::F32),
    (MatrixLayout::Mat3x4, Precision::F32),
];

/// What a container says of its encodings: the bone form, the VAT's, and
/// the worst recorded position error of each output.
struct Encoded {
    bones: (MatrixLayout, Precision),
    vat: Option<(VatEncoding, DirectionEncoding)>,
    bone_error: f64,
    vat_error: f64,
    model_size: f64,
}

fn encoded(container: &Path) -> Encoded {
    let c = Container::open(container).unwrap();
    let errors = c
        .records()
        .clip_errors
        .clone()
        .expect("the clip-error record");
    let worst = |subject| {
        errors
            .textures
            .iter()
            .filter(|t| t.subject == subject)
            .flat_map(|t| t.clips.iter().map(|c| c.positions.max))
            .fold(0.0, f64::max)
    };
    let o = &c.metadata().options;
    Encoded {
        bones: (o.layout, o.precision),
        vat: c
            .records()
            .vat
            .as_ref()
            .map(|v| (v.encoding, v.direction_encoding)),
        bone_error: worst(ErrorSubject::BoneMatrices),
        vat_error: worst(ErrorSubject::Vat),
        model_size: errors.model_size,
    }
}

/// Bakes `model` with `edit` into a fresh folder under `out` named `tag`.
fn bake_as(model: &Path, out: &Path, tag: &str, edit: impl FnOnce(&mut BakeSettings)) -> Encoded {
    let dir = out.join(tag);
    bake(model, &dir, &settings(edit)).baked();
    encoded(&containers(&dir)[0])
}

/// With the budget, `model` bakes in the smallest bone form whose
/// recorded error fits: every smaller form, baked as asked, is refused
/// (`qts` on a skin it cannot hold) or records more than the budget. Its
/// VAT fits the budget, and no smaller VAT form fits by half. Verify
/// passes every clip of the budget's bake.
fn chooses_the_smallest_fit(
    model: &Path,
    budget: ErrorBudget,
    container: TextureContainer,
) -> Encoded {
    let out = tempfile::tempdir().unwrap();
    let with_budget = |s: &mut BakeSettings| {
        with_vat(s);
        s.vat.options.normals = true;
        s.max_error = Some(budget);
        s.texture_container = container;
    };
    let got = bake_as(model, out.path(), "budget", with_budget);
    let allowed = budget.units(got.model_size);
    let name = model.display();
    assert!(
        got.bone_error <= allowed,
        "{name}: {} > {allowed}",
        got.bone_error
    );
    assert!(
        got.vat_error <= allowed,
        "{name}: {} > {allowed}",
        got.vat_error
    );
    let chosen = BONE_FORMS
        .iter()
        .position(|f| *f == got.bones)
        .expect("a ladder form");
    for (i, &(layout, precision)) in BONE_FORMS[..chosen].iter().enumerate() {
        let dir = out.path().join(format!("bones{i}"));
        let b = bake(
            model,
            &dir,
            &settings(|s| {
                s.layout = layout;
                s.precision = precision;
            }),
        );
        if b.outcome.is_failure() {
            assert_eq!(layout, MatrixLayout::Qts, "{name}: {}", b.error());
            continue;
        }
        let smaller = encoded(&containers(&dir)[0]);
        assert!(
            smaller.bone_error > allowed,
            "{name}: {layout:?} {precision:?} fits ({:.3e} <= {allowed:.3e}) but was passed over",
            smaller.bone_error
        );
    }
    // The VAT is chosen by a bound of its error: a smaller form passed
    // over measures more than half the budget (the bound is not loose).
    // In KTX2 or DDS the 8 and 10-bit forms come first.
    let narrow = [
        (VatEncoding::Unorm8, DirectionEncoding::Octahedral),
        (VatEncoding::Unorm10, DirectionEncoding::Octahedral),
    ];
    let wide = [
        (VatEncoding::Png16, DirectionEncoding::Packed),
        (VatEncoding::Exr16, DirectionEncoding::Octahedral),
        (VatEncoding::Exr32, DirectionEncoding::Octahedral),
    ];
    let vat_forms: Vec<_> = if container.is_exr() {
        wide.to_vec()
    } else {
        narrow.iter().chain(&wide).copied().collect()
    };
    let (encoding, directions) = got.vat.expect("a VAT");
    let chosen = vat_forms
        .iter()
        .position(|f| f.0 == encoding && (encoding != VatEncoding::Png16 || f.1 == directions))
        .expect("a ladder form");
    for (i, &(encoding, directions)) in vat_forms[..chosen].iter().enumerate() {
        let smaller = bake_as(model, out.path(), &format!("vat{i}"), |s| {
            with_vat(s);
            s.vat.options.normals = true;
            s.vat.encoding = encoding;
            s.vat.direction_encoding = directions;
            s.texture_container = container;
        });
        assert!(
            smaller.vat_error > allowed / 2.0,
            "{name}: {encoding:?} measures {:.3e}, well within {allowed:.3e}, but was passed over",
            smaller.vat_error
        );
    }
    // verify plays the budget's bake back and passes it.
    let container = &containers(&out.path().join("budget"))[0];
    let loaded = playback::load(container, None, Paths::All).unwrap();
    let tolerances = Tolerances {
        relative: verify::DEFAULT_RELATIVE_TOLERANCE,
        normal_degrees: 0.01,
        mid_relative: None,
        accept_recorded_loss: true,
    };
    for o in measure_all(&loaded) {
        for c in &o.clips {
            let failures = verify::judge(c, o.diagonal, &tolerances);
            assert!(failures.is_empty(), "{name}: {failures:?}");
        }
    }
    got
}

#[test]
fn the_budget_takes_the_smallest_form_that_fits_on_the_walker() {
    let walker = rigbake_fixtures::fixture("walker.glb");
    // A loose budget takes the smallest forms; a tight one larger forms.
    chooses_the_smallest_fit(&walker, ErrorBudget::Relative(1e-2), TextureContainer::Exr);
    chooses_the_smallest_fit(&walker, ErrorBudget::Relative(2e-6), TextureContainer::Exr);
}

#[test]
fn in_ktx2_and_dds_the_budget_takes_8_or_10_bit_vats_when_they_fit() {
    let walker = rigbake_fixtures::fixture("walker.glb");
    for (relative, container, want) in [
        (1e-2, TextureContainer::Ktx2, VatEncoding::Unorm8),
        (1e-3, TextureContainer::Dds, VatEncoding::Unorm10),
        (1e-4, TextureContainer::Ktx2Zstd, VatEncoding::Png16),
    ] {
        let got = chooses_the_smallest_fit(&walker, ErrorBudget::Relative(relative), container);
        assert_eq!(got.vat.map(|v| v.0), Some(want), "{relative} {container:?}");
    }
}

#[test]
fn the_budget_chooses_on_the_shared_models() {
    let Some(dir) = shared_models("the_budget_chooses_on_the_shared_models") else {
        return;
    };
    for model in [
        "khronos/CesiumMan.glb",
        "khronos/Fox.glb",
        "khronos/RiggedFigure.glb",
    ] {
        chooses_the_smallest_fit(
            &dir.join(model),
            ErrorBudget::Relative(1e-4),
            TextureContainer::Exr,
        );
    }
}

/// A budget no form meets fails the model, naming the best figure.
#[test]
fn a_budget_nothing_meets_fails_the_model_with_the_best_figure() {
    let walker = rigbake_fixtures::fixture("walker.glb");
    let out = tempfile::tempdir().unwrap();
    let b = bake(
        &walker,
        out.path(),
        &settings(|s| s.max_error = Some(ErrorBudget::Units(0.0))),
    );
    let error = b.error();
    assert!(
        error.contains("no bone texture encoding keeps every clip within --max-error")
            && error.contains("the best, mat3x4 f32, costs"),
        "{error}"
    );
    // Nothing of the failed model is left behind.
    assert!(containers(out.path()).is_empty());
}
