//! Folding: where a texture's timeline rows continue when they would make
//! it taller than the maximum texture size.
//!
//! A texture holds one *row block* per timeline row: `row_height` texel
//! rows (1 for bone and anchor textures, `bands` for a VAT) of
//! `block_width` texels. Unfolded, row `r` starts at texel row
//! `r * row_height`. Folded, rows are cut into column blocks of
//! `rows_per_block` timeline rows placed side by side (`blocks_per_page` per
//! texture) and, when even that is too wide, on further pages (textures):
//!
//! ```text
//! b    = r div rows_per_block                       block of row r
//! page = b div blocks_per_page
//! x'   = (b mod blocks_per_page) * block_width + x
//! y'   = (r mod rows_per_block) * row_height + y
//! ```
//!
//! An unfolded texture is the special case of one block on one page
//! (`rows_per_block = rows`), so the formula holds for every texture and
//! unfolded textures keep their bytes. Rows are spread evenly over the
//! fewest blocks that fit (`rows_per_block = ceil(rows / blocks)`); texels
//! past the last row are zero.

/// How a texture's timeline rows are placed (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fold {
    /// Timeline rows per column block.
    pub rows_per_block: u32,
    /// Texel rows one timeline row takes.
    pub row_height: u32,
    /// Texel columns of one block (the unfolded width).
    pub block_width: u32,
    /// Blocks side by side on one page.
    pub blocks_per_page: u32,
    /// Pages (textures).
    pub pages: u32,
}

/// Why no fold fits the maximum size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoldError {
    /// One timeline row alone is wider or taller than the maximum.
    RowTooLarge {
        /// Its width in texels.
        width: u64,
        /// Its height in texels.
        height: u64,
    },
    /// More blocks than fit side by side, and pages were not allowed.
    TooManyBlocks {
        /// Blocks the rows need.
        blocks: u64,
        /// Blocks that fit side by side.
        fit: u64,
    },
}

impl Fold {
    /// The unfolded placement of `rows` rows: one block, one page.
    pub fn unfolded(block_width: u32, row_height: u32, rows: u32) -> Self {
        Self {
            rows_per_block: rows.max(1),
            row_height: row_height.max(1),
            block_width: block_width.max(1),
            blocks_per_page: 1,
            pages: 1,
        }
    }

    /// The placement of `rows` row blocks of `block_width x row_height`
    /// texels within `max` texels per side: unfolded when they fit, else
    /// the fewest column blocks (and, with `pages`, pages) that do.
    pub fn plan(
        block_width: u64,
        row_height: u64,
        rows: u64,
        max: u64,
        pages: bool,
    ) -> Result<Self, FoldError> {
        let (block_width, row_height, rows) = (block_width.max(1), row_height.max(1), rows.max(1));
        if block_width > max || row_height > max {
            return Err(FoldError::RowTooLarge {
                width: block_width,
                height: row_height,
            });
        }
        let rows_fit = max / row_height;
        let blocks = rows.div_ceil(rows_fit);
        let fit = max / block_width;
        let (blocks_per_page, page_count) = if blocks <= fit {
            (blocks, 1)
        } else if pages {
            (fit, blocks.div_ceil(fit))
        } else {
            return Err(FoldError::TooManyBlocks { blocks, fit });
        };
        // Every value is at most `max` (or `rows`), both far below u32::MAX
        // for the sizes callers pass (max <= 65536, rows <= 2^20).
        let narrow = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        Ok(Self {
            rows_per_block: narrow(rows.div_ceil(blocks)),
            row_height: narrow(row_height),
            block_width: narrow(block_width),
            blocks_per_page: narrow(blocks_per_page),
            pages: narrow(page_count),
        })
    }

    /// Whether rows continue in more than one block.
    pub fn is_folded(&self) -> bool {
        self.blocks_per_page > 1 || self.pages > 1
    }

    /// Width of each page in texels.
    pub fn width(&self) -> u32 {
        self.blocks_per_page.saturating_mul(self.block_width)
    }

    /// Height of each page in texels.
    pub fn height(&self) -> u32 {
        self.rows_per_block.saturating_mul(self.row_height)
    }

    /// Page `page` of `unfolded` (row blocks of `block_width x row_height`
    /// texels of `channels` floats, row after row, `rows` of them) placed by
    /// this fold; texels no row reaches are zero.
    pub fn arrange(&self, unfolded: &[f32], channels: usize, rows: usize, page: u32) -> Vec<f32> {
        let (w, h) = (self.width() as usize, self.height() as usize);
        let line = self.block_width as usize * channels;
        let mut out = vec![0.0; w * h * channels];
        let rows_per_page = self.rows_per_block as usize * self.blocks_per_page as usize;
        let first = page as usize * rows_per_page;
        for r in first..rows.min(first + rows_per_page) {
            for y in 0..self.row_height as usize {
                let (_, x0, y0) = self.texel(0, y as u32, r as u32);
                let from = (r * self.row_height as usize + y) * line;
                let to = (y0 as usize * w + x0 as usize) * channels;
                if let (Some(src), Some(dst)) =
                    (unfolded.get(from..from + line), out.get_mut(to..to + line))
                {
                    dst.copy_from_slice(src);
                }
            }
        }
        out
    }

    /// Where texel `(x, y)` of timeline row `row`'s block lies:
    /// `(page, x', y')`.
    pub fn texel(&self, x: u32, y: u32, row: u32) -> (u32, u32, u32) {
        let per_block = self.rows_per_block.max(1);
        let per_page = self.blocks_per_page.max(1);
        let block = row / per_block;
        (
            block / per_page,
            (block % per_page)
                .saturating_mul(self.block_width)
                .saturating_add(x),
            (row % per_block)
                .saturating_mul(self.row_height)
                .saturating_add(y),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_stay_unfolded() {
        let f = Fold::plan(140, 1, 383, 8192, false).unwrap();
        assert_eq!(f, Fold::unfolded(140, 1, 383));
        assert!(!f.is_folded());
        assert_eq!((f.width(), f.height()), (140, 383));
        assert_eq!(f.texel(5, 0, 382), (0, 5, 382));
    }

    #[test]
    fn tall_textures_fold_into_even_blocks() {
        // 11,044 rows (Knight at 120 fps) of a 96-texel-wide texture at 8192.
        let f = Fold::plan(96, 1, 11_044, 8192, false).unwrap();
        assert_eq!((f.blocks_per_page, f.rows_per_block, f.pages), (2, 5522, 1));
        assert_eq!((f.width(), f.height()), (192, 5522));
        assert_eq!(f.texel(3, 0, 5521), (0, 3, 5521));
        assert_eq!(f.texel(3, 0, 5522), (0, 99, 0));
        // Every (row, x) lands on a distinct texel inside the page.
        let mut seen = std::collections::HashSet::new();
        for r in 0..11_044 {
            for x in [0, 95] {
                let (p, tx, ty) = f.texel(x, 0, r);
                assert!(p == 0 && tx < f.width() && ty < f.height());
                assert!(seen.insert((tx, ty)));
            }
        }
    }

    #[test]
    fn arrange_places_rows_where_texel_says() {
        // 5 rows of 2 texels x 1 channel, value = 10 * row + x, at max 2
        // rows per block: 3 blocks of 2 rows (the last block half empty).
        let f = Fold::plan(2, 1, 5, 6, false).unwrap();
        assert_eq!((f.blocks_per_page, f.rows_per_block), (1, 5));
        let f = Fold::plan(2, 1, 5, 2, true).unwrap();
        assert_eq!((f.blocks_per_page, f.rows_per_block, f.pages), (1, 2, 3));
        let unfolded: Vec<f32> = (0..5)
            .flat_map(|r| (0..2).map(move |x| (10 * r + x) as f32))
            .collect();
        let f = Fold::plan(2, 1, 5, 6, false).unwrap();
        assert_eq!(f.arrange(&unfolded, 1, 5, 0), unfolded);
        let f = Fold {
            rows_per_block: 2,
            row_height: 1,
            block_width: 2,
            blocks_per_page: 3,
            pages: 1,
        };
        let page = f.arrange(&unfolded, 1, 5, 0);
        assert_eq!(
            page,
            vec![0., 1., 20., 21., 40., 41., 10., 11., 30., 31., 0., 0.]
        );
        for r in 0..5u32 {
            for x in 0..2u32 {
                let (p, tx, ty) = f.texel(x, 0, r);
                assert_eq!(p, 0);
                assert_eq!(page[(ty * 6 + tx) as usize], (10 * r + x) as f32);
            }
        }
    }

    #[test]
    fn bands_fold_and_pages_when_allowed() {
        // 9 bands of 4096 texels over 1047 rows at 4096: 455 rows fit a
        // block, 3 blocks are needed, one fits a page: 3 pages of 349 rows.
        let f = Fold::plan(4096, 9, 1047, 4096, true).unwrap();
        assert_eq!((f.blocks_per_page, f.pages, f.rows_per_block), (1, 3, 349));
        assert_eq!(f.texel(7, 2, 349), (1, 7, 2));
        assert_eq!(f.texel(7, 8, 1046), (2, 7, 348 * 9 + 8));
        assert_eq!(
            Fold::plan(4096, 9, 1047, 4096, false),
            Err(FoldError::TooManyBlocks { blocks: 3, fit: 1 })
        );
        assert_eq!(
            Fold::plan(5000, 1, 10, 4096, true),
            Err(FoldError::RowTooLarge {
                width: 5000,
                height: 1
            })
        );
    }
}
