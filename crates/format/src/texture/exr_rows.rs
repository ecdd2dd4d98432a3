//! Reading chosen rows of an EXR: only the blocks that hold them are read
//! (the offset table says where each is) and decompressed, and the samples
//! land straight in the caller's packed buffer. This is how `verify` and
//! `preview` stream a large vertex animation texture band by band instead
//! of decoding it whole (docs/performance.md, "Read side").
//!
//! The file must be what rigbake writes ([`super::exr`]): its first layer
//! holds channels R, G and B (A optional, read as 1 when absent) as 16-bit
//! or 32-bit floats (32-bit unsigned integers are converted as a reader
//! would), at full resolution. Anything else is an error that says what
//! was found.

use std::io::{Read, Seek};

use exr::block::BlockIndex;
use exr::block::chunk::TileCoordinates;
use exr::block::reader::ChunksReader as _;
use exr::meta::MetaData;
use exr::meta::attribute::SampleType;

use crate::error::{FormatError, Result};

/// What the header says, checked: the layer's size and where each wanted
/// channel is in a decompressed line.
struct LineLayout {
    width: usize,
    /// Per channel of the header, in its order: the sample type and the
    /// output slot (0 to 3 for R, G, B, A; `None`: not read).
    channels: Vec<(SampleType, Option<usize>)>,
    has_alpha: bool,
}

fn invalid(message: String) -> FormatError {
    FormatError::Invalid(message)
}

/// Checks the first layer against `width` x `height` and finds R, G, B (A).
fn layout(meta: &MetaData, width: usize, height: usize) -> Result<LineLayout> {
    let header = meta
        .headers
        .first()
        .ok_or_else(|| invalid("EXR has no layer".to_owned()))?;
    let (w, h) = (header.layer_size.width(), header.layer_size.height());
    if (w, h) != (width, height) {
        return Err(invalid(format!(
            "EXR header says {w} x {h} but the metadata says {width} x {height}"
        )));
    }
    let mut channels = Vec::with_capacity(header.channels.list.len());
    let mut found = [false; 4];
    for c in &header.channels.list {
        if c.sampling.x() != 1 || c.sampling.y() != 1 {
            return Err(invalid(format!(
                "EXR channel `{}` is subsampled (rigbake writes every sample)",
                c.name
            )));
        }
        let slot = match c.name.to_string().as_str() {
            "R" => Some(0),
            "G" => Some(1),
            "B" => Some(2),
            "A" => Some(3),
            _ => None,
        };
        if let Some(s) = slot {
            found[s] = true;
        }
        channels.push((c.sample_type, slot));
    }
    if !(found[0] && found[1] && found[2]) {
        return Err(invalid(
            "EXR's first layer lacks one of the channels R, G, B".to_owned(),
        ));
    }
    Ok(LineLayout {
        width,
        channels,
        has_alpha: found[3],
    })
}

/// Checks that the EXR in `reader` is one [`read_rows`] can read as
/// `width` x `height` (its header only: no pixel is read).
pub fn check_header<R: Read>(reader: R, width: usize, height: usize) -> Result<()> {
    let meta = MetaData::read_from_buffered(reader, true)?;
    layout(&meta, width, height).map(|_| ())
}

/// Whether block `block` (of the first layer, full resolution) holds a
/// row in `rows` (sorted).
fn holds_a_row(block: &BlockIndex, rows: &[u32]) -> bool {
    if block.layer != 0 || block.level != exr::math::Vec2(0, 0) {
        return false;
    }
    let (y0, y1) = (
        block.pixel_position.y(),
        block.pixel_position.y() + block.pixel_size.height(),
    );
    let first = rows.partition_point(|&r| (r as usize) < y0);
    rows.get(first).is_some_and(|&r| (r as usize) < y1)
}

/// Reads rows `rows` (sorted, distinct, each below `height`) of the first
/// layer of the EXR in `reader`, whose header must say `width` x `height`,
/// as `channels` samples per texel (3: RGB, 4: RGBA), packed in the order
/// of `rows`: row `rows[k]` is at `k * width * channels`. Only the blocks
/// that hold those rows are read. The samples come shared, allocated once
/// and decoded in place (a reader that windows a texture keeps them
/// without a copy).
pub fn read_rows<R: Read + Seek>(
    reader: R,
    width: usize,
    height: usize,
    rows: &[u32],
    channels: usize,
) -> Result<std::sync::Arc<[f32]>> {
    if !(3..=4).contains(&channels) {
        return Err(invalid(format!("{channels} channels per texel: 3 or 4")));
    }
    if rows.windows(2).any(|w| w[0] >= w[1]) || rows.last().is_some_and(|&r| r as usize >= height) {
        return Err(invalid(format!(
            "rows to read must be sorted, distinct and below the height {height}"
        )));
    }
    let samples = rows
        .len()
        .checked_mul(width)
        .and_then(|n| n.checked_mul(channels))
        .filter(|&n| n as u64 * 4 <= super::MAX_DECODED_BYTES)
        .ok_or_else(|| invalid("the rows to read exceed the decode limit".to_owned()))?;
    let reader = exr::block::read(reader, true)?;
    let layout = layout(reader.meta_data(), width, height)?;
    // Collected from an exact-size iterator: one allocation, no copy.
    let mut shared: std::sync::Arc<[f32]> = std::iter::repeat_n(0.0f32, samples).collect();
    let Some(out) = std::sync::Arc::get_mut(&mut shared) else {
        return Err(invalid("the decode buffer is shared".to_owned()));
    };
    if channels == 4 && !layout.has_alpha {
        for texel in out.chunks_exact_mut(4) {
            texel[3] = 1.0;
        }
    }
    let mut filled = vec![false; rows.len()];
    let chunks = reader.filter_chunks(true, |_, _: TileCoordinates, block| {
        holds_a_row(&block, rows)
    })?;
    chunks.decompress_sequential(true, |_, block| {
        scatter(&layout, &block, rows, channels, out, &mut filled)
            .map_err(|e| exr::error::Error::Invalid(e.to_string().into()))
    })?;
    if let Some(k) = filled.iter().position(|f| !f) {
        return Err(invalid(format!("EXR has no block holding row {}", rows[k])));
    }
    Ok(shared)
}

/// Copies the wanted rows of one decompressed block into `out`.
fn scatter(
    layout: &LineLayout,
    block: &exr::block::UncompressedBlock,
    rows: &[u32],
    channels: usize,
    out: &mut [f32],
    filled: &mut [bool],
) -> Result<()> {
    let (x0, y0) = (
        block.index.pixel_position.x(),
        block.index.pixel_position.y(),
    );
    let (bw, bh) = (
        block.index.pixel_size.width(),
        block.index.pixel_size.height(),
    );
    if x0 + bw > layout.width {
        return Err(invalid("EXR block lies outside the image".to_owned()));
    }
    let line_bytes: usize = layout
        .channels
        .iter()
        .map(|(t, _)| t.bytes_per_sample() * bw)
        .sum();
    if block.data.len() != line_bytes * bh {
        return Err(invalid("EXR block has the wrong size".to_owned()));
    }
    for (dy, line) in block.data.chunks_exact(line_bytes).enumerate() {
        let y = (y0 + dy) as u32;
        let Ok(k) = rows.binary_search(&y) else {
            continue;
        };
        filled[k] = true;
        let row = &mut out[k * layout.width * channels..(k + 1) * layout.width * channels];
        let mut at = 0;
        for &(sample, slot) in &layout.channels {
            let size = sample.bytes_per_sample() * bw;
            let bytes = &line[at..at + size];
            at += size;
            let Some(c) = slot.filter(|&c| c < channels) else {
                continue;
            };
            let texels = row[x0 * channels..(x0 + bw) * channels].chunks_exact_mut(channels);
            match sample {
                SampleType::F16 => {
                    // Widened a chunk at a time (F16C's vector conversion
                    // where the CPU has it; exact either way).
                    use half::slice::HalfFloatSliceExt as _;
                    const CHUNK: usize = 64;
                    let (mut halves, mut floats) = ([half::f16::ZERO; CHUNK], [0.0f32; CHUNK]);
                    let mut texels = texels;
                    for chunk in bytes.chunks(2 * CHUNK) {
                        let n = chunk.len() / 2;
                        for (h, b) in halves.iter_mut().zip(chunk.chunks_exact(2)) {
                            *h = half::f16::from_ne_bytes([b[0], b[1]]);
                        }
                        halves[..n].convert_to_f32_slice(&mut floats[..n]);
                        // The floats lead: a zip pulls from its first
                        // iterator first, and must not take a texel past
                        // the chunk.
                        for (&f, t) in floats[..n].iter().zip(&mut texels) {
                            t[c] = f;
                        }
                    }
                }
                SampleType::F32 => {
                    for (t, b) in texels.zip(bytes.chunks_exact(4)) {
                        t[c] = f32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
                    }
                }
                SampleType::U32 => {
                    for (t, b) in texels.zip(bytes.chunks_exact(4)) {
                        t[c] = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as f32;
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::texture::{Precision, RgbaImage, exr};
    use std::io::Cursor;

    /// A `width` x `height` EXR of varied values at `precision`.
    fn exr_bytes(width: usize, height: usize, precision: Precision) -> Vec<u8> {
        let data: Vec<f32> = (0..width * height * 4)
            .map(|i| (i as f32 * 0.37).sin() * 100.0)
            .collect();
        let mut bytes = Cursor::new(Vec::new());
        exr::write(
            &mut bytes,
            &RgbaImage {
                width,
                height,
                data: &data,
            },
            precision,
        )
        .unwrap();
        bytes.into_inner()
    }

    /// Rows read on their own equal the same rows of the whole decode
    /// (the exr crate's own reader), for both precisions, RGB and RGBA,
    /// with rows inside and across ZIP's 16-line blocks.
    #[test]
    fn chosen_rows_match_the_whole_decode() {
        let (w, h) = (37, 53);
        for precision in [Precision::F32, Precision::F16] {
            let bytes = exr_bytes(w, h, precision);
            let whole = exr::read(Cursor::new(&bytes)).unwrap();
            for rows in [vec![0u32], vec![3, 15, 16, 17, 40, 52], (0..53).collect()] {
                for channels in [3, 4] {
                    let got = read_rows(Cursor::new(&bytes), w, h, &rows, channels).unwrap();
                    assert_eq!(got.len(), rows.len() * w * channels);
                    for (k, &y) in rows.iter().enumerate() {
                        for x in 0..w {
                            let want = &whole.data[(y as usize * w + x) * 4..][..channels];
                            let at = (k * w + x) * channels;
                            assert_eq!(&got[at..at + channels], want, "{precision:?} row {y}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn bad_requests_and_files_are_errors() {
        let (w, h) = (8, 8);
        let bytes = exr_bytes(w, h, Precision::F32);
        let read =
            |rows: &[u32], w: usize, bytes: &[u8]| read_rows(Cursor::new(bytes), w, h, rows, 3);
        assert!(read(&[2, 1], w, &bytes).is_err(), "unsorted");
        assert!(read(&[8], w, &bytes).is_err(), "below the height");
        let e = read(&[1], 9, &bytes).unwrap_err().to_string();
        assert!(e.contains("8 x 8") && e.contains("9 x 8"), "{e}");
        // Truncated: the block holding the last row is gone.
        let cut = &bytes[..bytes.len() - 20];
        assert!(read(&[7], w, cut).is_err());
        assert!(read(&[0], w, b"not an exr").is_err());
    }
}
