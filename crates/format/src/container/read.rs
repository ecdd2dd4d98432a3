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
use crate::codec;
use crate::error::{FormatError, Result};
use crate::meta::{Metadata, Storage};
use crate::records::Records;

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
    key: Option<String>,
    records: Records,
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
        let key = match single(&sections, SectionKind::Key)? {
            Some(i) => Some(
                String::from_utf8(read_checked(&mut reader, &sections, i)?)
                    .map_err(|_| invalid("the bake key is not UTF-8"))?,
            ),
            None => None,
        };
        let records = Records::read(|kind| match single(&sections, kind)? {
            Some(i) => read_checked(&mut reader, &sections, i).map(Some),
            None => Ok(None),
        })?;
        let container = Self {
            reader,
            version,
            file_len,
            sections,
            metadata,
            key,
            records,
        };
        container.check_references()?;
        container.records.check(&container.metadata)?;
        Ok(container)
    }

    fn check_references(&self) -> Result<()> {
        let bones = self.metadata.textures.iter().map(|t| (t.storage, t.bytes));
        let vat = self
            .records
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
            .records
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
        if let Some(rig) = &self.records.rig
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

    /// Every optional record the container holds, checked.
    pub fn records(&self) -> &Records {
        &self.records
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
            .and_then(|end| end.checked_add(padding(s.length)))
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
