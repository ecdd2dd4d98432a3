//! rigbake-core: everything rigbake knows about animation.
//!
//! Data flows one way through small stages, each a function over plain data
//! owned by the caller:
//!
//! ```text
//! import   glTF file        -> Model            (the only module that knows glTF)
//! timeline Model + Sampling -> Timeline          (plan: which clip and time each texture row holds;
//!                                                 loops: the loop pass over the plan)
//! eval     Clip + time      -> LocalPose -> global and skin matrices
//!          (interpolate, sample, pose, skin; evaluate reuses their buffers)
//! bake     Model + Timeline -> textures and tracks (bone matrices, anchors, VAT, weights)
//! runtime  bake + animation state -> deformed vertices, socket transforms
//!                                    (the shaders' CPU reference)
//! ```
//!
//! `error`, `model` and `layout` (how a matrix sits in RGBA pixels) are
//! leaves every stage may use. No module imports one that imports it back:
//! `eval` uses only the leaves; `timeline` uses `eval`; `bake` uses `eval`
//! and `timeline`; `runtime` uses `eval` and `timeline` and works on plain
//! slices, never on `bake`'s types.
//!
//! This crate never writes files and never decides an encoding: the format
//! crate serialises what the bakes produce, and the `rigbake` library crate
//! runs the whole pipeline. Option values (matrix layout, sampling rule,
//! normal convention, primitive mode) are the shared definitions of
//! `rigbake-types`, re-exported where they are used.

/// The glam this crate's math is written in (runtime reference results are
/// its types), for users whose own glam is another version.
pub use glam;

pub mod bake;
pub mod budget;
pub mod error;
pub mod error_tally;
pub mod eval;
pub mod fold;
pub mod import;
pub mod layout;
pub mod lod;
pub mod lod_files;
pub mod model;
pub mod names;
pub mod node_lookup;
pub mod reference;
pub mod runtime;
pub mod timeline;
pub mod work;

pub use error::{Error, ErrorKind, Result};
pub use model::Model;
