//! The figures a measurement gathers (per clip and output) and the
//! verdict of a clip against tolerances.

use glam::DVec3;
use serde::Serialize;

/// `rigbake verify`'s default `--tolerance`: position error at frame times
/// beyond the recorded errors, relative to the bounding-box diagonal. The
/// bake warns when dropped influences alone exceed it.
pub const DEFAULT_RELATIVE_TOLERANCE: f64 = 1e-5;

/// The smallest extent below which a recorded position bound is never
/// called absurd (degenerate, point-like models).
pub const ABSURD_BOUND_FLOOR: f64 = 1e-3;

/// Which reconstruction path an output is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Output {
    /// Bone-matrix texture + bone-weight channels.
    Bones,
    /// Vertex animation textures.
    Vat,
}

impl Output {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bones => "bones",
            Self::Vat => "vat",
        }
    }
}

/// Error statistics over many vertex comparisons.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Time samples.
    pub samples: usize,
    /// Vertex comparisons.
    pub vertices: u64,
    /// Largest position distance (model units).
    pub position_max: f64,
    /// Sum of position distances.
    pub position_sum: f64,
    /// Largest `distance - recorded bound` (0 when all are within).
    pub position_excess_max: f64,
    /// Largest recorded encoding bound a vertex was judged by (f16 and
    /// PNG16/EXR16 errors the bake recorded; 0 for exact bakes).
    pub position_bound_max: f64,
    /// Largest loss the bake recorded for dropped bone influences
    /// (`--max-influences` below the source's count; 0 when none).
    pub position_loss_max: f64,
    /// Largest `distance - (encoding bound + recorded loss)`: the excess
    /// when the recorded loss is accepted.
    pub position_excess_after_loss_max: f64,
    /// Normal comparisons.
    pub normals: u64,
    /// Largest normal angle (degrees).
    pub normal_max: f64,
    /// Sum of normal angles.
    pub normal_sum: f64,
    /// Normal comparisons that have a recorded bound to be judged against.
    pub normals_judged: u64,
    /// Largest `angle - recorded bound` over the judged ones (0 when within).
    pub normal_excess_max: f64,
    /// Comparisons whose recorded bound was NaN, infinite, negative or
    /// absurd: judged with no bound, and the check fails.
    pub bad_bounds: u64,
    /// The box of every position the bake played back, in place (before
    /// its recorded root motion moves it), in the output's space: what the
    /// recorded animated bounds must hold ([`super::records`]). `None`
    /// before any vertex.
    pub played: Option<([f64; 3], [f64; 3])>,
}

/// The larger of two values, NaN if either is NaN (`f64::max` would drop
/// a NaN and let a broken sample pass unseen).
pub fn max_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// A recorded error bound as a comparison may use it: `None` when it is
/// NaN, infinite or negative (the comparison then counts as unusable).
fn usable_bound(bound: f64) -> Option<f64> {
    (bound.is_finite() && bound >= 0.0).then_some(bound)
}

/// The running figures of one primitive of one path at one sample,
/// vertex by vertex, before [`Stats::add`] judges them by the primitive's
/// recorded loss and normal bound.
#[derive(Debug, Clone, Copy)]
pub struct Tally {
    vertices: u64,
    /// Whether a distance was NaN.
    nan: bool,
    bad: u64,
    sum: f64,
    max: f64,
    excess: f64,
    bound: f64,
    normals: u64,
    normal_nan: bool,
    normal_sum: f64,
    normal_max: f64,
    /// The box of the played positions (in place).
    played: (DVec3, DVec3),
    /// The box of the directly evaluated positions.
    pub direct: (DVec3, DVec3),
}

/// An empty box.
pub const EMPTY_BOX: (DVec3, DVec3) = (DVec3::INFINITY, DVec3::NEG_INFINITY);

impl Default for Tally {
    fn default() -> Self {
        Self {
            vertices: 0,
            nan: false,
            bad: 0,
            sum: 0.0,
            max: 0.0,
            excess: 0.0,
            bound: 0.0,
            normals: 0,
            normal_nan: false,
            normal_sum: 0.0,
            normal_max: 0.0,
            played: EMPTY_BOX,
            direct: EMPTY_BOX,
        }
    }
}

impl Tally {
    /// One position `error` (the distance from the direct evaluation),
    /// judged by its recorded `bound`.
    #[inline(always)]
    pub fn position(&mut self, error: f64, bound: f64) {
        let usable = bound.is_finite() && bound >= 0.0;
        let bound = if usable { bound } else { 0.0 };
        self.vertices += 1;
        self.bad += u64::from(!usable);
        self.nan |= error.is_nan();
        self.sum += error;
        // (A NaN error is flagged: the maxima by a plain compare.)
        let max = |a: f64, b: f64| if b > a { b } else { a };
        self.max = max(self.max, error);
        self.excess = max(self.excess, error - bound);
        self.bound = max(self.bound, bound);
    }

    /// One normal comparison of `degrees`.
    #[inline(always)]
    pub fn normal(&mut self, degrees: f64) {
        self.normals += 1;
        self.normal_nan |= degrees.is_nan();
        self.normal_sum += degrees;
        self.normal_max = self.normal_max.max(degrees);
    }

    /// Grows the boxes by a position played back in place and its direct
    /// evaluation.
    #[inline(always)]
    pub fn boxes(&mut self, played: DVec3, direct: DVec3) {
        self.played = (self.played.0.min(played), self.played.1.max(played));
        self.direct = (self.direct.0.min(direct), self.direct.1.max(direct));
    }
}

impl Stats {
    /// Adds one primitive's [`Tally`], with the `loss` the bake recorded
    /// for its dropped influences and the bound its normals are judged by
    /// (`None`: not judged).
    pub fn add(&mut self, t: &Tally, loss: f64, normal_bound: Option<f64>) {
        if t.vertices > 0 {
            let n = t.vertices;
            self.vertices += n;
            let loss = usable_bound(loss).unwrap_or_else(|| {
                self.bad_bounds += n;
                0.0
            });
            self.bad_bounds += t.bad;
            let nan = |v: f64| if t.nan { f64::NAN } else { v };
            self.position_sum += t.sum;
            self.position_loss_max = max_nan(self.position_loss_max, loss);
            self.position_max = max_nan(self.position_max, nan(t.max));
            self.position_excess_max = max_nan(self.position_excess_max, nan(t.excess));
            self.position_excess_after_loss_max =
                max_nan(self.position_excess_after_loss_max, nan(t.excess - loss));
            self.position_bound_max = max_nan(self.position_bound_max, t.bound);
            if t.played.0.x <= t.played.1.x {
                self.grow_played(Some((t.played.0.to_array(), t.played.1.to_array())));
            }
        }
        if t.normals > 0 {
            let n = t.normals;
            let max = if t.normal_nan { f64::NAN } else { t.normal_max };
            self.normals += n;
            self.normal_sum += t.normal_sum;
            self.normal_max = max_nan(self.normal_max, max);
            if let Some(bound) = normal_bound {
                let bound = usable_bound(bound)
                    .filter(|b| *b <= 180.0)
                    .unwrap_or_else(|| {
                        self.bad_bounds += n;
                        0.0
                    });
                self.normals_judged += n;
                self.normal_excess_max = max_nan(self.normal_excess_max, max - bound);
            } else if t.normal_nan {
                self.normal_excess_max = f64::NAN;
            }
        }
    }

    fn grow_played(&mut self, other: Option<([f64; 3], [f64; 3])>) {
        self.played = match (self.played, other) {
            (Some((a, b)), Some((c, d))) => Some((
                std::array::from_fn(|k| a[k].min(c[k])),
                std::array::from_fn(|k| b[k].max(d[k])),
            )),
            (a, b) => a.or(b),
        };
    }

    /// Adds another statistics' comparisons.
    pub fn merge(&mut self, o: &Stats) {
        self.samples += o.samples;
        self.vertices += o.vertices;
        self.position_max = max_nan(self.position_max, o.position_max);
        self.position_sum += o.position_sum;
        self.position_excess_max = max_nan(self.position_excess_max, o.position_excess_max);
        self.position_bound_max = max_nan(self.position_bound_max, o.position_bound_max);
        self.position_loss_max = max_nan(self.position_loss_max, o.position_loss_max);
        self.position_excess_after_loss_max = max_nan(
            self.position_excess_after_loss_max,
            o.position_excess_after_loss_max,
        );
        self.normals += o.normals;
        self.normal_max = max_nan(self.normal_max, o.normal_max);
        self.normal_sum += o.normal_sum;
        self.normals_judged += o.normals_judged;
        self.normal_excess_max = max_nan(self.normal_excess_max, o.normal_excess_max);
        self.bad_bounds += o.bad_bounds;
        self.grow_played(o.played);
    }

    /// Whether any measured value is NaN (never a pass).
    pub fn has_nan(&self) -> bool {
        [
            self.position_max,
            self.position_sum,
            self.position_excess_max,
            self.position_bound_max,
            self.position_loss_max,
            self.position_excess_after_loss_max,
            self.normal_max,
            self.normal_sum,
            self.normal_excess_max,
        ]
        .iter()
        .any(|v| v.is_nan())
    }

    /// Mean position distance.
    pub fn position_mean(&self) -> f64 {
        if self.vertices > 0 {
            self.position_sum / self.vertices as f64
        } else {
            0.0
        }
    }

    /// Mean normal angle.
    pub fn normal_mean(&self) -> f64 {
        if self.normals > 0 {
            self.normal_sum / self.normals as f64
        } else {
            0.0
        }
    }
}

/// The statistics of one clip of one output.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipStats {
    /// Index into the clip table.
    pub clip: usize,
    /// At frame times.
    pub frames: Stats,
    /// At mid-frame times.
    pub mid: Stats,
}

/// The statistics of one output.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputStats {
    /// Which path.
    pub output: Output,
    /// Primitives compared.
    pub primitives: usize,
    /// Diagonal of the box around every directly evaluated position at the
    /// checked frame times, in the output's model space.
    pub diagonal: f64,
    /// One entry per checked clip, in clip-table order.
    pub clips: Vec<ClipStats>,
}

/// The tolerances a run judges by.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerances {
    /// Position error at frame times beyond the recorded encoding errors,
    /// relative to the output's bounding-box diagonal.
    pub relative: f64,
    /// Normal error at frame times beyond the recorded errors, degrees.
    pub normal_degrees: f64,
    /// Position error at mid-frame times (beyond recorded errors), relative
    /// to the diagonal; `None`: mid-frame errors are reported, not judged.
    pub mid_relative: Option<f64>,
    /// Accept the loss the bake recorded for dropped bone influences
    /// (`--accept-recorded-loss`): judge positions against the encoding
    /// bound plus that loss. Without it, against the encoding bound only,
    /// so a bake that dropped influences fails when its error against the
    /// source exceeds the tolerance.
    pub accept_recorded_loss: bool,
}

/// Judges one clip: the failures, in words (empty when it passes).
///
/// Never a pass without evidence: no sample measured, a NaN anywhere, a
/// diagonal that is not finite, or a recorded error bound that is NaN,
/// infinite, negative or larger than the whole model (absurd) fails.
pub fn judge(c: &ClipStats, diagonal: f64, t: &Tolerances) -> Vec<String> {
    let mut failures = Vec::new();
    if c.frames.samples == 0 || c.frames.vertices == 0 {
        failures.push("no sample was measured at frame times (nothing to judge)".to_owned());
    }
    if c.frames.has_nan() || c.mid.has_nan() || !diagonal.is_finite() {
        failures.push("a measured error is NaN or the model extent is not finite".to_owned());
    }
    let bad = c.frames.bad_bounds + c.mid.bad_bounds;
    if bad > 0 {
        failures.push(format!(
            "{bad} comparison(s) had a recorded error bound that is NaN, infinite, negative or out of range (not used)"
        ));
    }
    let bound = max_nan(c.frames.position_bound_max, c.mid.position_bound_max);
    if bound > diagonal.max(ABSURD_BOUND_FLOOR) {
        failures.push(format!(
            "the recorded error bound {bound:.3e} is larger than the model itself (diagonal {diagonal:.3e}); the bake's recorded errors are not credible"
        ));
    }
    let allowed = t.relative * diagonal;
    let (excess, kind) = if t.accept_recorded_loss {
        let e = c.frames.position_excess_after_loss_max;
        (e, "encoding and influence-loss ")
    } else {
        (c.frames.position_excess_max, "encoding ")
    };
    if excess > allowed {
        let rel = |v: f64| v / diagonal.max(f64::MIN_POSITIVE);
        let loss = c.frames.position_loss_max;
        let max = c.frames.position_max;
        let mut text = format!(
            "position error at frame times against the source is {max:.3e} ({:.3e} of the diagonal), {excess:.3e} beyond the recorded {kind}bound (tolerance {:.1e})",
            rel(max),
            t.relative
        );
        if loss > 0.0 && !t.accept_recorded_loss {
            text.push_str(&format!(
                "; the bake dropped bone influences (--max-influences) and recorded a loss of up to {loss:.3e} ({:.3e} of the diagonal): pass --accept-recorded-loss to accept it",
                rel(loss)
            ));
        }
        failures.push(text);
    }
    if c.frames.normals_judged > 0 && c.frames.normal_excess_max > t.normal_degrees {
        failures.push(format!(
            "normal error at frame times exceeds the recorded bound by {:.4} degrees (tolerance {})",
            c.frames.normal_excess_max, t.normal_degrees
        ));
    }
    let mid = t.mid_relative.unwrap_or(f64::INFINITY);
    if c.mid.position_excess_max > mid * diagonal {
        failures.push(format!(
            "position error at mid-frame times is {:.3e} of the diagonal (tolerance {:.1e})",
            c.mid.position_excess_max / diagonal.max(f64::MIN_POSITIVE),
            mid
        ));
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clip(frames: Stats) -> ClipStats {
        ClipStats {
            clip: 0,
            frames,
            mid: Stats::default(),
        }
    }

    /// One sample of comparisons `(error, bound)` of a primitive with the
    /// recorded `loss`, and normal angles judged by `normal`.
    fn measured(errors: &[(f64, f64)], loss: f64, angles: &[f64], normal: Option<f64>) -> Stats {
        let mut t = Tally::default();
        for &(e, b) in errors {
            t.position(e, b);
            t.boxes(DVec3::ZERO, DVec3::ONE);
        }
        for &a in angles {
            t.normal(a);
        }
        let mut s = Stats {
            samples: 1,
            ..Stats::default()
        };
        s.add(&t, loss, normal);
        s
    }

    fn tolerances() -> Tolerances {
        Tolerances {
            relative: 1e-4,
            normal_degrees: 0.1,
            mid_relative: None,
            accept_recorded_loss: false,
        }
    }

    #[test]
    fn verdicts_need_evidence() {
        let judge = |s: Stats| super::judge(&clip(s), 2.0, &tolerances());
        let positions = |errors: &[(f64, f64)]| measured(errors, 0.0, &[], None);
        // A clean measurement passes.
        assert!(judge(positions(&[(0.0, 0.0), (1e-5, 0.0)])).is_empty());
        // NaN anywhere fails, in any order (f64::max would drop it).
        for errors in [[(f64::NAN, 0.0), (0.0, 0.0)], [(0.0, 0.0), (f64::NAN, 0.0)]] {
            let f = judge(positions(&errors));
            assert!(f.iter().any(|f| f.contains("NaN")), "{f:?}");
        }
        let mut merged = positions(&[(0.0, 0.0)]);
        merged.merge(&positions(&[(f64::NAN, 0.0)]));
        merged.merge(&positions(&[(0.0, 0.0)]));
        assert!(!judge(merged).is_empty());
        // A recorded bound that is NaN, infinite or negative is not added to
        // the tolerance, and fails.
        for bound in [f64::NAN, f64::INFINITY, -1.0] {
            let s = positions(&[(0.5, bound)]);
            assert_eq!(s.bad_bounds, 1);
            assert_eq!(s.position_excess_max, 0.5, "{bound}");
            assert!(!judge(s).is_empty(), "{bound}");
        }
        // An absurd bound (larger than the model) fails even if it covers
        // the error.
        let f = judge(positions(&[(0.5, 1e9)]));
        assert!(
            f.iter().any(|f| f.contains("larger than the model")),
            "{f:?}"
        );
        // Zero samples is not a pass.
        assert!(!judge(Stats::default()).is_empty());
        // A NaN normal fails, judged or not; an unusable normal bound too.
        assert!(!judge(measured(&[(0.0, 0.0)], 0.0, &[f64::NAN], None)).is_empty());
        let s = measured(&[(0.0, 0.0)], 0.0, &[1.0], Some(f64::NAN));
        assert_eq!(s.bad_bounds, 1);
        assert!(!judge(s).is_empty());
        // A normal beyond its bound by more than the tolerance fails.
        let s = measured(&[(0.0, 0.0)], 0.0, &[0.05, 0.7], Some(0.5));
        assert_eq!((s.normals, s.normals_judged), (2, 2));
        assert!((s.normal_excess_max - 0.2).abs() < 1e-12);
        assert!(!judge(s).is_empty());
    }

    #[test]
    fn dropped_influences_fail_unless_their_recorded_loss_is_accepted() {
        // The error against the source (0.5 of a 2.0 diagonal) is within
        // the loss the bake recorded (0.6) but far over the tolerance.
        let mut s = measured(&[(0.5, 0.0)], 0.6, &[], None);
        assert_eq!(s.position_loss_max, 0.6);
        assert_eq!(s.position_excess_max, 0.5);
        let f = judge(&clip(s), 2.0, &tolerances());
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].contains("5.000e-1") && f[0].contains("--accept-recorded-loss"),
            "{f:?}"
        );
        let accepting = Tolerances {
            accept_recorded_loss: true,
            ..tolerances()
        };
        assert!(judge(&clip(s), 2.0, &accepting).is_empty());
        // Accepting the loss does not hide an error beyond it.
        s.merge(&measured(&[(0.7, 0.0)], 0.6, &[], None));
        let f = judge(&clip(s), 2.0, &accepting);
        assert!(f.iter().any(|f| f.contains("influence-loss")), "{f:?}");
    }
}
