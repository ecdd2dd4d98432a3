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
use rigbake_format::texture::quantize::{pack_normal, unpack_normal};
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
    layout: VatLayout,
    /// Each clip's first row, ascending (the timeline's).
    clip_starts: Vec<usize>,
    positions_spec: VatFileSpec,
    normals_spec: Option<StoredNormals>,
    positions: Vec<ErrorTally>,
    normals: Vec<ErrorTally>,
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
        let clips = timeline.clips.len();
        Self {
            layout,
            clip_starts: timeline.clips.iter().map(|c| c.start_row).collect(),
            positions_spec: positions,
            normals_spec: normals,
            positions: vec![ErrorTally::new(); clips],
            normals: vec![ErrorTally::new(); if normals.is_some() { clips } else { 0 }],
        }
    }

    /// The clip of timeline row (frame) `frame`.
    fn clip_of(&self, frame: usize) -> usize {
        self.clip_starts
            .partition_point(|&s| s <= frame)
            .saturating_sub(1)
    }

    /// Runs `measure(part, row, real)` over `rows` unfolded texture rows
    /// from `first` (rows past the last frame left out), in parallel, clip
    /// by clip; returns each clip's tally, in row order.
    fn runs(
        &self,
        first: usize,
        rows: usize,
        measure: impl Fn(&mut Part, usize, usize) + Sync,
    ) -> Vec<(usize, ErrorTally)> {
        let frame_of = |r: usize| (first + r) / self.layout.bands;
        let w = self.layout.width;
        let mut out = Vec::new();
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
            out.push((clip, part.tally));
            r = end;
        }
        out
    }

    /// Tallies the positions of unfolded texture rows `first..`: whole
    /// planar rows of three planes of `layout.width`. Padding texels and
    /// rows past the last frame are left out.
    pub(super) fn add_positions(&mut self, first: usize, positions: &[f32]) {
        let w = self.layout.width;
        let rows = positions.len() / (3 * w).max(1);
        let spec = self.positions_spec;
        let runs = self.runs(first, rows, |part, row, real| {
            let row = &positions[row * 3 * w..(row + 1) * 3 * w];
            part.decoded.resize(3 * w, 0.0);
            spec.decode_row(row, w, 3, &mut part.q, &mut part.decoded);
            let d = &part.decoded;
            part.tally.extend((0..real).map(|x| {
                let dx = d[x] - row[x];
                let dy = d[w + x] - row[w + x];
                let dz = d[2 * w + x] - row[2 * w + x];
                dx * dx + dy * dy + dz * dz
            }));
        });
        for (clip, tally) in runs {
            self.positions[clip].merge(&tally);
        }
    }

    /// Tallies the normals of the same rows as [`Self::add_positions`].
    pub(super) fn add_normals(&mut self, first: usize, normals: NormalsIn<'_>) {
        let (Some(stored), false) = (self.normals_spec, self.normals.is_empty()) else {
            return;
        };
        let w = self.layout.width;
        let runs =
            match normals {
                NormalsIn::Exact(n) => {
                    let rows = n.len() / (3 * w).max(1);
                    self.runs(first, rows, |part, row, real| {
                        let n = &n[row * 3 * w..(row + 1) * 3 * w];
                        let exact = |x: usize| [n[x], n[w + x], n[2 * w + x]];
                        match stored {
                            StoredNormals::Packed => {
                                part.tally.extend((0..real).map(|x| {
                                    let a = exact(x);
                                    angle_key_of(a, unpack_normal(pack_normal(a)))
                                }));
                            }
                            StoredNormals::File(spec) => {
                                part.decoded.resize(3 * w, 0.0);
                                spec.decode_row(n, w, 3, &mut part.q, &mut part.decoded);
                                let d = &part.decoded;
                                part.tally.extend((0..real).map(|x| {
                                    angle_key_of(exact(x), [d[x], d[w + x], d[2 * w + x]])
                                }));
                            }
                        }
                    })
                }
                NormalsIn::Cosines(c) => {
                    let rows = c.len() / w.max(1);
                    self.runs(first, rows, |part, row, real| {
                        part.tally
                            .extend(c[row * w..row * w + real].iter().map(|&cos| {
                                // A zero normal scores infinity: no angle.
                                let cos = if cos.is_finite() {
                                    cos.clamp(-1.0, 1.0)
                                } else {
                                    1.0
                                };
                                angle_key(cos, (1.0 - cos) * (1.0 + cos), 1.0)
                            }));
                    })
                }
            };
        for (clip, tally) in runs {
            self.normals[clip].merge(&tally);
        }
    }

    /// The figures per clip, in timeline order.
    pub(super) fn figures(&self) -> Vec<meta::ClipErrorMeta> {
        self.positions
            .iter()
            .enumerate()
            .map(|(c, p)| meta::ClipErrorMeta {
                positions: figure(ErrorFigure::of(p, distance_of_key, f64::MAX)),
                normals_degrees: self
                    .normals
                    .get(c)
                    .map(|n| figure(ErrorFigure::of(n, degrees_of_key, 180.0))),
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
