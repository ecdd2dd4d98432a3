//! The positions' bounds of a texture set ([`VatBaker::position_bounds`]):
//! the least and largest value of every real texel over every frame, as
//! the kernel computes them, without deforming most vertices.
//!
//! A set's vertices are cut into chunks of up to [`CHUNK`] vertices of one
//! member. A skinned vertex is a blend, weights non-negative and summing
//! to one, of its joints' matrices applied to its rest position, so it
//! lies in the box that holds each of its chunk's joints' matrices applied
//! to the box of the chunk's rest positions (the same holds for rigid
//! members: one matrix). At each frame, a chunk whose box (widened by
//! [`SLACK`] of its magnitude for each influence slot and a few more, far
//! more than the kernel's f32 rounding) lies inside the bounds found so far cannot move them and is skipped;
//! any other chunk is deformed by the kernel and its values taken. So the
//! result is exactly the minimum and maximum of what the kernel writes,
//! whatever is skipped, in whatever order: only the sign of a zero bound
//! could depend on the order, and zeros are made positive. Chunks of
//! morphed members, and of vertices whose weights are not all finite and
//! non-negative, all zero or name a joint past the palette, are deformed
//! at every frame.
//!
//! A few frames spread over the timeline are deformed in full first, so
//! the bounds are close to their final size before frames are culled.

use glam::DVec3;
use rayon::prelude::*;

use super::VatBaker;
use crate::bake::bounds::planar_bounds;
use crate::bake::vat_kernel::Columns;

/// Vertices a chunk at most: small enough that a chunk's rest box stays
/// close to its vertices, large enough that the kernel runs in full lanes.
const CHUNK: usize = 64;

/// Frames deformed in full before culling starts (spread evenly).
const SEEDS: usize = 8;

/// How far a chunk's box is widened for each rounding the kernel does,
/// relative to the magnitude of the terms that make a deformed
/// coordinate: 2^-20, 16 times an f32 rounding (2^-24). The kernel rounds
/// once per influence slot while blending (and the renormalised weights
/// sum to one within as many roundings), then a few times more: a chunk
/// is widened by `(slots + 8) * SLACK` of its magnitude.
const SLACK: f64 = 1.0 / 1_048_576.0;

/// Per plane `[min, max]` of x, y, z (and an unused fourth), the form
/// [`planar_bounds`] widens.
type Acc = [[f32; 4]; 2];

/// Nothing seen yet.
const EMPTY: Acc = [[f32::INFINITY; 4], [f32::NEG_INFINITY; 4]];

/// Up to [`CHUNK`] consecutive vertices of one member primitive.
#[derive(Debug)]
struct Chunk {
    /// The member (index into the plan's primitives).
    member: usize,
    /// Its vertices, in the member's numbering.
    range: std::ops::Range<usize>,
    /// Where they can be; `None` when the chunk is deformed at every
    /// frame.
    reach: Option<Reach>,
}

/// What bounds a chunk's vertices at any frame.
#[derive(Debug)]
struct Reach {
    /// Their rest positions' box: center and half extent.
    center: DVec3,
    half: DVec3,
    /// The palette entries they use with a non-zero weight.
    joints: Vec<u16>,
    /// How far the box is widened, relative to its magnitude.
    slack: f64,
}

impl VatBaker<'_> {
    /// The least and largest x, y and z of the positions of every vertex
    /// of texture set `set` (an index into `plan().sets`) at every frame:
    /// exactly what a pass of [`Self::fill`] over the set's rows would
    /// find in its real texels (padding left out), zeros positive. Values
    /// that are not finite are left out; [`Self::fill`] reports them.
    pub fn position_bounds(&self, set: usize) -> [[f32; 3]; 2] {
        let s = &self.plan.sets[set];
        let frames = s.layout.frames;
        if frames == 0 {
            return [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];
        }
        let chunks: Vec<Chunk> = s.members.iter().flat_map(|&m| self.chunks_of(m)).collect();
        let mut seeds: Vec<usize> = (0..SEEDS).map(|k| k * frames / SEEDS).collect();
        seeds.dedup();
        let seed = seeds
            .par_iter()
            .filter(|&&f| f < frames)
            .map(|&frame| {
                let (mut acc, mut scratch) = (EMPTY, [0.0f32; 3 * CHUNK]);
                for c in &chunks {
                    self.deform_chunk(c, frame, &mut scratch, &mut acc);
                }
                acc
            })
            .reduce(|| EMPTY, union);
        let acc = (0..frames)
            .into_par_iter()
            .fold(
                || (seed, [0.0f32; 3 * CHUNK]),
                |(mut acc, mut scratch), frame| {
                    for c in &chunks {
                        let inside = c
                            .reach
                            .as_ref()
                            .is_some_and(|reach| reach.inside(self.palette(c.member, frame), &acc));
                        if !inside {
                            self.deform_chunk(c, frame, &mut scratch, &mut acc);
                        }
                    }
                    (acc, scratch)
                },
            )
            .map(|(acc, _)| acc)
            .reduce(|| EMPTY, union);
        // -0.0 and 0.0 compare equal, so which one a zero bound keeps
        // would depend on the order values were seen in.
        let positive = |v: f32| if v == 0.0 { 0.0 } else { v };
        [0, 1].map(|k| [0, 1, 2].map(|c| positive(acc[k][c])))
    }

    /// Member `member`'s vertices in chunks of [`CHUNK`].
    fn chunks_of(&self, member: usize) -> Vec<Chunk> {
        let p = &self.plan.primitives[member];
        let pr = &self.prepared[member];
        let palette_len = self.palette(member, 0).len();
        (0..p.vertices)
            .step_by(CHUNK)
            .map(|start| {
                let range = start..(start + CHUNK).min(p.vertices);
                let reach = (!p.morphed)
                    .then(|| Reach::of(pr, range.clone(), palette_len))
                    .flatten();
                Chunk {
                    member,
                    range,
                    reach,
                }
            })
            .collect()
    }

    /// Deforms chunk `c` at timeline row `frame` into `scratch` and widens
    /// `acc` to its positions.
    fn deform_chunk(&self, c: &Chunk, frame: usize, scratch: &mut [f32; 3 * CHUNK], acc: &mut Acc) {
        self.fill_span(
            c.member,
            frame,
            c.range.clone(),
            CHUNK,
            0,
            scratch,
            None,
            None,
        );
        planar_bounds(scratch, CHUNK, 3, c.range.len(), acc);
    }
}

impl Reach {
    /// The reach of vertices `range` of a prepared primitive, or `None`
    /// when a weight is not finite and non-negative, an entry is past the
    /// palette (`palette_len` matrices), no weight is positive, or a
    /// position is not finite.
    fn of(pr: &super::Prepared, range: std::ops::Range<usize>, palette_len: usize) -> Option<Self> {
        let vertices = pr.positions.len() / 3;
        let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
        for v in range.clone() {
            let p = DVec3::new(
                f64::from(pr.positions[v]),
                f64::from(pr.positions[vertices + v]),
                f64::from(pr.positions[2 * vertices + v]),
            );
            if !p.is_finite() {
                return None;
            }
            lo = lo.min(p);
            hi = hi.max(p);
        }
        let mut joints = Vec::new();
        let slots = range.start * pr.slots..range.end * pr.slots;
        for (&j, &w) in pr.joints[slots.clone()].iter().zip(&pr.weights[slots]) {
            if !(w.is_finite() && w >= 0.0) || usize::from(j) >= palette_len {
                return None;
            }
            if w > 0.0 && !joints.contains(&j) {
                joints.push(j);
            }
        }
        if joints.is_empty() {
            // No weight at all: the kernel's blend is a zero matrix.
            return None;
        }
        Some(Self {
            center: (lo + hi) * 0.5,
            half: (hi - lo) * 0.5,
            joints,
            slack: (pr.slots as f64 + 8.0) * SLACK,
        })
    }

    /// Whether the box holding every palette entry of its joints applied
    /// to the rest box, widened by its slack, lies inside `acc`.
    fn inside(&self, palette: &[Columns], acc: &Acc) -> bool {
        let (lo, hi) = (
            DVec3::new(acc[0][0].into(), acc[0][1].into(), acc[0][2].into()),
            DVec3::new(acc[1][0].into(), acc[1][1].into(), acc[1][2].into()),
        );
        let (center, half) = (self.center, self.half);
        self.joints.iter().all(|&j| {
            let m = &palette[usize::from(j)];
            let col =
                |k: usize| DVec3::new(m[4 * k].into(), m[4 * k + 1].into(), m[4 * k + 2].into());
            let (c0, c1, c2, t) = (col(0), col(1), col(2), col(3));
            let mid = c0 * center.x + c1 * center.y + c2 * center.z + t;
            let extent = c0.abs() * half.x + c1.abs() * half.y + c2.abs() * half.z;
            // The magnitude of the terms the kernel sums for each coordinate.
            let far = center.abs() + half;
            let magnitude = c0.abs() * far.x + c1.abs() * far.y + c2.abs() * far.z + t.abs();
            let reach = extent + magnitude * self.slack;
            (mid - reach).cmpge(lo).all() && (mid + reach).cmple(hi).all()
        })
    }
}

/// The union of two accumulated bounds.
fn union(a: Acc, b: Acc) -> Acc {
    let mut out = a;
    for c in 0..4 {
        out[0][c] = a[0][c].min(b[0][c]);
        out[1][c] = a[1][c].max(b[1][c]);
    }
    out
}
