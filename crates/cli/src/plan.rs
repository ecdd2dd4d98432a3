//! Validated bake plans: arguments checked once, before any work starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rigbake_core::bake::MatrixLayout;
use rigbake_core::bake::vat::{NormalConvention, VatOptions};
use rigbake_core::import::ImportOptions;
use rigbake_core::timeline::{ClipRequest, ClipSpec, SampleRule, Sampling};
use rigbake_format::meta;
use rigbake_format::texture::Precision;
use rigbake_format::texture::exr::StreamCompression;

use crate::args::{
    AnchorsArg, BakeArgs, CommonArgs, DirectionEncodingArg, LayoutArg, NormalConventionArg,
    PrecisionArg, PropsArg, SamplingArg, VatArgs, VatFlags, VatFormatArg,
};
use crate::report::{self, Outcome};
use crate::{EXIT_FAILED, EXIT_OK, job};

/// Which outputs a bake writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outputs {
    /// Bone-matrix textures.
    pub bones: bool,
    /// Bone-weight channels and the weights mesh (needs `bones`).
    pub weights: bool,
    /// Vertex animation textures and the playback mesh.
    pub vat: bool,
}

/// Options of vertex animation textures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VatSettings {
    /// Sample encoding.
    pub encoding: meta::VatEncoding,
    /// PNG direction encoding.
    pub direction_encoding: meta::DirectionEncoding,
    /// EXR compression.
    pub compression: StreamCompression,
    /// What the core bakes (normals, tangents, convention, sizes).
    pub options: VatOptions,
}

/// Options shared by every model of a bake.
#[derive(Debug, Clone, PartialEq)]
pub struct BakeSettings {
    /// Frame rate and rule.
    pub sampling: Sampling,
    /// Clips to bake, in order (empty: every animation of the model).
    pub clips: Vec<ClipSpec>,
    /// Blends to bake after the clips.
    pub blends: Vec<ClipSpec>,
    /// Anchors: nodes by name, plus automatic choice.
    pub anchors: AnchorSettings,
    /// Bind rigid props to their joints (else report them as anchors).
    pub bind_props: bool,
    /// Outputs to write.
    pub outputs: Outputs,
    /// Bone texture layout.
    pub layout: MatrixLayout,
    /// Bone texture precision.
    pub precision: Precision,
    /// Bone-weight pairs kept per vertex.
    pub max_influences: usize,
    /// Largest texture width or height.
    pub max_texture_size: usize,
    /// Embed textures in the container instead of writing files beside it.
    pub embed_textures: bool,
    /// VAT options.
    pub vat: VatSettings,
    /// Import options (limits, file access).
    pub import: ImportOptions,
}

/// Which socket tracks to bake.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AnchorSettings {
    /// Nodes named by the user.
    pub nodes: Vec<String>,
    /// Also choose sockets automatically.
    pub auto: bool,
    /// Also write `anchors.exr`.
    pub exr: bool,
}

/// Parses `A,B,W[,W...]` into one blend per weight.
pub fn parse_blend(text: &str) -> Result<Vec<ClipSpec>, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() < 3 || parts[0].is_empty() || parts[1].is_empty() {
        return Err(format!("--blend `{text}`: expected A,B,W[,W...]"));
    }
    parts[2..]
        .iter()
        .map(|w| {
            let weight: f64 = w
                .parse()
                .map_err(|_| format!("--blend `{text}`: `{w}` is not a number"))?;
            if !(0.0..=1.0).contains(&weight) {
                return Err(format!("--blend `{text}`: weight {weight} is outside 0..1"));
            }
            Ok(ClipSpec {
                request: ClipRequest::Blend {
                    a: parts[0].to_owned(),
                    b: parts[1].to_owned(),
                    weight,
                },
                name: None,
                looping: None,
            })
        })
        .collect()
}

/// One model to bake and where its outputs go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BakeJob {
    /// The model file.
    pub input: PathBuf,
    /// Its output folder.
    pub out_dir: PathBuf,
}

/// A validated bake invocation (`rigbake bake` or `rigbake vat`).
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

fn vat_settings(flags: &VatFlags, max_texture_size: usize) -> VatSettings {
    VatSettings {
        encoding: match flags.format {
            VatFormatArg::Exr16 => meta::VatEncoding::Exr16,
            VatFormatArg::Exr32 => meta::VatEncoding::Exr32,
            VatFormatArg::Png16 => meta::VatEncoding::Png16,
        },
        direction_encoding: match flags.direction_encoding {
            DirectionEncodingArg::Octahedral => meta::DirectionEncoding::Octahedral,
            DirectionEncodingArg::Bounds => meta::DirectionEncoding::Bounds,
        },
        compression: if flags.zip {
            StreamCompression::Zip
        } else {
            StreamCompression::None
        },
        options: VatOptions {
            normals: flags.normals,
            tangents: flags.tangents,
            convention: match flags.normal_convention {
                NormalConventionArg::InverseTranspose => NormalConvention::InverseTranspose,
                NormalConventionArg::BlendedMatrix => NormalConvention::BlendedMatrix,
            },
            max_texture_size,
            power_of_two: flags.power_of_two,
        },
    }
}

impl BakePlan {
    /// Validates `rigbake bake` arguments; the error is a usage message.
    pub fn from_bake_args(args: &BakeArgs) -> Result<Self, String> {
        if !(1..=rigbake_core::bake::weights::MAX_INFLUENCES).contains(&args.max_influences) {
            return Err(format!(
                "--max-influences must be 1 to 8, got {}",
                args.max_influences
            ));
        }
        let outputs = Outputs {
            bones: true,
            weights: !args.no_weights,
            vat: args.vat,
        };
        let mut plan = Self::build(
            &args.models,
            &args.common,
            outputs,
            args.layout,
            args.precision,
            &args.vat_flags,
        )?;
        plan.settings.max_influences = args.max_influences;
        plan.settings.anchors = AnchorSettings {
            nodes: args.anchors.clone(),
            auto: args.anchors_mode == Some(AnchorsArg::Auto),
            exr: args.anchors_exr,
        };
        plan.settings.bind_props = args.props == PropsArg::Bind;
        Ok(plan)
    }

    /// Validates `rigbake vat` arguments; the error is a usage message.
    pub fn from_vat_args(args: &VatArgs) -> Result<Self, String> {
        let outputs = Outputs {
            bones: false,
            weights: false,
            vat: true,
        };
        Self::build(
            &args.models,
            &args.common,
            outputs,
            LayoutArg::Mat4,
            PrecisionArg::F32,
            &args.vat_flags,
        )
    }

    fn build(
        models: &[PathBuf],
        common: &CommonArgs,
        outputs: Outputs,
        layout: LayoutArg,
        precision: PrecisionArg,
        vat_flags: &VatFlags,
    ) -> Result<Self, String> {
        if !(common.fps.is_finite() && common.fps > 0.0 && common.fps <= 1000.0) {
            return Err(format!(
                "--fps must be between 0 and 1000, got {}",
                common.fps
            ));
        }
        if common.max_texture_size == 0 {
            return Err("--max-texture-size must be positive".to_owned());
        }
        if common.jobs == Some(0) {
            return Err("--jobs must be at least 1".to_owned());
        }
        let mut by_dir: BTreeMap<PathBuf, &Path> = BTreeMap::new();
        let mut jobs = Vec::with_capacity(models.len());
        for input in models {
            let stem = input
                .file_stem()
                .ok_or_else(|| format!("`{}` is not a file name", input.display()))?;
            let out_dir = common.out.join(stem);
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
                    fps: common.fps,
                    rule: match common.sampling {
                        SamplingArg::FixedRate => SampleRule::FixedRate,
                        SamplingArg::EvenSpread => SampleRule::EvenSpread,
                    },
                },
                clips: common.clips.iter().map(|n| ClipSpec::whole(n)).collect(),
                blends: common
                    .blends
                    .iter()
                    .map(|b| parse_blend(b))
                    .collect::<Result<Vec<_>, _>>()?
                    .into_iter()
                    .flatten()
                    .collect(),
                anchors: AnchorSettings::default(),
                bind_props: true,
                outputs,
                layout: match layout {
                    LayoutArg::Mat4 => MatrixLayout::Mat4,
                    LayoutArg::Mat3x4 => MatrixLayout::Mat3x4,
                },
                precision: match precision {
                    PrecisionArg::F32 => Precision::F32,
                    PrecisionArg::F16 => Precision::F16,
                },
                max_influences: 6,
                max_texture_size: common.max_texture_size,
                embed_textures: common.embed_textures,
                vat: vat_settings(vat_flags, common.max_texture_size),
                import: ImportOptions::default(),
            },
            threads: common.jobs,
            quiet: common.quiet,
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
