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

use glam::{DMat4, Mat4, Vec4};
use rayon::prelude::*;

use crate::bake::anchors::AnchorTracks;
use crate::error::{Error, Result};
use crate::evaluate::Evaluator;
use crate::model::{Model, Property};
use crate::skin;
use crate::timeline::Timeline;

/// How a matrix is laid out in RGBA pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MatrixLayout {
    /// Four pixels per joint, one per column of the 4x4 matrix.
    #[default]
    Mat4,
    /// Three pixels per joint, one per row of the upper 3x4 matrix.
    Mat3x4,
}

impl MatrixLayout {
    /// RGBA pixels per joint.
    pub fn pixels_per_joint(self) -> usize {
        match self {
            Self::Mat4 => 4,
            Self::Mat3x4 => 3,
        }
    }

    /// Writes `m` as `pixels_per_joint` RGBA pixels into `out`.
    pub fn encode(self, m: &DMat4, out: &mut [f32]) {
        match self {
            Self::Mat4 => {
                for c in 0..4 {
                    let col = m.col(c).as_vec4();
                    out[c * 4..c * 4 + 4].copy_from_slice(&col.to_array());
                }
            }
            Self::Mat3x4 => {
                for r in 0..3 {
                    let row = m.row(r).as_vec4();
                    out[r * 4..r * 4 + 4].copy_from_slice(&row.to_array());
                }
            }
        }
    }

    /// Reads a matrix back from its pixels, as a shader would.
    pub fn decode(self, pixels: &[f32]) -> Mat4 {
        let px = |i: usize| Vec4::from_slice(&pixels[i * 4..i * 4 + 4]);
        match self {
            Self::Mat4 => Mat4::from_cols(px(0), px(1), px(2), px(3)),
            Self::Mat3x4 => Mat4::from_cols(px(0), px(1), px(2), Vec4::W).transpose(),
        }
    }
}

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
/// their first member node.
pub fn bone_sets(model: &Model) -> Vec<BoneSet> {
    let mut animated = vec![false; model.nodes.len()];
    for ch in model.clips.iter().flat_map(|c| &c.channels) {
        if ch.property != Property::MorphWeights {
            animated[ch.node] = true;
        }
    }
    // A node's global is global(anchor) * fixed, where anchor is the nearest
    // animated ancestor (or none) and fixed the product of rest matrices below it.
    let static_chain = |node: usize| -> (Option<usize>, DMat4) {
        let mut m = model.nodes[node].rest_matrix;
        let mut cursor = if animated[node] {
            return (Some(node), DMat4::IDENTITY);
        } else {
            model.nodes[node].parent
        };
        while let Some(p) = cursor {
            if animated[p] {
                break;
            }
            m = model.nodes[p].rest_matrix * m;
            cursor = model.nodes[p].parent;
        }
        (cursor, m)
    };
    let same_skin = |a: usize, b: usize| {
        a == b || {
            let (a, b) = (&model.skins[a], &model.skins[b]);
            a.joints == b.joints && a.inverse_binds == b.inverse_binds
        }
    };
    let mut sets: Vec<(BoneSet, (Option<usize>, DMat4))> = Vec::new();
    for node in model.skinned_nodes() {
        let has_influences = model.nodes[node].mesh.is_some_and(|m| {
            model.meshes[m]
                .primitives
                .iter()
                .any(|p| p.influences.is_some())
        });
        if !has_influences {
            continue;
        }
        let skin = model.nodes[node].skin.unwrap_or_default();
        let chain = static_chain(node);
        match sets
            .iter_mut()
            .find(|(s, c)| same_skin(s.skin, skin) && *c == chain)
        {
            Some((set, _)) => set.members.push(node),
            None => sets.push((
                BoneSet {
                    skin,
                    mesh_node: node,
                    members: vec![node],
                },
                chain,
            )),
        }
    }
    sets.into_iter().map(|(s, _)| s).collect()
}

/// Options of the bone-matrix bake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoneBakeOptions {
    /// Pixel layout of each matrix.
    pub layout: MatrixLayout,
    /// Largest texture width and height.
    pub max_texture_size: usize,
}

impl Default for BoneBakeOptions {
    fn default() -> Self {
        Self {
            layout: MatrixLayout::Mat4,
            max_texture_size: 8192,
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
            crate::ErrorKind::NothingToBake,
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
    let ppj = options.layout.pixels_per_joint();
    let rows = timeline.rows;
    let mut textures = Vec::with_capacity(sets.len());
    for set in sets {
        let joints = model.skins[set.skin].joints.len();
        let width = joints * ppj;
        if width > options.max_texture_size || rows > options.max_texture_size {
            return Err(Error::limit(
                format!("skins[{}]", set.skin),
                format!(
                    "bone texture would be {width} x {rows} pixels, over the maximum size {}",
                    options.max_texture_size
                ),
            )
            .with_hint("use the mat3x4 layout, a lower fps, fewer clips, or raise the maximum texture size"));
        }
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
                        layout.encode(m, &mut out[j * ppj * 4..(j + 1) * ppj * 4]);
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
    if let Some((row, Err(e))) = results.into_iter().enumerate().find(|(_, r)| r.is_err()) {
        let (c, frame) = timeline.locate_row(row);
        return Err(Error {
            message: format!(
                "{} (clip `{}`, frame {frame})",
                e.message, timeline.clips[c].name
            ),
            ..e
        });
    }
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
