//! The `.rigbake` container: a fixed header, payload sections, and a section
//! table, every part checksummed. Normative description:
//! `formats/container.md`.
//!
//! ```text
//! header (48 bytes) | section payloads, each padded with zeros to 8 bytes | metadata section | section table | table CRC
//! ```
//!
//! The table sits at the end so payloads can be streamed while they are
//! produced; the header (written last, at offset 0) says where the table is.
//! Reading the metadata touches the header, the table and the metadata
//! section only.

mod read;
mod write;

use crate::records::SectionKind;

pub use read::Container;
pub use write::ContainerWriter;

/// The first 12 bytes of every container. The high byte, CR LF and ^Z catch
/// transfers that mangle binary files (as in PNG).
pub const MAGIC: [u8; 12] = *b"\x89RIGBAKE\r\n\x1a\n";

/// Major version this code writes and reads. A reader refuses any other major.
pub const FORMAT_MAJOR: u16 = 1;

/// Header size written by this version (readers accept larger headers).
pub const HEADER_LEN: u32 = 48;
/// Size of one section table entry.
pub const ENTRY_LEN: usize = 32;
/// Payloads start at multiples of this many bytes.
pub const ALIGN: u64 = 8;
/// Byte that marks little-endian integers (the only byte order written).
pub const LITTLE_ENDIAN: u8 = 1;

/// One entry of the section table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    /// What it holds.
    pub kind: SectionKind,
    /// Byte offset of the payload from the start of the file.
    pub offset: u64,
    /// Payload length in bytes.
    pub length: u64,
    /// CRC-32 (IEEE) of the payload.
    pub crc32: u32,
}

/// The container version found in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    /// Major version.
    pub major: u16,
    /// Minor version.
    pub minor: u16,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

fn padding(len: u64) -> u64 {
    (ALIGN - len % ALIGN) % ALIGN
}
