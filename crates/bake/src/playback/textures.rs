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
use rigbake_format::texture::gpu::{self, GpuSamples, TextureContainer};
use rigbake_format::texture::gpu_spec::{GpuSpec, SampleType};
use rigbake_format::texture::{exr, exr_rows, png};

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
    /// The last layered KTX2/DDS file decoded (its name and samples): a
    /// folded stream's pages are layers of one file, read and decoded once
    /// for all of them.
    pub layered: Option<(String, std::sync::Arc<GpuSamples>)>,
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

/// What the model's own data needs of one texture file: its texels, and
/// the numbers they come from (for messages).
#[derive(Debug, Clone, Default)]
pub(super) struct Need {
    /// RGBA texels the data fills (vertices x frames, or matrix columns x
    /// rows).
    pub texels: u64,
    /// Vertices of the primitives served (0 for a bone texture).
    pub vertices: u64,
    /// Timeline rows.
    pub rows: u64,
}

/// How many times the texels a model's data fills a GPU texture may hold
/// (bands, power-of-two padding and partly filled folded pages stay well
/// within it).
pub const GPU_TEXTURE_SLACK: u64 = 32;

/// Texels any GPU texture may hold whatever the model (a small model's
/// padded texture always fits).
pub const GPU_TEXTURE_FLOOR_TEXELS: u64 = 1 << 20;

impl Need {
    /// The most bytes a KTX2 or DDS read may allocate for this need
    /// ([`gpu::decoded_bytes`]: at most 32 bytes a texel, decompressed and
    /// widened).
    fn limit(&self) -> u64 {
        self.texels
            .saturating_mul(GPU_TEXTURE_SLACK)
            .saturating_add(GPU_TEXTURE_FLOOR_TEXELS)
            .saturating_mul(32)
    }

    /// What the need is, for messages.
    fn describe(&self) -> String {
        if self.vertices > 0 {
            format!(
                "{} vertices x {} rows need {} texels",
                self.vertices, self.rows, self.texels
            )
        } else {
            format!(
                "bone matrix columns x {} rows need {} texels",
                self.rows, self.texels
            )
        }
    }
}

/// Checks that a KTX2 or DDS texture of `spec` decodes to no more than
/// what the model's data `need`s, before its file is read.
fn check_need(
    file: &Path,
    name: &str,
    container: TextureContainer,
    (spec, need): (&GpuSpec, &Need),
) -> Result<(), LoadError> {
    let cost = gpu::decoded_bytes(container, spec);
    if cost <= need.limit() {
        return Ok(());
    }
    Err(LoadError::Damaged(format!(
        "{}: texture `{name}`: the records say {} x {} x {} texels, which decode to {cost} bytes, but the model's {} (at most {} bytes decoded)",
        file.display(),
        spec.width,
        spec.height,
        spec.layers,
        need.describe(),
        need.limit()
    )))
}

/// Decodes a KTX2 or DDS texture of the bake's `container`, its header
/// checked against `spec` (an error names the file, the texture and the
/// field) and its decoded size against what the model's data `need`s
/// ([`check_need`], made before the file was read).
fn gpu_samples(
    file: &Path,
    name: &str,
    bytes: &[u8],
    container: TextureContainer,
    (spec, need): (&GpuSpec, &Need),
) -> Result<GpuSamples, LoadError> {
    gpu::read_within(bytes, container, spec, need.limit())
        .map_err(|e| LoadError::Damaged(format!("{}: texture `{name}`: {e}", file.display())))
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
    need: &Need,
) -> Result<BoneTexture, LoadError> {
    let file = reader.file;
    let (w, h) = (tex.width as usize, tex.height as usize);
    let container = reader.container.records().texture_container();
    let spec = GpuSpec {
        width: w,
        height: h,
        layers: 1,
        sample: SampleType::of_precision(tex.precision),
    };
    if !container.is_exr() {
        check_need(file, &tex.name, container, (&spec, need))?;
    }
    let bytes = reader.bytes(&tex.name, tex.storage, tex.bytes, tex.crc32)?;
    let unorm = tex.precision == rigbake_format::texture::Precision::Unorm16;
    let damaged = |e: &dyn std::fmt::Display| {
        LoadError::Damaged(format!("{}: texture `{}`: {e}", file.display(), tex.name))
    };
    let texels = if container.is_exr() && unorm {
        let d = png::read_expecting(Cursor::new(bytes), w, h).map_err(|e| damaged(&e))?;
        if (d.width, d.height) != (w, h) {
            return Err(size_error(
                file,
                &tex.name,
                (d.width, d.height),
                (tex.width, tex.height),
            ));
        }
        if d.channels != 4 {
            return Err(damaged(&format!("{} channels, not RGBA", d.channels)));
        }
        unorm_texels(&d.samples)
    } else if container.is_exr() {
        let decoded = exr::read_expecting(Cursor::new(bytes), w, h).map_err(|e| {
            LoadError::Damaged(format!("{}: texture `{}`: {e}", file.display(), tex.name))
        })?;
        if (decoded.width, decoded.height) != (w, h) {
            return Err(size_error(
                file,
                &tex.name,
                (decoded.width, decoded.height),
                (tex.width, tex.height),
            ));
        }
        decoded.data
    } else {
        match gpu_samples(file, &tex.name, &bytes, container, (&spec, need))? {
            GpuSamples::Float(texels) if !unorm => texels,
            GpuSamples::Unorm16(samples) if unorm => unorm_texels(&samples),
            _ => return Err(damaged(&"its samples are not of the recorded precision")),
        }
    };
    Ok(BoneTexture {
        width: tex.width,
        height: tex.height,
        rows: tex.height,
        fold: rigbake_core::fold::Fold::unfolded(tex.width, 1, tex.height),
        layout: tex.layout,
        texels,
        max_error: tex.max_error,
        space_node,
        range: None,
    })
}

/// 16-bit normalised samples as a GPU reads them: `sample / 65535`.
fn unorm_texels(samples: &[u16]) -> Vec<f32> {
    samples
        .iter()
        .map(|&s| f32::from(s) / rigbake_types::qts::UNORM_MAX)
        .collect()
}

/// Stored samples of a VAT texture, shared (an atlas serves every
/// primitive of a model; clones share the samples).
#[derive(Debug, Clone)]
enum Samples {
    Float(std::sync::Arc<[f32]>),
    Unorm16(std::sync::Arc<[u16]>),
    /// `unorm8` or `unorm10` codes and each channel's largest code.
    Unorm(std::sync::Arc<[u16]>, [u16; 4]),
}

/// A vertex animation texture: decoded whole, or a window of its rows
/// (`rows`), or not decoded yet (`deferred`, an empty window): a deferred
/// texture's rows are decoded on demand by [`VatTexture::with_rows`].
#[derive(Debug, Clone)]
pub struct VatTexture {
    width: u32,
    height: u32,
    channels: u32,
    samples: Samples,
    /// `None`: `samples` holds every row. `Some(map)`: row `y` is packed
    /// row `map[y]` (`u32::MAX`: not held).
    rows: Option<std::sync::Arc<[u32]>>,
    decode: VatDecode,
    /// Where the rows are read from when the texture was loaded deferred.
    deferred: Option<std::sync::Arc<Deferred>>,
    /// Recorded encoding error: model units (positions) or degrees.
    pub max_error: f64,
}

/// A texture file whose rows are read when they are needed
/// ([`Decode::Rows`]): an EXR beside the container.
#[derive(Debug)]
pub(super) struct Deferred {
    /// The container (for messages).
    file: std::path::PathBuf,
    /// The texture's name in the records.
    name: String,
    /// The texture file.
    path: std::path::PathBuf,
    /// Its size, bounding every read.
    bytes: u64,
}

/// How [`super::load_with`] decodes vertex animation textures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decode {
    /// Every texture whole, at load.
    Whole,
    /// EXR files beside the container only when rows are asked for
    /// ([`super::VatPlayback::window`]): their headers, sizes and
    /// checksums are checked at load, their pixels read later, row by row.
    /// Embedded textures, PNG16, KTX2 and DDS are decoded whole.
    Rows,
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
                Samples::Unorm(v, max) => VatSamples::Unorm(v, *max),
            },
            decode: self.decode,
            rows: self.rows.as_deref(),
        }
    }

    /// Height in texels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Whether the texture's rows are read on demand.
    pub fn is_deferred(&self) -> bool {
        self.deferred.is_some()
    }

    /// Bytes one texture row takes decoded.
    pub fn row_bytes(&self) -> u64 {
        u64::from(self.width) * u64::from(self.channels) * 4
    }

    /// An identity for the file a deferred texture reads (an atlas is one
    /// file for every primitive); `None` when not deferred.
    pub(super) fn deferred_key(&self) -> Option<usize> {
        self.deferred
            .as_ref()
            .map(|d| std::sync::Arc::as_ptr(d) as usize)
    }

    /// This texture holding rows `ys` (sorted, distinct) decoded: read from
    /// its file when deferred, else the texture as it is.
    pub fn with_rows(&self, ys: &[u32]) -> Result<VatTexture, LoadError> {
        let Some(d) = &self.deferred else {
            return Ok(self.clone());
        };
        let damaged = |e: &dyn std::fmt::Display| {
            LoadError::Damaged(format!("{}: texture `{}`: {e}", d.file.display(), d.name))
        };
        let ys: Vec<u32> = ys.iter().copied().filter(|&y| y < self.height).collect();
        let (file, _) =
            rigbake_format::fsread::open_regular(&d.path, d.bytes.saturating_add(1 << 20))
                .map_err(|e| damaged(&e))?;
        let samples = exr_rows::read_rows(
            BufReader::new(file),
            self.width as usize,
            self.height as usize,
            &ys,
            self.channels as usize,
        )
        .map_err(|e| damaged(&e))?;
        let mut map = vec![u32::MAX; self.height as usize];
        for (k, &y) in ys.iter().enumerate() {
            map[y as usize] = k as u32;
        }
        Ok(VatTexture {
            samples: Samples::Float(samples),
            rows: Some(map.into()),
            ..self.clone()
        })
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

/// How a VAT texture's 16-bit samples decode (bounds or octahedral).
fn unorm_decode(file: &Path, tex: &meta::VatTextureMeta) -> Result<VatDecode, LoadError> {
    let directions = tex.stream != VatStream::Positions;
    match tex.direction_encoding {
        DirectionEncoding::Octahedral if directions => return Ok(VatDecode::Octahedral),
        // The normals record of packed normals names the positions file.
        DirectionEncoding::Packed if tex.stream == VatStream::Normals => {
            return Ok(VatDecode::Packed);
        }
        _ => {}
    }
    let [min, max] = tex.bounds.ok_or_else(|| {
        LoadError::Damaged(format!(
            "{}: normalised texture `{}` records no bounds to decode it with",
            file.display(),
            tex.name
        ))
    })?;
    Ok(VatDecode::Bounds { min, max })
}

/// Keeps the first `channels` of every RGBA texel (RGB streams keep three
/// samples per texel: a quarter less memory).
fn keep_channels<T: Copy>(rgba: Vec<T>, channels: u32) -> Vec<T> {
    if channels == 4 {
        return rgba;
    }
    let keep = channels as usize;
    let mut out = Vec::with_capacity(rgba.len() / 4 * keep);
    for texel in rgba.chunks_exact(4) {
        out.extend_from_slice(&texel[..keep]);
    }
    out
}

/// Decodes layer `layer.0` of the `layer.1` layers of a KTX2 or DDS VAT
/// file (its pages are the layers of one file).
fn gpu_vat_texture(
    reader: &mut TextureReader<'_>,
    tex: &meta::VatTextureMeta,
    container: TextureContainer,
    (layer, layers): (u32, u32),
    need: &Need,
) -> Result<VatTexture, LoadError> {
    let file = reader.file;
    let spec = GpuSpec {
        width: tex.width as usize,
        height: tex.height as usize,
        layers: layers.max(1) as usize,
        sample: rigbake_format::vat::sample_type(tex.encoding),
    };
    let samples = match &reader.layered {
        Some((name, samples)) if layers > 1 && *name == tex.name => samples.clone(),
        _ => {
            check_need(file, &tex.name, container, (&spec, need))?;
            let bytes = reader.bytes(&tex.name, tex.storage, tex.bytes, tex.crc32)?;
            let samples = std::sync::Arc::new(gpu_samples(
                file,
                &tex.name,
                &bytes,
                container,
                (&spec, need),
            )?);
            if layers > 1 {
                reader.layered = Some((tex.name.clone(), samples.clone()));
            }
            samples
        }
    };
    let page = tex.width as usize * tex.height as usize * 4;
    let range = layer as usize * page..(layer as usize + 1) * page;
    let channels = u32::from(tex.channels.clamp(3, 4));
    let no_layer = || {
        LoadError::Damaged(format!(
            "{}: texture `{}` has no layer {layer}",
            file.display(),
            tex.name
        ))
    };
    let (samples, decode) = match &*samples {
        GpuSamples::Float(v) => (
            Samples::Float(
                keep_channels(v.get(range).ok_or_else(no_layer)?.to_vec(), channels).into(),
            ),
            VatDecode::Float,
        ),
        GpuSamples::Unorm16(v) => (
            Samples::Unorm16(
                keep_channels(v.get(range).ok_or_else(no_layer)?.to_vec(), channels).into(),
            ),
            unorm_decode(file, tex)?,
        ),
        GpuSamples::Unorm { codes, max } => (
            Samples::Unorm(
                keep_channels(codes.get(range).ok_or_else(no_layer)?.to_vec(), channels).into(),
                *max,
            ),
            unorm_decode(file, tex)?,
        ),
    };
    Ok(VatTexture {
        width: tex.width,
        height: tex.height,
        channels,
        samples,
        decode,
        max_error: tex.max_error,
        rows: None,
        deferred: None,
    })
}

/// Reads and decodes a vertex animation texture: page `layer.0` of the
/// `layer.1` pages of its stream (the layer of a KTX2 or DDS file; EXR and
/// PNG files hold one page each); a KTX2 or DDS file decodes to no more
/// than the stream's `need` allows.
pub(super) fn vat_texture(
    reader: &mut TextureReader<'_>,
    tex: &meta::VatTextureMeta,
    layer: (u32, u32),
    decode: Decode,
    need: &Need,
) -> Result<VatTexture, LoadError> {
    let file = reader.file;
    let container = reader.container.records().texture_container();
    if !container.is_exr() {
        return gpu_vat_texture(reader, tex, container, layer, need);
    }
    let exr_file = matches!(tex.encoding, VatEncoding::Exr32 | VatEncoding::Exr16)
        && tex.storage == Storage::File;
    if decode == Decode::Rows && exr_file {
        return deferred_exr(reader, tex);
    }
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
            let channels = u32::from(tex.channels.clamp(3, 4));
            let data = keep_channels(d.data, channels);
            Ok(VatTexture {
                width: tex.width,
                height: tex.height,
                channels,
                samples: Samples::Float(data.into()),
                decode: VatDecode::Float,
                max_error: tex.max_error,
                rows: None,
                deferred: None,
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
            let decode = unorm_decode(file, tex)?;
            Ok(VatTexture {
                width: tex.width,
                height: tex.height,
                channels: u32::from(tex.channels),
                samples: Samples::Unorm16(d.samples.into()),
                decode,
                max_error: tex.max_error,
                rows: None,
                deferred: None,
            })
        }
        // The container check refuses these without KTX2 or DDS.
        VatEncoding::Unorm8 | VatEncoding::Unorm10 => Err(LoadError::Damaged(format!(
            "{}: texture `{}` is {:?}, which only KTX2 and DDS hold",
            file.display(),
            tex.name,
            tex.encoding
        ))),
    }
}

/// A VAT EXR beside the container, checked (regular file, recorded size and
/// CRC-32 streamed, header against the records) but not decoded: its rows
/// are read by [`VatTexture::with_rows`].
fn deferred_exr(
    reader: &mut TextureReader<'_>,
    tex: &meta::VatTextureMeta,
) -> Result<VatTexture, LoadError> {
    let file = reader.file;
    let path = reader.dir.join(&tex.name);
    let limit = tex.bytes.saturating_add(1 << 20);
    let damaged = |e: &dyn std::fmt::Display| {
        LoadError::Damaged(format!("{}: texture `{}`: {e}", file.display(), tex.name))
    };
    let channels = u32::from(tex.channels.clamp(3, 4));
    // The bound a whole decode has, so that no window (nor its row map)
    // is sized past it.
    rigbake_format::texture::check_decoded_size(
        tex.width as usize,
        tex.height as usize,
        channels as usize * 4,
    )
    .map_err(|e| damaged(&e))?;
    let (len, crc) =
        rigbake_format::fsread::checksum_regular(&path, limit).map_err(|e| damaged(&e))?;
    if len != tex.bytes || crc != tex.crc32 {
        reader.mismatches.push(format!(
            "{}: size or checksum differs from the metadata (the texture changed after the bake)",
            path.display()
        ));
    }
    let (header, _) =
        rigbake_format::fsread::open_regular(&path, limit).map_err(|e| damaged(&e))?;
    exr_rows::check_header(
        BufReader::new(header),
        tex.width as usize,
        tex.height as usize,
    )
    .map_err(|e| damaged(&e))?;
    Ok(VatTexture {
        width: tex.width,
        height: tex.height,
        channels,
        samples: Samples::Float(Vec::new().into()),
        rows: Some(Vec::new().into()),
        decode: VatDecode::Float,
        deferred: Some(std::sync::Arc::new(Deferred {
            file: file.to_path_buf(),
            name: tex.name.clone(),
            path,
            bytes: len,
        })),
        max_error: tex.max_error,
    })
}
