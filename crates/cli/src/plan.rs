//! Validated bake plans: arguments checked once, before any work starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rigbake_core::bake::MatrixLayout;
use rigbake_core::import::ImportOptions;
use rigbake_core::timeline::{SampleRule, Sampling};
use rigbake_format::texture::Precision;

use crate::args::{BakeArgs, LayoutArg, PrecisionArg, SamplingArg};
use crate::report::{self, Outcome};
use crate::{EXIT_FAILED, EXIT_OK, job};

/// Options shared by every model of a bake.
#[derive(Debug, Clone, PartialEq)]
pub struct BakeSettings {
    /// Frame rate and rule.
    pub sampling: Sampling,
    /// Bone texture layout.
    pub layout: MatrixLayout,
    /// Bone texture precision.
    pub precision: Precision,
    /// Largest texture width or height.
    pub max_texture_size: usize,
    /// Embed textures in the container instead of writing files beside it.
    pub embed_textures: bool,
    /// Import options (limits, file access).
    pub import: ImportOptions,
}

/// One model to bake and where its outputs go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BakeJob {
    /// The model file.
    pub input: PathBuf,
    /// Its output folder.
    pub out_dir: PathBuf,
}

/// A validated `rigbake bake` invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct BakePlan {
    /// Models in the order given.
    pub jobs: Vec<BakeJob>,
    /// Shared settings.
    pub settings: BakeSettings,
    /// Worker threads, `None` for all cores.
    pub threads: Option<usize>,
    /// Only print errors.
    pub quiet: bool,
}

impl BakePlan {
    /// Validates raw arguments; the error is a usage message.
    pub fn from_args(args: &BakeArgs) -> Result<Self, String> {
        if !(args.fps.is_finite() && args.fps > 0.0 && args.fps <= 1000.0) {
            return Err(format!(
                "--fps must be between 0 and 1000, got {}",
                args.fps
            ));
        }
        if args.max_texture_size == 0 {
            return Err("--max-texture-size must be positive".to_owned());
        }
        if args.jobs == Some(0) {
            return Err("--jobs must be at least 1".to_owned());
        }
        let mut by_dir: BTreeMap<PathBuf, &Path> = BTreeMap::new();
        let mut jobs = Vec::with_capacity(args.models.len());
        for input in &args.models {
            let stem = input
                .file_stem()
                .ok_or_else(|| format!("`{}` is not a file name", input.display()))?;
            let out_dir = args.out.join(stem);
            if let Some(other) = by_dir.insert(out_dir.clone(), input) {
                return Err(format!(
                    "`{}` and `{}` would both write to `{}`; bake them into different --out folders",
                    other.display(),
                    input.display(),
                    out_dir.display()
                ));
            }
            jobs.push(BakeJob {
                input: input.clone(),
                out_dir,
            });
        }
        Ok(Self {
            jobs,
            settings: BakeSettings {
                sampling: Sampling {
                    fps: args.fps,
                    rule: match args.sampling {
                        SamplingArg::FixedRate => SampleRule::FixedRate,
                        SamplingArg::EvenSpread => SampleRule::EvenSpread,
                    },
                },
                layout: match args.layout {
                    LayoutArg::Mat4 => MatrixLayout::Mat4,
                    LayoutArg::Mat3x4 => MatrixLayout::Mat3x4,
                },
                precision: match args.precision {
                    PrecisionArg::F32 => Precision::F32,
                    PrecisionArg::F16 => Precision::F16,
                },
                max_texture_size: args.max_texture_size,
                embed_textures: args.embed_textures,
                import: ImportOptions::default(),
            },
            threads: args.jobs,
            quiet: args.quiet,
        })
    }
}

/// Runs every job of `plan` and prints the report; returns the exit code.
pub fn execute(plan: &BakePlan) -> u8 {
    let run_all = || -> Vec<Outcome> {
        plan.jobs
            .par_iter()
            .map(|j| job::bake_model(j, &plan.settings))
            .collect()
    };
    let outcomes = match plan.threads {
        None => run_all(),
        Some(n) => match rayon::ThreadPoolBuilder::new().num_threads(n).build() {
            Ok(pool) => pool.install(run_all),
            Err(e) => {
                eprintln!("error: cannot start {n} worker threads: {e}");
                return EXIT_FAILED;
            }
        },
    };
    report::print(&plan.jobs, &outcomes, plan.quiet);
    if outcomes.iter().any(Outcome::is_failure) {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}
