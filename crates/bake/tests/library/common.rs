//! Helpers shared by the library's tests: a bake of one model as the
//! command line runs it (`rigbake::run::run_model`), keeping its warnings;
//! many models in parallel; settings as the command line's flags make
//! them; the contact sheet `preview` draws.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;
use rigbake::playback::{self, Decode, Paths};
use rigbake::preview::scene::{PathChoice, rows_drawn};
use rigbake::preview::{Plan, spaced_frames};
use rigbake::report::Outcome;
use rigbake::run::{ModelRun, run_model};
use rigbake::staging::Protected;
use rigbake::{BakeSettings, Observer};
use rigbake_types::OutputKind;

pub use rigbake_fixtures::testkit::files::{
    Rgba, containers, glb_primitive, read_exr, read_png16, rgba_f32, tree,
};
pub use rigbake_fixtures::testkit::models::{model_files, shared_models};
pub use rigbake_fixtures::testkit::reference;

/// Keeps the warnings a bake gives, in order.
#[derive(Default)]
struct Warnings(Mutex<Vec<String>>);

impl Observer for Warnings {
    fn info(&self, _: &str) {}

    fn stage(&self, _: &str) {}

    fn warning(&self, message: &str) {
        self.0.lock().unwrap().push(message.to_owned());
    }
}

/// What one model's bake gave.
pub struct Bake {
    /// The model file.
    pub model: PathBuf,
    /// Baked, skipped or failed (with the error naming the file).
    pub outcome: Outcome,
    /// The warnings it gave (what `rigbake bake` prints as `warning:`
    /// lines, without the model's name in front).
    pub warnings: Vec<String>,
}

impl Bake {
    /// Panics with the error or the reason unless the model was baked.
    pub fn baked(self) -> Self {
        assert!(
            matches!(self.outcome, Outcome::Baked { .. }),
            "{}: {:?}",
            self.model.display(),
            self.outcome
        );
        self
    }

    /// The error of a failed bake; panics when it did not fail.
    pub fn error(&self) -> &str {
        match &self.outcome {
            Outcome::Failed { error } => error,
            other => panic!("{}: not failed: {other:?}", self.model.display()),
        }
    }
}

/// The file stem of `p`.
pub fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

/// Bakes `model` into `out/<stem>` with `settings`, as `rigbake bake MODEL
/// --out OUT` runs one model (output folder checked, source read once,
/// bake key, staged files, the source's location recorded).
pub fn bake(model: &Path, out: &Path, settings: &BakeSettings) -> Bake {
    let out_dir = out.join(stem(model));
    let warnings = Warnings::default();
    let outcome = run_model(&ModelRun {
        input: model,
        out_root: out,
        out_dir: &out_dir,
        settings,
        force: false,
        shared: None,
        protected: &Protected::default(),
        observer: &warnings,
        existing: None,
    });
    Bake {
        model: model.to_path_buf(),
        outcome,
        warnings: warnings.0.into_inner().unwrap(),
    }
}

/// [`bake`] of every model, in parallel as a batch of the command line
/// runs them, in the order given.
pub fn bake_all(models: &[PathBuf], out: &Path, settings: &BakeSettings) -> Vec<Bake> {
    models.par_iter().map(|m| bake(m, out, settings)).collect()
}

/// Panics naming every failed bake of `bakes` (skipped models are no
/// failure: a batch of the command line exits 0 with them).
pub fn assert_none_failed(bakes: &[Bake]) {
    let failed: Vec<String> = bakes
        .iter()
        .filter(|b| b.outcome.is_failure())
        .map(|b| format!("{}: {:?}", b.model.display(), b.outcome))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Runs `f` on a pool of `threads` threads (`None`: the global pool).
pub fn on_threads<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> T {
    match threads {
        None => f(),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
            .install(f),
    }
}

/// verify's measurement of every clip, every frame, of both paths of a
/// loaded bake (bones first).
pub fn measure_all(loaded: &rigbake::playback::Loaded) -> Vec<rigbake::verify::OutputStats> {
    use rigbake::verify::{self, Subject};
    let subject = Subject::of(loaded);
    let paths = verify::Path::all(loaded);
    let all: Vec<usize> = (0..loaded.clips.len()).collect();
    verify::measure(&subject, &paths, &all, 1).unwrap()
}

/// The default settings with `edit` applied.
pub fn settings(edit: impl FnOnce(&mut BakeSettings)) -> BakeSettings {
    let mut s = BakeSettings::default();
    edit(&mut s);
    s
}

/// `--vat` of `rigbake bake`: vertex animation textures besides the
/// bone-matrix textures and weights.
pub fn with_vat(s: &mut BakeSettings) {
    s.outputs.set(OutputKind::Vat, true);
}

/// What `rigbake vat` bakes: vertex animation textures only.
pub fn vat_only(s: &mut BakeSettings) {
    for kind in [OutputKind::Bones, OutputKind::Weights, OutputKind::Anchors] {
        s.outputs.set(kind, false);
    }
    s.outputs.set(OutputKind::Vat, true);
}

/// `--max-texture-size N`: bone textures and VAT alike.
pub fn max_texture_size(s: &mut BakeSettings, n: usize) {
    s.max_texture_size = n;
    s.vat.options.max_texture_size = n;
}

/// The contact sheet `rigbake preview FILE --out PNG` draws (8 evenly
/// spaced frames of every clip, 160 pixels a cell) on `path`, loaded as
/// preview loads it: VAT rows read from disk only for the frames drawn
/// (with `decode` [`Decode::Rows`]), the source found from the container
/// unless `source` names it. The PNG bytes.
pub fn sheet(file: &Path, source: Option<&Path>, path: PathChoice, decode: Decode) -> Vec<u8> {
    let paths = match path {
        PathChoice::Bones => Paths::Bones,
        PathChoice::Vat => Paths::Vat,
    };
    let mut loaded = playback::load_with(file, source, paths, decode).unwrap();
    let columns = 8;
    let cells: Vec<(usize, u32)> = (0..loaded.clips.len())
        .flat_map(|c| {
            spaced_frames(loaded.clips[c].info.frames, columns)
                .into_iter()
                .map(move |f| (c, f))
        })
        .collect();
    if let Some(vat) = loaded.vat.as_ref().filter(|v| v.is_deferred()) {
        loaded.vat = Some(vat.window(&rows_drawn(&loaded, &cells)).unwrap());
    }
    let plan = Plan {
        path,
        cells,
        columns,
        size: 160,
    };
    rigbake::preview::picture::picture(&loaded, &plan, None)
        .unwrap()
        .png
}
