//! rigbake-core: everything rigbake knows about animation.
//!
//! Data flows one way through small stages, each a function over plain data
//! owned by the caller:
//!
//! ```text
//! import   glTF file        -> Model            (the only module that knows glTF)
//! timeline Model + Sampling -> Timeline          (which clip and time each texture row holds)
//! sample   Clip + time      -> LocalPose         (per-node TRS and morph weights)
//! pose     LocalPose        -> global matrices
//! skin     globals          -> skin matrices; linear blend skinning
//! bake     Model + Timeline -> textures and tracks (bone matrices, ...)
//! runtime  bake + animation state -> deformed vertices (the shaders' CPU reference)
//! ```
//!
//! This crate never writes files and never decides an encoding: the format
//! crate serialises what the bakes produce, and the `rigbake` library crate
//! runs the whole pipeline. Option values (matrix layout, sampling rule,
//! normal convention, primitive mode) are the shared definitions of
//! `rigbake-types`, re-exported where they are used.

pub mod bake;
pub mod error;
pub mod evaluate;
pub mod import;
pub mod interpolate;
pub mod model;
pub mod pose;
pub mod reference;
pub mod runtime;
pub mod sample;
pub mod skin;
pub mod synthetic;
pub mod timeline;

pub use error::{Error, ErrorKind, Result};
pub use model::Model;
