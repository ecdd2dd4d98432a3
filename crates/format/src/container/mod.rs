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

pub use read::Container;
pub use write::ContainerWriter;

/// The first 12 bytes of every container. The high byte, CR LF and ^Z catch
/// transfers that mangle binary files (as in PNG).
pub const MAGIC: [u8; 12] = *b"\x89RIGBAKE\r\n\x1a\n";

/// Major version this code writes and reads. A reader refuses any other major.
pub const FORMAT_MAJOR: u16 = 1;
/// Minor version this code writes. Minor versions only add section kinds and
/// append fields at the end of the metadata record; older readers skip the
/// former and ignore the latter.
pub const FORMAT_MINOR: u16 = 11;

/// Header size written by this version (readers accept larger headers).
pub const HEADER_LEN: u32 = 48;
/// Size of one section table entry.
pub const ENTRY_LEN: usize = 32;
/// Payloads start at multiples of this many bytes.
pub const ALIGN: u64 = 8;
/// Byte that marks little-endian integers (the only byte order written).
pub const LITTLE_ENDIAN: u8 = 1;

/// What a section holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SectionKind {
    /// The bake metadata (bincode, see `crate::codec`). Exactly one.
    Metadata,
    /// An encoded texture file (EXR or PNG bytes), referred to by the
    /// metadata's texture table.
    Texture,
    /// The VAT record (bincode [`crate::meta::VatMetadata`]), since 1.1.
    Vat,
    /// The bone-weight record (bincode [`crate::meta::WeightsMetadata`]),
    /// since 1.2.
    Weights,
    /// Raw per-vertex data (little-endian f32), referred to by a record.
    VertexData,
    /// The rig record (bincode [`crate::meta::RigMetadata`]), since 1.3.
    Rig,
    /// Anchor tracks (little-endian f32), referred to by the rig record.
    TrackData,
    /// The bake key (UTF-8): a digest of every input byte and setting, used
    /// to skip up-to-date bakes, since 1.4.
    Key,
    /// The outputs record (bincode [`crate::meta::OutputsMetadata`]): size
    /// and CRC-32 of every file beside the container that no other record
    /// checksums (meshes, `anchors.exr`), since 1.5.
    Outputs,
    /// The VAT compression record (bincode
    /// [`crate::meta::VatCompressionMetadata`]): each VAT texture's
    /// compression, since 1.6.
    VatCompression,
    /// The animated-bounds record (bincode [`crate::meta::BoundsMetadata`]):
    /// per clip, a box holding every vertex at every frame, since 1.6.
    Bounds,
    /// The layout record (bincode [`crate::meta::LayoutMetadata`]): the
    /// VAT atlas placement and folded textures' addressing, since 1.7.
    Layout,
    /// The source record (bincode [`crate::meta::SourceLocation`]): where
    /// the source model was, relative to the container, since 1.6.
    Source,
    /// The morphs record (bincode [`crate::meta::MorphsMetadata`]): the
    /// morph targets a bone-matrix bake drops, since 1.7.
    Morphs,
    /// The UV-set record (bincode [`crate::meta::UvSetsMetadata`]): which
    /// TEXCOORD sets of the mesh files hold the VAT lookup UV and the
    /// weight pairs, since 1.7.
    UvSets,
    /// The root-motion record (bincode [`crate::meta::RootMotionMetadata`]):
    /// the track of clips baked in place, since 1.8.
    RootMotion,
    /// The LOD record (bincode [`crate::meta::LodsMetadata`]): the model's
    /// LOD groups and each level's outputs, since 1.8.
    Lods,
    /// The LOD detail record (bincode [`crate::meta::LodDetailsMetadata`]):
    /// per LOD level, its file and influences, since 1.9.
    LodDetails,
    /// The texture-container record (bincode
    /// [`crate::meta::TextureContainerMetadata`]): the KTX2 or DDS container
    /// every texture is in, since 1.10.
    TextureContainer,
    /// The placement record (bincode [`crate::meta::PlacementMetadata`]):
    /// the rest-pose matrices of the bake's spaces and the lookup UV's
    /// encoding, since 1.11.
    Placement,
    /// A kind this version does not know; skipped by readers.
    Unknown(u32),
}

/// Every known section kind with its on-disk code and report name, in code
/// order: the one table [`SectionKind::code`], [`SectionKind::from_code`]
/// and [`SectionKind::name`] read.
const KINDS: [(SectionKind, u32, &str); 20] = [
    (SectionKind::Metadata, 1, "metadata"),
    (SectionKind::Texture, 2, "texture"),
    (SectionKind::Vat, 3, "vat"),
    (SectionKind::Weights, 4, "weights"),
    (SectionKind::VertexData, 5, "vertex_data"),
    (SectionKind::Rig, 6, "rig"),
    (SectionKind::TrackData, 7, "track_data"),
    (SectionKind::Key, 8, "key"),
    (SectionKind::Outputs, 9, "outputs"),
    (SectionKind::VatCompression, 10, "vat_compression"),
    (SectionKind::Layout, 11, "layout"),
    (SectionKind::Bounds, 12, "bounds"),
    (SectionKind::Source, 13, "source"),
    (SectionKind::Morphs, 14, "morphs"),
    (SectionKind::UvSets, 15, "uv_sets"),
    (SectionKind::RootMotion, 16, "root_motion"),
    (SectionKind::Lods, 17, "lods"),
    (SectionKind::LodDetails, 18, "lod_details"),
    (SectionKind::TextureContainer, 19, "texture_container"),
    (SectionKind::Placement, 20, "placement"),
];

impl SectionKind {
    /// The on-disk code.
    pub fn code(self) -> u32 {
        match self {
            Self::Unknown(c) => c,
            known => KINDS
                .iter()
                .find(|(k, _, _)| *k == known)
                .map_or(0, |(_, code, _)| *code),
        }
    }

    /// The kind for an on-disk code.
    pub fn from_code(code: u32) -> Self {
        KINDS
            .iter()
            .find(|(_, c, _)| *c == code)
            .map_or(Self::Unknown(code), |(k, _, _)| *k)
    }

    /// A short name for reports.
    pub fn name(self) -> String {
        match self {
            Self::Unknown(c) => format!("unknown({c})"),
            known => KINDS
                .iter()
                .find(|(k, _, _)| *k == known)
                .map_or_else(String::new, |(_, _, name)| (*name).to_owned()),
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_in_the_table_once_and_codes_round_trip() {
        for (i, (kind, code, name)) in KINDS.iter().enumerate() {
            assert_eq!(*code as usize, i + 1, "codes in order, no gaps");
            assert_eq!(SectionKind::from_code(*code), *kind);
            assert_eq!(kind.code(), *code);
            assert_eq!(kind.name(), *name);
        }
        assert_eq!(SectionKind::from_code(20), SectionKind::Unknown(20));
        assert_eq!(SectionKind::Unknown(20).code(), 20);
        assert_eq!(SectionKind::Unknown(0).name(), "unknown(0)");
    }
}
