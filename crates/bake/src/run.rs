//! One model of a batch: check its output folder, read it, compute its
//! bake key, report it up to date when its outputs are, else bake it.
//! Every failure is an [`Outcome`] whose error names the model file, so a
//! batch goes on past it.

use std::path::Path;

use rigbake_core::import;

use crate::incremental::outputs_status;
use crate::report::Outcome;
use crate::settings::BakeSettings;
use crate::sink::{SharedStore, container_path};
use crate::staging::Protected;
use crate::{BakeError, Baked, ModelJob, Observer, Stage, bake_key, bake_model};

/// What one model's run needs.
pub struct ModelRun<'a> {
    /// The model file.
    pub input: &'a Path,
    /// The run's output root (the model's folder must lie inside it).
    pub out_root: &'a Path,
    /// The model's output folder.
    pub out_dir: &'a Path,
    /// Its resolved settings.
    pub settings: &'a BakeSettings,
    /// Rebake even when the outputs are up to date (`--force`).
    pub force: bool,
    /// Where shared bone textures go, when sharing.
    pub shared: Option<&'a SharedStore>,
    /// The run's inputs, which no output may replace.
    pub protected: &'a Protected,
    /// Who hears about progress and warnings.
    pub observer: &'a dyn Observer,
    /// The bakes under the output root before the run, to warn when this
    /// model's bake lands beside a bake of the same source in another
    /// folder; `None` to skip that check.
    pub existing: Option<&'a crate::existing::ExistingBakes>,
}

/// Runs one model: skipped when it asks for no output, up to date when
/// its container has the same bake key and every file it lists is intact
/// (unless `force`), else baked.
pub fn run_model(r: &ModelRun<'_>) -> Outcome {
    // The OpenVAT export rides on a VAT bake: alone it writes nothing.
    let outputs = r.settings.outputs;
    if outputs
        .iter()
        .all(|k| k == rigbake_types::OutputKind::OpenVat)
    {
        return Outcome::Skipped {
            reason: "no outputs requested".to_owned(),
        };
    }
    let failed = |e: BakeError| Outcome::Failed {
        error: e.in_file(r.input),
    };
    if let Err(e) = crate::staging::check_dir(r.out_root, r.out_dir) {
        return failed(
            crate::error::StepError::io(
                format!("cannot prepare `{}`", r.out_dir.display()),
                r.out_dir,
                e,
            )
            .at(Stage::Prepare),
        );
    }
    let bytes = match import::read_file(r.input, &r.settings.import.limits) {
        Ok(b) => b,
        Err(e) => return failed(BakeError::new(Stage::Import, e)),
    };
    let location = crate::source_path::relative_source(r.input, r.out_dir);
    let key = match bake_key(
        r.input,
        &bytes,
        r.settings,
        r.shared.is_some(),
        location.as_deref(),
    ) {
        Ok(k) => k,
        Err(e) => return failed(e),
    };
    // The source's hash, once: why a rebake happens, and where else it
    // was baked.
    let source_sha256 = {
        use sha2::Digest as _;
        format!("{:x}", sha2::Sha256::digest(&bytes))
    };
    let current = crate::incremental::Current {
        source_sha256: &source_sha256,
        settings: r.settings,
    };
    let container = container_path(r.input, r.out_dir);
    let reason = if r.force {
        Some("--force".to_owned())
    } else {
        match outputs_status(&container, r.out_dir, &key, Some(current)) {
            Ok(files) => return Outcome::UpToDate { files, key },
            Err(reason) => reason,
        }
    };
    if let Some(other) = r
        .existing
        .and_then(|e| e.elsewhere(&source_sha256, r.out_dir))
    {
        r.observer.warning(&format!(
            "a bake of the same source (same content) is already at `{}`; this one goes to `{}` (the output folder follows the model's path relative to the folder given, or its name for a file given alone): bake the same folder again to update that bake, or remove one",
            other.display(),
            r.out_dir.display()
        ));
    }
    let baked = bake_model(&ModelJob {
        input: r.input,
        bytes: &bytes,
        out_dir: r.out_dir,
        settings: r.settings,
        key: &key,
        shared: r.shared,
        observer: r.observer,
        source_location: location.as_deref(),
        protected: Some(r.protected),
    });
    match baked {
        Ok(Baked::Written { files, removed }) => Outcome::Baked {
            files,
            removed,
            key,
            reason,
        },
        Ok(Baked::Skipped(reason)) => Outcome::Skipped { reason },
        Err(e) => failed(e),
    }
}
