//! The warnings of a bake that still succeeds, each decided from what a
//! pass made or from the assembled records: plain functions from results to
//! messages. The pipeline gives them to the observer in one place
//! (`pipeline::warnings`).

use rigbake_core::Model;
use rigbake_format::meta;
use rigbake_types::OutputKind;

use super::bones::BonesPart;
use super::mesh;
use crate::report::count;
use crate::settings::BakeSettings;

/// Half floats hold every integer up to this exactly: the bone indices of
/// `--weights-as-uv` survive importers that store UVs as half floats only
/// below it.
const HALF_FLOAT_EXACT_INTEGERS: usize = 2048;

/// With `--weights-as-uv`, one warning per bone set of more than 2,048
/// joints: its bone indices are not exact in half floats.
pub(super) fn half_float_bones(bones: &BonesPart, settings: &BakeSettings) -> Vec<String> {
    if !settings.weights_as_uv {
        return Vec::new();
    }
    bones
        .skins
        .iter()
        .filter(|k| k.joints.len() > HALF_FLOAT_EXACT_INTEGERS)
        .map(|skin| format!(
            "bone set `{}` has {} joints: with --weights-as-uv, bone indices above {HALF_FLOAT_EXACT_INTEGERS} are not exact where an importer stores UVs as half floats (Godot 3's default import, Unity's mesh compression); turn that compression off or read the _RIGBAKE_UV attributes",
            skin.name,
            skin.joints.len()
        ))
        .collect()
}

/// One warning per mesh instance of the morphs record (the morph targets
/// the bone textures drop), naming it and suggesting `--vat`; none when
/// the bake also makes a VAT, which keeps them.
pub(super) fn dropped_morphs(
    model: &Model,
    morphs: &meta::MorphsMetadata,
    settings: &BakeSettings,
) -> Vec<String> {
    if settings.outputs.has(OutputKind::Vat) {
        return Vec::new();
    }
    morphs
        .dropped
        .iter()
        .map(|d| {
            let prims: Vec<String> = d.primitives.iter().map(u32::to_string).collect();
            format!(
                "node `{}` (mesh `{}`, meshes[{}].primitives[{}]) has {} morph targets{}; bone textures hold skin matrices only, so this bake drops them (recorded in the container); bake with --vat to keep them",
                d.node,
                model.meshes[d.mesh as usize].name,
                d.mesh,
                prims.join(", "),
                d.targets,
                if d.animated {
                    " animated by the baked clips"
                } else {
                    " with non-zero default weights"
                },
            )
        })
        .collect()
}

/// A warning when a motion root is named but no clip extracts root motion
/// (`record` is the root-motion record): the name is not even looked up,
/// so a misspelt one would pass unnoticed.
pub(super) fn unused_motion_root(
    settings: &BakeSettings,
    record: Option<&meta::RootMotionMetadata>,
) -> Option<String> {
    let node = settings
        .root_motion
        .node
        .as_ref()
        .filter(|_| record.is_none())?;
    Some(format!(
        "the motion root `{node}` (--root-node, or `root_node` in the manifest) is unused: no clip extracts its root motion (--root-motion extract or extract-yaw, or `root_motion` per model, clip or blend in the manifest)"
    ))
}

/// One warning per mesh file and set whose VAT lookup UV sits in a
/// TEXCOORD set that three.js's importer drops (above `TEXCOORD_3`).
pub(super) fn uv_sets(uv_sets: &[meta::PrimitiveUvSets]) -> Vec<String> {
    let mut told = std::collections::BTreeSet::new();
    let mut warnings = Vec::new();
    for p in uv_sets {
        if let Some(set) = p.lookup.filter(|&s| s > mesh::THREEJS_LAST_UV_SET)
            && told.insert((p.file.as_str(), set))
        {
            warnings.push(format!(
                "{}: the VAT lookup UV is in TEXCOORD_{set} (the source has {} UV sets); three.js reads only TEXCOORD_0..3 and some importers drop high sets; choose a set with --lookup-uv-set N (see docs/engines.md)",
                p.file, p.source_sets
            ));
        }
    }
    warnings
}

/// A warning when keeping `--max-influences` pairs per vertex moves some
/// vertex further than `rigbake verify`'s default tolerance
/// ([`crate::verify::DEFAULT_RELATIVE_TOLERANCE`] of the animated bounds'
/// diagonal): names the worst primitive, its largest dropped weight and the
/// movement (the recorded `position_error`), so the loss is never silent.
/// Each weights entry is judged by the pairs its LOD level keeps (`lods`).
pub(super) fn dropped_influences(
    weights: &meta::WeightsMetadata,
    bounds: &meta::BoundsMetadata,
    lods: Option<&meta::LodsMetadata>,
    settings: &BakeSettings,
) -> Option<String> {
    let (entry, worst) = weights
        .primitives
        .iter()
        .enumerate()
        .filter(|(_, p)| p.position_error > 0.0)
        .max_by(|a, b| a.1.position_error.total_cmp(&b.1.position_error))?;
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
        return None;
    }
    let dropped_max = weights
        .primitives
        .iter()
        .map(|p| p.dropped_max)
        .fold(0.0f64, f64::max);
    let level = lods
        .iter()
        .flat_map(|r| &r.groups)
        .find_map(|g| {
            g.levels
                .iter()
                .position(|l| l.weights_primitives.contains(&(entry as u32)))
        })
        .unwrap_or(0);
    Some(format!(
        "keeping {} per vertex (--max-influences) drops up to {:.1}% of a vertex's weight and moves vertices by up to {:.3e} ({:.2e} of the model's size, node `{}`, mesh `{}`, primitive {}), beyond verify's default tolerance of {tolerance:.0e}; the loss is recorded and `rigbake verify` fails unless given --accept-recorded-loss; raise --max-influences to keep more",
        count(settings.influences_at(level) as u64, "bone influence", None),
        dropped_max * 100.0,
        worst.position_error,
        worst.position_error / diagonal.max(f64::MIN_POSITIVE),
        worst.node,
        worst.mesh,
        worst.primitive,
    ))
}
