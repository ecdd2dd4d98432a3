//! The frame lerp and row blend both runtime paths end with (SPEC section
//! 6): for each active state row, the vertex's values at the frame row and,
//! when the row's fraction is positive, at the next row (`min(row + 1,
//! last_row)`), lerped by the fraction; the rows summed by blend weight;
//! the normal normalised once at the end. What a path computes at one
//! timeline row (the bone path: skinned with that row's blended matrix;
//! the VAT path: the decoded texels) is the caller's closure.

use glam::Vec3;

use super::RuntimeVertex;
use super::math::{lerp3, safe_normalize};
use super::state::GpuState;

/// One vertex's position and normal (zero when it has none) at one
/// timeline row, as a path computes it before the frame lerp.
pub type RowValues = (Vec3, Vec3);

/// Blends `at_row`'s values over `state`'s active rows: the frame lerp,
/// then the weighted sum; the normal (when `has_normal`) normalised. The
/// state must be enabled (a disabled one draws the mesh as it is, which
/// only the caller knows).
#[inline]
pub fn blend_rows(
    state: &GpuState,
    last_row: u32,
    has_normal: bool,
    mut at_row: impl FnMut(u32) -> RowValues,
) -> RuntimeVertex {
    let mut p = Vec3::ZERO;
    let mut n = Vec3::ZERO;
    for s in state.active_rows() {
        let (weight, fraction, row) = (s[0], s[1], s[2] as u32);
        let (mut p_row, mut n_row) = at_row(row);
        if fraction > 0.0 {
            let (p1, n1) = at_row(row.saturating_add(1).min(last_row));
            p_row = lerp3(p_row, p1, fraction);
            n_row = lerp3(n_row, n1, fraction);
        }
        p += p_row * weight;
        n += n_row * weight;
    }
    RuntimeVertex {
        position: p,
        normal: has_normal.then(|| safe_normalize(n)),
    }
}
