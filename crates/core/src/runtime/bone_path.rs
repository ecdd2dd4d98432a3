//! CPU reference of the bone-matrix shader (SPEC sections 4 to 6): for each
//! active state row, the vertex's bone matrices are fetched at the frame row
//! and the next row, blended by the bone weights from the UV channels
//! (linear blend skinning), the vertex is skinned with both, the two results
//! are lerped by the row's fraction, and the rows are summed by blend
//! weight. Normals go through the cofactor (exact) normal matrix, are
//! normalised per frame, lerped, summed and normalised once more.
//!
//! Texture addressing (`formats/bone-matrix-texture.md`): joint `j` at row
//! `r` is texels `(p * j + i, r)` with `p = 4` (`mat4`: texel `i` is column
//! `i`) or `p = 3` (`mat3x4`: texel `i` is row `i`), placed by the texture's
//! fold ([`crate::fold`]): texel `(b * block_width + p * j + i, r mod
//! rows_per_block)` with `b = r div rows_per_block` (unfolded: `b = 0`).
//! The next row is `min(r + 1, rows - 1)`; the animation state never asks for a fraction
//! across a clip boundary (it splits loop wraps into two rows), and the
//! clamp keeps the fetch inside the texture. The next row is only fetched
//! when the fraction is positive (with a fraction of 0 the lerp returns the
//! first frame exactly either way).

use glam::{Vec3, Vec4};

use super::RuntimeVertex;
use super::math::{
    Rows3x4, ZERO_ROWS, add_weighted, cofactor_normal, safe_normalize, transform_point,
};
use super::rows::{RowValues, blend_rows};
use super::state::GpuState;
use crate::fold::Fold;
use crate::layout::MatrixLayout;

/// A bone-matrix texture as a shader sees it: RGBA `f32` texels, row-major,
/// row 0 first (half-float textures widened to `f32`, as a GPU samples them).
#[derive(Debug, Clone, Copy)]
pub struct BoneTextureView<'a> {
    /// Width in texels (joints times texels per joint).
    pub width: u32,
    /// Height in texels (timeline rows per block).
    pub height: u32,
    /// Timeline rows.
    pub rows: u32,
    /// Where each timeline row is ([`Fold::unfolded`] for most textures).
    pub fold: Fold,
    /// How matrices are laid out.
    pub layout: MatrixLayout,
    /// `width * height * 4` floats.
    pub texels: &'a [f32],
    /// `qts` at 16-bit normalised precision: the range of the second
    /// texel's channels, and the texels hold `sample / 65535`
    /// ([`rigbake_types::qts::from_unorm`]); `None` for float textures.
    pub range: Option<rigbake_types::qts::Range>,
}

impl BoneTextureView<'_> {
    /// Texel `(x, y)`; zero outside the texture, like `Texture.Load`.
    pub fn load(&self, x: u32, y: u32) -> Vec4 {
        if x >= self.width || y >= self.height {
            return Vec4::ZERO;
        }
        let at = (y as usize * self.width as usize + x as usize) * 4;
        self.texels
            .get(at..at + 4)
            .map_or(Vec4::ZERO, Vec4::from_slice)
    }

    /// The skin matrix of `joint` at timeline row `row`, as three rows.
    #[inline]
    pub fn bone_matrix(&self, joint: u32, row: u32) -> Rows3x4 {
        let (page, x0, row) = self.fold.texel(0, 0, row);
        if page > 0 {
            return ZERO_ROWS; // bone textures have one page
        }
        // A joint past the block reads zero, not the next block's rows.
        let load = |x: u32, y: u32| {
            if x >= self.fold.block_width {
                Vec4::ZERO
            } else {
                self.load(x0.saturating_add(x), y)
            }
        };
        match self.layout {
            MatrixLayout::Mat4 => {
                let x = joint.saturating_mul(4);
                let c0 = load(x, row);
                let c1 = load(x.saturating_add(1), row);
                let c2 = load(x.saturating_add(2), row);
                let c3 = load(x.saturating_add(3), row);
                [
                    Vec4::new(c0.x, c1.x, c2.x, c3.x),
                    Vec4::new(c0.y, c1.y, c2.y, c3.y),
                    Vec4::new(c0.z, c1.z, c2.z, c3.z),
                ]
            }
            MatrixLayout::Mat3x4 => {
                let x = joint.saturating_mul(3);
                [
                    load(x, row),
                    load(x.saturating_add(1), row),
                    load(x.saturating_add(2), row),
                ]
            }
            MatrixLayout::Qts => {
                let x = joint.saturating_mul(2);
                let (q, ts) = (load(x, row), load(x.saturating_add(1), row));
                let texels = [q.x, q.y, q.z, q.w, ts.x, ts.y, ts.z, ts.w];
                let m = match &self.range {
                    Some(range) => {
                        MatrixLayout::Qts.decode(&rigbake_types::qts::from_unorm(&texels, range))
                    }
                    None => MatrixLayout::Qts.decode(&texels),
                };
                [m.row(0), m.row(1), m.row(2)]
            }
        }
    }
}

/// The bone index a channel stores (an exact float integer), as a shader's
/// `u32(f)` converts it; negative and NaN values become 0.
pub fn bone_index(value: f32) -> u32 {
    value as u32
}

/// Linear blend skinning's matrix: `sum_i weight_i * M(bone_i, row)` over
/// the `(bone, weight)` pairs of the vertex's channels (UV1 = `(bone0,
/// weight0, bone1, weight1)`, ...), skipping pairs of weight 0.
pub fn blend_bones(texture: &BoneTextureView<'_>, channels: &[[f32; 4]], row: u32) -> Rows3x4 {
    blend_matrices(channels, |bone| texture.bone_matrix(bone, row))
}

/// [`blend_bones`] with the matrices of one row given by `matrix` (bone
/// index to matrix): a caller skinning many vertices at one row fetches
/// each bone's matrix once (the same texels, so the same sums).
#[inline]
pub fn blend_matrices(channels: &[[f32; 4]], matrix: impl Fn(u32) -> Rows3x4) -> Rows3x4 {
    let mut acc = ZERO_ROWS;
    for c in channels {
        for (bone, weight) in [(c[0], c[1]), (c[2], c[3])] {
            if weight != 0.0 {
                add_weighted(&mut acc, &matrix(bone_index(bone)), weight);
            }
        }
    }
    acc
}

/// Position and unit normal (zero when the vertex has none) of a vertex
/// skinned with `m`: its values at one row, before the frame lerp.
#[inline]
pub fn skin(m: &Rows3x4, position: Vec3, normal: Option<Vec3>) -> RowValues {
    (
        transform_point(m, position),
        normal.map_or(Vec3::ZERO, |n| safe_normalize(cofactor_normal(m, n))),
    )
}

/// One vertex through the bone-matrix shader: `position` and `normal` in the
/// bind pose (as in the weights mesh), `channels` its UV1..UVn. A disabled
/// state returns the vertex unchanged.
pub fn deform_vertex(
    texture: &BoneTextureView<'_>,
    state: &GpuState,
    channels: &[[f32; 4]],
    position: Vec3,
    normal: Option<Vec3>,
) -> RuntimeVertex {
    if !state.enabled {
        return RuntimeVertex { position, normal };
    }
    let last_row = texture.rows.saturating_sub(1);
    blend_rows(state, last_row, normal.is_some(), |row| {
        skin(&blend_bones(texture, channels, row), position, normal)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::MatrixLayout;
    use glam::DMat4;

    /// A 2-joint texture over 3 rows: joint 0 translates by (row, 0, 0),
    /// joint 1 scales x by 2 and translates by (0, row, 0).
    fn texture(layout: MatrixLayout) -> Vec<f32> {
        let ppj = layout.pixels_per_joint();
        let mut data = vec![0.0; 2 * ppj * 4 * 3];
        for row in 0..3 {
            let r = row as f64;
            let m0 = DMat4::from_translation(glam::DVec3::new(r, 0.0, 0.0));
            let m1 = DMat4::from_translation(glam::DVec3::new(0.0, r, 0.0))
                * DMat4::from_scale(glam::DVec3::new(2.0, 1.0, 1.0));
            let at = row * 2 * ppj * 4;
            layout.encode(&m0, &mut data[at..at + ppj * 4]);
            layout.encode(&m1, &mut data[at + ppj * 4..at + 2 * ppj * 4]);
        }
        data
    }

    #[test]
    fn skins_lerps_and_blends_as_hand_computed() {
        for layout in [MatrixLayout::Mat4, MatrixLayout::Mat3x4] {
            let data = texture(layout);
            let tex = BoneTextureView {
                width: 2 * layout.pixels_per_joint() as u32,
                height: 3,
                rows: 3,
                fold: Fold::unfolded(2 * layout.pixels_per_joint() as u32, 1, 3),
                layout,
                texels: &data,
                range: None,
            };
            // Half on each joint: p' = 0.5 (p + (r, 0, 0)) + 0.5 (2px, py + r, pz).
            let channels = [[0.0, 0.5, 1.0, 0.5]];
            let p = Vec3::new(1.0, 1.0, 1.0);
            let at = |row: f32, fraction: f32| GpuState {
                rows: [[1.0, fraction, row, 0.0], [0.0; 4], [0.0; 4], [0.0; 4]],
                enabled: true,
            };
            let v = deform_vertex(&tex, &at(1.0, 0.0), &channels, p, Some(Vec3::X));
            assert!(
                v.position.distance(Vec3::new(2.0, 1.5, 1.0)) < 1e-6,
                "{layout:?}"
            );
            // Blended x scale 1.5: the normal matrix keeps +X.
            assert!(v.normal.unwrap().distance(Vec3::X) < 1e-6);
            // Row 1 to row 2 at a quarter: translation r = 1.25.
            let v = deform_vertex(&tex, &at(1.0, 0.25), &channels, p, None);
            assert!(v.position.distance(Vec3::new(2.125, 1.625, 1.0)) < 1e-6);
            assert_eq!(v.normal, None);
            // Two rows at 0.75 / 0.25: rows 0 and 2 blend to r = 0.5.
            let two = GpuState {
                rows: [
                    [0.75, 0.0, 0.0, 0.0],
                    [0.25, 0.0, 2.0, 0.0],
                    [0.0; 4],
                    [0.0; 4],
                ],
                enabled: true,
            };
            let v = deform_vertex(&tex, &two, &channels, p, None);
            assert!(v.position.distance(Vec3::new(1.75, 1.25, 1.0)) < 1e-6);
            // The last row clamps its next row to itself.
            let v = deform_vertex(&tex, &at(2.0, 0.5), &channels, p, None);
            assert!(v.position.distance(Vec3::new(2.5, 2.0, 1.0)) < 1e-6);
            // Disabled: the bind pose.
            let v = deform_vertex(&tex, &GpuState::DISABLED, &channels, p, None);
            assert_eq!(v.position, p);
        }
    }

    #[test]
    fn out_of_range_bones_and_rows_read_zero() {
        let data = texture(MatrixLayout::Mat4);
        let tex = BoneTextureView {
            width: 8,
            height: 3,
            rows: 3,
            fold: Fold::unfolded(8, 1, 3),
            layout: MatrixLayout::Mat4,
            texels: &data[..10], // shorter than it claims
            range: None,
        };
        assert_eq!(tex.bone_matrix(7, 1), ZERO_ROWS);
        assert_eq!(tex.bone_matrix(0, 99), ZERO_ROWS);
        assert_eq!(bone_index(-3.0), 0);
        assert_eq!(bone_index(f32::NAN), 0);
    }
}
