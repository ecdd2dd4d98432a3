//! The per-model work budget: before anything is baked, estimate from the
//! imported [`Model`] and the plan (timeline rows, which outputs) how much
//! evaluation work, output and memory the bake will take, and refuse a model
//! over the [`Budget`] with an error naming the model, the budget and the
//! numbers, instead of running for hours or aborting on a failed allocation.
//!
//! Import limits bound each object of a file; this bounds their products
//! (vertices times rows times streams, instances times joints times rows,
//! ...), which a small file can make enormous. The estimates are upper
//! bounds of the same order as the real figures, computed in one pass over
//! the model with saturating arithmetic; they depend only on the model and
//! the plan, so a model is refused or accepted the same way on every machine.
//! Defaults and errors are documented in `docs/limits.md`.

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::model::Model;

/// What a bake will produce, as far as the budget needs to know.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Timeline rows (sampled frames over all clips).
    pub rows: usize,
    /// Bone-matrix textures, if baked.
    pub bones: Option<BonesPlan>,
    /// Vertex animation textures, if baked.
    pub vat: Option<VatPlan>,
    /// Whether a weights mesh (skinned vertices with joints and weights) is
    /// written.
    pub weights: bool,
    /// Number of anchor (socket) tracks baked.
    pub anchors: usize,
}

/// The bone-matrix textures a bake writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BonesPlan {
    /// Pixels per joint per row (4 for `mat4`, 3 for `mat3x4`).
    pub pixels_per_joint: usize,
    /// Joints of each bone texture (one entry per texture the bake makes;
    /// from the bake's bone sets when known, else [`BonesPlan::per_skin`]).
    pub texture_joints: Vec<usize>,
}

impl BonesPlan {
    /// One texture per distinct skin used by a skinned mesh instance (what
    /// identical instances share); instances that cannot share one add
    /// textures, so pass the bake's own bone sets when they are at hand.
    pub fn per_skin(model: &Model, pixels_per_joint: usize) -> Self {
        let skins: BTreeSet<usize> = model
            .skinned_nodes()
            .filter_map(|n| model.nodes[n].skin)
            .collect();
        Self {
            pixels_per_joint,
            texture_joints: skins.iter().map(|&s| model.skins[s].joints.len()).collect(),
        }
    }
}

/// The vertex animation textures a bake writes: one texel per vertex per row
/// for positions, and as many again for each of normals and tangents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VatPlan {
    /// Whether normals are baked.
    pub normals: bool,
    /// Whether tangents are baked.
    pub tangents: bool,
    /// Bytes per texel in the written file (16 for RGBA f32, 8 for RGBA f16
    /// or 16-bit PNG).
    pub bytes_per_texel: usize,
}

/// Estimated cost of baking one model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Estimate {
    /// Evaluations: node transforms and channel samples per row, joint
    /// matrices per row, and per VAT vertex per row one evaluation per
    /// influence and per morph target per stream.
    pub evaluations: u64,
    /// Bytes written (textures, tracks and meshes, before compression).
    pub output_bytes: u64,
    /// Peak memory: the model's decoded data plus every output held in
    /// memory as 32-bit floats.
    pub memory_bytes: u64,
}

/// Largest cost of baking one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Most evaluations (see [`Estimate::evaluations`]).
    pub max_evaluations: u64,
    /// Most bytes written.
    pub max_output_bytes: u64,
    /// Most memory held at once.
    pub max_memory_bytes: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            max_evaluations: 1 << 34,
            max_output_bytes: 8 << 30,
            max_memory_bytes: 4 << 30,
        }
    }
}

/// Bytes of one RGBA f32 texel, as textures are held in memory.
const TEXEL_IN_MEMORY: u64 = 16;
/// Bytes of one anchor matrix per row (16 f32).
const ANCHOR_BYTES: u64 = 64;

fn sat(a: usize) -> u64 {
    a as u64
}

/// Vertex data of one primitive in memory: position, normal, tangent, each
/// texture coordinate set, the influence slots, indices and morph deltas.
fn primitive_bytes(p: &crate::model::Primitive) -> u64 {
    let v = sat(p.vertex_count());
    let per_vertex = 12
        + 12 * u64::from(p.normals.is_some())
        + 16 * u64::from(p.tangents.is_some())
        + 8 * sat(p.tex_coords.len())
        + 6 * sat(p.influences.as_ref().map_or(0, |i| i.per_vertex))
        + 36 * sat(p.morph_targets.len());
    v.saturating_mul(per_vertex)
        .saturating_add(4 * sat(p.indices.as_ref().map_or(0, Vec::len)))
}

/// The model's decoded data in memory, approximately.
fn model_bytes(model: &Model) -> u64 {
    let meshes: u64 = model
        .meshes
        .iter()
        .flat_map(|m| &m.primitives)
        .map(primitive_bytes)
        .fold(0, u64::saturating_add);
    let clips: u64 = model
        .clips
        .iter()
        .flat_map(|c| &c.channels)
        .map(|ch| 4 * sat(ch.times.len() + ch.values.len()))
        .fold(0, u64::saturating_add);
    let nodes = 256 * sat(model.nodes.len());
    let skins: u64 = model.skins.iter().map(|s| 136 * sat(s.joints.len())).sum();
    meshes
        .saturating_add(clips)
        .saturating_add(nodes)
        .saturating_add(skins)
}

/// Estimates the cost of baking `model` as `plan` says.
pub fn estimate(model: &Model, plan: &Plan) -> Estimate {
    let rows = sat(plan.rows);
    let channels: usize = model.clips.iter().map(|c| c.channels.len()).sum();
    // Every row poses every node and samples every channel (as the
    // timeline's own limit counts them).
    let mut evaluations = rows.saturating_mul(sat(model.nodes.len() + channels));
    let mut output = 0u64;
    let mut in_memory = 0u64;

    if let Some(bones) = &plan.bones {
        let joints: u64 = bones
            .texture_joints
            .iter()
            .map(|&j| sat(j))
            .fold(0, u64::saturating_add);
        evaluations = evaluations.saturating_add(rows.saturating_mul(joints));
        let texels = rows
            .saturating_mul(joints)
            .saturating_mul(sat(bones.pixels_per_joint));
        output = output.saturating_add(texels.saturating_mul(TEXEL_IN_MEMORY));
        in_memory = in_memory.saturating_add(texels.saturating_mul(TEXEL_IN_MEMORY));
    }

    // Every mesh instance: vertices, influence slots, morph targets.
    let instances = model.nodes.iter().filter_map(|n| n.mesh.map(|m| (n, m)));
    for (node, m) in instances {
        for p in &model.meshes[m].primitives {
            let v = sat(p.vertex_count());
            if let Some(vat) = &plan.vat {
                let streams = 1 + u64::from(vat.normals) + u64::from(vat.tangents);
                let slots = sat(p.influences.as_ref().map_or(0, |i| i.per_vertex));
                let per_vertex = slots
                    .saturating_add(sat(p.morph_targets.len()).saturating_mul(streams))
                    .saturating_add(streams);
                let vertex_rows = rows.saturating_mul(v);
                evaluations = evaluations.saturating_add(vertex_rows.saturating_mul(per_vertex));
                let texels = vertex_rows.saturating_mul(streams);
                output = output.saturating_add(texels.saturating_mul(sat(vat.bytes_per_texel)));
                in_memory = in_memory.saturating_add(texels.saturating_mul(TEXEL_IN_MEMORY));
            }
            if plan.weights && node.skin.is_some() {
                // The weights mesh is held whole and written.
                let bytes = primitive_bytes(p);
                output = output.saturating_add(bytes);
                in_memory = in_memory.saturating_add(bytes);
            }
        }
    }

    let anchors = rows
        .saturating_mul(sat(plan.anchors))
        .saturating_mul(ANCHOR_BYTES);
    evaluations = evaluations.saturating_add(rows.saturating_mul(sat(plan.anchors)));
    output = output.saturating_add(anchors);
    in_memory = in_memory.saturating_add(anchors);

    Estimate {
        evaluations,
        output_bytes: output,
        memory_bytes: model_bytes(model).saturating_add(in_memory),
    }
}

impl Budget {
    /// Refuses `estimate` (of the model named `model`) when it exceeds any
    /// part of the budget, with a [`Limit`](crate::ErrorKind::Limit) error
    /// naming the model, the budget and both numbers.
    pub fn check(&self, model: &str, estimate: &Estimate) -> Result<()> {
        let parts = [
            (
                "max_evaluations",
                "evaluations",
                estimate.evaluations,
                self.max_evaluations,
            ),
            (
                "max_output_bytes",
                "bytes of output",
                estimate.output_bytes,
                self.max_output_bytes,
            ),
            (
                "max_memory_bytes",
                "bytes of memory",
                estimate.memory_bytes,
                self.max_memory_bytes,
            ),
        ];
        for (name, what, found, limit) in parts {
            if found > limit {
                return Err(Error::limit(
                    "",
                    format!(
                        "model `{model}`: the bake would take about {found} {what}, more than the per-model budget {name} of {limit}"
                    ),
                )
                .with_hint("bake fewer clips or outputs, lower the fps, or drop VAT streams"));
            }
        }
        Ok(())
    }

    /// [`estimate`] then [`Budget::check`] for `model`.
    pub fn check_plan(&self, model: &Model, plan: &Plan) -> Result<Estimate> {
        let e = estimate(model, plan);
        self.check(&model.name, &e)?;
        Ok(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Mesh, Node, Primitive, PrimitiveMode, Transform};
    use glam::{DMat4, Vec3};

    /// One mesh of `vertices` vertices, instanced by `instances` nodes.
    fn model(vertices: usize, instances: usize) -> Model {
        let prim = Primitive {
            mode: PrimitiveMode::Triangles,
            positions: vec![Vec3::ZERO; vertices],
            normals: None,
            tangents: None,
            tex_coords: Vec::new(),
            indices: None,
            material: None,
            influences: None,
            morph_targets: Vec::new(),
        };
        let node = Node {
            name: "n".into(),
            parent: None,
            children: Vec::new(),
            rest: Transform::IDENTITY,
            rest_matrix: DMat4::IDENTITY,
            mesh: Some(0),
            skin: None,
            morph_weights: None,
        };
        Model {
            name: "m".into(),
            nodes: vec![node; instances],
            skins: Vec::new(),
            meshes: vec![Mesh {
                name: "mesh".into(),
                primitives: vec![prim],
                default_weights: Vec::new(),
            }],
            clips: Vec::new(),
            lods: Vec::new(),
            materials: Vec::new(),
            looks: Default::default(),
            topological_order: (0..instances).collect(),
        }
    }

    #[test]
    fn vat_cost_is_vertices_times_rows_times_streams() {
        let plan = Plan {
            rows: 100,
            vat: Some(VatPlan {
                normals: true,
                tangents: false,
                bytes_per_texel: 8,
            }),
            ..Plan::default()
        };
        let e = estimate(&model(1000, 3), &plan);
        // 3 instances x 1000 vertices x 100 rows x 2 streams x 8 bytes.
        assert_eq!(e.output_bytes, 3 * 1000 * 100 * 2 * 8);
        // Poses: 100 rows x 3 nodes; vertices: 2 streams each.
        assert_eq!(e.evaluations, 100 * 3 + 3 * 1000 * 100 * 2);
        // Held as f32 RGBA: 16 bytes per texel, plus the model's 12 bytes
        // per vertex and nodes.
        assert_eq!(
            e.memory_bytes,
            3 * 1000 * 100 * 2 * 16 + 1000 * 12 + 3 * 256
        );
    }

    #[test]
    fn over_budget_names_the_model_the_budget_and_the_numbers() {
        let plan = Plan {
            rows: 1 << 20,
            vat: Some(VatPlan {
                normals: true,
                tangents: true,
                bytes_per_texel: 16,
            }),
            ..Plan::default()
        };
        let m = model(1 << 16, 1);
        let e = Budget::default().check_plan(&m, &plan).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Limit);
        assert!(
            e.message.starts_with(&format!(
                "model `m`: the bake would take about {} evaluations, more than the per-model budget max_evaluations of {}",
                (1u64 << 20) + (1u64 << 36) * 3,
                1u64 << 34
            )),
            "{e}"
        );
        let small = Plan { rows: 10, ..plan };
        Budget::default().check_plan(&m, &small).unwrap();
        let tight = Budget {
            max_output_bytes: 1000,
            ..Budget::default()
        };
        let e = tight.check_plan(&m, &small).unwrap_err();
        assert!(e.message.contains("max_output_bytes of 1000"), "{e}");
    }

    #[test]
    fn anchors_and_bones_count_rows() {
        let plan = Plan {
            rows: 1000,
            bones: Some(BonesPlan {
                pixels_per_joint: 4,
                texture_joints: vec![50, 20],
            }),
            anchors: 65_536,
            ..Plan::default()
        };
        let e = estimate(&model(3, 1), &plan);
        assert_eq!(e.output_bytes, 1000 * 70 * 4 * 16 + 1000 * 65_536 * 64);
    }
}
