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
use rigbake_core::model::Primitive;
use rigbake_core::reference::{
    BlendBlock, ColumnBlock, Columns, DEFORM_BLOCK, DirectGlobals, PrimitiveDeform, source_pose_at,
};
use rigbake_core::runtime::root_motion::motion_matrix;
use rigbake_core::runtime::rows::{PlayedBlock, blend_rows_block};
use rigbake_core::runtime::{AnimationState, ClipInfo, GpuState, PlayMode, RuntimeVertex};
use serde::Serialize;

use super::isa;
use super::rows::{PathRows, Resolved, source_primitive};
use crate::playback::{BonePlayback, BonePrimitive, LoadError, LoadedClip, VatPlayback};

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

impl Stats {
    /// [`Stats::add_played`] for each position of a block (its x, y and z
    /// columns), in order. Without a NaN (in the block or the box) the
    /// smallest and largest values do not depend on the order, so each
    /// column is folded eight lanes at a time by compares the compiler
    /// keeps in a register (f32 widens to f64 exactly, so the f32 values
    /// order as their widenings do); only the sign of a zero extreme may
    /// differ, which the box's use (the bounds check's comparisons) does
    /// not see. With a NaN the block goes one position at a time.
    #[inline(always)]
    fn add_played_block(&mut self, columns: [&[f32]; 3]) {
        const WIDE: usize = 8;
        let len = columns.iter().map(|c| c.len()).min().unwrap_or(0);
        let nan_box = self
            .played
            .is_some_and(|(lo, hi)| lo.iter().chain(&hi).any(|v| v.is_nan()));
        let nan = columns
            .iter()
            .any(|c| c[..len].iter().fold(false, |n, v| n | v.is_nan()));
        if len == 0 || nan || nan_box {
            let [x, y, z] = columns;
            for ((&x, &y), &z) in x.iter().zip(y).zip(z) {
                self.add_played(DVec3::new(f64::from(x), f64::from(y), f64::from(z)));
            }
            return;
        }
        let first = columns.map(|c| f64::from(c[0]));
        let (mut lo, mut hi) = self.played.unwrap_or((first, first));
        for (k, column) in columns.into_iter().enumerate() {
            let column = &column[..len];
            let (mut ls, mut hs) = ([column[0]; WIDE], [column[0]; WIDE]);
            let chunks = column.chunks_exact(WIDE);
            for &v in chunks.remainder() {
                ls[0] = if v < ls[0] { v } else { ls[0] };
                hs[0] = if v > hs[0] { v } else { hs[0] };
            }
            for q in chunks {
                for j in 0..WIDE {
                    ls[j] = if q[j] < ls[j] { q[j] } else { ls[j] };
                    hs[j] = if q[j] > hs[j] { q[j] } else { hs[j] };
                }
            }
            let l = ls.into_iter().fold(ls[0], |a, v| if v < a { v } else { a });
            let h = hs.into_iter().fold(hs[0], |a, v| if v > a { v } else { a });
            lo[k] = lo[k].min(f64::from(l));
            hi[k] = hi[k].max(f64::from(h));
        }
        self.played = Some((lo, hi));
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

/// The larger of two values by a compare (`b` when it is larger, else
/// `a`): `f64::max` for values without a NaN, a zero's sign aside, with
/// one instruction instead of `f64::max`'s NaN check.
#[inline(always)]
fn max_by_compare(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// Running maxima a block's statistics are folded in, side by side.
const LANES: usize = 4;

/// Calls `take(lane, a[i], b[i])` for every `i` below both lengths: whole
/// groups of [`LANES`] with lane `i % LANES`, then the tail in lane 0.
/// For folds the order within a lane does not change (maxima without a
/// NaN, counts, flags).
#[inline(always)]
fn in_lanes<A: Copy, B: Copy>(a: &[A], b: &[B], mut take: impl FnMut(usize, A, B)) {
    let m = a.len().min(b.len());
    let full = m - m % LANES;
    for (x, y) in a[..full]
        .chunks_exact(LANES)
        .zip(b[..full].chunks_exact(LANES))
    {
        for l in 0..LANES {
            take(l, x[l], y[l]);
        }
    }
    for (&x, &y) in a[full..m].iter().zip(&b[full..m]) {
        take(0, x, y);
    }
}

/// A recorded error bound (from the container) as the comparison may use
/// it: `None` when it is NaN, infinite or negative, which is never added
/// to the tolerance (the comparison then counts as unusable and fails).
fn usable_bound(bound: f64) -> Option<f64> {
    (bound.is_finite() && bound >= 0.0).then_some(bound)
}

impl Stats {
    /// One comparison: the position `error` judged by the recorded
    /// encoding `bound` and influence `loss`.
    #[cfg(test)]
    fn add_position(&mut self, error: f64, bound: f64, loss: f64) {
        self.add_positions(&[error], &[bound], loss);
    }

    /// One normal comparison of `degrees`, judged by `bound` when the
    /// bake records one.
    #[cfg(test)]
    fn add_normal(&mut self, degrees: f64, bound: Option<f64>) {
        self.add_normals(&[degrees], &[true], bound);
    }

    /// [`Stats::add_position`] for each of a block of comparisons, in
    /// order (the same sums, to the bit): `errors[i]` judged by
    /// `bounds[i]`, with the primitive's recorded `loss`.
    #[cfg(test)]
    fn add_positions(&mut self, errors: &[f64], bounds: &[f64], loss: f64) {
        let sum = errors.iter().fold(self.position_sum, |sum, &e| sum + e);
        self.add_positions_summed(errors, bounds, loss, sum);
    }

    /// [`Stats::add_positions`] and [`Stats::add_normals`] of one block:
    /// the same numbers, with the two running sums (chains of dependent
    /// additions, in order) taken side by side in one loop.
    #[inline(always)]
    fn add_block(
        &mut self,
        errors: &[f64],
        bounds: &[f64],
        loss: f64,
        degrees: &[f64],
        judged: &[bool],
        normal: Option<f64>,
    ) {
        let (mut positions, mut normals) = (self.position_sum, self.normal_sum);
        for ((&e, &d), &j) in errors.iter().zip(degrees).zip(judged) {
            positions += e;
            let sum = normals + d;
            normals = if j { sum } else { normals };
        }
        self.add_positions_summed(errors, bounds, loss, positions);
        self.add_normals_summed(degrees, judged, normal, normals);
    }

    /// [`Stats::add_positions`] with the new sum of the errors given.
    #[inline(always)]
    fn add_positions_summed(&mut self, errors: &[f64], bounds: &[f64], loss: f64, sum: f64) {
        let n = errors.len() as u64;
        if n == 0 {
            return;
        }
        self.vertices += n;
        let loss = usable_bound(loss).unwrap_or_else(|| {
            self.bad_bounds += n;
            0.0
        });
        self.position_loss_max = max_nan(self.position_loss_max, loss);
        self.position_sum = sum;
        // Maxima of values without a NaN are the same in any order, so
        // they are folded in `LANES` running maxima by a compare (without
        // `f64::max`'s check for a NaN per value); a NaN error makes
        // the maxima NaN below, whatever they fold to. No value here is
        // -0 (an error is the square root of a sum of squares, a
        // difference of equal values is +0, and a -0 bound is taken as
        // +0, which subtracts the same), so no zero's sign can tell the
        // orders apart.
        let (mut nans, mut bads) = ([0u64; LANES], [0u64; LANES]);
        let (mut error, mut excess) = ([0.0f64; LANES], [0.0f64; LANES]);
        let (mut after_loss, mut bound) = ([0.0f64; LANES], [0.0f64; LANES]);
        let take = |l: usize, e: f64, b: f64| {
            let usable = b.is_finite() & (b >= 0.0);
            bads[l] += u64::from(!usable);
            nans[l] += u64::from(e.is_nan());
            // `+ 0.0` makes a -0 bound +0; `e - b` is the same.
            let b = if usable { b + 0.0 } else { 0.0 };
            error[l] = max_by_compare(error[l], e);
            excess[l] = max_by_compare(excess[l], e - b);
            after_loss[l] = max_by_compare(after_loss[l], e - b - loss);
            bound[l] = max_by_compare(bound[l], b);
        };
        in_lanes(errors, bounds, take);
        let (nan, bad) = (nans.iter().sum::<u64>() > 0, bads.iter().sum::<u64>());
        let [error, excess, after_loss, bound] =
            [error, excess, after_loss, bound].map(|l| l.into_iter().fold(0.0, max_by_compare));
        self.bad_bounds += bad;
        let folded = |old: f64, new: f64| if nan { f64::NAN } else { max_nan(old, new) };
        // The stored maxima start at 0 and only grow, so the locals'
        // starting zeros change nothing.
        self.position_max = folded(self.position_max, error);
        self.position_excess_max = folded(self.position_excess_max, excess);
        self.position_excess_after_loss_max =
            folded(self.position_excess_after_loss_max, after_loss);
        self.position_bound_max = max_nan(self.position_bound_max, bound);
    }

    /// [`Stats::add_normal`] for the comparisons of a block that have a
    /// normal to judge (`judged[i]`), in order, all with the primitive's
    /// `bound`.
    #[cfg(test)]
    fn add_normals(&mut self, degrees: &[f64], judged: &[bool], bound: Option<f64>) {
        let sum = degrees.iter().zip(judged).fold(
            self.normal_sum,
            |sum, (&d, &j)| if j { sum + d } else { sum },
        );
        self.add_normals_summed(degrees, judged, bound, sum);
    }

    /// [`Stats::add_normals`] with the new sum of the judged angles given.
    #[inline(always)]
    fn add_normals_summed(
        &mut self,
        degrees: &[f64],
        judged: &[bool],
        bound: Option<f64>,
        sum: f64,
    ) {
        // Folded in lanes like the positions' maxima (an angle is never
        // -0: the arctangent of +0 over a positive value, or 180).
        let (mut count, mut nans, mut maxima) = ([0u64; LANES], [0u64; LANES], [0.0f64; LANES]);
        let take = |l: usize, d: f64, j: bool| {
            count[l] += u64::from(j);
            nans[l] += u64::from(j & d.is_nan());
            maxima[l] = if j {
                max_by_compare(maxima[l], d)
            } else {
                maxima[l]
            };
        };
        in_lanes(degrees, judged, take);
        let (n, nan) = (count.iter().sum::<u64>(), nans.iter().sum::<u64>() > 0);
        let max = maxima.into_iter().fold(0.0, max_by_compare);
        if n == 0 {
            return;
        }
        self.normals += n;
        self.normal_sum = sum;
        self.normal_max = if nan {
            f64::NAN
        } else {
            max_nan(self.normal_max, max)
        };
        match bound {
            Some(bound) => {
                let bound = usable_bound(bound)
                    .filter(|b| *b <= 180.0)
                    .unwrap_or_else(|| {
                        self.bad_bounds += n;
                        0.0
                    });
                self.normals_judged += n;
                self.normal_excess_max = if nan {
                    f64::NAN
                } else {
                    max_nan(self.normal_excess_max, max - bound)
                };
            }
            None if nan => self.normal_excess_max = f64::NAN,
            None => {}
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
/// is zero (a lost normal counts as wrong): [`compare_block`] on one
/// vertex.
#[cfg(test)]
fn angle_degrees(got: Vec3, want: DVec3) -> f64 {
    let mut block = PlayedBlock::<BLOCK>::default();
    for k in 0..3 {
        block.normal[k][0] = got[k];
    }
    let columns: [[f64; 1]; 6] = std::array::from_fn(|k| [if k < 3 { 0.0 } else { want[k - 3] }]);
    let mut degrees = [0.0; BLOCK];
    compare_block(
        &block,
        columns.each_ref().map(|c| c.as_slice()),
        &mut [0.0; BLOCK],
        &mut degrees,
        &mut [false; BLOCK],
    );
    degrees[0]
}

/// What one sample produced.
struct SampleResult {
    stats: Stats,
    lo: DVec3,
    hi: DVec3,
}

/// Vertices compared per block: a block's played and direct values stay
/// in the first-level cache, and the loops over it vectorise.
const BLOCK: usize = DEFORM_BLOCK;

/// What the bake recorded about one primitive's errors (the position
/// bound may vary per vertex; it comes with each played vertex).
#[derive(Debug, Clone, Copy)]
struct Recorded {
    /// Position loss from dropped influences (model units).
    loss: f64,
    /// Bound on the normal angle (degrees), when normals are judged.
    normal: Option<f64>,
}

/// A block of vertices as a path plays them (in place, before root
/// motion), with the recorded encoding bound of each position.
struct Block {
    played: PlayedBlock<BLOCK>,
    bounds: [f64; BLOCK],
}

/// Scratch for [`compare_job_block`], kept across blocks and samples.
struct Scratch {
    block: Block,
    errors: [f64; BLOCK],
    degrees: [f64; BLOCK],
    want_none: [bool; BLOCK],
    judged: [bool; BLOCK],
}

impl Scratch {
    fn new() -> Box<Self> {
        Box::new(Self {
            block: Block {
                played: PlayedBlock::default(),
                bounds: [0.0; BLOCK],
            },
            errors: [0.0; BLOCK],
            degrees: [0.0; BLOCK],
            want_none: [false; BLOCK],
            judged: [false; BLOCK],
        })
    }
}

/// Compares one block of a job's vertices, `start..start + len`, as its
/// path plays them (`job.play`) with their direct evaluation `want`
/// (positions' x, y, z and normals' x, y, z columns of the block, each
/// at least `len` long), into `out`: per vertex, the distance and (where
/// the path plays normals and the source defines one) the angle between
/// the normals, folded in vertex order.
#[inline(always)]
fn compare_job_block(
    out: &mut SampleResult,
    s: &mut Scratch,
    want: [&[f64]; 6],
    start: usize,
    len: usize,
    job: &Job<'_, '_>,
) {
    job.play.fill(start, len, &mut s.block);
    let played = &mut s.block.played;
    out.stats
        .add_played_block(played.position.each_ref().map(|c| &c[..len]));
    if let Some(m) = &job.motion {
        for i in 0..len {
            let v = moved(
                RuntimeVertex {
                    position: Vec3::new(
                        played.position[0][i],
                        played.position[1][i],
                        played.position[2][i],
                    ),
                    normal: Some(Vec3::new(
                        played.normal[0][i],
                        played.normal[1][i],
                        played.normal[2][i],
                    )),
                },
                Some(m),
            );
            let n = v.normal.unwrap_or_default();
            for k in 0..3 {
                played.position[k][i] = v.position[k];
                played.normal[k][i] = n[k];
            }
        }
    }
    let columns = want.map(|c| &c[..len]);
    compare_block(
        &s.block.played,
        columns,
        &mut s.errors,
        &mut s.degrees,
        &mut s.want_none,
    );
    let [x, y, z, ..] = columns;
    grow_box(&mut out.lo, &mut out.hi, [x, y, z]);
    for i in 0..len {
        s.judged[i] = job.has_normal & !s.want_none[i];
    }
    out.stats.add_block(
        &s.errors[..len],
        &s.block.bounds[..len],
        job.recorded.loss,
        &s.degrees[..len],
        &s.judged[..len],
        job.recorded.normal,
    );
}

/// Grows the box `lo..hi` by the points of `columns` (x, y and z): per
/// coordinate, glam's `min` and `max` (`if a < b { a } else { b }`).
/// Without a NaN in play that is the smallest (largest) value whatever
/// the order, so the column is folded four lanes at a time, in local
/// accumulators the compiler keeps in registers; only the sign of a zero
/// bound may differ, which the box's one use, its diagonal, does not see.
/// With a NaN the fold depends on the order, and runs in vertex order.
#[inline(always)]
fn grow_box(lo: &mut DVec3, hi: &mut DVec3, columns: [&[f64]; 3]) {
    let min = |a: f64, b: f64| if a < b { a } else { b };
    let max = |a: f64, b: f64| if a > b { a } else { b };
    for (k, column) in columns.into_iter().enumerate() {
        let (mut l, mut h) = (lo[k], hi[k]);
        let nan = column
            .iter()
            .fold(l.is_nan() | h.is_nan(), |n, v| n | v.is_nan());
        if nan {
            for &v in column {
                (l, h) = (min(l, v), max(h, v));
            }
        } else {
            let (mut ls, mut hs) = ([l; 4], [h; 4]);
            let chunks = column.chunks_exact(4);
            for &v in chunks.remainder() {
                (ls[0], hs[0]) = (min(ls[0], v), max(hs[0], v));
            }
            for q in chunks {
                for j in 0..4 {
                    (ls[j], hs[j]) = (min(ls[j], q[j]), max(hs[j], q[j]));
                }
            }
            l = min(min(ls[0], ls[1]), min(ls[2], ls[3]));
            h = max(max(hs[0], hs[1]), max(hs[2], hs[3]));
        }
        lo[k] = l;
        hi[k] = h;
    }
}

/// The distances and normal angles of a block's vertices (as many as
/// `want`'s columns hold, at most [`BLOCK`]): `distance` and
/// [`angle_degrees`] written out as plain loops over the columns (the
/// same operations in the same order), which compile to the widest
/// vectors the copy is built for; the arctangents go through
/// [`super::angle::atan2_columns`]. `want_none[i]`: the direct normal is
/// zero (not judged).
#[inline(always)]
fn compare_block(
    got: &PlayedBlock<BLOCK>,
    want: [&[f64]; 6],
    errors: &mut [f64; BLOCK],
    degrees: &mut [f64; BLOCK],
    want_none: &mut [bool; BLOCK],
) {
    let len = want.iter().map(|c| c.len()).min().unwrap_or(0).min(BLOCK);
    let g = |c: &[f32; BLOCK], i: usize| f64::from(c[i]);
    for i in 0..len {
        // `distance`: (got - want).length().
        let d: [f64; 3] = std::array::from_fn(|k| g(&got.position[k], i) - want[k][i]);
        errors[i] = ((d[0] * d[0]) + (d[1] * d[1]) + (d[2] * d[2])).sqrt();
    }
    // The angle: atan2(|got x want|, got . want), 180 where `got` is zero.
    let (mut y, mut x) = ([0.0; BLOCK], [0.0; BLOCK]);
    let mut got_none = [false; BLOCK];
    for i in 0..len {
        let gn: [f64; 3] = std::array::from_fn(|k| g(&got.normal[k], i));
        let wn: [f64; 3] = std::array::from_fn(|k| want[3 + k][i]);
        let c = [
            gn[1] * wn[2] - wn[1] * gn[2],
            gn[2] * wn[0] - wn[2] * gn[0],
            gn[0] * wn[1] - wn[0] * gn[1],
        ];
        y[i] = ((c[0] * c[0]) + (c[1] * c[1]) + (c[2] * c[2])).sqrt();
        x[i] = (gn[0] * wn[0]) + (gn[1] * wn[1]) + (gn[2] * wn[2]);
        got_none[i] = (gn[0] == 0.0) & (gn[1] == 0.0) & (gn[2] == 0.0);
        want_none[i] = (wn[0] == 0.0) & (wn[1] == 0.0) & (wn[2] == 0.0);
        // A zero normal's angle is 180 or unused: the arctangent of (0, 1)
        // keeps its block on the fast path.
        if got_none[i] | want_none[i] {
            (y[i], x[i]) = (0.0, 1.0);
        }
    }
    super::angle::atan2_columns(&y[..len], &x[..len], &mut degrees[..len]);
    for i in 0..len {
        let angle = degrees[i] * (180.0f64 / std::f64::consts::PI);
        degrees[i] = if got_none[i] { 180.0 } else { angle };
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
#[inline(always)]
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

/// Which direct evaluation a job compares with: the primitive (node and
/// index), the space it is evaluated in and the normal convention.
type DirectKey = (usize, usize, Option<usize>, NormalConvention);

/// One primitive of one path at one sample: its played vertices, and how
/// they are compared with their direct evaluation.
struct Job<'p, 'r> {
    /// Index of the path (of its result in the sample's).
    path: usize,
    /// The direct evaluation compared with.
    key: DirectKey,
    /// Vertices compared, from the first (at most the primitive's).
    count: usize,
    /// The root motion the played vertices are moved by, in the
    /// evaluation's space.
    motion: Option<DMat4>,
    recorded: Recorded,
    /// Whether the path plays normals for this primitive.
    has_normal: bool,
    play: Play<'p, 'r>,
}

/// What a sample is: the playback state, the source's pose and the root
/// motion its clip moves by.
struct At<'p> {
    gpu: &'p GpuState,
    pose: &'p LocalPose,
    motion: Option<&'p DMat4>,
}

/// Scratch kept across samples: the blend's and the direct evaluation's
/// blocks, and the comparison's.
struct Pool {
    /// Buffers for the evaluations a sample keeps whole, reused.
    columns: Vec<Columns>,
    blend: Box<BlendBlock>,
    want: Box<ColumnBlock>,
    scratch: Box<Scratch>,
}

impl Pool {
    fn new() -> Self {
        Self {
            columns: Vec::new(),
            blend: BlendBlock::boxed(),
            want: ColumnBlock::boxed(),
            scratch: Scratch::new(),
        }
    }
}

/// One step of a sample's [`plan`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// Evaluate group `group` (jobs that share one direct evaluation) a
    /// block at a time; the jobs `streamed` compare each block while it
    /// is cached; `keep`: the evaluation is also kept whole for jobs of
    /// the group that run later.
    Evaluate {
        group: usize,
        streamed: Vec<usize>,
        keep: bool,
    },
    /// Job `job` compares with the kept evaluation of group `group`.
    Kept { job: usize, group: usize },
}

/// How to run one sample's jobs (each job's path and the direct
/// evaluation it compares with, in job order: path by path, each path's
/// in its own order) so that each evaluation is computed once and every
/// path still runs its jobs in its own order (its sums are folded in that
/// order): the jobs grouped by evaluation (keys in the order first used),
/// then the groups in that order, each evaluated a block at a time and
/// compared by the jobs whose turn it is (at most one per path); a job
/// whose turn has not come keeps the evaluation whole, and runs from it
/// as soon as its path reaches it. With the outputs `rigbake` writes the
/// bone and VAT paths list the same primitives, so every job is streamed
/// unless a path lists them in another order (Knight's bone path).
fn plan(
    jobs: impl Iterator<Item = (usize, DirectKey)>,
    paths: usize,
) -> (Vec<Vec<usize>>, Vec<Step>) {
    let mut keys: Vec<DirectKey> = Vec::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of = Vec::new();
    let mut path_of = Vec::new();
    let mut path_jobs: Vec<Vec<usize>> = vec![Vec::new(); paths];
    for (j, (path, key)) in jobs.enumerate() {
        let g = keys.iter().position(|k| *k == key).unwrap_or_else(|| {
            keys.push(key);
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(j);
        group_of.push(g);
        path_of.push(path);
        if let Some(list) = path_jobs.get_mut(path) {
            list.push(j);
        }
    }
    let mut next = vec![0usize; paths];
    let mut evaluated = vec![false; groups.len()];
    let mut steps = Vec::new();
    let turn = |next: &[usize], p: usize| path_jobs.get(p).and_then(|l| l.get(next[p]).copied());
    for (g, group) in groups.iter().enumerate() {
        let mut streamed: Vec<usize> = Vec::new();
        for &j in group {
            let p = path_of[j];
            if turn(&next, p) == Some(j) && !streamed.iter().any(|&s| path_of[s] == p) {
                streamed.push(j);
            }
        }
        let keep = streamed.len() < group.len();
        for &j in &streamed {
            next[path_of[j]] += 1;
        }
        steps.push(Step::Evaluate {
            group: g,
            streamed,
            keep,
        });
        evaluated[g] = true;
        // Every path whose next jobs compare with a kept evaluation runs
        // them now.
        for p in 0..paths {
            while let Some(j) = turn(&next, p).filter(|&j| evaluated[group_of[j]]) {
                steps.push(Step::Kept {
                    job: j,
                    group: group_of[j],
                });
                next[p] += 1;
            }
        }
    }
    (groups, steps)
}

/// Runs one sample's jobs into `out` (one result per path) by their
/// [`plan`]: each direct evaluation of `pose` (`core::reference`, node
/// globals computed once for all) computed once, a block at a time, each
/// block compared by the jobs streamed with it while it is in the cache.
/// Inlined into each instruction-set copy.
#[inline(always)]
fn run_jobs(
    model: &Model,
    pose: &LocalPose,
    jobs: &[Job<'_, '_>],
    pool: &mut Pool,
    out: &mut [SampleResult],
) {
    let mut globals = DirectGlobals::new(model, pose);
    let (groups, steps) = plan(jobs.iter().map(|j| (j.path, j.key)), out.len());
    let mut kept: Vec<Option<Columns>> = vec![None; groups.len()];
    for step in &steps {
        match step {
            Step::Evaluate {
                group,
                streamed,
                keep,
            } => {
                let g = &groups[*group];
                let Some(key) = g.first().map(|&j| jobs[j].key) else {
                    continue;
                };
                let (node, primitive, space, convention) = key;
                let mut whole = keep.then(|| {
                    let mut c = pool.columns.pop().unwrap_or_default();
                    c.clear();
                    c
                });
                if let Some(d) =
                    PrimitiveDeform::new(model, pose, &mut globals, node, primitive, space)
                {
                    let vertices = d.vertex_count();
                    let n = g
                        .iter()
                        .map(|&j| jobs[j].count.min(vertices))
                        .max()
                        .unwrap_or(0);
                    for start in (0..n).step_by(BLOCK) {
                        let len =
                            d.deform_block(&mut pool.blend, convention, start, &mut pool.want);
                        let want = pool.want.columns();
                        for &j in streamed {
                            let job = &jobs[j];
                            let len = BLOCK.min(job.count.min(vertices).saturating_sub(start));
                            if len > 0
                                && let Some(out) = out.get_mut(job.path)
                            {
                                compare_job_block(out, &mut pool.scratch, want, start, len, job);
                            }
                        }
                        if let Some(c) = &mut whole {
                            c.extend_from_block(&pool.want, len.min(n - start));
                        }
                    }
                }
                kept[*group] = whole;
            }
            Step::Kept { job, group } => {
                let (Some(want), Some(job)) = (&kept[*group], jobs.get(*job)) else {
                    continue;
                };
                let Some(out) = out.get_mut(job.path) else {
                    continue;
                };
                let count = job.count.min(want.len());
                for start in (0..count).step_by(BLOCK) {
                    let len = BLOCK.min(count - start);
                    let want = want.columns_from(start);
                    compare_job_block(out, &mut pool.scratch, want, start, len, job);
                }
            }
        }
    }
    pool.columns.extend(kept.into_iter().flatten());
}

/// The bone path's jobs at one sample (path `path` of the sample's
/// results), appended to `jobs`.
fn bone_jobs<'p, 'r>(
    subject: &Subject<'p>,
    bones: &'p BonePlayback,
    rows: &'p PathRows<'_>,
    values: &'p Resolved<'r>,
    at: &At<'p>,
    path: usize,
    jobs: &mut Vec<Job<'p, 'r>>,
) {
    let model = subject.model;
    for (k, prim) in bones.primitives.iter().enumerate() {
        let tex = &bones.textures[prim.set];
        let Some(src) = source_primitive(model, prim.node, prim.primitive) else {
            continue;
        };
        let (start, count) = rows.span(k);
        jobs.push(Job {
            path,
            key: (
                prim.node,
                prim.primitive,
                Some(tex.space_node),
                NormalConvention::InverseTranspose,
            ),
            count,
            motion: motion_in_space(model, at.pose, at.motion, Some(tex.space_node)),
            recorded: Recorded {
                // Dropped influences are a separate, recorded loss: judged
                // only when accepted.
                loss: prim.position_error,
                // Normal errors have a bound only when the bake is exact.
                normal: (tex.max_error == 0.0 && !prim.truncated).then_some(0.0),
            },
            has_normal: prim
                .bound
                .as_ref()
                .map_or(src.normals.is_some(), |b| b.normals.is_some()),
            play: Play {
                gpu: at.gpu,
                last_row: tex.rows.saturating_sub(1),
                values,
                start,
                bounds: Bounds::Each(rows.bounds(k)),
                rest: Some((prim, src)),
            },
        });
    }
}

/// How a path plays one primitive's vertices, a block at a time, for
/// [`compare_job_block`]: from its kept rows, or as a disabled state draws
/// them.
struct Play<'p, 'r> {
    gpu: &'p GpuState,
    /// The last timeline row of the primitive's texture.
    last_row: u32,
    values: &'p Resolved<'r>,
    /// Where the primitive's vertices start in a row's values.
    start: usize,
    /// The recorded encoding bound each played position is judged by.
    bounds: Bounds<'p>,
    /// What a disabled state draws: the bone path's mesh as it is (the
    /// playback primitive and its source); `None`, the VAT path's zeros.
    rest: Option<(&'p BonePrimitive, &'p Primitive)>,
}

/// Recorded encoding bounds of a primitive's positions.
enum Bounds<'p> {
    /// One per vertex (the bone path's: they grow with the position).
    Each(&'p [f64]),
    /// One for every vertex (the VAT path's).
    All(f64),
}

impl Play<'_, '_> {
    /// Plays vertices `from..from + len` of the primitive into `block`,
    /// with their bounds.
    #[inline(always)]
    fn fill(&self, from: usize, len: usize, block: &mut Block) {
        if self.gpu.enabled {
            let index = self.start + from;
            blend_rows_block(
                self.gpu,
                self.last_row,
                len,
                |row| self.values.row(row, index),
                &mut block.played,
            );
        } else if let Some((prim, src)) = self.rest {
            for i in 0..len {
                let (p, normal) = prim.vertex(src, from + i);
                let n = normal.unwrap_or_default();
                for k in 0..3 {
                    block.played.position[k][i] = p[k];
                    block.played.normal[k][i] = n[k];
                }
            }
        } else {
            block.played = PlayedBlock::default();
        }
        match self.bounds {
            Bounds::Each(b) => block.bounds[..len].copy_from_slice(&b[from..from + len]),
            Bounds::All(b) => block.bounds[..len].fill(b),
        }
    }
}

/// How far a point `p` can move when every entry of the (blended) skin
/// matrix that carries it is off by at most `max_error` (a half-float bone
/// texture): each of the three coordinates by at most `max_error * (|x| +
/// |y| + |z| + 1)`, so the point by `sqrt(3)` times that (blending with
/// weights that sum to 1 keeps the entry bound).
#[inline(always)]
pub fn encoded_matrix_bound(max_error: f64, p: DVec3) -> f64 {
    3f64.sqrt() * max_error * (p.abs().element_sum() + 1.0)
}

/// The VAT path's jobs at one sample (path `path` of the sample's
/// results), appended to `jobs`.
fn vat_jobs<'p, 'r>(
    subject: &Subject<'p>,
    vat: &'p VatPlayback,
    rows: &'p PathRows<'_>,
    values: &'p Resolved<'r>,
    at: &At<'p>,
    path: usize,
    jobs: &mut Vec<Job<'p, 'r>>,
) {
    let motion = motion_in_space(subject.model, at.pose, at.motion, vat.reference_node);
    for (k, prim) in vat.primitives.iter().enumerate() {
        let (start, count) = rows.span(k);
        jobs.push(Job {
            path,
            key: (
                prim.node,
                prim.primitive,
                vat.reference_node,
                vat.convention,
            ),
            count,
            motion,
            recorded: Recorded {
                loss: 0.0,
                normal: prim.normals.as_ref().map(|n| n.max_error()),
            },
            has_normal: prim.normals.is_some(),
            play: Play {
                gpu: at.gpu,
                last_row: prim.address.frames.saturating_sub(1),
                values,
                start,
                bounds: Bounds::All(prim.positions.max_error()),
                rest: None,
            },
        });
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

/// [`evaluate`] on one run of samples, in order: compiled for AVX2 when
/// the CPU has it ([`isa`]), else for the baseline; the same bits either
/// way.
fn evaluate_run(
    subject: &Subject<'_>,
    paths: &[Path<'_>],
    run: &[Sample],
) -> Vec<Vec<SampleResult>> {
    #[cfg(target_arch = "x86_64")]
    if isa::avx2() {
        // SAFETY: the CPU has AVX2 (`isa::avx2` checked).
        #[allow(unsafe_code)]
        return unsafe { evaluate_run_avx2(subject, paths, run) };
    }
    evaluate_run_body(subject, paths, run)
}

/// [`evaluate_run_body`] compiled for AVX2 (no FMA: [`isa`]).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2")]
unsafe fn evaluate_run_avx2(
    subject: &Subject<'_>,
    paths: &[Path<'_>],
    run: &[Sample],
) -> Vec<Vec<SampleResult>> {
    evaluate_run_body(subject, paths, run)
}

/// The body of [`evaluate_run`], inlined into each instruction-set copy.
#[inline(always)]
fn evaluate_run_body(
    subject: &Subject<'_>,
    paths: &[Path<'_>],
    run: &[Sample],
) -> Vec<Vec<SampleResult>> {
    let model = subject.model;
    let (mut pose, mut scratch) = (LocalPose::rest(model), LocalPose::rest(model));
    let mut rows: Vec<PathRows<'_>> = paths.iter().map(|p| PathRows::new(model, *p)).collect();
    let mut pool = Pool::new();
    let mut results = Vec::with_capacity(run.len());
    for s in run {
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
        let values: Vec<Resolved<'_>> = rows.iter().map(PathRows::resolved).collect();
        let at = At {
            gpu: &gpu,
            pose: &pose,
            motion: motion.as_ref(),
        };
        let mut jobs = Vec::new();
        for (k, ((path, rows), values)) in paths.iter().zip(&rows).zip(&values).enumerate() {
            match path {
                Path::Bones(b) => bone_jobs(subject, b, rows, values, &at, k, &mut jobs),
                Path::Vat(v) => vat_jobs(subject, v, rows, values, &at, k, &mut jobs),
            }
        }
        let mut per_path: Vec<SampleResult> = paths
            .iter()
            .map(|_| SampleResult {
                stats: Stats {
                    samples: 1,
                    ..Stats::default()
                },
                lo: DVec3::splat(f64::INFINITY),
                hi: DVec3::splat(f64::NEG_INFINITY),
            })
            .collect();
        run_jobs(model, &pose, &jobs, &mut pool, &mut per_path);
        results.push(per_path);
    }
    results
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
    /// Runs a plan on paper: the order each path's jobs run in, and how
    /// often each group is evaluated.
    fn run_plan(jobs: &[(usize, usize)], paths: usize) -> (Vec<Vec<usize>>, Vec<usize>, usize) {
        let key = |node: usize| (node, 0, None, NormalConvention::InverseTranspose);
        let (groups, steps) = plan(jobs.iter().map(|&(path, node)| (path, key(node))), paths);
        let mut ran = vec![Vec::new(); paths];
        let mut evaluated = vec![0; groups.len()];
        let mut kept = 0;
        for step in steps {
            match step {
                Step::Evaluate {
                    group, streamed, ..
                } => {
                    evaluated[group] += 1;
                    for j in streamed {
                        assert!(groups[group].contains(&j));
                        ran[jobs[j].0].push(j);
                    }
                }
                Step::Kept { job, group } => {
                    assert!(groups[group].contains(&job) && evaluated[group] == 1);
                    ran[jobs[job].0].push(job);
                    kept += 1;
                }
            }
        }
        (ran, evaluated, kept)
    }

    #[test]
    fn every_path_runs_its_jobs_in_order_and_each_evaluation_is_computed_once() {
        let cases: [(&[(usize, usize)], usize); 5] = [
            // The same primitives in the same order: all streamed.
            (&[(0, 1), (0, 2), (1, 1), (1, 2)], 0),
            // A path comparing a subset, in the same order.
            (&[(0, 1), (0, 2), (0, 3), (1, 1), (1, 3)], 0),
            // Another order (Knight's bone and VAT paths): the second
            // path's first jobs wait for their turn on kept evaluations.
            (
                &[
                    (0, 5),
                    (0, 6),
                    (0, 1),
                    (0, 2),
                    (1, 1),
                    (1, 2),
                    (1, 5),
                    (1, 6),
                ],
                2,
            ),
            // Reversed.
            (&[(0, 1), (0, 2), (0, 3), (1, 3), (1, 2), (1, 1)], 2),
            // A primitive compared twice by one path.
            (&[(0, 1), (0, 1), (1, 1)], 1),
        ];
        for (jobs, want_kept) in cases {
            let (ran, evaluated, kept) = run_plan(jobs, 2);
            for (p, ran) in ran.iter().enumerate() {
                let own: Vec<usize> = (0..jobs.len()).filter(|&j| jobs[j].0 == p).collect();
                assert_eq!(ran, &own, "path {p} of {jobs:?}");
            }
            assert!(evaluated.iter().all(|&n| n == 1), "{jobs:?}: {evaluated:?}");
            assert_eq!(kept, want_kept, "{jobs:?}");
        }
    }

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

    /// A statistics' counts and the bits of its figures.
    fn stats_bits(s: &Stats) -> ([u64; 4], [u64; 9]) {
        (
            [s.vertices, s.bad_bounds, s.normals, s.normals_judged],
            [
                s.position_max,
                s.position_sum,
                s.position_excess_max,
                s.position_bound_max,
                s.position_loss_max,
                s.position_excess_after_loss_max,
                s.normal_max,
                s.normal_sum,
                s.normal_excess_max,
            ]
            .map(f64::to_bits),
        )
    }

    /// Three columns of `len` values drawn from `pool` by `seed`, with
    /// `nan` at `nan_at` in column `seed % 3`.
    fn box_columns<T: Copy>(
        pool: &[T],
        nan: T,
        len: usize,
        seed: usize,
        nan_at: Option<usize>,
    ) -> [Vec<T>; 3] {
        std::array::from_fn(|k| {
            (0..len)
                .map(|i| match nan_at {
                    Some(n) if n == i && k == seed % 3 => nan,
                    _ => pool[(i * 7 + k * 3 + seed) % pool.len()],
                })
                .collect()
        })
    }

    /// The box grown a block at a time is the one glam's `min` and `max`
    /// fold in vertex order: the same values without a NaN (a zero's
    /// sign aside), the same bits with one.
    #[test]
    fn the_box_grows_as_the_vertex_order_fold() {
        let pool = [3.0, -1.5, 0.0, -0.0, 7.25, -8.0, 2.0, 1e-300, -1e300, 0.5];
        for len in 0..14usize {
            for seed in 0..6usize {
                for nan_at in [None, Some(0), Some(len / 2), Some(len.saturating_sub(1))] {
                    let c = box_columns(&pool, f64::NAN, len, seed, nan_at);
                    let start = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
                    let (mut lo, mut hi) = start;
                    grow_box(&mut lo, &mut hi, [&c[0], &c[1], &c[2]]);
                    let (mut want_lo, mut want_hi) = start;
                    for ((&x, &y), &z) in c[0].iter().zip(&c[1]).zip(&c[2]) {
                        let w = DVec3::new(x, y, z);
                        want_lo = want_lo.min(w);
                        want_hi = want_hi.max(w);
                    }
                    for (got, want) in [(lo, want_lo), (hi, want_hi)] {
                        for k in 0..3 {
                            let same = if nan_at.is_some_and(|n| n < len) && k == seed % 3 {
                                got[k].to_bits() == want[k].to_bits()
                                    || (got[k].is_nan() && want[k].is_nan())
                            } else {
                                got[k] == want[k]
                            };
                            assert!(
                                same,
                                "{len} values, seed {seed}, NaN at {nan_at:?}: {got} vs {want}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The played box grown a block at a time is the one
    /// [`Stats::add_played`] grows a position at a time: the same values
    /// without a NaN (a zero's sign aside), the same bits with one, from
    /// an empty box or a grown one.
    #[test]
    fn the_played_box_grows_as_position_by_position() {
        let pool = [
            3.0f32, -1.5, 0.0, -0.0, 7.25, -8.0, 2.0, 1e-30, -1e30, 0.5, 4.0,
        ];
        for len in 0..21usize {
            for seed in 0..5usize {
                for nan_at in [None, Some(0), Some(len / 2)] {
                    let c = box_columns(&pool, f32::NAN, len, seed, nan_at);
                    for start in [None, Some(([-2.0; 3], [1.0; 3]))] {
                        let mut block = Stats {
                            played: start,
                            ..Stats::default()
                        };
                        block.add_played_block([&c[0], &c[1], &c[2]]);
                        let mut one = Stats {
                            played: start,
                            ..Stats::default()
                        };
                        for ((&x, &y), &z) in c[0].iter().zip(&c[1]).zip(&c[2]) {
                            one.add_played(DVec3::new(f64::from(x), f64::from(y), f64::from(z)));
                        }
                        let flat = |s: &Stats| s.played.map(|(lo, hi)| [lo, hi].concat());
                        match (flat(&block), flat(&one)) {
                            (Some(got), Some(want)) => {
                                for (g, w) in got.iter().zip(&want) {
                                    let same = if nan_at.is_some_and(|n| n < len) {
                                        g.to_bits() == w.to_bits()
                                    } else {
                                        g == w
                                    };
                                    assert!(same, "{len} {seed} {nan_at:?}: {got:?} vs {want:?}");
                                }
                            }
                            (got, want) => assert_eq!(got.is_none(), want.is_none()),
                        }
                    }
                }
            }
        }
    }

    /// Blocks of any length (lanes and a tail) fold their statistics as
    /// their comparisons one by one do, bit for bit.
    #[test]
    fn blocks_of_any_length_fold_like_one_by_one() {
        let errors = [
            0.5, 1e-7, 0.0, 3.25, 1e-3, 0.75, 2.0, 1e-9, 0.125, 6.0, 1e-5,
        ];
        let bounds = [
            0.0,
            1e-6,
            f64::NAN,
            0.5,
            -1.0,
            1e-3,
            f64::INFINITY,
            0.0,
            2.0,
            -0.0,
        ];
        let degrees = [0.1, 0.0, 179.0, 2.5, 1e-4, 0.3, 45.0, 0.01, 90.0];
        for len in 0..23usize {
            for (seed, loss) in [(0usize, 0.0), (3, 0.25), (5, f64::NAN)] {
                let at = |i: usize, n: usize| (i * 5 + seed) % n;
                let e: Vec<f64> = (0..len).map(|i| errors[at(i, errors.len())]).collect();
                let b: Vec<f64> = (0..len).map(|i| bounds[at(i, bounds.len())]).collect();
                let d: Vec<f64> = (0..len).map(|i| degrees[at(i, degrees.len())]).collect();
                let j: Vec<bool> = (0..len).map(|i| (i + seed) % 4 != 1).collect();
                let mut block = Stats::default();
                block.add_block(&e, &b, loss, &d, &j, Some(0.5));
                let mut one = Stats::default();
                for k in 0..len {
                    one.add_positions(&e[k..=k], &b[k..=k], loss);
                    one.add_normals(&d[k..=k], &j[k..=k], Some(0.5));
                }
                assert_eq!(
                    stats_bits(&block),
                    stats_bits(&one),
                    "{len} values, seed {seed}"
                );
            }
        }
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

    /// A block folded at once gives what its comparisons folded one by one
    /// give (bit for bit, NaN and unusable bounds included), so the block
    /// size never shows in the numbers.
    #[test]
    fn a_block_folds_like_its_comparisons_one_by_one() {
        let errors = [0.5, 1e-7, 0.0, 3.25, 1e-3, 0.75, 2.0, 1e-9];
        let bounds = [0.0, 1e-6, f64::NAN, 0.5, -1.0, 1e-3, f64::INFINITY, 0.0];
        let degrees = [0.1, 0.0, 179.0, 2.5, 1e-4, 0.3, 45.0, 0.01];
        let judged = [true, true, false, true, true, false, true, true];
        for (nan_at, loss, normal) in [
            (None, 0.0, Some(0.0)),
            (Some(3), 0.25, None),
            (Some(0), f64::NAN, Some(200.0)),
            (None, 1.0, Some(0.5)),
        ] {
            let mut e = errors;
            let mut d = degrees;
            if let Some(k) = nan_at {
                e[k] = f64::NAN;
                d[k] = f64::NAN;
            }
            let mut block = Stats::default();
            block.add_block(&e, &bounds, loss, &d, &judged, normal);
            let mut one = Stats::default();
            for k in 0..e.len() {
                one.add_positions(&e[k..=k], &bounds[k..=k], loss);
                one.add_normals(&d[k..=k], &judged[k..=k], normal);
            }
            assert_eq!(
                stats_bits(&block),
                stats_bits(&one),
                "{nan_at:?} {loss} {normal:?}"
            );
            assert_eq!(block.has_nan(), nan_at.is_some());
        }
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
