//! Mapping floats to 16-bit integers for PNG: per-axis bounds normalisation
//! and octahedral unit vectors, and the inverse mappings a shader applies.

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

/// `x.round() as u16` for `x` in `[0, 65535]` (NaN: 0), without the libm
/// call: below 2^24 the fraction `x - trunc(x)` is exact, so comparing it
/// with one half rounds exactly as `f32::round` does.
#[inline]
fn round_unorm(x: f32) -> u16 {
    let t = x as u16;
    t + u16::from(x - f32::from(t) >= 0.5)
}

/// The shader's inverse of [`to_unorm16`]: `lo + q / 65535 * (hi - lo)`.
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
    let (x, y) = (e[0], e[1]);
    let z = 1.0 - x.abs() - y.abs();
    let t = (-z).max(0.0);
    let nx = x + if x >= 0.0 { -t } else { t };
    let ny = y + if y >= 0.0 { -t } else { t };
    let len = (nx * nx + ny * ny + z * z).sqrt();
    if len > 0.0 {
        [nx / len, ny / len, z / len]
    } else {
        [0.0, 0.0, 1.0]
    }
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
}
