//! One instant of a measurement: every path the bake holds played through
//! the runtime reference (`rigbake_core::runtime`, the code the shaders
//! mirror) and compared vertex by vertex, in f64, with the direct
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
use rigbake_core::runtime::rows::{RowValues, blend_rows};
use rigbake_core::runtime::vat_path::{self, VatTextureView};
use rigbake_core::runtime::{AnimationState, ClipInfo, GpuState, PlayMode, RuntimeVertex};

use super::stats::{Stats, Tally, grow};
use crate::playback::{BonePlayback, BonePrimitive, Loaded, LoadedClip, VatPlayback, VatPrimitive};

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

impl<'a> Subject<'a> {
    /// The source model and clip table of a loaded bake.
    pub fn of(loaded: &'a Loaded) -> Self {
        Self {
            model: &loaded.source.model,
            clips: &loaded.clips,
        }
    }
}

impl<'a> Path<'a> {
    /// Every path a loaded bake holds, bones first: what `rigbake verify`
    /// measures.
    pub fn all(loaded: &'a Loaded) -> Vec<Self> {
        let bones = loaded.bones.iter().map(Path::Bones);
        bones.chain(loaded.vat.iter().map(Path::Vat)).collect()
    }
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

/// What one path gave at one sample: its figures and the box of the
/// directly evaluated positions.
pub(super) struct SampleResult {
    pub stats: Stats,
    pub direct: Option<(DVec3, DVec3)>,
}

/// How far a point `p` can move when every entry of the (blended) skin
/// matrix that carries it is off by at most `max_error` (a half-float bone
/// texture): each of the three coordinates by at most `max_error * (|x| +
/// |y| + |z| + 1)`, so the point by `sqrt(3)` times that (blending with
/// weights that sum to 1 keeps the entry bound).
pub fn encoded_matrix_bound(max_error: f64, p: DVec3) -> f64 {
    3f64.sqrt() * max_error * (p.abs().element_sum() + 1.0)
}

/// The angle between two normals in degrees, `atan2(|got x want|, got .
/// want)`; 180 when `got` is zero (a lost normal counts as wrong).
pub fn angle_degrees(got: DVec3, want: DVec3) -> f64 {
    match got == DVec3::ZERO {
        true => 180.0,
        false => got.cross(want).length().atan2(got.dot(want)).to_degrees(),
    }
}

/// [`angle_degrees`] from `c2 = |got x want|^2` and `d = got . want` as
/// the arctangent's series to the ninth power, within 1e-11 of it under
/// 5.7 degrees (nearly every comparison), with whether it is not (then
/// the exact one is taken).
#[inline(always)]
fn small_angle(c2: f64, d: f64) -> (f64, bool) {
    let t2 = c2 / (d * d);
    let series = 1.0 + t2 * (-1.0 / 3.0 + t2 * (0.2 + t2 * (-1.0 / 7.0 + t2 / 9.0)));
    let degrees = t2.sqrt() * series * (180.0 / std::f64::consts::PI);
    (degrees, !(d > 0.0 && t2 < 1e-2))
}

/// How a job's path plays its primitive: the bone path (its channels per
/// vertex and the texture's recorded encoding error) or the VAT path.
enum Play<'a> {
    Bones(&'a BonePrimitive, &'a Primitive, usize, f64),
    Vat(
        &'a VatPrimitive,
        Vec<VatTextureView<'a>>,
        Option<Vec<VatTextureView<'a>>>,
    ),
}

/// One primitive of one path, compared at every sample with the direct
/// evaluation `key` (node, primitive, space, normal convention).
struct Job<'a> {
    path: usize,
    key: (usize, usize, Option<usize>, NormalConvention),
    /// Vertices compared, from the first, and where they start in the
    /// path's row values.
    count: usize,
    offset: usize,
    /// The last timeline row of the job's texture.
    last_row: u32,
    /// The recorded loss of dropped influences, and the bound normals
    /// are judged by (degrees) when they are.
    loss: f64,
    normal_bound: Option<f64>,
    has_normal: bool,
    play: Play<'a>,
}

/// Every path's jobs, in each path's order, grouped by the direct
/// evaluation they compare with (in the order first asked for).
pub(super) struct Jobs<'a> {
    paths: usize,
    jobs: Vec<Job<'a>>,
    groups: Vec<Vec<usize>>,
    /// The bone path's textures, by bone set.
    bone_views: Vec<BoneTextureView<'a>>,
}

impl<'a> Jobs<'a> {
    /// The jobs of `paths` on `model`.
    pub(super) fn new(model: &'a Model, paths: &[Path<'a>]) -> Self {
        let source = |node: usize, primitive: usize| -> Option<&'a Primitive> {
            let mesh = model.nodes.get(node)?.mesh?;
            model.meshes.get(mesh)?.primitives.get(primitive)
        };
        let (mut jobs, mut bone_views) = (Vec::new(), Vec::new());
        for (path, p) in paths.iter().enumerate() {
            match p {
                Path::Bones(b) => {
                    bone_views = b.textures.iter().map(|t| t.view()).collect();
                    for prim in &b.primitives {
                        let (Some(src), Some(tex)) =
                            (source(prim.node, prim.primitive), b.textures.get(prim.set))
                        else {
                            continue;
                        };
                        let channels = prim.channels.len().checked_div(b.channels);
                        jobs.push(Job {
                            path,
                            key: (
                                prim.node,
                                prim.primitive,
                                Some(tex.space_node),
                                NormalConvention::InverseTranspose,
                            ),
                            count: channels.unwrap_or(usize::MAX).min(src.vertex_count()),
                            offset: 0,
                            last_row: tex.rows.saturating_sub(1),
                            // Dropped influences are a separate, recorded
                            // loss: judged only when accepted.
                            loss: prim.position_error,
                            // Normal errors have a bound only when exact.
                            normal_bound: (tex.max_error == 0.0 && !prim.truncated).then_some(0.0),
                            has_normal: prim
                                .bound
                                .as_ref()
                                .map_or(src.normals.is_some(), |b| b.normals.is_some()),
                            play: Play::Bones(prim, src, b.channels, tex.max_error),
                        });
                    }
                }
                Path::Vat(v) => jobs.extend(v.primitives.iter().map(|prim| Job {
                    path,
                    key: (prim.node, prim.primitive, v.reference_node, v.convention),
                    count: source(prim.node, prim.primitive).map_or(0, Primitive::vertex_count),
                    offset: 0,
                    last_row: prim.address.frames.saturating_sub(1),
                    loss: 0.0,
                    normal_bound: prim.normals.as_ref().map(|n| n.max_error()),
                    has_normal: prim.normals.is_some(),
                    play: Play::Vat(
                        prim,
                        prim.positions.views(),
                        prim.normals.as_ref().map(|n| n.views()),
                    ),
                })),
            }
        }
        let mut offsets = vec![0; paths.len()];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for j in 0..jobs.len() {
            jobs[j].offset = offsets[jobs[j].path];
            offsets[jobs[j].path] += jobs[j].count;
            match groups.iter_mut().find(|g| jobs[g[0]].key == jobs[j].key) {
                Some(g) => g.push(j),
                None => groups.push(vec![j]),
            }
        }
        let paths = paths.len();
        Self {
            paths,
            jobs,
            groups,
            bone_views,
        }
    }
}

/// A kept timeline row and every compared vertex's values there.
type KeptRow<'a> = (u32, &'a [RowValues]);

/// Vertices evaluated directly at a time, then compared by every job of
/// the evaluation while they are in the cache.
const BLOCK: usize = 256;

/// Timeline rows kept per path (a sample reads at most four: two state
/// rows and their next rows).
const KEPT: usize = 6;

/// Scratch kept by a worker across samples: the poses; per path, the
/// timeline rows recently read (row, when last read, and what the path
/// computes there for every compared vertex before the frame lerp), kept
/// while the next samples in row order read them again, so each row is
/// computed about once; a block; the tallies.
pub(super) struct Scratch {
    poses: [LocalPose; 2],
    kept: Vec<Vec<(u32, u64, Vec<RowValues>)>>,
    clock: u64,
    block: Block,
    tallies: Vec<Tally>,
}

/// A block of direct and played vertices in columns (positions' x, y, z,
/// normals' x, y, z), the played positions in place and their bounds.
struct Block {
    want: [Vec<f64>; 6],
    got: [Vec<f64>; 6],
    played: Vec<DVec3>,
    bounds: Vec<f64>,
}

impl Scratch {
    pub(super) fn new(model: &Model) -> Self {
        let columns = || std::array::from_fn(|_| vec![0.0; BLOCK]);
        Self {
            poses: [LocalPose::rest(model), LocalPose::rest(model)],
            kept: Vec::new(),
            clock: 0,
            block: Block {
                want: columns(),
                got: columns(),
                played: vec![DVec3::ZERO; BLOCK],
                bounds: vec![0.0; BLOCK],
            },
            tallies: Vec::new(),
        }
    }
}

/// Writes a vertex into `columns` at `i`.
fn set(columns: &mut [Vec<f64>; 6], i: usize, position: DVec3, normal: DVec3) {
    for k in 0..3 {
        columns[k][i] = position[k];
        columns[3 + k][i] = normal[k];
    }
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
        let [pose, blend] = &mut scratch.poses;
        source_pose_at(model, &clip.source, clip.info.duration, s.time, pose, blend);
        let gpu = state_at(&clip.info, s.time, s.mode);
        // A clip baked in place moves by its recorded track.
        let motion = clip.root_motion.as_ref().map(|r| {
            let sample = clip.info.sample(s.time, s.mode);
            motion_matrix(r.track().at(&clip.info, &sample))
        });
        self.keep_rows(&gpu, &mut scratch.kept, &mut scratch.clock);
        let Scratch {
            poses: [pose, _],
            kept,
            tallies,
            block,
            ..
        } = scratch;
        let rows: Vec<Vec<KeptRow<'_>>> = kept
            .iter()
            .map(|k| k.iter().map(|(row, _, v)| (*row, v.as_slice())).collect())
            .collect();
        let mut globals = DirectGlobals::new(model, pose);
        tallies.clear();
        tallies.resize(self.jobs.len(), Tally::default());
        for group in &self.groups {
            let (node, primitive, space, convention) = self.jobs[group[0]].key;
            let Some(d) = PrimitiveDeform::new(model, pose, &mut globals, node, primitive, space)
            else {
                continue;
            };
            // The motion carried into the evaluation's space: G^-1 M G.
            let motion = motion.map(|m| match space.map(|n| globals.get(n)) {
                Some(g) => g.inverse() * m * g,
                None => m,
            });
            let n = group.iter().map(|&j| self.jobs[j].count).max().unwrap_or(0);
            for start in (0..n.min(d.vertex_count())).step_by(BLOCK) {
                let end = (start + BLOCK).min(d.vertex_count());
                for v in start..end {
                    let (p, n) = d.position_normal(v, convention);
                    set(&mut block.want, v - start, p, n);
                }
                for &j in group {
                    let job = &self.jobs[j];
                    let vertices = start..job.count.min(end).max(start);
                    let len = vertices.len();
                    play(
                        job,
                        (&gpu, &rows[job.path], motion.as_ref()),
                        vertices,
                        block,
                    );
                    compare(job, block, len, s.kind == Kind::Frame, &mut tallies[j]);
                }
            }
        }
        let mut out: Vec<SampleResult> = (0..self.paths)
            .map(|_| SampleResult {
                stats: Stats {
                    samples: 1,
                    ..Stats::default()
                },
                direct: None,
            })
            .collect();
        // Each path's jobs folded in its own order.
        for (job, t) in self.jobs.iter().zip(tallies.iter()) {
            let r = &mut out[job.path];
            r.stats.add(t, job.loss, job.normal_bound);
            if let Some((lo, hi)) = t.direct {
                grow(&mut r.direct, lo, hi);
            }
        }
        out
    }

    /// Computes the rows `gpu` reads that `kept` does not hold, path by
    /// path, evicting the rows read least recently.
    fn keep_rows(
        &self,
        gpu: &GpuState,
        kept: &mut Vec<Vec<(u32, u64, Vec<RowValues>)>>,
        clock: &mut u64,
    ) {
        kept.resize_with(self.paths, Vec::new);
        *clock += 1;
        for (p, kept) in kept.iter_mut().enumerate() {
            let jobs = || self.jobs.iter().filter(|j| j.path == p);
            let mut rows: Vec<u32> = jobs().flat_map(|j| gpu.rows_read(j.last_row)).collect();
            rows.sort_unstable();
            rows.dedup();
            for row in rows.into_iter().filter(|_| gpu.enabled) {
                if let Some(k) = kept.iter_mut().find(|k| k.0 == row) {
                    k.1 = *clock;
                    continue;
                }
                // Never a row this sample reads (at most four) goes.
                let oldest = (0..kept.len())
                    .min_by_key(|&k| kept[k].1)
                    .filter(|_| kept.len() >= KEPT);
                let mut values = oldest.map_or_else(Vec::new, |k| kept.swap_remove(k).2);
                values.clear();
                for job in jobs() {
                    self.row_values(job, row, &mut values);
                }
                kept.push((row, *clock, values));
            }
        }
    }

    /// The job's vertices' values at timeline row `row`, appended to
    /// `out`: the runtime's skinning with the row's matrices (each bone's
    /// fetched once), or its texels.
    fn row_values(&self, job: &Job<'_>, row: u32, out: &mut Vec<RowValues>) {
        match &job.play {
            Play::Bones(prim, src, k, _) => {
                let view = &self.bone_views[prim.set];
                let joints = view.width.div_ceil(view.layout.pixels_per_joint() as u32);
                let palette: Vec<Rows3x4> = (0..joints).map(|j| view.bone_matrix(j, row)).collect();
                out.extend((0..job.count).map(|v| {
                    let (p, n) = prim.vertex(src, v);
                    let channels = prim.channels.get(v * k..(v + 1) * k).unwrap_or_default();
                    let m = blend_matrices(channels, |b| match palette.get(b as usize) {
                        Some(m) => *m,
                        None => view.bone_matrix(b, row),
                    });
                    skin(&m, p, n)
                }));
            }
            Play::Vat(prim, positions, normals) => out.extend((0..job.count as u32).map(|v| {
                vat_path::row_values(&prim.address, positions, normals.as_deref(), v, row)
            })),
        }
    }
}

/// Plays the job's `vertices` into `block`: the runtime's frame lerp and row blend over the
/// `rows` kept (a disabled state draws the bone path's mesh as it is, the
/// VAT path's zeros), moved by the root `motion`.
fn play(
    job: &Job<'_>,
    (gpu, rows, motion): (&GpuState, &[KeptRow<'_>], Option<&DMat4>),
    vertices: std::ops::Range<usize>,
    block: &mut Block,
) {
    let value = |row: u32, i: usize| -> RowValues {
        let values = rows.iter().find(|(r, _)| *r == row).map(|(_, v)| *v);
        values.and_then(|v| v.get(i)).copied().unwrap_or_default()
    };
    for (k, v) in vertices.enumerate() {
        let (mut played, mut bound) = (
            RuntimeVertex {
                position: Vec3::ZERO,
                normal: None,
            },
            0.0,
        );
        match &job.play {
            Play::Bones(prim, src, _, max_error) if !gpu.enabled || *max_error != 0.0 => {
                let (position, normal) = prim.vertex(src, v);
                played = RuntimeVertex { position, normal };
                bound = encoded_matrix_bound(*max_error, position.as_dvec3());
            }
            Play::Bones(..) => {}
            Play::Vat(prim, ..) => bound = prim.positions.max_error(),
        }
        if gpu.enabled {
            let i = job.offset + v;
            played = blend_rows(gpu, job.last_row, job.has_normal, |r| value(r, i));
        }
        let p = played.position.as_dvec3();
        let n = played.normal.unwrap_or(Vec3::ZERO).as_dvec3();
        match motion {
            Some(m) => {
                let n = m.transform_vector3(n).normalize_or_zero();
                set(&mut block.got, k, m.transform_point3(p), n);
            }
            None => set(&mut block.got, k, p, n),
        }
        (block.played[k], block.bounds[k]) = (p, bound);
    }
}

/// Compares the `n` played vertices of `block` with their
/// direct evaluation (normals zero where the source defines none) into
/// `tally`; the boxes only at frame times (`frame`). The distances and
/// the angles' common case ([`small_angle`]) are plain loops over the
/// columns, which the compiler vectorises.
fn compare(job: &Job<'_>, block: &Block, n: usize, frame: bool, tally: &mut Tally) {
    let (g, w) = (
        block.got.each_ref().map(|c| &c[..n]),
        block.want.each_ref().map(|c| &c[..n]),
    );
    let (mut errors, mut degrees, mut exact) = ([0.0; BLOCK], [0.0; BLOCK], [false; BLOCK]);
    for i in 0..n {
        let d = [g[0][i] - w[0][i], g[1][i] - w[1][i], g[2][i] - w[2][i]];
        errors[i] = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    }
    let ([_, _, _, gx, gy, gz], [wx, wy, wz, nx, ny, nz]) = (g, w);
    for i in 0..n {
        let c = [
            gy[i] * nz[i] - gz[i] * ny[i],
            gz[i] * nx[i] - gx[i] * nz[i],
            gx[i] * ny[i] - gy[i] * nx[i],
        ];
        let d = gx[i] * nx[i] + gy[i] * ny[i] + gz[i] * nz[i];
        (degrees[i], exact[i]) = small_angle(c[0] * c[0] + c[1] * c[1] + c[2] * c[2], d);
    }
    for i in 0..n {
        tally.position(errors[i], block.bounds[i]);
        let (got, want) = (
            DVec3::new(gx[i], gy[i], gz[i]),
            DVec3::new(nx[i], ny[i], nz[i]),
        );
        if job.has_normal && want != DVec3::ZERO {
            tally.normal(if exact[i] {
                angle_degrees(got, want)
            } else {
                degrees[i]
            });
        }
        if frame {
            tally.boxes(block.played[i], DVec3::new(wx[i], wy[i], wz[i]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The series is within 1e-11 of the exact angle wherever it is taken
    /// (under 5.7 degrees), for non-unit vectors.
    #[test]
    fn the_small_angle_series_matches_the_exact_angle_where_taken() {
        for k in 0..1040 {
            let r = 1e-9 * 1.02f64.powi(k); // up to 0.9 radians
            let (got, want) = (DVec3::new(r.cos(), r.sin(), 0.0) * 3.0, DVec3::X);
            let (series, exact) = small_angle(got.cross(want).length_squared(), got.dot(want));
            let want = angle_degrees(got, want);
            assert!(
                exact || (series - want).abs() <= 1e-11 * want,
                "{r}: {series}"
            );
            assert_eq!(exact, r > 0.0997, "{r}");
        }
        assert!(small_angle(f64::NAN, 1.0).1 && small_angle(0.0, 0.0).1);
    }
}
