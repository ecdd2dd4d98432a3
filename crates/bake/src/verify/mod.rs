//! The verification measurement: a bake played through the runtime
//! reference (either path it holds) compared with a direct evaluation of its
//! source, at frame times and at mid-frame times, and the verdict of each
//! clip against tolerances. Semantics and tolerances: `docs/runtime.md`.

mod angle;
pub mod isa;
mod measure;
pub mod records;
pub mod report;
mod rows;

pub use measure::{
    ClipStats, Output, OutputStats, Path, Stats, Subject, WINDOW_BYTES, max_nan, measure,
    measure_windowed,
};
use serde::Serialize;

/// `rigbake verify`'s default `--tolerance`: position error at frame times
/// beyond the recorded errors, relative to the bounding-box diagonal. The
/// bake warns when dropped influences alone exceed it.
pub const DEFAULT_RELATIVE_TOLERANCE: f64 = 1e-5;

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

/// The smallest extent below which a recorded position bound is never
/// called absurd (degenerate, point-like models).
pub const ABSURD_BOUND_FLOOR: f64 = 1e-3;

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
    let excess = if t.accept_recorded_loss {
        c.frames.position_excess_after_loss_max
    } else {
        c.frames.position_excess_max
    };
    if excess > allowed {
        let rel = |v: f64| v / diagonal.max(f64::MIN_POSITIVE);
        let loss = c.frames.position_loss_max;
        let mut text = format!(
            "position error at frame times against the source is {:.3e} ({:.3e} of the diagonal), {:.3e} beyond the recorded {}bound (tolerance {:.1e})",
            c.frames.position_max,
            rel(c.frames.position_max),
            excess,
            if t.accept_recorded_loss {
                "encoding and influence-loss "
            } else {
                "encoding "
            },
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
