//! Frames laid out in a grid: `columns` frames per row, in order, separated
//! and framed by [`GAP`] pixels of [`GAP_COLOUR`], each row under a label
//! band of [`LABEL_HEIGHT`] pixels ([`Sheet::label`] writes a cell's label
//! there); missing cells of the last row stay [`GAP_COLOUR`].

use crate::label::{self, LABEL_HEIGHT};
use crate::raster::Frame;

/// Pixels between cells and around the sheet.
pub const GAP: u32 = 2;
/// Colour of the gaps.
pub const GAP_COLOUR: [u8; 3] = [16, 16, 20];

/// An RGB image assembled from frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sheet {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// RGB bytes, row-major, top row first.
    pub rgb: Vec<u8>,
}

impl Sheet {
    /// An empty sheet for `cells` frames of `size` pixels, `columns` per row.
    pub fn new(cells: usize, columns: u32, size: u32) -> Self {
        let (width, height) = Self::dimensions(cells, columns, size);
        Self {
            width,
            height,
            rgb: GAP_COLOUR.repeat(width as usize * height as usize),
        }
    }

    /// Width and height of a sheet of `cells` frames of `size` pixels,
    /// `columns` per row, label bands included.
    pub fn dimensions(cells: usize, columns: u32, size: u32) -> (u32, u32) {
        let columns = columns.max(1);
        let rows = (cells as u32).div_ceil(columns).max(1);
        let width = columns * size + (columns + 1) * GAP;
        let height = rows * (size + LABEL_HEIGHT) + (rows + 1) * GAP;
        (width, height)
    }

    /// Top-left corner of cell `index`'s label band.
    fn band(index: usize, columns: u32, size: u32) -> (u32, u32) {
        let columns = columns.max(1);
        let (col, row) = (index as u32 % columns, index as u32 / columns);
        (
            GAP + col * (size + GAP),
            GAP + row * (size + LABEL_HEIGHT + GAP),
        )
    }

    /// Writes `text` in the label band above cell `index` (frames of
    /// `size` pixels), clipped to the cell's width.
    pub fn label(&mut self, index: usize, columns: u32, size: u32, text: &str) {
        let (x0, y0) = Self::band(index, columns, size);
        if x0 + size > self.width || y0 + LABEL_HEIGHT > self.height {
            return;
        }
        label::draw(&mut self.rgb, self.width, x0, y0, size, text);
    }

    /// Copies `frame` into cell `index` (reading order, `columns` per row);
    /// frames that do not fit the sheet are ignored.
    pub fn place(&mut self, index: usize, columns: u32, frame: &Frame) {
        let size = frame.size;
        let (x0, band) = Self::band(index, columns, size);
        let y0 = band + LABEL_HEIGHT;
        if x0 + size > self.width || y0 + size > self.height {
            return;
        }
        let line = size as usize * 3;
        for y in 0..size {
            let src = y as usize * line;
            let dst = ((y0 + y) as usize * self.width as usize + x0 as usize) * 3;
            self.rgb[dst..dst + line].copy_from_slice(&frame.rgb[src..src + line]);
        }
    }
}

/// Lays `frames` (all of one size) out `columns` per row.
pub fn compose(frames: &[Frame], columns: u32) -> Sheet {
    let size = frames.first().map_or(0, |f| f.size);
    let mut sheet = Sheet::new(frames.len(), columns, size);
    for (i, f) in frames.iter().enumerate() {
        if f.size == size {
            sheet.place(i, columns, f);
        }
    }
    sheet
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_placed_in_reading_order() {
        let mut frames = vec![Frame::new(3), Frame::new(3), Frame::new(3)];
        frames[2].rgb.fill(200);
        let s = compose(&frames, 2);
        let row = 3 + LABEL_HEIGHT;
        assert_eq!((s.width, s.height), (2 * 3 + 3 * GAP, 2 * row + 3 * GAP));
        // Frame 2 is row 1, column 0 (under its label band); the cell after
        // it stays gap-coloured.
        let at = |x: u32, y: u32| &s.rgb[((y * s.width + x) * 3) as usize..][..3];
        assert_eq!(at(GAP, GAP * 2 + row + LABEL_HEIGHT), &[200, 200, 200]);
        assert_eq!(at(GAP * 2 + 3, GAP * 2 + row + LABEL_HEIGHT), &GAP_COLOUR);
        assert_eq!(at(0, 0), &GAP_COLOUR);
    }
}
