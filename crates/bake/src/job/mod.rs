//! One model's bake from validated settings to files: import, choose clips,
//! run each requested output into a [`Sink`], write the container, commit
//! the files. Every problem becomes a [`BakeError`] so one bad model never
//! stops the others; even a panic inside one model is caught and reported
//! as an internal error.

mod bones;
mod common;
pub(crate) mod lod_files;
mod lods;
mod mesh;
mod openvat;
mod placement;
mod plan;
mod rig;
mod steps;
mod vat;
mod weights;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use rigbake_core::import;

use crate::error::{BakeError, Source, Stage};
use crate::settings::BakeSettings;
use crate::sidecar::{self, Sidecar};
use crate::sink::{OutputSink, SharedStore, Sink};
use steps::Made;

/// Hears what a bake is doing (a progress display, a log).
pub trait Observer {
    /// A fact about the model, e.g. "3 clips, 90 frames".
    fn info(&self, message: &str);
    /// The bake moved on to `stage`, e.g. "bone textures".
    fn stage(&self, stage: &str);
    /// Something the user should know about a bake that still succeeds
    /// (morph targets the bone textures cannot carry). Ignored by default.
    fn warning(&self, _message: &str) {}
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
    /// The model file (external buffers are found next to it; the
    /// container records its name).
    pub input: &'a Path,
    /// The model file's bytes (already read, for the bake key).
    pub bytes: &'a [u8],
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
    /// adds its own model file and the buffers and images it reads.
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
    match catch_unwind(AssertUnwindSafe(|| try_bake(job))) {
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

/// Writes the JSON sidecar of `records` beside the container.
fn write_sidecar(sink: &mut dyn Sink, records: sidecar::Records<'_>) -> Result<(), BakeError> {
    let sidecar_bytes = Sidecar::build(records).to_bytes().map_err(|e| {
        let e = rigbake_format::FormatError::Invalid(format!("cannot encode the sidecar: {e}"));
        BakeError::new(Stage::Container, Source::Format(e))
    })?;
    sink.write_file(&sidecar::sidecar_name(records.container), &sidecar_bytes)
        .map_err(|e| e.at(Stage::Container))
}

/// The longest model name (file stem) a bake takes, in bytes: its outputs
/// are named after it (`<name>.rigbake.json`, `<name>-openvat.rigbake.json`,
/// `<name>.lod15.weights.glb`), and a file name holds at most 255 bytes.
pub const MAX_MODEL_NAME_BYTES: usize = 200;

/// Plans the model, runs every output step, then (unless nothing was made)
/// every record step, the sidecar and the commit.
fn try_bake(job: &ModelJob<'_>) -> Result<Baked, BakeError> {
    fault("start", job.input)?;
    let plan = plan::plan(job)?;
    let container_name = format!("{}.rigbake", plan.model.name);
    let mut sink = OutputSink::create(
        job.out_dir,
        &container_name,
        job.settings.embed_textures,
        job.shared,
    )
    .map_err(|e| e.at(Stage::Prepare))?;
    let mut protected = protected_inputs(job);
    for f in &plan.level_files {
        protected.add(&f.path);
    }
    sink.protect(protected);
    let mut made = Made::default();
    for step in steps::OUTPUT_STEPS {
        step(&plan, &mut sink, &mut made)?;
    }
    if !made.anything() {
        if made.skipped.is_empty() {
            made.skipped
                .push("no outputs were requested (outputs lists neither bones nor vat)".into());
        }
        return Ok(Baked::Skipped(made.skipped.join("; ")));
    }
    job.observer.stage("writing");
    for step in steps::RECORD_STEPS {
        step(&plan, &mut sink, &mut made)?;
    }
    let Some(metadata) = made.metadata else {
        let why = "the metadata step did not run".to_owned();
        return Err(BakeError::new(Stage::Internal, Source::Panic(why)));
    };
    let records = sidecar::Records {
        container: &container_name,
        metadata: &metadata,
        records: &made.records,
    };
    write_sidecar(&mut sink, records)?;
    let finished = sink.finish(&metadata).map_err(|e| e.at(Stage::Container))?;
    fault("commit", job.input)?;
    let committed = finished.commit().map_err(|e| e.at(Stage::Commit))?;
    for warning in &committed.kept {
        job.observer.warning(warning);
    }
    Ok(Baked::Written {
        files: committed.files,
        removed: committed.removed,
    })
}

/// What no output of `job` may replace: the run's inputs, the model file
/// and every buffer and image it reads.
fn protected_inputs(job: &ModelJob<'_>) -> crate::staging::Protected {
    let mut protected = job.protected.cloned().unwrap_or_default();
    protected.add(job.input);
    // The same list the bake key read; a file it cannot name was not read.
    if let Ok(files) = import::external_files(job.input, job.bytes, &job.settings.import) {
        for f in &files {
            protected.add(f);
        }
    }
    protected
}
