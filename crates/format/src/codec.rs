//! The one place that knows how metadata becomes bytes: serde + bincode 2
//! (standard configuration: little-endian, variable-length integers), with a
//! size limit on decoding. Swapping the codec means changing this file and
//! bumping the container's major version.

use crate::error::{FormatError, Result};
use crate::meta::{
    BoundsMetadata, LayoutMetadata, Metadata, MorphsMetadata, OutputsMetadata, RigMetadata,
    RootMotionMetadata, SourceLocation, UvSetsMetadata, VatCompressionMetadata, VatMetadata,
    WeightsMetadata,
};

/// Largest metadata record a reader accepts.
pub const METADATA_LIMIT: usize = 64 << 20;

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<METADATA_LIMIT>()
}

/// Encodes metadata.
pub fn encode_metadata(metadata: &Metadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(metadata, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode metadata: {e}")))
}

/// Decodes metadata. Trailing bytes are ignored: later minor versions append
/// fields at the end of the record, which older readers do not know.
pub fn decode_metadata(bytes: &[u8]) -> Result<Metadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("metadata cannot be decoded: {e}")))
}

/// Encodes the VAT record.
pub fn encode_vat(vat: &VatMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(vat, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode VAT metadata: {e}")))
}

/// Decodes the VAT record (trailing bytes ignored, as for [`decode_metadata`]).
pub fn decode_vat(bytes: &[u8]) -> Result<VatMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("VAT metadata cannot be decoded: {e}")))
}

/// Encodes the bone-weight record.
pub fn encode_weights(w: &WeightsMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(w, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode weight metadata: {e}")))
}

/// Decodes the bone-weight record (trailing bytes ignored).
pub fn decode_weights(bytes: &[u8]) -> Result<WeightsMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("weight metadata cannot be decoded: {e}")))
}

/// Encodes the rig record.
pub fn encode_rig(r: &RigMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(r, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode rig metadata: {e}")))
}

/// Decodes the rig record (trailing bytes ignored).
pub fn decode_rig(bytes: &[u8]) -> Result<RigMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("rig metadata cannot be decoded: {e}")))
}

/// Encodes the source record.
pub fn encode_source(s: &SourceLocation) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(s, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode the source record: {e}")))
}

/// Decodes the source record (trailing bytes ignored).
pub fn decode_source(bytes: &[u8]) -> Result<SourceLocation> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("the source record cannot be decoded: {e}")))
}

/// Encodes the outputs record.
pub fn encode_outputs(o: &OutputsMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(o, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode the outputs record: {e}")))
}

/// Encodes the animated-bounds record.
pub fn encode_bounds(b: &BoundsMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(b, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode the bounds record: {e}")))
}

/// Decodes the animated-bounds record (trailing bytes ignored).
pub fn decode_bounds(bytes: &[u8]) -> Result<BoundsMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("the bounds record cannot be decoded: {e}")))
}

/// Encodes the root-motion record.
pub fn encode_root_motion(r: &RootMotionMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(r, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode the root-motion record: {e}")))
}

/// Decodes the root-motion record (trailing bytes ignored).
pub fn decode_root_motion(bytes: &[u8]) -> Result<RootMotionMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("the root-motion record cannot be decoded: {e}")))
}

/// Encodes the LOD record.
pub fn encode_lods(l: &crate::meta::LodsMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(l, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode the LOD record: {e}")))
}

/// Decodes the LOD record (trailing bytes ignored).
pub fn decode_lods(bytes: &[u8]) -> Result<crate::meta::LodsMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("the LOD record cannot be decoded: {e}")))
}

/// Encodes the LOD detail record.
pub fn encode_lod_details(l: &crate::meta::LodDetailsMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(l, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode the LOD detail record: {e}")))
}

/// Decodes the LOD detail record (trailing bytes ignored).
pub fn decode_lod_details(bytes: &[u8]) -> Result<crate::meta::LodDetailsMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("the LOD detail record cannot be decoded: {e}")))
}

/// Encodes the texture-container record.
pub fn encode_texture_container(t: &crate::meta::TextureContainerMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(t, config()).map_err(|e| {
        FormatError::Invalid(format!("cannot encode the texture-container record: {e}"))
    })
}

/// Decodes the texture-container record (trailing bytes ignored).
pub fn decode_texture_container(bytes: &[u8]) -> Result<crate::meta::TextureContainerMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| {
            FormatError::Invalid(format!("the texture-container record cannot be decoded: {e}"))
        })
}

/// Encodes the UV-set record.
pub fn encode_uv_sets(u: &UvSetsMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(u, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode the UV-set record: {e}")))
}

/// Decodes the UV-set record (trailing bytes ignored).
pub fn decode_uv_sets(bytes: &[u8]) -> Result<UvSetsMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("the UV-set record cannot be decoded: {e}")))
}

/// Decodes the outputs record (trailing bytes ignored).
pub fn decode_outputs(bytes: &[u8]) -> Result<OutputsMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("the outputs record cannot be decoded: {e}")))
}

/// Encodes the layout record.
pub fn encode_layout(l: &LayoutMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(l, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode the layout record: {e}")))
}

/// Decodes the layout record (trailing bytes ignored).
pub fn decode_layout(bytes: &[u8]) -> Result<LayoutMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("the layout record cannot be decoded: {e}")))
}

/// Encodes the morphs record.
pub fn encode_morphs(m: &MorphsMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(m, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode the morphs record: {e}")))
}

/// Decodes the morphs record (trailing bytes ignored).
pub fn decode_morphs(bytes: &[u8]) -> Result<MorphsMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| FormatError::Invalid(format!("the morphs record cannot be decoded: {e}")))
}

/// Encodes the VAT compression record.
pub fn encode_vat_compression(c: &VatCompressionMetadata) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(c, config())
        .map_err(|e| FormatError::Invalid(format!("cannot encode the VAT compression record: {e}")))
}

/// Decodes the VAT compression record (trailing bytes ignored).
pub fn decode_vat_compression(bytes: &[u8]) -> Result<VatCompressionMetadata> {
    bincode::serde::decode_from_slice(bytes, config())
        .map(|(m, _)| m)
        .map_err(|e| {
            FormatError::Invalid(format!("the VAT compression record cannot be decoded: {e}"))
        })
}
