//! The one place that knows how metadata becomes bytes: serde + bincode 2
//! (standard configuration: little-endian, variable-length integers), with a
//! size limit on decoding. Swapping the codec means changing this file and
//! bumping the container's major version.
//!
//! Every record goes through [`encode`] and [`decode`]; what a record is
//! (its section kind and its name in messages) is [`Record`], implemented
//! once per record type in this file's table.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::container::SectionKind;
use crate::error::{FormatError, Result};
use crate::meta::{
    BoundsMetadata, LayoutMetadata, LodDetailsMetadata, LodsMetadata, Metadata, MorphsMetadata,
    OutputsMetadata, PlacementMetadata, RigMetadata, RootMotionMetadata, SourceLocation,
    TextureContainerMetadata, UvSetsMetadata, VatCompressionMetadata, VatMetadata, WeightsMetadata,
};

/// Largest metadata record a reader accepts.
pub const METADATA_LIMIT: usize = 64 << 20;

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<METADATA_LIMIT>()
}

/// A record of the container: a serde type stored, bincode-encoded, as
/// the payload of one section of kind [`Record::KIND`] (at most one per
/// container, except the metadata, which is exactly one).
pub trait Record: Serialize + DeserializeOwned {
    /// The section kind that holds it.
    const KIND: SectionKind;
    /// What messages call it (`the LOD record`).
    const NAME: &'static str;
}

/// The records, their section kinds and their names, in section-kind order.
macro_rules! records {
    ($($record:ty => $kind:ident, $name:literal;)*) => {
        $(impl Record for $record {
            const KIND: SectionKind = SectionKind::$kind;
            const NAME: &'static str = $name;
        })*
    };
}

records! {
    Metadata => Metadata, "metadata";
    VatMetadata => Vat, "VAT metadata";
    WeightsMetadata => Weights, "weight metadata";
    RigMetadata => Rig, "rig metadata";
    OutputsMetadata => Outputs, "the outputs record";
    VatCompressionMetadata => VatCompression, "the VAT compression record";
    LayoutMetadata => Layout, "the layout record";
    BoundsMetadata => Bounds, "the bounds record";
    SourceLocation => Source, "the source record";
    MorphsMetadata => Morphs, "the morphs record";
    UvSetsMetadata => UvSets, "the UV-set record";
    RootMotionMetadata => RootMotion, "the root-motion record";
    LodsMetadata => Lods, "the LOD record";
    LodDetailsMetadata => LodDetails, "the LOD detail record";
    TextureContainerMetadata => TextureContainer, "the texture-container record";
    PlacementMetadata => Placement, "the placement record";
}

/// Encodes a record.
pub fn encode<R: Record>(record: &R) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(record, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode {}: {e}", R::NAME)))
}

/// Decodes a record. Trailing bytes are ignored: later minor versions
/// append fields at the end of a record, which older readers do not know.
pub fn decode<R: Record>(bytes: &[u8]) -> Result<R> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("{} cannot be decoded: {e}", R::NAME)))
}
