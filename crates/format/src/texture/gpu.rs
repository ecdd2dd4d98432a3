//! GPU-ready texture containers (KTX2, DDS): RGBA samples of one sample
//! type, stored as a GPU uploads them (little-endian, interleaved, row 0
//! first, array layers one after another), written whole or streamed row
//! batch by row batch, and read back after checking every header field
//! against what the container's records say. The headers themselves are
//! [`super::ktx2`] and [`super::dds`].
//!
//! Three-channel data (VAT positions and normals) is stored as RGBA with
//! alpha 1 (1.0, or 65535 for UNORM): the formats engines load are RGBA.

use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::sync::mpsc::{Receiver, SyncSender};

use half::f16;

use super::feed::Feed;
use super::gpu_spec::{GpuSpec, SampleType};
use super::{dds, ktx2};
use crate::error::{FormatError, Result};

pub use rigbake_types::TextureContainer;

/// Zstandard level of supercompressed KTX2 (zstd's own default).
const ZSTD_LEVEL: i32 = 3;

fn not_gpu() -> FormatError {
    FormatError::Invalid("EXR is not a GPU texture container".to_owned())
}

/// The header bytes of `container` for `spec` (supercompressed KTX2 with a
/// placeholder length, patched once the data is written).
fn header_of(container: TextureContainer, spec: &GpuSpec) -> Result<Vec<u8>> {
    match container {
        TextureContainer::Ktx2 => Ok(ktx2::header(spec, false, 0)),
        TextureContainer::Ktx2Zstd => Ok(ktx2::header(spec, true, 0)),
        TextureContainer::Dds => Ok(dds::header(spec)),
        TextureContainer::Exr => Err(not_gpu()),
    }
}

/// Writes a whole texture: `rgba` holds `width * height * layers` RGBA
/// texels in the spec's sample type, already little-endian.
pub fn write(
    out: &mut impl Write,
    container: TextureContainer,
    spec: &GpuSpec,
    rgba: &[u8],
) -> Result<()> {
    if rgba.len() as u64 != spec.data_bytes() {
        return Err(FormatError::Invalid(format!(
            "{} bytes of texels for a {} x {} x {} texture of {}",
            rgba.len(),
            spec.width,
            spec.height,
            spec.layers,
            spec.data_bytes()
        )));
    }
    if container == TextureContainer::Ktx2Zstd {
        let packed = zstd::bulk::compress(rgba, ZSTD_LEVEL)?;
        out.write_all(&ktx2::header(spec, true, packed.len() as u64))?;
        out.write_all(&packed)?;
    } else {
        out.write_all(&header_of(container, spec)?)?;
        out.write_all(rgba)?;
    }
    Ok(())
}

/// Little-endian RGBA bytes of interleaved RGBA floats, in `sample`
/// (`F32`; `F16`, half floats rounded to nearest even, as EXR stores them;
/// `Unorm16`, values in `[0, 1]` as `round(v * 65535)`, clamped).
pub fn rgba_bytes(data: &[f32], sample: SampleType) -> Vec<u8> {
    match sample {
        SampleType::F32 => data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        SampleType::Unorm16 => data
            .iter()
            .flat_map(|v| unorm16(*v).to_le_bytes())
            .collect(),
        SampleType::F16 => data
            .iter()
            .flat_map(|v| f16::from_f32(*v).to_bits().to_le_bytes())
            .collect(),
        SampleType::Unorm8 | SampleType::Unorm10 => {
            let max = sample.unorm_max().unwrap_or([u16::MAX; 4]);
            let codes: Vec<u16> = data
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let m = f32::from(max[i % 4]);
                    (v.clamp(0.0, 1.0) * m).round() as u16
                })
                .collect();
            let texels = codes.len() / 4;
            let mut out = vec![0u8; texels * sample.texel_bytes()];
            // One texel at a time: RGBA interleaved is a planar row of
            // width 1.
            for (texel, code) in out
                .chunks_exact_mut(sample.texel_bytes())
                .zip(codes.chunks_exact(4))
            {
                interleave_narrow(code, 1, 4, sample, texel);
            }
            out
        }
    }
}

/// A value in `[0, 1]` as its 16-bit normalised sample (`round(v *
/// 65535)`, clamped; NaN gives 0).
pub fn unorm16(v: f32) -> u16 {
    (v.clamp(0.0, 1.0) * 65535.0).round() as u16
}

/// Interleaves one planar row (`floats` planes of `width` samples, R
/// first) into little-endian RGBA texels (`width * 4 * N` bytes of `out`);
/// a missing alpha plane is `one`.
fn interleave<T: Copy, const N: usize>(
    planes: &[T],
    width: usize,
    floats: usize,
    one: T,
    out: &mut [u8],
    le: impl Fn(T) -> [u8; N],
) {
    for (x, texel) in out.chunks_exact_mut(4 * N).take(width).enumerate() {
        for (c, sample) in texel.chunks_exact_mut(N).enumerate() {
            let v = if c < floats {
                planes[c * width + x]
            } else {
                one
            };
            sample.copy_from_slice(&le(v));
        }
    }
}

/// Interleaves planar rows into RGBA texels (`interleave`) for
/// 32-bit floats (alpha 1.0).
pub fn interleave_f32(planes: &[f32], width: usize, floats: usize, out: &mut [u8]) {
    interleave(planes, width, floats, 1.0, out, f32::to_le_bytes);
}

/// Interleaves planar rows into RGBA texels (`interleave`) for
/// half floats (alpha 1.0).
pub fn interleave_f16(planes: &[f16], width: usize, floats: usize, out: &mut [u8]) {
    interleave(planes, width, floats, f16::ONE, out, |h| {
        h.to_bits().to_le_bytes()
    });
}

/// Interleaves planar rows into RGBA texels (`interleave`) for
/// 16-bit UNORM samples (alpha 65535).
pub fn interleave_u16(planes: &[u16], width: usize, floats: usize, out: &mut [u8]) {
    interleave(planes, width, floats, u16::MAX, out, u16::to_le_bytes);
}

/// Interleaves planar codes of a narrower UNORM type (`floats` planes of
/// `width` codes, each within `sample`'s [`SampleType::unorm_max`]) into
/// little-endian RGBA texels: one byte a channel for
/// [`SampleType::Unorm8`], one 32-bit word `r | g << 10 | b << 20 | a <<
/// 30` for [`SampleType::Unorm10`]; a missing alpha plane is the largest
/// code (1.0). Other sample types are not narrow: [`interleave_u16`].
pub fn interleave_narrow(
    planes: &[u16],
    width: usize,
    floats: usize,
    sample: SampleType,
    out: &mut [u8],
) {
    let max = sample.unorm_max().unwrap_or([u16::MAX; 4]);
    let code = |c: usize, x: usize| {
        if c < floats {
            planes[c * width + x]
        } else {
            max[c]
        }
    };
    match sample {
        SampleType::Unorm10 => {
            for (x, texel) in out.chunks_exact_mut(4).take(width).enumerate() {
                let word = u32::from(code(0, x))
                    | u32::from(code(1, x)) << 10
                    | u32::from(code(2, x)) << 20
                    | u32::from(code(3, x)) << 30;
                texel.copy_from_slice(&word.to_le_bytes());
            }
        }
        _ => {
            for (x, texel) in out.chunks_exact_mut(4).take(width).enumerate() {
                for (c, byte) in texel.iter_mut().enumerate() {
                    *byte = code(c, x) as u8;
                }
            }
        }
    }
}

/// Streams one GPU texture from row batches pushed in order (RGBA
/// little-endian bytes, as [`interleave_f32`] and its siblings make them),
/// on a writer thread; supercompressed KTX2 is compressed there and its
/// level length patched in at the end (the output must seek back to byte
/// 80). Consumed batches come back through [`Self::take_spare`].
#[derive(Debug)]
pub struct GpuStream {
    spec: GpuSpec,
    feed: Feed<Vec<u8>>,
    pushed: u64,
}

impl GpuStream {
    /// Starts writing `container` of `spec` to `out`.
    pub fn new<W: Write + Seek + Send + 'static>(
        out: W,
        container: TextureContainer,
        spec: GpuSpec,
    ) -> Result<Self> {
        if spec.width == 0 || spec.height == 0 || spec.layers == 0 {
            return Err(FormatError::Invalid(format!(
                "cannot stream a {} x {} x {} texture",
                spec.width, spec.height, spec.layers
            )));
        }
        let header = header_of(container, &spec)?;
        let zstd = container == TextureContainer::Ktx2Zstd;
        let feed = Feed::spawn(
            "rigbake-gpu-writer",
            "texture writer",
            move |rows, spares| {
                write_stream(
                    BufWriter::with_capacity(1 << 20, out),
                    &spec,
                    header,
                    zstd,
                    rows,
                    spares,
                )
            },
        )?;
        Ok(Self {
            spec,
            feed,
            pushed: 0,
        })
    }

    /// Appends whole texel rows (of the current layer, then the next).
    pub fn push(&mut self, bytes: Vec<u8>) -> Result<()> {
        let row = (self.spec.width * self.spec.texel_bytes()) as u64;
        let len = bytes.len() as u64;
        if !len.is_multiple_of(row) || self.pushed + len > self.spec.data_bytes() {
            return Err(FormatError::Invalid(format!(
                "{len} bytes are not whole rows of {row}, or run past the texture's {} bytes",
                self.spec.data_bytes()
            )));
        }
        self.pushed += len;
        self.feed.send(bytes)
    }

    /// A batch the writer thread is done with (stale contents).
    pub fn take_spare(&mut self) -> Option<Vec<u8>> {
        self.feed.take_spare()
    }

    /// Waits for the file to be complete. Fails if fewer rows than the
    /// texture holds were pushed.
    pub fn finish(self) -> Result<()> {
        if self.pushed != self.spec.data_bytes() {
            return Err(FormatError::Invalid(format!(
                "{} of the texture's {} bytes were written",
                self.pushed,
                self.spec.data_bytes()
            )));
        }
        self.feed.finish().map(drop)
    }
}

/// Counts the bytes written through it.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn write_stream<W: Write + Seek>(
    mut out: BufWriter<W>,
    spec: &GpuSpec,
    header: Vec<u8>,
    zstd: bool,
    rows: &Receiver<Vec<u8>>,
    spares: &SyncSender<Vec<u8>>,
) -> Result<()> {
    out.write_all(&header)?;
    if zstd {
        let mut encoder = zstd::stream::write::Encoder::new(
            Counting {
                inner: &mut out,
                bytes: 0,
            },
            ZSTD_LEVEL,
        )?;
        encoder.include_contentsize(true)?;
        encoder.set_pledged_src_size(Some(spec.data_bytes()))?;
        for batch in rows {
            encoder.write_all(&batch)?;
            let _ = spares.try_send(batch);
        }
        let packed = encoder.finish()?.bytes;
        out.seek(SeekFrom::Start(ktx2::LEVEL_INDEX_AT))?;
        out.write_all(&ktx2::level_index(spec, header.len() as u64, Some(packed)))?;
        out.seek(SeekFrom::End(0))?;
    } else {
        for batch in rows {
            out.write_all(&batch)?;
            let _ = spares.try_send(batch);
        }
    }
    out.into_inner()
        .map_err(|e| FormatError::Io(e.into_error()))?
        .flush()?;
    Ok(())
}

/// Samples decoded from a GPU texture: RGBA, all layers, row 0 first.
#[derive(Debug, Clone, PartialEq)]
pub enum GpuSamples {
    /// 32-bit or half floats, as f32 (half floats widen exactly).
    Float(Vec<f32>),
    /// 16-bit UNORM samples.
    Unorm16(Vec<u16>),
    /// The codes of a narrower UNORM type (8-bit, or RGB10A2 unpacked),
    /// four a texel, each read as `code / max[channel]`.
    Unorm {
        /// The integer codes, RGBA.
        codes: Vec<u16>,
        /// The largest code of each channel ([`SampleType::unorm_max`]).
        max: [u16; 4],
    },
}

/// Bytes a read of `spec` from `container` holds at once beyond the file
/// itself: the decompressed level (supercompressed KTX2 only) and the
/// samples returned (half floats widened to f32, UNORM copied as u16).
/// Every decompression, widening and copy counts against one budget.
pub fn decoded_bytes(container: TextureContainer, spec: &GpuSpec) -> u64 {
    let samples = spec.data_bytes() / spec.sample.texel_bytes() as u64 * 4;
    let out = match spec.sample {
        SampleType::F32 | SampleType::F16 => samples.saturating_mul(4),
        SampleType::Unorm16 | SampleType::Unorm8 | SampleType::Unorm10 => samples.saturating_mul(2),
    };
    let unpacked = if container == TextureContainer::Ktx2Zstd {
        spec.data_bytes()
    } else {
        0
    };
    out.saturating_add(unpacked)
}

/// Reads a whole GPU texture whose records say `container` and `spec`:
/// the header is checked field by field first (an error names the field),
/// everything the read allocates ([`decoded_bytes`]) is bounded by
/// [`super::MAX_DECODED_BYTES`] before anything is allocated, and
/// supercompressed data must decompress to exactly the texture's size.
pub fn read(file: &[u8], container: TextureContainer, spec: &GpuSpec) -> Result<GpuSamples> {
    read_within(file, container, spec, super::MAX_DECODED_BYTES)
}

/// [`read`], with everything the read allocates ([`decoded_bytes`])
/// bounded by `limit` bytes (at most [`super::MAX_DECODED_BYTES`]): a
/// reader passes what the model's own data needs, so that no record can
/// make it decode more.
pub fn read_within(
    file: &[u8],
    container: TextureContainer,
    spec: &GpuSpec,
    limit: u64,
) -> Result<GpuSamples> {
    let limit = limit.min(super::MAX_DECODED_BYTES);
    let cost = decoded_bytes(container, spec);
    if spec.data_bytes() == 0 || cost > limit {
        return Err(FormatError::Invalid(format!(
            "a {} x {} x {} texture of {:?} samples is empty or decodes to {cost} bytes (decompressed and widened), more than the limit of {limit}",
            spec.width, spec.height, spec.layers, spec.sample
        )));
    }
    let unpacked;
    let raw: &[u8] = match container {
        TextureContainer::Ktx2 => ktx2::level_data(file, spec, false)?,
        TextureContainer::Dds => dds::data(file, spec)?,
        TextureContainer::Ktx2Zstd => {
            unpacked = unzstd(ktx2::level_data(file, spec, true)?, spec.data_bytes())?;
            &unpacked
        }
        TextureContainer::Exr => return Err(not_gpu()),
    };
    Ok(samples_of(raw, spec.sample))
}

/// Decompresses a Zstandard level that must hold exactly `expected` bytes:
/// the output grows only as data is decoded and never past `expected` plus
/// one byte (enough to tell that a frame runs longer).
fn unzstd(packed: &[u8], expected: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let failed = |e: std::io::Error| {
        FormatError::Invalid(format!(
            "KTX2 level 0: the Zstandard data does not decompress to {expected} bytes ({e})"
        ))
    };
    let decoder = zstd::stream::read::Decoder::with_buffer(packed).map_err(failed)?;
    let mut out = Vec::new();
    decoder
        .take(expected.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(failed)?;
    if out.len() as u64 != expected {
        let got = if out.len() as u64 > expected {
            format!("more than {expected}")
        } else {
            out.len().to_string()
        };
        return Err(FormatError::Invalid(format!(
            "KTX2 level 0 decompresses to {got} bytes, the texture has {expected}"
        )));
    }
    Ok(out)
}

/// The samples of `raw` little-endian texel bytes of `sample`.
fn samples_of(raw: &[u8], sample: SampleType) -> GpuSamples {
    match sample {
        SampleType::F32 => GpuSamples::Float(
            raw.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        SampleType::F16 => GpuSamples::Float(
            raw.chunks_exact(2)
                .map(|b| f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32())
                .collect(),
        ),
        SampleType::Unorm16 => GpuSamples::Unorm16(
            raw.chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .collect(),
        ),
        SampleType::Unorm8 => GpuSamples::Unorm {
            codes: raw.iter().map(|&b| u16::from(b)).collect(),
            max: [255; 4],
        },
        SampleType::Unorm10 => GpuSamples::Unorm {
            codes: raw
                .chunks_exact(4)
                .flat_map(|b| {
                    let w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    [
                        (w & 1023) as u16,
                        (w >> 10 & 1023) as u16,
                        (w >> 20 & 1023) as u16,
                        (w >> 30) as u16,
                    ]
                })
                .collect(),
            max: [1023, 1023, 1023, 3],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn spec(sample: SampleType, layers: usize) -> GpuSpec {
        GpuSpec {
            width: 5,
            height: 3,
            layers,
            sample,
        }
    }

    #[test]
    fn written_whole_or_streamed_the_bytes_agree_and_read_back() {
        for container in [
            TextureContainer::Ktx2,
            TextureContainer::Ktx2Zstd,
            TextureContainer::Dds,
        ] {
            for sample in [SampleType::F32, SampleType::F16] {
                let s = spec(sample, 2);
                let texels: Vec<f32> = (0..5 * 3 * 2 * 4).map(|i| i as f32 * 0.25 - 3.0).collect();
                let bytes = rgba_bytes(&texels, sample);
                let mut whole = Vec::new();
                write(&mut whole, container, &s, &bytes).unwrap();
                let shared = std::sync::Arc::new(std::sync::Mutex::new(Cursor::new(Vec::new())));
                let mut stream = GpuStream::new(Shared(shared.clone()), container, s).unwrap();
                for rows in bytes.chunks(2 * 5 * s.texel_bytes()) {
                    stream.push(rows.to_vec()).unwrap();
                }
                stream.finish().unwrap();
                let streamed = shared.lock().unwrap().get_ref().clone();
                assert_eq!(whole, streamed, "{container:?} {sample:?}");
                assert_eq!(
                    read(&whole, container, &s).unwrap(),
                    GpuSamples::Float(texels)
                );
            }
        }
    }

    #[test]
    fn planar_rows_interleave_with_opaque_alpha() {
        let planes = [1.0f32, 2.0, 10.0, 20.0, 100.0, 200.0];
        let mut out = vec![0u8; 2 * 16];
        interleave_f32(&planes, 2, 3, &mut out);
        let back: Vec<f32> = out
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert_eq!(back, [1.0, 10.0, 100.0, 1.0, 2.0, 20.0, 200.0, 1.0]);
        let mut out = vec![0u8; 2 * 8];
        interleave_u16(&[7, 8, 9, 10, 11, 12], 2, 3, &mut out);
        assert_eq!(&out[..8], &[7, 0, 9, 0, 11, 0, 255, 255]);
    }

    #[test]
    fn narrow_unorm_texels_pack_by_the_format_definitions_and_read_back() {
        // By hand: RGBA8 is one byte a channel, R first; RGB10A2 one word
        // `r | g << 10 | b << 20 | a << 30`; a missing alpha is 1.0.
        let mut out = [0u8; 8];
        interleave_narrow(&[1, 2, 3, 4, 5, 6], 2, 3, SampleType::Unorm8, &mut out);
        assert_eq!(out, [1, 3, 5, 255, 2, 4, 6, 255]);
        let mut out = [0u8; 4];
        interleave_narrow(&[1023, 512, 1], 1, 3, SampleType::Unorm10, &mut out);
        let word = u32::from_le_bytes(out);
        assert_eq!(word, 1023 | 512 << 10 | 1 << 20 | 3 << 30);
        // Written and read through each container: the codes come back.
        for container in [
            TextureContainer::Ktx2,
            TextureContainer::Ktx2Zstd,
            TextureContainer::Dds,
        ] {
            for sample in [SampleType::Unorm8, SampleType::Unorm10] {
                let s = spec(sample, 2);
                let max = sample.unorm_max().unwrap();
                let texels: Vec<f32> = (0..5 * 3 * 2 * 4).map(|i| (i % 7) as f32 / 6.0).collect();
                let bytes = rgba_bytes(&texels, sample);
                assert_eq!(bytes.len() as u64, s.data_bytes());
                let mut file = Vec::new();
                write(&mut file, container, &s, &bytes).unwrap();
                let Ok(GpuSamples::Unorm { codes, max: m }) = read(&file, container, &s) else {
                    panic!("{container:?} {sample:?}: not read back as UNORM codes");
                };
                assert_eq!(m, max);
                for (i, (c, v)) in codes.iter().zip(&texels).enumerate() {
                    let want = (v * f32::from(max[i % 4])).round() as u16;
                    assert_eq!(*c, want, "{container:?} {sample:?} sample {i}");
                }
            }
        }
    }

    #[test]
    fn truncated_or_lying_zstd_data_is_refused() {
        let s = spec(SampleType::Unorm16, 1);
        let mut file = Vec::new();
        write(
            &mut file,
            TextureContainer::Ktx2Zstd,
            &s,
            &vec![3u8; s.data_bytes() as usize],
        )
        .unwrap();
        assert!(
            matches!(read(&file, TextureContainer::Ktx2Zstd, &s), Ok(GpuSamples::Unorm16(v)) if v.iter().all(|&x| x == 0x0303))
        );
        file.truncate(file.len() - 2);
        assert!(read(&file, TextureContainer::Ktx2Zstd, &s).is_err());
        let e = read(&file, TextureContainer::Ktx2, &s)
            .unwrap_err()
            .to_string();
        assert!(e.contains("supercompressionScheme"), "{e}");
    }

    #[test]
    fn every_damaged_byte_and_every_truncation_is_an_error_or_the_right_size() {
        // A small damage corpus: each byte of each container flipped two
        // ways, and every prefix. The reader must refuse (or, where the
        // byte is one it does not check, such as a key/value byte or a
        // texel, return exactly the texture's samples); never panic or
        // allocate beyond the texture's size.
        for container in [
            TextureContainer::Ktx2,
            TextureContainer::Ktx2Zstd,
            TextureContainer::Dds,
        ] {
            for (sample, layers) in [
                (SampleType::F32, 1),
                (SampleType::Unorm16, 3),
                (SampleType::Unorm10, 2),
            ] {
                let s = spec(sample, layers);
                let bytes: Vec<u8> = (0..s.data_bytes()).map(|i| (i * 7 % 251) as u8).collect();
                let mut file = Vec::new();
                write(&mut file, container, &s, &bytes).unwrap();
                let samples = s.data_bytes() as usize / s.texel_bytes() * 4;
                let check = |damaged: &[u8]| match read(damaged, container, &s) {
                    Ok(GpuSamples::Float(v)) => assert_eq!(v.len(), samples),
                    Ok(GpuSamples::Unorm16(v)) => assert_eq!(v.len(), samples),
                    Ok(GpuSamples::Unorm { codes, .. }) => assert_eq!(codes.len(), samples),
                    Err(e) => assert!(!e.to_string().is_empty()),
                };
                for at in 0..file.len() {
                    for flip in [0x01u8, 0xFF] {
                        let mut damaged = file.clone();
                        damaged[at] ^= flip;
                        check(&damaged);
                    }
                }
                for len in 0..file.len() {
                    assert!(
                        read(&file[..len], container, &s).is_err(),
                        "{container:?} cut at {len}"
                    );
                }
            }
        }
    }

    /// A Zstandard frame of `len` zero bytes in RLE blocks (4 bytes per
    /// 128 KiB), its content size recorded: a tiny file that claims a lot.
    fn zero_frame(len: u64) -> Vec<u8> {
        let mut f = vec![0x28, 0xB5, 0x2F, 0xFD, 0xE0];
        f.extend_from_slice(&len.to_le_bytes());
        let mut left = len;
        loop {
            let n = left.min(128 << 10);
            left -= n;
            let last = u32::from(left == 0);
            let header = last | (1 << 1) | ((n as u32) << 3);
            f.extend_from_slice(&header.to_le_bytes()[..3]);
            f.push(0);
            if left == 0 {
                return f;
            }
        }
    }

    #[test]
    fn a_tiny_frame_that_claims_a_huge_texture_is_refused_before_decoding() {
        // 16384 x 16384 half floats: exactly 2 GiB stored, 4 GiB widened.
        let s = GpuSpec {
            width: 16384,
            height: 16384,
            layers: 1,
            sample: SampleType::F16,
        };
        let frame = zero_frame(s.data_bytes());
        assert!(frame.len() < 70 << 10, "{}", frame.len());
        let mut file = ktx2::header(&s, true, frame.len() as u64);
        file.extend_from_slice(&frame);
        let started = std::time::Instant::now();
        let e = read(&file, TextureContainer::Ktx2Zstd, &s)
            .unwrap_err()
            .to_string();
        assert!(e.contains("decodes to 6442450944 bytes"), "{e}");
        let e = read_within(&file, TextureContainer::Ktx2Zstd, &s, 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than the limit of 1048576"), "{e}");
        assert!(
            started.elapsed().as_secs() < 10,
            "no decode of the claimed size"
        );
        // Within the limit, the frame decodes exactly.
        let small = GpuSpec {
            width: 256,
            height: 64,
            ..s
        };
        let frame = zero_frame(small.data_bytes());
        let mut file = ktx2::header(&small, true, frame.len() as u64);
        file.extend_from_slice(&frame);
        assert!(
            matches!(read(&file, TextureContainer::Ktx2Zstd, &small), Ok(GpuSamples::Float(v)) if v.len() == 256 * 64 * 4)
        );
    }

    #[test]
    fn a_frame_longer_than_the_texture_stops_one_byte_past_it() {
        let s = spec(SampleType::F16, 1);
        let frame = zero_frame(64 << 20);
        let mut file = ktx2::header(&s, true, frame.len() as u64);
        file.extend_from_slice(&frame);
        let started = std::time::Instant::now();
        let e = read(&file, TextureContainer::Ktx2Zstd, &s)
            .unwrap_err()
            .to_string();
        assert!(e.contains("decompresses to more than 120 bytes"), "{e}");
        assert!(
            started.elapsed().as_secs() < 10,
            "no decode of the claimed size"
        );
    }

    /// A cursor several owners write through (the stream's thread owns one).
    struct Shared(std::sync::Arc<std::sync::Mutex<Cursor<Vec<u8>>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Seek for Shared {
        fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
            self.0.lock().unwrap().seek(pos)
        }
    }
}
