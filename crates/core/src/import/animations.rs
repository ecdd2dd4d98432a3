//! Animations into clips: key times, values, interpolation.

use gltf::accessor::{DataType, Dimensions};
use gltf::animation::Property as GltfProperty;

use super::accessor::{AccessorReader, Allowed};
use crate::error::{Error, Result};
use crate::model::{Channel, Clip, Interpolation, Mesh, Node, Property};

use DataType::{F32, I8, I16, U8, U16};

const TIMES: Allowed = Allowed {
    types: &[F32],
    dims: &[Dimensions::Scalar],
};

/// Builds every clip, in glTF animation order.
pub(super) fn build(
    doc: &gltf::Document,
    reader: &AccessorReader<'_>,
    nodes: &[Node],
    meshes: &[Mesh],
    quantized: bool,
) -> Result<Vec<Clip>> {
    let mut clips = Vec::new();
    for anim in doc.animations() {
        let a = anim.index();
        let mut channels = Vec::new();
        let mut duration = 0.0f64;
        for ch in anim.channels() {
            let path = format!("animations[{a}].channels[{}]", ch.index());
            let channel = build_channel(&ch, &path, reader, nodes, meshes, quantized)?;
            if let Some(last) = channel.times.last() {
                duration = duration.max(f64::from(*last));
            }
            channels.push(channel);
        }
        clips.push(Clip {
            name: anim
                .name()
                .map_or_else(|| format!("clip{a}"), str::to_owned),
            duration,
            channels,
        });
    }
    Ok(clips)
}

/// Checks that key times increase and start at or after zero.
fn check_times(path: &str, times: &[f32]) -> Result<()> {
    for (k, pair) in times.windows(2).enumerate() {
        if pair[1] <= pair[0] {
            return Err(Error::invalid(
                path,
                format!(
                    "key times are not increasing (key {} at {} s follows {} s)",
                    k + 1,
                    pair[1],
                    pair[0]
                ),
            ));
        }
    }
    if times[0] < 0.0 {
        return Err(Error::invalid(
            path,
            format!("key times are negative (first key at {} s)", times[0]),
        ));
    }
    Ok(())
}

/// What channel `ch` animates: the property, its values per key and the
/// accessor types its output may have (integers only where
/// `KHR_mesh_quantization` or the spec allow them).
fn target_of(
    ch: &gltf::animation::Channel<'_>,
    path: &str,
    nodes: &[Node],
    meshes: &[Mesh],
    quantized: bool,
) -> Result<(Property, usize, Allowed)> {
    let node = ch.target().node().index();
    Ok(match ch.target().property() {
        GltfProperty::Translation => (
            Property::Translation,
            3,
            Allowed {
                types: if quantized {
                    &[F32, I8, U8, I16, U16]
                } else {
                    &[F32]
                },
                dims: &[Dimensions::Vec3],
            },
        ),
        GltfProperty::Scale => (
            Property::Scale,
            3,
            Allowed {
                types: if quantized {
                    &[F32, I8, U8, I16, U16]
                } else {
                    &[F32]
                },
                dims: &[Dimensions::Vec3],
            },
        ),
        GltfProperty::Rotation => (
            Property::Rotation,
            4,
            Allowed {
                types: &[F32, I8, U8, I16, U16],
                dims: &[Dimensions::Vec4],
            },
        ),
        GltfProperty::MorphTargetWeights => {
            let targets = nodes[node]
                .mesh
                .map_or(0, |m| meshes[m].default_weights.len());
            if targets == 0 {
                return Err(Error::invalid(
                    path,
                    format!(
                        "animates morph weights of nodes[{node}], which has no mesh with morph targets"
                    ),
                ));
            }
            (
                Property::MorphWeights,
                targets,
                Allowed {
                    types: &[F32, I8, U8, I16, U16],
                    dims: &[Dimensions::Scalar],
                },
            )
        }
    })
}

fn build_channel(
    ch: &gltf::animation::Channel<'_>,
    path: &str,
    reader: &AccessorReader<'_>,
    nodes: &[Node],
    meshes: &[Mesh],
    quantized: bool,
) -> Result<Channel> {
    let node = ch.target().node().index();
    if matches!(
        ch.target().node().transform(),
        gltf::scene::Transform::Matrix { .. }
    ) {
        return Err(Error::invalid(
            format!("{path}.target.node"),
            format!(
                "animates nodes[{node}], which has a `matrix`; glTF 2.0 allows animating only nodes given as TRS"
            ),
        )
        .with_hint("re-export the model with a conforming exporter"));
    }
    let sampler = ch.sampler();
    let spath = format!(
        "animations[{}].samplers[{}]",
        ch.animation().index(),
        sampler.index()
    );
    let times = reader.floats(&sampler.input(), &format!("{spath}.input"), TIMES)?;
    check_times(path, &times)?;
    let interpolation = match sampler.interpolation() {
        gltf::animation::Interpolation::Step => Interpolation::Step,
        gltf::animation::Interpolation::Linear => Interpolation::Linear,
        gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
    };
    let (property, width, allowed) = target_of(ch, path, nodes, meshes, quantized)?;
    let mut values = reader.floats(&sampler.output(), &format!("{spath}.output"), allowed)?;
    let per_key = if interpolation == Interpolation::CubicSpline {
        3 * width
    } else {
        width
    };
    if values.len() != times.len() * per_key {
        return Err(Error::invalid(
            format!("{spath}.output"),
            format!(
                "{} values for {} keys; expected {} ({} per key)",
                values.len(),
                times.len(),
                times.len() * per_key,
                per_key
            ),
        ));
    }
    if property == Property::Rotation {
        // Renormalise rotation values (not tangents): stored values are often
        // slightly off unit length and normalized integers never decode to it.
        let offset = if interpolation == Interpolation::CubicSpline {
            4
        } else {
            0
        };
        for (k, key) in values.chunks_exact_mut(per_key).enumerate() {
            let q = &mut key[offset..offset + 4];
            let len = q.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>().sqrt();
            if len < 1e-6 {
                return Err(Error::invalid(
                    format!("{spath}.output"),
                    format!("rotation key {k} is a zero quaternion"),
                ));
            }
            for v in q.iter_mut() {
                *v = (f64::from(*v) / len) as f32;
            }
        }
    }
    Ok(Channel {
        node,
        property,
        interpolation,
        times,
        values,
        width,
    })
}
