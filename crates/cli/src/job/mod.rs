//! One model's bake: read, import, choose clips, run each requested output,
//! write the container, commit the files. Every problem becomes an
//! [`Outcome`] so one bad model never stops the others; even a panic inside
//! one model is caught and reported as an internal error for that file.

mod bones;
mod mesh;
mod rig;
mod vat;
mod weights;

use std::fs::File;
use std::io::BufWriter;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use rigbake_core::bake::bone_sets;
use rigbake_core::timeline::{ClipSpec, SampleRule, Timeline};
use rigbake_core::{Model, import};
use rigbake_format::codec;
use rigbake_format::container::{ContainerWriter, SectionKind};
use rigbake_format::meta::{self, Metadata};
use sha2::{Digest, Sha256};

use crate::batch::SharedStore;
use crate::output::Staging;
use crate::plan::{BakeJob, BakeSettings};
use crate::progress::ModelProgress;
use crate::report::Outcome;

/// What one output step produced.
#[derive(Debug)]
enum Part<T> {
    /// Files were staged; here is their metadata.
    Done(T),
    /// The output does not apply to this model (the reason says why).
    Skipped(String),
}

/// The container being written, with the staging area it lives in.
struct Sink<'a> {
    staging: &'a mut Staging,
    container: ContainerWriter<BufWriter<File>>,
    embed: bool,
    shared: Option<&'a SharedStore>,
    out_dir: &'a Path,
}

/// What a job needs besides its plan entry.
pub struct Context<'a> {
    /// The model file's bytes (already read, for the bake key).
    pub bytes: &'a [u8],
    /// The bake key, recorded in the container.
    pub key: &'a str,
    /// Where to report progress.
    pub progress: &'a ModelProgress,
    /// Where shared bone textures go, when sharing.
    pub shared: Option<&'a SharedStore>,
}

/// Bakes one model; never panics (a panic inside is caught and reported as
/// an internal error for that file).
pub fn bake_model(job: &BakeJob, ctx: &Context<'_>) -> Outcome {
    match catch_unwind(AssertUnwindSafe(|| try_bake(job, ctx))) {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(error)) => Outcome::Failed { error },
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Outcome::Failed {
                error: format!(
                    "{}: internal error (please report it with this file): {what}",
                    job.input.display()
                ),
            }
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

fn try_bake(job: &BakeJob, ctx: &Context<'_>) -> Result<Outcome, String> {
    let settings = &job.settings;
    let path = &job.input;
    let at_file = |e: rigbake_core::Error| e.with_file(path).to_string();
    let bytes = ctx.bytes;
    fault("start", path);
    let model = import::import_bytes(path, bytes, &settings.import).map_err(at_file)?;
    let timeline = timeline(&model, settings).map_err(at_file)?;
    ctx.progress.info(&format!(
        "{} clips, {} frames",
        timeline.clips.len(),
        timeline.rows
    ));

    let mut staging = Staging::new(&job.out_dir).map_err(|e| {
        format!(
            "{}: cannot create `{}`: {e}",
            path.display(),
            job.out_dir.display()
        )
    })?;
    let container_name = format!("{}.rigbake", model.name);
    let container_path = staging.path_for(&container_name);
    let file = File::create(&container_path).map_err(|e| io_error(path, &container_path, &e))?;
    let container = ContainerWriter::new(BufWriter::new(file))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut sink = Sink {
        staging: &mut staging,
        container,
        embed: settings.embed_textures,
        shared: ctx.shared,
        out_dir: &job.out_dir,
    };
    let fail = |e: rigbake_format::FormatError| {
        format!("{}: cannot write the container: {e}", path.display())
    };

    let mut skipped = Vec::new();
    let mut bones_part = None;
    let mut rig_record = None;
    if settings.outputs.bones {
        ctx.progress.stage("bone textures");
        let sets = bone_sets(&model);
        let rig_plan = rig::plan(path, &model, &sets, settings)?;
        let anchor_nodes: Vec<usize> = rig_plan.anchors.iter().map(|(n, _)| *n).collect();
        let (part, tracks) =
            bones::bake(path, &model, &timeline, settings, &mut sink, &anchor_nodes)?;
        match part {
            Part::Done(p) => bones_part = Some(p),
            Part::Skipped(reason) => skipped.push(reason),
        }
        if let Some(bones) = &bones_part {
            if settings.outputs.weights {
                ctx.progress.stage("bone weights");
                let w = weights::bake(path, &model, bones, &rig_plan, settings, &mut sink)?;
                let record = codec::encode_weights(&w).map_err(fail)?;
                sink.container
                    .add_section(SectionKind::Weights, &record)
                    .map_err(fail)?;
            }
        }
        rig_record = rig::record(
            path, &model, &timeline, &rig_plan, &tracks, settings, &mut sink,
        )?;
    }
    let mut vat_part = None;
    if settings.outputs.vat {
        ctx.progress.stage("vertex animation");
        match vat::bake(path, &model, &timeline, settings, &mut sink)? {
            Part::Done(p) => vat_part = Some(p),
            Part::Skipped(reason) => skipped.push(reason),
        }
    }
    let has_anchors = rig_record.as_ref().is_some_and(|r| !r.anchors.is_empty());
    if bones_part.is_none() && vat_part.is_none() && !has_anchors {
        return Ok(Outcome::Skipped {
            reason: skipped.join("; "),
        });
    }

    ctx.progress.stage("writing");
    let (skins, textures) = bones_part
        .map(|b| (b.skins, b.textures))
        .unwrap_or_default();
    let metadata = build_metadata(path, bytes, &timeline, skins, textures, settings);
    if let Some(vat) = &vat_part {
        let record = codec::encode_vat(vat).map_err(fail)?;
        sink.container
            .add_section(SectionKind::Vat, &record)
            .map_err(fail)?;
    }
    if let Some(rig) = &rig_record {
        let record = codec::encode_rig(rig).map_err(fail)?;
        sink.container
            .add_section(SectionKind::Rig, &record)
            .map_err(fail)?;
    }
    sink.container
        .add_section(SectionKind::Key, ctx.key.as_bytes())
        .map_err(fail)?;
    sink.container.finish(&metadata).map_err(fail)?;
    fault("commit", path);
    let files = staging.commit().map_err(|e| {
        format!(
            "{}: cannot write outputs to `{}`: {e}",
            path.display(),
            job.out_dir.display()
        )
    })?;
    Ok(Outcome::Baked {
        files,
        key: ctx.key.to_owned(),
    })
}

/// The clips to bake: the requested ones (every animation when none were
/// named), then the blends.
fn timeline(model: &Model, settings: &BakeSettings) -> rigbake_core::Result<Timeline> {
    if settings.clips.is_empty() && settings.blends.is_empty() {
        return Timeline::all_clips(model, settings.sampling);
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
    Timeline::build(model, settings.sampling, &specs)
}

fn io_error(model: &Path, file: &Path, e: &std::io::Error) -> String {
    format!(
        "{}: cannot write `{}`: {e}",
        model.display(),
        file.display()
    )
}

/// A file-name-safe version of a glTF name.
fn file_safe(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    }
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
            sampling: match timeline.sampling.rule {
                SampleRule::FixedRate => meta::SamplingRule::FixedRate,
                SampleRule::EvenSpread => meta::SamplingRule::EvenSpread,
            },
            layout: bones::layout_meta(settings.layout),
            precision: settings.precision,
            max_texture_size: settings.max_texture_size as u32,
        },
        clips: timeline
            .clips
            .iter()
            .map(|c| meta::ClipMeta {
                name: c.name.clone(),
                start_row: c.start_row as u32,
                frames: c.frames as u32,
                fps,
                duration: c.duration,
                looping: c.looping,
            })
            .collect(),
        skins,
        textures,
    }
}

/// Names of nodes as used in metadata.
fn node_name(model: &Model, node: usize) -> String {
    model.nodes[node].name.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_made_safe() {
        assert_eq!(file_safe("Knight_Body"), "Knight_Body");
        assert_eq!(file_safe("Armature|Idle 2/x"), "Armature_Idle_2_x");
        assert_eq!(file_safe(""), "_");
        assert_eq!(file_safe(".hidden"), "_.hidden");
    }
}
