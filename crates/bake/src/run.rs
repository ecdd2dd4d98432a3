//! One model of a batch: check its output folder, read it, compute its
//! bake key, report it up to date when its outputs are, else bake it.
//! Every failure is an [`Outcome`] whose error names the model file, so a
//! batch goes on past it.

use std::path::Path;

use crate::incremental::outputs_status;
use crate::input::ModelInput;
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
    if let Some(reason) = crate::job::nothing_requested(r.settings.outputs) {
        return Outcome::Skipped { reason };
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
    // Read and parsed once: the key, the up-to-date check and the bake all
    // take it from here.
    let input = match ModelInput::read(r.input, r.settings) {
        Ok(input) => input,
        Err(e) => return failed(e),
    };
    let location = crate::source_path::relative_source(r.input, r.out_dir);
    let key = match bake_key(&input, r.settings, r.shared.is_some(), location.as_deref()) {
        Ok(k) => k,
        Err(e) => return failed(e),
    };
    // The source's hash: why a rebake happens, and where else it was baked.
    let source_sha256 = input.model().sha256();
    let current = crate::incremental::Current {
        source_sha256,
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
        .and_then(|e| e.elsewhere(source_sha256, r.out_dir))
    {
        r.observer.warning(&format!(
            "a bake of the same source (same content) is already at `{}`; this one goes to `{}` (the output folder follows the model's path relative to the folder given, or its name for a file given alone): bake the same folder again to update that bake, or remove one",
            other.display(),
            r.out_dir.display()
        ));
    }
    let baked = bake_model(&ModelJob {
        input: &input,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Silent;
    use rigbake_core::import::documents_parsed;
    use rigbake_types::OutputKind;

    /// Runs `input` into `out` with `settings`; returns the outcome and how
    /// many glTF documents the run parsed (on this thread: the whole run
    /// of one model, planning and importing included, runs on it).
    fn counted(input: &Path, out: &Path, settings: &BakeSettings) -> (Outcome, u64) {
        let before = documents_parsed();
        let outcome = run_model(&ModelRun {
            input,
            out_root: out,
            out_dir: out,
            settings,
            force: false,
            shared: None,
            protected: &Protected::default(),
            observer: &Silent,
            existing: None,
        });
        (outcome, documents_parsed() - before)
    }

    /// A model's run parses each source file once: the bake key, the
    /// up-to-date check, the plan, the import, the LOD level files and the
    /// protection of the inputs all take it from one parse. The model is a
    /// `.gltf` with an external buffer (listed for the key, read by the
    /// import) and a LOD level file of its own; every output kind is asked
    /// for, so every pass runs.
    #[test]
    fn a_model_run_parses_each_source_file_once() {
        let dir = tempfile::tempdir().unwrap();
        let (json, bin) = rigbake_fixtures::models::tentacle().to_gltf_external("tentacle.bin");
        let model = dir.path().join("tentacle.gltf");
        std::fs::write(&model, json).unwrap();
        std::fs::write(dir.path().join("tentacle.bin"), bin).unwrap();
        let level = dir.path().join("tentacle_far.glb");
        std::fs::write(&level, rigbake_fixtures::models::tentacle().to_glb()).unwrap();
        let out = dir.path().join("out");

        let mut settings = BakeSettings::default();
        for kind in OutputKind::ALL {
            settings.outputs.set(kind, true);
        }
        let (outcome, parsed) = counted(&model, &out, &settings);
        assert!(matches!(outcome, Outcome::Baked { .. }), "{outcome:?}");
        assert_eq!(parsed, 1, "the model alone, parsed once");

        settings.lod_files = vec![level];
        let (outcome, parsed) = counted(&model, &out, &settings);
        let Outcome::Baked { files, .. } = &outcome else {
            panic!("{outcome:?}")
        };
        assert!(
            files
                .iter()
                .any(|(f, _)| f.ends_with("tentacle.lod1.weights.glb")),
            "the level file was baked: {files:?}"
        );
        assert_eq!(parsed, 2, "the model and its level file, each parsed once");

        // Up to date: parsed for the key only, once each.
        let (outcome, parsed) = counted(&model, &out, &settings);
        assert!(matches!(outcome, Outcome::UpToDate { .. }), "{outcome:?}");
        assert_eq!(parsed, 2);
    }
}
