//! Measuring a bake: play every clip through the runtime reference at frame
//! times and at mid-frame times, evaluate the source directly at the same
//! instants, and gather error statistics per clip and per output.
//!
//! Samples are evaluated in parallel and folded in a fixed order, so the
//! numbers do not depend on the thread count.

use glam::{DMat4, DVec3, Vec3};
use rayon::prelude::*;
use rigbake_core::Model;
use rigbake_core::bake::vat::NormalConvention;
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::reference::{DirectGlobals, PrimitiveDeform, source_pose_at};
use rigbake_core::runtime::root_motion::motion_matrix;
use rigbake_core::runtime::rows::blend_rows;
use rigbake_core::runtime::{AnimationState, ClipInfo, GpuState, PlayMode, RuntimeVertex};
use serde::Serialize;

use super::rows::{PathRows, source_primitive};
use crate::playback::{BonePlayback, LoadError, LoadedClip, VatPlayback};

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

impl Stats {
    /// Grows [`Stats::played`] by one played-back position.
    #[inline]
    fn add_played(&mut self, p: DVec3) {
        let p = p.to_array();
        self.played = Some(match self.played {
            None => (p, p),
            Some((lo, hi)) => (
                std::array::from_fn(|k| lo[k].min(p[k])),
                std::array::from_fn(|k| hi[k].max(p[k])),
            ),
        });
    }
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

/// A recorded error bound (from the container) as the comparison may use
/// it: `None` when it is NaN, infinite or negative, which is never added
/// to the tolerance (the comparison then counts as unusable and fails).
fn usable_bound(bound: f64) -> Option<f64> {
    (bound.is_finite() && bound >= 0.0).then_some(bound)
}

impl Stats {
    #[inline]
    fn add_position(&mut self, error: f64, bound: f64, loss: f64) {
        self.vertices += 1;
        let loss = usable_bound(loss).unwrap_or_else(|| {
            self.bad_bounds += 1;
            0.0
        });
        self.position_loss_max = max_nan(self.position_loss_max, loss);
        self.position_max = max_nan(self.position_max, error);
        self.position_sum += error;
        let bound = usable_bound(bound).unwrap_or_else(|| {
            self.bad_bounds += 1;
            0.0
        });
        self.position_excess_max = max_nan(self.position_excess_max, error - bound);
        self.position_excess_after_loss_max =
            max_nan(self.position_excess_after_loss_max, error - bound - loss);
        self.position_bound_max = max_nan(self.position_bound_max, bound);
    }

    #[inline]
    fn add_normal(&mut self, degrees: f64, bound: Option<f64>) {
        self.normals += 1;
        self.normal_max = max_nan(self.normal_max, degrees);
        self.normal_sum += degrees;
        if let Some(bound) = bound {
            let bound = usable_bound(bound)
                .filter(|b| *b <= 180.0)
                .unwrap_or_else(|| {
                    self.bad_bounds += 1;
                    0.0
                });
            self.normals_judged += 1;
            self.normal_excess_max = max_nan(self.normal_excess_max, degrees - bound);
        } else if degrees.is_nan() {
            // Not judged against a bound, but NaN is never a pass.
            self.normal_excess_max = f64::NAN;
        }
    }

    fn merge(&mut self, o: &Stats) {
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
        self.played = match (self.played, o.played) {
            (Some((a, b)), Some((c, d))) => Some((
                std::array::from_fn(|k| a[k].min(c[k])),
                std::array::from_fn(|k| b[k].max(d[k])),
            )),
            (a, b) => a.or(b),
        };
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

/// Whether a sample is at a frame time or between two frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Frame,
    Mid,
}

/// One instant to check.
#[derive(Debug, Clone, Copy)]
struct Sample {
    clip: usize,
    time: f64,
    mode: PlayMode,
    kind: Kind,
}

/// The instants checked in clip `clip`: every `stride`-th frame and the
/// last, played once (frame `i` is row `i`, even at a loop's last frame);
/// the midpoint of every `stride`-th pair of frames played in the clip's
/// own mode; and for a loop whose last frame falls short of the clip end,
/// the midpoint of that wrap interval.
fn samples_of(clip: usize, info: &ClipInfo, stride: usize) -> Vec<Sample> {
    let last = info.frames.max(1) - 1;
    let mut frames: Vec<u32> = (0..=last).step_by(stride).collect();
    if frames.last() != Some(&last) {
        frames.push(last);
    }
    let mut out: Vec<Sample> = frames
        .into_iter()
        .map(|i| Sample {
            clip,
            time: info.frame_time(i),
            mode: PlayMode::Once,
            kind: Kind::Frame,
        })
        .collect();
    let mode = PlayMode::of(info);
    for i in (0..last).step_by(stride) {
        out.push(Sample {
            clip,
            time: (info.frame_time(i) + info.frame_time(i + 1)) / 2.0,
            mode,
            kind: Kind::Mid,
        });
    }
    if info.looping && info.length_frames() > f64::from(last) {
        out.push(Sample {
            clip,
            time: (info.frame_time(last) + info.length()) / 2.0,
            mode: PlayMode::Loop,
            kind: Kind::Mid,
        });
    }
    out
}

/// The GPU state of an instance playing `info` in `mode`, `time` seconds in.
fn state_at(info: &ClipInfo, time: f64, mode: PlayMode) -> GpuState {
    let mut state = AnimationState::new();
    state.play(*info, mode, 1.0);
    state.seek(time);
    state.gpu_state()
}

/// Angle between two directions in degrees; 180 when the reconstructed one
/// is zero (a lost normal counts as wrong).
#[inline]
fn angle_degrees(got: Vec3, want: DVec3) -> f64 {
    let got = got.as_dvec3();
    if got == DVec3::ZERO {
        return 180.0;
    }
    libm::atan2(got.cross(want).length(), got.dot(want)).to_degrees()
}

/// What one sample produced.
struct SampleResult {
    stats: Stats,
    lo: DVec3,
    hi: DVec3,
}

/// What the bake recorded about one vertex's errors.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    /// Encoding bound on the position (model units).
    position: f64,
    /// Position loss from dropped influences (model units).
    loss: f64,
    /// Bound on the normal angle (degrees), when normals are judged.
    normal: Option<f64>,
}

/// Compares one reconstructed vertex with its direct evaluation.
#[inline]
fn compare(
    stats: &mut Stats,
    lo: &mut DVec3,
    hi: &mut DVec3,
    got: &RuntimeVertex,
    want: &Direct3,
    bounds: Bounds,
) {
    let (position, normal) = *want;
    stats.add_position(
        got.position.as_dvec3().distance(position),
        bounds.position,
        bounds.loss,
    );
    *lo = lo.min(position);
    *hi = hi.max(position);
    if let (Some(n), false) = (got.normal, normal == DVec3::ZERO) {
        stats.add_normal(angle_degrees(n, normal), bounds.normal);
    }
}

/// The playback paths and the model they play.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// The source model.
    pub model: &'a Model,
    /// The clip table.
    pub clips: &'a [LoadedClip],
}

/// The root motion an in-place bake must be moved by to match the source,
/// carried into the space of `space` (the scene root when `None`):
/// `G^-1 * M * G`, with `G` the space node's global at `pose`. `None` when
/// the clip keeps its motion.
fn motion_in_space(
    model: &Model,
    pose: &LocalPose,
    motion: Option<&DMat4>,
    space: Option<usize>,
) -> Option<DMat4> {
    let m = motion?;
    let Some(space) = space else {
        return Some(*m);
    };
    let g = DirectGlobals::new(model, pose).get(space);
    Some(g.inverse() * *m * g)
}

/// A reconstructed vertex moved by the clip's root motion (in its space).
fn moved(got: RuntimeVertex, motion: Option<&DMat4>) -> RuntimeVertex {
    let Some(m) = motion else { return got };
    RuntimeVertex {
        position: m.transform_point3(got.position.as_dvec3()).as_vec3(),
        normal: got.normal.map(|n| {
            m.transform_vector3(n.as_dvec3())
                .normalize_or_zero()
                .as_vec3()
        }),
    }
}

/// A directly evaluated vertex: position and unit normal (zero when it
/// has none to judge), as [`PrimitiveDeform::position_normal`] gives them.
type Direct3 = (DVec3, DVec3);

/// The direct evaluations of one sample, each computed once and shared by
/// the paths that compare with it: the bone and VAT paths usually ask for
/// the same primitive in the same space and normal convention. The node
/// globals of the pose are computed once for all of them; the buffers come
/// from, and go back to, a pool kept across samples.
struct Direct<'a> {
    model: &'a Model,
    pose: &'a LocalPose,
    globals: DirectGlobals<'a>,
    /// (node, primitive, space, convention) and its deformed vertices.
    done: Vec<(DirectKey, Vec<Direct3>)>,
}

type DirectKey = (usize, usize, Option<usize>, NormalConvention);

impl<'a> Direct<'a> {
    fn new(model: &'a Model, pose: &'a LocalPose) -> Self {
        Self {
            model,
            pose,
            globals: DirectGlobals::new(model, pose),
            done: Vec::new(),
        }
    }

    /// Primitive `primitive` of `node` deformed in the space of `space`
    /// with `convention` (`core::reference`), into a buffer from `pool`.
    fn get(
        &mut self,
        pool: &mut Vec<Vec<Direct3>>,
        node: usize,
        primitive: usize,
        space: Option<usize>,
        convention: NormalConvention,
    ) -> &[Direct3] {
        let key = (node, primitive, space, convention);
        let i = match self.done.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                let mut out = pool.pop().unwrap_or_default();
                out.clear();
                if let Some(d) = PrimitiveDeform::new(
                    self.model,
                    self.pose,
                    &mut self.globals,
                    node,
                    primitive,
                    space,
                ) {
                    out.extend((0..d.vertex_count()).map(|v| d.position_normal(v, convention)));
                }
                self.done.push((key, out));
                self.done.len() - 1
            }
        };
        &self.done[i].1
    }

    /// Gives the buffers back to `pool`.
    fn recycle(self, pool: &mut Vec<Vec<Direct3>>) {
        pool.extend(self.done.into_iter().map(|(_, v)| v));
    }
}

/// What one sample reads: its state, the root motion its clip moves by,
/// and where to keep its direct evaluations.
struct Instant<'s, 'a> {
    gpu: &'s GpuState,
    motion: Option<&'s DMat4>,
    direct: &'s mut Direct<'a>,
    pool: &'s mut Vec<Vec<Direct3>>,
}

fn eval_bones(
    subject: &Subject<'_>,
    bones: &BonePlayback,
    rows: &PathRows<'_>,
    at: &mut Instant<'_, '_>,
    out: &mut SampleResult,
) {
    let model = subject.model;
    for (k, prim) in bones.primitives.iter().enumerate() {
        let tex = &bones.textures[prim.set];
        let last_row = tex.rows.saturating_sub(1);
        let motion = motion_in_space(model, at.direct.pose, at.motion, Some(tex.space_node));
        let Some(src) = source_primitive(model, prim.node, prim.primitive) else {
            continue;
        };
        let want = at.direct.get(
            at.pool,
            prim.node,
            prim.primitive,
            Some(tex.space_node),
            NormalConvention::InverseTranspose,
        );
        // Normal errors have a bound only when the bake is exact.
        let judged = (tex.max_error == 0.0 && !prim.truncated).then_some(0.0);
        let (start, count) = rows.span(k);
        for (v, want) in want.iter().enumerate().take(count) {
            let (p, normal) = prim.vertex(src, v);
            let played = if at.gpu.enabled {
                blend_rows(at.gpu, last_row, normal.is_some(), |row| {
                    rows.value(row, start + v)
                })
            } else {
                RuntimeVertex {
                    position: p,
                    normal,
                }
            };
            out.stats.add_played(played.position.as_dvec3());
            let got = moved(played, motion.as_ref());
            // Dropped influences are a separate, recorded loss: judged only
            // when accepted.
            let bound = encoded_matrix_bound(tex.max_error, p.as_dvec3());
            compare(
                &mut out.stats,
                &mut out.lo,
                &mut out.hi,
                &got,
                want,
                Bounds {
                    position: bound,
                    loss: prim.position_error,
                    normal: judged,
                },
            );
        }
    }
}

/// How far a point `p` can move when every entry of the (blended) skin
/// matrix that carries it is off by at most `max_error` (a half-float bone
/// texture): each of the three coordinates by at most `max_error * (|x| +
/// |y| + |z| + 1)`, so the point by `sqrt(3)` times that (blending with
/// weights that sum to 1 keeps the entry bound).
pub fn encoded_matrix_bound(max_error: f64, p: DVec3) -> f64 {
    3f64.sqrt() * max_error * (p.abs().element_sum() + 1.0)
}

fn eval_vat(
    subject: &Subject<'_>,
    vat: &VatPlayback,
    rows: &PathRows<'_>,
    at: &mut Instant<'_, '_>,
    out: &mut SampleResult,
) {
    let motion = motion_in_space(subject.model, at.direct.pose, at.motion, vat.reference_node);
    for (k, prim) in vat.primitives.iter().enumerate() {
        let want = at.direct.get(
            at.pool,
            prim.node,
            prim.primitive,
            vat.reference_node,
            vat.convention,
        );
        let normal_bound = prim.normals.as_ref().map(|n| n.max_error());
        let has_normal = prim.normals.is_some();
        let last_row = prim.address.frames.saturating_sub(1);
        let (start, count) = rows.span(k);
        for (v, want) in want.iter().enumerate().take(count) {
            let played = if at.gpu.enabled {
                blend_rows(at.gpu, last_row, has_normal, |row| rows.value(row, start + v))
            } else {
                RuntimeVertex {
                    position: Vec3::ZERO,
                    normal: None,
                }
            };
            out.stats.add_played(played.position.as_dvec3());
            let got = moved(played, motion.as_ref());
            compare(
                &mut out.stats,
                &mut out.lo,
                &mut out.hi,
                &got,
                want,
                Bounds {
                    position: prim.positions.max_error(),
                    loss: 0.0,
                    normal: normal_bound,
                },
            );
        }
    }
}

/// The path an output plays.
#[derive(Debug, Clone, Copy)]
pub enum Path<'a> {
    /// Bone-matrix path.
    Bones(&'a BonePlayback),
    /// VAT path.
    Vat(&'a VatPlayback),
}

/// Evaluates `samples` on every path of `paths`; per sample, one result
/// per path, in the order of `samples`. Each sample's direct evaluation is
/// shared by the paths. The samples are cut into runs of neighbours
/// evaluated in parallel; within a run they are evaluated in order, so the
/// rows one sample reads are kept for the next ([`PathRows`]): samples
/// given in row order compute each row about once. The numbers do not
/// depend on the runs.
fn evaluate(
    subject: &Subject<'_>,
    paths: &[Path<'_>],
    samples: &[Sample],
) -> Vec<Vec<SampleResult>> {
    let runs = 2 * rayon::current_num_threads().max(1);
    let per_run = samples.len().div_ceil(runs).max(1);
    samples
        .par_chunks(per_run)
        .flat_map_iter(|run| evaluate_run(subject, paths, run))
        .collect()
}

/// [`evaluate`] on one run of samples, in order.
fn evaluate_run(
    subject: &Subject<'_>,
    paths: &[Path<'_>],
    run: &[Sample],
) -> Vec<Vec<SampleResult>> {
    let model = subject.model;
    let (mut pose, mut scratch) = (LocalPose::rest(model), LocalPose::rest(model));
    let mut rows: Vec<PathRows<'_>> = paths.iter().map(|p| PathRows::new(model, *p)).collect();
    let mut pool = Vec::new();
    run.iter()
        .map(|s| {
            let clip = &subject.clips[s.clip];
            source_pose_at(
                model,
                &clip.source,
                clip.info.duration,
                s.time,
                &mut pose,
                &mut scratch,
            );
            let gpu = state_at(&clip.info, s.time, s.mode);
            // A clip baked in place moves by its recorded track.
            let motion = clip.root_motion.as_ref().map(|r| {
                let sample = clip.info.sample(s.time, s.mode);
                motion_matrix(r.track().at(&clip.info, &sample))
            });
            for r in &mut rows {
                r.prepare(model, &gpu);
            }
            let mut direct = Direct::new(model, &pose);
            let results = paths
                .iter()
                .zip(&rows)
                .map(|(path, rows)| {
                    let mut out = SampleResult {
                        stats: Stats {
                            samples: 1,
                            ..Stats::default()
                        },
                        lo: DVec3::splat(f64::INFINITY),
                        hi: DVec3::splat(f64::NEG_INFINITY),
                    };
                    let mut at = Instant {
                        gpu: &gpu,
                        motion: motion.as_ref(),
                        direct: &mut direct,
                        pool: &mut pool,
                    };
                    match path {
                        Path::Bones(b) => eval_bones(subject, b, rows, &mut at, &mut out),
                        Path::Vat(v) => eval_vat(subject, v, rows, &mut at, &mut out),
                    }
                    out
                })
                .collect();
            direct.recycle(&mut pool);
            results
        })
        .collect()
}

/// The timeline rows sample `s` reads (sorted, distinct), below `frames`.
fn rows_read(subject: &Subject<'_>, s: &Sample, frames: u32) -> Vec<u32> {
    let clip = &subject.clips[s.clip];
    let gpu = state_at(&clip.info, s.time, s.mode);
    let mut rows: Vec<u32> = gpu.rows_read(frames.saturating_sub(1)).collect();
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// Evaluates `samples` on `paths`, whose deferred VAT path is `vat`,
/// window by window: samples sorted by the rows they read, grouped while
/// their rows fit `window_bytes`, each group evaluated on a window of just
/// those rows. The results come back in the order of `samples`, so the
/// folded numbers do not depend on the windows.
fn streamed(
    subject: &Subject<'_>,
    paths: &[Path<'_>],
    vat: &VatPlayback,
    samples: &[Sample],
    window_bytes: u64,
) -> Result<Vec<Vec<SampleResult>>, LoadError> {
    let frames = vat
        .primitives
        .iter()
        .map(|p| p.address.frames)
        .max()
        .unwrap_or(0);
    let reads: Vec<Vec<u32>> = samples
        .iter()
        .map(|s| rows_read(subject, s, frames))
        .collect();
    let mut order: Vec<usize> = (0..samples.len()).collect();
    order.sort_by_key(|&i| (reads[i].first().copied().unwrap_or(0), i));
    let max_rows = (window_bytes / vat.row_bytes().max(1)).max(1) as usize;
    let mut results: Vec<Vec<SampleResult>> = samples.iter().map(|_| Vec::new()).collect();
    let mut group: Vec<usize> = Vec::new();
    let mut rows = std::collections::BTreeSet::new();
    let mut run = |group: &mut Vec<usize>, rows: &mut std::collections::BTreeSet<u32>| {
        let listed: Vec<u32> = rows.iter().copied().collect();
        let window = vat.window(&listed)?;
        let windowed: Vec<Path<'_>> = paths
            .iter()
            .map(|p| match p {
                Path::Vat(v) if std::ptr::eq(*v, vat) => Path::Vat(&window),
                other => *other,
            })
            .collect();
        let batch: Vec<Sample> = group.iter().map(|&i| samples[i]).collect();
        for (&i, r) in group.iter().zip(evaluate(subject, &windowed, &batch)) {
            results[i] = r;
        }
        group.clear();
        rows.clear();
        Ok::<_, LoadError>(())
    };
    for i in order {
        let new = reads[i].iter().filter(|r| !rows.contains(*r)).count();
        if !group.is_empty() && rows.len() + new > max_rows {
            run(&mut group, &mut rows)?;
        }
        rows.extend(reads[i].iter().copied());
        group.push(i);
    }
    if !group.is_empty() {
        run(&mut group, &mut rows)?;
    }
    Ok(results)
}

/// Decoded texture bytes a streamed VAT measurement holds at once (one
/// window of rows), unless a single sample needs more.
pub const WINDOW_BYTES: u64 = 48 << 20;

/// Measures the outputs `paths` over the clips in `selected` (indices
/// into the clip table), checking every `stride`-th frame; one
/// [`OutputStats`] per path, in order. Every sample's direct evaluation is
/// computed once for all paths. A VAT path loaded with
/// [`crate::playback::Decode::Rows`] is streamed: its rows are decoded a
/// window of at most [`WINDOW_BYTES`] at a time; the numbers are the same
/// as with textures decoded whole. An error is a texture that fails to
/// decode.
pub fn measure(
    subject: &Subject<'_>,
    paths: &[Path<'_>],
    selected: &[usize],
    stride: usize,
) -> Result<Vec<OutputStats>, LoadError> {
    measure_windowed(subject, paths, selected, stride, WINDOW_BYTES)
}

/// [`measure`] with windows of at most `window_bytes` (tests use tiny
/// windows to cross many window edges).
pub fn measure_windowed(
    subject: &Subject<'_>,
    paths: &[Path<'_>],
    selected: &[usize],
    stride: usize,
    window_bytes: u64,
) -> Result<Vec<OutputStats>, LoadError> {
    let samples: Vec<Sample> = selected
        .iter()
        .flat_map(|&c| samples_of(c, &subject.clips[c].info, stride.max(1)))
        .collect();
    let deferred = paths.iter().find_map(|p| match p {
        Path::Vat(v) if v.is_deferred() => Some(*v),
        _ => None,
    });
    let evaluated = match deferred {
        Some(vat) => streamed(subject, paths, vat, &samples, window_bytes)?,
        None => {
            // In row order, so that neighbours share rows (`evaluate`).
            let last = u32::MAX;
            let mut order: Vec<usize> = (0..samples.len()).collect();
            order.sort_by_key(|&i| (rows_read(subject, &samples[i], last).first().copied(), i));
            let batch: Vec<Sample> = order.iter().map(|&i| samples[i]).collect();
            let mut results: Vec<Vec<SampleResult>> = samples.iter().map(|_| Vec::new()).collect();
            for (&i, r) in order.iter().zip(evaluate(subject, paths, &batch)) {
                results[i] = r;
            }
            results
        }
    };
    Ok(paths
        .iter()
        .enumerate()
        .map(|(k, &path)| {
            let results = samples.iter().zip(evaluated.iter().map(|r| &r[k]));
            fold(path, selected, results)
        })
        .collect())
}

/// Folds the per-sample results of one path, in sample order, into its
/// statistics.
fn fold<'r>(
    path: Path<'_>,
    selected: &[usize],
    results: impl Iterator<Item = (&'r Sample, &'r SampleResult)>,
) -> OutputStats {
    let mut clips: Vec<ClipStats> = selected
        .iter()
        .map(|&clip| ClipStats {
            clip,
            frames: Stats::default(),
            mid: Stats::default(),
        })
        .collect();
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for (s, r) in results {
        let Some(entry) = clips.iter_mut().find(|c| c.clip == s.clip) else {
            continue;
        };
        match s.kind {
            Kind::Frame => {
                entry.frames.merge(&r.stats);
                lo = lo.min(r.lo);
                hi = hi.max(r.hi);
            }
            Kind::Mid => entry.mid.merge(&r.stats),
        }
    }
    let diagonal = if lo.x <= hi.x {
        (hi - lo).length()
    } else {
        0.0
    };
    OutputStats {
        output: match path {
            Path::Bones(_) => Output::Bones,
            Path::Vat(_) => Output::Vat,
        },
        primitives: match path {
            Path::Bones(b) => b.primitives.len(),
            Path::Vat(v) => v.primitives.len(),
        },
        diagonal,
        clips,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigbake_core::timeline::SampleRule;

    /// The worst case reaches the bound: every entry off by `e` with the
    /// sign of the coordinate it multiplies moves each coordinate by
    /// `e * (|x| + |y| + |z| + 1)`, the point by sqrt(3) times that; the
    /// bound without sqrt(3) (used before fuzzing found a bake exceeding
    /// it) is too small.
    #[test]
    fn encoded_matrix_bound_covers_the_worst_matrix() {
        let (e, p) = (1e-3, DVec3::new(0.5, -2.0, 1.25));
        let s = p.signum();
        let error = DMat4::from_cols(
            (s.x * e * DVec3::ONE).extend(0.0),
            (s.y * e * DVec3::ONE).extend(0.0),
            (s.z * e * DVec3::ONE).extend(0.0),
            (e * DVec3::ONE).extend(0.0),
        );
        let moved = error.transform_point3(p).length();
        let bound = encoded_matrix_bound(e, p);
        assert!(moved <= bound * (1.0 + 1e-12), "{moved} > {bound}");
        assert!(moved > bound * (1.0 - 1e-12), "the bound is tight");
        assert!(moved > e * (p.abs().element_sum() + 1.0));
    }

    #[test]
    fn samples_cover_frames_mids_and_the_wrap() {
        // 103 frames, 102.5 frames long: the half-frame wrap gets a midpoint.
        let info = ClipInfo {
            start_row: 0,
            frames: 103,
            fps: 30.0,
            duration: 102.5 / 30.0,
            looping: true,
            rule: SampleRule::FixedRate,
        };
        let s = samples_of(0, &info, 10);
        let frames: Vec<f64> = s
            .iter()
            .filter(|s| s.kind == Kind::Frame)
            .map(|s| s.time)
            .collect();
        assert_eq!(frames.len(), 12, "0, 10, ..., 100 and the last (102)");
        assert!((frames[11] - 102.0 / 30.0).abs() < 1e-12);
        let mids: Vec<f64> = s
            .iter()
            .filter(|s| s.kind == Kind::Mid)
            .map(|s| s.time)
            .collect();
        assert_eq!(mids.len(), 12, "0.5, 10.5, ..., 100.5 and the wrap");
        assert!((mids[0] - 0.5 / 30.0).abs() < 1e-12);
        assert!((mids[11] - 102.25 / 30.0).abs() < 1e-9);
        // The wrap midpoint plays the lerp from the last frame to the first.
        let g = state_at(&info, mids[11], PlayMode::Loop);
        assert_eq!((g.rows[0][2], g.rows[1][2]), (102.0, 0.0));
        assert_eq!(angle_degrees(Vec3::ZERO, DVec3::Y), 180.0);
    }

    #[test]
    fn angles_between_normals_are_exact_in_both_directions() {
        // Within 1e-12 degrees either way (an error below the expected angle
        // must fail too), for unit and non-unit vectors.
        for (got, want, degrees) in [
            (Vec3::X, DVec3::Y, 90.0),
            (Vec3::X, DVec3::X, 0.0),
            (Vec3::X, -DVec3::X, 180.0),
            (Vec3::new(1.0, 1.0, 0.0), DVec3::X, 45.0),
            (Vec3::new(0.0, 3.0, 0.0), DVec3::new(0.0, 0.5, 0.5), 45.0),
            (Vec3::new(-2.0, 0.0, 0.0), DVec3::new(1.0, 0.0, 1.0), 135.0),
        ] {
            let a = angle_degrees(got, want);
            assert!(
                (a - degrees).abs() < 1e-12,
                "{got:?} vs {want:?}: {a}, expected {degrees}"
            );
        }
    }

    fn clip(frames: Stats) -> ClipStats {
        ClipStats {
            clip: 0,
            frames,
            mid: Stats::default(),
        }
    }

    fn measured(errors: &[(f64, f64)]) -> Stats {
        let mut s = Stats {
            samples: 1,
            ..Stats::default()
        };
        for &(e, b) in errors {
            s.add_position(e, b, 0.0);
        }
        s
    }

    fn tolerances() -> crate::verify::Tolerances {
        crate::verify::Tolerances {
            relative: 1e-4,
            normal_degrees: 0.1,
            mid_relative: None,
            accept_recorded_loss: false,
        }
    }

    #[test]
    fn verdicts_need_evidence() {
        let judge = |s: Stats| crate::verify::judge(&clip(s), 2.0, &tolerances());
        // A clean measurement passes.
        assert!(judge(measured(&[(0.0, 0.0), (1e-5, 0.0)])).is_empty());
        // NaN anywhere fails, in any order (f64::max would drop it).
        for errors in [[(f64::NAN, 0.0), (0.0, 0.0)], [(0.0, 0.0), (f64::NAN, 0.0)]] {
            let f = judge(measured(&errors));
            assert!(f.iter().any(|f| f.contains("NaN")), "{f:?}");
        }
        let mut merged = measured(&[(0.0, 0.0)]);
        merged.merge(&measured(&[(f64::NAN, 0.0)]));
        merged.merge(&measured(&[(0.0, 0.0)]));
        assert!(!judge(merged).is_empty());
        // A recorded bound that is NaN, infinite or negative is not added to
        // the tolerance, and fails.
        for bound in [f64::NAN, f64::INFINITY, -1.0] {
            let s = measured(&[(0.5, bound)]);
            assert_eq!(s.bad_bounds, 1);
            assert_eq!(s.position_excess_max, 0.5, "{bound}");
            assert!(!judge(s).is_empty(), "{bound}");
        }
        // An absurd bound (larger than the model) fails even if it covers
        // the error.
        let f = judge(measured(&[(0.5, 1e9)]));
        assert!(
            f.iter().any(|f| f.contains("larger than the model")),
            "{f:?}"
        );
        // Zero samples is not a pass.
        assert!(!judge(Stats::default()).is_empty());
        // A NaN normal with a NaN bound fails too.
        let mut s = measured(&[(0.0, 0.0)]);
        s.add_normal(f64::NAN, None);
        assert!(!judge(s).is_empty());
        s = measured(&[(0.0, 0.0)]);
        s.add_normal(1.0, Some(f64::NAN));
        assert_eq!(s.bad_bounds, 1);
        assert!(!judge(s).is_empty());
    }

    #[test]
    fn dropped_influences_fail_unless_their_recorded_loss_is_accepted() {
        // The error against the source (0.5 of a 2.0 diagonal) is within
        // the loss the bake recorded (0.6) but far over the tolerance.
        let mut s = Stats {
            samples: 1,
            ..Stats::default()
        };
        s.add_position(0.5, 0.0, 0.6);
        assert_eq!(s.position_loss_max, 0.6);
        assert_eq!(s.position_excess_max, 0.5);
        let f = crate::verify::judge(&clip(s), 2.0, &tolerances());
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].contains("5.000e-1") && f[0].contains("--accept-recorded-loss"),
            "{f:?}"
        );
        let accepting = crate::verify::Tolerances {
            accept_recorded_loss: true,
            ..tolerances()
        };
        assert!(crate::verify::judge(&clip(s), 2.0, &accepting).is_empty());
        // Accepting the loss does not hide an error beyond it.
        s.add_position(0.7, 0.0, 0.6);
        let f = crate::verify::judge(&clip(s), 2.0, &accepting);
        assert!(f.iter().any(|f| f.contains("influence-loss")), "{f:?}");
    }
}
