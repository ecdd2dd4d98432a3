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

/// [`safe_normalize`] on the three components of one vertex of a block
/// held in columns: the same operations in the same order (`Vec3`'s are
/// plain f32 arithmetic), so the same bits, in a form loops over columns
/// vectorise across vertices.
#[inline(always)]
pub fn safe_normalize_components(v: [f32; 3]) -> [f32; 3] {
    let length = ((v[0] * v[0]) + (v[1] * v[1]) + (v[2] * v[2])).sqrt();
    v.map(|x| if length > 0.0 { x / length } else { x })
}

/// [`cofactor_normal`] then [`safe_normalize`] for the first `len`
/// vertices of a block, in columns: `upper[3 * r + c]` holds entry
/// (row `r`, column `c`) of each vertex's matrix, `normal[k]` the normal's
/// component `k`; the unit normals go to `out`. The same operations in the
/// same order as the two functions (`Vec3`'s are plain f32 arithmetic),
/// so the same bits, written as loops over the columns that the compiler
/// vectorises across vertices.
#[inline(always)]
pub fn cofactor_normals_columns<const N: usize>(
    upper: &[[f32; N]; 9],
    normal: &[[f32; N]; 3],
    len: usize,
    out: &mut [[f32; N]; 3],
) {
    let cross = |a: [f32; 3], b: [f32; 3]| {
        [
            a[1] * b[2] - b[1] * a[2],
            a[2] * b[0] - b[2] * a[0],
            a[0] * b[1] - b[0] * a[1],
        ]
    };
    for i in 0..len.min(N) {
        // The columns of the upper 3x3 (rows are `upper[3 * r..]`).
        let c: [[f32; 3]; 3] =
            std::array::from_fn(|k| std::array::from_fn(|r| upper[3 * r + k][i]));
        let (k0, k1, k2) = (cross(c[1], c[2]), cross(c[2], c[0]), cross(c[0], c[1]));
        let det = (c[0][0] * k0[0]) + (c[0][1] * k0[1]) + (c[0][2] * k0[2]);
        let sign = if det >= 0.0 { 1.0 } else { -1.0 };
        let n = [normal[0][i], normal[1][i], normal[2][i]];
        let v: [f32; 3] =
            std::array::from_fn(|k| ((k0[k] * n[0]) + (k1[k] * n[1]) + (k2[k] * n[2])) * sign);
        let unit = safe_normalize_components(v);
        for k in 0..3 {
            out[k][i] = unit[k];
        }
    }
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

    /// The column form gives every vertex the bits of `cofactor_normal`
    /// then `safe_normalize`: rotations, scales, mirrors, singular and
    /// zero matrices, zero normals.
    #[test]
    #[allow(clippy::needless_range_loop)] // `i` picks a vertex of every column
    fn cofactor_normals_in_columns_are_the_per_vertex_bits() {
        const N: usize = 16;
        let f = |k: usize| ((k * 37 + 11) % 23) as f32 * 0.173 - 1.9;
        for seed in 0..40usize {
            let mut upper = [[0.0f32; N]; 9];
            let mut normal = [[0.0f32; N]; 3];
            let mut matrices = [ZERO_ROWS; N];
            for i in 0..N {
                let m: [Vec4; 3] = std::array::from_fn(|r| {
                    let e = |c: usize| match (seed + i) % 5 {
                        0 => 0.0,                      // the zero matrix
                        1 if r < 2 => f(seed + i + c), // two equal rows: singular
                        _ => f(seed * 7 + i * 5 + r * 3 + c),
                    };
                    Vec4::new(e(0), e(1), e(2), e(3))
                });
                matrices[i] = m;
                for r in 0..3 {
                    for c in 0..3 {
                        upper[3 * r + c][i] = m[r][c];
                    }
                }
                for k in 0..3 {
                    normal[k][i] = if (seed + i) % 7 == 3 {
                        0.0
                    } else {
                        f(seed + i * 3 + k)
                    };
                }
            }
            let mut out = [[0.0f32; N]; 3];
            cofactor_normals_columns(&upper, &normal, N - 1, &mut out);
            for i in 0..N - 1 {
                let n = Vec3::new(normal[0][i], normal[1][i], normal[2][i]);
                let want = safe_normalize(cofactor_normal(&matrices[i], n));
                for k in 0..3 {
                    assert_eq!(
                        out[k][i].to_bits(),
                        want[k].to_bits(),
                        "seed {seed} vertex {i}"
                    );
                }
            }
        }
    }

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
