//! The angle between two normals, four at a time: `libm`'s `atan2`
//! (musl's) written with SIMD lanes ([`wide::f64x4`]) and selects instead
//! of branches, giving `libm::atan2`'s bits on the inputs `verify` has (a
//! length, so `y >= 0`, and a dot product; the tests compare the two on
//! every case musl tells apart).

// The constants are musl's, digit for digit (they round to the bits libm
// uses; pi/4 and pi/2 among them on purpose).
#![allow(clippy::excessive_precision, clippy::approx_constant)]

use wide::{CmpEq, CmpGe, CmpLt, f64x4, u64x4};

/// `atan(0.5)`, `atan(1)`, `atan(1.5)`, `atan(inf)`: high parts.
const ATANHI: [f64; 4] = [
    4.63647609000806093515e-01,
    7.85398163397448278999e-01,
    9.82793723247329054082e-01,
    1.57079632679489655800e+00,
];

/// The same angles' low parts.
const ATANLO: [f64; 4] = [
    2.26987774529616870924e-17,
    3.06161699786838301793e-17,
    1.39033110312309984516e-17,
    6.12323399573676603587e-17,
];

/// musl's odd and even polynomial coefficients of `atan` on [0, 7/16].
const AT: [f64; 11] = [
    3.33333333333329318027e-01,
    -1.99999999998764832476e-01,
    1.42857142725034663711e-01,
    -1.11111104054623557880e-01,
    9.09088713343650656196e-02,
    -7.69187620504482999495e-02,
    6.66107313738753120669e-02,
    -5.83357013379057348645e-02,
    4.97687799461593236017e-02,
    -3.65315727442169155270e-02,
    1.62858201153657823623e-02,
];

const PI: f64 = 3.1415926535897931160E+00;
const PI_LO: f64 = 1.2246467991473531772E-16;

/// The double whose representation has `high` as its upper 32 bits and
/// zeros below: for `x >= 0`, `x < bound(h)` exactly when musl's
/// `ix < h`.
const fn bound(high: u64) -> f64 {
    f64::from_bits(high << 32)
}

fn splat(x: f64) -> f64x4 {
    f64x4::splat(x)
}

/// `x` with the lower 32 bits of its representation cleared (musl
/// compares only the upper ones).
#[inline(always)]
fn upper(x: f64x4) -> f64x4 {
    let bits: u64x4 = bytemuck::cast(x);
    bytemuck::cast(bits & u64x4::splat(0xffff_ffff_0000_0000))
}

/// 2^64: adding 64 to an exponent (musl's `+ (64 << 20)` on `ix`).
const TWO_64: f64 = 18446744073709551616.0;

/// `atan(x)` for `x >= 0` (or NaN), musl's reduction and polynomial with
/// its cases picked by selects.
#[inline(always)]
fn atan_nonneg(x: f64x4) -> f64x4 {
    let below = |h: u64| x.cmp_lt(splat(bound(h)));
    let tiny = below(0x3e40_0000); // below 2^-27: atan(x) = x
    let small = below(0x3fdc_0000); // below 7/16: no reduction
    let at = |k: usize| splat(AT[k]);
    if small.all() {
        // What the selects below give when every lane is small (no NaN,
        // none huge), without the reduction's division: `verify`'s angles
        // nearly always are.
        return tiny.blend(x, x - x * sums(x, at));
    }
    let huge = x.cmp_ge(splat(bound(0x4410_0000))); // from 2^66 on: pi/2
    // id 0: [7/16, 11/16), 1: [11/16, 19/16), 2: [19/16, 39/16), 3: beyond.
    let (c0, c1, c2) = (below(0x3fe6_0000), below(0x3ff3_0000), below(0x4003_8000));
    let pick = |a: f64x4, b: f64x4, c: f64x4, d: f64x4| c0.blend(a, c1.blend(b, c2.blend(c, d)));
    let one = splat(1.0);
    let num = pick(splat(2.) * x - one, x - one, x - splat(1.5), -one);
    let den = pick(splat(2.) + x, x + one, one + splat(1.5) * x, x);
    let table = |t: &[f64; 4]| pick(splat(t[0]), splat(t[1]), splat(t[2]), splat(t[3]));
    let (hi, lo) = (table(&ATANHI), table(&ATANLO));
    let t = small.blend(x, num / den);
    let s = sums(t, at);
    let reduced = hi - ((t * s - lo) - t);
    let unreduced = t - t * s;
    let r = small.blend(unreduced, reduced);
    let r = tiny.blend(x, r);
    let r = huge.blend(splat(ATANHI[3] + f64::from_bits(0x0380_0000_0000_0000)), r);
    x.is_nan().blend(x, r)
}

/// `libm::atan2(y, x)` lane by lane, for `y >= 0` (not `-0.0`) and finite
/// or NaN arguments.
#[inline(always)]
pub(super) fn atan2_nonneg_y(y: f64x4, x: f64x4) -> f64x4 {
    let zero = splat(0.0);
    let x_negative = splat(1.0).copysign(x).cmp_lt(zero);
    let ax = x.abs();
    // |y/x| below 2^-64 with x < 0: musl takes atan as 0 (`iy + (64 <<
    // 20) < ix`).
    let vanishing = x_negative & (y * splat(TWO_64)).cmp_lt(upper(ax));
    let z = vanishing.blend(zero, atan_nonneg((y / x).abs()));
    let r = x_negative.blend(splat(PI) - (z - splat(PI_LO)), z);
    // |y/x| beyond 2^64 (`ix + (64 << 20) < iy`), or x = 0: pi/2. y = 0:
    // y or pi.
    let steep = (ax * splat(TWO_64)).cmp_lt(upper(y)) | x.cmp_eq(zero);
    let r = steep.blend(splat(PI / 2.0), r);
    let r = y.cmp_eq(zero).blend(x_negative.blend(splat(PI), y), r);
    (x.is_nan() | y.is_nan()).blend(x + y, r)
}

/// musl's two polynomial sums of `atan` at `t`, on lanes or on one
/// value (`at(k)` is coefficient `k` of [`AT`] as a `T`): the same
/// operations in the same order either way.
#[inline(always)]
fn sums<T>(t: T, at: impl Fn(usize) -> T) -> T
where
    T: Copy + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let z = t * t;
    let w = z * z;
    let s1 = z * (at(0) + w * (at(2) + w * (at(4) + w * (at(6) + w * (at(8) + w * at(10))))));
    let s2 = w * (at(1) + w * (at(3) + w * (at(5) + w * (at(7) + w * at(9)))));
    s1 + s2
}

/// [`atan2_nonneg_y`] over columns: `out[i] = atan2(y[i], x[i])` (as many
/// as the shortest of the three holds), with libm's bits. When every pair
/// has `x > 0` and `|y / x|` below 7/16 (normals less than about 23.6°
/// apart: `verify`'s blocks nearly always), musl's atan needs no
/// reduction, and that case is written as a plain loop over the columns,
/// which compiles to the widest vectors the copy is built for; any other
/// block goes four at a time through [`atan2_nonneg_y`].
#[inline(always)]
pub(super) fn atan2_columns(y: &[f64], x: &[f64], out: &mut [f64]) {
    let n = y.len().min(x.len()).min(out.len());
    let (y, x, out) = (&y[..n], &x[..n], &mut out[..n]);
    let (small, tiny) = (bound(0x3fdc_0000), bound(0x3e40_0000));
    let mut common = true;
    for i in 0..n {
        let r = (y[i] / x[i]).abs();
        out[i] = r;
        common &= (x[i] > 0.0) & (r < small);
    }
    if common {
        // atan2 = atan(|y / x|) here: no quadrant, steep or zero case
        // applies (y = 0 gives r = 0, which the tiny case returns).
        for r in out.iter_mut() {
            let t = *r;
            let reduced = t - t * sums(t, |k| AT[k]);
            *r = if t < tiny { t } else { reduced };
        }
        return;
    }
    for i in (0..n).step_by(4) {
        let lanes = |c: &[f64], pad: f64| {
            let mut q = [pad; 4];
            let tail = &c[i..n.min(i + 4)];
            q[..tail.len()].copy_from_slice(tail);
            f64x4::new(q)
        };
        let a = atan2_nonneg_y(lanes(y, 0.0), lanes(x, 1.0)).to_array();
        let m = (n - i).min(4);
        out[i..i + m].copy_from_slice(&a[..m]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit for bit `libm::atan2` over every range musl's `atan` reduces
    /// differently, both signs of `x`, zeros, NaN and the extremes of the
    /// ratio; plus a dense sweep of the unit-normal angles `verify` meets.
    #[test]
    fn gives_libms_bits() {
        let mut cases: Vec<(f64, f64)> = Vec::new();
        let ratios = [
            0.0,
            1e-300,
            1e-30,
            1e-20,
            7e-9,
            7.4e-9,
            7.5e-9,
            1e-8,
            1e-4,
            0.1,
            0.4,
            0.4375,
            0.43749999999999994,
            0.5,
            0.6875,
            0.7,
            1.0,
            1.1875,
            1.2,
            2.0,
            2.4375,
            3.0,
            1e3,
            1e10,
            1e19,
            1e20,
            7e19,
            1e30,
            1e300,
        ];
        for &r in &ratios {
            for x in [1.0, 0.5, 2.0, 1e-10, 3.7] {
                cases.push((r * x, x));
                cases.push((r * x, -x));
                cases.push((x, r * x));
                cases.push((x, -r * x));
            }
        }
        // Every angle from 0 to 180 degrees in small steps, on unit
        // vectors (y = sin, x = cos), and just around the thresholds.
        for k in 0..=200_000 {
            let a = std::f64::consts::PI * f64::from(k) / 200_000.0;
            cases.push((a.sin().abs(), a.cos()));
        }
        for h in [
            0x3e40_0000u64,
            0x3fdc_0000,
            0x3fe6_0000,
            0x3ff3_0000,
            0x4003_8000,
        ] {
            let t = f64::from_bits(h << 32);
            for d in [-2i64, -1, 0, 1, 2] {
                let r = f64::from_bits((t.to_bits() as i64 + d) as u64);
                cases.push((r, 1.0));
                cases.push((r, -1.0));
            }
        }
        cases.extend([
            (0.0, 0.0),
            (0.0, -0.0),
            (1.0, 0.0),
            (1.0, -0.0),
            (f64::NAN, 1.0),
            (1.0, f64::NAN),
            (0.0, -1.0),
        ]);
        // In columns: blocks of one case and blocks mixing them.
        let (ys, xs): (Vec<f64>, Vec<f64>) = cases.iter().copied().unzip();
        for width in [1usize, 3, 4, 7, 128] {
            for start in (0..cases.len()).step_by(width.max(1) * 5 + 1) {
                let end = cases.len().min(start + width);
                let mut got = vec![0.0; end - start];
                atan2_columns(&ys[start..end], &xs[start..end], &mut got);
                for (k, g) in got.iter().enumerate() {
                    let (y, x) = (ys[start + k], xs[start + k]);
                    let want = libm::atan2(y, x);
                    assert!(
                        want.to_bits() == g.to_bits() || (want.is_nan() && g.is_nan()),
                        "atan2({y:e}, {x:e}) in a column of {width}: libm {want:e}, ours {g:e}"
                    );
                }
            }
        }
        // Four equal lanes (the fast path when all are small).
        for &(y, x) in &cases {
            let got = atan2_nonneg_y(f64x4::splat(y), f64x4::splat(x)).to_array();
            let want = libm::atan2(y, x);
            for g in got {
                assert!(
                    want.to_bits() == g.to_bits() || (want.is_nan() && g.is_nan()),
                    "atan2({y:e}, {x:e}) in every lane: libm {want:e}, ours {g:e}"
                );
            }
        }
        // Four at a time, each case in every lane.
        for (k, &(y, x)) in cases.iter().enumerate() {
            let other = cases[(k * 7 + 3) % cases.len()];
            let mut ys = [other.0; 4];
            let mut xs = [other.1; 4];
            let lane = k % 4;
            (ys[lane], xs[lane]) = (y, x);
            let got = atan2_nonneg_y(f64x4::new(ys), f64x4::new(xs)).to_array();
            for l in 0..4 {
                let want = libm::atan2(ys[l], xs[l]);
                assert!(
                    want.to_bits() == got[l].to_bits() || (want.is_nan() && got[l].is_nan()),
                    "atan2({:e}, {:e}): libm {want:e}, ours {:e}",
                    ys[l],
                    xs[l],
                    got[l]
                );
            }
        }
    }
}
