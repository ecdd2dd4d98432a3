//! Bone-weight channels (SPEC section 5): each skinned vertex's strongest
//! (bone index, weight) pairs, packed two per RGBA "UV" channel, so an engine
//! can skin from the bone-matrix texture with no skinning data of its own.
//!
//! Rules: influences from every `JOINTS_n`/`WEIGHTS_n` set are gathered (a
//! joint listed twice counts once, its weights summed), sorted by weight with
//! ties broken by the lower bone index, the strongest `max_influences` kept and
//! renormalised to sum to 1; unused pairs are `(0, 0)`. Bone indices are the
//! skin's joint indices: the pixel blocks of that skin's bone texture.

use glam::DMat4;

use crate::bake::bones::BoneTexture;

use crate::error::{Error, Result};
use crate::model::Model;

/// The most influences rigbake keeps per vertex (four channels of two pairs).
pub const MAX_INFLUENCES: usize = 8;

/// Channels needed for `influences` pairs (two pairs per RGBA channel).
pub fn channel_count(influences: usize) -> usize {
    influences.div_ceil(2)
}

/// Reduces one vertex's raw slots to at most `max` (bone, weight) pairs,
/// strongest first, renormalised; writes `max` pairs into `bones`/`weights`
/// (unused ones zero) and returns the fraction of the total weight dropped.
///
/// Returns `None` when the vertex has no positive weight.
pub fn reduce(
    joints: &[u16],
    weights: &[f32],
    max: usize,
    bones: &mut [u16],
    out: &mut [f32],
) -> Option<f64> {
    // At most 64 slots (16 sets, an import limit); merge duplicate joints.
    const SLOTS: usize = 4 * crate::import::MAX_INFLUENCE_SETS;
    let mut pairs: [(u16, f64); SLOTS] = [(0, 0.0); SLOTS];
    let mut n = 0;
    for (&j, &w) in joints.iter().zip(weights).take(SLOTS) {
        if w <= 0.0 {
            continue;
        }
        if let Some(p) = pairs[..n].iter_mut().find(|(pj, _)| *pj == j) {
            p.1 += f64::from(w);
        } else {
            pairs[n] = (j, f64::from(w));
            n += 1;
        }
    }
    let pairs = &mut pairs[..n];
    let total: f64 = pairs.iter().map(|p| p.1).sum();
    if n == 0 || total <= 0.0 {
        return None;
    }
    // Strongest first; equal weights: lower bone index first (deterministic).
    pairs.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let kept = n.min(max);
    let kept_total: f64 = pairs[..kept].iter().map(|p| p.1).sum();
    bones[..max].fill(0);
    out[..max].fill(0.0);
    for (k, (j, w)) in pairs[..kept].iter().enumerate() {
        bones[k] = *j;
        out[k] = (w / kept_total) as f32;
    }
    // Nothing dropped is exactly 0: the two sums add the same weights in
    // different orders, so their difference can round to a tiny negative.
    Some(if kept == n {
        0.0
    } else {
        ((total - kept_total) / total).max(0.0)
    })
}

/// The reduced influences of one skinned primitive instance.
#[derive(Debug, Clone, PartialEq)]
pub struct PrimitiveWeights {
    /// Node instancing the mesh.
    pub node: usize,
    /// Mesh.
    pub mesh: usize,
    /// Primitive within the mesh.
    pub primitive: usize,
    /// The skin whose joint indices the bones are.
    pub skin: usize,
    /// Pairs per vertex.
    pub influences: usize,
    /// `influences` bone indices per vertex.
    pub bones: Vec<u16>,
    /// `influences` weights per vertex, summing to 1.
    pub weights: Vec<f32>,
    /// Fraction of each vertex's weight that was dropped.
    pub dropped: Vec<f32>,
    /// Largest fraction of a vertex's weight that was dropped.
    pub dropped_max: f64,
    /// Mean fraction of weight dropped per vertex.
    pub dropped_mean: f64,
}

impl PrimitiveWeights {
    /// Vertices.
    pub fn vertex_count(&self) -> usize {
        self.bones.len() / self.influences
    }

    /// The channels as RGBA floats, `channel_count(influences)` per vertex:
    /// channel `c` of vertex `v` is `(b[2c], w[2c], b[2c+1], w[2c+1])`, bone
    /// indices as exact float integers.
    pub fn channels(&self) -> Vec<[f32; 4]> {
        self.channels_in(channel_count(self.influences))
    }

    /// [`Self::channels`] with `per` channels per vertex: pairs beyond the
    /// kept influences are `(0, 0)` (a LOD level that keeps fewer pairs
    /// than the bake's channels hold). `per` below the kept channels
    /// drops the pairs that do not fit.
    pub fn channels_in(&self, per: usize) -> Vec<[f32; 4]> {
        let k = self.influences;
        let mut out = Vec::with_capacity(self.vertex_count() * per);
        for v in 0..self.vertex_count() {
            let (b, w) = (
                &self.bones[v * k..(v + 1) * k],
                &self.weights[v * k..(v + 1) * k],
            );
            for c in 0..per {
                let pair = |i: usize| {
                    if i < k {
                        (f32::from(b[i]), w[i])
                    } else {
                        (0.0, 0.0)
                    }
                };
                let ((b0, w0), (b1, w1)) = (pair(2 * c), pair(2 * c + 1));
                out.push([b0, w0, b1, w1]);
            }
        }
        out
    }
}

/// Reduces the influences of one primitive instance.
pub fn reduce_primitive(
    model: &Model,
    node: usize,
    primitive: usize,
    max: usize,
) -> Result<PrimitiveWeights> {
    let n = &model.nodes[node];
    let (Some(mesh), Some(skin)) = (n.mesh, n.skin) else {
        return Err(Error::invalid(
            format!("nodes[{node}]"),
            "not a skinned mesh node",
        ));
    };
    let path = format!("meshes[{mesh}].primitives[{primitive}]");
    if !(1..=MAX_INFLUENCES).contains(&max) {
        return Err(Error::invalid(
            "",
            format!("max influences must be 1 to {MAX_INFLUENCES}, got {max}"),
        ));
    }
    let prim = &model.meshes[mesh].primitives[primitive];
    let Some(inf) = &prim.influences else {
        return Err(Error::invalid(&path, "has no JOINTS_0/WEIGHTS_0"));
    };
    let vertices = prim.vertex_count();
    let mut bones = vec![0u16; vertices * max];
    let mut weights = vec![0f32; vertices * max];
    let mut dropped_per_vertex = vec![0f32; vertices];
    let (mut dropped_max, mut dropped_sum) = (0.0f64, 0.0f64);
    for v in 0..vertices {
        let (js, ws) = inf.vertex(v);
        let dropped = reduce(
            js,
            ws,
            max,
            &mut bones[v * max..(v + 1) * max],
            &mut weights[v * max..(v + 1) * max],
        )
        .ok_or_else(|| {
            Error::invalid(
                format!("{path}.attributes.WEIGHTS_0"),
                format!(
                    "vertex {v} of mesh `{}` has no positive weight",
                    model.meshes[mesh].name
                ),
            )
        })?;
        dropped_max = dropped_max.max(dropped);
        dropped_sum += dropped;
        dropped_per_vertex[v] = dropped as f32;
    }
    Ok(PrimitiveWeights {
        node,
        mesh,
        primitive,
        skin,
        influences: max,
        bones,
        weights,
        dropped: dropped_per_vertex,
        dropped_max,
        dropped_mean: if vertices > 0 {
            dropped_sum / vertices as f64
        } else {
            0.0
        },
    })
}

/// Every skinned primitive instance of the model (nodes with a mesh and a
/// skin, primitives with influences), in node then primitive order.
pub fn skinned_primitives(model: &Model) -> Vec<(usize, usize)> {
    model
        .skinned_nodes()
        .flat_map(|n| {
            let mesh = &model.meshes[model.nodes[n].mesh.unwrap_or_default()];
            mesh.primitives
                .iter()
                .enumerate()
                .filter(|(_, p)| p.influences.is_some())
                .map(move |(p, _)| (n, p))
        })
        .collect()
}

/// The largest distance, over every row of `texture` (the bone texture of
/// the primitive's skin), between skinning a vertex with all its influences
/// and with the reduced ones: the position error truncation causes, in the
/// texture's model space. Only vertices that lost weight are evaluated.
pub fn truncation_error(model: &Model, reduced: &PrimitiveWeights, texture: &BoneTexture) -> f64 {
    let prim = &model.meshes[reduced.mesh].primitives[reduced.primitive];
    let Some(influences) = &prim.influences else {
        return 0.0;
    };
    let lossy: Vec<usize> = (0..prim.vertex_count())
        .filter(|&v| reduced.dropped[v] > 0.0)
        .collect();
    if lossy.is_empty() {
        return 0.0;
    }
    let k = reduced.influences;
    let joints = model.skins[reduced.skin].joints.len();
    let mut mats = vec![DMat4::IDENTITY; joints];
    let mut worst = 0.0f64;
    for row in 0..texture.height {
        for (j, m) in mats.iter_mut().enumerate() {
            *m = texture.matrix(row, j).as_dmat4();
        }
        for &v in &lossy {
            let p = prim.positions[v].as_dvec3();
            let (js, ws) = influences.vertex(v);
            let full = crate::eval::skin::skin_point(js, ws, &mats, p);
            let range = v * k..(v + 1) * k;
            let cut = crate::eval::skin::skin_point(
                &reduced.bones[range.clone()],
                &reduced.weights[range],
                &mats,
                p,
            );
            worst = worst.max(full.distance(cut));
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight influences: bones 10..17 with weights 8, 7, ..., 1 (sum 36).
    fn eight() -> ([u16; 8], [f32; 8]) {
        (
            [10, 11, 12, 13, 14, 15, 16, 17],
            [8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0],
        )
    }

    #[test]
    fn eight_influences_reduce_to_six_four_and_one() {
        let (j, w) = eight();
        let mut b = [0u16; 8];
        let mut o = [0f32; 8];
        // Six: keep 8..3 (sum 33), drop 3/36.
        let d = reduce(&j, &w, 6, &mut b, &mut o).unwrap();
        assert_eq!(&b[..6], &[10, 11, 12, 13, 14, 15]);
        for (got, want) in o[..6].iter().zip([8.0, 7.0, 6.0, 5.0, 4.0, 3.0]) {
            assert!((f64::from(*got) - want / 33.0).abs() < 1e-7);
        }
        assert!((d - 3.0 / 36.0).abs() < 1e-12);
        assert!((o[..6].iter().map(|x| f64::from(*x)).sum::<f64>() - 1.0).abs() < 1e-6);
        // Four: 8, 7, 6, 5 (sum 26).
        let d = reduce(&j, &w, 4, &mut b, &mut o).unwrap();
        assert_eq!(&b[..4], &[10, 11, 12, 13]);
        assert!((f64::from(o[0]) - 8.0 / 26.0).abs() < 1e-7);
        assert!((d - 10.0 / 36.0).abs() < 1e-12);
        // One: the strongest, weight 1.
        let d = reduce(&j, &w, 1, &mut b, &mut o).unwrap();
        assert_eq!((b[0], o[0]), (10, 1.0));
        assert!((d - 28.0 / 36.0).abs() < 1e-12);
    }

    #[test]
    fn ties_prefer_the_lower_bone_and_duplicates_merge() {
        let mut b = [0u16; 4];
        let mut o = [0f32; 4];
        // Bones 9, 3, 5 all at 0.25 plus bone 7 at 0.25: keep two -> 3 and 5.
        reduce(&[9, 3, 5, 7], &[0.25, 0.25, 0.25, 0.25], 2, &mut b, &mut o).unwrap();
        assert_eq!(&b[..2], &[3, 5]);
        assert_eq!(&o[..2], &[0.5, 0.5]);
        assert_eq!(&b[2..], &[0, 0], "unused pairs are (0, 0)");
        // Joint 4 listed twice (0.3 + 0.3) beats joint 1 at 0.4.
        reduce(&[1, 4, 4, 0], &[0.4, 0.3, 0.3, 0.0], 1, &mut b, &mut o).unwrap();
        assert_eq!((b[0], o[0]), (4, 1.0));
    }

    #[test]
    fn nothing_dropped_is_exactly_zero() {
        // Summed in the given order and strongest first, these five weights
        // round differently: the difference was -1.5e-16, a negative
        // fraction that a container reader rightly refuses.
        let w = [9.168312e-9, 8.2612e-9, 1.879221, 4.210136e-8, 45.090862];
        let mut b = [0u16; 6];
        let mut o = [0f32; 6];
        assert_eq!(reduce(&[0, 1, 2, 3, 4], &w, 6, &mut b, &mut o), Some(0.0));
        // A dropped weight far below the others' rounding never goes negative.
        let w = [1.0, 1e-30, 0.3];
        let d = reduce(&[0, 1, 2], &w, 2, &mut b, &mut o).unwrap();
        assert!((0.0..1e-15).contains(&d), "{d}");
    }

    #[test]
    fn all_zero_vertices_are_reported() {
        let mut b = [0u16; 4];
        let mut o = [0f32; 4];
        assert_eq!(reduce(&[0, 1, 2, 3], &[0.0; 4], 4, &mut b, &mut o), None);
    }

    #[test]
    fn channels_pack_two_pairs_each() {
        let w = PrimitiveWeights {
            node: 0,
            mesh: 0,
            primitive: 0,
            skin: 0,
            influences: 3,
            bones: vec![4, 2, 9],
            weights: vec![0.5, 0.3, 0.2],
            dropped: vec![0.0],
            dropped_max: 0.0,
            dropped_mean: 0.0,
        };
        assert_eq!(w.channels(), [[4.0, 0.5, 2.0, 0.3], [9.0, 0.2, 0.0, 0.0]]);
        assert_eq!(channel_count(6), 3);
        assert_eq!(channel_count(8), 4);
        assert_eq!(channel_count(1), 1);
    }
}
