//! Progress while a batch runs: live bars on a terminal (indicatif: one
//! overall bar and one line per model in flight, with its clip and frame
//! counts), one plain line per finished model otherwise (CI logs), nothing
//! with `--quiet`. Errors are always printed.

use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::plan::ProgressMode;
use rigbake::report::{Outcome, count, human_bytes};

/// Progress of a whole batch.
pub struct Progress {
    mode: ProgressMode,
    total: usize,
    /// Models finished so far. Held while a finished line is numbered and
    /// printed, so lines appear in counter order (`[1/10]` before `[2/10]`)
    /// even when two workers finish at once.
    finished: Mutex<usize>,
    /// `-v`: list each baked model's files under its line.
    list_files: bool,
    bars: Option<(MultiProgress, ProgressBar)>,
}

/// Progress of one model, updated by its job.
pub struct ModelProgress {
    bar: Option<ProgressBar>,
    id: String,
    /// Print warnings (not with `--quiet`).
    warnings: bool,
    /// Every warning given, printed or not, for the report.
    given: Mutex<Vec<String>>,
    /// What `--max-error` chose, per output.
    chosen: Mutex<Vec<String>>,
    /// The worst clip of each texture the bake measured.
    measured: Mutex<Vec<rigbake::report::TextureError>>,
    info: Mutex<String>,
}

impl ModelProgress {
    /// The warnings given so far (for the JSON report), in order.
    pub fn warnings(&self) -> Vec<String> {
        self.given.lock().map(|w| w.clone()).unwrap_or_default()
    }

    /// What `--max-error` chose for the model's outputs (for the report).
    pub fn choices(&self) -> Vec<String> {
        self.chosen.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// The worst clip of each texture the bake measured (for the report).
    pub fn errors(&self) -> Vec<rigbake::report::TextureError> {
        self.measured.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// Records what the model holds (`76 clips, 2818 frames`).
    pub fn info(&self, text: &str) {
        if let Ok(mut info) = self.info.lock() {
            text.clone_into(&mut info);
        }
        self.stage("baking");
    }

    /// Shows the step the model is at (`bone textures`, `VAT`).
    pub fn stage(&self, step: &str) {
        if let Some(bar) = &self.bar {
            let info = self.info.lock().map(|i| i.clone()).unwrap_or_default();
            let sep = if info.is_empty() { "" } else { ": " };
            bar.set_message(format!("{}{sep}{info}, {step}", self.id));
        }
    }
}

impl rigbake::Observer for ModelProgress {
    fn info(&self, message: &str) {
        ModelProgress::info(self, message);
    }

    fn stage(&self, stage: &str) {
        ModelProgress::stage(self, stage);
    }

    fn measured(&self, errors: &[rigbake::report::TextureError]) {
        if let Ok(mut measured) = self.measured.lock() {
            *measured = errors.to_vec();
        }
    }

    fn chose(&self, message: &str) {
        if let Ok(mut chosen) = self.chosen.lock() {
            chosen.push(message.to_owned());
        }
    }

    fn warning(&self, message: &str) {
        if let Ok(mut given) = self.given.lock() {
            given.push(message.to_owned());
        }
        if !self.warnings {
            return;
        }
        let line = format!("warning: {}: {message}", self.id);
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }
}

impl Progress {
    /// Progress for `total` models; `list_files` (`-v`) lists the files
    /// each baked model wrote.
    pub fn new(mode: ProgressMode, total: usize, list_files: bool) -> Self {
        let bars = (mode == ProgressMode::Bars).then(|| {
            let multi = MultiProgress::new();
            let overall = multi.add(ProgressBar::new(total as u64));
            overall.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} models  {elapsed}  {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            (multi, overall)
        });
        Self {
            mode,
            total,
            finished: Mutex::new(0),
            list_files,
            bars,
        }
    }

    /// A model starts.
    pub fn start(&self, id: &str) -> ModelProgress {
        let bar = self.bars.as_ref().map(|(multi, _)| {
            let bar = multi.add(ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("  {spinner} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar.set_message(format!("{id}: reading"));
            bar
        });
        ModelProgress {
            bar,
            id: id.to_owned(),
            warnings: self.mode != ProgressMode::Quiet,
            given: Mutex::new(Vec::new()),
            chosen: Mutex::new(Vec::new()),
            measured: Mutex::new(Vec::new()),
            info: Mutex::new(String::new()),
        }
    }

    /// A model is done.
    pub fn finish(&self, model: ModelProgress, outcome: &Outcome, seconds: f64) {
        let info = model.info.lock().map(|i| i.clone()).unwrap_or_default();
        let line = match outcome {
            Outcome::Baked {
                files,
                removed,
                reason,
                ..
            } => {
                let bytes: u64 = files.iter().map(|(_, b)| b).sum();
                let why = reason
                    .as_ref()
                    .map_or(String::new(), |r| format!("; rebaked: {r}"));
                let stale = if removed.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; removed {} the previous bake wrote and this one does not",
                        count(removed.len() as u64, "file", None)
                    )
                };
                format!(
                    "baked      {} ({info}; {}, {}{stale}{why}) in {seconds:.1} s",
                    model.id,
                    count(files.len() as u64, "file", None),
                    human_bytes(bytes)
                )
            }
            Outcome::UpToDate { .. } => format!("up to date {}", model.id),
            Outcome::Skipped { reason } => format!("skipped    {}: {reason}", model.id),
            Outcome::Failed { error } => format!("error: {error}"),
        };
        // Counting and printing under one lock keeps the counter in order.
        let mut finished = self
            .finished
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *finished += 1;
        let mut line = format!("[{}/{}] {line}", *finished, self.total);
        if let Outcome::Baked { .. } = outcome {
            for choice in model.choices() {
                line.push_str(&format!("\n           chose {choice}"));
            }
        }
        if let (true, Outcome::Baked { files, removed, .. }) = (self.list_files, outcome) {
            for (path, bytes) in files {
                line.push_str(&format!(
                    "\n           {} ({})",
                    path.display(),
                    human_bytes(*bytes)
                ));
            }
            for path in removed {
                line.push_str(&format!("\n           removed {}", path.display()));
            }
        }
        match (&self.bars, self.mode) {
            (Some((multi, overall)), _) => {
                if let Some(bar) = model.bar {
                    bar.finish_and_clear();
                    multi.remove(&bar);
                }
                let _ = multi.println(line);
                overall.inc(1);
            }
            (None, ProgressMode::Quiet) if outcome.is_failure() => eprintln!("{line}"),
            (None, ProgressMode::Quiet) => {}
            (None, _) => eprintln!("{line}"),
        }
    }

    /// The batch is over.
    pub fn close(&self) {
        if let Some((_, overall)) = &self.bars {
            overall.finish_and_clear();
        }
    }
}
