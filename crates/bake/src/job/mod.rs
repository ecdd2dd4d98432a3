//! One model's bake from validated settings to files: import, choose clips,
//! run each requested output into a [`Sink`], write the container, commit
//! the files. Every problem becomes a [`BakeError`] so one bad model never
//! stops the others; even a panic inside one model is caught and reported
//! as an internal error.

mod bones;
mod common;
pub(crate) mod lod_files;
mod lods;
mod mesh;
mod openvat;
mod placement;
mod rig;
mod vat;
mod weights;

use rigbake_types::OutputKind;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use rigbake_core::bake::bone_sets;
use rigbake_core::bake::bounds::{RowBoxes, StaticPart};
use rigbake_core::timeline::{ClipSpec, Timeline};
use rigbake_core::{Model, import};
use rigbake_format::codec;
use rigbake_format::container::SectionKind;
use rigbake_format::meta::{self, Metadata};
use rigbake_format::records::{OptionalRecord, Records};
use sha2::{Digest, Sha256};

use crate::error::{BakeError, Source, Stage, StepError, at};
use crate::records;
use crate::report::count;
use crate::settings::BakeSettings;
use crate::sidecar::{self, Sidecar};
use crate::sink::{OutputSink, SharedStore, Sink};
use common::Part;

/// Hears what a bake is doing (a progress display, a log).
pub trait Observer {
    /// A fact about the model, e.g. "3 clips, 90 frames".
    fn info(&self, message: &str);
    /// The bake moved on to `stage`, e.g. "bone textures".
    fn stage(&self, stage: &str);
    /// Something the user should know about a bake that still succeeds
    /// (morph targets the bone textures cannot carry). Ignored by default.
    fn warning(&self, _message: &str) {}
}

/// An [`Observer`] that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Observer for Silent {
    fn info(&self, _: &str) {}
    fn stage(&self, _: &str) {}
}

/// One model to bake, with everything the bake needs.
pub struct ModelJob<'a> {
    /// The model file (external buffers are found next to it; the
    /// container records its name).
    pub input: &'a Path,
    /// The model file's bytes (already read, for the bake key).
    pub bytes: &'a [u8],
    /// The folder the outputs go to.
    pub out_dir: &'a Path,
    /// What to bake.
    pub settings: &'a BakeSettings,
    /// The bake key, recorded in the container (see [`crate::bake_key`]).
    pub key: &'a str,
    /// Where shared bone textures go, when sharing.
    pub shared: Option<&'a SharedStore>,
    /// Who hears about progress.
    pub observer: &'a dyn Observer,
    /// The model's path relative to `out_dir`, recorded in the container's
    /// source record when known ([`crate::source_path::relative_source`]).
    pub source_location: Option<&'a str>,
    /// The other inputs of the run, which no output may replace; the job
    /// adds its own model file and the buffers and images it reads.
    pub protected: Option<&'a crate::staging::Protected>,
}

/// What a successful job did.
#[derive(Debug, Clone, PartialEq)]
pub enum Baked {
    /// The outputs were written: final paths and sizes, and the files of the
    /// previous bake in the folder that this one no longer writes, removed.
    Written {
        /// Final paths and sizes, in creation order.
        files: Vec<(PathBuf, u64)>,
        /// Stale files removed ([`crate::sink::Committed::removed`]).
        removed: Vec<PathBuf>,
    },
    /// Nothing applied to the model; the reason says why.
    Skipped(String),
}

/// Bakes one model into its output folder; never panics (a panic inside is
/// caught and returned as an [`Stage::Internal`] error).
pub fn bake_model(job: &ModelJob<'_>) -> Result<Baked, BakeError> {
    match catch_unwind(AssertUnwindSafe(|| try_bake(job))) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(BakeError::new(Stage::Internal, Source::Panic(what)))
        }
    }
}

/// Test hooks, set through `RIGBAKE_FAULT`: `abort-before-commit` kills the
/// process after every output of a model is written under temporary names
/// and before any is renamed into place (an interrupted bake must leave no
/// partial file under a final name); `panic:TEXT` panics inside the job of
/// every model whose path contains TEXT (one model's panic must not stop
/// the others).
fn fault(point: &str, input: &Path) {
    let Some(v) = std::env::var_os("RIGBAKE_FAULT") else {
        return;
    };
    let v = v.to_string_lossy();
    match (point, v.split_once(':')) {
        ("commit", _) if v == "abort-before-commit" => std::process::abort(),
        ("start", Some(("panic", text))) if input.to_string_lossy().contains(text) => {
            panic!("injected panic (RIGBAKE_FAULT)")
        }
        _ => {}
    }
}

/// Adds an encoded record to the container.
/// Writes `bytes` as a section of `kind` (the bake key's raw text, or an
/// encoded record).
fn add_section(
    sink: &mut dyn Sink,
    kind: SectionKind,
    bytes: rigbake_format::Result<Vec<u8>>,
) -> Result<(), BakeError> {
    let written = bytes
        .map_err(StepError::bare)
        .and_then(|r| sink.add_section(kind, &r).map(|_| ()));
    written.map_err(|e| {
        e.or_context("cannot write the container")
            .at(Stage::Container)
    })
}

/// Encodes `record` into a section of its own kind and keeps it in
/// `records` (the bundle the sidecar is built from): records are written
/// in the order they are put.
fn put<R: OptionalRecord>(
    sink: &mut dyn Sink,
    records: &mut Records,
    record: R,
) -> Result<(), BakeError> {
    add_section(sink, R::KIND, codec::encode(&record))?;
    records.set(record);
    Ok(())
}

/// A model validated and planned once, before any output is written:
/// imported (exclusions applied, LOD levels attached), its timeline, its
/// bone sets and rig plan, all checked against the per-model budget.
struct Planned {
    model: Model,
    /// The rest-pose globals every mesh writer and the placement record
    /// take their matrices from.
    rest: placement::RestPlacements,
    timeline: Timeline,
    rig_plan: Option<rig::RigPlan>,
    level_files: Vec<lod_files::AttachedFile>,
}

/// Imports and plans `job`'s model (see [`Planned`]).
fn plan(job: &ModelJob<'_>) -> Result<Planned, BakeError> {
    let settings = job.settings;
    let path = job.input;
    let bytes = job.bytes;
    check_model_name(path).map_err(at(Stage::Import))?;
    let mut model =
        import::import_bytes(path, bytes, &settings.import).map_err(at(Stage::Import))?;
    crate::exclude::apply(&mut model, &settings.exclude).map_err(at(Stage::Import))?;
    rigbake_core::lod::drop_meshless(&mut model);
    rigbake_core::lod::apply_specs(&mut model, &settings.lods).map_err(at(Stage::Import))?;
    let level_files = lod_files::attach_all(&mut model, path, settings, job.out_dir)
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
    Ok(Planned {
        rest: placement::RestPlacements::new(&model),
        model,
        timeline,
        rig_plan,
        level_files,
    })
}

/// What the bone path made: the bone textures' part, the nodes of the
/// weights record (put in the bundle as it is written), the rig record,
/// the anchor texture's fold and the dropped morphs (written later, in
/// section order), and why parts were skipped.
#[derive(Default)]
struct BoneOutputs {
    part: Option<bones::BonesPart>,
    weights_nodes: Vec<usize>,
    rig_record: Option<meta::RigMetadata>,
    anchor_fold: Option<meta::FoldMeta>,
    morphs_record: Option<meta::MorphsMetadata>,
    skipped: Vec<String>,
}

/// Bakes the bone textures, the weights and the anchor tracks of a planned
/// model (nothing without a rig plan: bones were not asked for).
fn bake_bone_outputs(
    job: &ModelJob<'_>,
    planned: &Planned,
    sink: &mut OutputSink<'_>,
    uv_sets: &mut Vec<meta::PrimitiveUvSets>,
    records: &mut Records,
) -> Result<BoneOutputs, BakeError> {
    let (settings, model, timeline) = (job.settings, &planned.model, &planned.timeline);
    let mut out = BoneOutputs::default();
    let Some(rig_plan) = &planned.rig_plan else {
        return Ok(out);
    };
    job.observer.stage("bone textures");
    let anchor_nodes: Vec<usize> = rig_plan.anchors.iter().map(|(n, _)| *n).collect();
    let (part, tracks) = bones::bake(model, timeline, settings, sink, &anchor_nodes)
        .map_err(|e| e.at(Stage::Bones))?;
    match part {
        Part::Done(p) => out.part = Some(p),
        Part::Skipped(reason) => out.skipped.push(reason),
    }
    if let Some(bones) = &out.part
        && settings.outputs.has(OutputKind::Weights)
    {
        job.observer.stage("bone weights");
        let w = weights::bake(
            model,
            &planned.rest,
            bones,
            rig_plan,
            settings,
            sink,
            uv_sets,
        )
        .map_err(|e| e.at(Stage::Weights))?;
        put(sink, records, w.record)?;
        warn_about_half_float_bones(bones, settings, job.observer);
        out.weights_nodes = w.nodes;
    }
    (out.rig_record, out.anchor_fold) =
        rig::record(model, timeline, rig_plan, &tracks, settings, sink)
            .map_err(|e| e.at(Stage::Rig))?;
    if out.part.is_some() {
        out.morphs_record = dropped_morphs(model, timeline, settings, job.observer);
    }
    Ok(out)
}

/// Half floats hold every integer up to this exactly: the bone indices of
/// `--weights-as-uv` survive importers that store UVs as half floats only
/// below it.
const HALF_FLOAT_EXACT_INTEGERS: usize = 2048;

/// Warns when `--weights-as-uv` writes bone indices that half floats do
/// not hold exactly (a bone set of more than 2,048 joints).
fn warn_about_half_float_bones(
    bones: &bones::BonesPart,
    settings: &BakeSettings,
    observer: &dyn Observer,
) {
    if !settings.weights_as_uv {
        return;
    }
    for skin in bones
        .skins
        .iter()
        .filter(|k| k.joints.len() > HALF_FLOAT_EXACT_INTEGERS)
    {
        observer.warning(&format!(
            "bone set `{}` has {} joints: with --weights-as-uv, bone indices above {HALF_FLOAT_EXACT_INTEGERS} are not exact where an importer stores UVs as half floats (Godot 3's default import, Unity's mesh compression); turn that compression off or read the _RIGBAKE_UV attributes",
            skin.name,
            skin.joints.len()
        ));
    }
}

/// Bakes the vertex animation textures and the OpenVAT export of a planned
/// model when asked, adding the reasons of skipped parts to `skipped`.
fn bake_vat_outputs(
    job: &ModelJob<'_>,
    planned: &Planned,
    sink: &mut OutputSink<'_>,
    uv_sets: &mut Vec<meta::PrimitiveUvSets>,
    skipped: &mut Vec<String>,
) -> Result<Option<vat::VatOutput>, BakeError> {
    let (settings, model, timeline) = (job.settings, &planned.model, &planned.timeline);
    let mut vat_part = None;
    if settings.outputs.has(OutputKind::Vat) {
        job.observer.stage("vertex animation");
        match vat::bake(
            model,
            &planned.rest,
            timeline,
            settings,
            sink,
            uv_sets,
            job.observer,
        )
        .map_err(|e| e.at(Stage::Vat))?
        {
            Part::Done(p) => vat_part = Some(p),
            Part::Skipped(reason) => skipped.push(reason),
        }
    }
    if settings.outputs.has(OutputKind::OpenVat) {
        job.observer.stage("OpenVAT export");
        if let Part::Skipped(reason) = openvat::export(
            model,
            &planned.rest,
            timeline,
            settings,
            sink,
            uv_sets,
            job.observer,
        )
        .map_err(|e| e.at(Stage::Vat))?
        {
            skipped.push(reason);
        }
    }
    Ok(vat_part)
}

/// Writes the root-motion record of a planned model whose clips extract
/// root motion (checked against what a container holds), and warns about
/// a motion root no clip uses.
fn write_root_motion(
    job: &ModelJob<'_>,
    planned: &Planned,
    metadata: &Metadata,
    sink: &mut dyn Sink,
    records: &mut Records,
) -> Result<(), BakeError> {
    let record = records::root_motion(&planned.model, &planned.timeline);
    if let (None, Some(node)) = (&record, &job.settings.root_motion.node) {
        // Not even looked up: a misspelt name would pass unnoticed.
        job.observer.warning(&format!(
            "the motion root `{node}` (--root-node, or `root_node` in the manifest) is unused: no clip extracts its root motion (--root-motion extract or extract-yaw, or `root_motion` per model, clip or blend in the manifest)"
        ));
    }
    if let Some(record) = record {
        check_root_motion(&record, metadata).map_err(at(Stage::Container))?;
        put(sink, records, record)?;
    }
    Ok(())
}

/// Warns about dropped influences beyond what verify tolerates, each
/// weights entry judged by the pairs its LOD level keeps.
fn warn_about_level_influences(job: &ModelJob<'_>, records: &Records) {
    let (Some(weights), Some(bounds)) = (&records.weights, &records.bounds) else {
        return;
    };
    let lods = records.lods.as_ref();
    let level_of_entry = |entry: usize| {
        lods.iter()
            .flat_map(|r| &r.groups)
            .find_map(|g| {
                g.levels
                    .iter()
                    .position(|l| l.weights_primitives.contains(&(entry as u32)))
            })
            .unwrap_or(0)
    };
    warn_about_dropped_influences(
        weights,
        bounds,
        |entry| job.settings.influences_at(level_of_entry(entry)),
        job.observer,
    );
}

/// Writes the LOD record and the LOD detail record of a planned model
/// with LOD groups (from the weights and VAT records already in
/// `records`); nothing without groups.
fn write_lod_records(
    planned: &Planned,
    settings: &BakeSettings,
    weights_nodes: &[usize],
    sink: &mut dyn Sink,
    records: &mut Records,
) -> Result<(), BakeError> {
    let model = &planned.model;
    let weights = records.weights.as_ref();
    let Some(lods_record) = lods::record(
        model,
        weights.map(|w| (w, weights_nodes)),
        records.vat.as_ref(),
        |level| weights::mesh_file_name(&model.name, level),
    ) else {
        return Ok(());
    };
    let details = lods::details(model, &lods_record, weights, &planned.level_files, settings);
    put(sink, records, lods_record)?;
    put(sink, records, details)
}

/// Writes the JSON sidecar of `records` beside the container.
fn write_sidecar(sink: &mut dyn Sink, records: sidecar::Records<'_>) -> Result<(), BakeError> {
    let sidecar_bytes = Sidecar::build(records).to_bytes().map_err(|e| {
        let e = rigbake_format::FormatError::Invalid(format!("cannot encode the sidecar: {e}"));
        BakeError::new(Stage::Container, Source::Format(e))
    })?;
    sink.write_file(&sidecar::sidecar_name(records.container), &sidecar_bytes)
        .map_err(|e| e.at(Stage::Container))
}

fn try_bake(job: &ModelJob<'_>) -> Result<Baked, BakeError> {
    let settings = job.settings;
    let path = job.input;
    let bytes = job.bytes;
    fault("start", path);
    let planned = plan(job)?;
    let (model, timeline, level_files) = (&planned.model, &planned.timeline, &planned.level_files);
    let container_name = format!("{}.rigbake", model.name);
    let mut sink = OutputSink::create(
        job.out_dir,
        &container_name,
        settings.embed_textures,
        job.shared,
    )
    .map_err(|e| e.at(Stage::Prepare))?;
    let mut protected = protected_inputs(job);
    for f in level_files {
        protected.add(&f.path);
    }
    sink.protect(protected);

    let mut records = Records::default();
    let mut uv_sets = Vec::new();
    let BoneOutputs {
        part: bones_part,
        weights_nodes,
        rig_record,
        anchor_fold,
        morphs_record,
        mut skipped,
    } = bake_bone_outputs(job, &planned, &mut sink, &mut uv_sets, &mut records)?;
    let vat_part = bake_vat_outputs(job, &planned, &mut sink, &mut uv_sets, &mut skipped)?;
    let has_anchors = rig_record.as_ref().is_some_and(|r| !r.anchors.is_empty());
    if bones_part.is_none() && vat_part.is_none() && !has_anchors {
        if skipped.is_empty() {
            skipped.push("no outputs were requested (outputs lists neither bones nor vat)".into());
        }
        return Ok(Baked::Skipped(skipped.join("; ")));
    }

    job.observer.stage("writing");
    let space_nodes: Vec<usize> = bones_part
        .iter()
        .flat_map(|b| b.baked.iter().map(|t| t.set.mesh_node))
        .collect();
    put(
        &mut sink,
        &mut records,
        planned.rest.record(model, &space_nodes),
    )?;
    let (skins, textures, bone_folds) = bones_part
        .map(|b| (b.skins, b.textures, b.folds))
        .unwrap_or_default();
    let metadata = build_metadata(path, bytes, timeline, skins, textures, settings);
    let mut layout = meta::LayoutMetadata {
        folds: bone_folds.into_iter().chain(anchor_fold).collect(),
        ..Default::default()
    };
    let mut vat_bounds = None;
    if let Some(out) = vat_part {
        layout.vat = Some(out.placement);
        layout.folds.extend(out.folds);
        vat_bounds = Some(out.bounds);
        let compression =
            vat::compression_record(&out.metadata, &settings.vat, settings.texture_container);
        put(&mut sink, &mut records, out.metadata)?;
        put(&mut sink, &mut records, compression)?;
    }
    if !settings.texture_container.is_exr() {
        let container = settings.texture_container;
        put(
            &mut sink,
            &mut records,
            meta::TextureContainerMetadata { container },
        )?;
    }
    if layout != meta::LayoutMetadata::default() {
        put(&mut sink, &mut records, layout)?;
    }
    if let Some(rig) = rig_record {
        put(&mut sink, &mut records, rig)?;
    }
    write_root_motion(job, &planned, &metadata, &mut sink, &mut records)?;
    if let Some(morphs) = morphs_record {
        put(&mut sink, &mut records, morphs)?;
    }
    write_lod_records(&planned, settings, &weights_nodes, &mut sink, &mut records)?;
    warn_about_uv_sets(&uv_sets, job.observer);
    if !uv_sets.is_empty() {
        let primitives = uv_sets;
        put(&mut sink, &mut records, meta::UvSetsMetadata { primitives })?;
    }
    add_section(&mut sink, SectionKind::Key, Ok(job.key.as_bytes().to_vec()))?;
    if let Some(location) = job.source_location {
        let relative_path = location.to_owned();
        put(
            &mut sink,
            &mut records,
            meta::SourceLocation { relative_path },
        )?;
    }
    job.observer.stage("bounds");
    let bounds = bounds_record(model, timeline, vat_bounds.as_ref())?;
    put(&mut sink, &mut records, bounds)?;
    warn_about_level_influences(job, &records);
    let records = sidecar::Records {
        container: &container_name,
        metadata: &metadata,
        records: &records,
    };
    write_sidecar(&mut sink, records)?;
    let finished = sink.finish(&metadata).map_err(|e| e.at(Stage::Container))?;
    fault("commit", path);
    let committed = finished.commit().map_err(|e| e.at(Stage::Commit))?;
    Ok(Baked::Written {
        files: committed.files,
        removed: committed.removed,
    })
}

/// The longest model name (file stem) a bake takes, in bytes: its outputs
/// are named after it (`<name>.rigbake.json`, `<name>-openvat.rigbake.json`,
/// `<name>.lod15.weights.glb`), and a file name holds at most 255 bytes.
pub const MAX_MODEL_NAME_BYTES: usize = 200;

/// Refuses a model whose name (its file stem) cannot name its outputs:
/// longer than [`MAX_MODEL_NAME_BYTES`], or with a control character (a
/// TAB), which the container's file names may not hold. Checked before the
/// model is read.
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

/// The root-motion record within what a container holds
/// ([`rigbake_format::check::MAX_ROOT_MOTION`]): a clip whose root travels
/// or turns further fails the model naming the clip, instead of writing a
/// container its own reader refuses.
fn check_root_motion(
    record: &meta::RootMotionMetadata,
    metadata: &Metadata,
) -> rigbake_core::Result<()> {
    use rigbake_format::check::MAX_ROOT_MOTION;
    for (clip, named) in record.clips.iter().zip(&metadata.clips) {
        let values = clip
            .displacement
            .iter()
            .chain(&clip.end)
            .chain(clip.track.iter().flatten())
            .copied()
            .chain([clip.rotation]);
        if let Some(v) = values
            .into_iter()
            .find(|v| !(v.is_finite() && v.abs() <= MAX_ROOT_MOTION))
        {
            return Err(rigbake_core::Error::limit(
                "root motion",
                format!(
                    "clip `{}`: the motion root `{}` travels or turns {v:e}, more than the limit of {MAX_ROOT_MOTION:e} a container holds (units or a scale far off?)",
                    named.name, record.node
                ),
            ));
        }
    }
    Ok(())
}

/// What no output of `job` may replace: the run's inputs, the model file
/// and every buffer and image it reads.
fn protected_inputs(job: &ModelJob<'_>) -> crate::staging::Protected {
    let mut protected = job.protected.cloned().unwrap_or_default();
    protected.add(job.input);
    // The same list the bake key read; a file it cannot name was not read.
    if let Ok(files) = import::external_files(job.input, job.bytes, &job.settings.import) {
        for f in &files {
            protected.add(f);
        }
    }
    protected
}

/// The animated-bounds record: per clip, the box of every vertex at every
/// frame ([`rigbake_core::bake::bounds`]), from the boxes the VAT bake
/// gathered when it ran, else by a pass of its own.
fn bounds_record(
    model: &Model,
    timeline: &Timeline,
    from_vat: Option<&(StaticPart, RowBoxes)>,
) -> Result<meta::BoundsMetadata, BakeError> {
    use rigbake_core::bake::bounds;
    let boxes = match from_vat {
        Some((statics, rows)) => bounds::clip_bounds_from(model, timeline, statics, Some(rows)),
        None => bounds::clip_bounds(model, timeline).map_err(at(Stage::Container))?,
    };
    let reference = rigbake_core::bake::bounds::reference_node(model);
    Ok(meta::BoundsMetadata {
        reference_node: reference.map(|n| model.nodes[n].name.clone()),
        clips: boxes
            .into_iter()
            .map(|[min, max]| meta::ClipBoundsMeta { min, max })
            .collect(),
    })
}

/// The morph targets the bone textures drop (rigbake's choice for the
/// bone-matrix path, see `rigbake_core::bake::morphs`): a warning per mesh
/// instance naming it and suggesting `--vat` (unless this bake also makes
/// a VAT, which keeps them), and the record for the container; `None` when
/// nothing is dropped.
fn dropped_morphs(
    model: &Model,
    timeline: &Timeline,
    settings: &BakeSettings,
    observer: &dyn Observer,
) -> Option<meta::MorphsMetadata> {
    let instances = rigbake_core::bake::morphs::morphed_instances(model, timeline);
    if instances.is_empty() {
        return None;
    }
    let mut dropped = Vec::new();
    for inst in &instances {
        let node = &model.nodes[inst.node].name;
        let mesh = &model.meshes[inst.mesh].name;
        let prims: Vec<String> = inst.primitives.iter().map(usize::to_string).collect();
        if !settings.outputs.has(OutputKind::Vat) {
            observer.warning(&format!(
                "node `{node}` (mesh `{mesh}`, meshes[{}].primitives[{}]) has {} morph targets{}; bone textures hold skin matrices only, so this bake drops them (recorded in the container); bake with --vat to keep them",
                inst.mesh,
                prims.join(", "),
                inst.targets,
                if inst.animated {
                    " animated by the baked clips"
                } else {
                    " with non-zero default weights"
                },
            ));
        }
        dropped.push(meta::DroppedMorphMeta {
            node: node.clone(),
            mesh: inst.mesh as u32,
            primitives: inst.primitives.iter().map(|p| *p as u32).collect(),
            targets: inst.targets as u32,
            animated: inst.animated,
        });
    }
    Some(meta::MorphsMetadata { dropped })
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
        pixels_per_joint: settings.layout.pixels_per_joint(),
        texture_joints: sets
            .iter()
            .map(|s| model.skins[s.skin].joints.len())
            .collect(),
    });
    let vat = settings.outputs.has(OutputKind::Vat).then_some(VatPlan {
        normals: settings.vat.options.normals,
        tangents: settings.vat.options.tangents,
        bytes_per_texel: match settings.vat.encoding {
            meta::VatEncoding::Exr32 => 16,
            meta::VatEncoding::Exr16 | meta::VatEncoding::Png16 => 8,
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

fn build_metadata(
    path: &Path,
    bytes: &[u8],
    timeline: &Timeline,
    skins: Vec<meta::SkinMeta>,
    textures: Vec<meta::TextureMeta>,
    settings: &BakeSettings,
) -> Metadata {
    let fps = timeline.sampling.fps;
    Metadata {
        tool: meta::Tool {
            name: "rigbake".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        },
        source: meta::SourceFile {
            file_name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            sha256: format!("{:x}", Sha256::digest(bytes)),
            bytes: bytes.len() as u64,
        },
        options: meta::BakeOptions {
            fps,
            sampling: timeline.sampling.rule,
            layout: settings.layout,
            precision: settings.precision,
            max_texture_size: settings.max_texture_size as u32,
        },
        clips: records::clip_table(timeline),
        skins,
        textures,
    }
}

/// Warns when keeping `--max-influences` pairs per vertex moves some vertex
/// further than `rigbake verify`'s default tolerance
/// ([`crate::verify::DEFAULT_RELATIVE_TOLERANCE`] of the animated bounds'
/// diagonal): names the worst primitive, its largest dropped weight and the
/// movement (the recorded `position_error`), so the loss is never silent.
fn warn_about_dropped_influences(
    weights: &meta::WeightsMetadata,
    bounds: &meta::BoundsMetadata,
    kept: impl Fn(usize) -> usize,
    observer: &dyn Observer,
) {
    let Some((entry, worst)) = weights
        .primitives
        .iter()
        .enumerate()
        .filter(|(_, p)| p.position_error > 0.0)
        .max_by(|a, b| a.1.position_error.total_cmp(&b.1.position_error))
    else {
        return;
    };
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for clip in &bounds.clips {
        for k in 0..3 {
            lo[k] = lo[k].min(f64::from(clip.min[k]));
            hi[k] = hi[k].max(f64::from(clip.max[k]));
        }
    }
    let diagonal = (0..3)
        .map(|k| (hi[k] - lo[k]).max(0.0).powi(2))
        .sum::<f64>()
        .sqrt();
    let tolerance = crate::verify::DEFAULT_RELATIVE_TOLERANCE;
    if worst.position_error <= tolerance * diagonal {
        return;
    }
    let dropped_max = weights
        .primitives
        .iter()
        .map(|p| p.dropped_max)
        .fold(0.0f64, f64::max);
    observer.warning(&format!(
        "keeping {} per vertex (--max-influences) drops up to {:.1}% of a vertex's weight and moves vertices by up to {:.3e} ({:.2e} of the model's size, node `{}`, mesh `{}`, primitive {}), beyond verify's default tolerance of {tolerance:.0e}; the loss is recorded and `rigbake verify` fails unless given --accept-recorded-loss; raise --max-influences to keep more",
        count(kept(entry) as u64, "bone influence", None),
        dropped_max * 100.0,
        worst.position_error,
        worst.position_error / diagonal.max(f64::MIN_POSITIVE),
        worst.node,
        worst.mesh,
        worst.primitive,
    ));
}

/// Warns, once per mesh file and set, when the VAT lookup UV sits in a
/// TEXCOORD set that three.js's importer drops (above `TEXCOORD_3`).
fn warn_about_uv_sets(uv_sets: &[meta::PrimitiveUvSets], observer: &dyn Observer) {
    let mut told = std::collections::BTreeSet::new();
    for p in uv_sets {
        if let Some(set) = p.lookup.filter(|&s| s > mesh::THREEJS_LAST_UV_SET)
            && told.insert((p.file.as_str(), set))
        {
            observer.warning(&format!(
                "{}: the VAT lookup UV is in TEXCOORD_{set} (the source has {} UV sets); three.js reads only TEXCOORD_0..3 and some importers drop high sets; choose a set with --lookup-uv-set N (see docs/engines.md)",
                p.file, p.source_sets
            ));
        }
    }
}
