//! 8-bit RGB images for people (previews, contact sheets): PNG, and
//! animated PNG (APNG) for playing a clip. Deterministic: the same pixels
//! always give the same bytes (fixed compression settings, no timestamps or
//! other varying chunks).

use crate::error::{FormatError, Result};

fn png_error(e: impl std::fmt::Display) -> FormatError {
    FormatError::Invalid(format!("PNG: {e}"))
}

/// An 8-bit RGB image borrowed from the caller: `width * height * 3` bytes,
/// row-major, top row first.
#[derive(Debug, Clone, Copy)]
pub struct Rgb8<'a> {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// RGB bytes.
    pub pixels: &'a [u8],
}

fn encoder(out: &mut Vec<u8>, width: u32, height: u32) -> png::Encoder<'_, &mut Vec<u8>> {
    let mut encoder = png::Encoder::new(out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Balanced);
    encoder
}

fn check(image: &Rgb8<'_>) -> Result<()> {
    let expected = image.width as usize * image.height as usize * 3;
    if image.width == 0 || image.height == 0 || image.pixels.len() != expected {
        return Err(FormatError::Invalid(format!(
            "image of {} x {} needs {expected} bytes, got {}",
            image.width,
            image.height,
            image.pixels.len()
        )));
    }
    Ok(())
}

/// Encodes one image as PNG.
pub fn encode_png(image: &Rgb8<'_>) -> Result<Vec<u8>> {
    check(image)?;
    let mut out = Vec::new();
    let mut writer = encoder(&mut out, image.width, image.height)
        .write_header()
        .map_err(png_error)?;
    writer.write_image_data(image.pixels).map_err(png_error)?;
    writer.finish().map_err(png_error)?;
    Ok(out)
}

/// Encodes frames of one size as an animated PNG showing each for
/// `delay_num / delay_den` seconds, looping forever. The first frame is
/// also the still image viewers without APNG support show.
pub fn encode_apng(frames: &[Rgb8<'_>], delay_num: u16, delay_den: u16) -> Result<Vec<u8>> {
    let Some(first) = frames.first() else {
        return Err(FormatError::Invalid("an animation needs frames".to_owned()));
    };
    for f in frames {
        check(f)?;
        if (f.width, f.height) != (first.width, first.height) {
            return Err(FormatError::Invalid(
                "animation frames differ in size".to_owned(),
            ));
        }
    }
    let count = u32::try_from(frames.len())
        .map_err(|_| FormatError::Invalid("too many frames".to_owned()))?;
    let mut out = Vec::new();
    let mut enc = encoder(&mut out, first.width, first.height);
    enc.set_animated(count, 0).map_err(png_error)?;
    enc.set_frame_delay(delay_num, delay_den.max(1))
        .map_err(png_error)?;
    let mut writer = enc.write_header().map_err(png_error)?;
    for f in frames {
        writer.write_image_data(f.pixels).map_err(png_error)?;
    }
    writer.finish().map_err(png_error)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn gradient(shift: u8) -> Vec<u8> {
        (0..4 * 3 * 3)
            .map(|i| (i as u8).wrapping_mul(7).wrapping_add(shift))
            .collect()
    }

    #[test]
    fn png_and_apng_decode_back_and_are_deterministic() {
        let a = gradient(0);
        let img = Rgb8 {
            width: 4,
            height: 3,
            pixels: &a,
        };
        let bytes = encode_png(&img).unwrap();
        assert_eq!(bytes, encode_png(&img).unwrap());
        let mut r = png::Decoder::new(Cursor::new(bytes)).read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        r.next_frame(&mut buf).unwrap();
        assert_eq!(buf, a);

        let b = gradient(100);
        let frames = [img, Rgb8 { pixels: &b, ..img }];
        let bytes = encode_apng(&frames, 1, 30).unwrap();
        assert_eq!(bytes, encode_apng(&frames, 1, 30).unwrap());
        let mut r = png::Decoder::new(Cursor::new(bytes)).read_info().unwrap();
        let actl = r.info().animation_control.unwrap();
        assert_eq!((actl.num_frames, actl.num_plays), (2, 0));
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        r.next_frame(&mut buf).unwrap();
        assert_eq!(buf, a);
        r.next_frame(&mut buf).unwrap();
        assert_eq!(buf, b);
        assert!(encode_png(&Rgb8 { width: 5, ..img }).is_err());
        assert!(encode_apng(&[], 1, 30).is_err());
    }
}
