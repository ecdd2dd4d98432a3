//! rigbake as a library: everything between a validated bake request and
//! the files on disk, and everything that reads a bake back.
//!
//! - [`job::bake_model`] bakes one model from [`settings::BakeSettings`]
//!   into an output folder; the bytes go through a [`sink::Sink`] that
//!   decides where they land (a file, the [`sink::SharedStore`], or a
//!   section embedded in the container). Failures are [`error::BakeError`]s
//!   naming the stage and the source.
//! - [`options`] declares every bake option once (manifest key, flag,
//!   layering, documentation) and resolves a model's options into its
//!   [`settings::BakeSettings`]; [`manifest`] reads manifests of them.
//! - [`input::ModelInput`] reads and parses a model (and its LOD level
//!   files) once per bake; [`incremental`] computes bake keys from it and
//!   tells up-to-date outputs; [`run`] runs one model of a batch (read,
//!   key, up to date or bake).
//! - [`playback::load`] turns a container and its textures into the views
//!   the runtime reference (`rigbake_core::runtime`) reads.
//! - [`verify`] measures a loaded bake against its source and judges it;
//!   [`verify_report`] is what `rigbake verify` prints of that (text, JSON).
//! - [`preview`] poses and renders preview frames of a loaded bake.
//! - [`inspect`] reports what a container holds; [`inspect_source`] what a
//!   source model holds, before baking.
//! - [`records`] maps core values to metadata records and back.
//! - [`report`] is the batch report: outcomes, JSON, shard merging.
//! - [`schemas`] generates the JSON Schemas of `formats/` from the types.
//! - [`lod_siblings`] finds LOD level files beside their model;
//!   [`discover`] finds the models of a folder.
//!
//! The `rigbake` command line (crate `rigbake-cli`) is a thin layer over
//! this crate: arguments, manifests, planning, scheduling and reports.
//! `examples/open_bake.rs` shows a library user's view.

pub mod discover;
pub mod error;
pub mod exclude;
pub mod existing;
pub mod incremental;
pub mod input;
pub mod inspect;
mod inspect_errors;
pub mod inspect_source;
pub mod job;
pub mod listed;
pub mod lod_siblings;
pub mod manifest;
pub mod options;
pub mod playback;
pub mod preview;
pub mod records;
pub mod report;
pub mod run;
pub mod schemas;
pub mod settings;
pub mod sidecar;
pub mod sink;
pub mod source_path;
pub mod staging;
pub mod verify;
pub mod verify_report;

pub use error::{BakeError, Stage};
pub use incremental::{bake_key, up_to_date, up_to_date_outputs};
pub use input::ModelInput;
pub use job::{Baked, ModelJob, Observer, bake_model};
pub use settings::BakeSettings;
