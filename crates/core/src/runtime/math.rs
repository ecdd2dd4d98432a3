//! f32 helpers shared by both runtime paths, in the shaders' own order of
//! operations: 3x4 affine matrices as three row vectors, the cofactor form
//! of the normal matrix, `a + (b - a) * t` lerps, guarded normalisation.

use glam::{Vec3, Vec4};

/// A 3x4 affine matrix as its three rows `(x, y, z, translation)`; the
/// implied fourth row is `(0, 0, 0, 1)`.
pub type Rows3x4 = [Vec4; 3];

/// The zero matrix (the start of a weighted sum).
pub const ZERO_ROWS: Rows3x4 = [Vec4::ZERO; 3];

/// `acc + m * w`, row by row.
#[inline(always)]
pub fn add_weighted(acc: &mut Rows3x4, m: &Rows3x4, w: f32) {
    for (a, r) in acc.iter_mut().zip(m) {
        *a += *r * w;
    }
}

/// `m * (p, 1)`: a point through the affine matrix.
#[inline]
pub fn transform_point(m: &Rows3x4, p: Vec3) -> Vec3 {
    let p4 = p.extend(1.0);
    Vec3::new(m[0].dot(p4), m[1].dot(p4), m[2].dot(p4))
}

/// The direction of the exact normal matrix (inverse transpose of the upper
/// 3x3) applied to `n`, without dividing by the determinant: the cofactor
/// matrix, whose rows are cross products of the columns, times the sign of
/// the determinant (`+1` when it is 0). Unnormalised.
#[inline]
pub fn cofactor_normal(m: &Rows3x4, n: Vec3) -> Vec3 {
    let (r0, r1, r2) = (m[0].truncate(), m[1].truncate(), m[2].truncate());
    let c0 = Vec3::new(r0.x, r1.x, r2.x);
    let c1 = Vec3::new(r0.y, r1.y, r2.y);
    let c2 = Vec3::new(r0.z, r1.z, r2.z);
    let k0 = c1.cross(c2);
    let k1 = c2.cross(c0);
    let k2 = c0.cross(c1);
    let det = c0.dot(k0);
    let sign = if det >= 0.0 { 1.0 } else { -1.0 };
    (k0 * n.x + k1 * n.y + k2 * n.z) * sign
}

/// `v / length(v)`, or `v` itself when its length is 0 (shaders guard the
/// same way: `normalize(0)` is undefined on GPUs).
#[inline]
pub fn safe_normalize(v: Vec3) -> Vec3 {
    let length = v.length();
    if length > 0.0 { v / length } else { v }
}

/// `a + (b - a) * t`, written out (not `mix`/`lerp`, whose rounding differs
/// between shading languages).
#[inline]
pub fn lerp3(a: Vec3, b: Vec3, t: f32) -> Vec3 {
    a + (b - a) * t
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DMat4, DQuat, DVec3};

    #[test]
    fn cofactor_normal_is_the_inverse_transpose_direction() {
        // Non-uniform scale, a rotation and a mirror (negative determinant).
        for scale in [DVec3::new(1.0, 3.0, 0.5), DVec3::new(-1.0, 2.0, 1.0)] {
            let m = DMat4::from_scale_rotation_translation(
                scale,
                DQuat::from_rotation_z(0.4) * DQuat::from_rotation_x(0.2),
                DVec3::new(1.0, 2.0, 3.0),
            );
            let rows = [m.row(0).as_vec4(), m.row(1).as_vec4(), m.row(2).as_vec4()];
            let n = DVec3::new(0.3, -0.5, 0.8).normalize();
            let exact = (crate::eval::skin::normal_matrix(&m) * n).normalize();
            let ours = safe_normalize(cofactor_normal(&rows, n.as_vec3()));
            assert!(ours.as_dvec3().distance(exact) < 1e-6, "{ours} vs {exact}");
            let p = transform_point(&rows, Vec3::new(1.0, -2.0, 0.5));
            let want = m.transform_point3(DVec3::new(1.0, -2.0, 0.5));
            assert!(p.as_dvec3().distance(want) < 1e-5);
        }
        assert_eq!(safe_normalize(Vec3::ZERO), Vec3::ZERO);
        assert_eq!(lerp3(Vec3::X, Vec3::Y, 0.25), Vec3::new(0.75, 0.25, 0.0));
    }
}
