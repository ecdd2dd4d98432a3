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
    pub played: Option<(DVec3, DVec3)>,
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

/// Grows the box `b` (`None`: empty) to hold `lo` to `hi`.
pub(super) fn grow(b: &mut Option<(DVec3, DVec3)>, lo: DVec3, hi: DVec3) {
    *b = Some(b.map_or((lo, hi), |(a, c)| (a.min(lo), c.max(hi))));
}

/// The running figures of one primitive of one path at one sample,
/// vertex by vertex, before [`Stats::add`] judges them by the primitive's
/// recorded loss and normal bound.
#[derive(Debug, Clone, Copy, Default)]
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
    played: Option<(DVec3, DVec3)>,
    /// The box of the directly evaluated positions.
    pub direct: Option<(DVec3, DVec3)>,
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
        grow(&mut self.played, played, played);
        grow(&mut self.direct, direct, direct);
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
            if let Some((lo, hi)) = t.played {
                grow(&mut self.played, lo, hi);
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
        if let Some((lo, hi)) = o.played {
            grow(&mut self.played, lo, hi);
        }
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
