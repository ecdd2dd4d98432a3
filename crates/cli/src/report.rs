//! What happened to each model: outcomes, the final summary, the JSON
//! report (`--json`, schema in docs/batch.md), and merging the reports of
//! several shards.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Version of the JSON report layout.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// The result of one model's bake.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Outputs were written.
    Baked {
        /// Files written, with their sizes in bytes.
        files: Vec<(PathBuf, u64)>,
        /// The bake key recorded in the container.
        key: String,
    },
    /// The existing outputs were made from the same inputs and settings.
    UpToDate {
        /// The bake key.
        key: String,
    },
    /// Nothing applied to this model (for example no skinned mesh).
    Skipped {
        /// Why.
        reason: String,
    },
    /// The model could not be baked; previous outputs are untouched.
    Failed {
        /// One line naming the file, the object and the reason.
        error: String,
    },
}

impl Outcome {
    /// Whether this outcome makes the run fail.
    pub fn is_failure(&self) -> bool {
        matches!(self, Self::Failed { .. })
    }
}

/// One model in the JSON report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelReport {
    /// The model's id (path relative to the folder or manifest).
    pub input: String,
    /// `baked`, `up_to_date`, `skipped` or `failed`.
    pub status: String,
    /// Why it was skipped, or the error.
    pub message: Option<String>,
    /// Files written (baked models).
    pub outputs: Vec<OutputFile>,
    /// The bake key (baked and up-to-date models).
    pub key: Option<String>,
    /// Seconds spent on this model.
    pub seconds: f64,
}

/// One file written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputFile {
    /// Its path.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// Counts over a report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Models baked.
    pub baked: usize,
    /// Models already up to date.
    pub up_to_date: usize,
    /// Models with nothing to bake.
    pub skipped: usize,
    /// Models that failed.
    pub failed: usize,
    /// Bytes written.
    pub bytes: u64,
}

/// The whole JSON report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`REPORT_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// `rigbake <version>`.
    pub tool: String,
    /// The shards this report covers (`["2/3"]`; merged reports list all).
    pub shards: Vec<String>,
    /// Wall-clock seconds of the run(s).
    pub seconds: f64,
    /// Every model, sorted by input.
    pub models: Vec<ModelReport>,
    /// Counts.
    pub totals: Totals,
}

impl Report {
    /// Builds a report from outcomes (in job order).
    pub fn new(
        entries: Vec<(String, Outcome, f64)>,
        shard: Option<(usize, usize)>,
        seconds: f64,
    ) -> Self {
        let mut models: Vec<ModelReport> = entries
            .into_iter()
            .map(|(input, outcome, seconds)| {
                let (status, message, outputs, key) = match outcome {
                    Outcome::Baked { files, key } => (
                        "baked",
                        None,
                        files
                            .into_iter()
                            .map(|(p, bytes)| OutputFile {
                                path: p.to_string_lossy().replace('\\', "/"),
                                bytes,
                            })
                            .collect(),
                        Some(key),
                    ),
                    Outcome::UpToDate { key } => ("up_to_date", None, Vec::new(), Some(key)),
                    Outcome::Skipped { reason } => ("skipped", Some(reason), Vec::new(), None),
                    Outcome::Failed { error } => ("failed", Some(error), Vec::new(), None),
                };
                ModelReport {
                    input,
                    status: status.to_owned(),
                    message,
                    outputs,
                    key,
                    seconds,
                }
            })
            .collect();
        models.sort_by(|a, b| a.input.cmp(&b.input));
        let mut report = Self {
            schema_version: REPORT_SCHEMA_VERSION,
            tool: format!("rigbake {}", env!("CARGO_PKG_VERSION")),
            shards: shard
                .map(|(k, n)| vec![format!("{k}/{n}")])
                .unwrap_or_default(),
            seconds,
            models,
            totals: Totals::default(),
        };
        report.count();
        report
    }

    fn count(&mut self) {
        let mut t = Totals::default();
        for m in &self.models {
            match m.status.as_str() {
                "baked" => t.baked += 1,
                "up_to_date" => t.up_to_date += 1,
                "skipped" => t.skipped += 1,
                _ => t.failed += 1,
            }
            t.bytes += m.outputs.iter().map(|o| o.bytes).sum::<u64>();
        }
        self.totals = t;
    }

    /// Joins shard reports: every model once (a model in two reports is an
    /// error), sorted, recounted; seconds are the longest shard's.
    pub fn merge(reports: Vec<Report>) -> Result<Report, crate::error::MergeError> {
        let mut merged = Report {
            schema_version: REPORT_SCHEMA_VERSION,
            tool: format!("rigbake {}", env!("CARGO_PKG_VERSION")),
            shards: Vec::new(),
            seconds: 0.0,
            models: Vec::new(),
            totals: Totals::default(),
        };
        for r in reports {
            if r.schema_version != REPORT_SCHEMA_VERSION {
                return Err(crate::error::MergeError::Schema(
                    r.schema_version,
                    REPORT_SCHEMA_VERSION,
                ));
            }
            merged.shards.extend(r.shards);
            merged.seconds = merged.seconds.max(r.seconds);
            merged.models.extend(r.models);
        }
        merged.models.sort_by(|a, b| a.input.cmp(&b.input));
        if let Some(w) = merged.models.windows(2).find(|w| w[0].input == w[1].input) {
            return Err(crate::error::MergeError::Overlap(w[0].input.clone()));
        }
        merged.shards.sort();
        merged.count();
        Ok(merged)
    }

    /// The human summary: one line per failed model and a totals line.
    pub fn summary(&self) -> String {
        let t = &self.totals;
        let mut s = String::new();
        for m in self.models.iter().filter(|m| m.status == "failed") {
            s.push_str(&format!(
                "failed: {}\n",
                m.message.as_deref().unwrap_or(&m.input)
            ));
        }
        s.push_str(&format!(
            "{} baked, {} up to date, {} skipped, {} failed; {} written in {:.1} s{}",
            t.baked,
            t.up_to_date,
            t.skipped,
            t.failed,
            human_bytes(t.bytes),
            self.seconds,
            if self.shards.is_empty() {
                String::new()
            } else {
                format!(" (shards {})", self.shards.join(", "))
            }
        ));
        s
    }
}

/// `123.4 MiB`-style sizes.
pub fn human_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= f64::from(1u32 << 30) {
        format!("{:.1} GiB", b / f64::from(1u32 << 30))
    } else if b >= f64::from(1u32 << 20) {
        format!("{:.1} MiB", b / f64::from(1u32 << 20))
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(names: &[&str], shard: (usize, usize), failed: bool) -> Report {
        let entries = names
            .iter()
            .map(|n| {
                let outcome = if failed {
                    Outcome::Failed {
                        error: format!("{n}: bad"),
                    }
                } else {
                    Outcome::Baked {
                        files: vec![(PathBuf::from(format!("out/{n}.rigbake")), 10)],
                        key: "k".into(),
                    }
                };
                ((*n).to_owned(), outcome, 0.5)
            })
            .collect();
        Report::new(entries, Some(shard), 1.0)
    }

    #[test]
    fn merging_joins_sorts_and_recounts() {
        let m = Report::merge(vec![
            report(&["b", "d"], (2, 2), false),
            report(&["a", "c"], (1, 2), true),
        ])
        .unwrap();
        let names: Vec<&str> = m.models.iter().map(|m| m.input.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        assert_eq!(
            (m.totals.baked, m.totals.failed, m.totals.bytes),
            (2, 2, 20)
        );
        assert_eq!(m.shards, ["1/2", "2/2"]);
        assert!(m.summary().contains("failed: a: bad"));
        let dup = Report::merge(vec![
            report(&["a"], (1, 2), false),
            report(&["a"], (2, 2), false),
        ]);
        assert!(dup.unwrap_err().to_string().contains("two reports"));
    }
}
