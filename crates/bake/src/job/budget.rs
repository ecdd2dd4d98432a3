//! `--max-error`: the smallest encoding whose position error fits the
//! budget, for the bone textures and for the VAT (docs/encodings.md).
//!
//! Bone textures try the forms from the fewest GPU bytes per joint up
//! ([`BONE_LADDER`]), each baked and measured on every vertex of every
//! clip ([`bone_error`]); the first whose worst clip fits is kept, with
//! the bake and the figures the output then uses. The VAT is chosen before
//! it is baked, from a bound on each encoding's error that the positions'
//! range gives (a 16-bit sample is off by at most half its step, a half
//! float by half its ulp): one pass over the positions instead of a bake
//! per encoding, and a choice that the measured figures (recorded as for
//! any bake) can only beat.

use rigbake_core::Model;
use rigbake_core::bake::BoneBakeOptions;
use rigbake_core::bake::bone_error::{self, BoneClipError};
use rigbake_core::bake::frames::{FrameBake, bake_frames, check_forms};
use rigbake_core::timeline::Timeline;
use rigbake_format::meta::{DirectionEncoding, TextureCompression, VatEncoding};
use rigbake_format::texture::gpu::TextureContainer;
use rigbake_types::{ErrorBudget, MatrixLayout, Precision};

use crate::error::StepError;
use crate::inspect::name;

/// The bone forms a budget tries, fewest GPU bytes per joint first: `qts`
/// at 16-bit normalised and half floats (16 bytes), `mat3x4` at half
/// floats (24), `qts` at f32 (32), `mat3x4` at f32 (48, exact to f32;
/// `mat4` holds nothing more).
pub const BONE_LADDER: [(MatrixLayout, Precision); 5] = [
    (MatrixLayout::Qts, Precision::Unorm16),
    (MatrixLayout::Qts, Precision::F16),
    (MatrixLayout::Mat3x4, Precision::F16),
    (MatrixLayout::Qts, Precision::F32),
    (MatrixLayout::Mat3x4, Precision::F32),
];

/// GPU bytes per joint of a bone form.
fn bone_bytes(layout: MatrixLayout, precision: Precision) -> usize {
    let sample = match precision {
        Precision::F32 => 4,
        Precision::F16 | Precision::Unorm16 => 2,
    };
    layout.pixels_per_joint() * 4 * sample
}

/// A form's text: `qts unorm16`.
fn form_name(layout: MatrixLayout, precision: Precision) -> String {
    format!("{} {}", name(&layout), name(&precision))
}

/// The bone textures the budget chose: the bake, its options and each
/// texture's measured figures, and the sentence that says why.
pub(super) struct BoneChoice {
    /// The textures (and anchor tracks) baked in the chosen form.
    pub baked: FrameBake,
    /// The options they were baked with.
    pub options: BoneBakeOptions,
    /// Per texture, per clip.
    pub errors: Vec<Vec<BoneClipError>>,
    /// What was chosen and why, for the model's line and the report.
    pub message: String,
}

/// The worst clip of `errors` (every texture): its position error and its
/// clip index.
fn worst(errors: &[Vec<BoneClipError>]) -> (f64, usize) {
    errors
        .iter()
        .flat_map(|t| t.iter().enumerate())
        .map(|(c, e)| (e.positions.max, c))
        .fold(
            (0.0, 0),
            |w, e| if e.0 > w.0 || e.0.is_nan() { e } else { w },
        )
}

/// Chooses the bone form (see the module docs); fails, with the best
/// figure reached, when none keeps every clip within the budget.
pub(super) fn choose_bones(
    model: &Model,
    timeline: &Timeline,
    base: BoneBakeOptions,
    anchors: &[usize],
    props: &super::bones::BoundProps,
    budget: ErrorBudget,
) -> Result<BoneChoice, StepError> {
    let allowed = budget.units(rigbake_core::timeline::loops::model_size(model));
    let mut passed_over = Vec::new();
    let mut best: Option<(f64, usize, String)> = None;
    // Whether `qts` refused the skin: its other precisions are not tried.
    let mut qts_refused = false;
    for (layout, precision) in BONE_LADDER {
        if qts_refused && layout == MatrixLayout::Qts {
            continue;
        }
        let options = BoneBakeOptions {
            layout,
            precision,
            ..base
        };
        let form = form_name(layout, precision);
        let baked = bake_frames(model, timeline, &options, anchors).map_err(StepError::bare)?;
        if let Err(refusal) = check_forms(model, timeline, &baked.textures) {
            passed_over.push(format!("qts cannot hold the skin ({})", refusal.message));
            qts_refused = true;
            continue;
        }
        let errors = baked
            .textures
            .iter()
            .enumerate()
            .map(|(k, t)| {
                bone_error::measure_bone_texture(
                    model,
                    timeline,
                    t,
                    precision,
                    &props.of_texture(k),
                )
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(StepError::bare)?;
        let (error, clip) = worst(&errors);
        if error <= allowed {
            let mut message = format!(
                "bone textures as {form} ({} bytes a joint): largest clip error {error:.3e} within --max-error {budget} ({allowed:.3e} model units)",
                bone_bytes(layout, precision)
            );
            if !passed_over.is_empty() {
                message.push_str(&format!("; passed over: {}", passed_over.join("; ")));
            }
            return Ok(BoneChoice {
                baked,
                options,
                errors,
                message,
            });
        }
        passed_over.push(format!("{form} costs {error:.3e}"));
        if best.as_ref().is_none_or(|b| error < b.0) {
            best = Some((error, clip, form));
        }
    }
    let best = best.map_or_else(
        || "no form could hold the skin".to_owned(),
        |(error, clip, form)| {
            format!(
                "the best, {form}, costs {error:.3e} on clip `{}`",
                timeline.clips.get(clip).map_or("", |c| c.name.as_str())
            )
        },
    );
    Err(StepError::bare(rigbake_core::Error::invalid(
        "skins",
        format!(
            "no bone texture encoding keeps every clip within --max-error {budget} ({allowed:.3e} model units): {best} ({})",
            passed_over.join("; ")
        ),
    )))
}

/// A VAT encoding a budget may take: the sample encoding and how normals
/// are stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct VatForm {
    /// The sample encoding.
    pub encoding: VatEncoding,
    /// How normals are stored (`packed` for 16-bit samples).
    pub directions: DirectionEncoding,
}

/// The VAT forms a budget tries, fewest GPU bytes per vertex and frame
/// first, with and without normals: in KTX2 or DDS, 8-bit then 10-bit
/// positions (4 bytes, or 8 with an octahedral normals texture of the same
/// format; of two forms of equal bytes the more widely read first); 16-bit
/// positions with the normal packed in their alpha (8 bytes), half floats
/// (8, or 16 with a normals texture), 32-bit floats (16, or 32). 16-bit
/// forms are left out when an EXR compression was asked for (PNG takes
/// none).
pub(super) fn vat_ladder(
    compression: TextureCompression,
    container: TextureContainer,
) -> Vec<VatForm> {
    let mut forms = Vec::new();
    if !container.is_exr() {
        for encoding in [VatEncoding::Unorm8, VatEncoding::Unorm10] {
            forms.push(VatForm {
                encoding,
                directions: DirectionEncoding::Octahedral,
            });
        }
    }
    if compression == TextureCompression::None {
        forms.push(VatForm {
            encoding: VatEncoding::Png16,
            directions: DirectionEncoding::Packed,
        });
    }
    for encoding in [VatEncoding::Exr16, VatEncoding::Exr32] {
        forms.push(VatForm {
            encoding,
            directions: DirectionEncoding::Octahedral,
        });
    }
    forms
}

/// The largest position error `form` can cost positions within `bounds`
/// (`[min, max]` of x, y, z over every texel of a set), as a distance: per
/// coordinate half a 16-bit step of the range, or half an ulp (of a half
/// float, or of PXR24's 24-bit float) at the largest magnitude, plus four
/// f32 ulps for the decoder's arithmetic; 0 for 32-bit floats (stored as
/// they are); infinite when a half float cannot hold the values.
pub(super) fn vat_bound(
    form: VatForm,
    compression: TextureCompression,
    bounds: [[f32; 3]; 2],
) -> f64 {
    let per_axis = |k: usize| -> f64 {
        let (lo, hi) = (f64::from(bounds[0][k]), f64::from(bounds[1][k]));
        let magnitude = lo.abs().max(hi.abs());
        let arithmetic = 4.0 * magnitude * f64::from(f32::EPSILON);
        let half_ulp = |mantissa_bits: i32| {
            if magnitude == 0.0 {
                0.0
            } else {
                2f64.powi(magnitude.log2().floor() as i32 - mantissa_bits - 1)
            }
        };
        match form.encoding {
            VatEncoding::Png16 => (hi - lo) / 65535.0 / 2.0 + arithmetic,
            VatEncoding::Unorm10 => (hi - lo) / 1023.0 / 2.0 + arithmetic,
            VatEncoding::Unorm8 => (hi - lo) / 255.0 / 2.0 + arithmetic,
            VatEncoding::Exr16 if magnitude >= 65504.0 => f64::INFINITY,
            VatEncoding::Exr16 => half_ulp(10) + arithmetic,
            VatEncoding::Exr32 if compression.lossy_for_f32() => half_ulp(15) + arithmetic,
            // The stored floats are the values.
            VatEncoding::Exr32 => 0.0,
        }
    };
    (0..3).map(|k| per_axis(k).powi(2)).sum::<f64>().sqrt()
}

/// A VAT form's text: `png16 with packed normals`.
pub(super) fn vat_form_name(form: VatForm, normals: bool) -> String {
    let encoding = name(&form.encoding);
    if normals && form.encoding.is_normalised() {
        format!("{encoding} with {} normals", name(&form.directions))
    } else {
        encoding
    }
}

/// Chooses the VAT form for a model whose sets' positions lie within
/// `bounds` (one box per set): the first of [`vat_ladder`] whose bound fits
/// the budget (32-bit floats always fit unless PXR24 was asked for).
/// Returns the form and the sentence that says why, or the error naming
/// the best bound.
pub(super) fn choose_vat(
    model: &Model,
    bounds: &[[[f32; 3]; 2]],
    (compression, container): (TextureCompression, TextureContainer),
    normals: bool,
    budget: ErrorBudget,
) -> Result<(VatForm, String), StepError> {
    let allowed = budget.units(rigbake_core::timeline::loops::model_size(model));
    let mut passed_over = Vec::new();
    let mut best = (f64::INFINITY, String::new());
    for form in vat_ladder(compression, container) {
        let bound = bounds
            .iter()
            .map(|b| vat_bound(form, compression, *b))
            .fold(0.0, f64::max);
        let text = vat_form_name(form, normals);
        if bound <= allowed {
            let mut message = format!(
                "VAT as {text}: position error at most {bound:.3e} within --max-error {budget} ({allowed:.3e} model units)"
            );
            if !passed_over.is_empty() {
                message.push_str(&format!("; passed over: {}", passed_over.join("; ")));
            }
            return Ok((form, message));
        }
        passed_over.push(format!("{text} may cost {bound:.3e}"));
        if bound < best.0 {
            best = (bound, text);
        }
    }
    Err(StepError::bare(rigbake_core::Error::invalid(
        "",
        format!(
            "no VAT encoding keeps the positions within --max-error {budget} ({allowed:.3e} model units): the best, {}, may cost {:.3e} ({})",
            best.1,
            best.0,
            passed_over.join("; ")
        ),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bounds by hand: a unit box from 0 to 1 (largest magnitude 1:
    /// the half-float half ulp is 2^-11, the 16-bit half step 1/131070).
    #[test]
    fn vat_bounds_by_hand() {
        let unit = [[0.0f32; 3], [1.0; 3]];
        let eps = 4.0 * f64::from(f32::EPSILON);
        let form = |encoding| VatForm {
            encoding,
            directions: DirectionEncoding::Octahedral,
        };
        let none = TextureCompression::None;
        let b16 = vat_bound(form(VatEncoding::Png16), none, unit);
        assert!((b16 - 3f64.sqrt() * (1.0 / 131070.0 + eps)).abs() < 1e-15);
        let h = vat_bound(form(VatEncoding::Exr16), none, unit);
        assert!((h - 3f64.sqrt() * (2f64.powi(-11) + eps)).abs() < 1e-15);
        assert_eq!(vat_bound(form(VatEncoding::Exr32), none, unit), 0.0);
        let huge = [[0.0f32; 3], [1e5; 3]];
        assert!(vat_bound(form(VatEncoding::Exr16), none, huge).is_infinite());
        assert!(
            vat_ladder(TextureCompression::Zip, TextureContainer::Exr)
                .iter()
                .all(|f| f.encoding == VatEncoding::Exr16 || f.encoding == VatEncoding::Exr32)
        );
        let b8 = vat_bound(form(VatEncoding::Unorm8), none, unit);
        assert!((b8 - 3f64.sqrt() * (1.0 / 510.0 + eps)).abs() < 1e-15);
        let b10 = vat_bound(form(VatEncoding::Unorm10), none, unit);
        assert!((b10 - 3f64.sqrt() * (1.0 / 2046.0 + eps)).abs() < 1e-15);
        let gpu = vat_ladder(TextureCompression::None, TextureContainer::Ktx2);
        assert_eq!(
            gpu.iter().map(|f| f.encoding).collect::<Vec<_>>(),
            [
                VatEncoding::Unorm8,
                VatEncoding::Unorm10,
                VatEncoding::Png16,
                VatEncoding::Exr16,
                VatEncoding::Exr32
            ]
        );
    }

    #[test]
    fn the_bone_ladder_grows_in_gpu_bytes() {
        let bytes: Vec<usize> = BONE_LADDER.iter().map(|&(l, p)| bone_bytes(l, p)).collect();
        assert_eq!(bytes, [16, 16, 24, 32, 48]);
    }
}
