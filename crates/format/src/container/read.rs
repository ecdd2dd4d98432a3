//! Container reader. Opening reads the header, the section table and the
//! metadata section, checking magic, version, lengths and checksums; payloads
//! are read (and checked) only on request. Every size is checked against the
//! real file length before anything is allocated, so damaged or hostile files
//! give errors, never panics or huge allocations.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::{
    ENTRY_LEN, FORMAT_MAJOR, HEADER_LEN, LITTLE_ENDIAN, MAGIC, Section, SectionKind, Version,
    padding,
};
use crate::codec::Record;
use crate::error::{FormatError, Result};
use crate::meta::{
    BoundsMetadata, LayoutMetadata, Metadata, MorphsMetadata, OutputsMetadata, RigMetadata,
    RootMotionMetadata, SourceLocation, Storage, VatCompressionMetadata, VatMetadata,
    WeightsMetadata,
};
use crate::{check, codec};

/// Largest header a reader accepts (future minors may grow it).
const MAX_HEADER_LEN: u32 = 4096;

fn invalid(msg: impl Into<String>) -> FormatError {
    FormatError::Invalid(msg.into())
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// An opened container: header, sections and metadata checked and loaded.
#[derive(Debug)]
pub struct Container<R> {
    reader: R,
    version: Version,
    file_len: u64,
    sections: Vec<Section>,
    metadata: Metadata,
    vat: Option<VatMetadata>,
    weights: Option<WeightsMetadata>,
    rig: Option<RigMetadata>,
    key: Option<String>,
    outputs: Option<OutputsMetadata>,
    bounds: Option<BoundsMetadata>,
    root_motion: Option<RootMotionMetadata>,
    layout: Option<LayoutMetadata>,
    source: Option<SourceLocation>,
    morphs: Option<MorphsMetadata>,
    lods: Option<crate::meta::LodsMetadata>,
    lod_details: Option<crate::meta::LodDetailsMetadata>,
    texture_container: Option<crate::meta::TextureContainerMetadata>,
    placement: Option<crate::meta::PlacementMetadata>,
    vat_compression: Option<VatCompressionMetadata>,
    uv_sets: Option<crate::meta::UvSetsMetadata>,
}

impl Container<BufReader<File>> {
    /// Opens and checks the container at `path` (reads no payload). Only a
    /// regular file is opened (a FIFO or device is refused without blocking,
    /// see [`crate::fsread`]).
    pub fn open(path: &Path) -> Result<Self> {
        let (file, _) = crate::fsread::open_regular(path, u64::MAX)?;
        Self::from_reader(BufReader::new(file))
    }
}

impl<R: Read + Seek> Container<R> {
    /// Checks and loads the header, table and metadata from `reader`.
    pub fn from_reader(mut reader: R) -> Result<Self> {
        let (version, file_len, sections) = read_layout(&mut reader)?;
        let meta_index = single(&sections, SectionKind::Metadata)?
            .ok_or_else(|| invalid("no metadata section"))?;
        let metadata = codec::decode::<crate::meta::Metadata>(&read_checked(
            &mut reader,
            &sections,
            meta_index,
        )?)?;
        let vat = optional(&mut reader, &sections)?;
        let weights = optional(&mut reader, &sections)?;
        let rig = optional(&mut reader, &sections)?;
        let key = match single(&sections, SectionKind::Key)? {
            Some(i) => Some(
                String::from_utf8(read_checked(&mut reader, &sections, i)?)
                    .map_err(|_| invalid("the bake key is not UTF-8"))?,
            ),
            None => None,
        };
        let outputs = optional(&mut reader, &sections)?;
        let bounds = optional(&mut reader, &sections)?;
        let layout = optional(&mut reader, &sections)?;
        let source = optional(&mut reader, &sections)?;
        let morphs = optional(&mut reader, &sections)?;
        let vat_compression = optional(&mut reader, &sections)?;
        let uv_sets = optional(&mut reader, &sections)?;
        let root_motion = optional(&mut reader, &sections)?;
        let lods = optional(&mut reader, &sections)?;
        let lod_details = optional(&mut reader, &sections)?;
        let texture_container = optional(&mut reader, &sections)?;
        let placement = optional(&mut reader, &sections)?;
        let container = Self {
            texture_container,
            placement,
            reader,
            version,
            file_len,
            sections,
            metadata,
            vat,
            weights,
            rig,
            key,
            outputs,
            bounds,
            layout,
            source,
            morphs,
            lods,
            lod_details,
            vat_compression,
            uv_sets,
            root_motion,
        };
        container.check_references()?;
        container.check_records()?;
        Ok(container)
    }

    /// The semantic checks of [`crate::check`], over every record.
    fn check_records(&self) -> Result<()> {
        let folds = self.layout.as_ref().map_or(&[][..], |l| &l.folds[..]);
        let rows = check::metadata_folded(&self.metadata, folds)?;
        if let Some(vat) = &self.vat {
            check::vat(vat, rows, folds)?;
        }
        if let Some(weights) = &self.weights {
            check::weights(weights, self.metadata.skins.len())?;
        }
        if let Some(outputs) = &self.outputs {
            check::outputs(outputs)?;
        }
        if let Some(bounds) = &self.bounds {
            check::bounds(bounds, self.metadata.clips.len())?;
        }
        if let Some(source) = &self.source {
            check::source(source)?;
        }
        if let Some(c) = &self.vat_compression {
            check::vat_compression(c, self.vat.as_ref(), self.texture_container())?;
        }
        if let Some(uv_sets) = &self.uv_sets {
            check::uv_sets(uv_sets)?;
        }
        if let Some(root_motion) = &self.root_motion {
            check::root_motion(root_motion, &self.metadata)?;
        }
        if let Some(lods) = &self.lods {
            check::lods(
                lods,
                self.weights.as_ref().map_or(0, |w| w.primitives.len()),
                self.vat.as_ref().map_or(0, |v| v.primitives.len()),
            )?;
        }
        if let Some(details) = &self.lod_details {
            check::lod_details(details, self.lods.as_ref())?;
        }
        if let Some(t) = &self.texture_container {
            check::texture_container(t, self.vat.as_ref(), self.layout.as_ref())?;
        }
        if let Some(p) = &self.placement {
            check::placement(p, self.metadata.skins.len())?;
        }
        if let Some(rig) = &self.rig {
            check::rig(rig, self.metadata.clips.len(), self.metadata.skins.len())?;
        }
        check::layout(
            self.layout.as_ref(),
            &self.metadata,
            self.vat.as_ref(),
            self.rig.as_ref(),
            rows,
        )?;
        Ok(())
    }

    fn check_references(&self) -> Result<()> {
        let bones = self.metadata.textures.iter().map(|t| (t.storage, t.bytes));
        let vat = self
            .vat
            .iter()
            .flat_map(|v| v.textures.iter().map(|t| (t.storage, t.bytes)));
        for (t, (storage, bytes)) in bones.chain(vat).enumerate() {
            if let Storage::Section(i) = storage {
                match self.sections.get(i as usize) {
                    Some(s) if s.kind == SectionKind::Texture && s.length == bytes => {}
                    _ => {
                        return Err(invalid(format!(
                            "texture {t} refers to section {i}, which is not a texture of {bytes} bytes"
                        )));
                    }
                }
            }
        }
        let weight_primitives = self
            .weights
            .iter()
            .flat_map(|w| w.primitives.iter().map(move |p| (w.channels, p)));
        for (i, (channels, p)) in weight_primitives.enumerate() {
            let expected = u64::from(p.vertices) * u64::from(channels) * 16;
            match self.sections.get(p.section as usize) {
                Some(s) if s.kind == SectionKind::VertexData && s.length == expected => {}
                _ => {
                    return Err(invalid(format!(
                        "weights primitive {} refers to section {}, which is not vertex data of {expected} bytes",
                        i, p.section
                    )));
                }
            }
        }
        if let Some(rig) = &self.rig
            && let Some(i) = rig.anchor_section
        {
            let rows: u64 = self
                .metadata
                .clips
                .iter()
                .map(|c| u64::from(c.frames))
                .sum();
            let expected = rows * rig.anchors.len() as u64 * 64;
            match self.sections.get(i as usize) {
                Some(s) if s.kind == SectionKind::TrackData && s.length == expected => {}
                _ => {
                    return Err(invalid(format!(
                        "the rig record refers to section {i}, which is not track data of {expected} bytes"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The bake key (a digest of the inputs and settings), when recorded.
    pub fn bake_key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The outputs record (files beside the container and their checksums),
    /// when the bake has one (format 1.5 and later).
    pub fn outputs(&self) -> Option<&OutputsMetadata> {
        self.outputs.as_ref()
    }

    /// The animated-bounds record (one box per clip), when the bake has one
    /// (format 1.6 and later).
    pub fn bounds(&self) -> Option<&BoundsMetadata> {
        self.bounds.as_ref()
    }

    /// The root-motion record (the track of clips baked in place), when the
    /// bake has one (format 1.8 and later).
    pub fn root_motion(&self) -> Option<&RootMotionMetadata> {
        self.root_motion.as_ref()
    }

    /// The layout record (VAT atlas placement, folded textures), when the
    /// bake has one (format 1.7 and later).
    pub fn layout(&self) -> Option<&LayoutMetadata> {
        self.layout.as_ref()
    }

    /// Where the source model was, relative to the container (format 1.7
    /// and later).
    pub fn source_location(&self) -> Option<&SourceLocation> {
        self.source.as_ref()
    }

    /// The LOD record (the model's LOD groups and each level's outputs),
    /// when the model has LOD groups (format 1.8 and later).
    pub fn lods(&self) -> Option<&crate::meta::LodsMetadata> {
        self.lods.as_ref()
    }

    /// The LOD detail record (per level, the file it came from and the
    /// influences it keeps), when the model has LOD groups (format 1.9 and
    /// later).
    pub fn lod_details(&self) -> Option<&crate::meta::LodDetailsMetadata> {
        self.lod_details.as_ref()
    }

    /// The container every texture of the bake is in: KTX2 or DDS when the
    /// texture-container record says so (format 1.10 and later), else EXR
    /// (and PNG for `png16` VAT textures).
    pub fn texture_container(&self) -> crate::texture::gpu::TextureContainer {
        self.texture_container
            .as_ref()
            .map_or(crate::texture::gpu::TextureContainer::Exr, |t| t.container)
    }

    /// The placement record (the rest-pose matrices of the bake's spaces
    /// and the lookup UV's encoding), format 1.11 and later.
    pub fn placement(&self) -> Option<&crate::meta::PlacementMetadata> {
        self.placement.as_ref()
    }

    /// How the VAT playback mesh's lookup UV is encoded: as the placement
    /// record says, else (bakes before 1.11) the normalised texel centre.
    pub fn lookup_uv(&self) -> crate::meta::LookupUv {
        self.placement
            .as_ref()
            .map_or(crate::meta::LookupUv::TexelCentre, |p| p.lookup_uv)
    }

    /// The texture-container record, when the bake's textures are KTX2 or
    /// DDS files (format 1.10 and later).
    pub fn texture_container_record(&self) -> Option<&crate::meta::TextureContainerMetadata> {
        self.texture_container.as_ref()
    }

    /// The morphs record (the morph targets the bone-matrix bake dropped),
    /// when the bake dropped any (format 1.7 and later).
    pub fn morphs(&self) -> Option<&MorphsMetadata> {
        self.morphs.as_ref()
    }

    /// How each VAT texture is compressed, when recorded (format 1.6 and
    /// later; older VAT bakes wrote uncompressed EXRs unless `--zip`, and
    /// PNG).
    pub fn vat_compression(&self) -> Option<&VatCompressionMetadata> {
        self.vat_compression.as_ref()
    }

    /// The UV-set record (which TEXCOORD sets of the mesh files hold the
    /// lookup UV and weight pairs), when the bake has one (format 1.7 and
    /// later).
    pub fn uv_sets(&self) -> Option<&crate::meta::UvSetsMetadata> {
        self.uv_sets.as_ref()
    }

    /// The rig record (anchors, props, clip origins), when the bake has one.
    pub fn rig(&self) -> Option<&RigMetadata> {
        self.rig.as_ref()
    }

    /// The bone-weight record, when the bake has one.
    pub fn weights(&self) -> Option<&WeightsMetadata> {
        self.weights.as_ref()
    }

    /// The VAT record, when the bake has one.
    pub fn vat(&self) -> Option<&VatMetadata> {
        self.vat.as_ref()
    }

    /// The container version found in the file.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Total file length in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The section table.
    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// The bake metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// Reads section `index` and checks its CRC.
    pub fn read_section(&mut self, index: usize) -> Result<Vec<u8>> {
        read_checked(&mut self.reader, &self.sections, index)
    }

    /// Reads every section, checking every checksum and that padding bytes
    /// are zero: after this, every byte of the file has been checked.
    pub fn verify(&mut self) -> Result<()> {
        for i in 0..self.sections.len() {
            self.read_section(i)?;
            let s = self.sections[i];
            let pad = padding(s.length) as usize;
            let mut tail = [0u8; 8];
            self.reader.read_exact(&mut tail[..pad])?;
            if tail[..pad].iter().any(|b| *b != 0) {
                return Err(invalid(format!("section {i}: padding bytes are not zero")));
            }
        }
        Ok(())
    }

    /// Consumes the container, returning its reader.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

/// Checks the header and the section table (formats/container.md,
/// "Reading rules" 1 to 4) before anything sized by the file is allocated;
/// returns the version, the file's length and the sections.
fn read_layout<R: Read + Seek>(reader: &mut R) -> Result<(Version, u64, Vec<Section>)> {
    let file_len = reader.seek(SeekFrom::End(0))?;
    if file_len < u64::from(HEADER_LEN) {
        return Err(invalid(format!(
            "truncated: {file_len} bytes is shorter than the {HEADER_LEN}-byte header"
        )));
    }
    let mut fixed = [0u8; HEADER_LEN as usize];
    reader.seek(SeekFrom::Start(0))?;
    reader.read_exact(&mut fixed)?;
    if fixed[..12] != MAGIC {
        return Err(invalid("not a rigbake container (bad magic bytes)"));
    }
    let version = Version {
        major: u16_at(&fixed, 12),
        minor: u16_at(&fixed, 14),
    };
    if version.major != FORMAT_MAJOR {
        return Err(FormatError::Unsupported(format!(
            "container format version {version} is not supported: this rigbake ({}) reads format {FORMAT_MAJOR}.x",
            env!("CARGO_PKG_VERSION")
        )));
    }
    if fixed[16] != LITTLE_ENDIAN {
        return Err(FormatError::Unsupported(format!(
            "byte-order marker {} is not little-endian (1)",
            fixed[16]
        )));
    }
    let header_len = u32_at(&fixed, 20);
    if !(HEADER_LEN..=MAX_HEADER_LEN).contains(&header_len) || u64::from(header_len) > file_len {
        return Err(invalid(format!(
            "header length {header_len} is out of range"
        )));
    }
    // The header's CRC is its last 4 bytes, over everything before.
    let mut header = fixed.to_vec();
    header.resize(header_len as usize, 0);
    reader.read_exact(&mut header[HEADER_LEN as usize..])?;
    let crc_at = header_len as usize - 4;
    if crc32fast::hash(&header[..crc_at]) != u32_at(&header, crc_at) {
        return Err(invalid("header checksum mismatch (the header is damaged)"));
    }
    if header[17..20] != [0, 0, 0] {
        return Err(invalid("reserved header bytes are not zero"));
    }
    let count = u32_at(&header, 24) as u64;
    let table_offset = u64_at(&header, 28);
    let declared_len = u64_at(&header, 36);
    if declared_len != file_len {
        return Err(invalid(format!(
            "file is {file_len} bytes but its header says {declared_len} (truncated or extended)"
        )));
    }
    let table_len = count
        .checked_mul(ENTRY_LEN as u64)
        .and_then(|l| l.checked_add(4))
        .filter(|l| table_offset.checked_add(*l) == Some(file_len))
        .ok_or_else(|| {
            invalid(format!(
                "section table ({count} entries at {table_offset}) does not end the file"
            ))
        })?;
    let mut table = vec![0u8; table_len as usize];
    reader.seek(SeekFrom::Start(table_offset))?;
    reader.read_exact(&mut table)?;
    let crc_at = table.len() - 4;
    if crc32fast::hash(&table[..crc_at]) != u32_at(&table, crc_at) {
        return Err(invalid(
            "section table checksum mismatch (the table is damaged)",
        ));
    }
    let mut sections = Vec::with_capacity(count as usize);
    let mut expected_offset = u64::from(header_len);
    for (i, e) in table[..crc_at].chunks_exact(ENTRY_LEN).enumerate() {
        if u32_at(e, 4) != 0 || u32_at(e, 28) != 0 {
            return Err(invalid(format!(
                "section {i}: reserved fields are not zero"
            )));
        }
        let s = Section {
            kind: SectionKind::from_code(u32_at(e, 0)),
            offset: u64_at(e, 8),
            length: u64_at(e, 16),
            crc32: u32_at(e, 24),
        };
        // Sections are contiguous (each padded to 8 bytes) and end where
        // the table starts, so every byte of the file is accounted for.
        let end = s
            .offset
            .checked_add(s.length)
            .map(|end| end + padding(s.length))
            .filter(|end| s.offset == expected_offset && *end <= table_offset)
            .ok_or_else(|| {
                invalid(format!(
                    "section {i}: offset {} and length {} do not fit the file",
                    s.offset, s.length
                ))
            })?;
        expected_offset = end;
        sections.push(s);
    }
    if expected_offset != table_offset {
        return Err(invalid("bytes between the last section and the table"));
    }
    Ok((version, file_len, sections))
}

/// The index of the only section of `kind`, if any; an error if several.
fn single(sections: &[Section], kind: SectionKind) -> Result<Option<usize>> {
    let mut found = sections.iter().enumerate().filter(|(_, s)| s.kind == kind);
    match (found.next(), found.next()) {
        (None, _) => Ok(None),
        (Some((i, _)), None) => Ok(Some(i)),
        (Some(_), Some(_)) => Err(invalid(format!("more than one {} section", kind.name()))),
    }
}

/// The record of type `T` when the container has its section (at most
/// one), read with its checksum checked and decoded.
fn optional<T: Record, R: Read + Seek>(reader: &mut R, sections: &[Section]) -> Result<Option<T>> {
    match single(sections, T::KIND)? {
        Some(i) => Ok(Some(codec::decode(&read_checked(reader, sections, i)?)?)),
        None => Ok(None),
    }
}

/// Reads section `index` of `sections` from `reader` and checks its CRC.
fn read_checked<R: Read + Seek>(
    reader: &mut R,
    sections: &[Section],
    index: usize,
) -> Result<Vec<u8>> {
    let s = *sections
        .get(index)
        .ok_or_else(|| invalid(format!("no section {index}")))?;
    // The length was checked against the file length when the table was read.
    let mut bytes = vec![0u8; s.length as usize];
    reader.seek(SeekFrom::Start(s.offset))?;
    reader.read_exact(&mut bytes)?;
    if crc32fast::hash(&bytes) != s.crc32 {
        return Err(invalid(format!(
            "section {index} ({}) checksum mismatch (the payload is damaged)",
            s.kind.name()
        )));
    }
    Ok(bytes)
}
