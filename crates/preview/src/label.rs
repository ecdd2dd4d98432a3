//! Text on contact sheets (clip names, frame numbers), drawn with ab_glyph
//! in Hack Regular (MIT and Bitstream Vera licences, in
//! `crates/preview/fonts/Hack-Regular.LICENSE.txt`), embedded in the binary.
//! The same text always gives the same pixels.

use ab_glyph::{Font as _, FontRef, PxScale, ScaleFont as _, point};

/// Height of the label band above each row of cells, in pixels.
pub const LABEL_HEIGHT: u32 = 14;

/// Text colour (light grey on the dark gap colour).
pub const TEXT_COLOUR: [u8; 3] = [220, 220, 225];

/// The bundled font file.
const FONT: &[u8] = include_bytes!("../fonts/Hack-Regular.ttf");

/// Glyph height in pixels.
const SCALE: f32 = 12.0;

/// Draws `text` into the RGB image `rgb` (`width` pixels wide) with its
/// top-left corner at (`x0`, `y0`), clipped to `max_width` x
/// [`LABEL_HEIGHT`] pixels (and to the image); glyph coverage blends
/// [`TEXT_COLOUR`] over what is there. Characters the font lacks show as
/// its missing-glyph box.
pub fn draw(rgb: &mut [u8], width: u32, x0: u32, y0: u32, max_width: u32, text: &str) {
    let Ok(font) = FontRef::try_from_slice(FONT) else {
        return; // the bundled font always parses (tested)
    };
    let scaled = font.as_scaled(PxScale::from(SCALE));
    let height = (rgb.len() / 3 / width.max(1) as usize) as u32;
    let right = x0.saturating_add(max_width).min(width);
    let bottom = y0.saturating_add(LABEL_HEIGHT).min(height);
    let baseline = y0 as f32 + 1.0 + scaled.ascent();
    let mut pen = x0 as f32 + 1.0;
    for c in text.chars() {
        if pen >= right as f32 {
            break;
        }
        let mut glyph = scaled.scaled_glyph(c);
        let advance = scaled.h_advance(glyph.id);
        glyph.position = point(pen, baseline);
        if let Some(outline) = font.outline_glyph(glyph) {
            let bounds = outline.px_bounds();
            outline.draw(|gx, gy, coverage| {
                let x = bounds.min.x as i64 + i64::from(gx);
                let y = bounds.min.y as i64 + i64::from(gy);
                let inside = x >= i64::from(x0)
                    && y >= i64::from(y0)
                    && x < i64::from(right)
                    && y < i64::from(bottom);
                if !inside {
                    return;
                }
                let at = ((y as usize) * width as usize + x as usize) * 3;
                let a = coverage.clamp(0.0, 1.0);
                for (k, target) in TEXT_COLOUR.iter().enumerate() {
                    let old = f32::from(rgb[at + k]);
                    rgb[at + k] = (old + (f32::from(*target) - old) * a).round() as u8;
                }
            });
        }
        pen += advance;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_font_parses_and_text_marks_pixels_inside_its_box() {
        assert!(FontRef::try_from_slice(FONT).is_ok());
        let (w, h) = (60u32, 30u32);
        let mut rgb = vec![0u8; (w * h * 3) as usize];
        draw(&mut rgb, w, 5, 10, 40, "walk 12");
        let lit: Vec<(u32, u32)> = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .filter(|&(x, y)| rgb[((y * w + x) * 3) as usize] > 0)
            .collect();
        assert!(lit.len() > 20, "{}", lit.len());
        assert!(
            lit.iter()
                .all(|&(x, y)| (5..45).contains(&x) && (10..10 + LABEL_HEIGHT).contains(&y))
        );
        // Deterministic, and different text draws differently.
        let mut again = vec![0u8; rgb.len()];
        draw(&mut again, w, 5, 10, 40, "walk 12");
        assert_eq!(again, rgb);
        let mut other = vec![0u8; rgb.len()];
        draw(&mut other, w, 5, 10, 40, "idle 3");
        assert_ne!(other, rgb);
    }
}
