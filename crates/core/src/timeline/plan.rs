//! Planning the timeline: which clip and time every baked row holds.
//!
//! All clips are stacked clip after clip, one row per sampled frame. Frame
//! counts and times follow SPEC section 2: `frames = floor(duration * fps +
//! 1e-4) + 1` (in f64) and frame `i` is sampled at `min(i / fps, duration)`;
//! or, with [`SampleRule::EvenSpread`], at `i * duration / (frames - 1)` so the
//! last frame lands exactly on the clip end.

use std::collections::HashMap;

use crate::error::{Error, ErrorKind, Result};
use crate::eval::evaluate::Evaluator;
use crate::model::Model;
use crate::names;
use crate::timeline::root_motion::{RootMotionMode, RootMotionPlan};

pub use rigbake_types::SampleRule;

/// Sampling rate and rule.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Sampling {
    /// Frames per second (positive, finite).
    pub fps: f64,
    /// Frame time rule.
    pub rule: SampleRule,
}

impl Default for Sampling {
    fn default() -> Self {
        Self {
            fps: 30.0,
            rule: SampleRule::FixedRate,
        }
    }
}

/// Tolerance that keeps the last authored key when f32 key times land a hair
/// below a frame boundary (SPEC section 2).
pub const FRAME_COUNT_EPSILON: f64 = 1e-4;

/// Number of frames for a clip of `duration` seconds at `fps`.
pub fn frame_count(duration: f64, fps: f64) -> usize {
    (duration * fps + FRAME_COUNT_EPSILON).floor() as usize + 1
}

/// Time of frame `i` of `frames` for a clip of `duration` seconds.
pub fn frame_time(i: usize, frames: usize, duration: f64, sampling: Sampling) -> f64 {
    match sampling.rule {
        SampleRule::FixedRate => (i as f64 / sampling.fps).min(duration),
        SampleRule::EvenSpread if frames > 1 => i as f64 * duration / (frames - 1) as f64,
        SampleRule::EvenSpread => 0.0,
    }
}

/// What a baked clip samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClipSource {
    /// The time range `start..=end` (seconds) of an animation of the model.
    Animation {
        /// Index into `Model::clips`.
        clip: usize,
        /// Start time within the animation.
        start: f64,
        /// End time within the animation.
        end: f64,
    },
    /// A fixed-weight blend of two animations sampled at the same normalised
    /// phase (the usual locomotion blend): the clip lasts
    /// `(1 - weight) * duration_a + weight * duration_b`, and at phase `p` it
    /// blends animation `a` at `p * duration_a` with `b` at `p * duration_b`
    /// (translations and scales lerp, rotations slerp on the shortest path,
    /// morph weights lerp, per node before the hierarchy is applied).
    Blend {
        /// First animation (weight 0 gives exactly this one).
        a: usize,
        /// Second animation (weight 1 gives exactly this one).
        b: usize,
        /// Weight of `b`, in `[0, 1]`.
        weight: f64,
    },
    /// The rest pose (models without animations get one such clip).
    Rest,
}

/// What to bake, named by the user and resolved against a model.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClipRequest {
    /// A whole animation.
    Whole {
        /// Animation name.
        source: String,
    },
    /// The time range `start..=end` (seconds) of an animation, as a clip of
    /// its own (splitting one long take into named clips).
    Range {
        /// Animation name.
        source: String,
        /// Start time in seconds.
        start: f64,
        /// End time in seconds.
        end: f64,
    },
    /// A dual-clip blend at a fixed weight (see [`ClipSource::Blend`]).
    Blend {
        /// First animation.
        a: String,
        /// Second animation.
        b: String,
        /// Weight of `b`.
        weight: f64,
    },
}

/// One clip to bake: what, under which name, with which loop flag.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClipSpec {
    /// What to sample.
    pub request: ClipRequest,
    /// The baked clip's name (default: the animation's name; for blends
    /// `a+b@weight`).
    pub name: Option<String>,
    /// Loop flag override (default: detected).
    pub looping: Option<bool>,
    /// Root-motion mode of this clip (default: the bake's).
    pub root_motion: Option<RootMotionMode>,
}

impl ClipSpec {
    /// A whole animation under its own name.
    pub fn whole(source: &str) -> Self {
        Self {
            request: ClipRequest::Whole {
                source: source.to_owned(),
            },
            name: None,
            looping: None,
            root_motion: None,
        }
    }
}

/// Shortest decimal form of a blend weight for clip names (`0.25`, `1`).
/// The smallest index whose name an earlier clip already has, in
/// O(n log n) name comparisons: sort the indices by name (stable, so equal
/// names keep their order), then each run of equal names after its first
/// holds duplicates.
fn first_duplicate(sources: &[(String, ClipSource)]) -> Option<usize> {
    let mut order: Vec<usize> = (0..sources.len()).collect();
    let mut comparisons = 0u64;
    order.sort_by(|&a, &b| {
        comparisons += 1;
        sources[a].0.cmp(&sources[b].0)
    });
    comparisons += order.len().saturating_sub(1) as u64;
    crate::work::add(crate::work::Counter::ClipNameComparisons, comparisons);
    order
        .windows(2)
        .filter(|w| sources[w[0]].0 == sources[w[1]].0)
        .map(|w| w[1])
        .min()
}

fn weight_text(w: f64) -> String {
    let s = format!("{w}");
    s.strip_suffix(".0").map(str::to_owned).unwrap_or(s)
}

/// One baked clip: a contiguous block of rows.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineClip {
    /// Clip name.
    pub name: String,
    /// What the rows sample.
    pub source: ClipSource,
    /// First row.
    pub start_row: usize,
    /// Number of rows (frames).
    pub frames: usize,
    /// Duration in seconds.
    pub duration: f64,
    /// Whether the clip loops (its first and last frames match, unless
    /// overridden).
    pub looping: bool,
}

impl TimelineClip {
    /// Time of local frame `frame`, in seconds from the clip start.
    pub fn frame_time(&self, frame: usize, sampling: Sampling) -> f64 {
        frame_time(frame, self.frames, self.duration, sampling)
    }
}

/// Every baked clip and the row each frame occupies.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// The sampling used for every clip.
    pub sampling: Sampling,
    /// Clips in row order.
    pub clips: Vec<TimelineClip>,
    /// Total rows (sum of frames).
    pub rows: usize,
    /// Root-motion extraction, when any clip bakes in place
    /// ([`crate::timeline::root_motion`]); applied by every evaluation.
    pub root_motion: Option<RootMotionPlan>,
}

/// Largest number of rows a timeline may have.
pub const MAX_ROWS: usize = 1 << 20;

/// Largest number of evaluations (rows times the nodes and animation channels
/// evaluated per row) one bake or one loop detection may cost: about a minute
/// of work on one core. It bounds the time any input can take, since frames,
/// nodes and channels are all cheap to declare.
pub const MAX_NODE_EVALUATIONS: u64 = 1 << 31;

/// Checks that evaluating `rows` poses of `model` (every node and, at worst,
/// every channel per row) stays within [`MAX_NODE_EVALUATIONS`].
pub fn check_evaluations(rows: usize, model: &Model) -> Result<()> {
    let nodes = model.nodes.len();
    let channels: usize = model.clips.iter().map(|c| c.channels.len()).sum();
    let per_row = (nodes as u64).saturating_add(channels as u64).max(1);
    let work = (rows as u64).saturating_mul(per_row);
    if work > MAX_NODE_EVALUATIONS {
        return Err(Error::limit(
            "animations",
            format!(
                "{rows} frames of {nodes} nodes and {channels} animation channels is {work} evaluations, more than the limit of {MAX_NODE_EVALUATIONS}"
            ),
        )
        .with_hint("lower the fps or bake fewer clips"));
    }
    Ok(())
}

impl Timeline {
    /// Plans every animation of `model`, in glTF order, whole; a single
    /// one-frame `rest` clip when the model has none. Loop flags are all
    /// `false`: [`crate::timeline::loops`] sets them.
    pub fn plan_all(model: &Model, sampling: Sampling) -> Result<Self> {
        let sources: Vec<(String, ClipSource)> = if model.clips.is_empty() {
            vec![("rest".to_owned(), ClipSource::Rest)]
        } else {
            model
                .clips
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    (
                        c.name.clone(),
                        ClipSource::Animation {
                            clip: i,
                            start: 0.0,
                            end: c.duration,
                        },
                    )
                })
                .collect()
        };
        Self::from_sources(sampling, sources)
    }

    /// Plans the clips described by `specs`, in order: whole animations,
    /// time ranges, blends. Names are resolved against the model's
    /// animations; unknown names, empty or out-of-range time ranges, blend
    /// weights outside `[0, 1]` and duplicate clip names are errors. Loop
    /// flags are all `false`, and `specs`' overrides are not applied:
    /// [`Timeline::build`] runs the loop pass and then applies them.
    pub fn plan(model: &Model, sampling: Sampling, specs: &[ClipSpec]) -> Result<Self> {
        // The first animation of each name and how many share it, looked
        // up in constant time; `#N` names animations[N].
        let mut by_name: HashMap<&str, (usize, usize)> = HashMap::with_capacity(model.clips.len());
        for (i, c) in model.clips.iter().enumerate() {
            by_name.entry(c.name.as_str()).or_insert((i, 0)).1 += 1;
        }
        let animation_names = || model.clips.iter().map(|c| c.name.as_str());
        // A name several animations share picks none of them silently.
        let lookup = |name: &str| -> Option<Result<usize>> {
            match by_name.get(name) {
                Some(&(i, 1)) => Some(Ok(i)),
                Some(&(_, count)) => {
                    let all: Vec<usize> = (0..model.clips.len())
                        .filter(|&i| model.clips[i].name == name)
                        .collect();
                    let listed: Vec<String> =
                        all.iter().map(|i| format!("animations[{i}]")).collect();
                    Some(Err(Error::new(
                        ErrorKind::Invalid,
                        "animations",
                        format!(
                            "`{name}` names {count} animations ({}); name one by its index (`#{}`), and give it its own baked name (`name = ...` in the manifest) if two would share one",
                            listed.join(", "),
                            all.first().copied().unwrap_or_default()
                        ),
                    )))
                }
                None => name
                    .strip_prefix('#')
                    .and_then(|d| d.parse::<usize>().ok())
                    .filter(|&i| i < model.clips.len())
                    .map(Ok),
            }
        };
        let find = |name: &str| -> Result<usize> {
            lookup(name).unwrap_or_else(|| {
                Err(Error::new(
                    ErrorKind::Invalid,
                    "animations",
                    format!(
                        "no clip named `{name}`; {}",
                        names::suggestion(name, "clips", animation_names())
                    ),
                ))
            })
        };
        // A blend may also name a clip by its baked name (a renamed whole
        // animation, `name = "walk"` in the manifest).
        let renamed: Vec<(&str, &ClipRequest)> = specs
            .iter()
            .filter(|s| !matches!(s.request, ClipRequest::Blend { .. }))
            .filter_map(|s| Some((s.name.as_deref()?, &s.request)))
            .collect();
        let find_for_blend = |name: &str, a: &str, b: &str| -> Result<usize> {
            let context = format!("blend `{a}` + `{b}`");
            let renamed_as = renamed.iter().find(|(n, _)| *n == name);
            if let Some((_, ClipRequest::Whole { source })) = renamed_as {
                return find(source).map_err(|mut e| {
                    e.object = context;
                    e
                });
            }
            if let Some(found) = lookup(name) {
                return found;
            }
            let message = match renamed_as {
                Some((_, ClipRequest::Range { source, .. })) => format!(
                    "`{name}` is a time range of `{source}`; a blend mixes whole animations: name `{source}` (or rename a whole-animation clip)"
                ),
                _ => format!(
                    "no clip named `{name}` (neither an animation nor a baked clip name); {}",
                    names::suggestion(
                        name,
                        "clips",
                        renamed.iter().map(|(n, _)| *n).chain(animation_names())
                    )
                ),
            };
            Err(Error::new(ErrorKind::Invalid, context, message))
        };
        let mut sources = Vec::with_capacity(specs.len());
        for spec in specs {
            let (default_name, source) = match &spec.request {
                ClipRequest::Whole { source } => {
                    let i = find(source)?;
                    (
                        // `#N` bakes under the animation's own name.
                        if source.starts_with('#') && !by_name.contains_key(source.as_str()) {
                            model.clips[i].name.clone()
                        } else {
                            source.clone()
                        },
                        ClipSource::Animation {
                            clip: i,
                            start: 0.0,
                            end: model.clips[i].duration,
                        },
                    )
                }
                ClipRequest::Range { source, start, end } => {
                    let i = find(source)?;
                    range_source(source, i, model.clips[i].duration, (*start, *end))?
                }
                ClipRequest::Blend { a, b, weight } => {
                    if !(0.0..=1.0).contains(weight) {
                        return Err(Error::new(
                            ErrorKind::Invalid,
                            format!("blend `{a}` + `{b}`"),
                            format!("weight {weight} is outside 0..1"),
                        ));
                    }
                    (
                        format!("{a}+{b}@{}", weight_text(*weight)),
                        ClipSource::Blend {
                            a: find_for_blend(a, a, b)?,
                            b: find_for_blend(b, a, b)?,
                            weight: *weight,
                        },
                    )
                }
            };
            sources.push((spec.name.clone().unwrap_or(default_name), source));
        }
        if let Some(i) = first_duplicate(&sources) {
            let name = &sources[i].0;
            return Err(Error::new(
                ErrorKind::Invalid,
                "animations",
                format!("two baked clips are named `{name}`; rename one"),
            ));
        }
        let durations: Vec<f64> = model.clips.iter().map(|c| c.duration).collect();
        Self::from_sources_with(sampling, sources, &durations)
    }

    /// Stacks the given clips in order (loop flags all `false`; see
    /// [`crate::timeline::loops`]). Blend sources need animation durations:
    /// use [`Timeline::plan`] for them.
    pub fn from_sources(sampling: Sampling, sources: Vec<(String, ClipSource)>) -> Result<Self> {
        Self::from_sources_with(sampling, sources, &[])
    }

    /// [`Timeline::from_sources`] with the durations of the model's
    /// animations, for blends.
    fn from_sources_with(
        sampling: Sampling,
        sources: Vec<(String, ClipSource)>,
        durations: &[f64],
    ) -> Result<Self> {
        if !(sampling.fps.is_finite() && sampling.fps > 0.0) {
            return Err(Error::new(
                ErrorKind::Invalid,
                "",
                format!("fps must be a positive number, got {}", sampling.fps),
            ));
        }
        let mut clips = Vec::with_capacity(sources.len());
        let mut rows = 0usize;
        for (name, source) in sources {
            let duration = match source {
                ClipSource::Animation { start, end, .. } => (end - start).max(0.0),
                ClipSource::Blend { a, b, weight } => {
                    let (da, db) = (
                        durations.get(a).copied().unwrap_or(0.0),
                        durations.get(b).copied().unwrap_or(0.0),
                    );
                    da + (db - da) * weight
                }
                ClipSource::Rest => 0.0,
            };
            let exact = duration * sampling.fps;
            if !exact.is_finite() || exact >= MAX_ROWS as f64 {
                let object = match source {
                    ClipSource::Animation { clip, .. } => format!("animations[{clip}]"),
                    ClipSource::Blend { a, b, .. } => format!("animations[{a}] + animations[{b}]"),
                    ClipSource::Rest => "animations".to_owned(),
                };
                return Err(Error::limit(
                    object,
                    format!(
                        "clip `{name}` lasts {duration} s: at {} fps that is more than {MAX_ROWS} frames",
                        sampling.fps
                    ),
                )
                .with_hint("lower the fps or split the clip"));
            }
            let frames = frame_count(duration, sampling.fps);
            clips.push(TimelineClip {
                name,
                source,
                start_row: rows,
                frames,
                duration,
                looping: false,
            });
            rows += frames;
            if rows > MAX_ROWS {
                return Err(Error::limit(
                    "animations",
                    format!("all clips together are more than {MAX_ROWS} frames"),
                )
                .with_hint("lower the fps or bake fewer clips"));
            }
        }
        Ok(Self {
            sampling,
            clips,
            rows,
            root_motion: None,
        })
    }

    /// The timeline clip holding `row`, and the frame within it.
    pub fn locate_row(&self, row: usize) -> (usize, usize) {
        let c = self.clips.partition_point(|c| c.start_row <= row) - 1;
        (c, row - self.clips[c].start_row)
    }

    /// The first failure among per-row results (`results[row]`), its message
    /// naming the clip and frame of that row; rows may fail in any order
    /// when they run in parallel, so the first row, not the first to fail,
    /// is reported.
    pub fn first_row_error(&self, results: Vec<Result<()>>) -> Result<()> {
        match results.into_iter().enumerate().find(|(_, r)| r.is_err()) {
            Some((row, Err(e))) => {
                let (c, frame) = self.locate_row(row);
                Err(Error {
                    message: format!(
                        "{} (clip `{}`, frame {frame})",
                        e.message, self.clips[c].name
                    ),
                    ..e
                })
            }
            _ => Ok(()),
        }
    }

    /// Samples the pose of `row` into `ev` (local pose and globals).
    pub fn evaluate_row(&self, ev: &mut Evaluator<'_>, row: usize) {
        let (c, frame) = self.locate_row(row);
        self.evaluate_frame(ev, c, frame);
    }

    /// Samples frame `frame` of timeline clip `c` into `ev`.
    pub fn evaluate_frame(&self, ev: &mut Evaluator<'_>, c: usize, frame: usize) {
        let t = self.clips[c].frame_time(frame, self.sampling);
        self.evaluate_time(ev, c, t);
    }

    /// Samples timeline clip `c` at `t` seconds from its start into `ev`,
    /// in place when the clip's root motion is extracted.
    pub fn evaluate_time(&self, ev: &mut Evaluator<'_>, c: usize, t: f64) {
        self.evaluate_source_time(ev, c, t);
        if let Some(plan) = &self.root_motion {
            plan.apply(c, &mut ev.globals);
        }
    }

    /// Samples timeline clip `c` at `t` seconds as the source has it: with
    /// its root motion, extracted or not.
    pub fn evaluate_source_time(&self, ev: &mut Evaluator<'_>, c: usize, t: f64) {
        match self.clips[c].source {
            ClipSource::Animation { clip, start, .. } => ev.evaluate_clip(clip, start + t),
            ClipSource::Blend { a, b, weight } => {
                let duration = self.clips[c].duration;
                let phase = if duration > 0.0 { t / duration } else { 0.0 };
                let model = ev.model();
                ev.evaluate_blend(
                    a,
                    phase * model.clips[a].duration,
                    b,
                    phase * model.clips[b].duration,
                    weight,
                );
            }
            ClipSource::Rest => {
                let model = ev.model();
                ev.local.reset(model);
                ev.update_globals();
            }
        }
    }
}

/// The default name and source of a time range `start..end` (seconds) of
/// animation `clip` (`source` by name, `duration` long); an empty range
/// or one outside the animation is an error naming the clip.
fn range_source(
    source: &str,
    clip: usize,
    duration: f64,
    (start, end): (f64, f64),
) -> Result<(String, ClipSource)> {
    // A hair of tolerance for ends given as frames / fps.
    let valid = start.is_finite()
        && end.is_finite()
        && 0.0 <= start
        && start < end
        && end <= duration + 1e-6;
    if !valid {
        return Err(Error::new(
            ErrorKind::Invalid,
            format!("clip `{source}`"),
            format!("time range {start}..{end} s is empty or outside the clip (0..{duration} s)"),
        ));
    }
    Ok((
        format!("{source}[{start}..{end}]"),
        ClipSource::Animation {
            clip,
            start,
            end: end.min(duration),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_counts_follow_the_spec() {
        assert_eq!(frame_count(1.0, 30.0), 31);
        assert_eq!(frame_count(0.7, 30.0), 22);
        assert_eq!(frame_count(f64::from(3.333_333_3f32), 30.0), 101);
        assert_eq!(frame_count(0.0, 30.0), 1);
        // f32 key times just below a boundary keep the last key.
        assert_eq!(frame_count(f64::from(0.7f32), 30.0), 22);
    }

    #[test]
    fn frame_times_clamp_or_spread() {
        let fixed = Sampling::default();
        let d = 0.7;
        let n = frame_count(d, 30.0);
        assert_eq!(frame_time(0, n, d, fixed), 0.0);
        assert!((frame_time(21, n, d, fixed) - 0.7).abs() < 1e-12);
        assert_eq!(frame_time(100, n, d, fixed), 0.7);
        let even = Sampling {
            rule: SampleRule::EvenSpread,
            ..fixed
        };
        let d = 0.71;
        let n = frame_count(d, 30.0);
        assert_eq!(n, 22);
        assert_eq!(frame_time(21, n, d, even), 0.71);
        assert_eq!(frame_time(0, 1, 0.0, even), 0.0);
    }

    #[test]
    fn clips_stack_and_rows_locate() {
        let src = |d: f64| ClipSource::Animation {
            clip: 0,
            start: 0.0,
            end: d,
        };
        let t = Timeline::from_sources(
            Sampling::default(),
            vec![
                ("a".into(), src(37.0 / 30.0)),
                ("b".into(), src(10.0)),
                ("c".into(), src(43.0 / 30.0)),
            ],
        )
        .unwrap();
        let starts: Vec<_> = t.clips.iter().map(|c| c.start_row).collect();
        assert_eq!(starts, [0, 38, 339]);
        assert_eq!(t.rows, 383);
        assert_eq!(t.locate_row(0), (0, 0));
        assert_eq!(t.locate_row(37), (0, 37));
        assert_eq!(t.locate_row(38), (1, 0));
        assert_eq!(t.locate_row(382), (2, 43));
    }

    #[test]
    fn absurd_durations_are_refused_before_allocating() {
        let e = Timeline::from_sources(
            Sampling::default(),
            vec![(
                "huge".into(),
                ClipSource::Animation {
                    clip: 0,
                    start: 0.0,
                    end: 1e30,
                },
            )],
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Limit);
        let bad_fps = Timeline::from_sources(
            Sampling {
                fps: 0.0,
                rule: SampleRule::FixedRate,
            },
            vec![],
        );
        assert!(bad_fps.is_err());
    }
}
