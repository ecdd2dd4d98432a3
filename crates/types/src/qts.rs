//! The `qts` form of a skin matrix: a rotation quaternion, a translation
//! and one uniform scale, two RGBA texels per joint instead of four (or
//! three) for the matrix:
//!
//! - texel `2j`: the unit quaternion `(x, y, z, w)`, `w >= 0`;
//! - texel `2j + 1`: the translation `(tx, ty, tz)` and the scale `s`.
//!
//! A shader rebuilds the matrix `[s R(q) | t]` (with `q` normalised first,
//! so that half-float rounding of its components cannot scale the mesh) and
//! skins with the same linear blend as the matrix forms. A skin matrix with
//! non-uniform scale, shear or a reflection has no such form: [`encode`]
//! writes the nearest one it finds and [`entry_error`] measures what is
//! lost, so the bake can refuse the form with the figure.

use glam::{DMat3, DMat4, DQuat, DVec3, Mat4, Vec3, Vec4};

/// RGBA texels per joint.
pub const TEXELS_PER_JOINT: usize = 2;

/// The parts of a skin matrix in the `qts` form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Qts {
    /// Unit rotation, `w >= 0`.
    pub rotation: DQuat,
    /// Translation (the matrix's last column).
    pub translation: DVec3,
    /// Uniform scale, positive.
    pub scale: f64,
}

/// Splits `m` into rotation, translation and uniform scale: the scale is
/// the cube root of the upper 3x3's determinant (the volume it keeps), the
/// rotation that of the upper 3x3 divided by it. Exact (to rounding) for a
/// rotation times a uniform positive scale; for anything else the nearest
/// such matrix this finds, whose distance [`entry_error`] measures. A
/// determinant that is not positive (a reflection, a collapsed axis) keeps
/// the mean column length as the scale.
pub fn decompose(m: &DMat4) -> Qts {
    let a = DMat3::from_mat4(*m);
    let det = a.determinant();
    let scale = if det > 0.0 && det.is_finite() {
        det.cbrt()
    } else {
        (a.x_axis.length() + a.y_axis.length() + a.z_axis.length()) / 3.0
    };
    let unit = if scale > 0.0 && scale.is_finite() {
        a * (1.0 / scale)
    } else {
        DMat3::IDENTITY
    };
    let q = DQuat::from_mat3(&unit);
    let q = if q.length_squared() > 0.0 && q.is_finite() {
        q.normalize()
    } else {
        DQuat::IDENTITY
    };
    Qts {
        rotation: if q.w < 0.0 { -q } else { q },
        translation: m.w_axis.truncate(),
        scale,
    }
}

/// Writes `m` as two RGBA texels (8 floats) into `out`.
pub fn encode(m: &DMat4, out: &mut [f32]) {
    let p = decompose(m);
    let q = p.rotation.as_quat();
    let t = p.translation.as_vec3();
    out[..8].copy_from_slice(&[q.x, q.y, q.z, q.w, t.x, t.y, t.z, p.scale as f32]);
}

/// Rebuilds the matrix from its two texels in f32, step for step as the
/// shaders in `docs/shaders` do: normalise the quaternion, rotate, scale,
/// translate. All-zero texels give a zero 3x4 part.
pub fn decode(texels: &[f32]) -> Mat4 {
    let q = Vec4::from_slice(&texels[0..4]);
    // Zero texels (a joint past a folded block) decode to a zero 3x4
    // part, as with the matrix layouts, not to NaN.
    let d = q.dot(q);
    let q = if d > 0.0 {
        q * (1.0 / d.sqrt())
    } else {
        Vec4::ZERO
    };
    let (x, y, z, w) = (q.x, q.y, q.z, q.w);
    let s = texels[7];
    let c0 = Vec3::new(
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y + w * z),
        2.0 * (x * z - w * y),
    );
    let c1 = Vec3::new(
        2.0 * (x * y - w * z),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z + w * x),
    );
    let c2 = Vec3::new(
        2.0 * (x * z + w * y),
        2.0 * (y * z - w * x),
        1.0 - 2.0 * (x * x + y * y),
    );
    Mat4::from_cols(
        (c0 * s).extend(0.0),
        (c1 * s).extend(0.0),
        (c2 * s).extend(0.0),
        Vec4::new(texels[4], texels[5], texels[6], 1.0),
    )
}

/// The 16-bit normalised form (`Precision::Unorm16`): per texture, the
/// `[min, max]` of the second texel's channels (translation x, y, z and
/// scale) over every joint and row. The quaternion texel needs no range:
/// its components map from `[-1, 1]`.
pub type Range = [[f32; 4]; 2];

/// The largest sample of a 16-bit normalised channel.
pub const UNORM_MAX: f32 = 65535.0;

/// Rounds a value in `[0, 1]` to the nearest of the 65536 samples, given
/// back as `sample / 65535` (what a GPU reads from a UNORM texture).
fn unorm(v: f32) -> f32 {
    (v.clamp(0.0, 1.0) * UNORM_MAX).round() / UNORM_MAX
}

/// Maps a joint's two texels (as [`encode`] wrote them) in place to their
/// 16-bit normalised samples over `range`, each given as `sample / 65535`:
/// the quaternion's components from `[-1, 1]`, the translation and scale
/// from `range` (a channel whose range is empty stores 0).
pub fn to_unorm(texels: &mut [f32], range: &Range) {
    for v in &mut texels[0..4] {
        *v = unorm((*v + 1.0) * 0.5);
    }
    for (c, v) in texels[4..8].iter_mut().enumerate() {
        let (lo, hi) = (range[0][c], range[1][c]);
        *v = if hi > lo {
            unorm((*v - lo) / (hi - lo))
        } else {
            0.0
        };
    }
}

/// The texels [`decode`] takes from a joint's 16-bit normalised samples
/// (`raw`, each `sample / 65535`), step for step as the shaders do:
/// `q = raw * 2 - 1`, `(t, s) = min + raw * (max - min)`.
pub fn from_unorm(raw: &[f32], range: &Range) -> [f32; 8] {
    let mut out = [0.0; 8];
    for (o, &r) in out[0..4].iter_mut().zip(&raw[0..4]) {
        *o = r * 2.0 - 1.0;
    }
    for c in 0..4 {
        out[4 + c] = range[0][c] + raw[4 + c] * (range[1][c] - range[0][c]);
    }
    out
}

/// The largest difference between an entry of the upper 3x4 of `exact`
/// and of `decoded`: the unit a bone texture's recorded `max_error` uses.
pub fn entry_error(exact: &DMat4, decoded: &Mat4) -> f64 {
    let d = decoded.as_dmat4();
    (0..4)
        .flat_map(|c| (0..3).map(move |r| (c, r)))
        .map(|(c, r)| (exact.col(c)[r] - d.col(c)[r]).abs())
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(m: &DMat4) -> f64 {
        let mut px = [0.0; 8];
        encode(m, &mut px);
        entry_error(m, &decode(&px))
    }

    #[test]
    fn rotation_translation_and_uniform_scale_survive_to_f32_rounding() {
        // A rotation of 1 rad about a skew axis, scaled by 2.5, moved to
        // (3, -4, 12): every entry is at most 12 in size, so f32 rounding
        // (2^-24 relative) of the parts keeps each within a few 1e-6.
        let m = DMat4::from_scale_rotation_translation(
            DVec3::splat(2.5),
            DQuat::from_axis_angle(DVec3::new(1.0, 2.0, -0.5).normalize(), 1.0),
            DVec3::new(3.0, -4.0, 12.0),
        );
        let e = round_trip(&m);
        assert!(e < 4e-6, "error {e}");
        let p = decompose(&m);
        assert!((p.scale - 2.5).abs() < 1e-12 && p.rotation.w >= 0.0);
    }

    #[test]
    fn the_sign_of_the_quaternion_is_canonical() {
        // A half turn and a bit: from_mat3 may return either sign; the
        // stored one always has w >= 0.
        for angle in [0.1, 3.0, 3.2, 6.0] {
            let m = DMat4::from_quat(DQuat::from_rotation_y(angle));
            assert!(decompose(&m).rotation.w >= 0.0, "{angle}");
            assert!(round_trip(&m) < 1e-6, "{angle}");
        }
    }

    #[test]
    fn non_uniform_scale_is_measured_not_hidden() {
        // diag(1, 2, 1): the volume-keeping scale is 2^(1/3) = 1.2599, so
        // the y entry is off by 2 - 1.2599 = 0.7401 and x, z by 0.2599.
        let m = DMat4::from_scale(DVec3::new(1.0, 2.0, 1.0));
        let e = round_trip(&m);
        assert!((e - (2.0 - 2f64.cbrt())).abs() < 1e-6, "error {e}");
        // A shear: x' = x + 0.5 y. Determinant 1, so scale 1 and the
        // nearest rotation cannot produce the 0.5 entry.
        let mut shear = DMat4::IDENTITY;
        shear.y_axis.x = 0.5;
        assert!(round_trip(&shear) > 0.2);
        // A mirror: determinant -1; no rotation turns x into -x.
        let mirror = DMat4::from_scale(DVec3::new(-1.0, 1.0, 1.0));
        assert!(round_trip(&mirror) > 0.9);
    }

    #[test]
    fn decoding_normalises_a_rounded_quaternion() {
        // Half-float rounding leaves |q| != 1; an unnormalised decode would
        // scale the mesh by |q|^2.
        let q = DQuat::from_axis_angle(DVec3::new(0.3, 0.9, 0.1).normalize(), 0.7);
        let m = DMat4::from_quat(q);
        let mut px = [0.0f32; 8];
        encode(&m, &mut px);
        for v in &mut px[..4] {
            *v *= 1.001;
        }
        assert!(entry_error(&m, &decode(&px)) < 1e-6);
        // Zero texels: the 3x4 part is zero, as with the matrix layouts.
        let zero = decode(&[0.0; 8]);
        assert!((0..3).all(|r| zero.row(r) == Vec4::ZERO), "{zero:?}");
    }

    #[test]
    fn sixteen_bit_normalised_parts_round_trip_within_their_step() {
        // A quaternion component moves by at most half a step of 2/65535
        // (1.5e-5); a translation in a range of 20 by at most 20/131070.
        let m = DMat4::from_scale_rotation_translation(
            DVec3::splat(1.5),
            DQuat::from_axis_angle(DVec3::new(0.2, -1.0, 0.4).normalize(), 2.0),
            DVec3::new(-7.0, 3.0, 9.5),
        );
        let mut px = [0.0f32; 8];
        encode(&m, &mut px);
        let range: Range = [[-10.0, -10.0, -10.0, 1.0], [10.0, 10.0, 10.0, 2.0]];
        let mut q = px;
        to_unorm(&mut q, &range);
        let back = from_unorm(&q, &range);
        for c in 0..4 {
            assert!((back[c] - px[c]).abs() <= 1.0 / 65535.0 + 1e-7, "{c}");
            assert!(
                (back[4 + c] - px[4 + c]).abs() <= 20.0 / 131070.0 + 1e-6,
                "{c}"
            );
        }
        // Samples are whole numbers of 1/65535.
        assert!(
            q.iter()
                .all(|v| (v * 65535.0 - (v * 65535.0).round()).abs() < 1e-3)
        );
        // An empty range (a constant channel) stores 0 and decodes exactly.
        let flat: Range = [[-7.0, 3.0, 9.5, 1.5], [-7.0, 3.0, 9.5, 1.5]];
        let mut q = px;
        to_unorm(&mut q, &flat);
        assert_eq!(&q[4..], &[0.0; 4]);
        assert_eq!(&from_unorm(&q, &flat)[4..], &[-7.0, 3.0, 9.5, 1.5]);
    }
}
