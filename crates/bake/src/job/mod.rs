//! One model's bake from validated settings to files: plan (import,
//! choose clips), run each requested output's pass into a
//! [`crate::sink::Sink`],
//! assemble and write the container's records, commit the files
//! (`pipeline`: the passes in order). Every problem becomes a
//! [`BakeError`] so one bad model never stops the others; even a panic
//! inside one model is caught and reported as an internal error.

mod bones;
mod budget;
mod common;
pub(crate) mod lod_files;
mod lods;
mod mesh;
mod openvat;
mod pipeline;
mod placement;
mod plan;
mod rig;
mod vat;
mod vat_errors;
mod warnings;
mod weights;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use rigbake_types::{OutputKind, OutputKinds};

use crate::error::{BakeError, Source, Stage};
use crate::input::ModelInput;
use crate::settings::BakeSettings;
use crate::sink::SharedStore;

/// Hears what a bake is doing (a progress display, a log).
pub trait Observer {
    /// A fact about the model, e.g. "3 clips, 90 frames".
    fn info(&self, message: &str);
    /// The bake moved on to `stage`, e.g. "bone textures".
    fn stage(&self, stage: &str);
    /// Something the user should know about a bake that still succeeds
    /// (morph targets the bone textures cannot carry). Ignored by default.
    fn warning(&self, _message: &str) {}
    /// What `--max-error` chose for an output and why (`bone textures as
    /// qts unorm16 ...`). Ignored by default.
    fn chose(&self, _message: &str) {}
    /// The worst clip of each texture the bake measured (its clip-error
    /// record, summed up). Ignored by default.
    fn measured(&self, _errors: &[crate::report::TextureError]) {}
}

/// An [`Observer`] that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Observer for Silent {
    fn info(&self, _: &str) {}
    fn stage(&self, _: &str) {}
}

/// One model to bake, with everything the bake needs.
pub struct ModelJob<'a> {
    /// The model file and its LOD level files, read and parsed once with
    /// `settings` ([`ModelInput::read`]; the bake key hashed the same
    /// bytes); the container records the model's name.
    pub input: &'a ModelInput,
    /// The folder the outputs go to.
    pub out_dir: &'a Path,
    /// What to bake.
    pub settings: &'a BakeSettings,
    /// The bake key, recorded in the container (see [`crate::bake_key`]).
    pub key: &'a str,
    /// Where shared bone textures go, when sharing.
    pub shared: Option<&'a SharedStore>,
    /// Who hears about progress.
    pub observer: &'a dyn Observer,
    /// The model's path relative to `out_dir`, recorded in the container's
    /// source record when known ([`crate::source_path::relative_source`]).
    pub source_location: Option<&'a str>,
    /// The other inputs of the run, which no output may replace; the job
    /// adds its own input files and the buffers and images they read
    /// ([`ModelInput::files`]).
    pub protected: Option<&'a crate::staging::Protected>,
}

/// What a successful job did.
#[derive(Debug, Clone, PartialEq)]
pub enum Baked {
    /// The outputs were written: final paths and sizes, and the files of the
    /// previous bake in the folder that this one no longer writes, removed.
    Written {
        /// Final paths and sizes, in creation order.
        files: Vec<(PathBuf, u64)>,
        /// Stale files removed ([`crate::sink::Committed::removed`]).
        removed: Vec<PathBuf>,
    },
    /// Nothing applied to the model; the reason says why.
    Skipped(String),
}

/// Bakes one model into its output folder; never panics (a panic inside is
/// caught and returned as an [`Stage::Internal`] error).
pub fn bake_model(job: &ModelJob<'_>) -> Result<Baked, BakeError> {
    let bake = || {
        fault("start", job.input.path())?;
        pipeline::run(job)
    };
    match catch_unwind(AssertUnwindSafe(bake)) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(BakeError::new(Stage::Internal, Source::Panic(what)))
        }
    }
}

/// Test hooks, set through `RIGBAKE_FAULT`: `abort-before-commit` kills the
/// process after every output of a model is written under temporary names
/// and before any is renamed into place (an interrupted bake must leave no
/// partial file under a final name); `panic:TEXT` panics inside the job of
/// every model whose path contains TEXT (one model's panic must not stop
/// the others); `fail-before-commit:TEXT` fails every model whose path
/// contains TEXT after its outputs are written under temporary names (a
/// failed model must leave nothing behind, in the shared store neither).
fn fault(point: &str, input: &Path) -> Result<(), BakeError> {
    let Some(v) = std::env::var_os("RIGBAKE_FAULT") else {
        return Ok(());
    };
    let v = v.to_string_lossy();
    let named = |text: &str| input.to_string_lossy().contains(text);
    match (point, v.split_once(':')) {
        ("commit", _) if v == "abort-before-commit" => std::process::abort(),
        ("commit", Some(("fail-before-commit", text))) if named(text) => {
            let why = "injected failure before the commit (RIGBAKE_FAULT)".to_owned();
            let e = rigbake_format::FormatError::Invalid(why);
            Err(BakeError::new(Stage::Commit, Source::Format(e)))
        }
        ("start", Some(("panic", text))) if named(text) => {
            panic!("injected panic (RIGBAKE_FAULT)")
        }
        _ => Ok(()),
    }
}

/// Why a bake asking for `outputs` is skipped before anything is read:
/// `None` when it asks for bone textures or a VAT, which everything else
/// rides on (weights and anchors on the bone textures, the OpenVAT export
/// on a bake of its own that is written only beside one of them). The one
/// place this is decided: a batch ([`crate::run::run_model`]) asks before
/// reading the model, the job asks again for callers that bake directly.
pub(crate) fn nothing_requested(outputs: OutputKinds) -> Option<String> {
    let made = outputs.has(OutputKind::Bones) || outputs.has(OutputKind::Vat);
    (!made).then(|| "no outputs requested".to_owned())
}

/// The longest model name (file stem) a bake takes, in bytes: its outputs
/// are named after it (`<name>.rigbake.json`, `<name>-openvat.rigbake.json`,
/// `<name>.lod15.weights.glb`), and a file name holds at most 255 bytes.
pub const MAX_MODEL_NAME_BYTES: usize = 200;
