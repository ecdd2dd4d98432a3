//! Running a plan: every model in parallel on one rayon pool (work inside a
//! model uses the same pool, so many small models never oversubscribe the
//! machine), skipping models whose outputs are up to date, isolating
//! failures, and reporting.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use rigbake_core::import;
use rigbake_format::container::{Container, FORMAT_MAJOR, FORMAT_MINOR};
use rigbake_format::meta::Storage;
use sha2::{Digest, Sha256};

use crate::job;
use crate::plan::{BakeJob, BakePlan, ProgressMode};
use crate::progress::{ModelProgress, Progress};
use crate::report::{Outcome, Report};
use crate::{EXIT_FAILED, EXIT_OK};

/// Where identical bone textures of different models are written once.
#[derive(Debug, Clone)]
pub struct SharedStore {
    root: PathBuf,
    dir: PathBuf,
}

impl SharedStore {
    /// A store in `root/_shared/bones`.
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            dir: root.join("_shared").join("bones"),
        }
    }

    /// Writes `bytes` once under their SHA-256 (a temporary name, then a
    /// rename, so concurrent models never see a partial file) and returns the
    /// path relative to `out_dir` (a folder below the store's root).
    pub fn store(&self, out_dir: &Path, bytes: &[u8]) -> std::io::Result<String> {
        let name = format!("{:x}.exr", Sha256::digest(bytes));
        let file = self.dir.join(&name);
        if !file.exists() {
            std::fs::create_dir_all(&self.dir)?;
            let tmp = self.dir.join(format!(
                ".{name}.{}.{:?}.tmp",
                std::process::id(),
                std::thread::current().id()
            ));
            std::fs::write(&tmp, bytes)?;
            std::fs::rename(&tmp, &file)?;
        }
        let depth = out_dir
            .strip_prefix(&self.root)
            .map_or(0, |p| p.components().count());
        Ok(format!("{}_shared/bones/{name}", "../".repeat(depth)))
    }
}

/// The bake key of a job: SHA-256 over the tool and format versions, the
/// resolved settings, and every input byte (the model and its external
/// buffers). Same key, same outputs.
pub fn bake_key(job: &BakeJob, bytes: &[u8]) -> Result<String, String> {
    let mut h = Sha256::new();
    h.update(format!(
        "rigbake {}\ncontainer {FORMAT_MAJOR}.{FORMAT_MINOR}\n",
        env!("CARGO_PKG_VERSION")
    ));
    h.update(format!("{:?}\n", job.settings));
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
    let files = import::external_files(&job.input, bytes, &job.settings.import)
        .map_err(|e| e.to_string())?;
    for f in files {
        let data = std::fs::read(&f).map_err(|e| {
            format!(
                "{}: cannot read `{}`: {e}",
                job.input.display(),
                f.display()
            )
        })?;
        h.update((data.len() as u64).to_le_bytes());
        h.update(&data);
    }
    Ok(format!("{:x}", h.finalize()))
}

/// The container a job writes.
pub fn container_path(job: &BakeJob) -> PathBuf {
    let stem = job
        .input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    job.out_dir.join(format!("{stem}.rigbake"))
}

/// Whether the job's outputs exist, were made with `key`, and every file the
/// container lists beside it is present with the recorded size.
fn up_to_date(job: &BakeJob, key: &str) -> bool {
    let Ok(c) = Container::open(&container_path(job)) else {
        return false;
    };
    if c.bake_key() != Some(key) {
        return false;
    }
    let sized = |name: &str, bytes: u64| {
        std::fs::metadata(job.out_dir.join(name)).is_ok_and(|m| m.len() == bytes)
    };
    let bones = c
        .metadata()
        .textures
        .iter()
        .all(|t| t.storage != Storage::File || sized(&t.name, t.bytes));
    let vat = c.vat().is_none_or(|v| {
        v.textures
            .iter()
            .all(|t| t.storage != Storage::File || sized(&t.name, t.bytes))
            && v.playback_file
                .as_deref()
                .is_none_or(|f| job.out_dir.join(f).is_file())
    });
    let weights = c.weights().is_none_or(|w| {
        w.mesh_file
            .as_deref()
            .is_none_or(|f| job.out_dir.join(f).is_file())
    });
    bones && vat && weights
}

fn run_job(
    job: &BakeJob,
    plan: &BakePlan,
    progress: &ModelProgress,
    shared: Option<&SharedStore>,
) -> Outcome {
    let o = job.settings.outputs;
    if !(o.bones || o.weights || o.vat || o.anchors) {
        return Outcome::Skipped {
            reason: "no outputs requested".to_owned(),
        };
    }
    let bytes = match import::read_file(&job.input, &job.settings.import.limits) {
        Ok(b) => b,
        Err(e) => {
            return Outcome::Failed {
                error: e.to_string(),
            };
        }
    };
    let key = match bake_key(job, &bytes) {
        Ok(k) => k,
        Err(error) => return Outcome::Failed { error },
    };
    if !plan.force && up_to_date(job, &key) {
        return Outcome::UpToDate { key };
    }
    job::bake_model(
        job,
        &job::Context {
            bytes: &bytes,
            key: &key,
            progress,
            shared,
        },
    )
}

/// Runs every job of `plan`, prints progress and the report; returns the
/// exit code (0 only when no model failed).
pub fn execute(plan: &BakePlan) -> u8 {
    let started = Instant::now();
    let progress = Progress::new(plan.progress, plan.jobs.len());
    let shared = plan.share_bones.then(|| SharedStore::new(&plan.out));
    let run_all = || -> Vec<(String, Outcome, f64)> {
        plan.jobs
            .par_iter()
            .map(|job| {
                let t0 = Instant::now();
                let model = progress.start(&job.id);
                let outcome = run_job(job, plan, &model, shared.as_ref());
                let seconds = t0.elapsed().as_secs_f64();
                progress.finish(model, &outcome, seconds);
                (job.id.clone(), outcome, seconds)
            })
            .collect()
    };
    let entries = match plan.threads {
        None => run_all(),
        Some(n) => match rayon::ThreadPoolBuilder::new().num_threads(n).build() {
            Ok(pool) => pool.install(run_all),
            Err(e) => {
                eprintln!("error: cannot start {n} worker threads: {e}");
                return EXIT_FAILED;
            }
        },
    };
    progress.close();
    let failed = entries.iter().any(|(_, o, _)| o.is_failure());
    let report = Report::new(entries, plan.shard, started.elapsed().as_secs_f64());
    if plan.json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("error: cannot write the report: {e}"),
        }
    }
    if plan.progress != ProgressMode::Quiet || failed {
        let mut summary = report.summary();
        if plan.other_shards > 0 {
            summary.push_str(&format!(
                "; {} models belong to other shards",
                plan.other_shards
            ));
        }
        // Failures were printed as they happened; keep only the totals line.
        eprintln!("{}", summary.lines().last().unwrap_or_default());
    }
    if failed { EXIT_FAILED } else { EXIT_OK }
}
