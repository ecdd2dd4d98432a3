//! Posed meshes for previews: every primitive of one playback path at one
//! frame, either reconstructed from the bake through the runtime reference
//! or evaluated directly from the source (for comparison), placed in scene
//! space.
//!
//! Placement: a path's values are in the model space of a node (a bone
//! set's mesh node, or the VAT reference node); the preview places them by
//! that node's global matrix at the rest pose, as an engine places an
//! instance at the identity. Topology (indices, mode) comes from the source
//! primitive; points and lines are not drawn.

use glam::{DMat3, DMat4, Vec3};
use rigbake_core::Model;
use rigbake_core::bake::vat::NormalConvention;
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::model::PrimitiveMode;
use rigbake_core::reference::{deform, direct_global, source_pose_at};
use rigbake_core::runtime::{AnimationState, GpuState, PlayMode, bone_path, vat_path};

use crate::playback::{Loaded, LoadedClip};

/// Which playback path to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathChoice {
    /// Bone-matrix texture + bone-weight channels.
    Bones,
    /// Vertex animation textures.
    Vat,
}

/// Where vertices come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Producer {
    /// The bake, through the runtime reference.
    Bake,
    /// Direct evaluation of the source model.
    Direct,
}

/// One primitive posed at one instant, in scene space.
#[derive(Debug, Clone, PartialEq)]
pub struct PosedMesh {
    /// Positions.
    pub positions: Vec<Vec3>,
    /// Unit normals, when the source primitive has normals.
    pub normals: Option<Vec<Vec3>>,
    /// Index into [`Topology::triangles`].
    pub topology: usize,
    /// Whether the placement mirrors (front faces turn clockwise).
    pub mirrored: bool,
}

/// What is drawn of each primitive of a path, built once.
#[derive(Debug, Clone)]
pub struct Topology {
    /// Triangles per primitive, in the path's primitive order.
    pub triangles: Vec<Vec<[u32; 3]>>,
    /// (node, primitive, space node, placement, entry in the path's
    /// record) per drawn primitive.
    parts: Vec<(usize, usize, Option<usize>, DMat4, usize)>,
}

/// The triangles of a primitive (lists, strips and fans; nothing for
/// points and lines).
pub fn triangles(model: &Model, node: usize, primitive: usize) -> Vec<[u32; 3]> {
    let Some(mesh) = model.nodes[node].mesh else {
        return Vec::new();
    };
    let p = &model.meshes[mesh].primitives[primitive];
    let index: Vec<u32> = match &p.indices {
        Some(i) => i.clone(),
        None => (0..p.vertex_count() as u32).collect(),
    };
    match p.mode {
        PrimitiveMode::Triangles => index.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect(),
        PrimitiveMode::TriangleStrip => (0..index.len().saturating_sub(2))
            .map(|i| {
                if i % 2 == 0 {
                    [index[i], index[i + 1], index[i + 2]]
                } else {
                    [index[i + 1], index[i], index[i + 2]]
                }
            })
            .collect(),
        PrimitiveMode::TriangleFan => (1..index.len().saturating_sub(1))
            .map(|i| [index[0], index[i], index[i + 1]])
            .collect(),
        _ => Vec::new(),
    }
}

impl Topology {
    /// The primitives of `path` in `loaded`, with their triangles and
    /// placements (rest-pose globals of their space nodes). Of a LOD group
    /// of the bake (its LOD record, manifest groups included; the source's
    /// own for older containers), only level 0 is drawn: the levels would
    /// overlap.
    pub fn new(loaded: &Loaded, path: PathChoice) -> Self {
        let model = &loaded.source.model;
        let rest = LocalPose::rest(model);
        // The recorded placement of a space (format 1.11), taken by its
        // place in the record (bone set `s`: `skins[s]`; the VAT: the
        // reference), never looked up by name; else the rest pose of the
        // source.
        let record = loaded.records.placement.as_ref();
        let place = |space: Option<usize>, recorded: Option<&rigbake_format::meta::Placement>| {
            match recorded {
                Some(p) => DMat4::from_cols_array(&p.matrix),
                None => space.map_or(DMat4::IDENTITY, |n| direct_global(model, &rest, n)),
            }
        };
        let parts: Vec<(usize, usize, Option<usize>, DMat4, usize)> = match path {
            PathChoice::Bones => loaded
                .bones
                .iter()
                .flat_map(|b| {
                    b.primitives.iter().enumerate().map(|(i, p)| {
                        let space = Some(b.textures[p.set].space_node);
                        let recorded = record.and_then(|r| r.skins.get(p.set));
                        (p.node, p.primitive, space, place(space, recorded), i)
                    })
                })
                .collect(),
            PathChoice::Vat => loaded
                .vat
                .iter()
                .flat_map(|v| {
                    v.primitives.iter().enumerate().map(|(i, p)| {
                        (
                            p.node,
                            p.primitive,
                            v.reference_node,
                            place(v.reference_node, record.map(|r| &r.reference)),
                            i,
                        )
                    })
                })
                .collect(),
        };
        let parts: Vec<_> = parts
            .into_iter()
            .filter(|part| {
                let level = loaded.lod_levels.get(part.0).copied().flatten();
                level.is_none_or(|level| level == 0)
            })
            .collect();
        Self {
            triangles: parts
                .iter()
                .map(|&(n, p, _, _, _)| triangles(model, n, p))
                .collect(),
            parts,
        }
    }

    /// The node of every drawn primitive, in draw order.
    pub fn drawn_nodes(&self) -> Vec<usize> {
        self.parts.iter().map(|p| p.0).collect()
    }
}

/// The GPU state of an instance showing frame `frame` of `clip`.
fn state_at(clip: &LoadedClip, frame: u32) -> GpuState {
    let mut state = AnimationState::new();
    state.play(clip.info, PlayMode::Once, 1.0);
    state.seek(clip.info.frame_time(frame));
    state.gpu_state()
}

/// The timeline rows the cells `cells` ((clip, frame) pairs) read: what
/// a VAT path loaded with [`crate::playback::Decode::Rows`] must decode
/// ([`crate::playback::VatPlayback::window`]) before it is drawn.
pub fn rows_drawn(loaded: &Loaded, cells: &[(usize, u32)]) -> Vec<u32> {
    let last_row = loaded.vat.as_ref().map_or(u32::MAX, |v| {
        let frames = v.primitives.iter().map(|p| p.address.frames).max();
        frames.unwrap_or(0).saturating_sub(1)
    });
    let mut rows: Vec<u32> = cells
        .iter()
        .filter_map(|&(c, f)| loaded.clips.get(c).map(|clip| state_at(clip, f)))
        .flat_map(|gpu| gpu.rows_read(last_row).collect::<Vec<u32>>())
        .collect();
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// Applies a placement to model-space vertices.
fn placed(
    m: &DMat4,
    positions: Vec<Vec3>,
    normals: Option<Vec<Vec3>>,
) -> (Vec<Vec3>, Option<Vec<Vec3>>) {
    let nm = DMat3::from_mat4(*m).inverse().transpose();
    (
        positions
            .into_iter()
            .map(|p| m.transform_point3(p.as_dvec3()).as_vec3())
            .collect(),
        normals.map(|n| {
            n.into_iter()
                .map(|v| (nm * v.as_dvec3()).normalize_or_zero().as_vec3())
                .collect()
        }),
    )
}

/// Every primitive of `path` at frame `frame` of clip `clip`.
pub fn pose(
    loaded: &Loaded,
    topology: &Topology,
    path: PathChoice,
    producer: Producer,
    clip: usize,
    frame: u32,
) -> Vec<PosedMesh> {
    let model = &loaded.source.model;
    let clip = &loaded.clips[clip];
    let gpu = state_at(clip, frame);
    let (mut pose, mut scratch) = (LocalPose::rest(model), LocalPose::rest(model));
    source_pose_at(
        model,
        &clip.source,
        clip.info.duration,
        clip.info.frame_time(frame),
        &mut pose,
        &mut scratch,
    );
    place_parts(
        loaded,
        topology,
        |node, primitive, space, entry, src| match producer {
            Producer::Direct => {
                let convention = match (path, &loaded.vat) {
                    (PathChoice::Vat, Some(v)) => v.convention,
                    _ => NormalConvention::InverseTranspose,
                };
                let d = deform(model, &pose, node, primitive, space, convention);
                (
                    d.iter().map(|v| v.position.as_vec3()).collect(),
                    src.normals
                        .is_some()
                        .then(|| d.iter().map(|v| v.normal.as_vec3()).collect()),
                )
            }
            Producer::Bake => bake_vertices(loaded, path, entry, &gpu, src),
        },
    )
}

/// Each part of `topology` with the vertices `vertices(node, primitive,
/// space, entry, source primitive)` gives it, placed in scene space.
fn place_parts(
    loaded: &Loaded,
    topology: &Topology,
    mut vertices: impl FnMut(
        usize,
        usize,
        Option<usize>,
        usize,
        &rigbake_core::model::Primitive,
    ) -> (Vec<Vec3>, Option<Vec<Vec3>>),
) -> Vec<PosedMesh> {
    let model = &loaded.source.model;
    topology
        .parts
        .iter()
        .enumerate()
        .map(|(i, &(node, primitive, space, placement, entry))| {
            let mesh = model.nodes[node].mesh.unwrap_or_default();
            let src = &model.meshes[mesh].primitives[primitive];
            let (positions, normals) = vertices(node, primitive, space, entry, src);
            let (positions, normals) = placed(&placement, positions, normals);
            PosedMesh {
                positions,
                normals,
                topology: i,
                mirrored: placement.determinant() < 0.0,
            }
        })
        .collect()
}

/// Every primitive of `path` posed by the bake in `state`, a state the
/// runtime made (a crossfade, a seek: [`rigbake_core::runtime::AnimationState`]),
/// as [`pose`] with [`Producer::Bake`] poses a frame.
pub fn pose_state(
    loaded: &Loaded,
    topology: &Topology,
    path: PathChoice,
    state: &GpuState,
) -> Vec<PosedMesh> {
    place_parts(loaded, topology, |_, _, _, entry, src| {
        bake_vertices(loaded, path, entry, state, src)
    })
}

/// Vertices of primitive `i` of `path` through the runtime reference.
fn bake_vertices(
    loaded: &Loaded,
    path: PathChoice,
    i: usize,
    gpu: &GpuState,
    src: &rigbake_core::model::Primitive,
) -> (Vec<Vec3>, Option<Vec<Vec3>>) {
    let vertices: Vec<rigbake_core::runtime::RuntimeVertex> =
        match (path, &loaded.bones, &loaded.vat) {
            (PathChoice::Bones, Some(b), _) => {
                let p = &b.primitives[i];
                let t = &b.textures[p.set];
                let view = t.view();
                let k = b.channels;
                (0..src.vertex_count())
                    .map(|v| {
                        let channels = p.channels.get(v * k..(v + 1) * k).unwrap_or(&[]);
                        let (position, normal) = p.vertex(src, v);
                        bone_path::deform_vertex(&view, gpu, channels, position, normal)
                    })
                    .collect()
            }
            (PathChoice::Vat, _, Some(vat)) => {
                let p = &vat.primitives[i];
                let positions = p.positions.views();
                let normals = p.normals.as_ref().map(|n| n.views());
                (0..src.vertex_count())
                    .map(|v| {
                        vat_path::deform_vertex(
                            &p.address,
                            &positions,
                            normals.as_deref(),
                            gpu,
                            v as u32,
                            src.positions[v],
                            None,
                        )
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
    let normals = vertices.first().and_then(|v| v.normal).map(|_| {
        vertices
            .iter()
            .map(|v| v.normal.unwrap_or_default())
            .collect()
    });
    (vertices.iter().map(|v| v.position).collect(), normals)
}
