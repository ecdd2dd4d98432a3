//! The positions' bounds of a texture set over a range of frames
//! ([`VatBaker::position_bounds`] over all of them for a normalised VAT,
//! [`CulledBounds::over`] clip by clip for the animated bounds): the least
//! and largest value of every real texel, as the kernel computes them,
//! without deforming most vertices.
//!
//! A set's vertices are cut into chunks of up to [`CHUNK`] vertices of one
//! member. A skinned vertex is a blend, weights non-negative and summing
//! to one, of its joints' matrices applied to its rest position, so it
//! lies in the box that holds, for each joint of the chunk, the joint's
//! matrix applied to the box of the rest positions it weighs (the same
//! holds for rigid members: one matrix). At each frame, a chunk whose box
//! (widened by [`SLACK`] of its magnitude for each influence slot and a
//! few more, far more than the kernel's f32 rounding) lies inside the
//! bounds found so far cannot move them and is skipped; any other chunk is
//! deformed by the kernel and its values taken. So the result is exactly
//! the minimum and maximum of what the kernel writes, whatever is skipped,
//! in whatever order: only the sign of a zero bound could depend on the
//! order, and zeros are made positive.
//!
//! Deformed at every frame: chunks of morphed members, chunks with a
//! weight that is not finite and non-negative, a vertex without a positive
//! weight or a joint past the palette, and at a frame where a matrix
//! element or a term comes near the f32 range ([`OVERFLOW`]), so a value
//! that is not finite is never skipped: its frame is reported.
//!
//! A few frames spread over the range (one in 16, at most [`SEEDS`]) are
//! deformed in full first, so the bounds are close to their final size
//! before frames are culled.

use glam::DVec3;
use rayon::prelude::*;

use super::{Deformation, VatBaker, all_finite};
use crate::bake::bounds::planar_bounds;
use crate::bake::vat_kernel::Columns;

/// Vertices a chunk at most: small enough that a chunk's rest box stays
/// close to its vertices, large enough that the kernel runs in full lanes.
const CHUNK: usize = 64;

/// Frames deformed in full before culling starts (spread evenly), at
/// most.
const SEEDS: usize = 8;

/// How far a chunk's box is widened for each rounding the kernel does,
/// relative to the magnitude of the terms that make a deformed
/// coordinate: 2^-20, 16 times an f32 rounding (2^-24). The kernel rounds
/// once per influence slot while blending (and the renormalised weights
/// sum to one within as many roundings), then a few times more: a chunk
/// is widened by `(slots + 8) * SLACK` of its magnitude.
const SLACK: f64 = 1.0 / 1_048_576.0;

/// A term magnitude past which the kernel's f32 arithmetic might
/// overflow (the largest f32 is about 3.4e38; the kernel's intermediate
/// values are bounded by the magnitude).
const OVERFLOW: f64 = 1e37;

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
    /// Per palette entry the chunk uses with a non-zero weight, the box
    /// (center and half extent) of the rest positions it weighs.
    joints: Vec<(u16, DVec3, DVec3)>,
    /// How far the box is widened, relative to its magnitude.
    slack: f64,
}

/// The bounds of a range of frames of one texture set, and whether a
/// value was not finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameBounds {
    /// Least and largest x, y, z of every finite position (zeros
    /// positive; `[+inf, -inf]` when there is none).
    pub bounds: [[f32; 3]; 2],
    /// The first frame (timeline row) where a position is not finite.
    pub first_non_finite: Option<usize>,
}

/// A texture set cut into chunks, ready to bound any range of its frames
/// ([`VatBaker::culled_bounds`]).
#[derive(Debug)]
pub struct CulledBounds<'b, 'm> {
    baker: &'b VatBaker<'m>,
    chunks: Vec<Chunk>,
}

impl<'m> VatBaker<'m> {
    /// The least and largest x, y and z of the positions of every vertex
    /// of texture set `set` (an index into `plan().sets`) at every frame:
    /// exactly what a pass of [`Self::fill`] over the set's rows would
    /// find in its real texels (padding left out), zeros positive. Values
    /// that are not finite are left out; [`Self::fill`] reports them.
    pub fn position_bounds(&self, set: usize) -> [[f32; 3]; 2] {
        let frames = self.plan.sets[set].layout.frames;
        self.culled_bounds(set).over(0..frames).bounds
    }

    /// Texture set `set` cut into chunks, to bound its positions over any
    /// range of frames ([`CulledBounds::over`]).
    pub fn culled_bounds(&self, set: usize) -> CulledBounds<'_, 'm> {
        let chunks = self.plan.sets[set]
            .members
            .iter()
            .flat_map(|&m| self.chunks_of(m))
            .collect();
        CulledBounds {
            baker: self,
            chunks,
        }
    }

    /// Member `member`'s vertices in chunks of [`CHUNK`].
    fn chunks_of(&self, member: usize) -> Vec<Chunk> {
        let p = &self.plan.primitives[member];
        let pr = &self.prepared[member];
        let palette_len = match p.deformation {
            Deformation::Skinned { skin } => self.model.skins[skin].joints.len(),
            Deformation::Rigid => 1,
        };
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
}

/// What a pass gathers: the bounds so far and the first frame with a
/// value that is not finite.
type Gathered = (Acc, Option<usize>);

/// Nothing gathered yet.
const NOTHING: Gathered = (EMPTY, None);

impl CulledBounds<'_, '_> {
    /// The positions' bounds over timeline rows `frames`: exactly the
    /// least and largest value the kernel writes for them (a value that
    /// is not finite is left out and its frame reported instead).
    pub fn over(&self, frames: std::ops::Range<usize>) -> FrameBounds {
        let count = frames.len();
        // One seed per 16 frames, at most SEEDS: short clips (a game
        // character has dozens of 30-frame clips) are not deformed in full.
        let n = (count / 16).clamp(1, SEEDS).min(count);
        let mut seeds: Vec<usize> = (0..n).map(|k| frames.start + k * count / n).collect();
        seeds.dedup();
        let seed = seeds
            .par_iter()
            .map(|&frame| {
                let (mut gathered, mut scratch) = (NOTHING, [0.0f32; 3 * CHUNK]);
                for c in &self.chunks {
                    self.deform(c, frame, &mut scratch, &mut gathered);
                }
                gathered
            })
            .reduce(|| NOTHING, merge);
        let (acc, first_non_finite) = frames
            .into_par_iter()
            // The seeds are in `seed` already, every chunk of them.
            .filter(|frame| seeds.binary_search(frame).is_err())
            .fold(
                || (seed, [0.0f32; 3 * CHUNK]),
                |(mut gathered, mut scratch), frame| {
                    for c in &self.chunks {
                        let inside = c.reach.as_ref().is_some_and(|reach| {
                            reach.inside(self.baker.palette(c.member, frame), &gathered.0)
                        });
                        if !inside {
                            self.deform(c, frame, &mut scratch, &mut gathered);
                        }
                    }
                    (gathered, scratch)
                },
            )
            .map(|(gathered, _)| gathered)
            .reduce(|| NOTHING, merge);
        // -0.0 and 0.0 compare equal, so which one a zero bound keeps
        // would depend on the order values were seen in.
        let positive = |v: f32| if v == 0.0 { 0.0 } else { v };
        FrameBounds {
            bounds: [0, 1].map(|k| [0, 1, 2].map(|c| positive(acc[k][c]))),
            first_non_finite,
        }
    }

    /// Deforms chunk `c` at timeline row `frame` into `scratch` and widens
    /// the bounds gathered to its positions, or notes the frame when one
    /// is not finite.
    fn deform(
        &self,
        c: &Chunk,
        frame: usize,
        scratch: &mut [f32; 3 * CHUNK],
        gathered: &mut Gathered,
    ) {
        let n = c.range.len();
        self.baker.fill_span(
            c.member,
            frame,
            c.range.clone(),
            CHUNK,
            0,
            scratch,
            None,
            None,
        );
        let finite = (0..3).all(|k| all_finite(&scratch[k * CHUNK..k * CHUNK + n]));
        if finite {
            planar_bounds(scratch, CHUNK, 3, n, &mut gathered.0);
        } else {
            gathered.1 = Some(gathered.1.map_or(frame, |f| f.min(frame)));
        }
    }
}

/// Two gathered passes as one.
fn merge(a: Gathered, b: Gathered) -> Gathered {
    let first = match (a.1, b.1) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    (union(a.0, b.0), first)
}

impl Reach {
    /// The reach of vertices `range` of a prepared primitive, or `None`
    /// when a weight is not finite and non-negative, an entry is past the
    /// palette (`palette_len` matrices), a vertex has no positive weight,
    /// or a position is not finite.
    fn of(pr: &super::Prepared, range: std::ops::Range<usize>, palette_len: usize) -> Option<Self> {
        let vertices = pr.positions.len() / 3;
        // Per entry, the least and largest rest position it weighs.
        let mut boxes: Vec<(u16, DVec3, DVec3)> = Vec::new();
        for v in range {
            let p = DVec3::new(
                f64::from(pr.positions[v]),
                f64::from(pr.positions[vertices + v]),
                f64::from(pr.positions[2 * vertices + v]),
            );
            if !p.is_finite() {
                return None;
            }
            let slots = v * pr.slots..(v + 1) * pr.slots;
            let mut weighed = false;
            for (&j, &w) in pr.joints[slots.clone()].iter().zip(&pr.weights[slots]) {
                if !(w.is_finite() && w >= 0.0) || usize::from(j) >= palette_len {
                    return None;
                }
                if w == 0.0 {
                    continue;
                }
                weighed = true;
                match boxes.iter_mut().find(|b| b.0 == j) {
                    Some(b) => (b.1, b.2) = (b.1.min(p), b.2.max(p)),
                    None => boxes.push((j, p, p)),
                }
            }
            if !weighed {
                // No weight at all: the kernel's blend is a zero matrix.
                return None;
            }
        }
        Some(Self {
            joints: boxes
                .into_iter()
                .map(|(j, lo, hi)| (j, (lo + hi) * 0.5, (hi - lo) * 0.5))
                .collect(),
            slack: (pr.slots as f64 + 8.0) * SLACK,
        })
    }

    /// Whether the box holding each palette entry applied to the box of
    /// the rest positions it weighs (a vertex is a blend, weights
    /// non-negative summing to one, of its entries applied to it), widened
    /// by the slack of the largest magnitude, lies inside `acc`.
    fn inside(&self, palette: &[Columns], acc: &Acc) -> bool {
        let (lo, hi) = (
            DVec3::new(acc[0][0].into(), acc[0][1].into(), acc[0][2].into()),
            DVec3::new(acc[1][0].into(), acc[1][1].into(), acc[1][2].into()),
        );
        let (mut low, mut high, mut magnitude) = (DVec3::INFINITY, DVec3::NEG_INFINITY, 0.0f64);
        for &(j, center, half) in &self.joints {
            let m = &palette[usize::from(j)];
            let col =
                |k: usize| DVec3::new(m[4 * k].into(), m[4 * k + 1].into(), m[4 * k + 2].into());
            let (c0, c1, c2, t) = (col(0), col(1), col(2), col(3));
            let mid = c0 * center.x + c1 * center.y + c2 * center.z + t;
            let extent = c0.abs() * half.x + c1.abs() * half.y + c2.abs() * half.z;
            (low, high) = (low.min(mid - extent), high.max(mid + extent));
            // The magnitude of the terms the kernel sums for a coordinate.
            let far = center.abs() + half;
            let terms = c0.abs() * far.x + c1.abs() * far.y + c2.abs() * far.z + t.abs();
            // The matrix's own elements too: the blend sums them.
            let elements = c0.abs().max(c1.abs()).max(c2.abs()).max(t.abs());
            magnitude = magnitude
                .max(terms.max_element())
                .max(elements.max_element());
        }
        let widen = DVec3::splat(magnitude * self.slack);
        // Terms near the f32 range may overflow in the kernel, whatever the
        // exact value: such chunks are always deformed (and so checked).
        magnitude < OVERFLOW && (low - widen).cmpge(lo).all() && (high + widen).cmple(hi).all()
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
