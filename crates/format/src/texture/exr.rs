//! EXR textures: scanline blocks, increasing line order, one layer with
//! channels R, G, B (and A), as 32-bit or 16-bit floats. This is the most
//! widely supported EXR flavour: the OpenEXR reference library, every engine
//! importer and every image tool read it. No timestamps or other varying
//! attributes are written, so the same pixels always give the same bytes.
//!
//! Small textures (bone matrices) are written whole with ZIP compression
//! ([`write()`]); large ones (vertex animation) are streamed row batch by row
//! batch through a [`StreamWriter`] so they never sit whole in memory.

use std::io::{BufRead, Read, Seek, Write};

use exr::prelude::{
    Blocks, Compression, Encoding, Image, Layer, LayerAttributes, LineOrder, ReadChannels as _,
    ReadLayers as _, SpecificChannels, Vec2, WritableImage as _, f16,
};

use super::feed::Feed;
use super::{Precision, RgbaImage};
use crate::error::{FormatError, Result};

/// The encoding rigbake uses for every EXR it writes.
pub const ENCODING: Encoding = Encoding {
    compression: Compression::ZIP16,
    blocks: Blocks::ScanLines,
    line_order: LineOrder::Increasing,
};

/// Writes `image` as an RGBA EXR at `precision` to `writer`.
///
/// Compression runs on the calling thread (safe inside a rayon pool).
pub fn write<W: Write + Seek>(
    writer: W,
    image: &RgbaImage<'_>,
    precision: Precision,
) -> Result<()> {
    let (w, h) = (image.width, image.height);
    if w == 0 || h == 0 {
        return Err(FormatError::Invalid(format!(
            "cannot write an empty {w} x {h} texture"
        )));
    }
    let data = image.data;
    let at = move |p: Vec2<usize>| -> [f32; 4] {
        let i = (p.y() * w + p.x()) * 4;
        [data[i], data[i + 1], data[i + 2], data[i + 3]]
    };
    match precision {
        Precision::F32 => {
            let channels = SpecificChannels::rgba(move |p: Vec2<usize>| {
                let [r, g, b, a] = at(p);
                (r, g, b, a)
            });
            let layer = Layer::new((w, h), LayerAttributes::default(), ENCODING, channels);
            Image::from_layer(layer)
                .write()
                .non_parallel()
                .to_buffered(writer)?;
        }
        Precision::F16 => {
            let channels = SpecificChannels::rgba(move |p: Vec2<usize>| {
                let [r, g, b, a] = at(p).map(f16::from_f32);
                (r, g, b, a)
            });
            let layer = Layer::new((w, h), LayerAttributes::default(), ENCODING, channels);
            Image::from_layer(layer)
                .write()
                .non_parallel()
                .to_buffered(writer)?;
        }
        Precision::Unorm16 => return Err(not_float()),
    }
    Ok(())
}

/// EXR holds float samples: 16-bit normalised textures are 16-bit PNG.
fn not_float() -> FormatError {
    FormatError::Invalid(
        "EXR stores float samples, not 16-bit normalised ones (unorm16 textures are 16-bit PNG)"
            .to_owned(),
    )
}

/// A decoded RGBA texture: `width * height * 4` floats, row-major, row 0 first.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedRgba {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// RGBA floats.
    pub data: Vec<f32>,
}

/// Reads the first RGBA layer of an EXR (f16 samples are widened to f32).
/// The header is checked first: the decoded image must fit
/// [`super::MAX_DECODED_BYTES`].
pub fn read<R: Read + Seek + BufRead>(reader: R) -> Result<DecodedRgba> {
    read_checked(reader, None)
}

/// Reads the first RGBA layer of an EXR whose header must say `width` x
/// `height` (as the metadata does); the header is compared before any pixel
/// is decoded or allocated.
pub fn read_expecting<R: Read + Seek + BufRead>(
    reader: R,
    width: usize,
    height: usize,
) -> Result<DecodedRgba> {
    read_checked(reader, Some((width, height)))
}

/// Checks the header's layer sizes against `expected` and the decode budget,
/// then decodes.
fn read_checked<R: Read + Seek + BufRead>(
    mut reader: R,
    expected: Option<(usize, usize)>,
) -> Result<DecodedRgba> {
    let start = reader.stream_position()?;
    let meta = exr::meta::MetaData::read_from_buffered(&mut reader, false)?;
    reader.seek(std::io::SeekFrom::Start(start))?;
    for header in &meta.headers {
        let (w, h) = (header.layer_size.width(), header.layer_size.height());
        if let Some((ew, eh)) = expected
            && (w, h) != (ew, eh)
        {
            return Err(FormatError::Invalid(format!(
                "EXR header says {w} x {h} but the metadata says {ew} x {eh}"
            )));
        }
        super::check_decoded_size(w, h, 4 * 4)?;
    }
    let image = exr::prelude::read()
        .no_deep_data()
        .largest_resolution_level()
        .rgba_channels(
            |size, _| DecodedRgba {
                width: size.width(),
                height: size.height(),
                data: vec![0.0; size.width() * size.height() * 4],
            },
            |out: &mut DecodedRgba, p: Vec2<usize>, (r, g, b, a): (f32, f32, f32, f32)| {
                let i = (p.y() * out.width + p.x()) * 4;
                out.data[i..i + 4].copy_from_slice(&[r, g, b, a]);
            },
        )
        .first_valid_layer()
        .all_attributes()
        .non_parallel()
        .from_buffered(reader)?;
    Ok(image.layer_data.channel_data.pixels)
}

/// What a reader decodes from `value` stored as a 32-bit float under EXR's
/// PXR24 compression: the significand rounded to 15 bits (OpenEXR's
/// `floatToFloat24`, ties away from zero; truncated where rounding would
/// overflow to infinity), the low 8 bits zero.
pub fn pxr24_round(value: f32) -> f32 {
    let bits = value.to_bits();
    let (sign, exponent, mantissa) = (bits & 0x8000_0000, bits & 0x7f80_0000, bits & 0x007f_ffff);
    let f24 = if exponent == 0x7f80_0000 {
        // Infinity, or NaN (keeping at least one significand bit).
        let m = mantissa >> 8;
        (exponent >> 8) | m | u32::from(mantissa != 0 && m == 0)
    } else {
        let rounded = ((exponent | mantissa) + (mantissa & 0x80)) >> 8;
        if rounded >= 0x7f_8000 {
            (exponent | mantissa) >> 8
        } else {
            rounded
        }
    };
    f32::from_bits(((sign >> 8) | f24) << 8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn f32_round_trips_exactly_and_f16_within_half_precision() {
        let (w, h) = (5, 3);
        let data: Vec<f32> = (0..w * h * 4)
            .map(|i| (i as f32 * 0.37).sin() * 10.0)
            .collect();
        let image = RgbaImage {
            width: w,
            height: h,
            data: &data,
        };
        let mut buf = Cursor::new(Vec::new());
        write(&mut buf, &image, Precision::F32).unwrap();
        buf.set_position(0);
        let back = read(buf).unwrap();
        assert_eq!((back.width, back.height), (w, h));
        assert_eq!(back.data, data);

        let mut buf = Cursor::new(Vec::new());
        write(&mut buf, &image, Precision::F16).unwrap();
        buf.set_position(0);
        let back = read(buf).unwrap();
        for (a, b) in back.data.iter().zip(&data) {
            // f16 has an 11-bit significand: relative error below 2^-11.
            assert!(
                (a - b).abs() <= b.abs() * 2f32.powi(-11) + 1e-7,
                "{a} vs {b}"
            );
        }
    }

    #[test]
    fn a_header_that_disagrees_with_the_metadata_is_refused_before_decoding() {
        let data = vec![0.5f32; 5 * 3 * 4];
        let image = RgbaImage {
            width: 5,
            height: 3,
            data: &data,
        };
        let mut buf = Cursor::new(Vec::new());
        write(&mut buf, &image, Precision::F32).unwrap();
        let bytes = buf.into_inner();
        assert!(read_expecting(Cursor::new(&bytes), 5, 3).is_ok());
        let e = read_expecting(Cursor::new(&bytes), 65535, 65535).unwrap_err();
        assert!(e.to_string().contains("header says 5 x 3"), "{e}");
    }

    #[test]
    fn same_pixels_give_same_bytes() {
        let data = vec![1.5f32; 8 * 8 * 4];
        let image = RgbaImage {
            width: 8,
            height: 8,
            data: &data,
        };
        let mut a = Cursor::new(Vec::new());
        let mut b = Cursor::new(Vec::new());
        write(&mut a, &image, Precision::F32).unwrap();
        write(&mut b, &image, Precision::F32).unwrap();
        assert_eq!(a.into_inner(), b.into_inner());
    }
}

pub use rigbake_types::TextureCompression;

/// The `exr` crate's compression for `compression` (refused: `Deflate`,
/// which is PNG's).
fn exr_compression(compression: TextureCompression) -> Result<Compression> {
    Ok(match compression {
        TextureCompression::None => Compression::Uncompressed,
        TextureCompression::Zip => Compression::ZIP16,
        TextureCompression::Piz => Compression::PIZ,
        TextureCompression::Pxr24 => Compression::PXR24,
        TextureCompression::Deflate => {
            return Err(FormatError::Invalid(
                "deflate is PNG's compression, not an EXR one".to_owned(),
            ));
        }
    })
}

/// Compressed blocks encoded together (in parallel), at most.
const BLOCKS_PER_ROUND: usize = 64;

/// Shape and sample format of a streamed EXR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamSpec {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Channels per pixel: 3 (R, G, B) or 4 (R, G, B, A).
    pub channels: usize,
    /// Sample precision.
    pub precision: Precision,
    /// Compression.
    pub compression: TextureCompression,
}

/// Row samples handed to the writer thread: planar rows (per row, one plane
/// of `width` samples per channel, in R, G, B, A order), already in the
/// file's sample type.
#[derive(Debug, Clone, PartialEq)]
pub enum Rows {
    /// 32-bit float samples.
    F32(Vec<f32>),
    /// 16-bit half-float samples.
    F16(Vec<f16>),
}

impl Rows {
    fn len(&self) -> usize {
        match self {
            Self::F32(v) => v.len(),
            Self::F16(v) => v.len(),
        }
    }
}

/// Writes one EXR from planar row batches pushed in order, on a writer
/// thread, so several textures can be produced in lockstep while each stays
/// streamed. Memory held: at most two pending batches plus one block, and up
/// to four consumed batches handed back for reuse ([`Self::take_spare`]).
#[derive(Debug)]
pub struct StreamWriter {
    spec: StreamSpec,
    feed: Feed<Rows>,
    rows_pushed: usize,
}

impl StreamWriter {
    /// Starts writing an EXR of `spec` to `out`.
    pub fn new<W: Write + Seek + Send + 'static>(out: W, spec: StreamSpec) -> Result<Self> {
        if spec.width == 0 || spec.height == 0 || !(3..=4).contains(&spec.channels) {
            return Err(FormatError::Invalid(format!(
                "cannot stream a {} x {} texture with {} channels",
                spec.width, spec.height, spec.channels
            )));
        }
        exr_compression(spec.compression)?;
        let feed = Feed::spawn("rigbake-exr-writer", "EXR writer", move |rows, spares| {
            write_stream(out, spec, rows, spares)
        })?;
        Ok(Self {
            spec,
            feed,
            rows_pushed: 0,
        })
    }

    /// Appends whole planar rows (`channels` planes of `width` samples each,
    /// R first), in order, in the sample type of the spec's precision.
    pub fn push_rows(&mut self, rows: Rows) -> Result<()> {
        let row_len = self.spec.width * self.spec.channels;
        let typed = matches!(
            (&rows, self.spec.precision),
            (Rows::F32(_), Precision::F32) | (Rows::F16(_), Precision::F16)
        );
        if !typed
            || !rows.len().is_multiple_of(row_len)
            || self.rows_pushed + rows.len() / row_len > self.spec.height
        {
            return Err(FormatError::Invalid(format!(
                "{} samples are not whole rows of {row_len} of the texture's type, or run past row {}",
                rows.len(),
                self.spec.height
            )));
        }
        self.rows_pushed += rows.len() / row_len;
        self.feed.send(rows)
    }

    /// A batch the writer thread has consumed, handed back so its memory can
    /// be refilled instead of freed and allocated again (contents are stale).
    pub fn take_spare(&mut self) -> Option<Rows> {
        self.feed.take_spare()
    }

    /// Waits for the file to be complete; returns the consumed batches not
    /// yet taken back, for reuse. Fails if fewer rows than the height were
    /// pushed.
    pub fn finish(self) -> Result<Vec<Rows>> {
        self.feed.finish()
    }
}

fn write_stream<W: Write + Seek>(
    out: W,
    spec: StreamSpec,
    receiver: &std::sync::mpsc::Receiver<Rows>,
    spares: &std::sync::mpsc::SyncSender<Rows>,
) -> Result<()> {
    use exr::block::{UncompressedBlock, writer::ChunksWriter as _};
    use exr::meta::attribute::{ChannelDescription, SampleType, Text};
    use exr::meta::header::Header;
    use rayon::prelude::*;

    let (sample_type, sample_bytes) = match spec.precision {
        Precision::F32 => (SampleType::F32, 4),
        Precision::F16 => (SampleType::F16, 2),
        Precision::Unorm16 => return Err(not_float()),
    };
    // EXR lists channels sorted by name (A, B, G, R) and stores each line
    // channel by channel: `planes` maps each header channel to the plane
    // holding it in our R, G, B, A rows.
    let names: &[(&str, usize)] = if spec.channels == 4 {
        &[("A", 3), ("B", 2), ("G", 1), ("R", 0)]
    } else {
        &[("B", 2), ("G", 1), ("R", 0)]
    };
    let channels = names
        .iter()
        .map(|(n, _)| ChannelDescription::new(Text::from(*n), sample_type, true))
        .collect();
    let compression = exr_compression(spec.compression)?;
    let mut header = Header::new(Text::from("vat"), (spec.width, spec.height), channels)
        .with_encoding(
            compression,
            exr::meta::BlockDescription::ScanLines,
            LineOrder::Increasing,
        );
    header.own_attributes.layer_name = None;
    let row = spec.width * sample_bytes * spec.channels;
    let row_samples = spec.width * spec.channels;
    // Received batches not yet fully written, and the next line of the first.
    let mut queue = std::collections::VecDeque::<Rows>::new();
    let (mut next_line, mut available) = (0usize, 0usize);
    // Uncompressed blocks go out one at a time (encoding them is a copy);
    // compressed ones in rounds encoded in parallel, written in order, so
    // the bytes never depend on the thread count.
    let round = if compression == Compression::Uncompressed {
        1
    } else {
        BLOCKS_PER_ROUND
    };
    exr::block::write(out, smallvec_of(header), true, |meta, writer| {
        let blocks: Vec<_> =
            exr::block::enumerate_ordered_header_block_indices(&meta.headers).collect();
        let mut blocks = blocks.into_iter().peekable();
        let mut ready = Vec::with_capacity(round);
        while blocks.peek().is_some() {
            // Wait for the next block's lines, then take every block whose
            // lines are all here (up to a round).
            ready.clear();
            while let Some((index_in_header, block)) = blocks.peek().copied() {
                let lines = block.pixel_size.y();
                while ready.is_empty() && available < lines {
                    let batch = receiver.recv().map_err(|_| {
                        exr::error::Error::Invalid(
                            "fewer rows than the texture height were written".into(),
                        )
                    })?;
                    available += batch.len() / row_samples;
                    if batch.len() == 0 {
                        let _ = spares.try_send(batch);
                    } else {
                        queue.push_back(batch);
                    }
                }
                if available < lines || ready.len() == round {
                    break;
                }
                blocks.next();
                // One copy: planar rows into the block's channel order.
                let mut data = Vec::with_capacity(lines * row);
                for _ in 0..lines {
                    let Some(front) = queue.front() else {
                        return Err(exr::error::Error::Invalid("row queue ran dry".into()));
                    };
                    let at = next_line * row_samples;
                    for &(_, p) in names {
                        let range = at + p * spec.width..at + (p + 1) * spec.width;
                        match front {
                            Rows::F32(v) => {
                                data.extend_from_slice(bytemuck::cast_slice(&v[range]));
                            }
                            Rows::F16(v) => {
                                data.extend_from_slice(bytemuck::cast_slice(&v[range]));
                            }
                        }
                    }
                    next_line += 1;
                    available -= 1;
                    if next_line * row_samples == front.len() {
                        next_line = 0;
                        // Handed back for reuse; when the spares are full or
                        // abandoned, simply freed.
                        if let Some(done) = queue.pop_front() {
                            let _ = spares.try_send(done);
                        }
                    }
                }
                ready.push((index_in_header, UncompressedBlock { index: block, data }));
            }
            let encode = |(i, b): (usize, UncompressedBlock)| -> exr::error::Result<_> {
                Ok((i, encode_block(b, spec.compression, &meta.headers)?))
            };
            let chunks: Vec<exr::error::Result<_>> = if ready.len() == 1 {
                ready.drain(..).map(encode).collect()
            } else {
                ready.par_drain(..).map(encode).collect()
            };
            for chunk in chunks {
                let (index_in_header, chunk) = chunk?;
                writer.write_chunk(index_in_header, chunk)?;
            }
        }
        Ok(())
    })?;
    Ok(())
}

/// One block as the file stores it. ZIP and PXR24 blocks are encoded here
/// (OpenEXR's byte transforms, then one zlib stream per block at level 1,
/// about 2.5 times less CPU than the `exr` crate's level 4);
/// other modes, and big-endian hosts, go through the `exr` crate.
fn encode_block(
    block: exr::block::UncompressedBlock,
    compression: TextureCompression,
    headers: &[exr::meta::header::Header],
) -> exr::error::Result<exr::block::chunk::Chunk> {
    use exr::block::chunk::{Chunk, CompressedBlock, CompressedScanLineBlock};
    let packed = match compression {
        _ if cfg!(target_endian = "big") => None,
        TextureCompression::Zip => Some(zip_transform(&block.data)),
        TextureCompression::Pxr24 => pxr24_transform(&block.data, &headers[0], block.index)?,
        _ => None,
    };
    let Some(packed) = packed else {
        return block.compress_to_chunk(headers);
    };
    let zlib = zlib_of(&packed)?;
    let y = i32::try_from(block.index.pixel_position.y())
        .map_err(|_| exr::error::Error::Invalid("line index".into()))?;
    // A block that does not shrink is stored as it is (readers tell by its
    // size, as OpenEXR's writer does).
    let pixels = if zlib.len() < block.data.len() {
        zlib
    } else {
        block.data
    };
    Ok(Chunk {
        layer_index: 0,
        compressed_block: CompressedBlock::ScanLine(CompressedScanLineBlock {
            y_coordinate: y,
            compressed_pixels_le: pixels,
        }),
    })
}

/// Deflate level of ZIP and PXR24 blocks: 1 (fastest). On BrainStem's
/// half floats it gives files 6% larger than the `exr` crate's level 4 at
/// about 2.5 times less CPU time (docs/performance.md).
const ZLIB_LEVEL: u32 = 1;

/// One zlib stream of `bytes` (`flate2`, pure-Rust miniz_oxide backend).
fn zlib_of(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write as _;
    let mut encoder = flate2::write::ZlibEncoder::new(
        Vec::with_capacity(bytes.len() / 2),
        flate2::Compression::new(ZLIB_LEVEL),
    );
    encoder.write_all(bytes)?;
    encoder.finish()
}

/// OpenEXR's ZIP pre-pass: bytes at even offsets, then bytes at odd
/// offsets, then each byte replaced by its difference to the previous one
/// plus 128 (mod 256).
fn zip_transform(raw: &[u8]) -> Vec<u8> {
    let half = raw.len().div_ceil(2);
    let mut out = vec![0u8; raw.len()];
    let (even, odd) = out.split_at_mut(half);
    for (i, pair) in raw.chunks(2).enumerate() {
        even[i] = pair[0];
        if let Some(&b) = pair.get(1) {
            odd[i] = b;
        }
    }
    let mut previous = out.first().copied().unwrap_or(0);
    for b in out.iter_mut().skip(1) {
        let current = *b;
        *b = current.wrapping_sub(previous).wrapping_add(128);
        previous = current;
    }
    out
}

/// OpenEXR's PXR24 pre-pass for one block (little-endian samples, per
/// line, per channel in header order): 32-bit floats rounded to 24 bits
/// ([`pxr24_round`]), 16-bit samples as they are; each channel
/// line's samples replaced by their differences (wrapping) and split into
/// byte planes, most significant first. `None` for sample types it does not
/// handle here.
fn pxr24_transform(
    raw: &[u8],
    header: &exr::meta::header::Header,
    index: exr::block::BlockIndex,
) -> exr::error::Result<Option<Vec<u8>>> {
    use exr::meta::attribute::SampleType;
    let (width, lines) = (index.pixel_size.x(), index.pixel_size.y());
    let mut out = Vec::with_capacity(raw.len());
    let mut at = 0usize;
    for _ in 0..lines {
        for channel in &header.channels.list {
            match channel.sample_type {
                SampleType::F16 => {
                    let line = raw
                        .get(at..at + 2 * width)
                        .ok_or_else(|| exr::error::Error::Invalid("block size".into()))?;
                    at += 2 * width;
                    let start = out.len();
                    out.resize(start + 2 * width, 0);
                    let (hi, lo) = out[start..].split_at_mut(width);
                    let mut previous = 0u16;
                    for (x, s) in line.chunks_exact(2).enumerate() {
                        let v = u16::from_le_bytes([s[0], s[1]]);
                        let [h, l] = v.wrapping_sub(previous).to_be_bytes();
                        (hi[x], lo[x]) = (h, l);
                        previous = v;
                    }
                }
                SampleType::F32 => {
                    let line = raw
                        .get(at..at + 4 * width)
                        .ok_or_else(|| exr::error::Error::Invalid("block size".into()))?;
                    at += 4 * width;
                    let start = out.len();
                    out.resize(start + 3 * width, 0);
                    let (b0, rest) = out[start..].split_at_mut(width);
                    let (b1, b2) = rest.split_at_mut(width);
                    let mut previous = 0u32;
                    for (x, s) in line.chunks_exact(4).enumerate() {
                        let f = f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
                        let v = pxr24_round(f).to_bits() >> 8;
                        let [_, h, m, l] = v.wrapping_sub(previous).to_be_bytes();
                        (b0[x], b1[x], b2[x]) = (h, m, l);
                        previous = v;
                    }
                }
                SampleType::U32 => return Ok(None),
            }
        }
    }
    Ok(Some(out))
}

fn smallvec_of(header: exr::meta::header::Header) -> exr::meta::Headers {
    let mut headers = exr::meta::Headers::new();
    headers.push(header);
    headers
}

#[cfg(test)]
mod stream_tests {
    use super::*;
    use std::io::Cursor;
    use std::sync::{Arc, Mutex};

    /// A `Write + Seek` that hands its bytes back after the writer thread is done.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Cursor<Vec<u8>>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().write(b)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl Seek for Shared {
        fn seek(&mut self, p: std::io::SeekFrom) -> std::io::Result<u64> {
            self.0.lock().unwrap().seek(p)
        }
    }

    #[test]
    fn streamed_rows_read_back_exactly() {
        for (channels, compression) in [
            (3, TextureCompression::None),
            (4, TextureCompression::Zip),
            (3, TextureCompression::Piz),
            (4, TextureCompression::Piz),
        ] {
            let (w, h) = (7, 37);
            // Planar rows: row y, plane c, texel x.
            let data: Vec<f32> = (0..h)
                .flat_map(|y| {
                    (0..channels).flat_map(move |c| {
                        (0..w).map(move |x| ((y * 100 + c * 10 + x) as f32) * 0.25)
                    })
                })
                .collect();
            let out = Shared::default();
            let spec = StreamSpec {
                width: w,
                height: h,
                channels,
                precision: Precision::F32,
                compression,
            };
            let mut writer = StreamWriter::new(out.clone(), spec).unwrap();
            // Uneven batches: 5 rows, then the rest.
            writer
                .push_rows(Rows::F32(data[..5 * w * channels].to_vec()))
                .unwrap();
            writer.push_rows(Rows::F32(Vec::new())).unwrap();
            writer
                .push_rows(Rows::F32(data[5 * w * channels..].to_vec()))
                .unwrap();
            let spares = writer.finish().unwrap();
            assert!(!spares.is_empty(), "consumed batches come back for reuse");
            let bytes = out.0.lock().unwrap().get_ref().clone();
            let back = read(Cursor::new(bytes)).unwrap();
            assert_eq!((back.width, back.height), (w, h));
            for (i, px) in back.data.chunks_exact(4).enumerate() {
                let (y, x) = (i / w, i % w);
                for (c, value) in px.iter().enumerate().take(channels) {
                    assert_eq!(
                        *value,
                        ((y * 100 + c * 10 + x) as f32) * 0.25,
                        "pixel {i} channel {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn too_few_or_too_many_rows_are_errors() {
        let spec = StreamSpec {
            width: 2,
            height: 3,
            channels: 3,
            precision: Precision::F16,
            compression: TextureCompression::None,
        };
        let mut writer = StreamWriter::new(Shared::default(), spec).unwrap();
        let halves = |n| Rows::F16(vec![f16::ZERO; n]);
        writer.push_rows(halves(6)).unwrap();
        assert!(writer.finish().is_err(), "2 rows missing");
        let mut writer = StreamWriter::new(Shared::default(), spec).unwrap();
        assert!(writer.push_rows(halves(24)).is_err(), "4 rows > 3");
        assert!(writer.push_rows(halves(5)).is_err(), "not whole rows");
        assert!(
            writer.push_rows(Rows::F32(vec![0.0; 6])).is_err(),
            "f32 rows for an f16 texture"
        );
    }

    /// Writes `data` (planar rows of `w` x `h`, 3 channels) as one streamed
    /// EXR in batches of `batch` rows; returns the file's bytes.
    fn streamed(
        data: &[f32],
        (w, h): (usize, usize),
        batch: usize,
        compression: TextureCompression,
    ) -> Vec<u8> {
        let out = Shared::default();
        let spec = StreamSpec {
            width: w,
            height: h,
            channels: 3,
            precision: Precision::F32,
            compression,
        };
        let mut writer = StreamWriter::new(out.clone(), spec).unwrap();
        for rows in data.chunks(batch * w * 3) {
            writer.push_rows(Rows::F32(rows.to_vec())).unwrap();
        }
        writer.finish().unwrap();
        out.0.lock().unwrap().get_ref().clone()
    }

    #[test]
    fn pxr24_keeps_24_bits_of_f32_as_documented() {
        let (w, h) = (19, 70);
        let data: Vec<f32> = (0..w * h * 3)
            .map(|i| ((i as f32) * 0.731).sin() * 37.0 + (i % 7) as f32 * 1e-3)
            .collect();
        let bytes = streamed(&data, (w, h), 23, TextureCompression::Pxr24);
        let back = read(Cursor::new(bytes)).unwrap();
        for (i, px) in back.data.chunks_exact(4).enumerate() {
            let (y, x) = (i / w, i % w);
            for c in 0..3 {
                let original = data[(y * 3 + c) * w + x];
                let decoded = px[c];
                // Our model of the loss matches the decoder bit for bit, and
                // 15 kept significand bits mean a relative error <= 2^-16.
                assert_eq!(
                    decoded.to_bits(),
                    pxr24_round(original).to_bits(),
                    "{original}"
                );
                assert!((decoded - original).abs() <= original.abs() * 2f32.powi(-16));
            }
        }
    }

    #[test]
    fn compressed_bytes_do_not_depend_on_batches() {
        let (w, h) = (33, 200);
        let data: Vec<f32> = (0..w * h * 3).map(|i| (i as f32 * 0.01).cos()).collect();
        for compression in [TextureCompression::Zip, TextureCompression::Piz] {
            // (Thread counts: the CLI's determinism tests run the binary
            // with RAYON_NUM_THREADS=1 and 2.)
            let a = streamed(&data, (w, h), 7, compression);
            let b = streamed(&data, (w, h), 64, compression);
            assert_eq!(a, b, "{compression:?}");
            let plain = streamed(&data, (w, h), 64, TextureCompression::None);
            assert!(a.len() < plain.len(), "{compression:?} compresses");
        }
    }

    #[test]
    fn deflate_is_not_an_exr_compression() {
        let spec = StreamSpec {
            width: 2,
            height: 2,
            channels: 3,
            precision: Precision::F32,
            compression: TextureCompression::Deflate,
        };
        assert!(StreamWriter::new(Shared::default(), spec).is_err());
    }
}
