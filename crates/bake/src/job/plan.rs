//! Validate and plan once: a model imported (exclusions applied, LOD
//! levels attached), its timeline, bone sets and rig plan, all checked
//! against the per-model budget before any output exists.

use std::path::Path;

use rigbake_core::Model;
use rigbake_core::bake::bone_sets;
use rigbake_core::timeline::{ClipSpec, Timeline};
use rigbake_format::meta;
use rigbake_types::OutputKind;

use super::{MAX_MODEL_NAME_BYTES, ModelJob, lod_files, lods, openvat, placement, rig};
use crate::error::{BakeError, Stage, at};
use crate::report::count;
use crate::settings::BakeSettings;

/// A model validated and planned once, before any output is written:
/// imported (exclusions applied, LOD levels attached), its timeline, its
/// bone sets and rig plan, all checked against the per-model budget; and
/// the job it is planned for. Every pass reads it.
pub(super) struct Plan<'a> {
    /// The job: input, settings, output folder, observer.
    pub job: &'a ModelJob<'a>,
    /// The imported model.
    pub model: Model,
    /// The rest-pose globals every mesh writer and the placement record
    /// take their matrices from.
    pub rest: placement::RestPlacements,
    /// The clips and rows to bake.
    pub timeline: Timeline,
    /// The anchors and props (`None`: bones were not asked for).
    pub rig_plan: Option<rig::RigPlan>,
    /// The LOD level files attached to the model.
    pub level_files: Vec<lod_files::AttachedFile>,
}

impl Plan<'_> {
    /// The settings of the job.
    pub fn settings(&self) -> &BakeSettings {
        self.job.settings
    }
}

/// Imports and plans `job`'s model (see [`Plan`]).
pub(super) fn plan<'a>(job: &'a ModelJob<'a>) -> Result<Plan<'a>, BakeError> {
    let settings = job.settings;
    check_model_name(job.input.path()).map_err(at(Stage::Import))?;
    let parsed = job.input.model().parsed();
    let mut model = parsed.import(&settings.import).map_err(at(Stage::Import))?;
    crate::exclude::apply(&mut model, &settings.exclude).map_err(at(Stage::Import))?;
    rigbake_core::lod::drop_meshless(&mut model);
    rigbake_core::lod::apply_specs(&mut model, &settings.lods).map_err(at(Stage::Import))?;
    let level_files = lod_files::attach_all(&mut model, job.input, settings, job.out_dir)
        .map_err(at(Stage::Import))?;
    for warning in &model.looks.warnings {
        job.observer.warning(warning);
    }
    let model = model;
    let timeline = timeline(&model, settings).map_err(at(Stage::Timeline))?;
    job.observer.info(&format!(
        "{}, {}",
        count(timeline.clips.len() as u64, "clip", None),
        count(timeline.rows as u64, "frame", None)
    ));
    // The bone sets and the rig plan (anchors) are known before anything is
    // baked: the per-model budget is checked against them first, so a model
    // over budget fails here, before any output is allocated.
    let sets = if settings.outputs.has(OutputKind::Bones) {
        bone_sets(&model)
    } else {
        Vec::new()
    };
    lods::check_one_texture(&model, &sets).map_err(|e| e.at(Stage::Import))?;
    let rig_plan = if settings.outputs.has(OutputKind::Bones) {
        Some(rig::plan(&model, &sets, settings).map_err(at(Stage::Rig))?)
    } else {
        None
    };
    check_budget(&model, &timeline, &sets, rig_plan.as_ref(), settings)?;
    let rest = placement::RestPlacements::new(&model);
    let reference = rigbake_core::bake::bounds::reference_node(&model);
    rest.check(
        &model,
        reference
            .into_iter()
            .chain(sets.iter().map(|s| s.mesh_node)),
    )
    .map_err(at(Stage::Import))?;
    if settings.outputs.has(OutputKind::OpenVat) {
        openvat::check(&model, &timeline, settings).map_err(|e| e.at(Stage::Vat))?;
    }
    Ok(Plan {
        job,
        rest,
        model,
        timeline,
        rig_plan,
        level_files,
    })
}

/// Refuses a model whose name (its file stem) cannot name its outputs:
/// longer than [`MAX_MODEL_NAME_BYTES`], or with a control character (a
/// TAB), which the container's file names may not hold. Checked before the
/// model is imported.
fn check_model_name(path: &Path) -> rigbake_core::Result<()> {
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.len() > MAX_MODEL_NAME_BYTES {
        return Err(rigbake_core::Error::limit(
            "",
            format!(
                "the model's name (its file name without extension) is {} bytes, more than the limit of {MAX_MODEL_NAME_BYTES}: every output is named after it and a file name holds at most 255 bytes; rename the file",
                name.len()
            ),
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(rigbake_core::Error::invalid(
            "",
            format!(
                "the model's file name holds the control character {:?}, which no output file name may hold; rename the file",
                c
            ),
        ));
    }
    Ok(())
}

/// Refuses a model whose planned bake exceeds the per-model budget
/// ([`rigbake_core::budget::Budget::default`], documented in
/// `docs/limits.md`): evaluation work, output bytes and memory estimated
/// from the timeline rows and the outputs asked for. The error names the
/// model, the budget and both numbers.
fn check_budget(
    model: &Model,
    timeline: &Timeline,
    sets: &[rigbake_core::bake::BoneSet],
    rig_plan: Option<&rig::RigPlan>,
    settings: &BakeSettings,
) -> Result<(), BakeError> {
    use rigbake_core::budget::{BonesPlan, Budget, Plan, VatPlan};
    let bones = rig_plan.map(|_| BonesPlan {
        // The larger of the layout and its fallback (and of the forms
        // `--max-error` may choose): the budget holds whichever the bake
        // ends with.
        pixels_per_joint: settings
            .layout_fallback
            .map_or(0, |l| l.pixels_per_joint())
            .max(settings.layout.pixels_per_joint())
            .max(if settings.max_error.is_some() { 3 } else { 0 }),
        texture_joints: sets
            .iter()
            .map(|s| model.skins[s.skin].joints.len())
            .collect(),
    });
    let vat = settings.outputs.has(OutputKind::Vat).then_some(VatPlan {
        normals: settings.vat.options.normals,
        tangents: settings.vat.options.tangents,
        bytes_per_texel: match settings.vat.encoding {
            _ if settings.max_error.is_some() => 16,
            meta::VatEncoding::Exr32 => 16,
            meta::VatEncoding::Exr16 | meta::VatEncoding::Png16 => 8,
            meta::VatEncoding::Unorm8 | meta::VatEncoding::Unorm10 => 4,
        },
    });
    let plan = Plan {
        rows: timeline.rows,
        bones,
        vat,
        weights: rig_plan.is_some() && settings.outputs.has(OutputKind::Weights),
        anchors: rig_plan.map_or(0, |r| r.anchors.len()),
    };
    Budget::default()
        .check_plan(model, &plan)
        .map(|_| ())
        .map_err(at(Stage::Timeline))
}

/// The clips to bake: the requested ones (every animation when none were
/// named), then the blends.
fn timeline(model: &Model, settings: &BakeSettings) -> rigbake_core::Result<Timeline> {
    if settings.clips.is_empty() && settings.blends.is_empty() {
        return Timeline::all_clips_with(model, settings.sampling, &settings.root_motion);
    }
    let mut specs = if settings.clips.is_empty() {
        model
            .clips
            .iter()
            .map(|c| ClipSpec::whole(&c.name))
            .collect()
    } else {
        settings.clips.clone()
    };
    specs.extend(settings.blends.iter().cloned());
    Timeline::build_with(model, settings.sampling, &specs, &settings.root_motion)
}
