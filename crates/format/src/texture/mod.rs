//! Texture encoders and decoders. Textures are RGBA float images handed over
//! as flat slices; encoders never see where the values came from. EXR and
//! PNG are the default files; KTX2 and DDS ([`gpu`]) hold the same samples
//! as GPUs upload them.

pub mod dds;
pub mod exr;
pub mod exr_rows;
pub(crate) mod feed;
pub mod gpu;
pub mod gpu_spec;
pub mod ktx2;
#[cfg(target_arch = "x86_64")]
mod pack_x86;
pub mod png;
pub mod quantize;

use crate::error::{FormatError, Result};

pub use rigbake_types::Precision;

/// An RGBA float image borrowed from the caller: `width * height * 4` floats,
/// row-major, row 0 first.
#[derive(Debug, Clone, Copy)]
pub struct RgbaImage<'a> {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// RGBA floats.
    pub data: &'a [f32],
}

/// Encodes a whole RGBA float image (bone-matrix and anchor textures) as
/// an EXR (ZIP, scanlines) or, for KTX2 and DDS, as their RGBA texels of
/// `precision`; the samples are the same either way. At
/// [`Precision::Unorm16`] the values are in `[0, 1]` and the file is a
/// 16-bit RGBA PNG (or UNORM texels), each sample `round(v * 65535)`.
pub fn encode_image(
    image: &RgbaImage<'_>,
    precision: Precision,
    container: gpu::TextureContainer,
) -> Result<Vec<u8>> {
    let mut buf = std::io::Cursor::new(Vec::new());
    if container.is_exr() && precision == Precision::Unorm16 {
        let samples: Vec<u16> = image.data.iter().map(|&v| gpu::unorm16(v)).collect();
        return png::encode_rgba16(image.width, image.height, &samples);
    } else if container.is_exr() {
        exr::write(&mut buf, image, precision)?;
    } else {
        let sample = gpu_spec::SampleType::of_precision(precision);
        let spec = gpu_spec::GpuSpec {
            width: image.width,
            height: image.height,
            layers: 1,
            sample,
        };
        gpu::write(
            &mut buf,
            container,
            &spec,
            &gpu::rgba_bytes(image.data, sample),
        )?;
    }
    Ok(buf.into_inner())
}

/// The largest absolute error that storing `data` at `precision` introduces,
/// or an error when a value cannot be represented (overflows half floats).
pub fn quantization_error(data: &[f32], precision: Precision) -> Result<f64> {
    match precision {
        Precision::F32 => Ok(0.0),
        Precision::Unorm16 => {
            let mut worst = 0.0f64;
            for (i, &v) in data.iter().enumerate() {
                if !(0.0..=1.0).contains(&v) {
                    return Err(FormatError::Unrepresentable(format!(
                        "value {v} (float {i}) is outside the 16-bit normalised range 0 to 1"
                    )));
                }
                let stored = f64::from(gpu::unorm16(v)) / 65535.0;
                worst = worst.max((stored - f64::from(v)).abs());
            }
            Ok(worst)
        }
        Precision::F16 => {
            let mut worst = 0.0f64;
            for (i, &v) in data.iter().enumerate() {
                let h = half::f16::from_f32(v);
                if !h.is_finite() {
                    return Err(FormatError::Unrepresentable(format!(
                        "value {v} (float {i}) is outside the half-float range (+-65504)"
                    )));
                }
                worst = worst.max((f64::from(h.to_f32()) - f64::from(v)).abs());
            }
            Ok(worst)
        }
    }
}

/// Largest decoded texture a reader allocates (2 GiB): a header that declares
/// more is refused before any pixel is decoded.
pub const MAX_DECODED_BYTES: u64 = 2 << 30;

/// Refuses a `width` x `height` image of `bytes_per_pixel` whose decoded
/// size is zero or over [`MAX_DECODED_BYTES`].
pub fn check_decoded_size(width: usize, height: usize, bytes_per_pixel: usize) -> Result<()> {
    let bytes = (width as u64)
        .checked_mul(height as u64)
        .and_then(|p| p.checked_mul(bytes_per_pixel as u64));
    match bytes {
        Some(b) if b > 0 && b <= MAX_DECODED_BYTES => Ok(()),
        _ => Err(FormatError::Invalid(format!(
            "a {width} x {height} texture is empty or larger than the decode limit of {MAX_DECODED_BYTES} bytes"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_error_is_measured_and_overflow_refused() {
        assert_eq!(
            quantization_error(&[1.0, 0.5, -2.0], Precision::F16).unwrap(),
            0.0
        );
        // 1 + 2^-12 is halfway below the next half (1 + 2^-10): error 2^-12.
        let e = quantization_error(&[1.0 + 2f32.powi(-12)], Precision::F16).unwrap();
        assert_eq!(e, 2f64.powi(-12));
        assert!(quantization_error(&[70000.0], Precision::F16).is_err());
        assert_eq!(quantization_error(&[70000.0], Precision::F32).unwrap(), 0.0);
    }
}
