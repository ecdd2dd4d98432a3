//! Bakes: turn a model and a timeline into textures and tracks. Each bake is
//! a pure function returning plain values; encoding and writing belong to the
//! format crate.

pub mod anchors;
pub mod bone_error;
pub mod bones;
pub mod bounds;
pub mod frames;
pub mod morphs;
pub mod vat;
pub mod vat_kernel;
pub mod vertices;
pub mod weights;

pub use bones::{BoneBakeOptions, BoneSet, BoneTexture, bone_sets};
pub use frames::bake_bone_textures;
