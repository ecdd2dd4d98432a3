//! RGBA EXR textures: scanline blocks, ZIP compression (lossless, 16 lines
//! per block), increasing line order, one layer with channels R, G, B, A, as
//! 32-bit or 16-bit floats. This is the most widely supported EXR flavour: the
//! OpenEXR reference library, every engine importer and every image tool read
//! it. No timestamps or other varying attributes are written, so the same
//! pixels always give the same bytes.

use std::io::{BufRead, Read, Seek, Write};

use exr::prelude::{
    Blocks, Compression, Encoding, Image, Layer, LayerAttributes, LineOrder, ReadChannels as _,
    ReadLayers as _, SpecificChannels, Vec2, WritableImage as _, f16,
};

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
    }
    Ok(())
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
pub fn read<R: Read + Seek + BufRead>(reader: R) -> Result<DecodedRgba> {
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
