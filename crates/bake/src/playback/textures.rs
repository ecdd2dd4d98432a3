//! Reading a bake's textures (embedded sections or files beside the
//! container) and decoding them into the runtime reference's views.
//!
//! Embedded textures are checked by the container's section checksum (a
//! mismatch is an error). Files beside the container are compared with the
//! recorded size and CRC-32; a mismatch is recorded, not fatal, so that a
//! damaged texture can still be played and its damage measured.

use std::io::{BufReader, Cursor};
use std::path::Path;

use rigbake_core::runtime::vat_path::{VatDecode, VatSamples, VatTextureView};
use rigbake_format::container::Container;
use rigbake_format::meta::{self, DirectionEncoding, Storage, VatEncoding, VatStream};
use rigbake_format::texture::{exr, png};

use super::{BoneTexture, LoadError};

type FileContainer = Container<BufReader<std::fs::File>>;

/// Reads textures of one bake, collecting checksum mismatches of files.
pub(super) struct TextureReader<'a> {
    /// The container file (for messages).
    pub file: &'a Path,
    /// The folder texture files live in.
    pub dir: &'a Path,
    /// The opened container (for embedded textures).
    pub container: &'a mut FileContainer,
    /// Texture files whose bytes differ from the recorded size or CRC.
    pub mismatches: Vec<String>,
}

impl TextureReader<'_> {
    /// The encoded bytes of the texture `name` stored as `storage`.
    fn bytes(
        &mut self,
        name: &str,
        storage: Storage,
        bytes: u64,
        crc32: u32,
    ) -> Result<Vec<u8>, LoadError> {
        match storage {
            Storage::Section(i) => self.container.read_section(i as usize).map_err(|e| {
                LoadError::Damaged(format!("{}: texture `{name}`: {e}", self.file.display()))
            }),
            Storage::File => {
                let path = self.dir.join(name);
                // Only a regular file, and not much more than recorded (a
                // slightly damaged texture can still be played and measured).
                let data =
                    rigbake_format::fsread::read_regular(&path, bytes.saturating_add(1 << 20))
                        .map_err(|e| {
                            LoadError::Damaged(format!(
                                "{}: texture `{name}`: {e}",
                                self.file.display()
                            ))
                        })?;
                if data.len() as u64 != bytes || crc32fast::hash(&data) != crc32 {
                    self.mismatches.push(format!(
                        "{}: size or checksum differs from the metadata (the texture changed after the bake)",
                        path.display()
                    ));
                }
                Ok(data)
            }
        }
    }
}

fn size_error(file: &Path, name: &str, got: (usize, usize), want: (u32, u32)) -> LoadError {
    LoadError::Damaged(format!(
        "{}: texture `{name}` is {} x {} but the metadata says {} x {}",
        file.display(),
        got.0,
        got.1,
        want.0,
        want.1
    ))
}

/// Reads and decodes a bone-matrix texture.
pub(super) fn bone_texture(
    reader: &mut TextureReader<'_>,
    tex: &meta::TextureMeta,
    space_node: usize,
) -> Result<BoneTexture, LoadError> {
    let file = reader.file;
    let bytes = reader.bytes(&tex.name, tex.storage, tex.bytes, tex.crc32)?;
    let (w, h) = (tex.width as usize, tex.height as usize);
    let decoded = exr::read_expecting(Cursor::new(bytes), w, h).map_err(|e| {
        LoadError::Damaged(format!("{}: texture `{}`: {e}", file.display(), tex.name))
    })?;
    if (decoded.width, decoded.height) != (tex.width as usize, tex.height as usize) {
        return Err(size_error(
            file,
            &tex.name,
            (decoded.width, decoded.height),
            (tex.width, tex.height),
        ));
    }
    Ok(BoneTexture {
        width: tex.width,
        height: tex.height,
        rows: tex.height,
        fold: rigbake_core::fold::Fold::unfolded(tex.width, 1, tex.height),
        layout: tex.layout,
        texels: decoded.data,
        max_error: tex.max_error,
        space_node,
    })
}

/// Stored samples of a VAT texture, shared (an atlas serves every
/// primitive of a model; clones share the samples).
#[derive(Debug, Clone)]
enum Samples {
    Float(std::sync::Arc<[f32]>),
    Unorm16(std::sync::Arc<[u16]>),
}

/// A decoded vertex animation texture.
#[derive(Debug, Clone)]
pub struct VatTexture {
    width: u32,
    height: u32,
    channels: u32,
    samples: Samples,
    decode: VatDecode,
    /// Recorded encoding error: model units (positions) or degrees.
    pub max_error: f64,
}

impl VatTexture {
    /// The view the runtime reference reads.
    pub fn view(&self) -> VatTextureView<'_> {
        VatTextureView {
            width: self.width,
            height: self.height,
            channels: self.channels,
            samples: match &self.samples {
                Samples::Float(v) => VatSamples::Float(v),
                Samples::Unorm16(v) => VatSamples::Unorm16(v),
            },
            decode: self.decode,
        }
    }
}

/// The pages of one VAT stream (one texture each; an unfolded stream has
/// one), in order.
#[derive(Debug, Clone)]
pub struct VatPages {
    /// Page `k` is `pages[k]`.
    pub pages: Vec<VatTexture>,
}

impl VatPages {
    /// One view per page, as the runtime reference reads them.
    pub fn views(&self) -> Vec<VatTextureView<'_>> {
        self.pages.iter().map(VatTexture::view).collect()
    }

    /// The largest recorded encoding error over the pages.
    pub fn max_error(&self) -> f64 {
        self.pages.iter().map(|p| p.max_error).fold(0.0, f64::max)
    }
}

/// Reads and decodes a vertex animation texture.
pub(super) fn vat_texture(
    reader: &mut TextureReader<'_>,
    tex: &meta::VatTextureMeta,
) -> Result<VatTexture, LoadError> {
    let file = reader.file;
    let bytes = reader.bytes(&tex.name, tex.storage, tex.bytes, tex.crc32)?;
    let failed = |e: rigbake_format::FormatError| {
        LoadError::Damaged(format!("{}: texture `{}`: {e}", file.display(), tex.name))
    };
    let want = (tex.width, tex.height);
    match tex.encoding {
        VatEncoding::Exr32 | VatEncoding::Exr16 => {
            let d = exr::read_expecting(Cursor::new(bytes), want.0 as usize, want.1 as usize)
                .map_err(failed)?;
            if (d.width, d.height) != (want.0 as usize, want.1 as usize) {
                return Err(size_error(file, &tex.name, (d.width, d.height), want));
            }
            // RGB streams keep three floats per texel (a quarter less memory).
            let channels = u32::from(tex.channels.clamp(3, 4));
            let data = if channels == 3 {
                d.data
                    .chunks_exact(4)
                    .flat_map(|t| [t[0], t[1], t[2]])
                    .collect()
            } else {
                d.data
            };
            Ok(VatTexture {
                width: tex.width,
                height: tex.height,
                channels,
                samples: Samples::Float(data.into()),
                decode: VatDecode::Float,
                max_error: tex.max_error,
            })
        }
        VatEncoding::Png16 => {
            let d = png::read_expecting(Cursor::new(bytes), want.0 as usize, want.1 as usize)
                .map_err(failed)?;
            if (d.width, d.height) != (want.0 as usize, want.1 as usize) {
                return Err(size_error(file, &tex.name, (d.width, d.height), want));
            }
            if d.channels != usize::from(tex.channels) {
                return Err(LoadError::Damaged(format!(
                    "{}: texture `{}` has {} channels but the metadata says {}",
                    file.display(),
                    tex.name,
                    d.channels,
                    tex.channels
                )));
            }
            let octahedral = tex.stream != VatStream::Positions
                && tex.direction_encoding == DirectionEncoding::Octahedral;
            let decode = if octahedral {
                VatDecode::Octahedral
            } else {
                let [min, max] = tex.bounds.ok_or_else(|| {
                    LoadError::Damaged(format!(
                        "{}: PNG texture `{}` records no bounds to decode it with",
                        file.display(),
                        tex.name
                    ))
                })?;
                VatDecode::Bounds { min, max }
            };
            Ok(VatTexture {
                width: tex.width,
                height: tex.height,
                channels: u32::from(tex.channels),
                samples: Samples::Unorm16(d.samples.into()),
                decode,
                max_error: tex.max_error,
            })
        }
    }
}
