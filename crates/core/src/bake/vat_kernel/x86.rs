//! The AVX2 path of [`super::deform`]: eight vertices at a time.
//!
//! Each vertex's blended matrix is built in two 8-float registers (columns
//! 0-1 and 2-3), the eight vertices' matrices are transposed in registers
//! into one register per matrix element (shuffles, not gathers), and
//! positions and normals are then computed across the eight vertices, with
//! exactly the operations of [`super::deform_portable`] in the same order
//! (no fused multiply-adds: the function enables AVX2 only, and Rust never
//! contracts on its own), so results match it bit for bit.
//!
//! This is the crate's only `unsafe` code: calling a function compiled for
//! AVX2 (after checking the CPU has it) and unaligned vector loads and
//! stores at indices checked against slice lengths first.
#![allow(unsafe_code)]

use std::arch::x86_64::*;

use super::{Columns, PlanesMut, Span, ZERO};

/// Vertices per group.
const LANES: usize = 8;

/// Whether this CPU runs the AVX2 path (detected once, then cached by std).
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// Deforms the vertices of every full group of [`LANES`] (see
/// [`super::deform`]); returns how many vertices it did (the rest are left
/// to the portable path). Does nothing when the CPU lacks AVX2.
pub fn deform_groups(
    palette: &[Columns],
    span: Span<'_>,
    out_pos: PlanesMut<'_>,
    out_nrm: Option<PlanesMut<'_>>,
    exact: bool,
) -> usize {
    if !available() {
        return 0;
    }
    // SAFETY: the CPU has AVX2 (checked just above).
    unsafe { groups(palette, span, out_pos, out_nrm, exact) }
}

#[target_feature(enable = "avx2")]
fn groups(
    palette: &[Columns],
    span: Span<'_>,
    out_pos: PlanesMut<'_>,
    out_nrm: Option<PlanesMut<'_>>,
    exact: bool,
) -> usize {
    let [ox, oy, oz] = out_pos;
    let mut n = ox.len().min(oy.len()).min(oz.len());
    n = n.min(span.positions.iter().map(|p| p.len()).min().unwrap_or(0));
    if let Some(planes) = &out_nrm {
        n = n.min(planes.iter().map(|p| p.len()).min().unwrap_or(0));
        n = n.min(span.normals.iter().map(|p| p.len()).min().unwrap_or(0));
    }
    let slots = span.slots;
    if let (Some(j), Some(w)) = (
        span.joints.len().checked_div(slots),
        span.weights.len().checked_div(slots),
    ) {
        n = n.min(j).min(w);
    }
    let full = n / LANES * LANES;
    let mut nrm = out_nrm;
    let mut g = 0;
    while g < full {
        // Blend: per vertex, columns 0-1 in `lo`, 2-3 in `hi`.
        let (joints, weights) = (
            &span.joints[g * slots..(g + LANES) * slots],
            &span.weights[g * slots..(g + LANES) * slots],
        );
        let (lo, hi) = match slots {
            4 => blend_fixed::<4>(palette, joints, weights),
            8 => blend_fixed::<8>(palette, joints, weights),
            _ => blend(palette, joints, weights, slots),
        };
        // One register per element: m[e] holds element e of the eight
        // matrices (the w elements 3, 7, 11, 15 are never needed).
        let [m0, m1, m2, m4, m5, m6] = transpose_xyz(&lo);
        let [m8, m9, m10, m12, m13, m14] = transpose_xyz(&hi);
        let load = |plane: &[f32]| {
            debug_assert!(g + LANES <= plane.len());
            // SAFETY: g + LANES <= full <= plane.len() (n is bounded by
            // every plane's length above).
            unsafe { _mm256_loadu_ps(plane.as_ptr().add(g)) }
        };
        let store = |plane: &mut [f32], v: __m256| {
            debug_assert!(g + LANES <= plane.len());
            // SAFETY: as for `load`.
            unsafe { _mm256_storeu_ps(plane.as_mut_ptr().add(g), v) }
        };
        let (px, py, pz) = (
            load(span.positions[0]),
            load(span.positions[1]),
            load(span.positions[2]),
        );
        let affine = |a: __m256, b: __m256, c: __m256, d: __m256| {
            _mm256_add_ps(
                _mm256_add_ps(
                    _mm256_add_ps(_mm256_mul_ps(a, px), _mm256_mul_ps(b, py)),
                    _mm256_mul_ps(c, pz),
                ),
                d,
            )
        };
        store(ox, affine(m0, m4, m8, m12));
        store(oy, affine(m1, m5, m9, m13));
        store(oz, affine(m2, m6, m10, m14));
        if let Some([nx, ny, nz]) = nrm.as_mut() {
            let n = [
                load(span.normals[0]),
                load(span.normals[1]),
                load(span.normals[2]),
            ];
            let t = normals([m0, m1, m2], [m4, m5, m6], [m8, m9, m10], n, exact);
            store(nx, t[0]);
            store(ny, t[1]);
            store(nz, t[2]);
        }
        g += LANES;
    }
    full
}

/// The blended matrices of a group's vertices: columns 0-1 and 2-3 of each,
/// `sum_s w_s * palette[j_s]` from zero, slot by slot.
#[target_feature(enable = "avx2")]
fn blend(
    palette: &[Columns],
    joints: &[u16],
    weights: &[f32],
    slots: usize,
) -> ([__m256; LANES], [__m256; LANES]) {
    let mut lo = [_mm256_setzero_ps(); LANES];
    let mut hi = [_mm256_setzero_ps(); LANES];
    for l in 0..LANES {
        for s in l * slots..(l + 1) * slots {
            let (c_lo, c_hi) = halves(palette.get(usize::from(joints[s])).unwrap_or(&ZERO));
            let w = _mm256_set1_ps(weights[s]);
            lo[l] = _mm256_add_ps(lo[l], _mm256_mul_ps(w, c_lo));
            hi[l] = _mm256_add_ps(hi[l], _mm256_mul_ps(w, c_hi));
        }
    }
    (lo, hi)
}

/// [`blend`] with the slot count known at compile time (the common 4 and
/// 8), so the slot loop unrolls.
#[target_feature(enable = "avx2")]
fn blend_fixed<const S: usize>(
    palette: &[Columns],
    joints: &[u16],
    weights: &[f32],
) -> ([__m256; LANES], [__m256; LANES]) {
    let mut lo = [_mm256_setzero_ps(); LANES];
    let mut hi = [_mm256_setzero_ps(); LANES];
    for (l, (j, w)) in joints
        .chunks_exact(S)
        .zip(weights.chunks_exact(S))
        .take(LANES)
        .enumerate()
    {
        for s in 0..S {
            let (c_lo, c_hi) = halves(palette.get(usize::from(j[s])).unwrap_or(&ZERO));
            let w = _mm256_set1_ps(w[s]);
            lo[l] = _mm256_add_ps(lo[l], _mm256_mul_ps(w, c_lo));
            hi[l] = _mm256_add_ps(hi[l], _mm256_mul_ps(w, c_hi));
        }
    }
    (lo, hi)
}

/// The two halves (columns 0-1, 2-3) of a palette matrix.
#[target_feature(enable = "avx2")]
fn halves(c: &Columns) -> (__m256, __m256) {
    // SAFETY: `c` is 16 floats; the loads read 0..8 and 8..16.
    unsafe {
        (
            _mm256_loadu_ps(c.as_ptr()),
            _mm256_loadu_ps(c.as_ptr().add(8)),
        )
    }
}

/// Transposes eight rows `(x0 y0 z0 w0 x1 y1 z1 w1)` into registers of
/// `x0`, `y0`, `z0`, `x1`, `y1`, `z1` across the rows.
#[target_feature(enable = "avx2")]
fn transpose_xyz(r: &[__m256; LANES]) -> [__m256; 6] {
    // Pairs of rows interleaved: t0 = r0e0 r1e0 r0e1 r1e1 | r0e4 r1e4 r0e5 r1e5.
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    let t4 = _mm256_unpacklo_ps(r[4], r[5]);
    let t5 = _mm256_unpackhi_ps(r[4], r[5]);
    let t6 = _mm256_unpacklo_ps(r[6], r[7]);
    let t7 = _mm256_unpackhi_ps(r[6], r[7]);
    // Four rows: u0 = r0..3 e0 | r0..3 e4, u1 = e1 | e5, u2 = e2 | e6.
    let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
    let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
    let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
    let v0 = _mm256_shuffle_ps::<0x44>(t4, t6);
    let v1 = _mm256_shuffle_ps::<0xEE>(t4, t6);
    let v2 = _mm256_shuffle_ps::<0x44>(t5, t7);
    // Eight rows: low halves give e0..e2, high halves e4..e6.
    [
        _mm256_permute2f128_ps::<0x20>(u0, v0),
        _mm256_permute2f128_ps::<0x20>(u1, v1),
        _mm256_permute2f128_ps::<0x20>(u2, v2),
        _mm256_permute2f128_ps::<0x31>(u0, v0),
        _mm256_permute2f128_ps::<0x31>(u1, v1),
        _mm256_permute2f128_ps::<0x31>(u2, v2),
    ]
}

/// [`super::normal`] across eight lanes: `c0..c2` are the linear columns.
#[target_feature(enable = "avx2")]
fn normals(
    c0: [__m256; 3],
    c1: [__m256; 3],
    c2: [__m256; 3],
    n: [__m256; 3],
    exact: bool,
) -> [__m256; 3] {
    let mul = |a, b| _mm256_mul_ps(a, b);
    let add = |a, b| _mm256_add_ps(a, b);
    let sub = |a, b| _mm256_sub_ps(a, b);
    let cross = |a: [__m256; 3], b: [__m256; 3]| {
        [
            sub(mul(a[1], b[2]), mul(a[2], b[1])),
            sub(mul(a[2], b[0]), mul(a[0], b[2])),
            sub(mul(a[0], b[1]), mul(a[1], b[0])),
        ]
    };
    let zero = _mm256_setzero_ps();
    let one = _mm256_set1_ps(1.0);
    let r = if exact {
        let k0 = cross(c1, c2);
        let k1 = cross(c2, c0);
        let k2 = cross(c0, c1);
        let det = add(add(mul(c0[0], k0[0]), mul(c0[1], k0[1])), mul(c0[2], k0[2]));
        let s = _mm256_blendv_ps(
            one,
            _mm256_set1_ps(-1.0),
            _mm256_cmp_ps::<_CMP_LT_OQ>(det, zero),
        );
        [0, 1, 2].map(|i| {
            mul(
                add(add(mul(k0[i], n[0]), mul(k1[i], n[1])), mul(k2[i], n[2])),
                s,
            )
        })
    } else {
        [0, 1, 2].map(|i| add(add(mul(c0[i], n[0]), mul(c1[i], n[1])), mul(c2[i], n[2])))
    };
    let len2 = add(add(mul(r[0], r[0]), mul(r[1], r[1])), mul(r[2], r[2]));
    let finite = _mm256_and_ps(
        _mm256_cmp_ps::<_CMP_GT_OQ>(len2, zero),
        _mm256_cmp_ps::<_CMP_LT_OQ>(len2, _mm256_set1_ps(f32::INFINITY)),
    );
    let inv = _mm256_and_ps(finite, _mm256_div_ps(one, _mm256_sqrt_ps(len2)));
    r.map(|v| mul(v, inv))
}
