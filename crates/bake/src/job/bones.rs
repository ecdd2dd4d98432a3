//! The bone-matrix output: bake, encode as EXR, stage or embed, describe.

use rigbake_core::Model;
use rigbake_core::bake::anchors::{self, AnchorTracks, BoundProp, Prop};
use rigbake_core::bake::bone_error;
use rigbake_core::bake::frames::{FrameBake, bake_frames, check_forms};
use rigbake_core::bake::{BoneBakeOptions, BoneTexture};
use rigbake_core::timeline::Timeline;
use rigbake_format::meta;
use rigbake_format::meta::TextureContainer;
use rigbake_format::texture::Precision;
use rigbake_format::texture::{self, RgbaImage};

use super::common::{Part, node_name};
use super::vat_errors::figure;
use crate::error::StepError;
use crate::settings::BakeSettings;
use crate::sink::Sink;

/// What the bone output adds to the metadata.
#[derive(Debug)]
pub(super) struct BonesPart {
    pub skins: Vec<meta::SkinMeta>,
    pub textures: Vec<meta::TextureMeta>,
    /// The baked textures, in `skins` order (the weights pass needs them).
    pub baked: Vec<BoneTexture>,
    /// The folds of the textures taller than the maximum size.
    pub folds: Vec<meta::FoldMeta>,
    /// Why the textures took `--layout-fallback` instead of the layout
    /// asked for (the refusal of the lossy layout), when they did.
    pub fallback: Option<String>,
    /// Per texture, in `textures` order, what its encoding costs per clip.
    pub clip_errors: Vec<meta::TextureClipErrors>,
    /// The layout and precision the textures are in (those asked for, the
    /// fallback's, or the budget's choice).
    pub form: (rigbake_core::layout::MatrixLayout, Precision),
    /// What `--max-error` chose and why, when it was given.
    pub choice: Option<String>,
}

/// The layout record's entry for a folded texture.
pub(super) fn fold_meta(
    texture: meta::FoldedTexture,
    f: &rigbake_core::fold::Fold,
) -> meta::FoldMeta {
    meta::FoldMeta {
        texture,
        rows_per_block: f.rows_per_block,
        row_height: f.row_height,
        block_width: f.block_width,
        blocks_per_page: f.blocks_per_page,
        pages: f.pages,
    }
}

/// Bakes, encodes and stages the bone-matrix textures of `model`, and bakes
/// the tracks of `anchors` in the same pass.
pub(super) fn bake(
    model: &Model,
    timeline: &Timeline,
    settings: &BakeSettings,
    sink: &mut dyn Sink,
    anchors: &[usize],
    props: &[(Prop, bool)],
) -> Result<(Part<BonesPart>, AnchorTracks), StepError> {
    let bound = BoundProps::bind(model, props)?;
    let options = BoneBakeOptions {
        layout: settings.layout,
        precision: settings.precision,
        max_texture_size: settings.max_texture_size,
        ..BoneBakeOptions::default()
    };
    let (baked, options, fallback, measured, choice) = match settings.max_error {
        Some(budget) => {
            let c = super::budget::choose_bones(model, timeline, options, anchors, &bound, budget)?;
            (c.baked, c.options, None, Some(c.errors), Some(c.message))
        }
        None => {
            let (baked, options, fallback) =
                bake_as_asked(model, timeline, settings, options, anchors)?;
            (baked, options, fallback, None, None)
        }
    };
    let FrameBake {
        textures,
        anchors: tracks,
    } = baked;
    if textures.is_empty() {
        return Ok((
            Part::Skipped(if model.meshes.is_empty() || model.clips.is_empty() {
                "no skinned mesh: nothing for a bone-matrix bake".to_owned()
            } else {
                "no skinned mesh: nothing for a bone-matrix bake; `--vat` bakes its meshes' animation as vertex animation textures".to_owned()
            }),
            tracks,
        ));
    }
    let mut texture_meta = Vec::with_capacity(textures.len());
    let mut skins = Vec::with_capacity(textures.len());
    let mut folds = Vec::new();
    let mut clip_errors = Vec::with_capacity(textures.len());
    for (k, tex) in textures.iter().enumerate() {
        if tex.fold.is_folded() {
            folds.push(fold_meta(meta::FoldedTexture::Bones(k as u32), &tex.fold));
        }
        let precision = options.precision;
        let (bytes, max_error) = encode(tex, precision, settings.texture_container)
            .map_err(|e| StepError::during(format!("skins[{}]", tex.set.skin), e))?;
        let ext = match (settings.texture_container.extension(), precision) {
            (Some(ext), _) => ext,
            (None, Precision::Unorm16) => "png",
            (None, _) => "exr",
        };
        let (name, storage) = sink.place_texture(&format!("bones.skin{k}.{ext}"), &bytes)?;
        clip_errors.push(match &measured {
            Some(errors) => record(k, errors[k].clone()),
            None => record(
                k,
                bone_error::measure_bone_texture(
                    model,
                    timeline,
                    tex,
                    precision,
                    &bound.of_texture(k),
                )
                .map_err(StepError::bare)?,
            ),
        });
        texture_meta.push(meta::TextureMeta {
            kind: meta::TextureKind::BoneMatrices,
            name,
            width: tex.width as u32,
            height: tex.height as u32,
            layout: tex.layout,
            precision,
            encoding: if ext == "png" {
                meta::Encoding::Png16
            } else {
                meta::Encoding::ExrZip
            },
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
            folds,
            fallback,
            clip_errors,
            form: (options.layout, options.precision),
            choice,
        }),
        tracks,
    ))
}

/// Bakes the bone textures in the layout and precision asked for, or, when
/// `qts` cannot hold the skin and `--layout-fallback` names a layout, in
/// that (the returned sentence says why).
fn bake_as_asked(
    model: &Model,
    timeline: &Timeline,
    settings: &BakeSettings,
    mut options: BoneBakeOptions,
    anchors: &[usize],
) -> Result<(FrameBake, BoneBakeOptions, Option<String>), StepError> {
    let baked = bake_frames(model, timeline, &options, anchors).map_err(StepError::bare)?;
    let Err(refusal) = check_forms(model, timeline, &baked.textures) else {
        return Ok((baked, options, None));
    };
    let Some(layout) = settings.layout_fallback else {
        return Err(StepError::bare(refusal));
    };
    options.layout = layout;
    // 16-bit normalised samples are a qts form: the matrix layouts
    // take exact floats instead.
    let precision = if options.precision == Precision::Unorm16 {
        options.precision = Precision::F32;
        " at f32 precision"
    } else {
        ""
    };
    let baked = bake_frames(model, timeline, &options, anchors).map_err(StepError::bare)?;
    let fallback = format!(
        "bone textures baked as {}{precision} (--layout-fallback): {}: {}",
        crate::inspect::name(&layout),
        refusal.object,
        refusal.message
    );
    Ok((baked, options, Some(fallback)))
}

/// The rigid props bound to their joints (`--props bind`), bound once for
/// the clip-error measurement: (bone set, joint, vertices).
pub(super) struct BoundProps(Vec<(usize, usize, BoundProp)>);

impl BoundProps {
    /// Binds every prop of `props` marked bound (the rig plan's).
    pub(super) fn bind(model: &Model, props: &[(Prop, bool)]) -> Result<Self, StepError> {
        let sets = rigbake_core::bake::bones::bone_sets(model);
        props
            .iter()
            .filter(|(_, bound)| *bound)
            .map(|(p, _)| Ok((p.set, p.joint, anchors::bind_prop(model, &sets, p)?)))
            .collect::<rigbake_core::Result<Vec<_>>>()
            .map(Self)
            .map_err(StepError::bare)
    }

    /// The props of bone texture `k` (bone set `k`): (joint, vertices).
    pub(super) fn of_texture(&self, k: usize) -> Vec<(usize, &BoundProp)> {
        self.0
            .iter()
            .filter(|(set, _, _)| *set == k)
            .map(|(_, joint, prop)| (*joint, prop))
            .collect()
    }
}

/// The clip-error record's entry of bone texture `k`, from its figures
/// per clip ([`bone_error`]).
fn record(k: usize, clips: Vec<bone_error::BoneClipError>) -> meta::TextureClipErrors {
    meta::TextureClipErrors {
        subject: meta::ErrorSubject::BoneMatrices,
        texture: k as u32,
        clips: clips
            .into_iter()
            .map(|c| meta::ClipErrorMeta {
                positions: figure(c.positions),
                normals_degrees: None,
                virtual_vertices: Some(figure(c.virtual_vertices)),
            })
            .collect(),
    }
}

/// Encodes a bone texture (EXR, KTX2 or DDS); returns the bytes and the
/// largest error of a decoded matrix entry: what the precision introduced,
/// or for a lossy layout what the form and the precision did together.
fn encode(
    tex: &BoneTexture,
    precision: Precision,
    container: TextureContainer,
) -> rigbake_format::Result<(Vec<u8>, f64)> {
    let max_error = match tex.form_error {
        Some(form) => form.max,
        None => texture::quantization_error(&tex.data, precision)?,
    };
    let image = RgbaImage {
        width: tex.width,
        height: tex.height,
        data: &tex.data,
    };
    let bytes = texture::encode_image(&image, precision, container)?;
    Ok((bytes, max_error))
}
