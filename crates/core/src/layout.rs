//! How a 4x4 matrix is laid out in RGBA pixels: the bone-matrix textures,
//! the anchor tracks and the runtime's texture views all share this leaf
//! (SPEC section 4, `formats/bone-matrix-texture.md`).
//!
//! With `m[row][col]` the matrix of joint `j`:
//! - [`MatrixLayout::Mat4`]: pixel `4j + c` holds column `c`:
//!   `(m[0][c], m[1][c], m[2][c], m[3][c])`.
//! - [`MatrixLayout::Mat3x4`]: pixel `3j + r` holds row `r`:
//!   `(m[r][0], m[r][1], m[r][2], m[r][3])`; the last row is `(0, 0, 0, 1)`.

use glam::{DMat4, Mat4, Vec4};

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
