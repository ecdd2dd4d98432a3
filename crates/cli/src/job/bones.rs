//! The bone-matrix output: bake, encode as EXR, stage or embed, describe.

use std::io::Cursor;
use std::path::Path;

use rigbake_core::Model;
use rigbake_core::bake::anchors::AnchorTracks;
use rigbake_core::bake::frames::{FrameBake, bake_frames};
use rigbake_core::bake::{BoneBakeOptions, BoneTexture};
use rigbake_core::layout::MatrixLayout;
use rigbake_core::timeline::Timeline;
use rigbake_format::container::SectionKind;
use rigbake_format::meta;
use rigbake_format::texture::{self, RgbaImage};

use super::{Part, Sink, node_name};
use crate::plan::BakeSettings;

/// What the bone output adds to the metadata.
#[derive(Debug)]
pub(super) struct BonesPart {
    pub skins: Vec<meta::SkinMeta>,
    pub textures: Vec<meta::TextureMeta>,
    /// The baked textures, in `skins` order (the weights step needs them).
    pub baked: Vec<BoneTexture>,
}

/// The metadata name of a core layout.
pub(super) fn layout_meta(layout: MatrixLayout) -> meta::MatrixLayout {
    match layout {
        MatrixLayout::Mat4 => meta::MatrixLayout::Mat4,
        MatrixLayout::Mat3x4 => meta::MatrixLayout::Mat3x4,
    }
}

/// Bakes, encodes and stages the bone-matrix textures of `model`, and bakes
/// the tracks of `anchors` in the same pass.
pub(super) fn bake(
    path: &Path,
    model: &Model,
    timeline: &Timeline,
    settings: &BakeSettings,
    sink: &mut Sink<'_>,
    anchors: &[usize],
) -> Result<(Part<BonesPart>, AnchorTracks), String> {
    let options = BoneBakeOptions {
        layout: settings.layout,
        max_texture_size: settings.max_texture_size,
        ..BoneBakeOptions::default()
    };
    let FrameBake {
        textures,
        anchors: tracks,
    } = bake_frames(model, timeline, &options, anchors)
        .map_err(|e| e.with_file(path).to_string())?;
    if textures.is_empty() {
        return Ok((
            Part::Skipped("no skinned mesh: nothing for a bone-matrix bake".to_owned()),
            tracks,
        ));
    }
    let mut texture_meta = Vec::with_capacity(textures.len());
    let mut skins = Vec::with_capacity(textures.len());
    for (k, tex) in textures.iter().enumerate() {
        let mut name = format!("bones.skin{k}.exr");
        let (bytes, max_error) = encode(tex, settings)
            .map_err(|e| format!("{}: skins[{}]: {e}", path.display(), tex.set.skin))?;
        let storage = if let (Some(store), false) = (sink.shared, sink.embed) {
            name = store.store(sink.out_dir, &bytes).map_err(|e| {
                format!(
                    "{}: cannot write a shared bone texture: {e}",
                    path.display()
                )
            })?;
            meta::Storage::File
        } else if sink.embed {
            let index = sink
                .container
                .add_section(SectionKind::Texture, &bytes)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            meta::Storage::Section(index as u32)
        } else {
            sink.staging
                .add_bytes(&name, &bytes)
                .map_err(|e| format!("{}: cannot write {name}: {e}", path.display()))?;
            meta::Storage::File
        };
        texture_meta.push(meta::TextureMeta {
            kind: meta::TextureKind::BoneMatrices,
            name,
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
        let skin = &model.skins[tex.set.skin];
        skins.push(meta::SkinMeta {
            name: skin.name.clone(),
            joints: skin.joints.iter().map(|&n| node_name(model, n)).collect(),
            parents: skin
                .joint_parents(&model.nodes)
                .into_iter()
                .map(|p| p.map_or(-1, |p| p as i32))
                .collect(),
            mesh_nodes: tex
                .set
                .members
                .iter()
                .map(|&n| node_name(model, n))
                .collect(),
            texture: k as u32,
        });
    }
    Ok((
        Part::Done(BonesPart {
            skins,
            textures: texture_meta,
            baked: textures,
        }),
        tracks,
    ))
}

/// Encodes a bone texture as EXR; returns the bytes and the largest error the
/// precision introduced.
fn encode(tex: &BoneTexture, settings: &BakeSettings) -> Result<(Vec<u8>, f64), String> {
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
