//! What happened to each model, printed one line each plus a summary.

use std::path::PathBuf;

use crate::plan::BakeJob;

/// The result of one model's bake.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Outputs were written.
    Baked {
        /// Files written, with their sizes in bytes.
        files: Vec<(PathBuf, u64)>,
    },
    /// Nothing applied to this model (for example no skinned mesh).
    Skipped {
        /// Why.
        reason: String,
    },
    /// The model could not be baked.
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

/// Prints one line per model (to stderr) and a summary line.
pub fn print(jobs: &[BakeJob], outcomes: &[Outcome], quiet: bool) {
    let (mut baked, mut skipped, mut failed) = (0, 0, 0);
    for (job, outcome) in jobs.iter().zip(outcomes) {
        match outcome {
            Outcome::Baked { files } => {
                baked += 1;
                if !quiet {
                    let bytes: u64 = files.iter().map(|(_, b)| b).sum();
                    eprintln!(
                        "baked   {} -> {} ({} files, {} bytes)",
                        job.input.display(),
                        job.out_dir.display(),
                        files.len(),
                        bytes
                    );
                }
            }
            Outcome::Skipped { reason } => {
                skipped += 1;
                if !quiet {
                    eprintln!("skipped {}: {reason}", job.input.display());
                }
            }
            Outcome::Failed { error } => {
                failed += 1;
                eprintln!("error: {error}");
            }
        }
    }
    if !quiet || failed > 0 {
        eprintln!("{baked} baked, {skipped} skipped, {failed} failed");
    }
}
