//! Streaming container writer: payload sections are written as they come,
//! the metadata and the table at the end, the header last.

use std::io::{Read, Seek, SeekFrom, Write};

use super::{
    ENTRY_LEN, FORMAT_MAJOR, HEADER_LEN, LITTLE_ENDIAN, MAGIC, Section, SectionKind, padding,
};
use crate::codec;
use crate::error::Result;
use crate::meta::Metadata;
use crate::records::FORMAT_MINOR;

/// Writes one container to `W`.
#[derive(Debug)]
pub struct ContainerWriter<W: Write + Seek> {
    out: W,
    position: u64,
    sections: Vec<Section>,
}

impl<W: Write + Seek> ContainerWriter<W> {
    /// Starts a container at the current position of `out` (which must be 0
    /// for a file), reserving room for the header.
    pub fn new(mut out: W) -> Result<Self> {
        out.write_all(&[0u8; HEADER_LEN as usize])?;
        Ok(Self {
            out,
            position: u64::from(HEADER_LEN),
            sections: Vec::new(),
        })
    }

    /// Index the next section will get.
    pub fn next_index(&self) -> usize {
        self.sections.len()
    }

    /// Appends a section holding `bytes`; returns its index.
    pub fn add_section(&mut self, kind: SectionKind, bytes: &[u8]) -> Result<usize> {
        self.add_section_from(kind, &mut &bytes[..])
    }

    /// Appends a section streamed from `reader` (copied in chunks, checksummed
    /// on the way); returns its index.
    pub fn add_section_from(&mut self, kind: SectionKind, reader: &mut dyn Read) -> Result<usize> {
        let offset = self.position;
        let mut hasher = crc32fast::Hasher::new();
        let mut length = 0u64;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            hasher.update(&buf[..n]);
            self.out.write_all(&buf[..n])?;
            length += n as u64;
        }
        let pad = padding(length);
        self.out.write_all(&[0u8; 8][..pad as usize])?;
        self.position += length + pad;
        self.sections.push(Section {
            kind,
            offset,
            length,
            crc32: hasher.finalize(),
        });
        Ok(self.sections.len() - 1)
    }

    /// Appends a section of exactly `length` bytes read from `reader`,
    /// whose CRC-32 the caller knows already (computed while the bytes were
    /// written, see [`crate::digest`]); returns its index. The bytes are not
    /// hashed again, and between two files (a `File` reader, a `File` or
    /// `BufWriter<File>` container) the standard library's copy stays in
    /// the kernel (`copy_file_range` on Linux). Fails, naming both counts,
    /// when the reader holds fewer bytes.
    pub fn add_section_known(
        &mut self,
        kind: SectionKind,
        reader: &mut impl Read,
        length: u64,
        crc32: u32,
    ) -> Result<usize> {
        let offset = self.position;
        let copied = std::io::copy(&mut reader.take(length), &mut self.out)?;
        if copied != length {
            return Err(crate::error::FormatError::Invalid(format!(
                "a {} section ended after {copied} of its {length} bytes",
                kind.name()
            )));
        }
        let pad = padding(length);
        self.out.write_all(&[0u8; 8][..pad as usize])?;
        self.position += length + pad;
        self.sections.push(Section {
            kind,
            offset,
            length,
            crc32,
        });
        Ok(self.sections.len() - 1)
    }

    /// Writes the metadata section, the table and the header; returns the
    /// writer and the total length of the container.
    pub fn finish(mut self, metadata: &Metadata) -> Result<(W, u64)> {
        let encoded = codec::encode(metadata)?;
        self.add_section(SectionKind::Metadata, &encoded)?;
        let table_offset = self.position;
        let mut table = Vec::with_capacity(self.sections.len() * ENTRY_LEN + 4);
        for s in &self.sections {
            table.extend_from_slice(&s.kind.code().to_le_bytes());
            table.extend_from_slice(&0u32.to_le_bytes()); // flags, reserved
            table.extend_from_slice(&s.offset.to_le_bytes());
            table.extend_from_slice(&s.length.to_le_bytes());
            table.extend_from_slice(&s.crc32.to_le_bytes());
            table.extend_from_slice(&0u32.to_le_bytes()); // reserved
        }
        let crc = crc32fast::hash(&table);
        table.extend_from_slice(&crc.to_le_bytes());
        self.out.write_all(&table)?;
        let total = table_offset + table.len() as u64;

        let header = encode_header(self.sections.len() as u32, table_offset, total);
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&header)?;
        self.out.seek(SeekFrom::Start(total))?;
        self.out.flush()?;
        Ok((self.out, total))
    }
}

fn encode_header(section_count: u32, table_offset: u64, file_len: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER_LEN as usize);
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&FORMAT_MAJOR.to_le_bytes());
    h.extend_from_slice(&FORMAT_MINOR.to_le_bytes());
    h.push(LITTLE_ENDIAN);
    h.extend_from_slice(&[0u8; 3]);
    h.extend_from_slice(&HEADER_LEN.to_le_bytes());
    h.extend_from_slice(&section_count.to_le_bytes());
    h.extend_from_slice(&table_offset.to_le_bytes());
    h.extend_from_slice(&file_len.to_le_bytes());
    let crc = crc32fast::hash(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(h.len(), HEADER_LEN as usize);
    h
}
