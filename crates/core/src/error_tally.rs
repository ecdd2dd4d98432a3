//! What an encoding costs, per clip: a tally of non-negative keys (one per
//! vertex and frame) that gives their maximum and 99th percentile.
//!
//! Keys are whatever orders the errors and is cheap per vertex: a squared
//! distance, or an angle's [`angle_key`]; the figures are turned back into
//! units at the end ([`ErrorFigure::of`]). The percentile comes from a
//! histogram over the bits of the key as an `f32`: the exponent and the
//! four leading mantissa bits, sixteen buckets an octave, so a bucket's
//! upper edge is at most 1/16 above any key in it (a squared distance or a
//! squared sine: 2.2% above the distance or the sine).
//! [`ErrorTally::quantile`] reports that edge (never above the maximum): an
//! upper bound of the exact percentile. Counts are integers and the
//! maximum is a maximum, so a tally merged from parts in any order is the
//! same: the figures do not depend on the thread count.

/// Buckets of the histogram: every non-negative `f32` bit pattern shifted
/// right by [`SHIFT`] (infinity and NaN land in the last ones).
const BUCKETS: usize = 1 << (31 - SHIFT);

/// Mantissa bits dropped: 23 - 4, leaving sixteen buckets an octave.
const SHIFT: u32 = 19;

/// The first bucket of infinity and NaN.
const NOT_FINITE: usize = (0x7f80_0000 >> SHIFT) as usize;

/// The maximum and a histogram of keys (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorTally {
    /// The bits of the largest key as a non-negative `f32` (integer order
    /// is float order there; infinity and NaN patterns rank above every
    /// finite key, and [`Self::max`] finds those in the buckets).
    max_bits: u32,
    buckets: Box<[u64; BUCKETS]>,
}

impl Default for ErrorTally {
    fn default() -> Self {
        Self::new()
    }
}

impl ErrorTally {
    /// An empty tally (nothing counted: maximum and percentile 0).
    pub fn new() -> Self {
        Self {
            max_bits: 0,
            buckets: Box::new([0; BUCKETS]),
        }
    }

    /// Counts one key (`>= 0`; the sign is ignored; a NaN or an infinity
    /// makes the maximum NaN or infinite).
    #[inline]
    pub fn add(&mut self, key: f32) {
        self.extend(std::iter::once(key));
    }

    /// Counts every key of `keys` ([`Self::add`] each), the maximum kept in
    /// a register meanwhile as an integer: a float maximum that minds NaN
    /// is a chain of five dependent instructions a key, an integer one a
    /// single compare and move (this loop ran 3 ns a key on `f32::max`).
    #[inline]
    pub fn extend(&mut self, keys: impl IntoIterator<Item = f32>) {
        let buckets: &mut [u64; BUCKETS] = &mut self.buckets;
        let mut max_bits = self.max_bits;
        for key in keys {
            let bits = key.to_bits() & 0x7fff_ffff;
            buckets[(bits >> SHIFT) as usize] += 1;
            max_bits = max_bits.max(bits);
        }
        self.max_bits = max_bits;
    }

    /// Counts `key(a_i, b_i)` for every texel `i` of two planar triples
    /// (`a[0][i]`, `a[1][i]`, `a[2][i]`; the shortest plane bounds them).
    /// Keys are computed a chunk at a time into a stack buffer by a plain
    /// indexed loop, which the compiler vectorises, then counted: mixed
    /// with the counting, the key's arithmetic ran one texel at a time.
    #[inline]
    pub fn extend_planar(
        &mut self,
        a: [&[f32]; 3],
        b: [&[f32]; 3],
        key: impl Fn([f32; 3], [f32; 3]) -> f32,
    ) {
        const CHUNK: usize = 256;
        let n = a.iter().chain(&b).map(|p| p.len()).min().unwrap_or(0);
        let mut keys = [0f32; CHUNK];
        let mut start = 0;
        while start < n {
            let len = CHUNK.min(n - start);
            let (a, b) = (
                a.map(|p| &p[start..start + len]),
                b.map(|p| &p[start..start + len]),
            );
            let keys = &mut keys[..len];
            for (i, k) in keys.iter_mut().enumerate() {
                *k = key([a[0][i], a[1][i], a[2][i]], [b[0][i], b[1][i], b[2][i]]);
            }
            self.extend(keys.iter().copied());
            start += len;
        }
    }

    /// Adds every key of `other`.
    pub fn merge(&mut self, other: &Self) {
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a += b;
        }
        self.max_bits = self.max_bits.max(other.max_bits);
    }

    /// Keys counted.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// The largest key (0 when none; NaN after a NaN, infinity after an
    /// infinity).
    pub fn max(&self) -> f64 {
        let top = &self.buckets[NOT_FINITE..];
        if top[1..].iter().any(|&n| n > 0) {
            f64::NAN
        } else if top[0] > 0 {
            f64::INFINITY
        } else {
            f64::from(f32::from_bits(self.max_bits))
        }
    }

    /// The 99th percentile, from above (see the module docs).
    pub fn p99(&self) -> f64 {
        self.quantile(0.99)
    }

    /// The `q` quantile from above: the upper edge of the bucket holding
    /// the key of rank `ceil(q n)`, capped at the maximum; 0 when nothing
    /// was counted.
    pub fn quantile(&self, q: f64) -> f64 {
        let count = self.count();
        if count == 0 {
            return 0.0;
        }
        let max = self.max();
        let rank = ((q * count as f64).ceil() as u64).clamp(1, count);
        let mut seen = 0u64;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                if i >= NOT_FINITE {
                    return max;
                }
                let edge = f64::from(f32::from_bits(((i as u32) + 1) << SHIFT));
                return edge.min(max);
            }
        }
        max
    }
}

/// A maximum and a 99th percentile ([`ErrorTally::p99`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ErrorFigure {
    /// The largest error.
    pub max: f64,
    /// The 99th percentile, from above (within 2.2% for distances and
    /// angles tallied squared).
    pub p99: f64,
}

impl ErrorFigure {
    /// The figures of `tally`, each through `f` (a key to its unit); a
    /// figure that is not a number (the error overflowed f32 arithmetic:
    /// values too large to measure) becomes `cap`, the most the unit
    /// holds (`f64::MAX`, or 180 degrees).
    pub fn of(tally: &ErrorTally, f: impl Fn(f64) -> f64, cap: f64) -> Self {
        let finite = |v: f64| if v.is_finite() { v.min(cap) } else { cap };
        Self {
            max: finite(f(tally.max())),
            p99: finite(f(tally.p99())),
        }
    }
}

/// An angle's key for a tally: its squared sine for angles up to 90
/// degrees, `2 - sine^2` beyond, so keys order like the angles and no
/// square root or arc sine is taken per vertex; [`degrees_of_key`] turns a
/// tallied figure back into degrees. `dot` and `cross2` are `a . b` and
/// `|a x b|^2` of the two directions, `norms2` is `|a|^2 |b|^2`.
#[inline]
pub fn angle_key(dot: f32, cross2: f32, norms2: f32) -> f32 {
    if norms2.is_nan() || norms2 <= 0.0 {
        return 0.0;
    }
    let s2 = (cross2 / norms2).min(1.0);
    if dot >= 0.0 { s2 } else { 2.0 - s2 }
}

/// The key of the angle between `a` and `b` ([`angle_key`]).
#[inline]
pub fn angle_key_of(a: [f32; 3], b: [f32; 3]) -> f32 {
    let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let c = [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ];
    let (la, lb) = (
        a[0] * a[0] + a[1] * a[1] + a[2] * a[2],
        b[0] * b[0] + b[1] * b[1] + b[2] * b[2],
    );
    angle_key(dot, c[0] * c[0] + c[1] * c[1] + c[2] * c[2], la * lb)
}

/// Degrees of a figure tallied through [`angle_key`].
pub fn degrees_of_key(key: f64) -> f64 {
    if key.is_nan() {
        return f64::NAN;
    }
    let key = key.clamp(0.0, 2.0);
    if key <= 1.0 {
        key.sqrt().asin().to_degrees()
    } else {
        180.0 - (2.0 - key).sqrt().asin().to_degrees()
    }
}

/// The distance of a figure tallied as a squared distance.
pub fn distance_of_key(key: f64) -> f64 {
    key.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_percentile_is_within_a_sixteenth_above_the_exact_one() {
        let mut t = ErrorTally::new();
        // 1..=1000 (times 1e-6): the exact 99th percentile is 990e-6.
        for i in 1..=1000 {
            t.add(i as f32 * 1e-6);
        }
        let exact = f64::from(990f32 * 1e-6);
        let p = t.p99();
        assert!(p >= exact && p <= exact * (1.0 + 1.0 / 16.0), "{p}");
        assert_eq!(t.max(), f64::from(1000f32 * 1e-6));
        assert_eq!(t.count(), 1000);
        // Squared distances: the distance's percentile within 2.2%.
        let mut d = ErrorTally::new();
        d.extend((1..=1000).map(|i| (i as f32 * 1e-3).powi(2)));
        let p = distance_of_key(d.p99());
        assert!((0.99..=0.99 * 1.022).contains(&p), "{p}");
    }

    #[test]
    fn merging_in_any_order_gives_the_same_tally() {
        let (mut a, mut b, mut c) = (ErrorTally::new(), ErrorTally::new(), ErrorTally::new());
        for i in 0..300 {
            let e = (i as f32).sqrt() * 1e-3;
            [&mut a, &mut b, &mut c][i % 3].add(e);
        }
        let mut x = a.clone();
        x.merge(&b);
        x.merge(&c);
        let mut y = c.clone();
        y.merge(&a);
        y.merge(&b);
        assert_eq!(x, y);
    }

    #[test]
    fn nothing_counted_is_zero_and_a_nan_is_the_maximum() {
        let mut t = ErrorTally::new();
        assert_eq!((t.max(), t.p99()), (0.0, 0.0));
        t.add(1.0);
        t.add(f32::INFINITY);
        assert_eq!(t.max(), f64::INFINITY);
        t.add(f32::NAN);
        assert!(t.max().is_nan());
    }

    #[test]
    fn angle_keys_order_like_angles_and_come_back_as_degrees() {
        let key = |deg: f64| {
            let r = deg.to_radians();
            angle_key_of([1.0, 0.0, 0.0], [r.cos() as f32, r.sin() as f32, 0.0])
        };
        for deg in [0.0, 0.5, 30.0, 89.0, 91.0, 150.0, 180.0] {
            let back = degrees_of_key(f64::from(key(deg)));
            assert!((back - deg).abs() < 2e-2, "{deg} -> {back}");
        }
        assert!(key(10.0) < key(20.0) && key(80.0) < key(100.0));
        assert_eq!(angle_key_of([0.0; 3], [1.0, 0.0, 0.0]), 0.0);
    }
}
