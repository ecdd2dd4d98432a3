//! Anchors, props and clip origins: which sockets to track, how rigid props
//! are handled, and the rig record that describes them.

use rigbake_core::Model;
use rigbake_core::bake::anchors::{self, AnchorTracks, Prop};
use rigbake_core::bake::bones::BoneSet;
use rigbake_core::timeline::Timeline;
use rigbake_format::meta;
use rigbake_format::records::SectionKind;
use rigbake_format::texture::{self, Precision, RgbaImage};
use rigbake_types::OutputKind;

use super::common::node_name;
use crate::error::StepError;
use crate::records;
use crate::settings::BakeSettings;
use crate::sink::Sink;

/// The sockets and props of one model, decided before baking.
#[derive(Debug)]
pub(super) struct RigPlan {
    /// Anchor nodes in track order, with why each is there.
    pub anchors: Vec<(usize, meta::AnchorReason)>,
    /// Every prop and whether it is bound (else it is an anchor).
    pub props: Vec<(Prop, bool)>,
}

/// Resolves requested anchors, automatic ones, and props.
pub(super) fn plan(
    model: &Model,
    sets: &[BoneSet],
    settings: &BakeSettings,
) -> rigbake_core::Result<RigPlan> {
    let mut anchors: Vec<(usize, meta::AnchorReason)> = Vec::new();
    // Each node once, in first-seen order: a flag per node keeps it linear.
    let mut seen = vec![false; model.nodes.len()];
    let mut add = |node: usize, reason| {
        if !std::mem::replace(&mut seen[node], true) {
            anchors.push((node, reason));
        }
    };
    for node in anchors::find_nodes(model, &settings.anchors.nodes)? {
        add(node, meta::AnchorReason::Requested);
    }
    if settings.anchors.auto {
        for node in anchors::auto_anchors(model)? {
            add(node, meta::AnchorReason::Auto);
        }
    }
    let mut props = Vec::new();
    for prop in anchors::find_props(model, sets) {
        let bound = settings.bind_props
            && settings.outputs.has(OutputKind::Weights)
            && prop.offset.is_some();
        if !bound {
            add(prop.node, meta::AnchorReason::Prop);
        }
        props.push((prop, bound));
    }
    Ok(RigPlan { anchors, props })
}

/// Stores the anchor tracks (container section, optional EXR, folded into
/// column blocks when taller than the maximum size) and returns the rig
/// record, or `None` when there is nothing to record, and the EXR's fold
/// when it is folded.
pub(super) fn record(
    model: &Model,
    timeline: &Timeline,
    rig: &RigPlan,
    tracks: &AnchorTracks,
    settings: &BakeSettings,
    sink: &mut dyn Sink,
) -> Result<(Option<meta::RigMetadata>, Option<meta::FoldMeta>), StepError> {
    let clip_origins = records::clip_origins(model, timeline);
    if rig.anchors.is_empty() && rig.props.is_empty() && clip_origins.is_empty() {
        return Ok((None, None));
    }
    let (mut anchor_section, mut anchor_texture, mut anchor_fold) = (None, None, None);
    if !rig.anchors.is_empty() {
        let bytes: Vec<u8> = tracks.data.iter().flat_map(|v| v.to_le_bytes()).collect();
        anchor_section = Some(
            sink.add_section(SectionKind::TrackData, &bytes)
                .map_err(|e| e.or_context("anchor tracks"))? as u32,
        );
        if settings.anchors.exr {
            let ext = settings.texture_container.extension().unwrap_or("exr");
            let name = format!("anchors.{ext}");
            // Checked (with the same fold) before the tracks were baked.
            let fold = rigbake_core::bake::frames::anchor_fold(
                tracks.nodes.len(),
                tracks.rows,
                settings.max_texture_size,
            )
            .map_err(StepError::bare)?;
            let folded;
            let data = if fold.is_folded() {
                anchor_fold = Some(super::bones::fold_meta(meta::FoldedTexture::Anchors, &fold));
                folded = fold.arrange(&tracks.data, 4, tracks.rows, 0);
                &folded
            } else {
                &tracks.data
            };
            let image = RgbaImage {
                width: fold.width() as usize,
                height: fold.height() as usize,
                data,
            };
            let bytes = texture::encode_image(&image, Precision::F32, settings.texture_container)
                .map_err(|e| StepError::during("anchor tracks", e))?;
            sink.write_file(&name, &bytes)?;
            anchor_texture = Some(name);
        }
    }
    let mesh_of = |node: usize| model.nodes[node].mesh.map(|m| model.meshes[m].name.clone());
    let record = meta::RigMetadata {
        reference_node: tracks.reference.map(|n| node_name(model, n)),
        anchors: rig
            .anchors
            .iter()
            .map(|&(node, reason)| meta::AnchorMeta {
                node: node_name(model, node),
                reason,
                mesh: if reason == meta::AnchorReason::Prop {
                    mesh_of(node)
                } else {
                    None
                },
            })
            .collect(),
        anchor_section,
        anchor_texture,
        props: rig
            .props
            .iter()
            .map(|(p, bound)| meta::PropMeta {
                node: node_name(model, p.node),
                mesh: mesh_of(p.node).unwrap_or_default(),
                joint: node_name(model, p.joint_node),
                skin: p.set as u32,
                mode: if *bound {
                    meta::PropMode::Bound
                } else {
                    meta::PropMode::Anchor
                },
            })
            .collect(),
        clip_origins,
    };
    Ok((Some(record), anchor_fold))
}
