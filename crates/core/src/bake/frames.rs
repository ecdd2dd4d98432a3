//! The loop over the timeline rows that both the bone-matrix bake and the
//! anchor tracks come from: each row is evaluated once, and the same poses
//! fill every bone texture and the socket matrices.
//!
//! Rows are evaluated in parallel, each independently, so results do not
//! depend on the thread count.

use glam::DMat4;
use rayon::prelude::*;

use crate::bake::anchors::AnchorTracks;
use crate::bake::bones::{
    BoneBakeOptions, BoneSet, BoneTexture, FormError, MAX_BONE_SETS, bone_sets,
};
use crate::error::{Error, ErrorKind, Result};
use crate::eval::evaluate::Evaluator;
use crate::eval::skin;
use crate::fold::{Fold, FoldError};
use crate::layout::MatrixLayout;
use crate::model::Model;
use crate::timeline::{self, Timeline};
use rigbake_types::Precision;

/// Bakes one bone-matrix texture per [`BoneSet`]
/// over every timeline row.
///
/// Fails with [`crate::ErrorKind::NothingToBake`] when the model has no skinned
/// mesh, and with a limit error when a texture would exceed the maximum size.
pub fn bake_bone_textures(
    model: &Model,
    timeline: &Timeline,
    options: &BoneBakeOptions,
) -> Result<Vec<BoneTexture>> {
    if bone_sets(model).is_empty() {
        return Err(Error::new(
            ErrorKind::NothingToBake,
            "",
            "no skinned mesh: nothing for a bone-matrix bake",
        ));
    }
    Ok(bake_frames(model, timeline, options, &[])?.textures)
}

/// The fold of the anchor texture (`anchors.exr`): `anchors * 4` RGBA
/// pixels (one `mat4` per socket) per timeline row, folded into column
/// blocks like a bone texture when the rows exceed the maximum size.
pub fn anchor_fold(anchors: usize, rows: usize, max_texture_size: usize) -> Result<Fold> {
    let width = anchors.saturating_mul(4);
    Fold::plan(width as u64, 1, rows as u64, max_texture_size as u64, false).map_err(|e| {
        let why = match e {
            FoldError::RowTooLarge { .. } => format!(
                "one row of anchor tracks is {width} pixels ({anchors} anchors), wider than the maximum size {max_texture_size}"
            ),
            FoldError::TooManyBlocks { blocks, fit } => format!(
                "anchor tracks of {anchors} anchors over {rows} frames need {blocks} column blocks of {width} pixels, but only {fit} fit the maximum size {max_texture_size}"
            ),
        };
        Error::limit("anchors", why).with_hint(
            "track fewer anchors (name them instead of `auto`), raise the maximum texture size, lower the fps or bake fewer clips",
        )
    })
}

/// What helps when the bone textures hold too many pixels together.
fn pixels_hint(layout: MatrixLayout) -> String {
    let mut advice = "lower the fps, bake fewer clips or shorter range clips".to_owned();
    if layout == MatrixLayout::Mat4 {
        advice.push_str(", or use the mat3x4 layout (3 pixels per joint instead of 4)");
    }
    advice
}

/// Checks the anchor tracks' size against the bone-texture limits before
/// anything is allocated: the tracks are a texture of `anchors * 4` RGBA
/// pixels by `rows` (folded when taller than `max_texture_size`), the
/// `anchors.exr` layout, so one row is held to `max_texture_size` and their
/// pixels, added to the bone textures' `bone_pixels`, to `max_total_pixels`.
fn check_anchor_tracks(
    anchors: usize,
    rows: usize,
    bone_pixels: usize,
    options: &BoneBakeOptions,
) -> Result<()> {
    if anchors == 0 {
        return Ok(());
    }
    let width = anchors.saturating_mul(4);
    let floats = width.saturating_mul(rows).saturating_mul(4);
    anchor_fold(anchors, rows, options.max_texture_size)?;
    let pixels = width.saturating_mul(rows);
    if pixels.saturating_add(bone_pixels) > options.max_total_pixels {
        return Err(Error::limit(
            "anchors",
            format!(
                "anchor tracks of {pixels} pixels ({anchors} anchors, {rows} frames, {floats} floats) and bone textures of {bone_pixels} pixels are more than {} pixels together",
                options.max_total_pixels
            ),
        )
        .with_hint("track fewer anchors, lower the fps or bake fewer clips"));
    }
    Ok(())
}

/// Everything one pass over the timeline produces.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameBake {
    /// One bone texture per bone set (empty when nothing is skinned).
    pub textures: Vec<BoneTexture>,
    /// Socket tracks (empty `nodes` when none were asked for).
    pub anchors: AnchorTracks,
}

/// The fold of every bone set's texture and their pixels together, each
/// checked against the size limits (a [`crate::ErrorKind::Limit`] error
/// that says what to change).
fn plan_sizes(
    model: &Model,
    sets: &[BoneSet],
    rows: usize,
    options: &BoneBakeOptions,
) -> Result<(Vec<Fold>, usize)> {
    let ppj = options.layout.pixels_per_joint();
    let mut total_pixels = 0usize;
    let mut folds = Vec::with_capacity(sets.len());
    for set in sets {
        let joints = model.skins[set.skin].joints.len();
        let width = joints.saturating_mul(ppj);
        let max = options.max_texture_size;
        let fold = Fold::plan(width as u64, 1, rows as u64, max as u64, false).map_err(|e| {
            let (why, hint) = match e {
                FoldError::RowTooLarge { .. } => (
                    format!(
                        "one row of the bone texture is {width} pixels ({joints} joints x {ppj}), wider than the maximum size {max}"
                    ),
                    if ppj == 4 {
                        "use the mat3x4 layout (3 pixels per joint) or raise the maximum texture size"
                    } else {
                        "raise the maximum texture size; a skin this large cannot be baked as a texture"
                    },
                ),
                FoldError::TooManyBlocks { blocks, fit } => (
                    format!(
                        "{rows} frames of {width} pixels need {blocks} column blocks of at most {max} rows, but only {fit} fit side by side within the maximum size {max}"
                    ),
                    "lower the fps, bake fewer clips, use the mat3x4 layout, or raise the maximum texture size",
                ),
            };
            Error::limit(format!("skins[{}]", set.skin), why).with_hint(hint)
        })?;
        folds.push(fold);
        total_pixels = (fold.width() as usize)
            .checked_mul(fold.height() as usize)
            .and_then(|p| p.checked_add(total_pixels))
            .filter(|t| *t <= options.max_total_pixels)
            .ok_or_else(|| {
                Error::limit(
                    format!("skins[{}]", set.skin),
                    format!(
                        "the bake's {} bone textures would hold more than {} pixels together",
                        sets.len(),
                        options.max_total_pixels
                    ),
                )
                .with_hint(pixels_hint(options.layout))
            })?;
    }
    Ok((folds, total_pixels))
}

/// What every timeline row of a bone bake shares.
struct RowBake<'a> {
    model: &'a Model,
    /// Each bone set's skin and mesh node.
    sets: &'a [(usize, usize)],
    /// The mesh node the anchors are relative to (the first set's).
    reference: Option<usize>,
    anchors: &'a [usize],
    options: &'a BoneBakeOptions,
}

impl RowBake<'_> {
    /// Encodes timeline row `row`, evaluated in `ev`: each bone set's skin
    /// matrices into its slice of `outs`, then the anchors' matrices into
    /// the slice after them; the lossy form's error per set. `mats` is
    /// scratch of the largest skin's size.
    fn bake_row(
        &self,
        ev: &Evaluator<'_>,
        row: usize,
        outs: &mut [&mut [f32]],
        mats: &mut [DMat4],
    ) -> Result<Vec<FormError>> {
        let ppj = self.options.layout.pixels_per_joint();
        let mut forms = Vec::new();
        for (out, &(skin, mesh_node)) in outs.iter_mut().zip(self.sets) {
            let mut form = FormError::default();
            let inv = skin::inverse_mesh_global(&ev.globals, mesh_node)?;
            let s = &self.model.skins[skin];
            let mats = &mut mats[..s.joints.len()];
            skin::skin_matrices(s, &ev.globals, &inv, mats);
            for (j, m) in mats.iter().enumerate() {
                let pixels = &mut out[j * ppj * 4..(j + 1) * ppj * 4];
                self.options.layout.encode(m, pixels);
                // Finite inputs can still overflow (huge scales
                // multiplied down a hierarchy); never bake those. A
                // non-finite f64 stays non-finite in f32, so checking
                // the encoded pixels covers both.
                if !pixels.iter().all(|v| v.is_finite()) {
                    return Err(Error::invalid(
                        format!("skins[{skin}].joints[{j}]"),
                        format!(
                            "the skin matrix of joint {j} (nodes[{}]) is not finite: transforms overflow",
                            s.joints[j]
                        ),
                    )
                    .with_hint("check the model for absurdly large scales or translations"));
                }
                if !self.options.layout.is_exact() {
                    form = form.worse(form_error(m, pixels, self.options.precision, j, row));
                }
            }
            forms.push(form);
        }
        if let Some(out) = outs.get_mut(self.sets.len()) {
            let inv = match self.reference {
                Some(r) => skin::inverse_mesh_global(&ev.globals, r)?,
                None => DMat4::IDENTITY,
            };
            for (a, &node) in self.anchors.iter().enumerate() {
                MatrixLayout::Mat4
                    .encode(&(inv * ev.globals[node]), &mut out[a * 16..(a + 1) * 16]);
            }
        }
        Ok(forms)
    }
}

/// Bakes bone textures and socket tracks in one loop over the timeline rows,
/// so both come from the very same evaluated poses.
///
/// Every size is checked before anything is allocated: each bone texture and
/// the anchor tracks (`anchors.len() * 4` pixels wide, one row per timeline
/// row) against `options.max_texture_size`, and all of them together against
/// `options.max_total_pixels`; a [`crate::ErrorKind::Limit`] error otherwise.
pub fn bake_frames(
    model: &Model,
    timeline: &Timeline,
    options: &BoneBakeOptions,
    anchors: &[usize],
) -> Result<FrameBake> {
    let sets = bone_sets(model);
    let reference = sets.first().map(|s| s.mesh_node);
    if sets.len() > MAX_BONE_SETS {
        return Err(Error::limit(
            "nodes",
            format!(
                "{} skinned mesh instances each need their own bone texture, more than the limit of {MAX_BONE_SETS}",
                sets.len()
            ),
        )
        .with_hint("instances with the same skin under the same animated parent share one texture; bake the characters of a crowd scene one by one"));
    }
    let rows = timeline.rows;
    if rows == 0 {
        return Err(Error::invalid(
            "animations",
            "the timeline has no frames to bake",
        ));
    }
    timeline::check_evaluations(rows, model)?;
    // Sizes first, all of them, before allocating any texture.
    let (folds, total_pixels) = plan_sizes(model, &sets, rows, options)?;
    check_anchor_tracks(anchors.len(), rows, total_pixels, options)?;
    let mut textures = Vec::with_capacity(sets.len());
    for (set, fold) in sets.into_iter().zip(folds) {
        let (width, height) = (fold.width() as usize, fold.height() as usize);
        textures.push(BoneTexture {
            set,
            layout: options.layout,
            width,
            height,
            fold,
            data: vec![0.0; width * height * 4],
            form_error: None,
            range: None,
        });
    }
    let mut tracks = AnchorTracks {
        reference,
        nodes: anchors.to_vec(),
        rows,
        data: vec![0.0; rows * anchors.len() * 16],
    };

    let sets: Vec<(usize, usize)> = textures
        .iter()
        .map(|t| (t.set.skin, t.set.mesh_node))
        .collect();
    // One list of output rows per timeline row: one slice per texture, then
    // the anchor row.
    let mut per_row: Vec<Vec<&mut [f32]>> = (0..rows)
        .map(|_| Vec::with_capacity(textures.len() + 1))
        .collect();
    for tex in &mut textures {
        // Pixel row y, block b holds timeline row b * rows_per_block + y.
        let per_block = tex.fold.rows_per_block as usize;
        let block_len = tex.fold.block_width as usize * 4;
        for (y, line) in tex.data.chunks_mut(tex.width * 4).enumerate() {
            for (b, chunk) in line.chunks_mut(block_len).enumerate() {
                if let Some(slot) = per_row.get_mut(b * per_block + y) {
                    slot.push(chunk);
                }
            }
        }
    }
    if !anchors.is_empty() {
        for (r, chunk) in tracks.data.chunks_mut(anchors.len() * 16).enumerate() {
            per_row[r].push(chunk);
        }
    }
    let max_joints = model
        .skins
        .iter()
        .map(|s| s.joints.len())
        .max()
        .unwrap_or(0);
    let layout = options.layout;
    let rows_job = RowBake {
        model,
        sets: &sets,
        reference,
        anchors,
        options,
    };
    let results: Vec<Result<Vec<FormError>>> = per_row
        .into_par_iter()
        .enumerate()
        .map_init(
            || (Evaluator::new(model), vec![DMat4::IDENTITY; max_joints]),
            |(ev, mats), (row, mut outs)| {
                timeline.evaluate_row(ev, row);
                rows_job.bake_row(ev, row, &mut outs, mats)
            },
        )
        .collect();
    let mut forms: Vec<Option<FormError>> = vec![None; textures.len()];
    let results: Vec<Result<()>> = results
        .into_iter()
        .map(|r| {
            r.map(|row| {
                for (slot, f) in forms.iter_mut().zip(row) {
                    *slot = Some(slot.map_or(f, |s| s.worse(f)));
                }
            })
        })
        .collect();
    timeline.first_row_error(results)?;
    if !layout.is_exact() {
        for (tex, form) in textures.iter_mut().zip(forms) {
            tex.form_error = form;
            if options.precision == Precision::Unorm16 {
                let joints = model.skins[tex.set.skin].joints.len();
                tex.to_unorm16(joints, rows);
            }
        }
    }
    Ok(FrameBake {
        textures,
        anchors: tracks,
    })
}

/// What the lossy form of `m` (its `pixels`) loses: the entry error after
/// rounding to `precision` (what a shader reading the stored texture
/// decodes) and the form's own error relative to the matrix's largest
/// entry.
fn form_error(
    m: &DMat4,
    pixels: &[f32],
    precision: Precision,
    joint: usize,
    row: usize,
) -> FormError {
    let layout = MatrixLayout::Qts;
    let own = rigbake_types::qts::entry_error(m, &layout.decode(pixels));
    let stored = match precision {
        // 16-bit normalised samples are measured once the texture's range
        // is known (`BoneTexture::to_unorm16`).
        Precision::F32 | Precision::Unorm16 => own,
        Precision::F16 => {
            let mut rounded = [0.0f32; 4 * rigbake_types::qts::TEXELS_PER_JOINT];
            for (r, &p) in rounded.iter_mut().zip(pixels) {
                *r = half::f16::from_f32(p).to_f32();
            }
            rigbake_types::qts::entry_error(m, &layout.decode(&rounded))
        }
    };
    let size = (0..4)
        .flat_map(|c| (0..3).map(move |r| m.col(c)[r].abs()))
        .fold(f64::MIN_POSITIVE, f64::max);
    FormError {
        max: stored,
        relative: own / size,
        joint,
        row,
    }
}

/// Largest error of a lossy matrix form ([`MatrixLayout::Qts`]) a bake
/// accepts, relative to the largest entry of the matrix: 1e-5, about a
/// hundred times what f32 rounding of the form's parts costs, and far
/// below what any visible non-uniform scale (0.01% already gives 7e-5),
/// shear or mirror costs.
pub const FORM_RELATIVE_LIMIT: f64 = 1e-5;

/// Refuses the textures' lossy form when a skin matrix is beyond it
/// ([`FORM_RELATIVE_LIMIT`]): the error names the worst joint, its clip
/// and frame, and what the form would cost there. Also refuses a form
/// whose stored entries are off by more than the model's size
/// ([`timeline::loops::model_size`]): a joint carried some 1e13 units
/// away keeps its rotation and scale within the relative limit, but its
/// decoded matrix is then off by more than the whole model, a recorded
/// error `rigbake verify` rightly calls not credible (found by fuzzing).
pub fn check_forms(model: &Model, timeline: &Timeline, textures: &[BoneTexture]) -> Result<()> {
    let lossy = || textures.iter().filter_map(|t| t.form_error.map(|f| (t, f)));
    let size = timeline::loops::model_size(model);
    let absurd = lossy().find(|(_, f)| f.max.total_cmp(&size).is_gt());
    if let Some((tex, f)) = absurd {
        return Err(Error::invalid(
            format!("skins[{}]", tex.set.skin),
            format!(
                "in the qts layout, decoded skin matrices would be off by up to {:.3e} model units, more than the model's size ({size:.3e}): its joints move too far for the form's precision",
                f.max
            ),
        )
        .with_hint("bake this model with `--layout mat4` or `--layout mat3x4`"));
    }
    let worst = lossy()
        // NaN counts as beyond the limit (total order: NaN above infinity).
        .filter(|(_, f)| f.relative.total_cmp(&FORM_RELATIVE_LIMIT).is_gt())
        .fold(
            None,
            |w: Option<(&BoneTexture, FormError)>, (t, f)| match w {
                Some((_, g)) if f.relative.total_cmp(&g.relative).is_le() => w,
                _ => Some((t, f)),
            },
        );
    let Some((tex, f)) = worst else {
        return Ok(());
    };
    let skin = tex.set.skin;
    let node = model.skins[skin].joints.get(f.joint).copied();
    let name = node.map_or_else(
        || format!("joint {}", f.joint),
        |n| model.nodes[n].name.clone(),
    );
    let (c, frame) = timeline.locate_row(f.row);
    Err(Error::invalid(
        format!("skins[{skin}].joints[{}]", f.joint),
        format!(
            "the skin matrix of `{name}` in clip `{}`, frame {frame}, has non-uniform scale, shear or a mirror, which the qts layout cannot hold: its entries would move by {:.2e} of the matrix's largest entry (the limit is {FORM_RELATIVE_LIMIT:e})",
            timeline.clips[c].name,
            f.relative,
        ),
    )
    .with_hint("bake this model with `--layout mat4` or `--layout mat3x4`"))
}
