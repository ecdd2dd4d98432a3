//! Writing vertex animation textures: one file per stream (positions,
//! normals, tangents), fed row batch by row batch, encoded as EXR (32 or 16
//! bit floats) or 16-bit PNG (normalised to bounds, or octahedral for
//! directions), with the largest error each encoding introduced measured on
//! the way (model units for positions, degrees for directions).

use std::fs::File;
use std::io::{BufWriter, Read};
use std::path::Path;

use crate::error::{FormatError, Result};
use crate::meta::{DirectionEncoding, VatEncoding, VatStream};
use crate::texture::Precision;
use crate::texture::exr::{StreamCompression, StreamSpec, StreamWriter};
use crate::texture::png::Png16Writer;
use crate::texture::quantize::{
    angle_degrees, from_unorm16, octahedral_decode, octahedral_encode, to_unorm16,
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
    Png(Box<Png16Writer<BufWriter<File>>>),
}

/// Streams one VAT file, measuring the encoding error.
pub struct VatFileWriter {
    spec: VatFileSpec,
    sink: Sink,
    samples: Vec<u16>,
    max_error: f64,
}

impl std::fmt::Debug for VatFileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VatFileWriter")
            .field("spec", &self.spec)
            .finish()
    }
}

/// Per-channel bounds of `values` (`floats` per texel), ignoring nothing:
/// callers pass only real texels. Unused channels get `[0, 0]`.
pub fn bounds_of(values: &[f32], floats: usize, acc: &mut [[f32; 4]; 2]) {
    for texel in values.chunks_exact(floats) {
        for (c, v) in texel.iter().enumerate() {
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
        let file = File::create(path)?;
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
            VatEncoding::Png16 => Sink::Png(Box::new(Png16Writer::new(
                BufWriter::with_capacity(1 << 20, file),
                spec.width,
                spec.height,
                spec.channels(),
            )?)),
        };
        Ok(Self {
            spec,
            sink,
            samples: Vec::new(),
            max_error: 0.0,
        })
    }

    /// Appends whole texture rows (`width * floats` values each, floats per
    /// texel as [`stream_floats`] says). Zero texels (padding) are stored
    /// but not measured.
    pub fn push_rows(&mut self, values: Vec<f32>) -> Result<()> {
        let floats = self.spec.channels();
        match &mut self.sink {
            Sink::Exr(writer) => {
                if self.spec.encoding == VatEncoding::Exr16 {
                    let mut decoded = [0f32; 4];
                    for texel in values.chunks_exact(floats) {
                        for (d, v) in decoded.iter_mut().zip(texel) {
                            *d = half::f16::from_f32(*v).to_f32();
                        }
                        if decoded.iter().any(|v| !v.is_finite()) {
                            return Err(FormatError::Unrepresentable(format!(
                                "value {texel:?} is outside the half-float range (+-65504); use exr32"
                            )));
                        }
                        self.max_error = self.max_error.max(texel_error(
                            self.spec.stream,
                            texel,
                            &decoded[..floats],
                        ));
                    }
                }
                writer.push_rows(values)
            }
            Sink::Png(writer) => {
                self.samples.clear();
                let bounds = self.spec.bounds.unwrap_or(EMPTY_BOUNDS);
                let direction = self.spec.effective_direction_encoding();
                for texel in values.chunks_exact(floats) {
                    let mut q = [0u16; 4];
                    let mut decoded = [0f32; 4];
                    match (self.spec.stream, direction) {
                        (
                            VatStream::Normals | VatStream::Tangents,
                            DirectionEncoding::Octahedral,
                        ) => {
                            let e = octahedral_encode([texel[0], texel[1], texel[2]]);
                            q[0] = to_unorm16(e[0], -1.0, 1.0);
                            q[1] = to_unorm16(e[1], -1.0, 1.0);
                            let d = octahedral_decode([
                                from_unorm16(q[0], -1.0, 1.0),
                                from_unorm16(q[1], -1.0, 1.0),
                            ]);
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
                    self.samples.extend_from_slice(&q[..floats]);
                    self.max_error = self.max_error.max(texel_error(
                        self.spec.stream,
                        texel,
                        &decoded[..floats],
                    ));
                }
                writer.push_rows(&self.samples)
            }
        }
    }

    /// Completes the file; returns the largest encoding error.
    pub fn finish(self) -> Result<f64> {
        match self.sink {
            Sink::Exr(w) => w.finish()?,
            Sink::Png(w) => w.finish()?,
        }
        Ok(self.max_error)
    }
}

/// Error of one decoded texel: distance for positions, angle in degrees for
/// directions (padding texels, all zero, count as exact).
fn texel_error(stream: VatStream, original: &[f32], decoded: &[f32]) -> f64 {
    match stream {
        VatStream::Positions => original
            .iter()
            .zip(decoded)
            .map(|(a, b)| (f64::from(*a) - f64::from(*b)).powi(2))
            .sum::<f64>()
            .sqrt(),
        VatStream::Normals | VatStream::Tangents => {
            if original[..3].iter().all(|v| *v == 0.0) {
                0.0
            } else {
                angle_degrees(
                    [original[0], original[1], original[2]],
                    [decoded[0], decoded[1], decoded[2]],
                )
            }
        }
    }
}

/// Size and CRC-32 of a written file (read back in chunks).
pub fn file_digest(path: &Path) -> Result<(u64, u32)> {
    let mut file = File::open(path)?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        len += n as u64;
    }
    Ok((len, hasher.finalize()))
}
