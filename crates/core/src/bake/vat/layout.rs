//! Where a texel of a vertex-animation texture lives: wrapping into bands,
//! folding into column blocks and pages, power-of-two padding.

use crate::error::{Error, Result};
use crate::fold::{Fold, FoldError};

use super::MAX_VAT_PAGES;

/// Where a texel of a vertex-animation texture lives.
///
/// Unfolded, set vertex `v` of timeline row `r` is texel
/// `(v mod width, r * bands + v div width)` of the only page. When
/// `frames * bands` rows would be taller than the maximum size, the rows
/// fold ([`Fold`]): timeline rows continue in further column blocks of
/// `width` texels and, when those do not fit one texture side by side, on
/// further pages; [`VatLayout::texel`] gives `(page, x, y)` either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VatLayout {
    /// Vertices of the texture set (all its primitives).
    pub vertices: usize,
    /// Timeline rows (frames of all clips).
    pub frames: usize,
    /// Wrap width in texels (the width of one column block).
    pub width: usize,
    /// Texture rows per frame (`ceil(vertices / width)`).
    pub bands: usize,
    /// Page (texture) height in texels: `frames * bands` unfolded,
    /// `rows_per_block * bands` folded (padded if asked).
    pub height: usize,
    /// Page (texture) width in texels: `width` unfolded,
    /// `blocks_per_page * width` folded (padded if asked).
    pub page_width: usize,
    /// How timeline rows are placed ([`Fold::unfolded`] when they fit).
    pub fold: Fold,
}

/// The split of the playback mesh's lookup UV: a set vertex `s` is stored
/// as `(s mod LOOKUP_SPLIT, floor(s / LOOKUP_SPLIT))`, two integers that
/// half floats hold exactly (`formats/vat.md`, "Playback mesh").
pub const LOOKUP_SPLIT: usize = 2048;

/// The most vertices a VAT texture set holds: what the split lookup UV
/// addresses.
pub const MAX_SET_VERTICES: usize = LOOKUP_SPLIT * LOOKUP_SPLIT;

/// The lookup UV of set vertex `s` (below [`MAX_SET_VERTICES`]): both
/// components integers below [`LOOKUP_SPLIT`], exact in f16 and f32.
pub fn lookup_uv(s: usize) -> [f32; 2] {
    [(s % LOOKUP_SPLIT) as f32, (s / LOOKUP_SPLIT) as f32]
}

impl VatLayout {
    /// The layout of `vertices` over `frames` rows within `max` texels per
    /// side: wrapped into bands when wider than `max`, folded into column
    /// blocks and pages when taller.
    pub fn new(vertices: usize, frames: usize, max: usize, power_of_two: bool) -> Result<Self> {
        if vertices > MAX_SET_VERTICES {
            return Err(Error::limit(
                "",
                format!(
                    "a VAT texture set of {vertices} vertices is over the limit of {MAX_SET_VERTICES}: the playback mesh's lookup UV holds a vertex's column as two integers below {LOOKUP_SPLIT} (exact in half floats)"
                ),
            )
            .with_hint("bake per primitive (--vat-layout per-primitive), whose sets are smaller"));
        }
        let pad = |n: usize| {
            if power_of_two {
                n.next_power_of_two()
            } else {
                n
            }
        };
        let mut width = pad(vertices.min(max).max(1));
        if width > max {
            width = if power_of_two {
                prev_power_of_two(max)
            } else {
                max
            };
        }
        if width == 0 {
            return Err(Error::limit(
                "",
                format!("a maximum texture size of {max} holds no texel"),
            ));
        }
        let bands = vertices.div_ceil(width).max(1);
        if !power_of_two {
            // As narrow as the same number of bands allows, so the last
            // band is nearly full: padding stays under one texel per band
            // (BrainStem's 34,159 vertices: 5 bands of 6,832, not 8,192).
            width = vertices.div_ceil(bands).max(1);
        }
        let height = pad(frames.max(1) * bands);
        if height <= max {
            return Ok(Self {
                vertices,
                frames,
                width,
                bands,
                height,
                page_width: width,
                fold: Fold::unfolded(width as u32, bands as u32, frames as u32),
            });
        }
        // Fold within the largest size whose padding stays within `max`.
        let fit = if power_of_two {
            prev_power_of_two(max)
        } else {
            max
        };
        let fold = Fold::plan(width as u64, bands as u64, frames as u64, fit as u64, true)
            .map_err(|e| match e {
                FoldError::RowTooLarge { .. } | FoldError::TooManyBlocks { .. } => Error::limit(
                    "",
                    format!(
                        "one frame of {vertices} vertices takes {bands} texture rows of {width} texels, more than the maximum size {max}, so VAT frames cannot fold"
                    ),
                )
                .with_hint("raise the maximum texture size (up to 65536), or bake per primitive (--vat-layout per-primitive), whose sets are smaller"),
            })?;
        if fold.pages > MAX_VAT_PAGES {
            return Err(Error::limit(
                "",
                format!(
                    "{vertices} vertices over {frames} frames would fold into {} pages of {max} x {max} texels per stream, over the limit of {MAX_VAT_PAGES}",
                    fold.pages
                ),
            )
            .with_hint("raise the maximum texture size (up to 65536), lower the fps, or bake fewer clips"));
        }
        Ok(Self {
            vertices,
            frames,
            width,
            bands,
            height: pad(fold.height() as usize),
            page_width: pad(fold.width() as usize),
            fold,
        })
    }

    /// Whether frame rows continue in further column blocks or pages.
    pub fn is_folded(&self) -> bool {
        self.fold.is_folded()
    }

    /// Pages (textures per stream).
    pub fn pages(&self) -> usize {
        self.fold.pages as usize
    }

    /// Texel rows one column block holds (`frames * bands` unfolded).
    pub fn block_height(&self) -> usize {
        self.fold.height() as usize
    }

    /// Texel `(page, x, y)` of set vertex `vertex` at timeline row `row`.
    pub fn texel(&self, vertex: usize, row: usize) -> (usize, usize, usize) {
        let (p, x, y) = self.fold.texel(
            (vertex % self.width) as u32,
            (vertex / self.width) as u32,
            row as u32,
        );
        (p as usize, x as usize, y as usize)
    }
}

fn prev_power_of_two(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        1 << (usize::BITS - 1 - n.leading_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_wraps_and_pads() {
        let l = VatLayout::new(10, 5, 8192, false).unwrap();
        assert_eq!((l.width, l.bands, l.height), (10, 1, 5));
        assert_eq!(l.texel(7, 3), (0, 7, 3));
        // 20 vertices within 16: two bands of 10 (not 16 and 4).
        let l = VatLayout::new(20, 5, 16, false).unwrap();
        assert_eq!((l.width, l.bands, l.height), (10, 2, 10));
        assert_eq!(l.texel(19, 2), (0, 9, 2 * 2 + 1));
        let l = VatLayout::new(21, 5, 16, false).unwrap();
        assert_eq!((l.width, l.bands), (11, 2));
        let l = VatLayout::new(10, 5, 8192, true).unwrap();
        assert_eq!((l.width, l.bands, l.height), (16, 1, 8));
        // Width 12 is not a power of two: wrap at 8 instead; 3 rows pad to 4.
        let l = VatLayout::new(20, 1, 12, true).unwrap();
        assert_eq!((l.width, l.bands, l.height), (8, 3, 4));
        assert!(!l.is_folded() && l.page_width == l.width);
        // 5 bands of 4 texels: one frame is taller than 4.
        let e = VatLayout::new(20, 5, 4, false).unwrap_err();
        assert!(
            e.message
                .contains("one frame of 20 vertices takes 5 texture rows")
        );
    }

    #[test]
    fn tall_sets_fold_into_blocks_then_pages() {
        // 3 vertices over 10 frames at 8: 2 blocks of 5 rows side by side.
        let l = VatLayout::new(3, 10, 8, false).unwrap();
        assert!(l.is_folded());
        assert_eq!(
            (l.width, l.bands, l.height, l.page_width, l.pages()),
            (3, 1, 5, 6, 1)
        );
        assert_eq!(l.texel(2, 7), (0, 3 + 2, 2));
        // 12 vertices at 8: 2 bands of 6; 4 frames fit a block, one block
        // fits a page: 10 rows need 3 blocks, so 3 pages of 4 rows.
        let l = VatLayout::new(12, 10, 8, false).unwrap();
        assert_eq!((l.width, l.bands, l.pages()), (6, 2, 3));
        assert_eq!((l.page_width, l.height), (6, 8));
        // Vertex 9 is texel 3 of band 1; row 9 is row 1 of page 2.
        assert_eq!(l.texel(9, 9), (2, 3, 2 + 1));
        // Power of two: pages are padded, folding within 8.
        let l = VatLayout::new(3, 10, 12, true).unwrap();
        assert_eq!((l.width, l.height, l.page_width), (4, 8, 8));
        // BrainStem's atlas at 4096: 9 bands of 3,796 texels, 3 pages of
        // 349 frames.
        let l = VatLayout::new(34_159, 1047, 4096, false).unwrap();
        assert_eq!(
            (l.width, l.bands, l.pages(), l.height),
            (3796, 9, 3, 349 * 9)
        );
    }
}
