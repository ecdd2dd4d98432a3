//! The job's steps, one shape for all ([`Step`]): first one step per
//! output kind ([`OUTPUT_STEPS`]), then one per record, in the order the
//! records' sections stand in the container ([`RECORD_STEPS`]). A step reads
//! the [`Plan`], writes through the sink and adds what it made to
//! [`Made`]: the records bundle (each record written as it is put) and what
//! later steps and the container still need.

use std::path::Path;

use rigbake_core::Model;
use rigbake_core::bake::anchors::AnchorTracks;
use rigbake_core::bake::bounds::{RowBoxes, StaticPart};
use rigbake_core::timeline::Timeline;
use rigbake_format::codec;
use rigbake_format::meta::{self, Metadata};
use rigbake_format::records::SectionKind;
use rigbake_format::records::{OptionalRecord, Records};
use rigbake_types::OutputKind;
use sha2::{Digest, Sha256};

use super::common::Part;
use super::placement::RestPlacements;
use super::plan::Plan;
use super::{Observer, bones, lods, mesh, openvat, vat, weights};
use crate::error::{BakeError, Stage, StepError, at};
use crate::records;
use crate::report::count;
use crate::settings::BakeSettings;
use crate::sink::Sink;

/// One step of a bake.
pub(super) type Step = fn(&Plan<'_>, &mut dyn Sink, &mut Made) -> Result<(), BakeError>;

/// The output steps, in the order they run: each does nothing unless its
/// output kind is asked for (weights and anchors ride on the bone
/// textures, the OpenVAT export on its own VAT pass).
pub(super) const OUTPUT_STEPS: [Step; 5] = [
    bone_textures,
    bone_weights,
    anchor_tracks,
    vertex_animation,
    openvat_export,
];

/// The record steps, in the order of their sections in the container
/// (which the output-hash lock keeps byte for byte).
pub(super) const RECORD_STEPS: [Step; 13] = [
    placement_record,
    metadata,
    vat_records,
    texture_container_record,
    layout_record,
    rig_record,
    root_motion_record,
    morphs_record,
    lod_records,
    uv_set_record,
    bake_key,
    source_record,
    bounds_record,
];

/// What the steps have made so far.
#[derive(Default)]
pub(super) struct Made {
    /// The container's optional records, in the order they were put.
    pub records: Records,
    /// The bake metadata (the `metadata` step; written last, by the sink).
    pub metadata: Option<Metadata>,
    /// The bone textures' part.
    pub bones: Option<bones::BonesPart>,
    /// The anchor tracks sampled with the bone textures.
    pub tracks: Option<AnchorTracks>,
    /// The nodes of the weights record's primitives.
    pub weights_nodes: Vec<usize>,
    /// The rig record, put in section order.
    pub rig: Option<meta::RigMetadata>,
    /// The dropped morph targets, put in section order.
    pub morphs: Option<meta::MorphsMetadata>,
    /// The layout record being gathered (folds, VAT placement).
    pub layout: meta::LayoutMetadata,
    /// The VAT part, until its records are put.
    pub vat: Option<vat::VatOutput>,
    /// The animated bounds' parts the VAT bake measured.
    pub vat_bounds: Option<(StaticPart, RowBoxes)>,
    /// Which TEXCOORD sets each written primitive uses.
    pub uv_sets: Vec<meta::PrimitiveUvSets>,
    /// Why asked-for parts were skipped.
    pub skipped: Vec<String>,
}

impl Made {
    /// Whether the output steps made anything a container is worth writing
    /// for: bone textures, a VAT, or anchor tracks.
    pub fn anything(&self) -> bool {
        let anchors = self.rig.as_ref().is_some_and(|r| !r.anchors.is_empty());
        self.bones.is_some() || self.vat.is_some() || anchors
    }
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

/// The bone-matrix textures (and the anchor tracks sampled in the same
/// pass), when bones are asked for.
fn bone_textures(plan: &Plan<'_>, sink: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    let Some(rig_plan) = &plan.rig_plan else {
        return Ok(());
    };
    plan.job.observer.stage("bone textures");
    let anchor_nodes: Vec<usize> = rig_plan.anchors.iter().map(|(n, _)| *n).collect();
    let (part, tracks) = bones::bake(
        &plan.model,
        &plan.timeline,
        plan.settings(),
        sink,
        &anchor_nodes,
    )
    .map_err(|e| e.at(Stage::Bones))?;
    match part {
        Part::Done(p) => made.bones = Some(p),
        Part::Skipped(reason) => made.skipped.push(reason),
    }
    made.tracks = Some(tracks);
    Ok(())
}

/// The bone-weight channels and the weights mesh, and their record.
fn bone_weights(plan: &Plan<'_>, sink: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    let settings = plan.settings();
    let (Some(bones), Some(rig_plan)) = (&made.bones, &plan.rig_plan) else {
        return Ok(());
    };
    if !settings.outputs.has(OutputKind::Weights) {
        return Ok(());
    }
    plan.job.observer.stage("bone weights");
    let w = weights::bake(
        &plan.model,
        &plan.rest,
        bones,
        rig_plan,
        settings,
        sink,
        &mut made.uv_sets,
    )
    .map_err(|e| e.at(Stage::Weights))?;
    warn_about_half_float_bones(bones, settings, plan.job.observer);
    made.weights_nodes = w.nodes;
    put(sink, &mut made.records, w.record)
}

/// The anchor tracks (stored, with their EXR when asked) and the rig
/// record; the morph targets the bone textures drop.
fn anchor_tracks(plan: &Plan<'_>, sink: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    let (Some(rig_plan), Some(tracks)) = (&plan.rig_plan, &made.tracks) else {
        return Ok(());
    };
    let (model, timeline) = (&plan.model, &plan.timeline);
    let (rig, fold) = super::rig::record(model, timeline, rig_plan, tracks, plan.settings(), sink)
        .map_err(|e| e.at(Stage::Rig))?;
    made.rig = rig;
    made.layout.folds.extend(fold);
    if made.bones.is_some() {
        made.morphs = dropped_morphs(model, timeline, plan.settings(), plan.job.observer);
    }
    Ok(())
}

/// A pass over the vertices of every frame that writes textures and a
/// playback mesh: the VAT bake ([`vat::bake`]) or the OpenVAT export
/// ([`openvat::export`]).
type VatPass<T> = fn(
    &Model,
    &RestPlacements,
    &Timeline,
    &BakeSettings,
    &mut dyn Sink,
    &mut Vec<meta::PrimitiveUvSets>,
    &dyn Observer,
) -> Result<Part<T>, StepError>;

/// Runs `pass` when `kind` is asked for, at stage `stage`; the reason of a
/// skipped part goes to `made.skipped`.
fn vat_pass<T>(
    plan: &Plan<'_>,
    sink: &mut dyn Sink,
    made: &mut Made,
    (kind, stage): (OutputKind, &str),
    pass: VatPass<T>,
) -> Result<Option<T>, BakeError> {
    if !plan.settings().outputs.has(kind) {
        return Ok(None);
    }
    plan.job.observer.stage(stage);
    let (model, rest, timeline) = (&plan.model, &plan.rest, &plan.timeline);
    let observer = plan.job.observer;
    let part = pass(
        model,
        rest,
        timeline,
        plan.settings(),
        sink,
        &mut made.uv_sets,
        observer,
    )
    .map_err(|e| e.at(Stage::Vat))?;
    Ok(match part {
        Part::Done(p) => Some(p),
        Part::Skipped(reason) => {
            made.skipped.push(reason);
            None
        }
    })
}

/// The vertex animation textures and the playback mesh.
fn vertex_animation(
    plan: &Plan<'_>,
    sink: &mut dyn Sink,
    made: &mut Made,
) -> Result<(), BakeError> {
    let kind = (OutputKind::Vat, "vertex animation");
    let part = vat_pass(plan, sink, made, kind, vat::bake)?;
    made.vat = part;
    Ok(())
}

/// The OpenVAT-compatible export (docs/openvat.md).
fn openvat_export(plan: &Plan<'_>, sink: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    let kind = (OutputKind::OpenVat, "OpenVAT export");
    vat_pass(plan, sink, made, kind, openvat::export).map(|_| ())
}

/// The placement record: the rest-pose matrices of the bake's spaces.
fn placement_record(
    plan: &Plan<'_>,
    sink: &mut dyn Sink,
    made: &mut Made,
) -> Result<(), BakeError> {
    let space_nodes: Vec<usize> = made
        .bones
        .iter()
        .flat_map(|b| b.baked.iter().map(|t| t.set.mesh_node))
        .collect();
    let record = plan.rest.record(&plan.model, &space_nodes);
    put(sink, &mut made.records, record)
}

/// The bake metadata (clip table, skins, bone textures); the sink writes it
/// when the container is finished. The bone textures' folds go to the
/// layout record, before the anchor texture's.
fn metadata(plan: &Plan<'_>, _: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    let (skins, textures, folds) = made
        .bones
        .take()
        .map(|b| (b.skins, b.textures, b.folds))
        .unwrap_or_default();
    let job = plan.job;
    made.layout.folds.splice(0..0, folds);
    made.metadata = Some(build_metadata(
        job.input,
        job.bytes,
        &plan.timeline,
        skins,
        textures,
        job.settings,
    ));
    Ok(())
}

/// The VAT record and the VAT compression record; the VAT's placement and
/// folds go to the layout record.
fn vat_records(plan: &Plan<'_>, sink: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    let Some(out) = made.vat.take() else {
        return Ok(());
    };
    let settings = plan.settings();
    made.layout.vat = Some(out.placement);
    made.layout.folds.extend(out.folds);
    made.vat_bounds = Some(out.bounds);
    let compression =
        vat::compression_record(&out.metadata, &settings.vat, settings.texture_container);
    put(sink, &mut made.records, out.metadata)?;
    put(sink, &mut made.records, compression)
}

/// The texture-container record, when the textures are KTX2 or DDS.
fn texture_container_record(
    plan: &Plan<'_>,
    sink: &mut dyn Sink,
    made: &mut Made,
) -> Result<(), BakeError> {
    let container = plan.settings().texture_container;
    if container.is_exr() {
        return Ok(());
    }
    put(
        sink,
        &mut made.records,
        meta::TextureContainerMetadata { container },
    )
}

/// The layout record, when anything is folded or atlased.
fn layout_record(_: &Plan<'_>, sink: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    let layout = std::mem::take(&mut made.layout);
    if layout == meta::LayoutMetadata::default() {
        return Ok(());
    }
    put(sink, &mut made.records, layout)
}

/// The rig record (anchors, props, clip origins).
fn rig_record(_: &Plan<'_>, sink: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    match made.rig.take() {
        Some(rig) => put(sink, &mut made.records, rig),
        None => Ok(()),
    }
}

/// The root-motion record of clips that extract root motion (checked
/// against what a container holds); warns about a motion root no clip
/// uses.
fn root_motion_record(
    plan: &Plan<'_>,
    sink: &mut dyn Sink,
    made: &mut Made,
) -> Result<(), BakeError> {
    let record = records::root_motion(&plan.model, &plan.timeline);
    if let (None, Some(node)) = (&record, &plan.settings().root_motion.node) {
        // Not even looked up: a misspelt name would pass unnoticed.
        plan.job.observer.warning(&format!(
            "the motion root `{node}` (--root-node, or `root_node` in the manifest) is unused: no clip extracts its root motion (--root-motion extract or extract-yaw, or `root_motion` per model, clip or blend in the manifest)"
        ));
    }
    let (Some(record), Some(metadata)) = (record, &made.metadata) else {
        return Ok(());
    };
    check_root_motion(&record, metadata).map_err(at(Stage::Container))?;
    put(sink, &mut made.records, record)
}

/// The morphs record (the morph targets the bone textures dropped).
fn morphs_record(_: &Plan<'_>, sink: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    match made.morphs.take() {
        Some(morphs) => put(sink, &mut made.records, morphs),
        None => Ok(()),
    }
}

/// The LOD record and the LOD detail record of a model with LOD groups
/// (from the weights and VAT records already put).
fn lod_records(plan: &Plan<'_>, sink: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    let model = &plan.model;
    let weights = made.records.weights.as_ref();
    let Some(lods_record) = lods::record(
        model,
        weights.map(|w| (w, &made.weights_nodes[..])),
        made.records.vat.as_ref(),
        |level| weights::mesh_file_name(&model.name, level),
    ) else {
        return Ok(());
    };
    let details = lods::details(
        model,
        &lods_record,
        weights,
        &plan.level_files,
        plan.settings(),
    );
    put(sink, &mut made.records, lods_record)?;
    put(sink, &mut made.records, details)
}

/// The UV-set record (which TEXCOORD sets hold the lookup UV and the
/// weight pairs), with a warning for sets importers drop.
fn uv_set_record(plan: &Plan<'_>, sink: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    warn_about_uv_sets(&made.uv_sets, plan.job.observer);
    if made.uv_sets.is_empty() {
        return Ok(());
    }
    let primitives = std::mem::take(&mut made.uv_sets);
    put(sink, &mut made.records, meta::UvSetsMetadata { primitives })
}

/// The bake key's section (its raw text).
fn bake_key(plan: &Plan<'_>, sink: &mut dyn Sink, _: &mut Made) -> Result<(), BakeError> {
    add_section(sink, SectionKind::Key, Ok(plan.job.key.as_bytes().to_vec()))
}

/// The source record (the model's path relative to the container).
fn source_record(plan: &Plan<'_>, sink: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    let Some(location) = plan.job.source_location else {
        return Ok(());
    };
    let relative_path = location.to_owned();
    put(
        sink,
        &mut made.records,
        meta::SourceLocation { relative_path },
    )
}

/// The animated-bounds record; then the warning about dropped influences
/// beyond what verify tolerates, which needs the bounds.
fn bounds_record(plan: &Plan<'_>, sink: &mut dyn Sink, made: &mut Made) -> Result<(), BakeError> {
    plan.job.observer.stage("bounds");
    let bounds = clip_bounds(&plan.model, &plan.timeline, made.vat_bounds.as_ref())?;
    put(sink, &mut made.records, bounds)?;
    warn_about_level_influences(plan, &made.records);
    Ok(())
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

/// The animated-bounds record: per clip, the box of every vertex at every
/// frame ([`rigbake_core::bake::bounds`]), from the boxes the VAT bake
/// gathered when it ran, else by a pass of its own.
fn clip_bounds(
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

/// Warns about dropped influences beyond what verify tolerates, each
/// weights entry judged by the pairs its LOD level keeps.
fn warn_about_level_influences(plan: &Plan<'_>, records: &Records) {
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
        |entry| plan.settings().influences_at(level_of_entry(entry)),
        plan.job.observer,
    );
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
