//! What a VAT set's encoding costs, per clip: every texel a shader reads
//! (each vertex at each frame) decoded as the writer stores it
//! ([`VatFileSpec::decode_row`], or the packed normal's code) against the
//! exact baked value, the position's squared distance and the normal's
//! angle key tallied per clip ([`ErrorTally`]).

use rayon::prelude::*;
use rigbake_core::bake::vat::VatLayout;
use rigbake_core::error_tally::{
    ErrorFigure, ErrorTally, angle_key, angle_key_of, degrees_of_key, distance_of_key,
};
use rigbake_core::timeline::Timeline;
use rigbake_format::meta::{self, VatStream};
use rigbake_format::texture::quantize::pack_normals_planar;
use rigbake_format::vat::VatFileSpec;

/// How a set's normals are stored.
#[derive(Debug, Clone, Copy)]
pub(super) enum StoredNormals {
    /// In a file of their own.
    File(VatFileSpec),
    /// As a 16-bit code in the positions' alpha.
    Packed,
}

/// The per-clip tallies of one texture set.
pub(super) struct VatErrorTally {
    rows: Rows,
    positions_spec: VatFileSpec,
    normals_spec: Option<StoredNormals>,
    positions: StreamTallies,
    /// Empty when the set has no normals.
    normals: Option<StreamTallies>,
}

/// Where a set's unfolded texture rows are in the timeline.
struct Rows {
    layout: VatLayout,
    /// Each clip's first row, ascending (the timeline's).
    clip_starts: Vec<usize>,
}

/// One stream's figures per clip. A clip's tally (32 KiB) lives only
/// until every texel of the clip is counted (its frames times the set's
/// vertices), then becomes its two figures: a timeline of many clips holds
/// a tally for the few clips being measured at a time, not one per clip.
struct StreamTallies {
    live: std::collections::BTreeMap<usize, ErrorTally>,
    done: Vec<Option<ErrorFigure>>,
    /// Per clip, the texels it has.
    expected: Vec<u64>,
    /// A key's unit and the largest figure of it ([`ErrorFigure::of`]).
    unit: (fn(f64) -> f64, f64),
}

impl StreamTallies {
    fn new(expected: Vec<u64>, unit: (fn(f64) -> f64, f64)) -> Self {
        Self {
            live: std::collections::BTreeMap::new(),
            done: vec![None; expected.len()],
            expected,
            unit,
        }
    }

    /// Adds `tally` to clip `clip`'s, and turns it into figures when the
    /// clip is whole.
    fn merge(&mut self, clip: usize, tally: &ErrorTally) {
        let live = self.live.entry(clip).or_default();
        live.merge(tally);
        if live.count() >= self.expected[clip] {
            let whole = self.live.remove(&clip).unwrap_or_default();
            self.done[clip] = Some(ErrorFigure::of(&whole, self.unit.0, self.unit.1));
        }
    }

    /// Every clip's figures (a clip not whole yet: of what was counted).
    fn figures(&self) -> Vec<meta::ErrorFigure> {
        let (unit, cap) = self.unit;
        (0..self.done.len())
            .map(|c| {
                let f = self.done[c].unwrap_or_else(|| match self.live.get(&c) {
                    Some(t) => ErrorFigure::of(t, unit, cap),
                    None => ErrorFigure::of(&ErrorTally::new(), unit, cap),
                });
                figure(f)
            })
            .collect()
    }
}

/// The normals of a batch as the tally takes them.
#[derive(Debug, Clone, Copy)]
pub(super) enum NormalsIn<'a> {
    /// The exact normals, whole planar rows of three planes, decoded here
    /// as stored.
    Exact(&'a [f32]),
    /// Each texel's cosine to its packed normal, one plane a row (what
    /// the packing measured: [`rigbake_format::vat::pack_normal_rows`]).
    Cosines(&'a [f32]),
    /// The exact normals and what a reader decodes of them (the normals
    /// file writer's [`rigbake_format::vat::VatFileWriter::last_rows`]),
    /// whole planar rows of three planes each.
    Decoded(&'a [f32], &'a [f32]),
}

/// One worker's tally and scratch.
struct Part {
    tally: ErrorTally,
    q: Vec<u16>,
    decoded: Vec<f32>,
}

impl Part {
    fn new() -> Self {
        Self {
            tally: ErrorTally::new(),
            q: Vec::new(),
            decoded: Vec::new(),
        }
    }

    fn merge(mut self, other: Self) -> Self {
        self.tally.merge(&other.tally);
        self
    }
}

impl VatErrorTally {
    /// Empty tallies for a set laid out as `layout`, its positions stored
    /// as `positions` says and its normals (when baked) as `normals`.
    pub(super) fn new(
        layout: VatLayout,
        timeline: &Timeline,
        positions: VatFileSpec,
        normals: Option<StoredNormals>,
    ) -> Self {
        let expected: Vec<u64> = timeline
            .clips
            .iter()
            .map(|c| c.frames as u64 * layout.vertices as u64)
            .collect();
        Self {
            rows: Rows {
                layout,
                clip_starts: timeline.clips.iter().map(|c| c.start_row).collect(),
            },
            positions_spec: positions,
            normals_spec: normals,
            positions: StreamTallies::new(expected.clone(), (distance_of_key, f64::MAX)),
            normals: normals.map(|_| StreamTallies::new(expected, (degrees_of_key, 180.0))),
        }
    }
}

impl Rows {
    /// The clip of timeline row (frame) `frame`.
    fn clip_of(&self, frame: usize) -> usize {
        self.clip_starts
            .partition_point(|&s| s <= frame)
            .saturating_sub(1)
    }

    /// Runs `measure(part, row, real)` over `rows` unfolded texture rows
    /// from `first` (rows past the last frame left out), in parallel, clip
    /// by clip, and hands each clip's tally to `done`, in row order.
    fn runs(
        &self,
        first: usize,
        rows: usize,
        measure: impl Fn(&mut Part, usize, usize) + Sync,
        mut done: impl FnMut(usize, &ErrorTally),
    ) {
        let frame_of = |r: usize| (first + r) / self.layout.bands;
        let w = self.layout.width;
        let mut r = 0;
        while r < rows && frame_of(r) < self.layout.frames {
            // The run of rows of one clip.
            let clip = self.clip_of(frame_of(r));
            let mut end = r + 1;
            while end < rows
                && frame_of(end) < self.layout.frames
                && self.clip_of(frame_of(end)) == clip
            {
                end += 1;
            }
            let part = (r..end)
                .into_par_iter()
                .fold(Part::new, |mut part, row| {
                    let band = (first + row) % self.layout.bands;
                    let real = self.layout.vertices.saturating_sub(band * w).min(w);
                    measure(&mut part, row, real);
                    part
                })
                .reduce(Part::new, Part::merge);
            done(clip, &part.tally);
            r = end;
        }
    }
}

impl VatErrorTally {
    /// Tallies the positions of unfolded texture rows `first..`: whole
    /// planar rows of three planes of `layout.width`, decoded here as
    /// stored. Padding texels and rows past the last frame are left out.
    pub(super) fn add_positions(&mut self, first: usize, positions: &[f32]) {
        self.add_stored_positions(first, positions, 3, None);
    }

    /// [`Self::add_positions`] of rows of `planes` planes (the first three
    /// the position; 4 in a file with packed normals) with, when given,
    /// what a reader decodes of them in the same layout (the writer's
    /// [`rigbake_format::vat::VatFileWriter::last_rows`]): then nothing is
    /// quantised again.
    pub(super) fn add_stored_positions(
        &mut self,
        first: usize,
        positions: &[f32],
        planes: usize,
        decoded: Option<&[f32]>,
    ) {
        let w = self.rows.layout.width;
        let stride = planes * w;
        let rows = positions.len() / stride.max(1);
        let spec = self.positions_spec;
        let measure = |part: &mut Part, row: usize, real: usize| {
            let at = row * stride..row * stride + 3 * w;
            let row = &positions[at.clone()];
            let d: &[f32] = match decoded {
                Some(decoded) => &decoded[at],
                None => {
                    part.decoded.resize(3 * w, 0.0);
                    spec.decode_row(row, w, 3, &mut part.q, &mut part.decoded);
                    &part.decoded
                }
            };
            part.tally
                .extend_planar(planar(row, w, real), planar(d, w, real), |a, b| {
                    let (dx, dy, dz) = (b[0] - a[0], b[1] - a[1], b[2] - a[2]);
                    dx * dx + dy * dy + dz * dz
                });
        };
        let tallies = &mut self.positions;
        self.rows
            .runs(first, rows, measure, |clip, t| tallies.merge(clip, t));
    }

    /// Tallies the normals of the same rows as [`Self::add_positions`].
    pub(super) fn add_normals(&mut self, first: usize, normals: NormalsIn<'_>) {
        let (Some(stored), Some(tallies)) = (self.normals_spec, self.normals.as_mut()) else {
            return;
        };
        let w = self.rows.layout.width;
        let done = |clip: usize, t: &ErrorTally| tallies.merge(clip, t);
        match normals {
            NormalsIn::Exact(n) => {
                let rows = n.len() / (3 * w).max(1);
                let measure = |part: &mut Part, row: usize, real: usize| {
                    let n = &n[row * 3 * w..(row + 1) * 3 * w];
                    match stored {
                        StoredNormals::Packed => {
                            // Scored as the packing scores them (the
                            // unfolded path's `Cosines`).
                            part.q.resize(real, 0);
                            part.decoded.resize(real, 0.0);
                            let planes = [0, 1, 2].map(|c| &n[c * w..c * w + real]);
                            pack_normals_planar(planes, &mut part.q, &mut part.decoded);
                            part.tally
                                .extend(part.decoded.iter().map(|&c| cosine_key(c)));
                        }
                        StoredNormals::File(spec) => {
                            part.decoded.resize(3 * w, 0.0);
                            spec.decode_row(n, w, 3, &mut part.q, &mut part.decoded);
                            let d = planar(&part.decoded, w, real);
                            part.tally
                                .extend_planar(planar(n, w, real), d, angle_key_of);
                        }
                    }
                };
                self.rows.runs(first, rows, measure, done);
            }
            NormalsIn::Decoded(n, d) => {
                let rows = n.len() / (3 * w).max(1);
                let measure = |part: &mut Part, row: usize, real: usize| {
                    let at = row * 3 * w;
                    let (n, d) = (&n[at..at + 3 * w], &d[at..at + 3 * w]);
                    part.tally
                        .extend_planar(planar(n, w, real), planar(d, w, real), angle_key_of);
                };
                self.rows.runs(first, rows, measure, done);
            }
            NormalsIn::Cosines(c) => {
                let rows = c.len() / w.max(1);
                let measure = |part: &mut Part, row: usize, real: usize| {
                    part.tally.extend(
                        c[row * w..row * w + real]
                            .iter()
                            .map(|&cos| cosine_key(cos)),
                    );
                };
                self.rows.runs(first, rows, measure, done);
            }
        }
    }

    /// The figures per clip, in timeline order.
    pub(super) fn figures(&self) -> Vec<meta::ClipErrorMeta> {
        let normals = self.normals.as_ref().map(StreamTallies::figures);
        self.positions
            .figures()
            .into_iter()
            .enumerate()
            .map(|(c, positions)| meta::ClipErrorMeta {
                positions,
                normals_degrees: normals.as_ref().map(|n| n[c]),
                virtual_vertices: None,
            })
            .collect()
    }
}

/// The record's form of a figure.
pub(super) fn figure(f: ErrorFigure) -> meta::ErrorFigure {
    meta::ErrorFigure {
        max: f.max,
        p99: f.p99,
    }
}

/// The normals' storage of a set whose files are `specs`, when it bakes
/// normals: packed in the positions file, or a normals file.
pub(super) fn stored_normals(specs: &[VatFileSpec], normals: bool) -> Option<StoredNormals> {
    if !normals {
        return None;
    }
    specs
        .iter()
        .find(|s| s.stream == VatStream::Normals)
        .map(|s| StoredNormals::File(*s))
        .or(Some(StoredNormals::Packed))
}

/// The first `real` texels of each of the three planes of a planar row
/// (planes of `w`).
fn planar(row: &[f32], w: usize, real: usize) -> [&[f32]; 3] {
    [0, 1, 2].map(|c| &row[c * w..c * w + real])
}

/// The tally key of a packed normal's score ([`pack_normals_planar`]: the
/// cosine to what its code decodes to); a zero normal scores infinity and
/// has no angle.
fn cosine_key(cos: f32) -> f32 {
    let cos = if cos.is_finite() {
        cos.clamp(-1.0, 1.0)
    } else {
        1.0
    };
    angle_key(cos, (1.0 - cos) * (1.0 + cos), 1.0)
}
