//! The AVX2 paths of [`super::quantize::pack_normals_planar`] and of
//! normalising a plane (`quantize::to_unorm_plane`): eight values in one
//! 256-bit register a plane, with exactly the operations of the portable
//! lanes (and so of the scalar functions) in the same order: no
//! fused multiply-adds (the function enables AVX2 only, and Rust never
//! contracts on its own), IEEE division and square root, so codes and
//! scores match it bit for bit. A unit test holds them to that.
//!
//! This is the crate's only `unsafe` code: calling a function compiled for
//! AVX2 (after checking the CPU has it) and unaligned vector loads and
//! stores at indices checked against slice lengths first.
#![allow(unsafe_code)]

use std::arch::x86_64::*;

/// Normals a group.
const LANES: usize = 8;

/// Packs every full group of [`LANES`] normals of the planes `n` into
/// `codes` and `scores` (see `pack_normals_planar`) and returns how many it
/// did (the rest are left to the caller). Does nothing when the CPU lacks
/// AVX2.
pub fn pack_groups(n: [&[f32]; 3], codes: &mut [u16], scores: &mut [f32]) -> usize {
    if !std::arch::is_x86_feature_detected!("avx2") {
        return 0;
    }
    // SAFETY: the CPU has AVX2 (checked just above).
    unsafe { groups(n, codes, scores) }
}

#[target_feature(enable = "avx2")]
fn groups(n: [&[f32]; 3], codes: &mut [u16], scores: &mut [f32]) -> usize {
    let len = n.iter().map(|p| p.len()).min().unwrap_or(0);
    let len = len.min(codes.len()).min(scores.len());
    let full = len / LANES * LANES;
    let splat = _mm256_set1_ps;
    let (zero, one) = (_mm256_setzero_ps(), splat(1.0));
    let magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(i32::MAX));
    let sign_bit = _mm256_castsi256_ps(_mm256_set1_epi32(i32::MIN));
    let abs = |v: __m256| _mm256_and_ps(v, magnitude);
    let neg = |v: __m256| _mm256_xor_ps(v, sign_bit);
    // `mask ? a : b`, lane by lane.
    let select = |mask: __m256, a: __m256, b: __m256| _mm256_blendv_ps(b, a, mask);
    let ge = |a: __m256, b: __m256| _mm256_cmp_ps::<_CMP_GE_OQ>(a, b);
    let gt = |a: __m256, b: __m256| _mm256_cmp_ps::<_CMP_GT_OQ>(a, b);
    let eq = |a: __m256, b: __m256| _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b);
    let (add, sub, mul, div) = (_mm256_add_ps, _mm256_sub_ps, _mm256_mul_ps, _mm256_div_ps);
    let mut g = 0;
    while g < full {
        let load = |plane: &[f32]| {
            debug_assert!(g + LANES <= plane.len());
            // SAFETY: g + LANES <= full <= plane.len() (len is the least
            // length of the planes above).
            unsafe { _mm256_loadu_ps(plane.as_ptr().add(g)) }
        };
        let (nx, ny, nz) = (load(n[0]), load(n[1]), load(n[2]));
        // `octahedral_encode`, both sides of its branch, then selected.
        let l1 = add(add(abs(nx), abs(ny)), abs(nz));
        let (x, y, z) = (div(nx, l1), div(ny, l1), div(nz, l1));
        let sign = |v: __m256| select(ge(v, zero), one, neg(one));
        let (upper, flat) = (ge(z, zero), eq(l1, zero));
        let fold = |up: __m256, low: __m256| select(flat, zero, select(upper, up, low));
        let ex = fold(x, mul(sub(one, abs(y)), sign(x)));
        let ey = fold(y, mul(sub(one, abs(x)), sign(y)));
        // `clamp(0, 255)` as `max` then `min`: `_mm256_max_ps(v, 0)` is 0
        // for a NaN `v`, which `clamp` keeps and `as u16` makes 0.
        let scale = |e: __m256| {
            let s = mul(mul(add(e, one), splat(0.5)), splat(255.0));
            _mm256_min_ps(_mm256_max_ps(s, zero), splat(255.0))
        };
        // The floor of `s` in 0..=255 by adding and removing 2^23, one
        // less when that rounded up.
        let floor = |s: __m256| {
            let r = sub(add(s, splat(8_388_608.0)), splat(8_388_608.0));
            select(gt(r, s), sub(r, one), r)
        };
        let (sx, sy) = (scale(ex), scale(ey));
        let (bx, by) = (floor(sx), floor(sy));
        let (ax, ay) = (
            add(bx, select(gt(sx, bx), one, zero)),
            add(by, select(gt(sy, by), one, zero)),
        );
        let unit = |b: __m256| sub(mul(div(b, splat(255.0)), splat(2.0)), one);
        let (ubx, uby, uax, uay) = (unit(bx), unit(by), unit(ax), unit(ay));
        // Each candidate's `octahedral_unfold` and score terms.
        let candidate = |ex: __m256, ey: __m256| {
            let dz = sub(sub(one, abs(ex)), abs(ey));
            let t = _mm256_max_ps(neg(dz), zero);
            let dx = add(ex, select(ge(ex, zero), neg(t), t));
            let dy = add(ey, select(ge(ey, zero), neg(t), t));
            let dot = add(add(mul(nx, dx), mul(ny, dy)), mul(nz, dz));
            let len2 = add(add(mul(dx, dx), mul(dy, dy)), mul(dz, dz));
            (div(mul(dot, abs(dot)), len2), dot, len2)
        };
        // The first code kept, a later one taken only when its key is
        // strictly greater.
        let (mut key, mut dot, mut len2) = candidate(ubx, uby);
        let (mut code_x, mut code_y) = (bx, by);
        for (cx, cy, ex, ey) in [(bx, ay, ubx, uay), (ax, by, uax, uby), (ax, ay, uax, uay)] {
            let (k, d, l) = candidate(ex, ey);
            let better = gt(k, key);
            (dot, len2) = (select(better, d, dot), select(better, l, len2));
            (code_x, code_y) = (select(better, cx, code_x), select(better, cy, code_y));
            key = select(better, k, key);
        }
        let null = _mm256_and_ps(_mm256_and_ps(eq(nx, zero), eq(ny, zero)), eq(nz, zero));
        let score = select(null, splat(f32::INFINITY), div(dot, _mm256_sqrt_ps(len2)));
        // `256 x + y`: a whole number below 65536, exact as a float.
        let code = select(null, zero, add(mul(code_x, splat(256.0)), code_y));
        store_group(
            code,
            score,
            &mut codes[g..g + LANES],
            &mut scores[g..g + LANES],
        );
        g += LANES;
    }
    full
}

/// `to_unorm` then `from_unorm` (see `quantize::to_unorm_plane`) of every
/// full group of [`LANES`] values over `[lo, hi]` (`hi > lo`) into `q` and
/// `decoded`, the operations of the portable lanes in the same order;
/// returns how many it did (the rest are left to the caller). Does nothing
/// when the CPU lacks AVX2.
pub fn to_unorm_groups(
    values: &[f32],
    [lo, hi]: [f32; 2],
    max: u16,
    q: &mut [u16],
    decoded: &mut [f32],
) -> usize {
    if !std::arch::is_x86_feature_detected!("avx2") {
        return 0;
    }
    // SAFETY: the CPU has AVX2 (checked just above).
    unsafe { unorm_groups(values, [lo, hi], max, q, decoded) }
}

#[target_feature(enable = "avx2")]
fn unorm_groups(
    values: &[f32],
    [lo, hi]: [f32; 2],
    max: u16,
    q: &mut [u16],
    decoded: &mut [f32],
) -> usize {
    let len = values.len().min(q.len()).min(decoded.len());
    let full = len / LANES * LANES;
    let splat = _mm256_set1_ps;
    let (zero, half, one) = (_mm256_setzero_ps(), splat(0.5), splat(1.0));
    let (lo_v, range, scale) = (splat(lo), splat(hi - lo), splat(f32::from(max)));
    let big = splat(8_388_608.0);
    let (add, sub, mul, div) = (_mm256_add_ps, _mm256_sub_ps, _mm256_mul_ps, _mm256_div_ps);
    let select = |mask: __m256, a: __m256, b: __m256| _mm256_blendv_ps(b, a, mask);
    let mut g = 0;
    while g < full {
        // SAFETY: g + LANES <= full <= values.len().
        let v = unsafe { _mm256_loadu_ps(values.as_ptr().add(g)) };
        // `clamp(0, 1)` as `max` then `min`: `_mm256_max_ps(v, 0)` is 0
        // for a NaN, which `clamp` keeps and `round_unorm` makes 0.
        let x = _mm256_min_ps(_mm256_max_ps(div(sub(v, lo_v), range), zero), one);
        let x = mul(x, scale);
        // `round_unorm`: the floor by adding and removing 2^23 (one less
        // when that rounded up), plus one from a fraction of a half.
        let r = sub(add(x, big), big);
        let floor = select(_mm256_cmp_ps::<_CMP_GT_OQ>(r, x), sub(r, one), r);
        let up = _mm256_cmp_ps::<_CMP_GE_OQ>(sub(x, floor), half);
        let code = add(floor, select(up, one, zero));
        let back = add(lo_v, mul(div(code, scale), range));
        store_group(code, back, &mut q[g..g + LANES], &mut decoded[g..g + LANES]);
        g += LANES;
    }
    full
}

/// Stores a group: eight codes (whole numbers from 0 to 65535, as floats)
/// into `codes` and eight floats into `floats` (both [`LANES`] long).
#[target_feature(enable = "avx2")]
#[inline]
fn store_group(code: __m256, value: __m256, codes: &mut [u16], floats: &mut [f32]) {
    assert!(codes.len() == LANES && floats.len() == LANES);
    let ints = _mm256_cvttps_epi32(code);
    // The low halves of the eight 32-bit codes, in order.
    let packed = _mm256_permute4x64_epi64::<0b1000>(_mm256_packus_epi32(ints, ints));
    let out: [u16; 16] = bytemuck::cast(packed);
    codes.copy_from_slice(&out[..LANES]);
    // SAFETY: `floats` holds LANES floats (asserted above).
    unsafe { _mm256_storeu_ps(floats.as_mut_ptr(), value) };
}
