//! rigbake-format: everything rigbake writes to disk, and the readers that
//! keep it readable.
//!
//! - [`container`]: the versioned `.rigbake` file (header, sections, table).
//! - [`check`]: semantic checks of decoded records (counts, indices, names).
//! - [`fsread`]: bounded reads of regular files only.
//! - [`codec`]: how metadata becomes bytes (bincode), in one place.
//! - [`meta`]: the metadata of a bake (clips, skins, textures, options).
//! - [`glb`]: a GLB (binary glTF 2.0) writer for plain mesh data.
//! - [`image`]: 8-bit PNG and animated PNG for previews.
//! - [`texture`]: EXR and PNG texture encoders and decoders.
//! - [`vat`]: streaming vertex-animation texture files with error measurement.
//!
//! This crate knows nothing about reading glTF or about animation math: it
//! serialises plain values that the bakes produce. The option values in the
//! metadata (layout, precision, sampling rule, encodings, normal convention)
//! are the shared definitions of `rigbake-types`; their variant order is
//! part of the container format.

pub mod check;
pub mod codec;
pub mod container;
pub mod digest;
pub mod error;
pub mod fsread;
pub mod glb;
pub mod image;
pub mod meta;
pub mod openvat;
pub mod records;
pub mod texture;
pub mod vat;

pub use error::{FormatError, Result};
