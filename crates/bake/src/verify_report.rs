//! What `rigbake verify` prints of a measurement ([`crate::verify`]): a
//! table per output (one line per clip) and a verdict, or one JSON document
//! for scripts (`--json`, described in `docs/runtime.md`). In the library,
//! beside the batch [`crate::report`], so a CI tool can build and read it
//! without the binary. Both show the verdicts of
//! [`crate::verify::judge`], so the text and the JSON always agree.

use crate::inspect::shown;
use crate::playback::Loaded;
use crate::verify::records::RecordChecks;
use crate::verify::{OutputStats, Stats, Tolerances, judge, max_nan};
use serde::Serialize;

/// Version of the `verify --json` document layout.
pub const VERIFY_SCHEMA_VERSION: u32 = 1;

/// [`Stats`] as the JSON document shows them.
#[derive(Debug, Serialize)]
pub struct StatsJson {
    /// Time samples.
    pub samples: usize,
    /// Vertex comparisons.
    pub vertices: u64,
    /// Largest position error, model units.
    pub position_max: f64,
    /// Mean position error, model units.
    pub position_mean: f64,
    /// Largest position error relative to the diagonal.
    pub position_max_relative: f64,
    /// Mean position error relative to the diagonal.
    pub position_mean_relative: f64,
    /// Largest position error beyond the recorded bound, relative.
    pub position_excess_relative: f64,
    /// Largest recorded encoding bound (f16, PNG16, EXR16), relative.
    pub position_bound_relative: f64,
    /// Largest loss the bake recorded for dropped bone influences,
    /// relative (0 when none were dropped).
    pub position_loss_relative: f64,
    /// Largest normal error, degrees (`null`: no normals compared).
    pub normal_max_degrees: Option<f64>,
    /// Mean normal error, degrees.
    pub normal_mean_degrees: Option<f64>,
    /// Largest normal error beyond the recorded bound, degrees (`null`: no
    /// normal had a bound to judge it by).
    pub normal_excess_degrees: Option<f64>,
}

fn stats_json(s: &Stats, diagonal: f64) -> StatsJson {
    let rel = |v: f64| if diagonal > 0.0 { v / diagonal } else { v };
    let normals = s.normals > 0;
    let mean = |sum: f64, n: u64| if n > 0 { sum / n as f64 } else { 0.0 };
    let (position_mean, normal_mean) = (
        mean(s.position_sum, s.vertices),
        mean(s.normal_sum, s.normals),
    );
    StatsJson {
        samples: s.samples,
        vertices: s.vertices,
        position_max: s.position_max,
        position_mean,
        position_max_relative: rel(s.position_max),
        position_mean_relative: rel(position_mean),
        position_excess_relative: rel(s.position_excess_max),
        position_bound_relative: rel(s.position_bound_max),
        position_loss_relative: rel(s.position_loss_max),
        normal_max_degrees: normals.then_some(s.normal_max),
        normal_mean_degrees: normals.then_some(normal_mean),
        normal_excess_degrees: (s.normals_judged > 0).then_some(s.normal_excess_max),
    }
}

/// One clip of one output in the JSON document.
#[derive(Debug, Serialize)]
pub struct ClipJson {
    /// Clip name.
    pub clip: String,
    /// At frame times.
    pub frames: StatsJson,
    /// At mid-frame times.
    pub mid: StatsJson,
    /// Whether the clip is within the tolerances.
    pub pass: bool,
    /// What exceeded a tolerance, in words.
    pub failures: Vec<String>,
}

/// One output in the JSON document.
#[derive(Debug, Serialize)]
pub struct OutputJson {
    /// `bones` or `vat`.
    pub output: &'static str,
    /// Primitives compared.
    pub primitives: usize,
    /// Bounding-box diagonal (model units) errors are relative to.
    pub diagonal: f64,
    /// Per clip.
    pub clips: Vec<ClipJson>,
}

/// The source model in the JSON document.
#[derive(Debug, Serialize)]
pub struct SourceJson {
    /// The file compared against.
    pub file: String,
    /// Its SHA-256.
    pub sha256: String,
    /// Whether it is the file the bake was made from.
    pub sha256_matches: bool,
}

/// The `verify --json` document.
#[derive(Debug, Serialize)]
pub struct VerifyReport {
    /// Always [`VERIFY_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The container as given.
    pub file: String,
    /// The source model.
    pub source: SourceJson,
    /// Tolerances used.
    pub tolerance: Tolerances,
    /// Every `stride`-th frame was checked.
    pub stride: usize,
    /// Per output.
    pub outputs: Vec<OutputJson>,
    /// Problems found besides errors (checksums, source hash, recorded
    /// numbers that disagree with the source).
    pub problems: Vec<String>,
    /// Recorded numbers checked besides the played-back vertices (root
    /// motion, animated bounds).
    pub records_checked: Vec<String>,
    /// Recorded numbers verify cannot recompute, and why.
    pub records_unchecked: Vec<String>,
    /// Whether everything passed.
    pub pass: bool,
}

/// Builds the report of a run.
pub fn build(
    loaded: &Loaded,
    outputs: &[OutputStats],
    tolerance: Tolerances,
    stride: usize,
    problems: Vec<String>,
    problems_fail: bool,
    records: RecordChecks,
) -> VerifyReport {
    let outputs: Vec<OutputJson> = outputs
        .iter()
        .map(|o| OutputJson {
            output: o.output.name(),
            primitives: o.primitives,
            diagonal: o.diagonal,
            clips: o
                .clips
                .iter()
                .map(|c| {
                    let failures = judge(c, o.diagonal, &tolerance);
                    ClipJson {
                        clip: loaded.clips[c.clip].name.clone(),
                        frames: stats_json(&c.frames, o.diagonal),
                        mid: stats_json(&c.mid, o.diagonal),
                        pass: failures.is_empty(),
                        failures,
                    }
                })
                .collect(),
        })
        .collect();
    // Nothing measured is not a pass.
    let checked = outputs.iter().any(|o| !o.clips.is_empty());
    let pass = checked && !problems_fail && outputs.iter().all(|o| o.clips.iter().all(|c| c.pass));
    VerifyReport {
        schema_version: VERIFY_SCHEMA_VERSION,
        file: loaded.file.display().to_string(),
        source: SourceJson {
            file: loaded.source.path.display().to_string(),
            sha256: loaded.source.sha256.clone(),
            sha256_matches: loaded.source.sha256_matches,
        },
        tolerance,
        stride,
        outputs,
        problems,
        records_checked: records.checked,
        records_unchecked: records.unchecked,
        pass,
    }
}

fn degrees(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |d| format!("{d:.4}"))
}

/// The human-readable report.
pub fn text(r: &VerifyReport) -> String {
    let mut out = format!("verify {} against {}", r.file, r.source.file);
    if !r.source.sha256_matches {
        out.push_str(" (a different file than the bake's source)");
    }
    out.push('\n');
    for o in &r.outputs {
        let width = o
            .clips
            .iter()
            .map(|c| shown(&c.clip).chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
        let bound = o
            .clips
            .iter()
            .map(|c| c.frames.position_bound_relative)
            .fold(0.0, max_nan);
        let loss = o
            .clips
            .iter()
            .map(|c| c.frames.position_loss_relative)
            .fold(0.0, max_nan);
        out.push_str(&format!(
            "{}: {} primitive(s), diagonal {:.6}; position errors against the source relative to it (recorded encoding bound up to {:.3e}{}); normals in degrees\n",
            o.output,
            o.primitives,
            o.diagonal,
            bound,
            if loss > 0.0 {
                format!(
                    "; recorded loss from dropped influences up to {loss:.3e}, {}",
                    if r.tolerance.accept_recorded_loss { "accepted" } else { "not accepted" }
                )
            } else {
                String::new()
            }
        ));
        out.push_str(&format!(
            "  {:<width$}  frames  pos max    pos mean   nrm max   nrm mean | mid pos max  mid pos mean  mid nrm max | result\n",
            "clip"
        ));
        for c in &o.clips {
            out.push_str(&format!(
                "  {:<width$}  {:>6}  {:.3e}  {:.3e}  {:>8}  {:>8} | {:.3e}    {:.3e}     {:>8} | {}\n",
                shown(&c.clip),
                c.frames.samples,
                c.frames.position_max_relative,
                c.frames.position_mean_relative,
                degrees(c.frames.normal_max_degrees),
                degrees(c.frames.normal_mean_degrees),
                c.mid.position_max_relative,
                c.mid.position_mean_relative,
                degrees(c.mid.normal_max_degrees),
                if c.pass { "ok" } else { "FAIL" }
            ));
        }
    }
    for c in &r.records_checked {
        out.push_str(&format!("checked: {c}\n"));
    }
    for u in &r.records_unchecked {
        out.push_str(&format!("unchecked: {u}\n"));
    }
    for p in &r.problems {
        out.push_str(&format!("problem: {p}\n"));
    }
    let failed: Vec<String> = r
        .outputs
        .iter()
        .flat_map(|o| {
            o.clips.iter().flat_map(move |c| {
                c.failures
                    .iter()
                    .map(move |f| format!("{}/{}: {f}", o.output, shown(&c.clip)))
            })
        })
        .collect();
    for f in &failed {
        out.push_str(&format!("fail: {f}\n"));
    }
    let checks: usize = r.outputs.iter().map(|o| o.clips.len()).sum();
    if r.pass {
        out.push_str(&format!(
            "PASS: {checks} clip check(s) within tolerance {:.1e} of the diagonal plus recorded errors\n",
            r.tolerance.relative
        ));
    } else {
        let failing: usize = r
            .outputs
            .iter()
            .map(|o| o.clips.iter().filter(|c| !c.pass).count())
            .sum();
        if checks == 0 {
            out.push_str("FAIL: nothing was checked (no clip of any output was measured)\n");
        } else if failing > 0 {
            out.push_str(&format!(
                "FAIL: {failing} of {checks} clip check(s) failed\n"
            ));
        } else {
            out.push_str("FAIL: see the problems above\n");
        }
    }
    out
}
