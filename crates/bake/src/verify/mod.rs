//! The verification measurement: a bake played through the runtime
//! reference (either path it holds) compared with a direct evaluation of its
//! source, at frame times and at mid-frame times, and the verdict of each
//! clip against tolerances. Semantics and tolerances: `docs/runtime.md`.

mod measure;

pub use measure::{ClipStats, Output, OutputStats, Path, Stats, Subject, measure};
use serde::Serialize;

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
}

/// Judges one clip: the failures, in words (empty when it passes).
pub fn judge(c: &ClipStats, diagonal: f64, t: &Tolerances) -> Vec<String> {
    let mut failures = Vec::new();
    let allowed = t.relative * diagonal;
    if c.frames.position_excess_max > allowed {
        failures.push(format!(
            "position error at frame times exceeds the recorded bound by {:.3e} ({:.3e} of the diagonal; tolerance {:.1e})",
            c.frames.position_excess_max,
            c.frames.position_excess_max / diagonal.max(f64::MIN_POSITIVE),
            t.relative
        ));
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
