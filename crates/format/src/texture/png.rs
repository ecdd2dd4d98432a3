//! 16-bit PNG textures for values normalised to stored bounds (PNG cannot
//! hold floats). Rows are streamed as they are produced. Samples are written
//! big-endian, as PNG requires; the data is linear (no colour space): import
//! it with sRGB conversion off.

use std::io::{BufRead, Seek, Write};

pub use rigbake_types::PngCompression;

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
    stream: Idat<W>,
    row_len: usize,
    bytes: Vec<u8>,
}

/// Where the rows go: the png crate's compressing stream, or stored
/// deflate blocks this module frames itself.
enum Idat<W: Write + 'static> {
    Compressed(png::StreamWriter<'static, W>),
    Stored(StoredIdat<W>),
}

/// Largest stored deflate block (its length field has 16 bits).
const STORED_BLOCK: usize = 65535;

/// [`PngCompression::None`]: rows with filter type 0 in a zlib stream of
/// stored deflate blocks (RFC 1950 and 1951: header `78 01`, then blocks of
/// a 5-byte header, `BFINAL`, `LEN` and `!LEN` little-endian, and `LEN`
/// bytes, then the Adler-32 of the rows, big-endian), cut into IDAT chunks
/// of whole blocks. Framed here because the crates that write stored
/// blocks either need to seek back over their output (fdeflate's
/// `StoredOnlyCompressor`) or still run their compressor's per-byte
/// bookkeeping (miniz_oxide at level 0, which the png crate uses for
/// `NoCompression`: slower than fdeflate's compression on BrainStem).
struct StoredIdat<W: Write + 'static> {
    png: png::Writer<W>,
    adler: simd_adler32::Adler32,
    /// The IDAT chunk being filled: whole blocks, then the open block.
    chunk: Vec<u8>,
    /// Where the open block's header starts in `chunk`.
    header_at: usize,
    rows_left: usize,
    row_bytes: usize,
}

impl<W: Write + 'static> StoredIdat<W> {
    fn new(png: png::Writer<W>, row_bytes: usize, height: usize) -> Self {
        let mut chunk = Vec::with_capacity(IDAT_BYTES + STORED_BLOCK + 16);
        chunk.extend_from_slice(&[0x78, 0x01]);
        let mut idat = Self {
            png,
            adler: simd_adler32::Adler32::new(),
            chunk,
            header_at: 0,
            rows_left: height,
            row_bytes,
        };
        idat.open_block();
        idat
    }

    fn open_block(&mut self) {
        self.header_at = self.chunk.len();
        self.chunk.extend_from_slice(&[0; 5]);
    }

    /// Bytes in the open block.
    fn filled(&self) -> usize {
        self.chunk.len() - self.header_at - 5
    }

    fn payload(&mut self, mut data: &[u8]) -> Result<()> {
        self.adler.write(data);
        while !data.is_empty() {
            let take = (STORED_BLOCK - self.filled()).min(data.len());
            self.chunk.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.filled() == STORED_BLOCK {
                self.close_block(false);
                if self.chunk.len() >= IDAT_BYTES {
                    self.flush_chunk()?;
                }
                self.open_block();
            }
        }
        Ok(())
    }

    fn close_block(&mut self, last: bool) {
        // At most STORED_BLOCK (payload closes a block when it is full).
        let n = self.filled() as u16;
        let header = &mut self.chunk[self.header_at..self.header_at + 5];
        header[0] = u8::from(last);
        header[1..3].copy_from_slice(&n.to_le_bytes());
        header[3..5].copy_from_slice(&(!n).to_le_bytes());
    }

    fn flush_chunk(&mut self) -> Result<()> {
        self.png
            .write_chunk(png::chunk::IDAT, &self.chunk)
            .map_err(png_error)?;
        self.chunk.clear();
        Ok(())
    }

    fn write_rows(&mut self, bytes: &[u8]) -> Result<()> {
        // Never 0: the header refuses a zero width.
        for row in bytes.chunks(self.row_bytes.max(1)) {
            if self.rows_left == 0 {
                return Err(FormatError::Invalid(
                    "PNG: more rows than the height".to_owned(),
                ));
            }
            self.rows_left -= 1;
            self.payload(&[0])?;
            self.payload(row)?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        if self.rows_left != 0 {
            return Err(FormatError::Invalid(format!(
                "PNG: {} rows missing",
                self.rows_left
            )));
        }
        self.close_block(true);
        let sum = self.adler.finish();
        self.chunk.extend_from_slice(&sum.to_be_bytes());
        self.flush_chunk()?;
        self.png.finish().map_err(png_error)
    }
}

impl<W: Write + 'static> std::fmt::Debug for Png16Writer<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Png16Writer")
            .field("row_len", &self.row_len)
            .finish()
    }
}

impl<W: Write + 'static> Png16Writer<W> {
    /// Starts a `width` x `height` PNG with 3 (RGB) or 4 (RGBA) channels,
    /// its rows compressed as `compression` says.
    pub fn new(
        out: W,
        width: usize,
        height: usize,
        channels: usize,
        compression: PngCompression,
    ) -> Result<Self> {
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
        // `Fast`: fdeflate (the png crate's fast mode). Rows are filtered with Sub
        // (each pixel minus its left neighbour, the previous vertex): the
        // adaptive choice picked Sub for nearly every row of BrainStem's atlas
        // (same size to 0.01%), and trying all five filters per row cost
        // about 8% of a PNG bake's CPU time; Up (the row above) is far
        // worse, since folded textures stack vertex bands, not frames.
        encoder.set_compression(png::Compression::Fast);
        encoder.set_filter(png::Filter::Sub);
        let header = encoder.write_header().map_err(png_error)?;
        let stream = if compression == PngCompression::None {
            Idat::Stored(StoredIdat::new(header, width * channels * 2, height))
        } else {
            Idat::Compressed(
                header
                    .into_stream_writer_with_size(IDAT_BYTES)
                    .map_err(png_error)?,
            )
        };
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
        let bytes = std::mem::take(&mut self.bytes);
        let r = self.push_be_bytes(&bytes);
        self.bytes = bytes;
        r
    }

    /// Appends whole rows already as PNG stores them: big-endian 16-bit
    /// samples, `width * channels * 2` bytes per row.
    pub fn push_be_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        if !bytes.len().is_multiple_of(self.row_len * 2) {
            return Err(FormatError::Invalid(
                "PNG: bytes are not whole rows".to_owned(),
            ));
        }
        match &mut self.stream {
            Idat::Compressed(s) => s.write_all(bytes).map_err(png_error),
            Idat::Stored(s) => s.write_rows(bytes),
        }
    }

    /// Completes the file; fails if fewer rows than the height were pushed.
    pub fn finish(self) -> Result<()> {
        match self.stream {
            Idat::Compressed(s) => s.finish().map_err(png_error),
            Idat::Stored(s) => s.finish(),
        }
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
    /// Starts a `width` x `height` PNG with 3 (RGB) or 4 (RGBA) channels,
    /// compressed as `compression` says (the header is written, and
    /// checked, before this returns).
    pub fn new<W: Write + Send + 'static>(
        out: W,
        width: usize,
        height: usize,
        channels: usize,
        compression: PngCompression,
    ) -> Result<Self> {
        let mut writer = Png16Writer::new(out, width, height, channels, compression)?;
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
        let mut writer = Png16Writer::new(out.clone(), w, h, 3, PngCompression::Fast).unwrap();
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
        let mut writer = Png16Writer::new(out.clone(), 1, 1, 3, PngCompression::Fast).unwrap();
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
        for compression in [PngCompression::Fast, PngCompression::None] {
            let mut writer = Png16Writer::new(SharedBuf::default(), 2, 2, 4, compression).unwrap();
            writer.push_rows(&[0; 8]).unwrap();
            assert!(writer.finish().is_err(), "{compression:?}");
        }
    }

    #[test]
    fn extra_rows_are_an_error_when_stored() {
        let mut writer =
            Png16Writer::new(SharedBuf::default(), 2, 1, 4, PngCompression::None).unwrap();
        writer.push_rows(&[0; 8]).unwrap();
        assert!(writer.push_rows(&[0; 8]).is_err());
    }

    /// The zlib stream of a PNG's IDAT chunks, and each chunk's length.
    fn idat_stream(bytes: &[u8]) -> (Vec<u8>, Vec<usize>) {
        let (mut at, mut idat, mut sizes) = (8, Vec::new(), Vec::new());
        while at + 8 <= bytes.len() {
            let n = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            if &bytes[at + 4..at + 8] == b"IDAT" {
                idat.extend_from_slice(&bytes[at + 8..at + 8 + n]);
                sizes.push(n);
            }
            at += 12 + n;
        }
        (idat, sizes)
    }

    #[test]
    fn stored_rows_round_trip_in_stored_blocks() {
        // Heights whose unfiltered stream (1 + 6 * w bytes a row) ends
        // inside a block, exactly on a block's end (the final block is then
        // empty), and past several IDAT chunks.
        // 14 texels a row make 85 bytes, and 85 x 771 = 65535.
        let many = 2 * (IDAT_BYTES / 601) + 7;
        for (w, h) in [(100, 1), (100, 3), (14, 771), (14, 2 * 771), (100, many)] {
            let row = 1 + w * 3 * 2;
            let samples: Vec<u16> = (0..w * h * 3)
                .map(|i| ((i as u64 * 2654435761) >> 9) as u16)
                .collect();
            let out = SharedBuf::default();
            let mut writer = Png16Writer::new(out.clone(), w, h, 3, PngCompression::None).unwrap();
            // Uneven batches: rows split across pushes.
            let cut = (h / 2) * w * 3;
            writer.push_rows(&samples[..cut]).unwrap();
            writer.push_rows(&samples[cut..]).unwrap();
            writer.finish().unwrap();
            let bytes = out.0.lock().unwrap().clone();
            // An independent decoder (the png crate's) reads the samples.
            let back = read(Cursor::new(bytes.clone())).unwrap();
            assert_eq!(back.samples, samples, "{w} x {h}");
            // Walk the stream by hand: zlib header, stored blocks of at most
            // 65535 bytes, the last flagged final, then the Adler-32.
            let (idat, sizes) = idat_stream(&bytes);
            assert_eq!(&idat[..2], &[0x78, 0x01]);
            let (mut at, mut rows) = (2, Vec::new());
            loop {
                let header = &idat[at..at + 5];
                assert_eq!(header[0] & 0b110, 0, "BTYPE 00, stored");
                let n = u16::from_le_bytes([header[1], header[2]]);
                assert_eq!(!n, u16::from_le_bytes([header[3], header[4]]));
                rows.extend_from_slice(&idat[at + 5..at + 5 + usize::from(n)]);
                at += 5 + usize::from(n);
                if header[0] & 1 == 1 {
                    break;
                }
                assert_eq!(usize::from(n), STORED_BLOCK, "only the last block is short");
            }
            assert_eq!(rows.len(), h * row);
            assert!(rows.chunks(row).all(|r| r[0] == 0), "filter type None");
            let adler = u32::from_be_bytes(idat[at..at + 4].try_into().unwrap());
            let mut check = simd_adler32::Adler32::new();
            check.write(&rows);
            assert_eq!(adler, check.finish());
            assert_eq!(at + 4, idat.len(), "nothing after the checksum");
            // The size is the rows' plus 5 bytes a block, 6 for zlib.
            let blocks = h * row / STORED_BLOCK + 1;
            assert_eq!(idat.len(), h * row + 5 * blocks + 6);
            // Chunks of whole blocks, each at least IDAT_BYTES but the last.
            assert!(
                sizes[..sizes.len() - 1].iter().all(|&n| n >= IDAT_BYTES),
                "{sizes:?}"
            );
            assert!(
                sizes.iter().all(|&n| n < IDAT_BYTES + STORED_BLOCK + 16),
                "{sizes:?}"
            );
        }
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
        let mut writer = Png16Writer::new(out.clone(), w, h, 3, PngCompression::Fast).unwrap();
        writer.push_rows(&samples).unwrap();
        writer.finish().unwrap();
        let bytes = out.0.lock().unwrap().clone();
        assert_eq!(read(Cursor::new(bytes.clone())).unwrap().samples, samples);
        // Walk the chunks: every IDAT but the last is IDAT_BYTES long.
        let (idat, sizes) = idat_stream(&bytes);
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
