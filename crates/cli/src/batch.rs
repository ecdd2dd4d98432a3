//! Running a plan: every model in parallel on one rayon pool (work inside a
//! model uses the same pool, so many small models never oversubscribe the
//! machine), skipping models whose outputs are up to date, isolating
//! failures, and reporting.

use std::time::Instant;

use rayon::prelude::*;
use rigbake::existing::ExistingBakes;
use rigbake::run::{ModelRun, run_model};
use rigbake::sink::SharedStore;
use rigbake::staging::{OutputLock, Protected};

use crate::exit::{self, EXIT_FAILED, EXIT_OK, Failure};
use crate::plan::{BakeJob, BakePlan, ProgressMode};
use crate::progress::{ModelProgress, Progress};
use rigbake::report::{Entry, Outcome, Report};

fn run_job(
    job: &BakeJob,
    plan: &BakePlan,
    progress: &ModelProgress,
    shared: Option<&SharedStore>,
    protected: &Protected,
    existing: &ExistingBakes,
) -> Outcome {
    run_model(&ModelRun {
        input: &job.input,
        out_root: &plan.out,
        out_dir: &job.out_dir,
        settings: &job.settings,
        force: plan.force,
        shared,
        protected,
        observer: progress,
        existing: Some(existing),
    })
}

/// Runs every job of `plan`, prints progress and the report; returns the
/// exit code (0 only when no model failed), or why the run could not
/// start or report.
pub fn execute(plan: &BakePlan) -> exit::Outcome {
    let started = Instant::now();
    // One run at a time per output root: a second run waits here, so two
    // runs never mix their outputs or remove each other's temporaries.
    let waiting = || {
        eprintln!(
            "waiting for another rigbake run that writes to `{}`",
            plan.out.display()
        )
    };
    let _lock = OutputLock::acquire(&plan.out, waiting).map_err(|e| {
        let out = plan.out.display();
        Failure::Failed(format!("cannot lock the output folder `{out}`: {e}"))
    })?;
    let progress = Progress::new(plan.progress, plan.jobs.len(), plan.list_files);
    let shared = plan.share_bones.then(|| SharedStore::new(&plan.out));
    // Every model of the run is an input no output may replace (each job
    // adds its own buffers and images).
    let mut protected = Protected::default();
    for job in &plan.jobs {
        protected.add(&job.input);
    }
    let protected = protected.frozen();
    let existing = ExistingBakes::scan(&plan.out);
    let run_all = || -> Vec<Entry> {
        plan.jobs
            .par_iter()
            .map(|job| {
                let t0 = Instant::now();
                let model = progress.start(&job.id);
                let outcome = run_job(job, plan, &model, shared.as_ref(), &protected, &existing);
                let seconds = t0.elapsed().as_secs_f64();
                let (warnings, encodings) = (model.warnings(), model.choices());
                let errors = model.errors();
                progress.finish(model, &outcome, seconds);
                Entry {
                    input: job.id.clone(),
                    outcome,
                    seconds,
                    warnings,
                    encodings,
                    errors,
                }
            })
            .collect()
    };
    let entries = match plan.threads {
        None => run_all(),
        Some(n) => match rayon::ThreadPoolBuilder::new().num_threads(n).build() {
            Ok(pool) => pool.install(run_all),
            Err(e) => {
                return Err(Failure::Failed(format!(
                    "cannot start {n} worker threads: {e}"
                )));
            }
        },
    };
    progress.close();
    let failed = entries.iter().any(|e| e.outcome.is_failure());
    let report = Report::new(
        entries,
        &plan.out,
        plan.shard,
        started.elapsed().as_secs_f64(),
    );
    let json = plan.json.then(|| serde_json::to_string_pretty(&report));
    if let Some(Ok(s)) = &json {
        crate::stdout::println(s);
    }
    if plan.progress != ProgressMode::Quiet || failed {
        let mut summary = report.summary();
        if plan.other_shards > 0 {
            summary.push_str(&format!(
                "; {} to other shards",
                match plan.other_shards {
                    1 => "1 model belongs".to_owned(),
                    n => format!("{n} models belong"),
                }
            ));
        }
        // Failures were printed as they happened; keep only the totals line.
        eprintln!("{}", summary.lines().last().unwrap_or_default());
    }
    if let Some(Err(e)) = json {
        return Err(Failure::Failed(format!("cannot write the report: {e}")));
    }
    Ok(if failed { EXIT_FAILED } else { EXIT_OK })
}
