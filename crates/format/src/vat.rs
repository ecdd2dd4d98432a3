//! Writing vertex animation textures: one file per stream (positions,
//! normals, tangents), fed row batch by row batch, encoded as EXR (32 or 16
//! bit floats) or 16-bit PNG (normalised to bounds, or octahedral for
//! directions), or as 8 or 10-bit normalised samples in KTX2 or DDS, with
//! the largest error each encoding introduced measured on the way (model
//! units for positions, degrees for directions).

use std::io::BufWriter;
use std::path::Path;

use half::slice::HalfFloatSliceExt;
use rayon::prelude::*;

use crate::digest::{Digest, DigestFile};
use crate::error::{FormatError, Result};
use crate::meta::{DirectionEncoding, VatEncoding, VatStream};
use crate::texture::Precision;
use crate::texture::exr::{Rows, StreamSpec, StreamWriter, TextureCompression, pxr24_round};
use crate::texture::gpu::{
    GpuStream, TextureContainer, interleave_f16, interleave_f32, interleave_narrow, interleave_u16,
};
use crate::texture::gpu_spec::{GpuSpec, SampleType};
use crate::texture::png::{Png16Stream, PngCompression};
use crate::texture::quantize::{RowQuantizer, interleave_be, quantize_planar_row};

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
    /// EXR compression (ignored for PNG, which is always deflate).
    pub compression: TextureCompression,
    /// How a PNG file deflates its rows (ignored for other files).
    pub png_compression: PngCompression,
    /// Per-channel `[min, max]` for bounds-normalised PNG channels (required
    /// for PNG positions and for PNG directions with `Bounds`).
    pub bounds: Option<[[f32; 4]; 2]>,
    /// The file's container: EXR/PNG by `encoding`, or KTX2/DDS holding the
    /// same samples (float, half, or UNORM for `Png16`, `Unorm8` and
    /// `Unorm10`, which only KTX2 and DDS hold) as RGBA.
    pub container: TextureContainer,
    /// Pages written into this one file as array layers, one after another
    /// (KTX2 and DDS only; 1 otherwise).
    pub layers: usize,
    /// A PNG16 positions file whose alpha holds the packed normals
    /// ([`DirectionEncoding::Packed`]): four channels, the fourth bounded
    /// to `[0, 1]` and fed as [`pack_normal_rows`] makes it.
    pub packed_normals: bool,
}

impl VatFileSpec {
    /// Whether its writer keeps what a reader decodes of each batch, for
    /// [`VatFileWriter::last_rows`]: every encoding but `exr32` (whose
    /// lossy PXR24 compression its caller measures itself).
    pub fn writer_decodes(&self) -> bool {
        self.encoding != VatEncoding::Exr32
    }

    /// Channels stored in the file.
    pub fn channels(&self) -> usize {
        if self.packed_normals && self.stream == VatStream::Positions {
            4
        } else {
            stream_floats(self.stream)
        }
    }

    /// Whether this file needs bounds before writing.
    pub fn needs_bounds(&self) -> bool {
        self.encoding.is_normalised()
            && (self.stream == VatStream::Positions
                || self.direction_encoding == DirectionEncoding::Bounds)
    }

    /// The compression the file actually gets: the spec's for EXR,
    /// `Deflate` for PNG, `None` for KTX2 and DDS (whose supercompression
    /// is the container's).
    pub fn effective_compression(&self) -> TextureCompression {
        effective_compression(self.container, self.encoding, self.compression)
    }

    /// The GPU texture this spec describes (KTX2 and DDS).
    pub fn gpu_spec(&self) -> GpuSpec {
        GpuSpec {
            width: self.width,
            height: self.height,
            layers: self.layers,
            sample: sample_type(self.encoding),
        }
    }

    /// What a reader decodes from this file for one planar row of `planes`
    /// planes of `width` values (the stream's own planes: 3 for the
    /// positions of a packed file, whose fourth is the normals' code),
    /// written to `decoded`: the values rounded to half floats, or through
    /// the 16-bit quantiser (`q` is scratch), or through PXR24, as the
    /// writer stores them; exact floats as they are.
    pub fn decode_row(
        &self,
        row: &[f32],
        width: usize,
        planes: usize,
        q: &mut Vec<u16>,
        decoded: &mut [f32],
    ) {
        let n = width * planes;
        let (row, decoded) = (&row[..n], &mut decoded[..n]);
        match self.encoding {
            VatEncoding::Exr16 => {
                // Whole-slice conversions (F16C where the CPU has it), as
                // the writer converts.
                use half::slice::HalfBitsSliceExt;
                q.resize(n, 0);
                let halves: &mut [half::f16] = q.reinterpret_cast_mut();
                halves.convert_from_f32_slice(row);
                halves.convert_to_f32_slice(decoded);
            }
            VatEncoding::Png16 | VatEncoding::Unorm8 | VatEncoding::Unorm10 => {
                q.resize(n, 0);
                quantize_planar_row(&self.quantizer(), row, width, planes, q, decoded);
            }
            VatEncoding::Exr32 if self.effective_compression().lossy_for_f32() => {
                for (d, v) in decoded.iter_mut().zip(row) {
                    *d = pxr24_round(*v);
                }
            }
            VatEncoding::Exr32 => decoded.copy_from_slice(row),
        }
    }

    /// How normalised samples are made of this file's values.
    fn quantizer(&self) -> RowQuantizer {
        let codes = sample_type(self.encoding)
            .unorm_max()
            .unwrap_or([u16::MAX; 4]);
        match self.effective_direction_encoding() {
            DirectionEncoding::Octahedral => RowQuantizer::Octahedral { codes },
            _ => RowQuantizer::Bounds {
                bounds: self.bounds.unwrap_or(EMPTY_BOUNDS),
                codes,
            },
        }
    }

    /// The direction encoding actually used (always `Float` for EXR).
    pub fn effective_direction_encoding(&self) -> DirectionEncoding {
        effective_direction_encoding(self.encoding, self.stream, self.direction_encoding)
    }
}

/// The direction encoding a VAT file of `encoding` holding `stream` gets
/// when `asked` was asked for: `Float` for EXR and positions; packing is
/// for the normals of `png16` (16-bit positions leave room for a normal
/// in alpha; 8 and 10-bit ones do not), so tangents, and the normals of
/// `unorm8` and `unorm10`, stay octahedral.
pub fn effective_direction_encoding(
    encoding: VatEncoding,
    stream: VatStream,
    asked: DirectionEncoding,
) -> DirectionEncoding {
    let packs = encoding == VatEncoding::Png16 && stream == VatStream::Normals;
    match (encoding.is_normalised(), stream, asked) {
        (true, VatStream::Normals | VatStream::Tangents, DirectionEncoding::Packed) if !packs => {
            DirectionEncoding::Octahedral
        }
        (true, VatStream::Normals | VatStream::Tangents, d) => d,
        _ => DirectionEncoding::Float,
    }
}

/// The compression a VAT file of `encoding` in `container` gets when
/// `requested` was asked for: the request for EXR, `Deflate` for PNG,
/// `None` for KTX2 and DDS (whose supercompression is the container's).
pub fn effective_compression(
    container: TextureContainer,
    encoding: VatEncoding,
    requested: TextureCompression,
) -> TextureCompression {
    match (container, encoding) {
        (TextureContainer::Exr, VatEncoding::Png16) => TextureCompression::Deflate,
        (TextureContainer::Exr, _) => requested,
        _ => TextureCompression::None,
    }
}

/// The GPU sample type of a VAT encoding: floats, halves, or the UNORM
/// samples PNG would store.
pub fn sample_type(encoding: VatEncoding) -> SampleType {
    match encoding {
        VatEncoding::Exr32 => SampleType::F32,
        VatEncoding::Exr16 => SampleType::F16,
        VatEncoding::Png16 => SampleType::Unorm16,
        VatEncoding::Unorm8 => SampleType::Unorm8,
        VatEncoding::Unorm10 => SampleType::Unorm10,
    }
}

enum Sink {
    Exr(StreamWriter),
    // No BufWriter: the PNG encoder buffers whole chunks itself, and a
    // buffer dropped with the encoder would swallow its last write's error.
    Png(Png16Stream),
    /// KTX2 or DDS: RGBA little-endian texels, layer after layer.
    Gpu(GpuStream),
}

/// Streams one VAT file, measuring the encoding error.
pub struct VatFileWriter {
    spec: VatFileSpec,
    sink: Sink,
    max_error: f64,
    digest: Digest,
    /// Consumed f32 batches ready for reuse.
    spare: Vec<Vec<f32>>,
    /// Planar 16-bit samples and decoded values of a PNG batch, kept
    /// between batches (allocating them per batch or per row cost a fifth
    /// of the CPU time in page faults).
    scratch: (Vec<u16>, Vec<f32>),
    /// Half floats of a KTX2/DDS batch, kept between batches likewise.
    halves: Vec<half::f16>,
    /// How many of `scratch.1`'s values decode the last batch (0: the last
    /// batch was stored exactly, as f32): [`VatFileWriter::last_rows`].
    decoded: usize,
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

/// Bounds accumulator start value (min = +inf, max = -inf).
pub const EMPTY_BOUNDS: [[f32; 4]; 2] = [[f32::INFINITY; 4], [f32::NEG_INFINITY; 4]];

impl VatFileWriter {
    /// Creates the file at `path` and starts writing.
    pub fn create(path: &Path, spec: VatFileSpec) -> Result<Self> {
        if spec.needs_bounds() && spec.bounds.is_none() {
            return Err(FormatError::Invalid("PNG positions need bounds".to_owned()));
        }
        if spec.encoding.needs_gpu_container() && spec.container == TextureContainer::Exr {
            return Err(FormatError::Invalid(format!(
                "{:?} samples need a KTX2 or DDS container",
                spec.encoding
            )));
        }
        if spec.layers != 1 && spec.container == TextureContainer::Exr {
            return Err(FormatError::Invalid(
                "EXR and PNG files hold one page; layers need KTX2 or DDS".to_owned(),
            ));
        }
        let file = DigestFile::create(path)?;
        let digest = file.digest();
        let sink = match spec.encoding {
            _ if spec.container != TextureContainer::Exr => {
                Sink::Gpu(GpuStream::new(file, spec.container, spec.gpu_spec())?)
            }
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
            VatEncoding::Png16 | VatEncoding::Unorm8 | VatEncoding::Unorm10 => {
                Sink::Png(Png16Stream::new(
                    file,
                    spec.width,
                    spec.height,
                    spec.channels(),
                    spec.png_compression,
                )?)
            }
        };
        Ok(Self {
            spec,
            sink,
            max_error: 0.0,
            digest,
            spare: Vec::new(),
            scratch: (Vec::new(), Vec::new()),
            halves: Vec::new(),
            decoded: 0,
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
        let encoding = self.spec.encoding;
        let quantizer = self.spec.quantizer();
        // Set again below by the quantising sinks.
        self.decoded = 0;
        match &mut self.sink {
            Sink::Gpu(writer) => {
                let texel_bytes = self.spec.gpu_spec().texel_bytes();
                let mut bytes = writer.take_spare().unwrap_or_default();
                bytes.resize(values.len() / floats * texel_bytes, 0);
                let out_row = width * texel_bytes;
                let (samples, decoded) = &mut self.scratch;
                let errors: Vec<WorstError> = match encoding {
                    VatEncoding::Exr32 => {
                        bytes
                            .par_chunks_mut(out_row)
                            .zip(values.par_chunks(row_len))
                            .for_each(|(out, row)| interleave_f32(row, width, floats, out));
                        Vec::new()
                    }
                    VatEncoding::Exr16 => {
                        let halves = &mut self.halves;
                        halves.resize(values.len(), half::f16::ZERO);
                        decoded.resize(values.len(), 0.0);
                        let errors: Vec<Result<WorstError>> = halves
                            .par_chunks_mut(row_len)
                            .zip(values.par_chunks(row_len))
                            .zip(bytes.par_chunks_mut(out_row))
                            .zip(decoded.par_chunks_mut(row_len))
                            .map(|(((h, row), out), decoded)| {
                                let e =
                                    WorstError::of_f16_row(stream, row, h, decoded, width, floats);
                                interleave_f16(h, width, floats, out);
                                e
                            })
                            .collect();
                        errors.into_iter().collect::<Result<_>>()?
                    }
                    VatEncoding::Png16 | VatEncoding::Unorm8 | VatEncoding::Unorm10 => {
                        let sample = sample_type(encoding);
                        samples.resize(values.len(), 0);
                        decoded.resize(values.len(), 0.0);
                        bytes
                            .par_chunks_mut(out_row)
                            .zip(values.par_chunks(row_len))
                            .zip(samples.par_chunks_mut(row_len))
                            .zip(decoded.par_chunks_mut(row_len))
                            .map(|(((out, row), q), decoded)| {
                                quantize_planar_row(&quantizer, row, width, floats, q, decoded);
                                if sample == SampleType::Unorm16 {
                                    interleave_u16(q, width, floats, out);
                                } else {
                                    interleave_narrow(q, width, floats, sample, out);
                                }
                                WorstError::of_planar_row(stream, row, decoded, width, floats)
                            })
                            .collect()
                    }
                };
                for e in errors {
                    self.max_error = self.max_error.max(e.value());
                }
                if self.spec.writer_decodes() {
                    self.decoded = values.len();
                }
                self.spare.push(values);
                writer.push(bytes)
            }
            Sink::Exr(writer) if encoding == VatEncoding::Exr16 => {
                let mut halves = match writer.take_spare() {
                    Some(Rows::F16(h)) => h,
                    _ => Vec::new(),
                };
                halves.resize(values.len(), half::f16::ZERO);
                let decoded = &mut self.scratch.1;
                decoded.resize(values.len(), 0.0);
                // Whole-row conversions (F16C where the CPU has it), then the
                // error of every texel against what a reader decodes.
                let errors: Vec<Result<WorstError>> = halves
                    .par_chunks_mut(row_len)
                    .zip(values.par_chunks(row_len))
                    .zip(decoded.par_chunks_mut(row_len))
                    .map(|((out, row), decoded)| {
                        WorstError::of_f16_row(stream, row, out, decoded, width, floats)
                    })
                    .collect();
                for e in errors {
                    self.max_error = self.max_error.max(e?.value());
                }
                self.decoded = values.len();
                self.spare.push(values);
                writer.push_rows(Rows::F16(halves))
            }
            Sink::Exr(writer) if self.spec.compression.lossy_for_f32() => {
                // PXR24 keeps 24 of a float's 32 bits: measure what a reader
                // decodes, as for half floats.
                let decoded = &mut self.scratch.1;
                decoded.resize(values.len(), 0.0);
                let errors: Vec<WorstError> = values
                    .par_chunks(row_len)
                    .zip(decoded.par_chunks_mut(row_len))
                    .map(|(row, decoded)| {
                        for (d, v) in decoded.iter_mut().zip(row) {
                            *d = pxr24_round(*v);
                        }
                        WorstError::of_planar_row(stream, row, decoded, width, floats)
                    })
                    .collect();
                for e in errors {
                    self.max_error = self.max_error.max(e.value());
                }
                writer.push_rows(Rows::F32(values))
            }
            Sink::Exr(writer) => writer.push_rows(Rows::F32(values)),
            Sink::Png(writer) => {
                // Quantised in parallel over rows, plane by plane, into
                // planar samples and decoded values (kept per writer and
                // reused), then interleaved into the bytes PNG stores
                // (big-endian samples); the writer thread compresses them
                // while the next batch bakes.
                let mut bytes = writer.take_spare().unwrap_or_default();
                bytes.resize(values.len() * 2, 0);
                let (samples, decoded) = &mut self.scratch;
                samples.resize(values.len(), 0);
                decoded.resize(values.len(), 0.0);
                let errors: Vec<WorstError> = bytes
                    .par_chunks_mut(row_len * 2)
                    .zip(values.par_chunks(row_len))
                    .zip(samples.par_chunks_mut(row_len))
                    .zip(decoded.par_chunks_mut(row_len))
                    .map(|(((out, row), q), decoded)| {
                        quantize_planar_row(&quantizer, row, width, floats, q, decoded);
                        interleave_be(q, width, floats, out);
                        WorstError::of_planar_row(stream, row, decoded, width, floats)
                    })
                    .collect();
                for e in errors {
                    self.max_error = self.max_error.max(e.value());
                }
                self.decoded = values.len();
                self.spare.push(values);
                writer.push_rows(bytes)
            }
        }
    }

    /// The spec it writes.
    pub fn spec(&self) -> &VatFileSpec {
        &self.spec
    }

    /// The last batch pushed and what a reader decodes of it, both as
    /// planar rows of the spec's channels, when the writer decoded it
    /// (normalised encodings and half floats): a caller measuring the
    /// encoding's error per texel reads these instead of encoding every
    /// texel again. Valid until the next push or
    /// [`VatFileWriter::take_spare`].
    pub fn last_rows(&self) -> Option<(&[f32], &[f32])> {
        let exact = self.spare.last()?;
        (self.decoded > 0 && exact.len() == self.decoded)
            .then(|| (exact.as_slice(), &self.scratch.1[..self.decoded]))
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
            Sink::Png(_) | Sink::Gpu(_) => None,
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
            Sink::Gpu(w) => w.finish()?,
        }
        let (bytes, crc32) = self.digest.finish()?;
        Ok(VatFileDone {
            max_error: self.max_error,
            bytes,
            crc32,
        })
    }
}

/// Packs normals into positions ([`DirectionEncoding::Packed`]): planar
/// rows of positions (x, y, z planes of `width`) and of normals (the same)
/// into `out` as planar rows of four planes, the fourth each normal's
/// 16-bit code ([`crate::texture::quantize::pack_normal`]) as `code /
/// 65535`, which a PNG16 channel bounded to `[0, 1]` stores as the code
/// itself. Returns the largest angle in degrees between a normal and what
/// its code decodes to (zero normals, padding, are not measured): each
/// row's worst by [`crate::texture::quantize::pack_normal_scored`], then
/// measured in f64. Each texel's score (the cosine, for unit normals)
/// goes to `cosines`, one plane of `width` per row.
pub fn pack_normal_rows(
    positions: &[f32],
    normals: &[f32],
    width: usize,
    out: &mut Vec<f32>,
    cosines: &mut Vec<f32>,
) -> f64 {
    use crate::texture::quantize::{cosine, degrees_of_cosine, pack_normals_planar, unpack_normal};
    let rows = positions.len() / (3 * width.max(1));
    out.clear();
    out.resize(rows * 4 * width, 0.0);
    cosines.clear();
    cosines.resize(rows * width, 0.0);
    let worst = out
        .par_chunks_mut(4 * width)
        .zip(cosines.par_chunks_mut(width.max(1)))
        .zip(positions.par_chunks(3 * width))
        .zip(normals.par_chunks(3 * width))
        .map_init(
            || vec![0u16; width],
            |codes, (((o, cos), p), n)| {
                o[..3 * width].copy_from_slice(p);
                let planes = [&n[..width], &n[width..2 * width], &n[2 * width..3 * width]];
                pack_normals_planar(planes, codes, cos);
                // The row's worst by the f32 score (the bake's normals are
                // unit), then measured in f64.
                let mut worst = (f32::INFINITY, 0usize);
                for (x, (&code, &score)) in codes.iter().zip(cos.iter()).enumerate() {
                    o[3 * width + x] = f32::from(code) / 65535.0;
                    if score < worst.0 {
                        worst = (score, x);
                    }
                }
                let x = worst.1;
                let normal = [n[x], n[width + x], n[2 * width + x]];
                cosine(normal, unpack_normal(codes[x])).unwrap_or(1.0)
            },
        )
        .reduce(|| 1.0, f64::min);
    degrees_of_cosine(worst)
}

/// Texel `x` of a planar row (`floats` planes of `width`).
fn texel_of(row: &[f32], width: usize, floats: usize, x: usize) -> [f32; 4] {
    let mut t = [0f32; 4];
    for (c, v) in t.iter_mut().enumerate().take(floats) {
        *v = row[c * width + x];
    }
    t
}

/// Independent lanes of the error maximum (eight f32: one AVX register).
const LANES: usize = 8;

/// The error key of one texel: for positions the squared distance between
/// the original `a` and the decoded `b`; for directions a number that rises
/// with the angle between them over 0 to 180 degrees: `sin^2` up to 90
/// degrees, `2 - sin^2` beyond, with `sin^2 = |a x (b - a)|^2 / (|a|^2
/// |b|^2)`, exact to a few units of f32 rounding even for the tiny angles
/// that encodings leave (a cosine near 1 would lose them). A zero vector
/// (padding) has key 0. f32 throughout, so that eight texels go at once.
#[inline(always)]
fn texel_key(directions: bool, a: [f32; 3], b: [f32; 3]) -> f32 {
    let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    if !directions {
        return d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    }
    let c = [
        a[1] * d[2] - a[2] * d[1],
        a[2] * d[0] - a[0] * d[2],
        a[0] * d[1] - a[1] * d[0],
    ];
    let cross2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    let la = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
    let lb = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
    let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let den = la * lb;
    let sin2 = if den > 0.0 {
        (cross2 / den).min(1.0)
    } else {
        0.0
    };
    if dot < 0.0 && den > 0.0 {
        2.0 - sin2
    } else {
        sin2
    }
}

/// Grows `lanes` by the keys of texels `0..n` of planes `a` (original)
/// and `b` (decoded), x, y, z each.
#[inline(always)]
fn fold_keys(directions: bool, a: [&[f32]; 3], b: [&[f32]; 3], n: usize, lanes: &mut [f32; LANES]) {
    let [a0, a1, a2] = a.map(|p| &p[..n]);
    let [b0, b1, b2] = b.map(|p| &p[..n]);
    let full = n / LANES * LANES;
    // Fixed-size views of eight texels, so the lanes compile to vectors.
    let group = |p: &[f32], x0: usize| -> [f32; LANES] {
        p[x0..x0 + LANES].try_into().unwrap_or([0.0; LANES])
    };
    for x0 in (0..full).step_by(LANES) {
        let (a0, a1, a2) = (group(a0, x0), group(a1, x0), group(a2, x0));
        let (b0, b1, b2) = (group(b0, x0), group(b1, x0), group(b2, x0));
        for i in 0..LANES {
            let k = texel_key(directions, [a0[i], a1[i], a2[i]], [b0[i], b1[i], b2[i]]);
            lanes[i] = if k > lanes[i] { k } else { lanes[i] };
        }
    }
    for x in full..n {
        let k = texel_key(directions, [a0[x], a1[x], a2[x]], [b0[x], b1[x], b2[x]]);
        lanes[0] = lanes[0].max(k);
    }
}

/// The largest error among texels of one stream, kept as the largest
/// [`texel_key`] (no square root or arc sine per texel) and turned into
/// model units or degrees by [`Self::value`]. Tangent `w` is exact and
/// not measured.
#[derive(Debug, Clone, Copy)]
struct WorstError {
    stream: VatStream,
    key: f32,
}

impl WorstError {
    fn new(stream: VatStream) -> Self {
        Self { stream, key: 0.0 }
    }

    fn directions(&self) -> bool {
        self.stream != VatStream::Positions
    }

    /// Takes in one texel (`original` and `decoded`, 4 components, those past
    /// the stream's own zero).
    /// (The texel-by-texel reference that [`Self::of_planar_row`] is tested
    /// against.)
    #[cfg(test)]
    fn add(&mut self, original: &[f32; 4], decoded: &[f32; 4]) {
        let xyz = |t: &[f32; 4]| [t[0], t[1], t[2]];
        let k = texel_key(self.directions(), xyz(original), xyz(decoded));
        self.key = self.key.max(k);
    }

    /// The worst error of one planar row (`floats` planes of `width`): the
    /// same result as [`Self::add`] texel by texel (a maximum does not
    /// depend on the order).
    fn of_planar_row<'a>(
        stream: VatStream,
        original: &'a [f32],
        decoded: &'a [f32],
        width: usize,
        floats: usize,
    ) -> Self {
        let mut worst = Self::new(stream);
        let plane = |v: &'a [f32], c: usize| -> &'a [f32] {
            v.get(c * width..(c + 1) * width).unwrap_or(&[])
        };
        let a = [0, 1, 2].map(|c| plane(original, c));
        let b = [0, 1, 2].map(|c| plane(decoded, c));
        if floats < 3 || a.iter().chain(&b).any(|p| p.len() != width) {
            return worst;
        }
        let mut lanes = [0.0f32; LANES];
        fold_keys(worst.directions(), a, b, width, &mut lanes);
        worst.key = lanes.into_iter().fold(0.0, f32::max);
        worst
    }

    /// Converts one planar row to half floats into `out`, decodes them into
    /// `decoded` (what a reader gets: the caller's clip-error record reads
    /// it, [`VatFileWriter::last_rows`]) and measures the error of that;
    /// fails on the first texel outside the half-float range.
    fn of_f16_row(
        stream: VatStream,
        row: &[f32],
        out: &mut [half::f16],
        decoded: &mut [f32],
        width: usize,
        floats: usize,
    ) -> Result<Self> {
        out.convert_from_f32_slice(row);
        // A half is infinite or NaN when its exponent bits are all set: the
        // largest magnitude (bits as i16, sign cleared) tells at once.
        let largest = out
            .iter()
            .fold(0i16, |m, h| m.max((h.to_bits() & 0x7fff) as i16));
        if largest >= 0x7c00 {
            let i = out.iter().position(|h| !h.is_finite()).unwrap_or(0);
            let texel = texel_of(row, width, floats, i % width);
            return Err(FormatError::Unrepresentable(format!(
                "value {texel:?} is outside the half-float range (+-65504); use exr32"
            )));
        }
        out.convert_to_f32_slice(decoded);
        Ok(Self::of_planar_row(stream, row, decoded, width, floats))
    }

    /// The largest error: model units for positions, degrees for directions.
    fn value(self) -> f64 {
        let key = f64::from(self.key);
        if !self.directions() {
            return key.sqrt();
        }
        if key <= 1.0 {
            key.sqrt().asin().to_degrees()
        } else {
            180.0 - (2.0 - key).max(0.0).sqrt().asin().to_degrees()
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
        // Keys are f32: within a few f32 roundings of the f64 angle.
        assert!((n.value() - expected).abs() < 1e-5 * expected);

        // Tiny angles (what half floats and 16-bit octahedra leave) keep
        // their precision, and angles past 90 degrees keep rising.
        for (deg, tolerance) in [(1e-3, 1e-3), (0.03, 1e-4), (95.0, 1e-5), (170.0, 1e-5)] {
            let mut n = WorstError::new(VatStream::Normals);
            n.add(&at(12.0), &at(12.0 + deg as f32));
            let exact = angle_degrees(xyz(at(12.0)), xyz(at(12.0 + deg as f32)));
            assert!(
                (n.value() - exact).abs() <= tolerance * exact,
                "{deg}: {} against {exact}",
                n.value()
            );
        }

        // Nothing measured: no error.
        assert_eq!(WorstError::new(VatStream::Normals).value(), 0.0);
        assert_eq!(WorstError::new(VatStream::Positions).value(), 0.0);
    }

    #[test]
    fn half_float_rows_convert_and_measure_as_the_planar_error_does() {
        // Wide, and not a multiple of the error's lanes.
        let width = 2 * 256 + 13;
        for (stream, floats) in [
            (VatStream::Positions, 3),
            (VatStream::Normals, 3),
            (VatStream::Tangents, 4),
        ] {
            let row: Vec<f32> = (0..floats * width)
                .map(|i| ((i as f32) * 0.731).sin() * 3.7 + if i % 17 == 0 { 0.0 } else { 0.01 })
                .collect();
            let mut out = vec![half::f16::ZERO; row.len()];
            let mut got = vec![0f32; row.len()];
            let worst =
                WorstError::of_f16_row(stream, &row, &mut out, &mut got, width, floats).unwrap();
            let halves: Vec<half::f16> = row.iter().map(|v| half::f16::from_f32(*v)).collect();
            assert_eq!(out, halves);
            let decoded: Vec<f32> = halves.iter().map(|h| h.to_f32()).collect();
            assert_eq!(got, decoded);
            let planar = WorstError::of_planar_row(stream, &row, &decoded, width, floats);
            assert_eq!(worst.key.to_bits(), planar.key.to_bits(), "{stream:?}");
            assert!(worst.value() > 0.0);
        }
        // A value past the half-float range, in the second plane, is named.
        let mut row = vec![1.0f32; 3 * width];
        row[width + 256 + 2] = 70_000.0;
        let (mut out, mut got) = (vec![half::f16::ZERO; row.len()], vec![0f32; row.len()]);
        let e = WorstError::of_f16_row(VatStream::Positions, &row, &mut out, &mut got, width, 3)
            .unwrap_err();
        assert!(e.to_string().contains("70000"), "{e}");
    }

    #[test]
    fn planar_error_equals_the_texel_by_texel_error() {
        let width = 97;
        for (stream, floats) in [
            (VatStream::Positions, 3),
            (VatStream::Normals, 3),
            (VatStream::Tangents, 4),
        ] {
            let original: Vec<f32> = (0..floats * width)
                .map(|i| {
                    if i % 13 == 0 {
                        0.0
                    } else {
                        ((i as f32) * 0.37).sin() * 4.0
                    }
                })
                .collect();
            let decoded: Vec<f32> = original
                .iter()
                .enumerate()
                .map(|(i, v)| v + ((i as f32) * 1.3).cos() * 1e-3)
                .collect();
            let mut texelwise = WorstError::new(stream);
            for x in 0..width {
                texelwise.add(
                    &texel_of(&original, width, floats, x),
                    &texel_of(&decoded, width, floats, x),
                );
            }
            let planar = WorstError::of_planar_row(stream, &original, &decoded, width, floats);
            assert_eq!(
                planar.value().to_bits(),
                texelwise.value().to_bits(),
                "{stream:?}"
            );
            assert!(planar.value() > 0.0);
        }
    }
}
