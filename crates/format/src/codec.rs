//! The one place that knows how metadata becomes bytes: serde + bincode 2
//! (standard configuration: little-endian, variable-length integers), with a
//! size limit on decoding. Swapping the codec means changing this file and
//! bumping the container's major version.
//!
//! Every record goes through [`encode`] and [`decode`], which know it by
//! its name in messages ([`Named`]); its section kind is
//! [`crate::records::Record`]'s. Both are implemented once per record type
//! in the table of [`crate::records`], which imports this module (never
//! the other way round).

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{FormatError, Result};

/// Largest metadata record a reader accepts.
pub const METADATA_LIMIT: usize = 64 << 20;

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<METADATA_LIMIT>()
}

/// A value the codec stores: a serde type and what messages call it.
pub trait Named: Serialize + DeserializeOwned {
    /// What messages call it (`the LOD record`).
    const NAME: &'static str;
}

/// Encodes a record.
pub fn encode<R: Named>(record: &R) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(record, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode {}: {e}", R::NAME)))
}

/// Decodes a record. Trailing bytes are ignored: later minor versions
/// append fields at the end of a record, which older readers do not know.
pub fn decode<R: Named>(bytes: &[u8]) -> Result<R> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("{} cannot be decoded: {e}", R::NAME)))
}
