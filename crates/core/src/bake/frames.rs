//! The loop over the timeline rows that both the bone-matrix bake and the
//! anchor tracks come from: each row is evaluated once, and the same poses
//! fill every bone texture and the socket matrices.
//!
//! Rows are evaluated in parallel, each independently, so results do not
//! depend on the thread count.

use glam::DMat4;
use rayon::prelude::*;

use crate::bake::anchors::AnchorTracks;
use crate::bake::bones::{BoneBakeOptions, BoneTexture, MAX_BONE_SETS, bone_sets};
use crate::error::{Error, ErrorKind, Result};
use crate::eval::evaluate::Evaluator;
use crate::eval::skin;
use crate::layout::MatrixLayout;
use crate::model::Model;
use crate::timeline::{self, Timeline};

/// Bakes one bone-matrix texture per [`BoneSet`](crate::bake::bones::BoneSet)
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

/// What helps when a bone texture of `width` x `rows` is over
/// `max_texture_size`. The height is one row per frame of every clip, so
/// only fewer frames help there (a lower fps, fewer or shorter clips) or a
/// larger limit; the 3x4 layout narrows the width only and is suggested
/// only when the width is over.
pub fn size_hint(width: usize, rows: usize, options: &BoneBakeOptions) -> String {
    let max = options.max_texture_size;
    let mut advice = Vec::new();
    if rows > max {
        advice.push(format!(
            "the texture has one row per frame of every clip ({rows} rows): lower the fps (--fps), bake fewer clips (--clip) or split long takes into shorter range clips (manifest `[[model.clip]]` with `frames` or `time`)"
        ));
    }
    if width > max {
        if options.layout == MatrixLayout::Mat4 {
            advice.push(
                "the width is 4 pixels per joint: the mat3x4 layout (--layout mat3x4) needs 3"
                    .to_owned(),
            );
        } else {
            advice
                .push("the width is 3 pixels per joint: bake a skin with fewer joints".to_owned());
        }
    }
    let limit = rigbake_types::TEXTURE_SIZE_LIMIT as usize;
    if max < limit {
        advice.push(format!(
            "or raise --max-texture-size (up to {limit}, if your engine's GPUs take textures that large)"
        ));
    }
    advice.join("; ")
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
/// pixels (one `mat4` per socket) by `rows`, the `anchors.exr` layout, so
/// their width and height are held to `max_texture_size` and their pixels,
/// added to the bone textures' `bone_pixels`, to `max_total_pixels`.
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
    if width > options.max_texture_size || rows > options.max_texture_size {
        return Err(Error::limit(
            "anchors",
            format!(
                "anchor tracks would be {width} x {rows} pixels ({anchors} anchors, {rows} frames, {floats} floats), over the maximum size {}",
                options.max_texture_size
            ),
        )
        .with_hint("track fewer anchors (name them instead of `auto`), lower the fps or bake fewer clips"));
    }
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
    let ppj = options.layout.pixels_per_joint();
    // Sizes first, all of them, before allocating any texture.
    let mut total_pixels = 0usize;
    for set in &sets {
        let joints = model.skins[set.skin].joints.len();
        let width = joints.saturating_mul(ppj);
        if width > options.max_texture_size || rows > options.max_texture_size {
            return Err(Error::limit(
                format!("skins[{}]", set.skin),
                format!(
                    "bone texture would be {width} x {rows} pixels ({joints} joints, {rows} frames), over the maximum size {}",
                    options.max_texture_size
                ),
            )
            .with_hint(size_hint(width, rows, options)));
        }
        total_pixels = width
            .checked_mul(rows)
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
    check_anchor_tracks(anchors.len(), rows, total_pixels, options)?;
    let mut textures = Vec::with_capacity(sets.len());
    for set in sets {
        let width = model.skins[set.skin].joints.len() * ppj;
        textures.push(BoneTexture {
            set,
            layout: options.layout,
            width,
            height: rows,
            data: vec![0.0; width * rows * 4],
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
        let row_len = tex.width * 4;
        for (r, chunk) in tex.data.chunks_mut(row_len).enumerate() {
            per_row[r].push(chunk);
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

    let results: Vec<Result<()>> = per_row
        .into_par_iter()
        .enumerate()
        .map_init(
            || (Evaluator::new(model), vec![DMat4::IDENTITY; max_joints]),
            |(ev, mats), (row, mut outs)| {
                timeline.evaluate_row(ev, row);
                for (out, &(skin, mesh_node)) in outs.iter_mut().zip(&sets) {
                    let inv = skin::inverse_mesh_global(&ev.globals, mesh_node)?;
                    let s = &model.skins[skin];
                    let mats = &mut mats[..s.joints.len()];
                    skin::skin_matrices(s, &ev.globals, &inv, mats);
                    for (j, m) in mats.iter().enumerate() {
                        let pixels = &mut out[j * ppj * 4..(j + 1) * ppj * 4];
                        layout.encode(m, pixels);
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
                    }
                }
                if let Some(out) = outs.get_mut(sets.len()) {
                    let inv = match reference {
                        Some(r) => skin::inverse_mesh_global(&ev.globals, r)?,
                        None => DMat4::IDENTITY,
                    };
                    for (a, &node) in anchors.iter().enumerate() {
                        MatrixLayout::Mat4
                            .encode(&(inv * ev.globals[node]), &mut out[a * 16..(a + 1) * 16]);
                    }
                }
                Ok(())
            },
        )
        .collect();
    timeline.first_row_error(results)?;
    Ok(FrameBake {
        textures,
        anchors: tracks,
    })
}
