//! One model's bake: read, import, bake, encode, write. Turns every problem
//! into an [`Outcome`] so one bad model never stops the others.

use std::io::Cursor;
use std::path::Path;

use rigbake_core::bake::{self, BoneBakeOptions, BoneTexture, MatrixLayout};
use rigbake_core::timeline::{SampleRule, Timeline};
use rigbake_core::{ErrorKind, Model, import};
use rigbake_format::container::{ContainerWriter, SectionKind};
use rigbake_format::meta::{self, Metadata};
use rigbake_format::texture::{self, RgbaImage};
use sha2::{Digest, Sha256};

use crate::output::{self, OutputFile};
use crate::plan::{BakeJob, BakeSettings};
use crate::report::Outcome;

/// Bakes one model according to `settings`.
pub fn bake_model(job: &BakeJob, settings: &BakeSettings) -> Outcome {
    match try_bake(job, settings) {
        Ok(outcome) => outcome,
        Err(error) => Outcome::Failed { error },
    }
}

fn try_bake(job: &BakeJob, settings: &BakeSettings) -> Result<Outcome, String> {
    let path = &job.input;
    let bytes = import::read_file(path, &settings.import.limits).map_err(|e| e.to_string())?;
    let model = import::import_bytes(path, &bytes, &settings.import).map_err(|e| e.to_string())?;
    let timeline = Timeline::all_clips(&model, settings.sampling)
        .map_err(|e| e.with_file(path).to_string())?;
    let options = BoneBakeOptions {
        layout: settings.layout,
        max_texture_size: settings.max_texture_size,
        ..BoneBakeOptions::default()
    };
    let textures = match bake::bake_bone_textures(&model, &timeline, &options) {
        Ok(t) => t,
        Err(e) if e.kind == ErrorKind::NothingToBake => {
            return Ok(Outcome::Skipped { reason: e.message });
        }
        Err(e) => return Err(e.with_file(path).to_string()),
    };

    let mut files = Vec::new();
    let mut container = ContainerWriter::new(Cursor::new(Vec::new())).map_err(|e| e.to_string())?;
    let mut texture_meta = Vec::new();
    for (k, tex) in textures.iter().enumerate() {
        let name = format!("bones.skin{k}.exr");
        let (bytes, max_error) = encode_bone_texture(tex, settings)
            .map_err(|e| format!("{}: skins[{}]: {e}", path.display(), tex.set.skin))?;
        let storage = if settings.embed_textures {
            let index = container
                .add_section(SectionKind::Texture, &bytes)
                .map_err(|e| e.to_string())?;
            meta::Storage::Section(index as u32)
        } else {
            meta::Storage::File
        };
        texture_meta.push(meta::TextureMeta {
            kind: meta::TextureKind::BoneMatrices,
            name: name.clone(),
            width: tex.width as u32,
            height: tex.height as u32,
            layout: layout_meta(tex.layout),
            precision: settings.precision,
            encoding: meta::Encoding::ExrZip,
            bytes: bytes.len() as u64,
            crc32: crc32fast::hash(&bytes),
            storage,
            max_error,
        });
        if !settings.embed_textures {
            files.push(OutputFile { name, bytes });
        }
    }
    let metadata = build_metadata(
        path,
        &bytes,
        &model,
        &timeline,
        &textures,
        texture_meta,
        settings,
    );
    let (cursor, _) = container.finish(&metadata).map_err(|e| e.to_string())?;
    files.push(OutputFile {
        name: format!("{}.rigbake", model.name),
        bytes: cursor.into_inner(),
    });
    let written = output::write_all(&job.out_dir, &files).map_err(|e| {
        format!(
            "{}: cannot write outputs to `{}`: {e}",
            path.display(),
            job.out_dir.display()
        )
    })?;
    Ok(Outcome::Baked { files: written })
}

fn layout_meta(layout: MatrixLayout) -> meta::MatrixLayout {
    match layout {
        MatrixLayout::Mat4 => meta::MatrixLayout::Mat4,
        MatrixLayout::Mat3x4 => meta::MatrixLayout::Mat3x4,
    }
}

/// Encodes a bone texture as EXR; returns the bytes and the largest error
/// the precision introduced.
fn encode_bone_texture(
    tex: &BoneTexture,
    settings: &BakeSettings,
) -> Result<(Vec<u8>, f64), String> {
    let max_error =
        texture::quantization_error(&tex.data, settings.precision).map_err(|e| e.to_string())?;
    let image = RgbaImage {
        width: tex.width,
        height: tex.height,
        data: &tex.data,
    };
    let mut buf = Cursor::new(Vec::new());
    texture::exr::write(&mut buf, &image, settings.precision).map_err(|e| e.to_string())?;
    Ok((buf.into_inner(), max_error))
}

fn build_metadata(
    path: &Path,
    bytes: &[u8],
    model: &Model,
    timeline: &Timeline,
    textures: &[BoneTexture],
    texture_meta: Vec<meta::TextureMeta>,
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
            layout: layout_meta(settings.layout),
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
        skins: textures
            .iter()
            .enumerate()
            .map(|(k, tex)| {
                let skin = &model.skins[tex.set.skin];
                meta::SkinMeta {
                    name: skin.name.clone(),
                    joints: skin
                        .joints
                        .iter()
                        .map(|&n| model.nodes[n].name.clone())
                        .collect(),
                    parents: skin
                        .joint_parents(&model.nodes)
                        .into_iter()
                        .map(|p| p.map_or(-1, |p| p as i32))
                        .collect(),
                    mesh_nodes: tex
                        .set
                        .members
                        .iter()
                        .map(|&n| model.nodes[n].name.clone())
                        .collect(),
                    texture: k as u32,
                }
            })
            .collect(),
        textures: texture_meta,
    }
}
