//! The frame lerp and row blend both runtime paths end with (SPEC section
//! 6): for each active state row, the vertex's values at the frame row and,
//! when the row's fraction is positive, at the next row (`min(row + 1,
//! last_row)`), lerped by the fraction; the rows summed by blend weight;
//! the normal normalised once at the end. What a path computes at one
//! timeline row (the bone path: skinned with that row's blended matrix;
//! the VAT path: the decoded texels) is the caller's closure, so a caller
//! that evaluates many instants (`rigbake verify`) can compute each row's
//! values once and blend them for every instant that reads the row, with
//! the same arithmetic, to the bit.

use glam::Vec3;

use super::RuntimeVertex;
use super::math::{lerp3, safe_normalize, safe_normalize_components};
use super::state::GpuState;

/// One vertex's position and normal (zero when it has none) at one
/// timeline row, as a path computes it before the frame lerp.
pub type RowValues = (Vec3, Vec3);

/// Blends `at_row`'s values over `state`'s active rows: the frame lerp,
/// then the weighted sum; the normal (when `has_normal`) normalised. The
/// state must be enabled (a disabled one draws the mesh as it is, which
/// only the caller knows).
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

/// A block of vertices as a path plays them, in columns: positions and
/// normals (zero when the vertex has none).
#[derive(Debug, Clone)]
pub struct PlayedBlock<const N: usize> {
    /// x, y and z of every position.
    pub position: [[f32; N]; 3],
    /// x, y and z of every normal.
    pub normal: [[f32; N]; 3],
}

impl<const N: usize> Default for PlayedBlock<N> {
    fn default() -> Self {
        Self {
            position: [[0.0; N]; 3],
            normal: [[0.0; N]; 3],
        }
    }
}

/// [`blend_rows`] for `len` consecutive vertices at once (`len <= N`):
/// `at_row(row)` gives the block's values at a timeline row (at least
/// `len` of them, vertex `i` at index `i`). The same operations in the
/// same order per vertex, so the same bits, with the state's rows read
/// once per block instead of once per vertex.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // `i` picks a vertex of every column
pub fn blend_rows_block<'v, const N: usize>(
    state: &GpuState,
    last_row: u32,
    len: usize,
    mut at_row: impl FnMut(u32) -> &'v [RowValues],
    out: &mut PlayedBlock<N>,
) {
    let len = len.min(N);
    // The sums go straight into `out`'s columns: component by component,
    // the operations of `lerp3`, `* weight` and `+=` on `Vec3`, in a form
    // the compiler vectorises across vertices.
    for k in 0..3 {
        out.position[k][..len].fill(0.0);
        out.normal[k][..len].fill(0.0);
    }
    let (p, n) = (&mut out.position, &mut out.normal);
    for s in state.active_rows() {
        let (weight, fraction, row) = (s[0], s[1], s[2] as u32);
        let here = &at_row(row)[..len];
        if fraction > 0.0 {
            let next = &at_row(row.saturating_add(1).min(last_row))[..len];
            for i in 0..len {
                let ((p0, n0), (p1, n1)) = (here[i], next[i]);
                for k in 0..3 {
                    p[k][i] += (p0[k] + (p1[k] - p0[k]) * fraction) * weight;
                    n[k][i] += (n0[k] + (n1[k] - n0[k]) * fraction) * weight;
                }
            }
        } else {
            for i in 0..len {
                let (p0, n0) = here[i];
                for k in 0..3 {
                    p[k][i] += p0[k] * weight;
                    n[k][i] += n0[k] * weight;
                }
            }
        }
    }
    // `safe_normalize`, over the columns.
    for i in 0..len {
        let unit = safe_normalize_components([n[0][i], n[1][i], n[2][i]]);
        for k in 0..3 {
            n[k][i] = unit[k];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block blend gives every vertex the bits of the per-vertex one,
    /// for one row, a lerp to the next row, the clamp at the last row and
    /// a crossfade of two rows.
    #[test]
    #[allow(clippy::needless_range_loop)] // `v` picks a vertex of every row
    fn the_block_blend_is_the_per_vertex_blend() {
        const N: usize = 8;
        let value = |row: u32, v: usize| -> RowValues {
            let f = |k: u32| ((row * 31 + v as u32 * 7 + k) % 13) as f32 * 0.37 - 2.0;
            (Vec3::new(f(0), f(1), f(2)), Vec3::new(f(3), f(4), f(5)))
        };
        let rows: Vec<Vec<RowValues>> = (0..6)
            .map(|r| (0..N).map(|v| value(r, v)).collect())
            .collect();
        for state in [
            [[1.0, 0.0, 2.0, 0.0], [0.0; 4]],
            [[1.0, 0.3, 2.0, 0.0], [0.0; 4]],
            [[1.0, 0.5, 5.0, 0.0], [0.0; 4]],
            [[0.25, 0.7, 1.0, 0.0], [0.75, 0.1, 4.0, 0.0]],
        ] {
            let state = GpuState {
                rows: [state[0], state[1], [0.0; 4], [0.0; 4]],
                enabled: true,
            };
            let mut block = PlayedBlock::<N>::default();
            blend_rows_block(&state, 5, N - 1, |r| &rows[r as usize], &mut block);
            for v in 0..N - 1 {
                let one = blend_rows(&state, 5, true, |r| rows[r as usize][v]);
                let normal = one.normal.unwrap();
                for k in 0..3 {
                    assert_eq!(block.position[k][v].to_bits(), one.position[k].to_bits());
                    assert_eq!(block.normal[k][v].to_bits(), normal[k].to_bits());
                }
            }
        }
    }
}
