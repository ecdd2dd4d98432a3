//! Synthetic models of any size, for benchmarks and scaling tests: a chain of
//! joints, a strip of vertices each weighted to four neighbouring joints,
//! and one clip rotating every joint. Built straight as a [`Model`]; nothing
//! is read from disk.

use glam::{DMat4, DQuat, DVec3, Vec2, Vec3};

use crate::model::{
    Channel, Clip, Influences, Interpolation, Mesh, Model, Node, Primitive, PrimitiveMode,
    Property, Skin, Transform,
};

/// A skinned strip of `vertices` vertices over a chain of `joints` joints,
/// with one clip of `frames` frames at 30 fps (duration `(frames - 1) / 30`)
/// animating every joint's rotation with two keys. Every vertex has a normal
/// and four influences with distinct weights.
pub fn skinned_strip(vertices: usize, joints: usize, frames: usize) -> Model {
    let joints = joints.max(1);
    let mut nodes = Vec::with_capacity(joints + 1);
    for j in 0..joints {
        let rest = Transform {
            translation: DVec3::new(0.0, if j == 0 { 0.0 } else { 0.1 }, 0.0),
            rotation: DQuat::IDENTITY,
            scale: DVec3::ONE,
        };
        nodes.push(Node {
            name: format!("j{j}"),
            parent: j.checked_sub(1),
            children: if j + 1 < joints {
                vec![j + 1]
            } else {
                Vec::new()
            },
            rest,
            rest_matrix: rest.to_matrix(),
            mesh: None,
            skin: None,
            morph_weights: None,
        });
    }
    nodes.push(Node {
        name: "mesh".into(),
        parent: None,
        children: Vec::new(),
        rest: Transform::IDENTITY,
        rest_matrix: DMat4::IDENTITY,
        mesh: Some(0),
        skin: Some(0),
        morph_weights: None,
    });
    let inverse_binds = (0..joints)
        .map(|j| DMat4::from_translation(DVec3::new(0.0, -0.1 * j as f64, 0.0)))
        .collect();
    let mut positions = Vec::with_capacity(vertices);
    let mut normals = Vec::with_capacity(vertices);
    let mut influence_joints = Vec::with_capacity(vertices * 4);
    let mut weights = Vec::with_capacity(vertices * 4);
    let length = 0.1 * (joints - 1).max(1) as f32;
    for v in 0..vertices {
        let f = v as f32 / vertices.max(1) as f32;
        let angle = v as f32 * 0.37;
        positions.push(Vec3::new(0.2 * angle.cos(), f * length, 0.2 * angle.sin()));
        normals.push(Vec3::new(angle.cos(), 0.0, angle.sin()));
        let base = (f * (joints - 1) as f32) as usize;
        for k in 0..4 {
            influence_joints.push(((base + k) % joints) as u16);
        }
        weights.extend([0.4, 0.3, 0.2, 0.1]);
    }
    let duration = (frames.max(1) - 1) as f32 / 30.0;
    let half = DQuat::from_rotation_z(0.3);
    let channels = (0..joints)
        .map(|j| Channel {
            node: j,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: vec![0.0, duration.max(1e-3)],
            values: [DQuat::IDENTITY, half]
                .iter()
                .flat_map(|q| q.as_quat().to_array())
                .collect(),
            width: 4,
        })
        .collect();
    Model {
        name: format!("strip_{vertices}v_{joints}j_{frames}f"),
        topological_order: (0..=joints).collect(),
        nodes,
        skins: vec![Skin {
            name: "chain".into(),
            joints: (0..joints).collect(),
            inverse_binds,
            skeleton: Some(0),
        }],
        meshes: vec![Mesh {
            name: "strip".into(),
            primitives: vec![Primitive {
                mode: PrimitiveMode::Points,
                positions,
                normals: Some(normals),
                tangents: None,
                tex_coords: vec![vec![Vec2::ZERO; vertices]],
                indices: None,
                material: None,
                influences: Some(Influences {
                    per_vertex: 4,
                    joints: influence_joints,
                    weights,
                }),
                morph_targets: Vec::new(),
            }],
            default_weights: Vec::new(),
        }],
        clips: vec![Clip {
            name: "sway".into(),
            duration: f64::from(duration),
            channels,
        }],
        materials: Vec::new(),
    }
}

/// The VAT core workload of the benchmarks: every row of every primitive
/// of `baker`, positions (and normals where planned), one row at a time per
/// worker into that worker's buffers (a row's output stays in the core's
/// cache, as it does when an encoder consumes the row right away), on the
/// current rayon pool. Returns the vertex-frames computed.
pub fn vat_core_pass(baker: &crate::bake::vat::VatBaker<'_>) -> usize {
    use rayon::prelude::*;
    let mut done = 0;
    for (index, p) in baker.plan().primitives.iter().enumerate() {
        let width = p.layout.width;
        let normals = p.normals;
        (0..p.layout.height).into_par_iter().for_each_init(
            || (vec![0.0f32; width * 3], vec![0.0f32; width * 3]),
            |(pos, nrm), row| {
                baker.fill_row(index, row, pos, normals.then_some(&mut nrm[..]), None);
                std::hint::black_box((&pos[0], &nrm[0]));
            },
        );
        done += p.layout.vertices * p.layout.frames;
    }
    done
}
