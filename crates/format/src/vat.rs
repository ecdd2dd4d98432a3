//! Writing vertex animation textures: one file per stream (positions,
//! normals, tangents), fed row batch by row batch, encoded as EXR (32 or 16
//! bit floats) or 16-bit PNG (normalised to bounds, or octahedral for
//! directions), with the largest error each encoding introduced measured on
//! the way (model units for positions, degrees for directions).

use std::io::BufWriter;
use std::path::Path;

use half::slice::HalfFloatSliceExt;
use rayon::prelude::*;

use crate::digest::{Digest, DigestFile};
use crate::error::{FormatError, Result};
use crate::meta::{DirectionEncoding, VatEncoding, VatStream};
use crate::texture::Precision;
use crate::texture::exr::{Rows, StreamCompression, StreamSpec, StreamWriter};
use crate::texture::png::Png16Stream;
use crate::texture::quantize::{
    cosine, degrees_of_cosine, from_unorm16, octahedral_decode, octahedral_encode, to_unorm16,
};

/// Floats per texel a stream delivers: 3 for positions and normals, 4 for
/// tangents (xyz and the handedness sign).
pub fn stream_floats(stream: VatStream) -> usize {
    match stream {
        VatStream::Positions | VatStream::Normals => 3,
        VatStream::Tangents => 4,
    }
}

/// How one VAT file is encoded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VatFileSpec {
    /// What it holds.
    pub stream: VatStream,
    /// Width in texels.
    pub width: usize,
    /// Height in texels.
    pub height: usize,
    /// Sample encoding.
    pub encoding: VatEncoding,
    /// Direction encoding for PNG normals and tangents.
    pub direction_encoding: DirectionEncoding,
    /// EXR compression.
    pub compression: StreamCompression,
    /// Per-channel `[min, max]` for bounds-normalised PNG channels (required
    /// for PNG positions and for PNG directions with `Bounds`).
    pub bounds: Option<[[f32; 4]; 2]>,
}

impl VatFileSpec {
    /// Channels stored in the file.
    pub fn channels(&self) -> usize {
        stream_floats(self.stream)
    }

    /// Whether this file needs bounds before writing.
    pub fn needs_bounds(&self) -> bool {
        self.encoding == VatEncoding::Png16
            && (self.stream == VatStream::Positions
                || self.direction_encoding == DirectionEncoding::Bounds)
    }

    /// The direction encoding actually used (always `Float` for EXR).
    pub fn effective_direction_encoding(&self) -> DirectionEncoding {
        match (self.encoding, self.stream) {
            (VatEncoding::Png16, VatStream::Normals | VatStream::Tangents) => {
                self.direction_encoding
            }
            _ => DirectionEncoding::Float,
        }
    }
}

enum Sink {
    Exr(StreamWriter),
    // No BufWriter: the PNG encoder buffers whole chunks itself, and a
    // buffer dropped with the encoder would swallow its last write's error.
    Png(Png16Stream),
}

/// Streams one VAT file, measuring the encoding error.
pub struct VatFileWriter {
    spec: VatFileSpec,
    sink: Sink,
    max_error: f64,
    digest: Digest,
    /// Consumed f32 batches ready for reuse.
    spare: Vec<Vec<f32>>,
}

/// What a finished VAT file reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VatFileDone {
    /// The largest encoding error (see the format's description).
    pub max_error: f64,
    /// File size in bytes.
    pub bytes: u64,
    /// CRC-32 of the file.
    pub crc32: u32,
}

impl std::fmt::Debug for VatFileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VatFileWriter")
            .field("spec", &self.spec)
            .finish()
    }
}

/// Widens `acc` (per-channel `[min, max]`) to the first `count` texels of a
/// planar row of `floats` planes of `width`.
pub fn bounds_of(row: &[f32], width: usize, floats: usize, count: usize, acc: &mut [[f32; 4]; 2]) {
    for c in 0..floats {
        for v in &row[c * width..c * width + count] {
            acc[0][c] = acc[0][c].min(*v);
            acc[1][c] = acc[1][c].max(*v);
        }
    }
}

/// Bounds accumulator start value (min = +inf, max = -inf).
pub const EMPTY_BOUNDS: [[f32; 4]; 2] = [[f32::INFINITY; 4], [f32::NEG_INFINITY; 4]];

impl VatFileWriter {
    /// Creates the file at `path` and starts writing.
    pub fn create(path: &Path, spec: VatFileSpec) -> Result<Self> {
        if spec.needs_bounds() && spec.bounds.is_none() {
            return Err(FormatError::Invalid("PNG positions need bounds".to_owned()));
        }
        let file = DigestFile::create(path)?;
        let digest = file.digest();
        let sink = match spec.encoding {
            VatEncoding::Exr32 | VatEncoding::Exr16 => Sink::Exr(StreamWriter::new(
                BufWriter::with_capacity(1 << 20, file),
                StreamSpec {
                    width: spec.width,
                    height: spec.height,
                    channels: spec.channels(),
                    precision: if spec.encoding == VatEncoding::Exr32 {
                        Precision::F32
                    } else {
                        Precision::F16
                    },
                    compression: spec.compression,
                },
            )?),
            VatEncoding::Png16 => Sink::Png(Png16Stream::new(
                file,
                spec.width,
                spec.height,
                spec.channels(),
            )?),
        };
        Ok(Self {
            spec,
            sink,
            max_error: 0.0,
            digest,
            spare: Vec::new(),
        })
    }

    /// Appends whole planar texture rows: per row, one plane of `width`
    /// values per component (x, y, z, and w for tangents; components as
    /// [`stream_floats`] says). Zero texels (padding) are stored but not
    /// measured. Conversion and measurement run in parallel over rows.
    pub fn push_rows(&mut self, values: Vec<f32>) -> Result<()> {
        let (floats, width) = (self.spec.channels(), self.spec.width);
        let row_len = floats * width;
        if !values.len().is_multiple_of(row_len) {
            return Err(FormatError::Invalid("VAT rows are not whole".to_owned()));
        }
        let stream = self.spec.stream;
        match &mut self.sink {
            Sink::Exr(writer) if self.spec.encoding == VatEncoding::Exr16 => {
                let mut halves = match writer.take_spare() {
                    Some(Rows::F16(h)) => h,
                    _ => Vec::new(),
                };
                halves.resize(values.len(), half::f16::ZERO);
                // Whole-row conversions (F16C where the CPU has it), then the
                // error of every texel against what a reader decodes.
                let errors: Vec<Result<WorstError>> = halves
                    .par_chunks_mut(row_len)
                    .zip(values.par_chunks(row_len))
                    .map_init(Vec::new, |decoded: &mut Vec<f32>, (out, row)| {
                        out.convert_from_f32_slice(row);
                        decoded.resize(row.len(), 0.0);
                        out.convert_to_f32_slice(decoded);
                        if let Some(i) = decoded.iter().position(|v| !v.is_finite()) {
                            let texel = texel_of(row, width, floats, i % width);
                            return Err(FormatError::Unrepresentable(format!(
                                "value {texel:?} is outside the half-float range (+-65504); use exr32"
                            )));
                        }
                        let mut worst = WorstError::new(stream);
                        for x in 0..width {
                            worst.add(
                                &texel_of(row, width, floats, x),
                                &texel_of(decoded, width, floats, x),
                            );
                        }
                        Ok(worst)
                    })
                    .collect();
                for e in errors {
                    self.max_error = self.max_error.max(e?.value());
                }
                self.spare.push(values);
                writer.push_rows(Rows::F16(halves))
            }
            Sink::Exr(writer) => writer.push_rows(Rows::F32(values)),
            Sink::Png(writer) => {
                let bounds = self.spec.bounds.unwrap_or(EMPTY_BOUNDS);
                let direction = self.spec.effective_direction_encoding();
                // Quantised in parallel over rows, straight into the bytes
                // PNG stores (interleaved big-endian samples); the writer
                // thread compresses them while the next batch bakes.
                let mut bytes = writer.take_spare().unwrap_or_default();
                bytes.resize(values.len() * 2, 0);
                let errors: Vec<WorstError> = bytes
                    .par_chunks_mut(row_len * 2)
                    .zip(values.par_chunks(row_len))
                    .map(|(out, row)| {
                        let mut worst = WorstError::new(stream);
                        for (x, texel_out) in out.chunks_exact_mut(floats * 2).enumerate() {
                            let texel = texel_of(row, width, floats, x);
                            let (q, decoded) = quantize(stream, direction, &bounds, &texel, floats);
                            for (sample, q) in texel_out.chunks_exact_mut(2).zip(q) {
                                sample.copy_from_slice(&q.to_be_bytes());
                            }
                            worst.add(&texel, &decoded);
                        }
                        worst
                    })
                    .collect();
                for e in errors {
                    self.max_error = self.max_error.max(e.value());
                }
                self.spare.push(values);
                writer.push_rows(bytes)
            }
        }
    }

    /// A buffer of a batch this writer is done with, to fill with the next
    /// batch instead of allocating one (its contents are stale).
    pub fn take_spare(&mut self) -> Option<Vec<f32>> {
        if let Some(v) = self.spare.pop() {
            return Some(v);
        }
        match &mut self.sink {
            Sink::Exr(writer) => match writer.take_spare()? {
                Rows::F32(v) => Some(v),
                Rows::F16(_) => None,
            },
            Sink::Png(_) => None,
        }
    }

    /// Completes the file; returns the largest encoding error and the
    /// file's size and CRC-32 (computed as it was written), and moves the
    /// f32 buffers it is done with into `reuse`.
    pub fn finish(mut self, reuse: &mut Vec<Vec<f32>>) -> Result<VatFileDone> {
        reuse.append(&mut self.spare);
        match self.sink {
            Sink::Exr(w) => reuse.extend(w.finish()?.into_iter().filter_map(|rows| match rows {
                Rows::F32(v) => Some(v),
                Rows::F16(_) => None,
            })),
            Sink::Png(w) => w.finish()?,
        }
        let (bytes, crc32) = self.digest.finish()?;
        Ok(VatFileDone {
            max_error: self.max_error,
            bytes,
            crc32,
        })
    }
}

/// Texel `x` of a planar row (`floats` planes of `width`).
fn texel_of(row: &[f32], width: usize, floats: usize, x: usize) -> [f32; 4] {
    let mut t = [0f32; 4];
    for (c, v) in t.iter_mut().enumerate().take(floats) {
        *v = row[c * width + x];
    }
    t
}

/// A texel's 16-bit samples for PNG and what a reader decodes from them.
fn quantize(
    stream: VatStream,
    direction: DirectionEncoding,
    bounds: &[[f32; 4]; 2],
    texel: &[f32; 4],
    floats: usize,
) -> ([u16; 4], [f32; 4]) {
    let mut q = [0u16; 4];
    let mut decoded = [0f32; 4];
    match (stream, direction) {
        (VatStream::Normals | VatStream::Tangents, DirectionEncoding::Octahedral) => {
            let e = octahedral_encode([texel[0], texel[1], texel[2]]);
            q[0] = to_unorm16(e[0], -1.0, 1.0);
            q[1] = to_unorm16(e[1], -1.0, 1.0);
            let d =
                octahedral_decode([from_unorm16(q[0], -1.0, 1.0), from_unorm16(q[1], -1.0, 1.0)]);
            decoded[..3].copy_from_slice(&d);
            if floats == 4 {
                q[3] = if texel[3] < 0.0 { 0 } else { 65535 };
                decoded[3] = texel[3];
            }
        }
        _ => {
            for c in 0..floats {
                q[c] = to_unorm16(texel[c], bounds[0][c], bounds[1][c]);
                decoded[c] = from_unorm16(q[c], bounds[0][c], bounds[1][c]);
            }
        }
    }
    (q, decoded)
}

/// The largest error among texels of one stream, kept in a form that needs
/// no square root or arc cosine per texel: the largest squared distance
/// (positions, model units) or the smallest cosine between the original and
/// the decoded direction (normals and tangents, whose `w` is exact); turned
/// into model units or degrees by [`Self::value`]. Texels whose original
/// direction is zero (padding) are not measured.
#[derive(Debug, Clone, Copy)]
struct WorstError {
    stream: VatStream,
    distance2: f64,
    cosine: f64,
}

impl WorstError {
    fn new(stream: VatStream) -> Self {
        Self {
            stream,
            distance2: 0.0,
            cosine: 1.0,
        }
    }

    /// Takes in one texel (`original` and `decoded`, 4 components, those past
    /// the stream's own zero).
    #[inline]
    fn add(&mut self, original: &[f32; 4], decoded: &[f32; 4]) {
        match self.stream {
            VatStream::Positions => {
                let d2 = original
                    .iter()
                    .zip(decoded)
                    .map(|(a, b)| (f64::from(*a) - f64::from(*b)).powi(2))
                    .sum::<f64>();
                self.distance2 = self.distance2.max(d2);
            }
            VatStream::Normals | VatStream::Tangents => {
                let direction = |t: &[f32; 4]| [t[0], t[1], t[2]];
                if let Some(c) = cosine(direction(original), direction(decoded)) {
                    self.cosine = self.cosine.min(c);
                }
            }
        }
    }

    /// The largest error: model units for positions, degrees for directions.
    fn value(self) -> f64 {
        match self.stream {
            VatStream::Positions => self.distance2.sqrt(),
            VatStream::Normals | VatStream::Tangents => degrees_of_cosine(self.cosine),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::texture::quantize::angle_degrees;

    #[test]
    fn worst_error_is_the_largest_per_texel_error() {
        // Positions: distances 0.5 and 1.3; the largest wins.
        let mut p = WorstError::new(VatStream::Positions);
        p.add(&[1.0, 2.0, 3.0, 0.0], &[1.3, 2.4, 3.0, 0.0]);
        p.add(&[0.0, 0.0, 0.0, 0.0], &[0.5, 1.2, 0.0, 0.0]);
        p.add(&[5.0, 5.0, 5.0, 0.0], &[5.0, 5.0, 5.0, 0.0]);
        assert!((p.value() - 1.3).abs() < 1e-6, "{}", p.value());

        // Directions: 10 and 30 degrees apart, a zero (padding) texel that
        // is not measured, and tangent w ignored.
        let at = |deg: f32| {
            let r = deg.to_radians();
            [r.cos(), r.sin(), 0.0, -1.0]
        };
        let mut n = WorstError::new(VatStream::Tangents);
        n.add(&at(0.0), &at(10.0));
        n.add(&at(40.0), &at(10.0));
        n.add(&[0.0; 4], &at(90.0));
        n.add(&at(5.0), &[at(5.0)[0], at(5.0)[1], 0.0, 1.0]);
        let xyz = |t: [f32; 4]| [t[0], t[1], t[2]];
        let expected = angle_degrees(xyz(at(0.0)), xyz(at(10.0)))
            .max(angle_degrees(xyz(at(40.0)), xyz(at(10.0))));
        assert!((n.value() - 30.0).abs() < 1e-4, "{}", n.value());
        assert!((n.value() - expected).abs() < 1e-9);

        // Nothing measured: no error.
        assert_eq!(WorstError::new(VatStream::Normals).value(), 0.0);
        assert_eq!(WorstError::new(VatStream::Positions).value(), 0.0);
    }
}
