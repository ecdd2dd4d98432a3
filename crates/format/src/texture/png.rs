//! 16-bit PNG textures for values normalised to stored bounds (PNG cannot
//! hold floats). Rows are streamed as they are produced. Samples are written
//! big-endian, as PNG requires; the data is linear (no colour space): import
//! it with sRGB conversion off.

use std::io::{BufRead, Seek, Write};

use super::feed::Feed;
use crate::error::{FormatError, Result};

fn png_error(e: impl std::fmt::Display) -> FormatError {
    FormatError::Invalid(format!("PNG: {e}"))
}

/// Compressed bytes per IDAT chunk (the png crate's default is 4 KiB: four
/// unbuffered writes per 4 KiB made the kernel's share of a PNG bake three
/// times that of an EXR one).
const IDAT_BYTES: usize = 1 << 20;

/// Streams a 16-bit RGB or RGBA PNG, row by row.
pub struct Png16Writer<W: Write + 'static> {
    stream: png::StreamWriter<'static, W>,
    row_len: usize,
    bytes: Vec<u8>,
}

impl<W: Write + 'static> std::fmt::Debug for Png16Writer<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Png16Writer")
            .field("row_len", &self.row_len)
            .finish()
    }
}

impl<W: Write + 'static> Png16Writer<W> {
    /// Starts a `width` x `height` PNG with 3 (RGB) or 4 (RGBA) channels.
    pub fn new(out: W, width: usize, height: usize, channels: usize) -> Result<Self> {
        let color = match channels {
            3 => png::ColorType::Rgb,
            4 => png::ColorType::Rgba,
            _ => return Err(FormatError::Invalid(format!("PNG: {channels} channels"))),
        };
        let (w, h) = (u32::try_from(width), u32::try_from(height));
        let (Ok(w), Ok(h)) = (w, h) else {
            return Err(FormatError::Invalid(format!(
                "PNG: {width} x {height} is too large"
            )));
        };
        let mut encoder = png::Encoder::new(out, w, h);
        encoder.set_color(color);
        encoder.set_depth(png::BitDepth::Sixteen);
        // fdeflate (the png crate's fast mode). Rows are filtered with Sub
        // (each pixel minus its left neighbour, the previous vertex): the
        // adaptive choice picked Sub for nearly every row of BrainStem's atlas
        // (same size to 0.01%), and trying all five filters per row cost
        // about 8% of a PNG bake's CPU time; Up (the row above) is far
        // worse, since folded textures stack vertex bands, not frames.
        encoder.set_compression(png::Compression::Fast);
        encoder.set_filter(png::Filter::Sub);
        let stream = encoder
            .write_header()
            .and_then(|w| w.into_stream_writer_with_size(IDAT_BYTES))
            .map_err(png_error)?;
        Ok(Self {
            stream,
            row_len: width * channels,
            bytes: Vec::new(),
        })
    }

    /// Appends whole rows of samples (`width * channels` per row).
    pub fn push_rows(&mut self, samples: &[u16]) -> Result<()> {
        if !samples.len().is_multiple_of(self.row_len) {
            return Err(FormatError::Invalid(
                "PNG: samples are not whole rows".to_owned(),
            ));
        }
        self.bytes.clear();
        self.bytes
            .extend(samples.iter().flat_map(|s| s.to_be_bytes()));
        self.stream.write_all(&self.bytes).map_err(png_error)
    }

    /// Appends whole rows already as PNG stores them: big-endian 16-bit
    /// samples, `width * channels * 2` bytes per row.
    pub fn push_be_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        if !bytes.len().is_multiple_of(self.row_len * 2) {
            return Err(FormatError::Invalid(
                "PNG: bytes are not whole rows".to_owned(),
            ));
        }
        self.stream.write_all(bytes).map_err(png_error)
    }

    /// Completes the file; fails if fewer rows than the height were pushed.
    pub fn finish(self) -> Result<()> {
        self.stream.finish().map_err(png_error)
    }
}

/// A whole 16-bit RGBA PNG of `width` x `height` texels from interleaved
/// samples (bone textures at `unorm16`: small, so written in one piece),
/// filtered and compressed as [`Png16Writer`] does.
pub fn encode_rgba16(width: usize, height: usize, samples: &[u16]) -> Result<Vec<u8>> {
    let (Ok(w), Ok(h)) = (u32::try_from(width), u32::try_from(height)) else {
        return Err(FormatError::Invalid(format!(
            "PNG: {width} x {height} is too large"
        )));
    };
    if samples.len() != width * height * 4 {
        return Err(FormatError::Invalid(
            "PNG: samples are not whole rows".to_owned(),
        ));
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Sixteen);
    encoder.set_compression(png::Compression::Fast);
    encoder.set_filter(png::Filter::Sub);
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_be_bytes()).collect();
    encoder
        .write_header()
        .and_then(|mut w| {
            w.write_image_data(&bytes)?;
            w.finish()
        })
        .map_err(png_error)?;
    Ok(out)
}

/// A [`Png16Writer`] on a thread of its own, fed whole rows of big-endian
/// samples in order, so compression runs beside the work that produces the
/// rows. Consumed buffers come back through [`Self::take_spare`].
#[derive(Debug)]
pub struct Png16Stream {
    feed: Feed<Vec<u8>>,
    row_bytes: usize,
}

impl Png16Stream {
    /// Starts a `width` x `height` PNG with 3 (RGB) or 4 (RGBA) channels
    /// (the header is written, and checked, before this returns).
    pub fn new<W: Write + Send + 'static>(
        out: W,
        width: usize,
        height: usize,
        channels: usize,
    ) -> Result<Self> {
        let mut writer = Png16Writer::new(out, width, height, channels)?;
        let feed =
            Feed::<Vec<u8>>::spawn("rigbake-png-writer", "PNG writer", move |rows, spares| {
                for batch in rows.iter() {
                    writer.push_be_bytes(&batch)?;
                    let _ = spares.try_send(batch);
                }
                writer.finish()
            })?;
        Ok(Self {
            feed,
            row_bytes: width * channels * 2,
        })
    }

    /// Appends whole rows of big-endian samples.
    pub fn push_rows(&mut self, bytes: Vec<u8>) -> Result<()> {
        if !bytes.len().is_multiple_of(self.row_bytes.max(1)) {
            return Err(FormatError::Invalid(
                "PNG: bytes are not whole rows".to_owned(),
            ));
        }
        self.feed.send(bytes)
    }

    /// A buffer the writer thread is done with, to refill (stale contents).
    pub fn take_spare(&mut self) -> Option<Vec<u8>> {
        self.feed.take_spare()
    }

    /// Waits for the file to be complete; fails if fewer rows than the
    /// height were pushed.
    pub fn finish(self) -> Result<()> {
        self.feed.finish().map(drop)
    }
}

/// A decoded 16-bit PNG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedPng16 {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Channels per pixel.
    pub channels: usize,
    /// Samples, row-major, channels interleaved.
    pub samples: Vec<u16>,
}

/// Reads a 16-bit grey, RGB or RGBA PNG. The header is checked first: the
/// decoded image must fit [`super::MAX_DECODED_BYTES`].
pub fn read<R: BufRead + Seek>(reader: R) -> Result<DecodedPng16> {
    read_checked(reader, None)
}

/// Reads a 16-bit PNG whose header must say `width` x `height` (as the
/// metadata does); compared before the image is decoded or allocated.
pub fn read_expecting<R: BufRead + Seek>(
    reader: R,
    width: usize,
    height: usize,
) -> Result<DecodedPng16> {
    read_checked(reader, Some((width, height)))
}

fn read_checked<R: BufRead + Seek>(
    reader: R,
    expected: Option<(usize, usize)>,
) -> Result<DecodedPng16> {
    let mut decoder = png::Decoder::new_with_limits(
        reader,
        png::Limits {
            bytes: super::MAX_DECODED_BYTES as usize,
        },
    );
    decoder.set_ignore_text_chunk(true);
    let header = decoder.read_header_info().map_err(png_error)?;
    let (w, h) = (header.width as usize, header.height as usize);
    if let Some((ew, eh)) = expected
        && (w, h) != (ew, eh)
    {
        return Err(FormatError::Invalid(format!(
            "PNG header says {w} x {h} but the metadata says {ew} x {eh}"
        )));
    }
    let sample_bytes = header.color_type.samples() * 2;
    super::check_decoded_size(w, h, sample_bytes)?;
    let mut reader = decoder.read_info().map_err(png_error)?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| FormatError::Invalid("PNG: image too large".to_owned()))?;
    let mut buf = vec![0u8; size];
    let info = reader.next_frame(&mut buf).map_err(png_error)?;
    if info.bit_depth != png::BitDepth::Sixteen {
        return Err(FormatError::Unsupported(
            "PNG: not 16 bits per sample".to_owned(),
        ));
    }
    let channels = info.color_type.samples();
    let samples = buf[..info.buffer_size()]
        .chunks_exact(2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .collect();
    Ok(DecodedPng16 {
        width: info.width as usize,
        height: info.height as usize,
        channels,
        samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct SharedBuf(Arc<Mutex<Vec<u8>>>);
    impl Write for SharedBuf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn rows_round_trip_big_endian() {
        let (w, h) = (5, 4);
        let samples: Vec<u16> = (0..w * h * 3).map(|i| (i * 4099 % 65536) as u16).collect();
        let out = SharedBuf::default();
        let mut writer = Png16Writer::new(out.clone(), w, h, 3).unwrap();
        writer.push_rows(&samples[..w * 3]).unwrap();
        writer.push_rows(&samples[w * 3..]).unwrap();
        writer.finish().unwrap();
        let bytes = out.0.lock().unwrap().clone();
        let back = read(Cursor::new(bytes)).unwrap();
        assert_eq!((back.width, back.height, back.channels), (w, h, 3));
        assert_eq!(back.samples, samples);
    }

    #[test]
    fn a_huge_header_is_refused_before_allocating() {
        // A valid 1x1 16-bit RGB PNG whose IHDR is rewritten to 65535 x
        // 65535 (CRC fixed): 25 GB if trusted.
        let out = SharedBuf::default();
        let mut writer = Png16Writer::new(out.clone(), 1, 1, 3).unwrap();
        writer.push_rows(&[1, 2, 3]).unwrap();
        writer.finish().unwrap();
        let mut bytes = out.0.lock().unwrap().clone();
        assert_eq!(&bytes[12..16], b"IHDR");
        bytes[16..20].copy_from_slice(&65535u32.to_be_bytes());
        bytes[20..24].copy_from_slice(&65535u32.to_be_bytes());
        let crc = crc32fast::hash(&bytes[12..29]);
        bytes[29..33].copy_from_slice(&crc.to_be_bytes());
        let e = read(Cursor::new(bytes.clone())).unwrap_err().to_string();
        assert!(e.contains("decode limit"), "{e}");
        let e = read_expecting(Cursor::new(bytes), 1, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("header says 65535 x 65535"), "{e}");
    }

    #[test]
    fn missing_rows_are_an_error() {
        let mut writer = Png16Writer::new(SharedBuf::default(), 2, 2, 4).unwrap();
        writer.push_rows(&[0; 8]).unwrap();
        assert!(writer.finish().is_err());
    }

    #[test]
    fn rows_are_sub_filtered_in_large_idat_chunks() {
        // 700 x 400 RGB with noisy samples: about 1.7 MB of filtered rows,
        // more than one IDAT chunk even compressed.
        let (w, h) = (700, 400);
        let samples: Vec<u16> = (0..w * h * 3)
            .map(|i| ((i as u64 * 2654435761) >> 7) as u16)
            .collect();
        let out = SharedBuf::default();
        let mut writer = Png16Writer::new(out.clone(), w, h, 3).unwrap();
        writer.push_rows(&samples).unwrap();
        writer.finish().unwrap();
        let bytes = out.0.lock().unwrap().clone();
        assert_eq!(read(Cursor::new(bytes.clone())).unwrap().samples, samples);
        // Walk the chunks: every IDAT but the last is IDAT_BYTES long.
        let (mut at, mut idat, mut sizes) = (8, Vec::new(), Vec::new());
        while at + 8 <= bytes.len() {
            let n = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            if &bytes[at + 4..at + 8] == b"IDAT" {
                idat.extend_from_slice(&bytes[at + 8..at + 8 + n]);
                sizes.push(n);
            }
            at += 12 + n;
        }
        assert!(sizes.len() >= 2, "{sizes:?}");
        assert!(
            sizes[..sizes.len() - 1].iter().all(|&n| n == IDAT_BYTES),
            "{sizes:?}"
        );
        let mut filtered = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::ZlibDecoder::new(&idat[..]),
            &mut filtered,
        )
        .unwrap();
        let stride = 1 + w * 3 * 2;
        assert_eq!(filtered.len(), h * stride);
        assert!(
            filtered.chunks(stride).all(|row| row[0] == 1),
            "filter type Sub on every row"
        );
    }
}
