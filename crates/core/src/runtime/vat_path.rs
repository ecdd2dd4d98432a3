//! CPU reference of the vertex-animation-texture shader (SPEC section 7,
//! `formats/vat.md`): for each active state row, the vertex's texel is
//! addressed at the frame row and the next row, decoded, the two are lerped
//! by the row's fraction, and the rows are summed by blend weight; normals
//! are normalised once, at the end.
//!
//! Addressing: vertex `v` of a primitive is set vertex
//! `s = first_vertex + v` of its texture set (0 for per-primitive sets);
//! unfolded, at timeline row `r` it is texel
//! `(s mod width, r * bands + s div width)`. A folded set (layout record,
//! `FoldMeta` of its VAT textures) puts row `r` in column block
//! `b = r div rows_per_block`: page `b div blocks_per_page`, texel
//! `((b mod blocks_per_page) * width + s mod width,
//! (r mod rows_per_block) * bands + s div width)`. The next row is
//! `min(r + 1, frames - 1)` and is only fetched when the fraction is
//! positive (see [`super::bone_path`] for why).
//!
//! Decoding, per the texture's encoding:
//!
//! - EXR: floats as they are;
//! - normalised (PNG16, `unorm8`, `unorm10`), with `u_c = q_c / M_c` the
//!   value a UNORM fetch returns (`M_c` the channel's largest code: 65535,
//!   255, or 1023 for R, G, B and 3 for A of RGB10A2):
//! - bounds: `min_c + u_c * (max_c - min_c)` per channel;
//! - octahedral directions: `e = u * 2 - 1`,
//!   `n = (e.x, e.y, 1 - |e.x| - |e.y|)`; if `n.z < 0` then
//!   `n.xy = (1 - |n.yx|) * s(n.xy)` with `s(a) = 1` for `a >= 0` and `-1`
//!   otherwise; then normalised. A tangent's `w` is `u_a * 2 - 1`.

use glam::{Vec2, Vec3, Vec4};

use super::RuntimeVertex;
use super::math::safe_normalize;
use super::rows::{RowValues, blend_rows};
use super::state::GpuState;

/// The stored samples of a texture.
#[derive(Debug, Clone, Copy)]
pub enum VatSamples<'a> {
    /// Float samples (EXR, 32-bit or half widened to 32-bit).
    Float(&'a [f32]),
    /// Unsigned 16-bit samples (PNG16).
    Unorm16(&'a [u16]),
    /// Narrower unsigned normalised samples (`unorm8`, `unorm10`): the
    /// integer codes and each channel's largest code.
    Unorm(&'a [u16], [u16; 4]),
}

/// How stored samples become values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VatDecode {
    /// Floats as they are.
    Float,
    /// Unsigned 16-bit normalised to per-channel `[min, max]`.
    Bounds {
        /// Per-channel minimum.
        min: [f32; 4],
        /// Per-channel maximum.
        max: [f32; 4],
    },
    /// Unsigned 16-bit octahedral directions (R, G), tangent sign in A.
    Octahedral,
    /// A normal packed into the alpha of a 16-bit positions texel (format
    /// 1.13): `u = 256 * ux + uy`, two 8-bit octahedral coordinates.
    Packed,
}

/// One vertex animation texture as a shader sees it.
#[derive(Debug, Clone, Copy)]
pub struct VatTextureView<'a> {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Samples per texel in `samples` (3 or 4).
    pub channels: u32,
    /// The samples, row-major, channels interleaved.
    pub samples: VatSamples<'a>,
    /// How to decode them.
    pub decode: VatDecode,
    /// Which rows `samples` holds. `None`: every row, row 0 first. `Some(map)`:
    /// a window of the texture (a reader that decoded only the rows it
    /// needs); row `y` is held at packed row `map[y]`, and a row that maps
    /// to `u32::MAX` (or past the map) is not held and reads as zero
    /// samples, like a texel outside the texture.
    pub rows: Option<&'a [u32]>,
}

/// Where a primitive's vertices live in its textures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VatAddress {
    /// Wrap width (of one column block): vertex `v` is at `x = v mod width`.
    pub width: u32,
    /// Texture rows per frame.
    pub bands: u32,
    /// Timeline rows (frames of all clips).
    pub frames: u32,
    /// The primitive's first vertex in its texture set (the atlas).
    pub first_vertex: u32,
    /// Timeline rows per column block of a folded set; 0: unfolded (every
    /// row in one block).
    pub rows_per_block: u32,
    /// Column blocks side by side on a page of a folded set (0 or 1:
    /// one).
    pub blocks_per_page: u32,
}

impl VatAddress {
    /// Timeline rows per column block (all of them when unfolded) and
    /// column blocks per page (at least one).
    fn folding(&self) -> (u32, u32) {
        let per_block = if self.rows_per_block == 0 {
            u32::MAX
        } else {
            self.rows_per_block
        };
        (per_block, self.blocks_per_page.max(1))
    }

    /// Texel `(page, x, y)` of `vertex` (of the primitive) at timeline row
    /// `row`.
    pub fn texel(&self, vertex: u32, row: u32) -> (u32, u32, u32) {
        let width = self.width.max(1);
        let vertex = vertex.saturating_add(self.first_vertex);
        let (x, band) = (vertex % width, vertex / width);
        let (per_block, per_page) = self.folding();
        let block = row / per_block;
        (
            block / per_page,
            (block % per_page).saturating_mul(width).saturating_add(x),
            (row % per_block)
                .saturating_mul(self.bands)
                .saturating_add(band),
        )
    }

    /// The page and the texture rows (`y`, every band) that hold timeline
    /// row `row`: what a reader must have decoded to fetch any vertex of
    /// the set at that row.
    pub fn texture_rows(&self, row: u32) -> (u32, std::ops::Range<u32>) {
        let (page, _, first) = VatAddress {
            first_vertex: 0,
            ..*self
        }
        .texel(0, row);
        (page, first..first.saturating_add(self.bands.max(1)))
    }
}

/// `q / max` as a shader's UNORM read gives it.
fn unorm(q: u16, max: u16) -> f32 {
    f32::from(q) / f32::from(max)
}

/// The documented octahedral decode of `e` in `[-1, 1]^2`, normalised.
pub fn octahedral_decode(e: Vec2) -> Vec3 {
    let mut n = Vec3::new(e.x, e.y, 1.0 - e.x.abs() - e.y.abs());
    if n.z < 0.0 {
        let s = |a: f32| if a >= 0.0 { 1.0 } else { -1.0 };
        let (x, y) = (n.x, n.y);
        n.x = (1.0 - y.abs()) * s(x);
        n.y = (1.0 - x.abs()) * s(y);
    }
    safe_normalize(n)
}

impl<'a> VatTextureView<'a> {
    /// The raw samples of texel `(x, y)` (zeros outside, or missing
    /// channels), as floats for float textures and `q` for unorm16 ones.
    #[inline(always)]
    fn raw(&self, x: u32, y: u32) -> ([f32; 4], [u16; 4]) {
        let (mut f, mut q) = ([0.0f32; 4], [0u16; 4]);
        if x >= self.width || y >= self.height {
            return (f, q);
        }
        let y = match self.rows {
            None => y,
            Some(map) => match map.get(y as usize) {
                Some(&packed) if packed != u32::MAX => packed,
                _ => return (f, q),
            },
        };
        let channels = self.channels.min(4) as usize;
        let at = (y as usize * self.width as usize + x as usize) * channels;
        match self.samples {
            VatSamples::Float(s) => {
                if let Some(t) = s.get(at..at + channels) {
                    f[..channels].copy_from_slice(t);
                }
            }
            VatSamples::Unorm16(s) | VatSamples::Unorm(s, _) => {
                if let Some(t) = s.get(at..at + channels) {
                    q[..channels].copy_from_slice(t);
                }
            }
        }
        (f, q)
    }

    /// Texel `(x, y)` decoded to values; outside the texture the samples
    /// read as zero before decoding, as `Texture.Load` returns them.
    #[inline(always)]
    pub fn load(&self, x: u32, y: u32) -> Vec4 {
        let (f, q) = self.raw(x, y);
        let m = match self.samples {
            VatSamples::Float(_) => return Vec4::from_array(f),
            VatSamples::Unorm16(_) => [u16::MAX; 4],
            VatSamples::Unorm(_, max) => max,
        };
        let u = [
            unorm(q[0], m[0]),
            unorm(q[1], m[1]),
            unorm(q[2], m[2]),
            unorm(q[3], m[3]),
        ];
        match self.decode {
            VatDecode::Bounds { min, max } => Vec4::new(
                min[0] + u[0] * (max[0] - min[0]),
                min[1] + u[1] * (max[1] - min[1]),
                min[2] + u[2] * (max[2] - min[2]),
                min[3] + u[3] * (max[3] - min[3]),
            ),
            VatDecode::Octahedral => {
                let e = Vec2::new(u[0] * 2.0 - 1.0, u[1] * 2.0 - 1.0);
                octahedral_decode(e).extend(u[3] * 2.0 - 1.0)
            }
            VatDecode::Packed => {
                // As the shader: the code back from the UNORM value, then
                // its two bytes (16-bit samples only).
                let code = (u[3] * 65535.0).round();
                let ux = (code / 256.0).floor();
                let uy = code - ux * 256.0;
                let e = Vec2::new(ux / 255.0 * 2.0 - 1.0, uy / 255.0 * 2.0 - 1.0);
                octahedral_decode(e).extend(1.0)
            }
            VatDecode::Float => Vec4::from_array(u),
        }
    }
}

/// The value of `vertex` at timeline row `row` in the pages of one stream
/// (one view per page; an unfolded stream has one). A page the set does not
/// have reads as zero samples, as an unbound texture would.
pub fn fetch(pages: &[VatTextureView<'_>], address: &VatAddress, vertex: u32, row: u32) -> Vec4 {
    fetch_texel(pages, address.texel(vertex, row))
}

/// The value at texel `(page, x, y)` of one stream's pages (zero on a
/// page the set does not have).
#[inline(always)]
pub fn fetch_texel(pages: &[VatTextureView<'_>], (page, x, y): (u32, u32, u32)) -> Vec4 {
    match pages.get(page as usize) {
        Some(view) => view.load(x, y),
        None => Vec4::ZERO,
    }
}

/// The values of `vertex` at timeline row `row`: the position and the
/// normal (zero without `normals`) as stored, before the frame lerp.
pub fn row_values(
    address: &VatAddress,
    positions: &[VatTextureView<'_>],
    normals: Option<&[VatTextureView<'_>]>,
    vertex: u32,
    row: u32,
) -> RowValues {
    let texel = address.texel(vertex, row);
    (
        fetch_texel(positions, texel).truncate(),
        normals.map_or(Vec3::ZERO, |tex| fetch_texel(tex, texel).truncate()),
    )
}

/// One vertex through the VAT shader: `vertex` its index in the primitive,
/// `rest_position` / `rest_normal` what the playback mesh holds (returned
/// when the state is disabled). The normal is produced when `normals` is
/// given.
pub fn deform_vertex(
    address: &VatAddress,
    positions: &[VatTextureView<'_>],
    normals: Option<&[VatTextureView<'_>]>,
    state: &GpuState,
    vertex: u32,
    rest_position: Vec3,
    rest_normal: Option<Vec3>,
) -> RuntimeVertex {
    if !state.enabled {
        return RuntimeVertex {
            position: rest_position,
            normal: rest_normal,
        };
    }
    let last_row = address.frames.saturating_sub(1);
    blend_rows(state, last_row, normals.is_some(), |row| {
        row_values(address, positions, normals, vertex, row)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_addressing_and_float_lerp() {
        // 5 vertices, width 2 -> 3 bands, 2 frames: height 6. Value = (v, row, 0).
        let address = VatAddress {
            width: 2,
            bands: 3,
            frames: 2,
            ..VatAddress::default()
        };
        assert_eq!(address.texel(4, 1), (0, 0, 5));
        assert_eq!(address.texel(3, 0), (0, 1, 1));
        let mut data = vec![0.0f32; 2 * 6 * 3];
        for row in 0..2u32 {
            for v in 0..5u32 {
                let (_, x, y) = address.texel(v, row);
                let at = ((y * 2 + x) * 3) as usize;
                data[at..at + 3].copy_from_slice(&[v as f32, row as f32, 0.0]);
            }
        }
        let tex = VatTextureView {
            width: 2,
            height: 6,
            channels: 3,
            samples: VatSamples::Float(&data),
            decode: VatDecode::Float,
            rows: None,
        };
        // (row state, vertex, expected position); the last row's next row
        // is itself.
        for (row, vertex, expected) in [
            ([1.0, 0.25, 0.0, 0.0], 3, Vec3::new(3.0, 0.25, 0.0)),
            ([1.0, 0.5, 1.0, 0.0], 4, Vec3::new(4.0, 1.0, 0.0)),
        ] {
            let state = GpuState {
                rows: [row, [0.0; 4], [0.0; 4], [0.0; 4]],
                enabled: true,
            };
            let v = deform_vertex(
                &address,
                std::slice::from_ref(&tex),
                None,
                &state,
                vertex,
                Vec3::ZERO,
                None,
            );
            assert_eq!(v.position, expected);
        }
    }

    /// The walk gives every vertex [`VatAddress::texel`]'s texel: plain,
    /// wrapped, offset in an atlas, folded and paged, and where
    /// coordinates saturate (the walk then steps aside).
    #[test]
    fn folded_and_paged_addressing_reads_the_right_page() {
        // 3 vertices, width 2 (2 bands), 5 frames, 2 rows per block, 2
        // blocks per page: rows 0-3 on page 0, row 4 on page 1.
        let address = VatAddress {
            width: 2,
            bands: 2,
            frames: 5,
            first_vertex: 0,
            rows_per_block: 2,
            blocks_per_page: 2,
        };
        assert_eq!(address.texel(2, 3), (0, 2, 2 + 1));
        assert_eq!(address.texel(1, 4), (1, 1, 0));
        let (w, h) = (4u32, 4u32);
        let mut pages = vec![vec![0.0f32; (w * h * 3) as usize]; 2];
        for row in 0..5u32 {
            for v in 0..3u32 {
                let (p, x, y) = address.texel(v, row);
                let at = ((y * w + x) * 3) as usize;
                pages[p as usize][at..at + 3].copy_from_slice(&[v as f32, row as f32, 1.0]);
            }
        }
        let views: Vec<_> = pages
            .iter()
            .map(|d| VatTextureView {
                width: w,
                height: h,
                channels: 3,
                samples: VatSamples::Float(d),
                decode: VatDecode::Float,
                rows: None,
            })
            .collect();
        // Row 3 lerps into row 4, which is on the next page.
        let state = GpuState {
            rows: [[1.0, 0.5, 3.0, 0.0], [0.0; 4], [0.0; 4], [0.0; 4]],
            enabled: true,
        };
        let v = deform_vertex(&address, &views, None, &state, 2, Vec3::ZERO, None);
        assert_eq!(v.position, Vec3::new(2.0, 3.5, 1.0));
        // A missing page reads as zero.
        assert_eq!(fetch(&views[..1], &address, 0, 4), Vec4::ZERO);
    }

    #[test]
    fn png16_decodes_bounds_and_octahedral_as_documented() {
        let bounds = VatTextureView {
            width: 1,
            height: 1,
            channels: 3,
            samples: VatSamples::Unorm16(&[0, 65535, 32768]),
            decode: VatDecode::Bounds {
                min: [-2.0, 1.0, 0.0, 0.0],
                max: [2.0, 3.0, 1.0, 0.0],
            },
            rows: None,
        };
        let v = bounds.load(0, 0);
        assert_eq!(v.truncate(), Vec3::new(-2.0, 3.0, 32768.0 / 65535.0));
        // Octahedral: the writer's encoding of a few directions decodes back.
        use crate::runtime::math::safe_normalize as unit;
        for d in [
            Vec3::Z,
            -Vec3::Z,
            Vec3::new(0.6, -0.48, -0.64),
            Vec3::new(-0.36, 0.48, 0.8),
        ] {
            let d = unit(d);
            let l1 = d.x.abs() + d.y.abs() + d.z.abs();
            let (x, y) = (d.x / l1, d.y / l1);
            let s = |a: f32| if a >= 0.0 { 1.0 } else { -1.0 };
            let e = if d.z >= 0.0 {
                Vec2::new(x, y)
            } else {
                Vec2::new((1.0 - y.abs()) * s(x), (1.0 - x.abs()) * s(y))
            };
            let q = |a: f32| (((a + 1.0) / 2.0) * 65535.0).round() as u16;
            let samples = [q(e.x), q(e.y), 0, 65535];
            let tex = VatTextureView {
                width: 1,
                height: 1,
                channels: 4,
                samples: VatSamples::Unorm16(&samples),
                decode: VatDecode::Octahedral,
                rows: None,
            };
            let got = tex.load(0, 0);
            assert!(got.truncate().angle_between(d).to_degrees() < 0.01, "{d}");
            assert_eq!(got.w, 1.0);
        }
        // Outside the texture the samples read as zero (like `Texture.Load`),
        // which decode to the minimum, as on a GPU.
        assert_eq!(bounds.load(3, 0), Vec4::new(-2.0, 1.0, 0.0, 0.0));
    }
}
