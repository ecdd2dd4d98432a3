//! Mapping floats to normalised integers (16-bit for PNG and RGBA16, 8 and
//! 10-bit for RGBA8 and RGB10A2): per-axis bounds normalisation and
//! octahedral unit vectors, and the inverse mappings a shader applies.

use wide::f32x8;

/// `v` in `[lo, hi]` to `0..=65535` (rounded, halves away from zero);
/// `lo == hi` maps to 0.
#[inline]
pub fn to_unorm16(v: f32, lo: f32, hi: f32) -> u16 {
    if hi > lo {
        round_unorm(((v - lo) / (hi - lo)).clamp(0.0, 1.0) * 65535.0)
    } else {
        0
    }
}

/// `v` in `[lo, hi]` to `0..=max` (rounded, halves away from zero); `lo
/// == hi` maps to 0. [`to_unorm16`] is `max = 65535`.
#[inline]
pub fn to_unorm(v: f32, lo: f32, hi: f32, max: u16) -> u16 {
    if hi > lo {
        round_unorm(((v - lo) / (hi - lo)).clamp(0.0, 1.0) * f32::from(max))
    } else {
        0
    }
}

/// The shader's inverse of [`to_unorm`]: `lo + q / max * (hi - lo)`.
#[inline]
pub fn from_unorm(q: u16, lo: f32, hi: f32, max: u16) -> f32 {
    lo + f32::from(q) / f32::from(max) * (hi - lo)
}

/// `x.round() as u16` for `x` in `[0, 65535]` (NaN: 0), without the libm
/// call: below 2^24 the fraction `x - trunc(x)` is exact, so comparing it
/// with one half rounds exactly as `f32::round` does.
#[inline]
fn round_unorm(x: f32) -> u16 {
    let t = x as u16;
    t + u16::from(x - f32::from(t) >= 0.5)
}

/// The shader's inverse of [`to_unorm16`]: `lo + q / 65535 * (hi - lo)`.
#[inline]
pub fn from_unorm16(q: u16, lo: f32, hi: f32) -> f32 {
    lo + f32::from(q) / 65535.0 * (hi - lo)
}

/// Octahedral encoding of a unit vector into `[-1, 1]^2` (Meyer et al.,
/// "On floating-point normal vectors", 2010).
pub fn octahedral_encode(n: [f32; 3]) -> [f32; 2] {
    let l1 = n[0].abs() + n[1].abs() + n[2].abs();
    if l1 == 0.0 {
        return [0.0, 0.0];
    }
    let (x, y, z) = (n[0] / l1, n[1] / l1, n[2] / l1);
    if z >= 0.0 {
        [x, y]
    } else {
        let sign = |v: f32| if v >= 0.0 { 1.0 } else { -1.0 };
        [(1.0 - y.abs()) * sign(x), (1.0 - x.abs()) * sign(y)]
    }
}

/// The inverse of [`octahedral_encode`], normalised.
pub fn octahedral_decode(e: [f32; 2]) -> [f32; 3] {
    let [nx, ny, z] = octahedral_unfold(e);
    let len = (nx * nx + ny * ny + z * z).sqrt();
    if len > 0.0 {
        [nx / len, ny / len, z / len]
    } else {
        [0.0, 0.0, 1.0]
    }
}

/// The point of the octahedron `|x| + |y| + |z| = 1` that `e` encodes:
/// [`octahedral_decode`] before its normalisation.
#[inline]
fn octahedral_unfold(e: [f32; 2]) -> [f32; 3] {
    let (x, y) = (e[0], e[1]);
    let z = 1.0 - x.abs() - y.abs();
    let t = (-z).max(0.0);
    let nx = x + if x >= 0.0 { -t } else { t };
    let ny = y + if y >= 0.0 { -t } else { t };
    [nx, ny, z]
}

/// A unit normal packed into one 16-bit sample (direction encoding
/// `packed`, since format 1.13: the alpha of a 16-bit positions texel):
/// two 8-bit octahedral coordinates, `u = 256 * ux + uy`, each the
/// coordinate `e` in `[-1, 1]` as `(e + 1) / 2 * 255`. Of the four codes
/// around `e` the one whose decoded direction is nearest `n` is kept (the
/// nearest code is not always the nearest direction): at most 0.63 degrees
/// off, against 0.94 for plain rounding.
pub fn pack_normal(n: [f32; 3]) -> u16 {
    pack_normal_scored(n).0
}

/// [`pack_normal`] with its score: the cosine between `n` and the
/// direction its code decodes to, times `|n|` (in f32; the cosine itself
/// for a unit normal). A zero normal codes 0 and scores infinity.
pub fn pack_normal_scored(n: [f32; 3]) -> (u16, f32) {
    if n == [0.0; 3] {
        return (0, f32::INFINITY);
    }
    let e = octahedral_encode(n);
    let scaled = e.map(|v| ((v + 1.0) * 0.5 * 255.0).clamp(0.0, 255.0));
    // The codes below and above each coordinate (it is not negative, so
    // truncation floors it).
    let below = scaled.map(|v| v as u16);
    let above = [0, 1].map(|k| below[k] + u16::from(scaled[k] > f32::from(below[k])));
    // The four codes, ranked by `dot * |dot| / |d|^2` for the
    // unnormalised decoded direction `d`, which rises with the cosine: no
    // square root per code, and no branch (the four are computed side by
    // side and the best selected).
    let codes = [
        (below[0], below[1]),
        (below[0], above[1]),
        (above[0], below[1]),
        (above[0], above[1]),
    ];
    let (mut dots, mut lengths2, mut keys) = ([0f32; 4], [0f32; 4], [0f32; 4]);
    for (k, &(ux, uy)) in codes.iter().enumerate() {
        let d = octahedral_unfold([ux, uy].map(|u| f32::from(u) / 255.0 * 2.0 - 1.0));
        dots[k] = n[0] * d[0] + n[1] * d[1] + n[2] * d[2];
        lengths2[k] = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        keys[k] = dots[k] * dots[k].abs() / lengths2[k];
    }
    let mut best = 0;
    for k in 1..4 {
        best = if keys[k] > keys[best] { k } else { best };
    }
    let (ux, uy) = codes[best];
    ((ux << 8) | uy, dots[best] / lengths2[best].sqrt())
}

/// Values side by side in the vector paths ([`pack_normals_planar`],
/// `to_unorm_plane`): one AVX register of lanes, or two SSE ones.
const PACK_LANES: usize = 8;

/// [`pack_normal_scored`] of every normal of three planes (`n[0][i]`,
/// `n[1][i]`, `n[2][i]`), codes to `codes` and scores to `scores` (as many
/// as `codes` holds; every plane and `scores` at least as long). Eight
/// normals at a time in [`wide`] vectors run the same operations in the
/// same order as [`pack_normal_scored`], branches as selects, so every
/// code and score is bit for bit the scalar one's; the last few normals go
/// through the scalar function. Where the CPU has AVX2, the same
/// operations run on 256-bit registers (`pack_x86`), 1.5 times faster.
pub fn pack_normals_planar(n: [&[f32]; 3], codes: &mut [u16], scores: &mut [f32]) {
    let len = codes.len();
    assert!(n.iter().all(|p| p.len() >= len) && scores.len() >= len);
    // AVX2 where the CPU has it, then the portable lanes for the rest.
    #[cfg(target_arch = "x86_64")]
    let done = super::pack_x86::pack_groups(n, &mut codes[..len], &mut scores[..len]);
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    pack_normals_portable(n, codes, scores, done);
}

/// [`pack_normals_planar`] from normal `done` on (a multiple of the lane
/// count) without the AVX2 path: [`wide`] lanes of eight, then the scalar
/// function for the last few.
fn pack_normals_portable(n: [&[f32]; 3], codes: &mut [u16], scores: &mut [f32], done: usize) {
    let len = codes.len();
    let [px, py, pz] = n;
    let full = len / PACK_LANES * PACK_LANES;
    for start in (done..full).step_by(PACK_LANES) {
        let lanes = start..start + PACK_LANES;
        let load = |p: &[f32]| f32x8::new(p[lanes.clone()].try_into().unwrap_or_default());
        let (c, s) = pack_normal_lanes(load(px), load(py), load(pz));
        codes[lanes.clone()].copy_from_slice(&c);
        scores[lanes].copy_from_slice(&s);
    }
    for i in full..len {
        (codes[i], scores[i]) = pack_normal_scored([px[i], py[i], pz[i]]);
    }
}

/// Eight normals of [`pack_normals_planar`], one plane a vector: their
/// codes and scores. A comparison gives a mask that `select` reads.
#[inline(always)]
fn pack_normal_lanes(nx: f32x8, ny: f32x8, nz: f32x8) -> ([u16; PACK_LANES], [f32; PACK_LANES]) {
    let splat = f32x8::splat;
    let (zero, one) = (splat(0.0), splat(1.0));
    // `octahedral_encode`, both sides of its branch, then selected.
    let l1 = nx.abs() + ny.abs() + nz.abs();
    let (x, y, z) = (nx / l1, ny / l1, nz / l1);
    let sign = |v: f32x8| v.simd_ge(zero).select(one, -one);
    let (upper, flat) = (z.simd_ge(zero), l1.simd_eq(zero));
    let fold = |up: f32x8, low: f32x8| flat.select(zero, upper.select(up, low));
    let ex = fold(x, (one - y.abs()) * sign(x));
    let ey = fold(y, (one - x.abs()) * sign(y));
    // `clamp(0, 255)` as `max` then `min` (for a NaN, which `clamp` keeps
    // and `as u16` makes 0, both give 0).
    let scale = |e: f32x8| {
        ((e + one) * splat(0.5) * splat(255.0))
            .max(zero)
            .min(splat(255.0))
    };
    // The floor of `s` in 0..=255, as `as u16` truncates it: rounded to
    // the nearest whole number by adding and removing 2^23 (exact below
    // 2^23), one less when that rounded up.
    let floor = |s: f32x8| {
        let r = (s + splat(8_388_608.0)) - splat(8_388_608.0);
        r.simd_gt(s).select(r - one, r)
    };
    let (sx, sy) = (scale(ex), scale(ey));
    // The codes below and above as floats (whole numbers up to 255).
    let (bx, by) = (floor(sx), floor(sy));
    let (ax, ay) = (
        bx + sx.simd_gt(bx).select(one, zero),
        by + sy.simd_gt(by).select(one, zero),
    );
    let unit = |b: f32x8| b / splat(255.0) * splat(2.0) - one;
    let (ubx, uby, uax, uay) = (unit(bx), unit(by), unit(ax), unit(ay));
    // Each candidate's `octahedral_unfold` and score terms.
    let candidate = |ex: f32x8, ey: f32x8| {
        let dz = one - ex.abs() - ey.abs();
        let t = (-dz).max(zero);
        let dx = ex + ex.simd_ge(zero).select(-t, t);
        let dy = ey + ey.simd_ge(zero).select(-t, t);
        let dot = nx * dx + ny * dy + nz * dz;
        let len2 = dx * dx + dy * dy + dz * dz;
        (dot * dot.abs() / len2, dot, len2)
    };
    // The scalar search keeps the first code and takes a later one only
    // when its key is strictly greater.
    let (mut key, mut dot, mut len2) = candidate(ubx, uby);
    let (mut code_x, mut code_y) = (bx, by);
    for (cx, cy, ex, ey) in [(bx, ay, ubx, uay), (ax, by, uax, uby), (ax, ay, uax, uay)] {
        let (k, d, l) = candidate(ex, ey);
        let better = k.simd_gt(key);
        (dot, len2) = (better.select(d, dot), better.select(l, len2));
        (code_x, code_y) = (better.select(cx, code_x), better.select(cy, code_y));
        key = better.select(k, key);
    }
    let null = nx.simd_eq(zero) & ny.simd_eq(zero) & nz.simd_eq(zero);
    let score = null.select(splat(f32::INFINITY), dot / len2.sqrt());
    // `256 x + y`: a whole number below 65536, exact as a float.
    let code = null.select(zero, code_x * splat(256.0) + code_y);
    let code = code.trunc_int().to_array().map(|c| c as u16);
    (code, score.to_array())
}

/// The inverse of [`pack_normal`], as the shaders decode it:
/// `e = (u div 256, u mod 256) / 255 * 2 - 1`, then [`octahedral_decode`].
pub fn unpack_normal(code: u16) -> [f32; 3] {
    let (ux, uy) = (f32::from(code >> 8), f32::from(code & 0xff));
    octahedral_decode([ux / 255.0 * 2.0 - 1.0, uy / 255.0 * 2.0 - 1.0])
}

/// Angle between two vectors in degrees (0 for a zero vector).
pub fn angle_degrees(a: [f32; 3], b: [f32; 3]) -> f64 {
    cosine(a, b).map_or(0.0, degrees_of_cosine)
}

/// The cosine of the angle between `a` and `b` (in f64, clamped to
/// `[-1, 1]`), or `None` when either is zero. The angle falls as the cosine
/// rises, so the largest of many angles is [`degrees_of_cosine`] of the
/// smallest cosine: one arc cosine instead of one per pair.
#[inline]
pub fn cosine(a: [f32; 3], b: [f32; 3]) -> Option<f64> {
    let (a, b) = (a.map(f64::from), b.map(f64::from));
    let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let la = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    let lb = (b[0] * b[0] + b[1] * b[1] + b[2] * b[2]).sqrt();
    if la == 0.0 || lb == 0.0 {
        return None;
    }
    Some((dot / (la * lb)).clamp(-1.0, 1.0))
}

/// The angle in degrees whose cosine is `c`.
pub fn degrees_of_cosine(c: f64) -> f64 {
    c.acos().to_degrees()
}

/// [`to_unorm`] then [`from_unorm`] of every value of `values` over
/// `[lo, hi]` (`hi > lo`) into `q` and `decoded` (as long as `values`):
/// on 256-bit registers where the CPU has AVX2 (`pack_x86`), in [`wide`]
/// lanes of eight, then the scalar functions for the last few. Every path
/// runs the same operations in the same order, so the results are bit for
/// bit the scalar functions'.
fn to_unorm_plane(values: &[f32], lo: f32, hi: f32, max: u16, q: &mut [u16], decoded: &mut [f32]) {
    let len = values.len();
    let (q, decoded) = (&mut q[..len], &mut decoded[..len]);
    #[cfg(target_arch = "x86_64")]
    let done = super::pack_x86::to_unorm_groups(values, [lo, hi], max, q, decoded);
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    to_unorm_portable(values, [lo, hi], max, q, decoded, done);
}

/// [`to_unorm_plane`] from value `done` on (a multiple of the lane count)
/// without the AVX2 path: [`wide`] lanes of eight, then the scalar
/// functions for the last few.
fn to_unorm_portable(
    values: &[f32],
    [lo, hi]: [f32; 2],
    max: u16,
    q: &mut [u16],
    decoded: &mut [f32],
    done: usize,
) {
    let len = values.len();
    let full = len / PACK_LANES * PACK_LANES;
    let lanes = values[done..full].chunks_exact(PACK_LANES);
    let outs = q[done..full].chunks_exact_mut(PACK_LANES);
    for ((v, q), d) in lanes
        .zip(outs)
        .zip(decoded[done..full].chunks_exact_mut(PACK_LANES))
    {
        let (codes, back) = to_unorm_lanes(v, lo, hi, max);
        q.copy_from_slice(&codes);
        d.copy_from_slice(&back);
    }
    for ((v, q), d) in values[full..]
        .iter()
        .zip(&mut q[full..])
        .zip(&mut decoded[full..])
    {
        *q = to_unorm(*v, lo, hi, max);
        *d = from_unorm(*q, lo, hi, max);
    }
}

/// [`to_unorm`] then [`from_unorm`] of eight values (`v` holds eight)
/// over `[lo, hi]` (`hi > lo`), the same operations in the same order in
/// [`wide`] lanes: the codes and what a reader decodes, bit for bit the
/// scalar functions' results.
#[inline(always)]
fn to_unorm_lanes(v: &[f32], lo: f32, hi: f32, max: u16) -> ([u16; PACK_LANES], [f32; PACK_LANES]) {
    let splat = f32x8::splat;
    let (zero, half, one) = (splat(0.0), splat(0.5), splat(1.0));
    let (lo_v, range, scale) = (splat(lo), splat(hi - lo), splat(f32::from(max)));
    let v = f32x8::new(v.try_into().unwrap_or_default());
    // `clamp(0, 1)` as `max` then `min`: a NaN, which `clamp` keeps and
    // `round_unorm` makes 0, becomes 0 here too.
    let x = ((v - lo_v) / range).max(zero).min(one) * scale;
    // `round_unorm`: the floor of x (x is at most 65535, so adding and
    // removing 2^23 rounds it exactly; one less when that rounded up),
    // plus one when the fraction is at least a half.
    let big = splat(8_388_608.0);
    let r = (x + big) - big;
    let floor = r.simd_gt(x).select(r - one, r);
    let code = floor + (x - floor).simd_ge(half).select(one, zero);
    let back = lo_v + code / scale * range;
    let ints = code.trunc_int().to_array();
    (ints.map(|c| c as u16), back.to_array())
}

/// How [`quantize_planar_row`] maps a row's texels to normalised codes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowQuantizer {
    /// Every channel normalised to its `[min, max]` ([`to_unorm`]), to
    /// codes `0..=codes[c]`.
    Bounds {
        /// Per-channel `[min, max]`.
        bounds: [[f32; 4]; 2],
        /// The largest code of each channel (65535 for 16-bit samples).
        codes: [u16; 4],
    },
    /// x, y, z as one octahedral unit vector in the first two samples
    /// ([`octahedral_encode`]), the third sample 0; a fourth channel (a
    /// tangent's handedness) stored as 0 (negative) or its largest code.
    Octahedral {
        /// The largest code of each channel.
        codes: [u16; 4],
    },
}

/// Quantises one planar row (`floats` planes of `width` values) into
/// planar samples `q` and what a reader decodes from them, `decoded`
/// (both planar, `floats * width`). Texel by texel the results are those
/// of [`to_unorm`], [`from_unorm`], [`octahedral_encode`] and
/// [`octahedral_decode`] (the same operations in the same order); working
/// plane by plane lets the compiler vectorise the loops.
pub fn quantize_planar_row(
    quantizer: &RowQuantizer,
    row: &[f32],
    width: usize,
    floats: usize,
    q: &mut [u16],
    decoded: &mut [f32],
) {
    let n = floats * width;
    let (row, q, decoded) = (&row[..n], &mut q[..n], &mut decoded[..n]);
    match quantizer {
        RowQuantizer::Bounds { bounds, codes } => {
            for (c, (&lo, &hi)) in bounds[0].iter().zip(&bounds[1]).enumerate().take(floats) {
                let plane = c * width..(c + 1) * width;
                let (values, q, decoded) = (
                    &row[plane.clone()],
                    &mut q[plane.clone()],
                    &mut decoded[plane],
                );
                let max = codes[c];
                if hi > lo {
                    to_unorm_plane(values, lo, hi, max, q, decoded);
                } else {
                    q.fill(0);
                    decoded.fill(from_unorm(0, lo, hi, max));
                }
            }
        }
        RowQuantizer::Octahedral { codes } => {
            let (xyz, w) = row.split_at(3 * width);
            let (x, rest) = xyz.split_at(width);
            let (y, z) = rest.split_at(width);
            let (qx, rest) = q.split_at_mut(width);
            let (qy, rest) = rest.split_at_mut(width);
            let (qz, qw) = rest.split_at_mut(width);
            let (dx, rest) = decoded.split_at_mut(width);
            let (dy, rest) = rest.split_at_mut(width);
            let (dz, dw) = rest.split_at_mut(width);
            let (mx, my) = (codes[0], codes[1]);
            for i in 0..width {
                let e = octahedral_encode_select([x[i], y[i], z[i]]);
                let (a, b) = (to_unorm(e[0], -1.0, 1.0, mx), to_unorm(e[1], -1.0, 1.0, my));
                (qx[i], qy[i]) = (a, b);
                let d = octahedral_decode_select([
                    from_unorm(a, -1.0, 1.0, mx),
                    from_unorm(b, -1.0, 1.0, my),
                ]);
                (dx[i], dy[i], dz[i]) = (d[0], d[1], d[2]);
            }
            qz.fill(0);
            if floats == 4 {
                for ((q, d), v) in qw.iter_mut().zip(dw.iter_mut()).zip(&w[..width]) {
                    *q = if *v < 0.0 { 0 } else { codes[3] };
                    *d = *v;
                }
            }
        }
    }
}

/// [`octahedral_encode`] without branches (selects only), so that a loop
/// over it vectorises; the same results for every input.
#[inline(always)]
fn octahedral_encode_select(n: [f32; 3]) -> [f32; 2] {
    let l1 = n[0].abs() + n[1].abs() + n[2].abs();
    let (x, y, z) = (n[0] / l1, n[1] / l1, n[2] / l1);
    let sign = |v: f32| if v >= 0.0 { 1.0 } else { -1.0 };
    let lower = [(1.0 - y.abs()) * sign(x), (1.0 - x.abs()) * sign(y)];
    let e = if z >= 0.0 { [x, y] } else { lower };
    if l1 == 0.0 { [0.0, 0.0] } else { e }
}

/// [`octahedral_decode`] without branches (selects only); the same results.
#[inline(always)]
fn octahedral_decode_select(e: [f32; 2]) -> [f32; 3] {
    let (x, y) = (e[0], e[1]);
    let z = 1.0 - x.abs() - y.abs();
    let t = (-z).max(0.0);
    let nx = x + if x >= 0.0 { -t } else { t };
    let ny = y + if y >= 0.0 { -t } else { t };
    let len = (nx * nx + ny * ny + z * z).sqrt();
    let d = [nx / len, ny / len, z / len];
    if len > 0.0 { d } else { [0.0, 0.0, 1.0] }
}

/// Interleaves planar 16-bit samples (`floats` planes of `width`) into the
/// big-endian bytes of PNG pixels (`width * floats * 2` bytes).
pub fn interleave_be(q: &[u16], width: usize, floats: usize, out: &mut [u8]) {
    for (x, texel) in out[..width * floats * 2]
        .chunks_exact_mut(floats * 2)
        .enumerate()
    {
        for (c, sample) in texel.chunks_exact_mut(2).enumerate() {
            sample.copy_from_slice(&q[c * width + x].to_be_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_rounding_equals_f32_round_at_every_boundary() {
        let up = |x: f32| f32::from_bits(x.to_bits() + 1);
        let down = |x: f32| {
            if x > 0.0 {
                f32::from_bits(x.to_bits() - 1)
            } else {
                x
            }
        };
        for i in 0..=65535u32 {
            let t = i as f32;
            let half = t + 0.5;
            for x in [t, up(t), down(t), half, up(half), down(half)] {
                if x <= 65535.0 {
                    assert_eq!(round_unorm(x), x.round() as u16, "{x}");
                }
            }
        }
        assert_eq!(round_unorm(0.49999997), 0);
        assert_eq!(round_unorm(f32::NAN), 0);
    }

    #[test]
    fn unorm16_round_trips_within_half_a_step() {
        let (lo, hi) = (-2.0f32, 6.0f32);
        for i in 0..=1000 {
            let v = lo + (hi - lo) * i as f32 / 1000.0;
            let back = from_unorm16(to_unorm16(v, lo, hi), lo, hi);
            assert!((back - v).abs() <= (hi - lo) / 65535.0 * 0.5 + 1e-6);
        }
        assert_eq!(to_unorm16(1.0, 1.0, 1.0), 0);
        assert_eq!(from_unorm16(0, 1.0, 1.0), 1.0);
    }

    #[test]
    fn octahedral_round_trips_directions_including_poles_and_the_lower_half() {
        let dirs = [
            [0.0, 0.0, 1.0],
            [0.0, 0.0, -1.0],
            [1.0, 0.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.6, -0.48, -0.64],
            [-0.36, 0.48, 0.8],
        ];
        for d in dirs {
            let e = octahedral_encode(d);
            assert!(e[0].abs() <= 1.0 && e[1].abs() <= 1.0);
            let back = octahedral_decode(e);
            assert!(angle_degrees(back, d) < 1e-3, "{d:?} -> {e:?} -> {back:?}");
        }
        assert!((angle_degrees([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]) - 90.0).abs() < 1e-9);
    }

    /// Texels that exercise every branch: zero vectors, poles, both
    /// hemispheres, signed zeros, values outside the bounds, and a spread
    /// of ordinary values.
    fn awkward_rows(width: usize) -> Vec<[f32; 4]> {
        let mut t = vec![
            [0.0, 0.0, 0.0, 1.0],
            [-0.0, 0.0, -0.0, -1.0],
            [0.0, 0.0, 1.0, 1.0],
            [0.0, 0.0, -1.0, -1.0],
            [1.0, 0.0, 0.0, 0.0],
            [0.0, -1.0, 0.0, -0.0],
            [0.6, -0.48, -0.64, 1.0],
            [-0.36, 0.48, 0.8, -1.0],
            [-0.0, -0.0, -1.0, 1.0],
            [5.0, -7.0, 100.0, 1.0],
            [-9.0, 9.0, -9.0, 1.0],
        ];
        let mut i = 0u32;
        while t.len() < width {
            i += 1;
            let a = i as f32 * 0.618;
            t.push([
                a.sin() * 3.0,
                (a * 1.7).cos() * 2.0,
                (a * 0.3).sin() - 0.5,
                a.cos(),
            ]);
        }
        t
    }

    #[test]
    fn planar_rows_quantise_exactly_as_the_texel_functions() {
        let width = 301;
        let texels = awkward_rows(width);
        let bounds = [[-2.5, -1.0, 0.25, 0.0], [2.5, 1.5, 0.25, 1.0]];
        for floats in [3, 4] {
            let mut row = vec![0.0; floats * width];
            for (x, t) in texels.iter().enumerate() {
                for c in 0..floats {
                    row[c * width + x] = t[c];
                }
            }
            let widths = [[u16::MAX; 4], [255; 4], [1023, 1023, 1023, 3]];
            let quantizers = widths.into_iter().flat_map(|codes| {
                [
                    RowQuantizer::Bounds { bounds, codes },
                    RowQuantizer::Octahedral { codes },
                ]
            });
            for quantizer in quantizers {
                let mut q = vec![7u16; floats * width];
                let mut d = vec![f32::NAN; floats * width];
                quantize_planar_row(&quantizer, &row, width, floats, &mut q, &mut d);
                for (x, t) in texels.iter().enumerate() {
                    let (want_q, want_d): (Vec<u16>, Vec<f32>) = match quantizer {
                        RowQuantizer::Bounds { bounds: b, codes } => (0..floats)
                            .map(|c| {
                                let q = to_unorm(t[c], b[0][c], b[1][c], codes[c]);
                                if codes[c] == u16::MAX {
                                    assert_eq!(q, to_unorm16(t[c], b[0][c], b[1][c]));
                                }
                                (q, from_unorm(q, b[0][c], b[1][c], codes[c]))
                            })
                            .unzip(),
                        RowQuantizer::Octahedral { codes } => {
                            let e = octahedral_encode([t[0], t[1], t[2]]);
                            let q = [
                                to_unorm(e[0], -1.0, 1.0, codes[0]),
                                to_unorm(e[1], -1.0, 1.0, codes[1]),
                            ];
                            let back = octahedral_decode([
                                from_unorm(q[0], -1.0, 1.0, codes[0]),
                                from_unorm(q[1], -1.0, 1.0, codes[1]),
                            ]);
                            let w = if t[3] < 0.0 { 0 } else { codes[3] };
                            (
                                vec![q[0], q[1], 0, w][..floats].to_vec(),
                                vec![back[0], back[1], back[2], t[3]][..floats].to_vec(),
                            )
                        }
                    };
                    for c in 0..floats {
                        assert_eq!(
                            q[c * width + x],
                            want_q[c],
                            "{quantizer:?} texel {t:?} channel {c}"
                        );
                        assert_eq!(
                            d[c * width + x].to_bits(),
                            want_d[c].to_bits(),
                            "{quantizer:?} texel {t:?} channel {c}"
                        );
                    }
                }
                let mut bytes = vec![0u8; floats * width * 2];
                interleave_be(&q, width, floats, &mut bytes);
                for x in 0..width {
                    for c in 0..floats {
                        let at = (x * floats + c) * 2;
                        assert_eq!(
                            u16::from_be_bytes([bytes[at], bytes[at + 1]]),
                            q[c * width + x]
                        );
                    }
                }
            }
        }
        // Empty bounds (min > max, as before any texel): every sample 0.
        let row = vec![1.0f32; 3 * 4];
        let (mut q, mut d) = (vec![9u16; 12], vec![0f32; 12]);
        let empty = [[f32::INFINITY; 4], [f32::NEG_INFINITY; 4]];
        let quantizer = RowQuantizer::Bounds {
            bounds: empty,
            codes: [u16::MAX; 4],
        };
        quantize_planar_row(&quantizer, &row, 4, 3, &mut q, &mut d);
        assert!(q.iter().all(|&v| v == 0));
    }

    #[test]
    fn packed_normals_stay_within_0_63_degrees_and_decode_as_the_shader_does() {
        // A dense sweep of the sphere (poles, the seam of the lower half,
        // the axes): every direction comes back within 0.63 degrees, the
        // best of the four 8-bit codes around it (Cigolle et al. 2014
        // report 0.94 degrees for plain rounding of 8 + 8 bits).
        let mut worst = 0.0f64;
        for i in 0..=180 {
            for j in 0..360 {
                let (t, p) = ((i as f32).to_radians(), (j as f32).to_radians());
                let n = [t.sin() * p.cos(), t.sin() * p.sin(), t.cos()];
                worst = worst.max(angle_degrees(n, unpack_normal(pack_normal(n))));
            }
        }
        assert!(worst <= 0.64, "worst {worst}");
        // The code's halves: ux (x) in the high byte, uy (y) in the low
        // one; +x is e = (1, 0), ux = 255, uy = 127 or 128.
        assert_eq!(pack_normal([1.0, 0.0, 0.0]) >> 8, 255);
        assert!(unpack_normal((255 << 8) | 128)[0] > 0.99);
        // e = (1, -1) is the -z pole.
        assert!(unpack_normal(255 << 8)[2] < -0.99);
    }

    #[test]
    fn normalised_planes_give_the_scalar_codes_and_values_bit_for_bit() {
        // Values inside and outside the bounds, both zeros, the bounds
        // themselves, halves between codes, NaN and infinities, over
        // lengths that are not a multiple of the lane count: each path's
        // codes and decoded bits must be `to_unorm`'s and `from_unorm`'s.
        let mut values: Vec<f32> = (0..997).map(|i| (i as f32 * 0.731).sin() * 3.1).collect();
        values.extend([
            -2.5,
            2.5,
            0.0,
            -0.0,
            1e-30,
            -7.0,
            9.0,
            f32::NAN,
            f32::INFINITY,
        ]);
        values.extend([f32::NEG_INFINITY, f32::MIN, f32::MAX]);
        // Exactly halfway between two 8-bit codes over [0, 255].
        values.extend((0..40).map(|k| k as f32 + 0.5));
        for (lo, hi, max) in [
            (-2.5, 2.5, u16::MAX),
            (-1.0, 1.5, 1023),
            (0.0, 255.0, 255),
            (3.0, 3.5, 3),
        ] {
            for len in [values.len(), values.len() - 5, 7, 0] {
                let values = &values[..len];
                for path in ["dispatched", "portable"] {
                    let (mut q, mut d) = (vec![7u16; len], vec![f32::NAN; len]);
                    if path == "dispatched" {
                        to_unorm_plane(values, lo, hi, max, &mut q, &mut d);
                    } else {
                        to_unorm_portable(values, [lo, hi], max, &mut q, &mut d, 0);
                    }
                    for (i, v) in values.iter().enumerate() {
                        let want = to_unorm(*v, lo, hi, max);
                        assert_eq!(q[i], want, "{path} [{lo}, {hi}] {max}: {v}");
                        let back = from_unorm(want, lo, hi, max);
                        assert_eq!(d[i].to_bits(), back.to_bits(), "{path}: {v}");
                    }
                }
            }
        }
    }

    #[test]
    fn planar_packing_gives_the_scalar_codes_and_scores_bit_for_bit() {
        // Unit normals over the sphere, unnormalised and tiny ones, axes,
        // both zeros, the seam of the lower half, and lengths that are not
        // a multiple of the lane count (the tail goes through the scalar
        // function): codes and score bits must be the scalar ones.
        let mut normals: Vec<[f32; 3]> = Vec::new();
        for i in 0..=90 {
            for j in 0..180 {
                let (t, p) = ((i as f32 * 2.0).to_radians(), (j as f32 * 2.0).to_radians());
                let n = [t.sin() * p.cos(), t.sin() * p.sin(), t.cos()];
                normals.push(n);
                normals.push(n.map(|v| v * 3.7));
                normals.push(n.map(|v| v * 1e-30));
            }
        }
        normals.extend([
            [0.0, 0.0, 0.0],
            [-0.0, 0.0, -0.0],
            [1.0, 0.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.0, 0.0, -1.0],
            [0.5, -0.5, -0.0],
            [-0.0, -0.0, -1.0],
            [1e-38, 0.0, -1e-38],
        ]);
        for len in [normals.len(), normals.len() - 3, 7, 0] {
            let planes: [Vec<f32>; 3] =
                [0, 1, 2].map(|c| normals[..len].iter().map(|n| n[c]).collect());
            let planes = [&planes[0][..], &planes[1], &planes[2]];
            // The AVX2 path where this CPU has it, and the portable lanes.
            let dispatched = |codes: &mut [u16], scores: &mut [f32]| {
                pack_normals_planar(planes, codes, scores);
            };
            let portable = |codes: &mut [u16], scores: &mut [f32]| {
                pack_normals_portable(planes, codes, scores, 0);
            };
            for (path, pack) in [
                ("dispatched", &dispatched as &dyn Fn(&mut [u16], &mut [f32])),
                ("portable", &portable),
            ] {
                let (mut codes, mut scores) = (vec![0u16; len], vec![0f32; len]);
                pack(&mut codes, &mut scores);
                for (i, n) in normals[..len].iter().enumerate() {
                    let (code, score) = pack_normal_scored(*n);
                    assert_eq!(codes[i], code, "{path}: normal {n:?}");
                    assert_eq!(scores[i].to_bits(), score.to_bits(), "{path}: normal {n:?}");
                }
            }
        }
    }
}
