//! The bone-matrix ("skin matrix") bake: one texture per distinct skin, one
//! row per sampled frame, 4 (or 3) RGBA pixels per joint (SPEC section 4).
//!
//! Layouts, with `m[row][col]` the skin matrix of joint `j`:
//! - [`MatrixLayout::Mat4`]: pixel `4j + c` holds column `c`:
//!   `(m[0][c], m[1][c], m[2][c], m[3][c])`.
//! - [`MatrixLayout::Mat3x4`]: pixel `3j + r` holds row `r`:
//!   `(m[r][0], m[r][1], m[r][2], m[r][3])`; the last row is `(0, 0, 0, 1)`.
//!
//! Rows are evaluated in parallel, each independently, so results do not
//! depend on the thread count.

use std::collections::HashMap;

use glam::{DMat4, Mat4};
use rayon::prelude::*;

use crate::bake::anchors::AnchorTracks;
use crate::error::{Error, ErrorKind, Result};
use crate::evaluate::Evaluator;
use crate::model::{Model, Property};
use crate::skin;
use crate::timeline::{self, Timeline};

pub use rigbake_types::MatrixLayout;

/// A group of skinned mesh instances that share one baked matrix set:
/// identical skins (same joints, same inverse binds) on mesh nodes whose
/// global matrices are identical at every instant.
#[derive(Debug, Clone, PartialEq)]
pub struct BoneSet {
    /// Representative skin (index into `Model::skins`).
    pub skin: usize,
    /// Representative mesh node whose space the matrices are in.
    pub mesh_node: usize,
    /// Every skinned node whose mesh plays from this set, ascending.
    pub members: Vec<usize>,
}

/// Groups the model's skinned mesh instances into [`BoneSet`]s, in order of
/// their first member node. Linear in the number of nodes, however deep the
/// hierarchy.
pub fn bone_sets(model: &Model) -> Vec<BoneSet> {
    let n = model.nodes.len();
    let mut animated = vec![false; n];
    for ch in model.clips.iter().flat_map(|c| &c.channels) {
        if ch.property != Property::MorphWeights {
            animated[ch.node] = true;
        }
    }
    // A node's global is global(anchor) * fixed, where anchor is the nearest
    // animated ancestor (or the node itself when animated, or none) and fixed
    // the product of the rest matrices below it, accumulated parents first as
    // the globals are.
    let mut chains: Vec<(Option<usize>, DMat4)> = vec![(None, DMat4::IDENTITY); n];
    for &i in &model.topological_order {
        chains[i] = if animated[i] {
            (Some(i), DMat4::IDENTITY)
        } else {
            match model.nodes[i].parent {
                Some(p) => (chains[p].0, chains[p].1 * model.nodes[i].rest_matrix),
                None => (None, model.nodes[i].rest_matrix),
            }
        };
    }
    // Skins with the same joints and inverse binds share one representative.
    let mut skin_ids: HashMap<(&[usize], Vec<[u64; 16]>), usize> = HashMap::new();
    let mut representative = vec![usize::MAX; model.skins.len()];
    let mut sets: Vec<BoneSet> = Vec::new();
    let mut by_key: HashMap<(usize, Option<usize>, [u64; 16]), usize> = HashMap::new();
    let influenced = model.meshes_with_influences();
    for node in model.skinned_nodes() {
        if !model.nodes[node].mesh.is_some_and(|m| influenced[m]) {
            continue;
        }
        let skin = model.nodes[node].skin.unwrap_or_default();
        if representative[skin] == usize::MAX {
            let s = &model.skins[skin];
            let key = (
                s.joints.as_slice(),
                s.inverse_binds.iter().map(matrix_key).collect(),
            );
            representative[skin] = *skin_ids.entry(key).or_insert(skin);
        }
        let (anchor, fixed) = chains[node];
        let key = (representative[skin], anchor, matrix_key(&fixed));
        match by_key.get(&key) {
            Some(&k) => sets[k].members.push(node),
            None => {
                by_key.insert(key, sets.len());
                sets.push(BoneSet {
                    skin,
                    mesh_node: node,
                    members: vec![node],
                });
            }
        }
    }
    sets
}

/// A matrix as hashable bits; `-0.0` and `0.0` compare equal, as with `==`.
fn matrix_key(m: &DMat4) -> [u64; 16] {
    m.to_cols_array().map(|v| (v + 0.0).to_bits())
}

/// Largest number of bone textures (distinct [`BoneSet`]s) one bake makes.
pub const MAX_BONE_SETS: usize = 1024;

/// Options of the bone-matrix bake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoneBakeOptions {
    /// Pixel layout of each matrix.
    pub layout: MatrixLayout,
    /// Largest texture width and height.
    pub max_texture_size: usize,
    /// Largest number of pixels of all textures of one bake together.
    pub max_total_pixels: usize,
}

impl Default for BoneBakeOptions {
    fn default() -> Self {
        Self {
            layout: MatrixLayout::Mat4,
            max_texture_size: 8192,
            max_total_pixels: 1 << 28,
        }
    }
}

/// A baked bone-matrix texture: RGBA f32 pixels, row-major, one row per
/// timeline row.
#[derive(Debug, Clone, PartialEq)]
pub struct BoneTexture {
    /// The instances this texture serves.
    pub set: BoneSet,
    /// Pixel layout.
    pub layout: MatrixLayout,
    /// Width in pixels (`joints * pixels_per_joint`).
    pub width: usize,
    /// Height in pixels (timeline rows).
    pub height: usize,
    /// `width * height * 4` floats.
    pub data: Vec<f32>,
}

impl BoneTexture {
    /// The matrix of `joint` at `row`, decoded as a shader would.
    pub fn matrix(&self, row: usize, joint: usize) -> Mat4 {
        let ppj = self.layout.pixels_per_joint();
        let start = (row * self.width + joint * ppj) * 4;
        self.layout.decode(&self.data[start..start + ppj * 4])
    }
}

/// Bakes one bone-matrix texture per [`BoneSet`] over every timeline row.
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
            .with_hint("use the mat3x4 layout, a lower fps, fewer clips, or raise the maximum texture size"));
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
                .with_hint("use the mat3x4 layout, a lower fps or fewer clips")
            })?;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DQuat, DVec3};

    #[test]
    fn layouts_round_trip_an_affine_matrix() {
        let m = DMat4::from_scale_rotation_translation(
            DVec3::new(1.0, 2.0, 0.5),
            DQuat::from_rotation_y(0.3),
            DVec3::new(4.0, -5.0, 6.0),
        );
        for layout in [MatrixLayout::Mat4, MatrixLayout::Mat3x4] {
            let mut px = vec![0.0f32; layout.pixels_per_joint() * 4];
            layout.encode(&m, &mut px);
            let back = layout.decode(&px);
            assert!(back.abs_diff_eq(m.as_mat4(), 1e-6), "{layout:?}");
        }
        // Mat4 pixel c is column c; Mat3x4 pixel r is row r.
        let mut px = [0.0f32; 16];
        MatrixLayout::Mat4.encode(&m, &mut px);
        assert_eq!(&px[12..16], &[4.0, -5.0, 6.0, 1.0]);
        let mut px = [0.0f32; 12];
        MatrixLayout::Mat3x4.encode(&m, &mut px);
        assert_eq!(px[3], 4.0);
        assert_eq!(px[7], -5.0);
        assert_eq!(px[11], 6.0);
    }
}
