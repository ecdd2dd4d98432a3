//! One instant of a measurement: every path the bake holds played through
//! the runtime reference (`rigbake_core::runtime`, the code the shaders
//! mirror), vertex by vertex, and compared in f64 with the direct
//! evaluation of the source (`rigbake_core::reference`), computed once
//! per primitive and shared by the paths that compare with it.

use glam::{DMat4, DVec3, Vec3};
use rigbake_core::Model;
use rigbake_core::bake::vat::NormalConvention;
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::model::Primitive;
use rigbake_core::reference::{DirectGlobals, PrimitiveDeform, source_pose_at};
use rigbake_core::runtime::bone_path::{BoneTextureView, blend_matrices, skin};
use rigbake_core::runtime::math::Rows3x4;
use rigbake_core::runtime::root_motion::motion_matrix;
use rigbake_core::runtime::rows::blend_rows;
use rigbake_core::runtime::vat_path::{self, VatTextureView};
use rigbake_core::runtime::{AnimationState, ClipInfo, GpuState, PlayMode, RuntimeVertex};

use super::stats::{EMPTY_BOX, Stats, Tally};
use crate::playback::{BonePlayback, BonePrimitive, LoadedClip, VatPlayback, VatPrimitive};

/// The playback paths and the model they play.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// The source model.
    pub model: &'a Model,
    /// The clip table.
    pub clips: &'a [LoadedClip],
}

/// The path an output plays.
#[derive(Debug, Clone, Copy)]
pub enum Path<'a> {
    /// Bone-matrix path.
    Bones(&'a BonePlayback),
    /// VAT path.
    Vat(&'a VatPlayback),
}

/// Whether a sample is at a frame time or between two frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Frame,
    Mid,
}

/// One instant to check.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sample {
    pub clip: usize,
    pub time: f64,
    pub mode: PlayMode,
    pub kind: Kind,
}

/// The GPU state of an instance playing `info` in `mode`, `time` seconds in.
pub(super) fn state_at(info: &ClipInfo, time: f64, mode: PlayMode) -> GpuState {
    let mut state = AnimationState::new();
    state.play(*info, mode, 1.0);
    state.seek(time);
    state.gpu_state()
}

/// What one path gave at one sample.
pub(super) struct SampleResult {
    pub stats: Stats,
    /// The box of the directly evaluated positions.
    pub direct: (DVec3, DVec3),
}

/// The source primitive a playback primitive plays (`None` when the node
/// has no such primitive).
fn source_primitive(model: &Model, node: usize, primitive: usize) -> Option<&Primitive> {
    let mesh = model.nodes.get(node)?.mesh?;
    model.meshes.get(mesh)?.primitives.get(primitive)
}

/// How far a point `p` can move when every entry of the (blended) skin
/// matrix that carries it is off by at most `max_error` (a half-float bone
/// texture): each of the three coordinates by at most `max_error * (|x| +
/// |y| + |z| + 1)`, so the point by `sqrt(3)` times that (blending with
/// weights that sum to 1 keeps the entry bound).
pub(super) fn encoded_matrix_bound(max_error: f64, p: DVec3) -> f64 {
    3f64.sqrt() * max_error * (p.abs().element_sum() + 1.0)
}

/// The angle between two normals in degrees, `atan2(|got x want|, got .
/// want)`; 180 when `got` is zero (a lost normal counts as wrong). Below
/// about 5.7 degrees (nearly every comparison) the arctangent is its
/// series to the ninth power, within 1e-11 of the angle.
pub(super) fn angle_degrees(got: DVec3, want: DVec3) -> f64 {
    if got == DVec3::ZERO {
        return 180.0;
    }
    let (c2, d) = (got.cross(want).length_squared(), got.dot(want));
    let t2 = c2 / (d * d);
    let radians = if d > 0.0 && t2 < 1e-2 {
        let series = 1.0 + t2 * (-1.0 / 3.0 + t2 * (0.2 + t2 * (-1.0 / 7.0 + t2 / 9.0)));
        t2.sqrt() * series
    } else {
        c2.sqrt().atan2(d)
    };
    radians.to_degrees()
}

/// Which direct evaluation a job compares with: the primitive (node and
/// index), the space it is evaluated in and the normal convention.
type Key = (usize, usize, Option<usize>, NormalConvention);

/// How a job's path plays its primitive.
enum Play<'a> {
    Bones {
        prim: &'a BonePrimitive,
        src: &'a Primitive,
        /// Channels per vertex.
        channels: usize,
        /// The bone texture's recorded encoding error.
        max_error: f64,
    },
    Vat {
        prim: &'a VatPrimitive,
        positions: Vec<VatTextureView<'a>>,
        normals: Option<Vec<VatTextureView<'a>>>,
    },
}

/// One primitive of one path, compared at every sample.
struct Job<'a> {
    /// Index of the path (of its result in the sample's).
    path: usize,
    key: Key,
    /// Vertices compared, from the first.
    count: usize,
    /// Position loss the bake recorded for dropped influences.
    loss: f64,
    /// The bound normals are judged by (degrees), when they are.
    normal_bound: Option<f64>,
    /// Whether the path plays normals for this primitive.
    has_normal: bool,
    play: Play<'a>,
}

/// Every path's jobs, in each path's order, grouped by the direct
/// evaluation they compare with.
pub(super) struct Jobs<'a> {
    paths: usize,
    jobs: Vec<Job<'a>>,
    /// Each direct evaluation (in the order first asked for) and its jobs.
    groups: Vec<(Key, Vec<usize>)>,
    /// The bone path's textures, by bone set.
    bone_views: Vec<BoneTextureView<'a>>,
}

impl<'a> Jobs<'a> {
    /// The jobs of `paths` on `model`.
    pub(super) fn new(model: &'a Model, paths: &[Path<'a>]) -> Self {
        let mut jobs = Vec::new();
        let mut bone_views = Vec::new();
        for (k, path) in paths.iter().enumerate() {
            match path {
                Path::Bones(b) => {
                    bone_views = b.textures.iter().map(|t| t.view()).collect();
                    jobs.extend(b.primitives.iter().filter_map(|p| bone_job(model, b, p, k)));
                }
                Path::Vat(v) => jobs.extend(v.primitives.iter().map(|prim| {
                    let src = source_primitive(model, prim.node, prim.primitive);
                    Job {
                        path: k,
                        key: (prim.node, prim.primitive, v.reference_node, v.convention),
                        count: src.map_or(0, Primitive::vertex_count),
                        loss: 0.0,
                        normal_bound: prim.normals.as_ref().map(|n| n.max_error()),
                        has_normal: prim.normals.is_some(),
                        play: Play::Vat {
                            prim,
                            positions: prim.positions.views(),
                            normals: prim.normals.as_ref().map(|n| n.views()),
                        },
                    }
                })),
            }
        }
        let mut groups: Vec<(Key, Vec<usize>)> = Vec::new();
        for (j, job) in jobs.iter().enumerate() {
            match groups.iter_mut().find(|(k, _)| *k == job.key) {
                Some((_, g)) => g.push(j),
                None => groups.push((job.key, vec![j])),
            }
        }
        Self {
            paths: paths.len(),
            jobs,
            groups,
            bone_views,
        }
    }
}

/// The bone path's job for `prim` (path `path`).
fn bone_job<'a>(
    model: &'a Model,
    bones: &'a BonePlayback,
    prim: &'a BonePrimitive,
    path: usize,
) -> Option<Job<'a>> {
    let src = source_primitive(model, prim.node, prim.primitive)?;
    let tex = bones.textures.get(prim.set)?;
    let count = match bones.channels {
        0 => src.vertex_count(),
        k => (prim.channels.len() / k).min(src.vertex_count()),
    };
    Some(Job {
        path,
        key: (
            prim.node,
            prim.primitive,
            Some(tex.space_node),
            NormalConvention::InverseTranspose,
        ),
        count,
        // Dropped influences are a separate, recorded loss: judged only
        // when accepted.
        loss: prim.position_error,
        // Normal errors have a bound only when the bake is exact.
        normal_bound: (tex.max_error == 0.0 && !prim.truncated).then_some(0.0),
        has_normal: prim
            .bound
            .as_ref()
            .map_or(src.normals.is_some(), |b| b.normals.is_some()),
        play: Play::Bones {
            prim,
            src,
            channels: bones.channels,
            max_error: tex.max_error,
        },
    })
}

/// Vertices evaluated directly at a time, then compared by every job of
/// the evaluation while they are in the cache.
const BLOCK: usize = 512;

/// Scratch kept by a worker across samples.
pub(super) struct Scratch {
    pose: LocalPose,
    blend: LocalPose,
    want: Vec<(DVec3, DVec3)>,
    tallies: Vec<Tally>,
}

impl Scratch {
    pub(super) fn new(model: &Model) -> Self {
        Self {
            pose: LocalPose::rest(model),
            blend: LocalPose::rest(model),
            want: Vec::with_capacity(BLOCK),
            tallies: Vec::new(),
        }
    }
}

/// What a sample is for the jobs: its state, the bone palettes of the
/// rows it reads (per bone set: row and every joint's matrix) and the
/// root motion, in a job's space.
struct At<'s> {
    gpu: GpuState,
    palettes: &'s [Vec<(u32, Vec<Rows3x4>)>],
    motion: Option<DMat4>,
}

impl Jobs<'_> {
    /// Evaluates sample `s`: one result per path.
    pub(super) fn sample(
        &self,
        subject: &Subject<'_>,
        s: &Sample,
        scratch: &mut Scratch,
    ) -> Vec<SampleResult> {
        let (model, clip) = (subject.model, &subject.clips[s.clip]);
        let (duration, pose) = (clip.info.duration, &mut scratch.pose);
        source_pose_at(model, &clip.source, duration, s.time, pose, &mut scratch.blend);
        let pose = &scratch.pose;
        let gpu = state_at(&clip.info, s.time, s.mode);
        // A clip baked in place moves by its recorded track.
        let motion = clip.root_motion.as_ref().map(|r| {
            let sample = clip.info.sample(s.time, s.mode);
            motion_matrix(r.track().at(&clip.info, &sample))
        });
        let palettes: Vec<Vec<(u32, Vec<Rows3x4>)>> = self
            .bone_views
            .iter()
            .map(|view| palettes(view, &gpu))
            .collect();
        let mut globals = DirectGlobals::new(model, pose);
        let tallies = &mut scratch.tallies;
        tallies.clear();
        tallies.resize(self.jobs.len(), Tally::default());
        for ((node, primitive, space, convention), group) in &self.groups {
            let Some(d) = PrimitiveDeform::new(model, pose, &mut globals, *node, *primitive, *space)
            else {
                continue;
            };
            // The motion carried into the evaluation's space: G^-1 M G.
            let motion = motion.map(|m| match space {
                Some(n) => {
                    let g = globals.get(*n);
                    g.inverse() * m * g
                }
                None => m,
            });
            let at = At {
                gpu,
                palettes: &palettes,
                motion,
            };
            let n = group.iter().map(|&j| self.jobs[j].count).max().unwrap_or(0);
            for start in (0..n.min(d.vertex_count())).step_by(BLOCK) {
                let end = (start + BLOCK).min(d.vertex_count());
                scratch.want.clear();
                let want = (start..end).map(|v| d.position_normal(v, *convention));
                scratch.want.extend(want);
                for &j in group {
                    let (job, tally) = (&self.jobs[j], &mut tallies[j]);
                    let want = &scratch.want[..job.count.saturating_sub(start).min(end - start)];
                    compare(job, &self.bone_views, &at, start, want, tally);
                }
            }
        }
        let mut out: Vec<SampleResult> = (0..self.paths)
            .map(|_| SampleResult {
                stats: Stats {
                    samples: 1,
                    ..Stats::default()
                },
                direct: EMPTY_BOX,
            })
            .collect();
        // Each path's jobs folded in its own order.
        for (job, t) in self.jobs.iter().zip(tallies.iter()) {
            let r = &mut out[job.path];
            r.stats.add(t, job.loss, job.normal_bound);
            r.direct = (r.direct.0.min(t.direct.0), r.direct.1.max(t.direct.1));
        }
        out
    }
}

/// Every joint's matrix at each row `gpu` reads of a bone texture.
fn palettes(view: &BoneTextureView<'_>, gpu: &GpuState) -> Vec<(u32, Vec<Rows3x4>)> {
    if !gpu.enabled {
        return Vec::new();
    }
    let joints = view.width.div_ceil(view.layout.pixels_per_joint() as u32);
    let mut rows: Vec<u32> = gpu.rows_read(view.rows.saturating_sub(1)).collect();
    rows.sort_unstable();
    rows.dedup();
    rows.into_iter()
        .map(|row| (row, (0..joints).map(|j| view.bone_matrix(j, row)).collect()))
        .collect()
}

/// Plays the job's vertices `start..start + want.len()` and compares each
/// with its direct evaluation (`want`: position and unit normal, zero
/// where the source defines none) into `tally`.
fn compare(
    job: &Job<'_>,
    views: &[BoneTextureView<'_>],
    at: &At<'_>,
    start: usize,
    want: &[(DVec3, DVec3)],
    tally: &mut Tally,
) {
    let gpu = &at.gpu;
    match &job.play {
        Play::Bones {
            prim,
            src,
            channels: k,
            max_error,
        } => {
            let (view, palettes) = (&views[prim.set], &at.palettes[prim.set]);
            let last_row = view.rows.saturating_sub(1);
            for (i, want) in want.iter().enumerate() {
                let v = start + i;
                let (p, n) = prim.vertex(src, v);
                let channels = prim.channels.get(v * k..(v + 1) * k).unwrap_or_default();
                let played = if gpu.enabled {
                    blend_rows(gpu, last_row, n.is_some(), |row| {
                        let palette = palettes.iter().find(|(r, _)| *r == row).map(|(_, p)| p);
                        let m = blend_matrices(channels, |b| {
                            match palette.and_then(|p| p.get(b as usize)) {
                                Some(m) => *m,
                                None => view.bone_matrix(b, row),
                            }
                        });
                        skin(&m, p, n)
                    })
                } else {
                    RuntimeVertex {
                        position: p,
                        normal: n,
                    }
                };
                let bound = encoded_matrix_bound(*max_error, p.as_dvec3());
                add(job, at, played, bound, want, tally);
            }
        }
        Play::Vat {
            prim,
            positions,
            normals,
        } => {
            let bound = prim.positions.max_error();
            for (i, want) in want.iter().enumerate() {
                let v = (start + i) as u32;
                let (address, normals) = (&prim.address, normals.as_deref());
                let played =
                    vat_path::deform_vertex(address, positions, normals, gpu, v, Vec3::ZERO, None);
                add(job, at, played, bound, want, tally);
            }
        }
    }
}

/// One played vertex compared with its direct evaluation `want`, after
/// the sample's root motion moves it.
#[inline(always)]
fn add(
    job: &Job<'_>,
    at: &At<'_>,
    played: RuntimeVertex,
    bound: f64,
    &(want, want_normal): &(DVec3, DVec3),
    tally: &mut Tally,
) {
    let p = played.position.as_dvec3();
    let n = played.normal.unwrap_or(Vec3::ZERO).as_dvec3();
    let (got, got_normal) = match &at.motion {
        Some(m) => (
            m.transform_point3(p),
            m.transform_vector3(n).normalize_or_zero(),
        ),
        None => (p, n),
    };
    let judged = job.has_normal && want_normal != DVec3::ZERO;
    let angle = judged.then(|| angle_degrees(got_normal, want_normal));
    tally.add(p, bound, got, want, angle);
}
