//! Global matrices -> skin matrices (model space), and linear blend skinning.
//!
//! `skin_j = inverse(mesh_global) * joint_global_j * inverse_bind_j`
//! (SPEC section 3): it moves a bind-pose vertex to its animated position in
//! the space of the node that holds the mesh. World placement is never baked.

use glam::{DMat3, DMat4, DVec3};

use crate::error::{Error, Result};
use crate::model::{Model, Skin};

/// Inverse of the mesh node's global matrix, or an error when it is singular
/// (a zero scale on the mesh node or an ancestor).
pub fn inverse_mesh_global(globals: &[DMat4], mesh_node: usize) -> Result<DMat4> {
    let m = globals[mesh_node];
    let det = m.determinant();
    if !det.is_finite() || det.abs() < 1e-300 {
        return Err(Error::invalid(
            format!("nodes[{mesh_node}]"),
            "the skinned mesh node's global matrix is singular (zero scale), so model space is undefined",
        ));
    }
    Ok(m.inverse())
}

/// Writes the skin matrix of every joint of `skin` into `out` (one per joint).
pub fn skin_matrices(
    skin: &Skin,
    globals: &[DMat4],
    inverse_mesh_global: &DMat4,
    out: &mut [DMat4],
) {
    let identity = *inverse_mesh_global == DMat4::IDENTITY;
    for ((o, &joint), ibm) in out.iter_mut().zip(&skin.joints).zip(&skin.inverse_binds) {
        let joint_ibm = mul_affine(&globals[joint], ibm);
        *o = if identity {
            joint_ibm
        } else {
            mul_affine(inverse_mesh_global, &joint_ibm)
        };
    }
}

/// `a * b`, skipping the products with the zeros of the last row where both
/// are affine (last row exactly `0 0 0 1`, as glTF transforms are); the
/// full product otherwise. Equal to `a * b` but for the sign of zeros.
#[inline(always)]
pub fn mul_affine(a: &DMat4, b: &DMat4) -> DMat4 {
    // Bit tests, branch-free (a `-0.0` takes the full product: still exact).
    let affine = |m: &DMat4| {
        (m.x_axis.w.to_bits() | m.y_axis.w.to_bits() | m.z_axis.w.to_bits()) == 0
            && m.w_axis.w.to_bits() == 1f64.to_bits()
    };
    if !(affine(a) && affine(b)) {
        return *a * *b;
    }
    let (ax, ay, az) = (a.x_axis, a.y_axis, a.z_axis);
    let col = |c: glam::DVec4| ax * c.x + ay * c.y + az * c.z;
    DMat4::from_cols(
        col(b.x_axis),
        col(b.y_axis),
        col(b.z_axis),
        col(b.w_axis) + a.w_axis,
    )
}

/// Convenience: skin matrices of `skin` for the mesh on `mesh_node`.
pub fn skin_matrices_for(
    model: &Model,
    skin: usize,
    mesh_node: usize,
    globals: &[DMat4],
) -> Result<Vec<DMat4>> {
    let inv = inverse_mesh_global(globals, mesh_node)?;
    let skin = &model.skins[skin];
    let mut out = vec![DMat4::IDENTITY; skin.joints.len()];
    skin_matrices(skin, globals, &inv, &mut out);
    Ok(out)
}

/// Linear blend skinning of one point: `sum_i w_i * (M_i * p)` with the
/// weights renormalised to sum to 1. Zero weights are skipped.
pub fn skin_point(joints: &[u16], weights: &[f32], matrices: &[DMat4], p: DVec3) -> DVec3 {
    let total: f64 = weights.iter().map(|w| f64::from(*w)).sum();
    let mut acc = DVec3::ZERO;
    for (&j, &w) in joints.iter().zip(weights) {
        if w > 0.0 {
            acc += matrices[usize::from(j)].transform_point3(p) * (f64::from(w) / total);
        }
    }
    acc
}

/// The weight-blended matrix `sum_i w_i * M_i` (weights renormalised).
pub fn blend_matrices(joints: &[u16], weights: &[f32], matrices: &[DMat4]) -> DMat4 {
    let total: f64 = weights.iter().map(|w| f64::from(*w)).sum();
    let mut acc = DMat4::ZERO;
    for (&j, &w) in joints.iter().zip(weights) {
        if w > 0.0 {
            acc += matrices[usize::from(j)] * (f64::from(w) / total);
        }
    }
    acc
}

/// The exact normal matrix of a (blended) matrix: the inverse transpose of its
/// upper 3x3. Falls back to the upper 3x3 itself when that is singular.
pub fn normal_matrix(m: &DMat4) -> DMat3 {
    let upper = DMat3::from_mat4(*m);
    let det = upper.determinant();
    if det.abs() > 1e-300 && det.is_finite() {
        upper.inverse().transpose()
    } else {
        upper
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lbs_renormalises_weights() {
        let m = [
            DMat4::from_translation(DVec3::new(1.0, 0.0, 0.0)),
            DMat4::from_translation(DVec3::new(0.0, 2.0, 0.0)),
        ];
        // Weights 0.25 + 0.25 sum to 0.5; renormalised to 0.5 + 0.5.
        let p = skin_point(&[0, 1, 0, 0], &[0.25, 0.25, 0.0, 0.0], &m, DVec3::ZERO);
        assert!((p - DVec3::new(0.5, 1.0, 0.0)).length() < 1e-15);
        let b = blend_matrices(&[0, 1, 0, 0], &[0.25, 0.25, 0.0, 0.0], &m);
        assert!((b.transform_point3(DVec3::ZERO) - p).length() < 1e-15);
    }

    #[test]
    fn normal_matrix_is_inverse_transpose() {
        let m = DMat4::from_scale(DVec3::new(2.0, 1.0, 1.0));
        let n = normal_matrix(&m);
        // A normal on the diagonal of the x/y plane tilts towards y.
        let v = (n * DVec3::new(1.0, 1.0, 0.0)).normalize();
        let expected = DVec3::new(0.5, 1.0, 0.0).normalize();
        assert!((v - expected).length() < 1e-15);
    }
}
