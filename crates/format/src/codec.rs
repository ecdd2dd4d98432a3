//! The one place that knows how metadata becomes bytes: serde + bincode 2
//! (standard configuration: little-endian, variable-length integers), with a
//! size limit on decoding. Swapping the codec means changing this file and
//! bumping the container's major version.
//!
//! Every record goes through [`encode`] and [`decode`]; what a record is
//! (its section kind and its name in messages) is [`Record`], implemented
//! once per record type in the table of [`crate::records`].

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{FormatError, Result};
use crate::records::SectionKind;

/// Largest metadata record a reader accepts.
pub const METADATA_LIMIT: usize = 64 << 20;

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<METADATA_LIMIT>()
}

/// A record of the container: a serde type stored, bincode-encoded
/// ([`encode`], [`decode`]), as the payload of one section of kind
/// [`Record::KIND`] (at most one per container, except the metadata,
/// which is exactly one). Implemented in the table of [`crate::records`].
pub trait Record: Serialize + DeserializeOwned {
    /// The section kind that holds it.
    const KIND: SectionKind;
    /// What messages call it (`the LOD record`).
    const NAME: &'static str;
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
