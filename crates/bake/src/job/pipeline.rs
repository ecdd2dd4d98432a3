//! One model's bake as a line of passes ([`run`]): plan; the output passes,
//! each a function from what it needs to what it made (bone textures,
//! weights, anchors, dropped morphs, VAT, OpenVAT), writing its files
//! through the sink; then the record passes (root motion, LODs, bounds),
//! with the container's records assembled as one [`Records`] from those
//! results ([`assemble`]); the warnings the results call for; the records,
//! the sidecar, the container and the commit.

use rigbake_core::Model;
use rigbake_core::bake::anchors::AnchorTracks;
use rigbake_core::bake::bounds::{RowBoxes, StaticPart};
use rigbake_core::timeline::Timeline;
use rigbake_format::codec;
use rigbake_format::meta::{self, Metadata};
use rigbake_format::records::{OptionalRecord, Records, SectionKind};
use rigbake_types::OutputKind;

use super::common::Part;
use super::placement::RestPlacements;
use super::plan::{self, Plan};
use super::{Baked, ModelJob, Observer, bones, lods, openvat, rig, vat, warnings, weights};
use crate::error::{BakeError, Source, Stage, StepError, at};
use crate::records;
use crate::settings::BakeSettings;
use crate::sidecar::{self, Sidecar};
use crate::sink::{OutputSink, Sink};

/// Bakes `job`'s model, pass after pass (see the module); a model that
/// asks for nothing, or to which nothing asked for applies, is skipped
/// with the reason.
pub(super) fn run(job: &ModelJob<'_>) -> Result<Baked, BakeError> {
    if let Some(reason) = super::nothing_requested(job.settings.outputs) {
        return Ok(Baked::Skipped(reason));
    }
    let plan = plan::plan(job)?;
    let container_name = format!("{}.rigbake", plan.model.name);
    let mut sink = open_sink(&plan, &container_name)?;
    let bones = bone_textures(&plan, &mut sink)?;
    let weights = bone_weights(&plan, bones.as_ref(), &mut sink)?;
    let rig = anchor_tracks(&plan, bones.as_ref(), &mut sink)?;
    let morphs = dropped_morphs(&plan, bones.as_ref());
    let vat = vertex_pass(&plan, &mut sink, VAT, vat::bake)?;
    let openvat = vertex_pass(&plan, &mut sink, OPENVAT, openvat::export)?;
    let made = Made {
        bones,
        weights,
        rig,
        morphs,
        vat,
        openvat,
    };
    tell(job.observer, made.warnings(&plan));
    for choice in made.choices() {
        job.observer.chose(&choice);
    }
    if !made.anything() {
        return Ok(Baked::Skipped(made.skipped().join("; ")));
    }
    job.observer.stage("writing");
    let root_motion = root_motion(&plan)?;
    let lods = lod_records(&plan, made.weights.as_ref(), made.vat_done());
    job.observer.stage("bounds");
    let bounds = clip_bounds(&plan, made.vat_done().map(|v| &v.bounds))?;
    let (metadata, records) = assemble(&plan, made, root_motion, lods, bounds);
    tell(job.observer, record_warnings(&plan, &records));
    if let Some(errors) = &records.clip_errors {
        let worst = crate::report::TextureError::worst_of(errors, &metadata, records.vat.as_ref());
        job.observer.measured(&worst);
    }
    write_records(&mut sink, &records, job.key)?;
    let sidecar = sidecar::Records {
        container: &container_name,
        metadata: &metadata,
        records: &records,
    };
    write_sidecar(&mut sink, sidecar)?;
    let finished = sink.finish(&metadata).map_err(|e| e.at(Stage::Container))?;
    super::fault("commit", job.input.path())?;
    let committed = finished.commit().map_err(|e| e.at(Stage::Commit))?;
    tell(job.observer, committed.kept);
    Ok(Baked::Written {
        files: committed.files,
        removed: committed.removed,
    })
}

/// Gives each of `warnings` to `observer`, in order.
fn tell(observer: &dyn Observer, warnings: impl IntoIterator<Item = String>) {
    for warning in warnings {
        observer.warning(&warning);
    }
}

/// The sink of `plan`'s outputs: the output folder and the container
/// `container_name`, with every input of the run and of the model
/// protected from being replaced.
fn open_sink<'a>(plan: &Plan<'a>, container_name: &str) -> Result<OutputSink<'a>, BakeError> {
    let job = plan.job;
    let mut sink = OutputSink::create(
        job.out_dir,
        container_name,
        job.settings.embed_textures,
        job.shared,
    )
    .map_err(|e| e.at(Stage::Prepare))?;
    let mut protected = job.protected.cloned().unwrap_or_default();
    for file in job.input.files() {
        protected.add(file);
    }
    sink.protect(protected);
    Ok(sink)
}

/// What the output passes made, one field per pass (`None`: its output
/// was not asked for, or what it rides on was not made).
struct Made {
    /// The bone textures, and the anchor tracks sampled with them.
    bones: Option<BoneTextures>,
    /// The bone-weight channels and the weights meshes.
    weights: Option<weights::WeightsPart>,
    /// The rig record and the anchor texture's fold.
    rig: Option<Rig>,
    /// The morph targets the bone textures drop.
    morphs: Option<meta::MorphsMetadata>,
    /// The vertex animation textures and the playback mesh.
    vat: Option<Part<vat::VatOutput>>,
    /// The OpenVAT export.
    openvat: Option<Part<openvat::OpenVatDone>>,
}

impl Made {
    /// Whether anything a container is worth writing for was made: bone
    /// textures, a VAT, or anchor tracks.
    fn anything(&self) -> bool {
        let textures = self.bones.as_ref().is_some_and(|b| b.part.done().is_some());
        let vat = self.vat_done().is_some();
        let anchors = self
            .rig
            .as_ref()
            .and_then(|r| r.record.as_ref())
            .is_some_and(|r| !r.anchors.is_empty());
        textures || vat || anchors
    }

    /// The VAT, when one was made.
    fn vat_done(&self) -> Option<&vat::VatOutput> {
        self.vat.as_ref().and_then(Part::done)
    }

    /// Why asked-for outputs were skipped, in pass order.
    fn skipped(&self) -> Vec<&str> {
        [
            self.bones.as_ref().and_then(|b| b.part.skipped()),
            self.vat.as_ref().and_then(Part::skipped),
            self.openvat.as_ref().and_then(Part::skipped),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// The warnings the output passes' results call for, in pass order.
    /// What `--max-error` chose, per output, in words.
    fn choices(&self) -> Vec<String> {
        let bones = self.bones.as_ref().and_then(|b| b.part.done());
        let bones = bones.and_then(|b| b.choice.clone());
        let vat = self.vat_done().and_then(|v| v.choice.clone());
        bones.into_iter().chain(vat).collect()
    }

    fn warnings(&self, plan: &Plan<'_>) -> Vec<String> {
        let settings = plan.settings();
        let mut out = Vec::new();
        if let Some(part) = self.bones.as_ref().and_then(|b| b.part.done()) {
            out.extend(part.fallback.iter().cloned());
        }
        if let (Some(b), Some(_)) = (&self.bones, &self.weights)
            && let Some(part) = b.part.done()
        {
            out.extend(warnings::half_float_bones(part, settings));
        }
        if let Some(morphs) = &self.morphs {
            out.extend(warnings::dropped_morphs(&plan.model, morphs, settings));
        }
        if let Some(v) = self.vat_done() {
            out.extend(v.warnings.iter().cloned());
        }
        if let Some(o) = self.openvat.as_ref().and_then(Part::done) {
            out.extend(o.warnings.iter().cloned());
        }
        out
    }
}

/// The bone-texture pass's result.
struct BoneTextures {
    /// The textures, or why there are none.
    part: Part<bones::BonesPart>,
    /// The anchor tracks sampled in the same pass.
    tracks: AnchorTracks,
}

/// The anchor pass's result.
struct Rig {
    /// The rig record (`None`: nothing to record).
    record: Option<meta::RigMetadata>,
    /// The anchor texture's fold, when it is folded.
    fold: Option<meta::FoldMeta>,
}

/// The bone-matrix textures and the anchor tracks sampled in the same
/// pass, when bones are asked for.
fn bone_textures(plan: &Plan<'_>, sink: &mut dyn Sink) -> Result<Option<BoneTextures>, BakeError> {
    let Some(rig_plan) = &plan.rig_plan else {
        return Ok(None);
    };
    plan.job.observer.stage("bone textures");
    let anchor_nodes: Vec<usize> = rig_plan.anchors.iter().map(|(n, _)| *n).collect();
    let (part, tracks) = bones::bake(
        &plan.model,
        &plan.timeline,
        plan.settings(),
        sink,
        &anchor_nodes,
        &rig_plan.props,
    )
    .map_err(|e| e.at(Stage::Bones))?;
    Ok(Some(BoneTextures { part, tracks }))
}

/// The bone-weight channels and the weights meshes, when weights are
/// asked for and bone textures were made. The weights record is written
/// here, right after the channel sections its entries name (every other
/// record is written by [`write_records`], after all outputs).
fn bone_weights(
    plan: &Plan<'_>,
    bones: Option<&BoneTextures>,
    sink: &mut dyn Sink,
) -> Result<Option<weights::WeightsPart>, BakeError> {
    let settings = plan.settings();
    let (Some(bones), Some(rig_plan)) = (bones.and_then(|b| b.part.done()), &plan.rig_plan) else {
        return Ok(None);
    };
    if !settings.outputs.has(OutputKind::Weights) {
        return Ok(None);
    }
    plan.job.observer.stage("bone weights");
    let (model, rest) = (&plan.model, &plan.rest);
    let part = weights::bake(model, rest, bones, rig_plan, settings, sink)
        .map_err(|e| e.at(Stage::Weights))?;
    put(sink, Some(&part.record))?;
    Ok(Some(part))
}

/// The anchor tracks (stored, with their EXR when asked) and the rig
/// record, when bones are asked for.
fn anchor_tracks(
    plan: &Plan<'_>,
    bones: Option<&BoneTextures>,
    sink: &mut dyn Sink,
) -> Result<Option<Rig>, BakeError> {
    let (Some(rig_plan), Some(bones)) = (&plan.rig_plan, bones) else {
        return Ok(None);
    };
    let (model, timeline, settings) = (&plan.model, &plan.timeline, plan.settings());
    let (record, fold) = rig::record(model, timeline, rig_plan, &bones.tracks, settings, sink)
        .map_err(|e| e.at(Stage::Rig))?;
    Ok(Some(Rig { record, fold }))
}

/// The morphs record: the morph targets the bone textures drop (rigbake's
/// choice for the bone-matrix path, see `rigbake_core::bake::morphs`),
/// when bone textures were made; `None` when nothing is dropped.
fn dropped_morphs(plan: &Plan<'_>, bones: Option<&BoneTextures>) -> Option<meta::MorphsMetadata> {
    bones.and_then(|b| b.part.done())?;
    let model = &plan.model;
    let instances = rigbake_core::bake::morphs::morphed_instances(model, &plan.timeline);
    if instances.is_empty() {
        return None;
    }
    let dropped = instances
        .iter()
        .map(|inst| meta::DroppedMorphMeta {
            node: model.nodes[inst.node].name.clone(),
            mesh: inst.mesh as u32,
            primitives: inst.primitives.iter().map(|p| *p as u32).collect(),
            targets: inst.targets as u32,
            animated: inst.animated,
        })
        .collect();
    Some(meta::MorphsMetadata { dropped })
}

/// A pass over the vertices of every frame that writes textures and a
/// playback mesh: the VAT bake ([`vat::bake`]) or the OpenVAT export
/// ([`openvat::export`]).
type VertexPass<T> = fn(
    &Model,
    &RestPlacements,
    &Timeline,
    &BakeSettings,
    &mut dyn Sink,
    &dyn Observer,
) -> Result<Part<T>, StepError>;

/// The VAT pass's output kind and stage.
const VAT: (OutputKind, &str) = (OutputKind::Vat, "vertex animation");

/// The OpenVAT pass's output kind and stage.
const OPENVAT: (OutputKind, &str) = (OutputKind::OpenVat, "OpenVAT export");

/// Runs `pass` when `kind` is asked for, at stage `stage`.
fn vertex_pass<T>(
    plan: &Plan<'_>,
    sink: &mut dyn Sink,
    (kind, stage): (OutputKind, &str),
    pass: VertexPass<T>,
) -> Result<Option<Part<T>>, BakeError> {
    if !plan.settings().outputs.has(kind) {
        return Ok(None);
    }
    plan.job.observer.stage(stage);
    let (model, rest, timeline) = (&plan.model, &plan.rest, &plan.timeline);
    pass(
        model,
        rest,
        timeline,
        plan.settings(),
        sink,
        plan.job.observer,
    )
    .map(Some)
    .map_err(|e| e.at(Stage::Vat))
}

/// The container's metadata and records, assembled as one struct from
/// what the output passes made and the record passes' results.
fn assemble(
    plan: &Plan<'_>,
    made: Made,
    root_motion: Option<meta::RootMotionMetadata>,
    lods: Option<(meta::LodsMetadata, meta::LodDetailsMetadata)>,
    bounds: meta::BoundsMetadata,
) -> (Metadata, Records) {
    let settings = plan.settings();
    let Made {
        bones,
        weights,
        rig,
        morphs,
        vat,
        openvat,
    } = made;
    let bones = bones.and_then(|b| b.part.into_done());
    let vat = vat.and_then(Part::into_done);
    let openvat = openvat.and_then(Part::into_done);
    let space_nodes: Vec<usize> = bones
        .iter()
        .flat_map(|b| b.baked.iter().map(|t| t.set.mesh_node))
        .collect();
    let placement = plan.rest.record(&plan.model, &space_nodes);
    let bone_ranges = bones
        .iter()
        .map(|b| b.baked.iter().map(|t| t.range).collect::<Vec<_>>())
        .find(|r| r.iter().any(Option::is_some))
        .map(|textures| meta::BoneRangesMetadata { textures });
    let clip_errors = clip_errors_record(
        &plan.model,
        bones.iter().flat_map(|b| &b.clip_errors),
        vat.iter().flat_map(|v| &v.clip_errors),
    );
    let form = bones.as_ref().map(|b| b.form);
    let (skins, textures, bone_folds) = bones
        .map(|b| (b.skins, b.textures, b.folds))
        .unwrap_or_default();
    let metadata = build_metadata(plan, skins, textures, form);
    let (lods, lod_details) = lods.unzip();
    let (rig, anchor_fold) = rig.map(|r| (r.record, r.fold)).unwrap_or_default();
    let layout = meta::LayoutMetadata {
        vat: vat.as_ref().map(|v| v.placement.clone()),
        folds: bone_folds
            .into_iter()
            .chain(anchor_fold)
            .chain(vat.iter().flat_map(|v| v.folds.iter().cloned()))
            .collect(),
    };
    let uv_sets: Vec<meta::PrimitiveUvSets> = (weights.iter().flat_map(|w| &w.uv_sets))
        .chain(vat.iter().flat_map(|v| &v.uv_sets))
        .chain(openvat.iter().flat_map(|o| &o.uv_sets))
        .cloned()
        .collect();
    let container = settings.texture_container;
    let records = Records {
        placement: Some(placement),
        vat_compression: vat
            .as_ref()
            .map(|v| vat::compression_record(&v.metadata, &settings.vat, container)),
        vat: vat.map(|v| v.metadata),
        texture_container: (!container.is_exr())
            .then_some(meta::TextureContainerMetadata { container }),
        layout: (layout != meta::LayoutMetadata::default()).then_some(layout),
        rig,
        root_motion,
        morphs,
        lods,
        lod_details,
        uv_sets: (!uv_sets.is_empty()).then_some(meta::UvSetsMetadata {
            primitives: uv_sets,
        }),
        source: plan
            .job
            .source_location
            .map(|location| meta::SourceLocation {
                relative_path: location.to_owned(),
            }),
        bounds: Some(bounds),
        weights: weights.map(|w| w.record),
        bone_ranges,
        clip_errors,
        outputs: None,
    };
    (metadata, records)
}

/// The clip-error record of the bone textures' and VAT sets' figures
/// (none when neither was baked).
fn clip_errors_record<'a>(
    model: &rigbake_core::Model,
    bones: impl Iterator<Item = &'a meta::TextureClipErrors>,
    vat: impl Iterator<Item = &'a meta::TextureClipErrors>,
) -> Option<meta::ClipErrorsMetadata> {
    let textures: Vec<meta::TextureClipErrors> = bones.chain(vat).cloned().collect();
    (!textures.is_empty()).then(|| meta::ClipErrorsMetadata {
        model_size: rigbake_core::timeline::loops::model_size(model),
        virtual_vertex_distance: rigbake_core::bake::bone_error::VIRTUAL_VERTEX_DISTANCE,
        textures,
    })
}

/// The warnings the assembled records call for: an unused motion root,
/// lookup UVs in sets importers drop, influences dropped beyond what
/// verify tolerates.
fn record_warnings(plan: &Plan<'_>, records: &Records) -> Vec<String> {
    let settings = plan.settings();
    let mut out: Vec<String> = warnings::unused_motion_root(settings, records.root_motion.as_ref())
        .into_iter()
        .collect();
    if let Some(uv_sets) = &records.uv_sets {
        out.extend(warnings::uv_sets(&uv_sets.primitives));
    }
    if let (Some(weights), Some(bounds)) = (&records.weights, &records.bounds) {
        let lods = records.lods.as_ref();
        out.extend(warnings::dropped_influences(
            weights, bounds, lods, settings,
        ));
    }
    out
}

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

/// Writes `record`, when there is one, as a section of its own kind.
fn put<R: OptionalRecord>(sink: &mut dyn Sink, record: Option<&R>) -> Result<(), BakeError> {
    match record {
        Some(record) => add_section(sink, R::KIND, codec::encode(record)),
        None => Ok(()),
    }
}

/// Writes the records (all but the weights record, which stands after its
/// channels: [`bone_weights`]) and the bake key, in the order their
/// sections stand in the container, which the output-hash lock keeps byte
/// for byte. The metadata is written last, by the sink.
fn write_records(sink: &mut dyn Sink, records: &Records, key: &str) -> Result<(), BakeError> {
    put(sink, records.placement.as_ref())?;
    put(sink, records.vat.as_ref())?;
    put(sink, records.vat_compression.as_ref())?;
    put(sink, records.texture_container.as_ref())?;
    put(sink, records.layout.as_ref())?;
    put(sink, records.rig.as_ref())?;
    put(sink, records.root_motion.as_ref())?;
    put(sink, records.morphs.as_ref())?;
    put(sink, records.lods.as_ref())?;
    put(sink, records.lod_details.as_ref())?;
    put(sink, records.uv_sets.as_ref())?;
    add_section(sink, SectionKind::Key, Ok(key.as_bytes().to_vec()))?;
    put(sink, records.source.as_ref())?;
    put(sink, records.bounds.as_ref())?;
    put(sink, records.bone_ranges.as_ref())?;
    put(sink, records.clip_errors.as_ref())
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

/// The root-motion record of clips that extract root motion, checked
/// against what a container holds.
fn root_motion(plan: &Plan<'_>) -> Result<Option<meta::RootMotionMetadata>, BakeError> {
    let Some(record) = records::root_motion(&plan.model, &plan.timeline) else {
        return Ok(None);
    };
    check_root_motion(&record, &plan.timeline).map_err(at(Stage::Container))?;
    Ok(Some(record))
}

/// The LOD record and the LOD detail record of a model with LOD groups
/// (from the weights and VAT records).
fn lod_records(
    plan: &Plan<'_>,
    weights: Option<&weights::WeightsPart>,
    vat: Option<&vat::VatOutput>,
) -> Option<(meta::LodsMetadata, meta::LodDetailsMetadata)> {
    let model = &plan.model;
    let record = lods::record(
        model,
        weights.map(|w| (&w.record, &w.nodes[..])),
        vat.map(|v| &v.metadata),
        |level| weights::mesh_file_name(&model.name, level),
    )?;
    let details = lods::details(
        model,
        &record,
        weights.map(|w| &w.record),
        &plan.level_files,
        plan.settings(),
    );
    Some((record, details))
}

/// The root-motion record within what a container holds
/// ([`rigbake_format::check::MAX_ROOT_MOTION`]): a clip whose root travels
/// or turns further fails the model naming the clip, instead of writing a
/// container its own reader refuses.
fn check_root_motion(
    record: &meta::RootMotionMetadata,
    timeline: &Timeline,
) -> rigbake_core::Result<()> {
    use rigbake_format::check::MAX_ROOT_MOTION;
    for (clip, named) in record.clips.iter().zip(&timeline.clips) {
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

/// The animated-bounds record: per clip, the box of every vertex at every
/// frame ([`rigbake_core::bake::bounds`]), from the boxes the VAT bake
/// gathered when it ran, else by a pass of its own.
fn clip_bounds(
    plan: &Plan<'_>,
    from_vat: Option<&(StaticPart, RowBoxes)>,
) -> Result<meta::BoundsMetadata, BakeError> {
    use rigbake_core::bake::bounds;
    let (model, timeline) = (&plan.model, &plan.timeline);
    let boxes = match from_vat {
        Some((statics, rows)) => bounds::clip_bounds_from(model, timeline, statics, Some(rows)),
        None => bounds::clip_bounds(model, timeline).map_err(at(Stage::Container))?,
    };
    let reference = bounds::reference_node(model);
    Ok(meta::BoundsMetadata {
        reference_node: reference.map(|n| model.nodes[n].name.clone()),
        clips: boxes
            .into_iter()
            .map(|[min, max]| meta::ClipBoundsMeta { min, max })
            .collect(),
    })
}

/// The bake metadata: tool, source file, options, clip table, and the
/// bone textures' skins and textures.
fn build_metadata(
    plan: &Plan<'_>,
    skins: Vec<meta::SkinMeta>,
    textures: Vec<meta::TextureMeta>,
    form: Option<(rigbake_types::MatrixLayout, rigbake_types::Precision)>,
) -> Metadata {
    let (layout, precision) = form.unwrap_or((plan.settings().layout, plan.settings().precision));
    let (input, settings, timeline) = (plan.job.input.model(), plan.settings(), &plan.timeline);
    Metadata {
        tool: meta::Tool {
            name: "rigbake".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        },
        source: meta::SourceFile {
            file_name: input
                .path()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            sha256: input.sha256().to_owned(),
            bytes: input.bytes().len() as u64,
        },
        options: meta::BakeOptions {
            fps: timeline.sampling.fps,
            sampling: timeline.sampling.rule,
            layout,
            precision,
            max_texture_size: settings.max_texture_size as u32,
        },
        clips: records::clip_table(timeline),
        skins,
        textures,
    }
}
