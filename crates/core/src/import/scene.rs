//! Nodes, the hierarchy, and skins.

use glam::{DMat4, DQuat, DVec3};
use gltf::accessor::{DataType, Dimensions};

use super::accessor::{AccessorReader, Allowed};
use crate::error::{Error, Result};
use crate::model::{Mesh, Node, Skin, Transform};

fn finite_matrix(m: &DMat4) -> bool {
    m.to_cols_array().iter().all(|v| v.is_finite())
}

fn dvec3(v: [f32; 3]) -> DVec3 {
    DVec3::new(f64::from(v[0]), f64::from(v[1]), f64::from(v[2]))
}

/// A node's rest transform (TRS; a `matrix` decomposed) and its rest
/// matrix, every value finite and the rotation a unit quaternion.
fn rest_transform(n: &gltf::Node<'_>, path: &str) -> Result<(Transform, DMat4)> {
    Ok(match n.transform() {
        gltf::scene::Transform::Matrix { matrix } => {
            let m = DMat4::from_cols_array_2d(&matrix.map(|c| c.map(f64::from)));
            if !finite_matrix(&m) {
                return Err(Error::invalid(
                    format!("{path}.matrix"),
                    "matrix holds a value that is not a finite number (too large for 32-bit floats)",
                ));
            }
            let (scale, rotation, translation) = m.to_scale_rotation_translation();
            let rotation = if rotation.is_finite() && rotation.length() > 0.0 {
                rotation.normalize()
            } else {
                DQuat::IDENTITY
            };
            (
                Transform {
                    translation,
                    rotation,
                    scale,
                },
                m,
            )
        }
        gltf::scene::Transform::Decomposed {
            translation,
            rotation,
            scale,
        } => {
            let q = DQuat::from_xyzw(
                f64::from(rotation[0]),
                f64::from(rotation[1]),
                f64::from(rotation[2]),
                f64::from(rotation[3]),
            );
            let t = dvec3(translation);
            let s = dvec3(scale);
            for (field, finite) in [
                ("translation", t.is_finite()),
                ("rotation", q.is_finite()),
                ("scale", s.is_finite()),
            ] {
                if !finite {
                    return Err(Error::invalid(
                        format!("{path}.{field}"),
                        "holds a value that is not a finite number (too large for 32-bit floats)",
                    ));
                }
            }
            if q.length() < 1e-6 {
                return Err(Error::invalid(
                    format!("{path}.rotation"),
                    "rotation is a zero quaternion (it must be a unit quaternion)",
                ));
            }
            let rest = Transform {
                translation: t,
                rotation: q.normalize(),
                scale: s,
            };
            (rest, rest.to_matrix())
        }
    })
}

/// Builds all nodes and a parents-first order, rejecting cycles, shared
/// children, non-finite transforms and morph weight counts that do not match
/// the mesh. Every mesh instance's morph weights are charged to the reader's
/// budget (the pose of every frame holds them).
pub(super) fn build_nodes(
    doc: &gltf::Document,
    meshes: &[Mesh],
    reader: &AccessorReader<'_>,
) -> Result<(Vec<Node>, Vec<usize>)> {
    let count = doc.nodes().len();
    let mut nodes = Vec::with_capacity(count);
    let mut parent: Vec<Option<usize>> = vec![None; count];
    for n in doc.nodes() {
        let i = n.index();
        let path = format!("nodes[{i}]");
        let (rest, rest_matrix) = rest_transform(&n, &path)?;
        // After the finiteness checks, which name the field.
        check_matrix_or_trs(&doc.as_json().nodes[i], &path)?;
        let mut children = Vec::new();
        for c in n.children() {
            let c = c.index();
            if c == i {
                return Err(Error::invalid(
                    format!("{path}.children"),
                    "node is its own child (a cycle)",
                ));
            }
            if let Some(p) = parent[c] {
                return Err(Error::invalid(
                    format!("{path}.children"),
                    format!(
                        "node {c} is already a child of node {p}; a node may have only one parent"
                    ),
                ));
            }
            parent[c] = Some(i);
            children.push(c);
        }
        let mesh = n.mesh().map(|m| m.index());
        if let Some(m) = mesh {
            reader.charge(meshes[m].default_weights.len(), &format!("{path}.mesh"))?;
        }
        let morph_weights = n.weights().map(<[f32]>::to_vec);
        if let Some(w) = &morph_weights
            && let Some(k) = w.iter().position(|v| !v.is_finite())
        {
            return Err(Error::invalid(
                format!("{path}.weights"),
                format!("weight {k} is not a finite number ({})", w[k]),
            ));
        }
        if let (Some(w), Some(m)) = (&morph_weights, mesh) {
            let targets = meshes[m].default_weights.len();
            if w.len() != targets {
                return Err(Error::invalid(
                    format!("{path}.weights"),
                    format!(
                        "{} weights for a mesh with {targets} morph targets",
                        w.len()
                    ),
                ));
            }
        }
        nodes.push(Node {
            name: n.name().map_or_else(|| format!("node{i}"), str::to_owned),
            parent: None,
            children,
            rest,
            rest_matrix,
            mesh,
            skin: n.skin().map(|s| s.index()),
            morph_weights,
        });
    }
    for (node, p) in nodes.iter_mut().zip(&parent) {
        node.parent = *p;
    }

    // Parents-first order by an explicit stack (hierarchies can be very deep).
    let mut order = Vec::with_capacity(count);
    let mut stack: Vec<usize> = (0..count).rev().filter(|&i| parent[i].is_none()).collect();
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(nodes[i].children.iter().rev());
    }
    if order.len() != count {
        let mut seen = vec![false; count];
        for &i in &order {
            seen[i] = true;
        }
        // Every node not reached from a root lies on or below a cycle; walk
        // up from one to find a node of the cycle itself.
        let mut stuck = seen.iter().position(|s| !s).unwrap_or(0);
        let mut steps = 0;
        while let Some(p) = parent[stuck] {
            if steps > count {
                break;
            }
            stuck = p;
            steps += 1;
        }
        return Err(Error::invalid(
            format!("nodes[{stuck}].children"),
            format!(
                "node hierarchy has a cycle: nodes[{stuck}] is its own ancestor ({} nodes are not reachable from a root)",
                count - order.len()
            ),
        )
        .with_hint("each node may appear in the children of at most one node, and never below itself"));
    }
    Ok((nodes, order))
}

/// A node gives either `matrix` or TRS, never both (glTF 2.0, section
/// 3.5.3; the Khronos validator's `NODE_MATRIX_TRS`).
fn check_matrix_or_trs(node: &gltf::json::Node, path: &str) -> Result<()> {
    if node.matrix.is_none() {
        return Ok(());
    }
    let trs = [
        ("translation", node.translation.is_some()),
        ("rotation", node.rotation.is_some()),
        ("scale", node.scale.is_some()),
    ];
    match trs.iter().find(|(_, present)| *present) {
        Some((field, _)) => Err(Error::invalid(
            format!("{path}.matrix"),
            format!(
                "node has both `matrix` and `{field}`; glTF 2.0 allows a matrix or TRS, not both"
            ),
        )
        .with_hint("re-export the model with a conforming exporter")),
        None => Ok(()),
    }
}

/// Refuses a joint listed twice in one skin (glTF 2.0: the joints of a skin
/// are unique). Sorts a copy, so it is `n log n` however many joints.
fn check_unique_joints(joints: &[usize], path: &str) -> Result<()> {
    let mut sorted: Vec<(usize, usize)> = joints.iter().enumerate().map(|(k, &n)| (n, k)).collect();
    sorted.sort_unstable();
    if let Some(pair) = sorted.windows(2).find(|p| p[0].0 == p[1].0) {
        let (node, first) = pair[0];
        let second = pair[1].1;
        return Err(Error::invalid(
            format!("{path}.joints[{second}]"),
            format!(
                "nodes[{node}] is already joint {first} of this skin; a skin lists each joint once"
            ),
        ));
    }
    Ok(())
}

/// Checks an inverse bind matrix: the last row is (0, 0, 0, 1) (the
/// validator's `ACCESSOR_INVALID_IBM`) and the matrix is invertible (a zero
/// or singular matrix cannot be the inverse of a bind pose).
fn check_inverse_bind(m: &DMat4, path: &str, joint: usize) -> Result<()> {
    const EPS: f64 = 1e-5;
    let row = m.row(3);
    if row.x.abs() > EPS || row.y.abs() > EPS || row.z.abs() > EPS || (row.w - 1.0).abs() > EPS {
        return Err(Error::invalid(
            path,
            format!(
                "matrix {joint} has last row ({}, {}, {}, {}); an inverse bind matrix is affine, its last row (0, 0, 0, 1)",
                row.x, row.y, row.z, row.w
            ),
        ));
    }
    // The determinant of the 3x3 part relative to its column lengths: 1 for
    // a rotation times any scale, 0 for a singular matrix, independent of
    // the model's units.
    let (x, y, z) = (
        m.x_axis.truncate(),
        m.y_axis.truncate(),
        m.z_axis.truncate(),
    );
    let lengths = x.length() * y.length() * z.length();
    let det = m.determinant();
    if !(lengths > 0.0 && (det / lengths).abs() > 1e-9) {
        return Err(Error::invalid(
            path,
            format!(
                "matrix {joint} is singular (determinant {det}); an inverse bind matrix must be invertible"
            ),
        ));
    }
    Ok(())
}

const IBM: Allowed = Allowed {
    types: &[DataType::F32],
    dims: &[Dimensions::Mat4],
};

/// Builds all skins with their inverse bind matrices (identity when absent).
pub(super) fn build_skins(doc: &gltf::Document, reader: &AccessorReader<'_>) -> Result<Vec<Skin>> {
    let mut skins = Vec::new();
    for s in doc.skins() {
        let path = format!("skins[{}]", s.index());
        let joints: Vec<usize> = s.joints().map(|j| j.index()).collect();
        if joints.is_empty() {
            return Err(Error::invalid(&path, "skin has no joints"));
        }
        if joints.len() > usize::from(u16::MAX) + 1 {
            return Err(Error::limit(
                &path,
                format!("{} joints, more than 65536", joints.len()),
            ));
        }
        check_unique_joints(&joints, &path)?;
        let inverse_binds = match s.inverse_bind_matrices() {
            None => vec![DMat4::IDENTITY; joints.len()],
            Some(acc) => {
                let ibm_path = format!("{path}.inverseBindMatrices");
                let values = reader.floats(&acc, &ibm_path, IBM)?;
                // The f64 matrices built from the decoded f32 ones.
                reader.charge_bytes(values.len() as u64 * 8, &ibm_path)?;
                if values.len() / 16 < joints.len() {
                    return Err(Error::invalid(
                        &ibm_path,
                        format!("{} matrices for {} joints", values.len() / 16, joints.len()),
                    ));
                }
                let matrices: Vec<DMat4> = values
                    .chunks_exact(16)
                    .take(joints.len())
                    .map(|c| {
                        let mut a = [0.0f64; 16];
                        for (d, s) in a.iter_mut().zip(c) {
                            *d = f64::from(*s);
                        }
                        DMat4::from_cols_array(&a)
                    })
                    .collect();
                for (j, m) in matrices.iter().enumerate() {
                    check_inverse_bind(m, &ibm_path, j)?;
                }
                matrices
            }
        };
        skins.push(Skin {
            name: s
                .name()
                .map_or_else(|| format!("skin{}", s.index()), str::to_owned),
            joints,
            inverse_binds,
            skeleton: s.skeleton().map(|n| n.index()),
        });
    }
    Ok(skins)
}

/// Checks that every skinned mesh instance only weights joints its skin has.
/// Each mesh is scanned once, however many nodes instance it.
pub(super) fn check_skinned_instances(
    nodes: &[Node],
    skins: &[Skin],
    meshes: &[Mesh],
) -> Result<()> {
    // Largest joint index each mesh weights (zero-weight slots were cleared
    // to joint 0 on import, so every stored index counts).
    let max_joint: Vec<Option<u16>> = meshes
        .iter()
        .map(|mesh| {
            mesh.primitives
                .iter()
                .filter_map(|p| p.influences.as_ref())
                .filter_map(|inf| inf.joints.iter().copied().max())
                .max()
        })
        .collect();
    for (i, node) in nodes.iter().enumerate() {
        let (Some(m), Some(s)) = (node.mesh, node.skin) else {
            continue;
        };
        let joint_count = skins[s].joints.len();
        if max_joint[m].is_none_or(|j| usize::from(j) < joint_count) {
            continue;
        }
        // Only now look for the first offending slot, to name it.
        for (p, prim) in meshes[m].primitives.iter().enumerate() {
            let Some(inf) = &prim.influences else {
                continue;
            };
            if let Some(slot) = inf
                .joints
                .iter()
                .position(|&j| usize::from(j) >= joint_count)
            {
                let (vertex, set) = (slot / inf.per_vertex, slot % inf.per_vertex / 4);
                return Err(Error::invalid(
                    format!("meshes[{m}].primitives[{p}].attributes.JOINTS_{set}"),
                    format!(
                        "vertex {vertex} uses joint {} but skins[{s}] (used by nodes[{i}]) has only {joint_count} joints",
                        inf.joints[slot]
                    ),
                ));
            }
        }
    }
    Ok(())
}
