//! What a VAT set's encoding costs, per clip: every texel a shader reads
//! (each vertex at each frame) decoded as the writer stores it
//! ([`VatFileSpec::decode_row`], or the packed normal's code) against the
//! exact baked value, the position's distance and the normal's angle
//! tallied per clip ([`ErrorTally`]).

use rayon::prelude::*;
use rigbake_core::bake::vat::VatLayout;
use rigbake_core::error_tally::{ErrorFigure, ErrorTally, angle_key, degrees_of_key};
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

/// One worker's tallies and scratch.
struct Part {
    positions: ErrorTally,
    normals: ErrorTally,
    q: Vec<u16>,
    decoded: Vec<f32>,
}

impl Part {
    fn new() -> Self {
        Self {
            positions: ErrorTally::new(),
            normals: ErrorTally::new(),
            q: Vec::new(),
            decoded: Vec::new(),
        }
    }

    fn merge(mut self, other: Self) -> Self {
        self.positions.merge(&other.positions);
        self.normals.merge(&other.normals);
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

    /// Tallies unfolded texture rows `first..` of the set: `positions` (and
    /// `normals` when the set bakes them) hold whole planar rows of three
    /// planes of `layout.width`. Padding texels and rows past the last
    /// frame are left out. Rows are measured in parallel, clip by clip.
    pub(super) fn add_rows(&mut self, first: usize, positions: &[f32], normals: Option<&[f32]>) {
        let w = self.layout.width;
        let rows = positions.len() / (3 * w).max(1);
        let frame_of = |r: usize| (first + r) / self.layout.bands;
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
                    let span = row * 3 * w..(row + 1) * 3 * w;
                    self.measure_row(
                        &mut part,
                        &positions[span.clone()],
                        normals.map(|n| &n[span]),
                        real,
                    );
                    part
                })
                .reduce(Part::new, Part::merge);
            self.positions[clip].merge(&part.positions);
            if let Some(t) = self.normals.get_mut(clip) {
                t.merge(&part.normals);
            }
            r = end;
        }
    }

    /// Tallies the first `real` texels of one planar row.
    fn measure_row(&self, part: &mut Part, row: &[f32], normals: Option<&[f32]>, real: usize) {
        let w = self.layout.width;
        part.decoded.resize(3 * w, 0.0);
        self.positions_spec
            .decode_row(row, w, 3, &mut part.q, &mut part.decoded);
        let d = &part.decoded;
        for x in 0..real {
            let dx = d[x] - row[x];
            let dy = d[w + x] - row[w + x];
            let dz = d[2 * w + x] - row[2 * w + x];
            part.positions.add((dx * dx + dy * dy + dz * dz).sqrt());
        }
        let (Some(n), Some(stored)) = (normals, self.normals_spec) else {
            return;
        };
        let exact = |x: usize| [n[x], n[w + x], n[2 * w + x]];
        match stored {
            StoredNormals::Packed => {
                for x in 0..real {
                    let a = exact(x);
                    part.normals
                        .add(angle_key_of(a, unpack_normal(pack_normal(a))));
                }
            }
            StoredNormals::File(spec) => {
                spec.decode_row(n, w, 3, &mut part.q, &mut part.decoded);
                let d = &part.decoded;
                for x in 0..real {
                    let b = [d[x], d[w + x], d[2 * w + x]];
                    part.normals.add(angle_key_of(exact(x), b));
                }
            }
        }
    }

    /// The figures per clip, in timeline order.
    pub(super) fn figures(&self) -> Vec<meta::ClipErrorMeta> {
        self.positions
            .iter()
            .enumerate()
            .map(|(c, p)| meta::ClipErrorMeta {
                positions: figure(ErrorFigure::of(p, |x| x)),
                normals_degrees: self
                    .normals
                    .get(c)
                    .map(|n| figure(ErrorFigure::of(n, degrees_of_key))),
                virtual_vertices: None,
            })
            .collect()
    }
}

/// The tally key of the angle between `a` and `b` ([`angle_key`]).
fn angle_key_of(a: [f32; 3], b: [f32; 3]) -> f32 {
    let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let cross = [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ];
    angle_key(
        dot,
        (cross[0] * cross[0] + cross[1] * cross[1] + cross[2] * cross[2]).sqrt(),
    )
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
