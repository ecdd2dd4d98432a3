//! rigbake-core: everything rigbake knows about animation.
//!
//! Data flows one way through small stages, each a function over plain data
//! owned by the caller:
//!
//! ```text
//! import   glTF file        -> Model            (the only module that knows glTF)
//! timeline Model + Sampling -> Timeline          (which clip and time each texture row holds)
//! eval     Clip + time      -> LocalPose -> global and skin matrices
//!          (interpolate, sample, pose, skin; evaluate reuses their buffers)
//! bake     Model + Timeline -> textures and tracks (bone matrices, ...)
//! runtime  bake + animation state -> deformed vertices (the shaders' CPU reference)
//! ```
//!
//! This crate never writes files and never decides an encoding: the format
//! crate serialises what the bakes produce.

pub mod bake;
pub mod error;
pub mod eval;
pub mod import;
pub mod layout;
pub mod model;
pub mod reference;
pub mod runtime;
pub mod timeline;

pub use error::{Error, ErrorKind, Result};
pub use model::Model;
