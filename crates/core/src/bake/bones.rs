//! The bone-matrix ("skin matrix") bake's building blocks: which skinned
//! instances share one texture ([`BoneSet`]), the bake's options and the
//! texture it makes ([`BoneTexture`]): one texture per distinct skin, one
//! row per sampled frame, 4 (or 3) RGBA pixels per joint (SPEC section 4) in
//! a [`MatrixLayout`]. The loop over the timeline that fills the textures is
//! [`crate::bake::frames`].

use crate::fold::Fold;
use std::collections::HashMap;

use glam::{DMat4, Mat4};

use crate::layout::MatrixLayout;
use crate::model::{Model, Property};
use rigbake_types::{Precision, qts};

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
    /// Precision the texture is stored at: the lossy layouts
    /// ([`MatrixLayout::Qts`]) measure their error after rounding to it.
    pub precision: Precision,
    /// Largest texture width and height.
    pub max_texture_size: usize,
    /// Largest number of pixels of all textures of one bake together.
    pub max_total_pixels: usize,
}

impl Default for BoneBakeOptions {
    fn default() -> Self {
        Self {
            layout: MatrixLayout::Mat4,
            precision: Precision::F32,
            max_texture_size: 8192,
            max_total_pixels: 1 << 28,
        }
    }
}

/// A baked bone-matrix texture: RGBA f32 pixels, row-major, one row per
/// timeline row, folded into column blocks when the rows exceed the
/// maximum size ([`crate::fold`]; unfolded, row `r` is pixel row `r`).
#[derive(Debug, Clone, PartialEq)]
pub struct BoneTexture {
    /// The instances this texture serves.
    pub set: BoneSet,
    /// Pixel layout.
    pub layout: MatrixLayout,
    /// Width in pixels (`joints * pixels_per_joint` per block).
    pub width: usize,
    /// Height in pixels (timeline rows per block).
    pub height: usize,
    /// Where each timeline row is (one page: bone textures never page).
    pub fold: Fold,
    /// `width * height * 4` floats.
    pub data: Vec<f32>,
    /// What a lossy layout lost (`None` for the matrix layouts).
    pub form_error: Option<FormError>,
    /// The range of the normalised channels (`qts` at
    /// [`Precision::Unorm16`]: `data` then holds each sample as
    /// `sample / 65535`); `None` for float textures.
    pub range: Option<qts::Range>,
}

/// What a lossy matrix form ([`MatrixLayout::Qts`]) lost in one texture,
/// measured on every joint at every row: the decoded matrix (as a shader
/// decodes it) against the exact skin matrix.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FormError {
    /// Largest entry error of a decoded matrix at the stored precision,
    /// model units (the texture's recorded `max_error`).
    pub max: f64,
    /// The worst entry error of the form itself (decoded from f32 texels),
    /// relative to the largest entry of that matrix: about 1e-7 for a
    /// rotation with a uniform scale, far more for non-uniform scale,
    /// shear or a mirror, which the form cannot hold.
    pub relative: f64,
    /// The joint (index in the skin) of `relative`.
    pub joint: usize,
    /// The timeline row of `relative`.
    pub row: usize,
}

impl FormError {
    /// The worse of two, by `max` and by `relative` separately (the
    /// location follows `relative`); ties keep `self`, so folding rows in
    /// order gives the same answer on any thread count.
    pub fn worse(self, other: Self) -> Self {
        let keep = if other.relative > self.relative {
            other
        } else {
            self
        };
        Self {
            max: self.max.max(other.max),
            ..keep
        }
    }
}

impl BoneTexture {
    /// The matrix of `joint` at `row`, decoded as a shader would.
    pub fn matrix(&self, row: usize, joint: usize) -> Mat4 {
        let texels = &self.data[self.joint_span(row, joint)];
        match &self.range {
            Some(range) => self.layout.decode(&qts::from_unorm(texels, range)),
            None => self.layout.decode(texels),
        }
    }

    /// The matrix of `joint` at `row` as a shader decodes it from the
    /// texture stored at `precision`: [`Self::matrix`] of the texels
    /// rounded to half floats first at [`Precision::F16`].
    pub fn stored_matrix(&self, row: usize, joint: usize, precision: Precision) -> Mat4 {
        if precision != Precision::F16 {
            return self.matrix(row, joint);
        }
        let texels = &self.data[self.joint_span(row, joint)];
        let mut rounded = [0.0f32; 16];
        for (r, &t) in rounded.iter_mut().zip(texels) {
            *r = half::f16::from_f32(t).to_f32();
        }
        self.layout.decode(&rounded[..texels.len()])
    }

    /// Where the texels of `joint` at `row` are in `data`.
    fn joint_span(&self, row: usize, joint: usize) -> std::ops::Range<usize> {
        let ppj = self.layout.pixels_per_joint();
        let (_, x, y) = self.fold.texel((joint * ppj) as u32, 0, row as u32);
        let start = (y as usize * self.width + x as usize) * 4;
        start..start + ppj * 4
    }

    /// Stores a `qts` texture's texels as 16-bit normalised samples
    /// ([`Precision::Unorm16`]) over the range of its translations and
    /// scales ([`qts::to_unorm`]), and adds what that costs to its
    /// recorded error: the largest entry difference between each matrix
    /// decoded before and after, over every joint and row (added to the
    /// form's own error, a bound by the triangle inequality).
    pub fn to_unorm16(&mut self, joints: usize, rows: usize) {
        if self.layout != MatrixLayout::Qts {
            return;
        }
        let spans: Vec<_> = (0..rows)
            .flat_map(|r| (0..joints).map(move |j| (r, j)))
            .map(|(r, j)| self.joint_span(r, j))
            .collect();
        let mut range = [[f32::INFINITY; 4], [f32::NEG_INFINITY; 4]];
        for span in &spans {
            for (c, &v) in self.data[span.start + 4..span.end].iter().enumerate() {
                range[0][c] = range[0][c].min(v);
                range[1][c] = range[1][c].max(v);
            }
        }
        if spans.is_empty() {
            range = [[0.0; 4]; 2];
        }
        let mut added = 0.0f64;
        for span in spans {
            let texels = &mut self.data[span];
            let before = MatrixLayout::Qts.decode(texels);
            qts::to_unorm(texels, &range);
            let after = MatrixLayout::Qts.decode(&qts::from_unorm(texels, &range));
            added = added.max(qts::entry_error(&before.as_dmat4(), &after));
        }
        self.range = Some(range);
        if let Some(form) = &mut self.form_error {
            form.max += added;
        }
    }
}
