//! What an encoding costs, per clip: a tally of non-negative errors (one
//! per vertex and frame) that gives their maximum and 99th percentile.
//!
//! The percentile comes from a histogram over the bits of the error as an
//! `f32`: the exponent and the four leading mantissa bits, sixteen buckets
//! an octave, so a bucket's upper edge is at most 1/16 (6.25%) above any
//! error in it. [`ErrorTally::p99`] reports that edge (never above the
//! maximum): an upper bound of the exact percentile, within 6.25%. Counts
//! are integers, so a tally merged from parts in any order is the same:
//! the figures do not depend on the thread count.

/// Buckets of the histogram: every non-negative `f32` bit pattern shifted
/// right by [`SHIFT`] (infinity and NaN land in the last ones).
const BUCKETS: usize = 1 << (31 - SHIFT);

/// Mantissa bits dropped: 23 - 4, leaving sixteen buckets an octave.
const SHIFT: u32 = 19;

/// The maximum and a histogram of errors (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorTally {
    max: f64,
    count: u64,
    buckets: Vec<u64>,
}

impl Default for ErrorTally {
    fn default() -> Self {
        Self::new()
    }
}

impl ErrorTally {
    /// An empty tally (no errors: maximum and percentile 0).
    pub fn new() -> Self {
        Self {
            max: 0.0,
            count: 0,
            buckets: vec![0; BUCKETS],
        }
    }

    /// Counts one error (`>= 0`; a NaN counts as the largest possible and
    /// makes the maximum NaN).
    #[inline]
    pub fn add(&mut self, error: f32) {
        let e = if error.is_nan() {
            f32::INFINITY
        } else {
            error.abs()
        };
        self.buckets[(e.to_bits() >> SHIFT) as usize] += 1;
        self.count += 1;
        if error.is_nan() {
            self.max = f64::NAN;
        } else if f64::from(e) > self.max {
            self.max = f64::from(e);
        }
    }

    /// Adds every error of `other`.
    pub fn merge(&mut self, other: &Self) {
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
        self.count += other.count;
        if self.max.is_nan() || other.max.is_nan() {
            self.max = f64::NAN;
        } else {
            self.max = self.max.max(other.max);
        }
    }

    /// Errors counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest error (0 when none).
    pub fn max(&self) -> f64 {
        self.max
    }

    /// The 99th percentile, from above (see the module docs): the upper
    /// edge of the bucket holding the error of rank `ceil(0.99 n)`, capped
    /// at the maximum; 0 when nothing was counted.
    pub fn p99(&self) -> f64 {
        self.quantile(0.99)
    }

    /// The `q` quantile from above, like [`Self::p99`].
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let edge = f64::from(f32::from_bits(((i as u32) + 1) << SHIFT));
                return if edge.is_nan() {
                    self.max
                } else {
                    edge.min(self.max)
                };
            }
        }
        self.max
    }
}

/// A maximum and a 99th percentile ([`ErrorTally::p99`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ErrorFigure {
    /// The largest error.
    pub max: f64,
    /// The 99th percentile, from above (within 6.25%).
    pub p99: f64,
}

impl ErrorFigure {
    /// The figures of `tally`, each through `f` (an angle key to degrees).
    pub fn of(tally: &ErrorTally, f: impl Fn(f64) -> f64) -> Self {
        Self {
            max: f(tally.max()),
            p99: f(tally.p99()),
        }
    }
}

/// An angle's stand-in for a tally: its sine for angles up to 90 degrees,
/// `2 - sine` beyond, so the order is the angles' order and no arc sine is
/// taken per vertex; [`degrees_of_key`] turns a tallied figure back into
/// degrees. `cos` and `sin` may be of any common positive scale.
#[inline]
pub fn angle_key(cos: f32, sin: f32) -> f32 {
    let len = (cos * cos + sin * sin).sqrt();
    if len == 0.0 {
        return 0.0;
    }
    let s = (sin.abs() / len).min(1.0);
    if cos >= 0.0 { s } else { 2.0 - s }
}

/// Degrees of a figure tallied through [`angle_key`].
pub fn degrees_of_key(key: f64) -> f64 {
    if key.is_nan() {
        return f64::NAN;
    }
    let key = key.clamp(0.0, 2.0);
    if key <= 1.0 {
        key.asin().to_degrees()
    } else {
        180.0 - (2.0 - key).asin().to_degrees()
    }
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
        let exact = 990e-6;
        let p = t.p99();
        assert!(p >= exact && p <= exact * (1.0 + 1.0 / 16.0), "{p}");
        assert_eq!(t.max(), f64::from(1000f32 * 1e-6));
        assert_eq!(t.count(), 1000);
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
        t.add(f32::NAN);
        assert!(t.max().is_nan());
    }

    #[test]
    fn angle_keys_order_like_angles_and_come_back_as_degrees() {
        let key = |deg: f32| angle_key(deg.to_radians().cos(), deg.to_radians().sin());
        for deg in [0.0f32, 0.5, 30.0, 89.0, 91.0, 150.0, 180.0] {
            let back = degrees_of_key(f64::from(key(deg)));
            assert!((back - f64::from(deg)).abs() < 1e-3, "{deg} -> {back}");
        }
        assert!(key(10.0) < key(20.0) && key(80.0) < key(100.0));
    }
}
