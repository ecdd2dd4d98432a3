//! Meshes and primitives: vertex streams, influences, morph targets.

use glam::{Vec2, Vec3, Vec4};
use gltf::accessor::{DataType, Dimensions};
use gltf::mesh::Semantic;

use std::collections::BTreeMap;

use super::accessor::{AccessorReader, Allowed};
use super::compression::{DRACO, DracoRef};
use super::draco::{self, DracoMesh};
use crate::error::{Error, Result};
use crate::model::{Influences, Mesh, MorphTarget, Primitive, PrimitiveMode};

use DataType::{F32, I8, I16, U8, U16, U32};

/// Most `JOINTS_n`/`WEIGHTS_n` sets a primitive may have (64 influences).
pub const MAX_INFLUENCE_SETS: usize = 16;

/// Most TEXCOORD sets a primitive may have: every mesh rigbake writes keeps
/// them and adds its own (the VAT lookup, up to 8 bone-weight sets), within
/// the 255 set indices a container's UV-set record names.
pub const MAX_TEXCOORD_SETS: usize = 128;

const ALL_SMALL: &[DataType] = &[F32, I8, U8, I16, U16];
const FLOAT_ONLY: &[DataType] = &[F32];
const FLOAT_OR_SIGNED: &[DataType] = &[F32, I8, I16];
const FLOAT_OR_UNORM: &[DataType] = &[F32, U8, U16];
const VEC2: &[Dimensions] = &[Dimensions::Vec2];
const VEC3: &[Dimensions] = &[Dimensions::Vec3];
const VEC4: &[Dimensions] = &[Dimensions::Vec4];
const SCALAR: &[Dimensions] = &[Dimensions::Scalar];

/// Allowed component types per attribute; `KHR_mesh_quantization` widens them.
fn allowed(semantic: &Semantic, quantized: bool) -> Allowed {
    match semantic {
        Semantic::Positions => Allowed {
            types: if quantized { ALL_SMALL } else { FLOAT_ONLY },
            dims: VEC3,
        },
        Semantic::Normals => Allowed {
            types: if quantized {
                FLOAT_OR_SIGNED
            } else {
                FLOAT_ONLY
            },
            dims: VEC3,
        },
        Semantic::Tangents => Allowed {
            types: if quantized {
                FLOAT_OR_SIGNED
            } else {
                FLOAT_ONLY
            },
            dims: VEC4,
        },
        Semantic::TexCoords(_) => Allowed {
            types: if quantized { ALL_SMALL } else { FLOAT_OR_UNORM },
            dims: VEC2,
        },
        Semantic::Weights(_) => Allowed {
            types: FLOAT_OR_UNORM,
            dims: VEC4,
        },
        Semantic::Joints(_) => Allowed {
            types: &[U8, U16],
            dims: VEC4,
        },
        _ => Allowed {
            types: &[F32, I8, U8, I16, U16, U32],
            dims: &[
                Dimensions::Scalar,
                Dimensions::Vec2,
                Dimensions::Vec3,
                Dimensions::Vec4,
            ],
        },
    }
}

fn target_allowed(quantized: bool, dims: &'static [Dimensions]) -> Allowed {
    Allowed {
        types: if quantized {
            FLOAT_OR_SIGNED
        } else {
            FLOAT_ONLY
        },
        dims,
    }
}

fn vec3s(v: &[f32]) -> Vec<Vec3> {
    v.chunks_exact(3).map(Vec3::from_slice).collect()
}

fn vec4s(v: &[f32]) -> Vec<Vec4> {
    v.chunks_exact(4).map(Vec4::from_slice).collect()
}

/// `d` at unit length, as glTF requires of NORMAL and TANGENT, when it is
/// off by more than a thousandth: rescaled in f64, because the bake
/// normalises in f32, where the square of a tiny direction (1e-33)
/// underflows to zero and that of a huge one overflows, so such a normal
/// came out zero while the f64 reference evaluation found a unit normal
/// (found by fuzzing). Directions within a thousandth of unit length are
/// kept bit for bit; zero and non-finite ones are left as they are.
fn unit_direction(d: Vec3) -> Vec3 {
    let v = d.as_dvec3();
    let len = v.length();
    if len > 0.0 && len.is_finite() && (len - 1.0).abs() > 1e-3 {
        (v / len).as_vec3()
    } else {
        d
    }
}

/// Builds every mesh of the document; `draco` holds the primitives
/// compressed with `KHR_draco_mesh_compression`, by (mesh, primitive).
pub(super) fn build(
    doc: &gltf::Document,
    reader: &AccessorReader<'_>,
    quantized: bool,
    draco: &BTreeMap<(usize, usize), DracoRef>,
) -> Result<Vec<Mesh>> {
    let mut meshes = Vec::new();
    for mesh in doc.meshes() {
        let m = mesh.index();
        let mut primitives = Vec::new();
        for prim in mesh.primitives() {
            let path = format!("meshes[{m}].primitives[{}]", prim.index());
            let compressed = match draco.get(&(m, prim.index())) {
                Some(d) => Some(decode_draco(doc, &prim, d, &path, reader)?),
                None => None,
            };
            primitives.push(build_primitive(
                &prim,
                &path,
                reader,
                quantized,
                compressed.as_ref(),
            )?);
        }
        let targets = primitives.first().map_or(0, |p| p.morph_targets.len());
        if let Some(p) = primitives
            .iter()
            .position(|p| p.morph_targets.len() != targets)
        {
            return Err(Error::invalid(
                format!("meshes[{m}].primitives[{p}].targets"),
                "all primitives of a mesh must have the same number of morph targets",
            ));
        }
        let default_weights = match mesh.weights() {
            Some(w) => {
                if w.len() != targets {
                    return Err(Error::invalid(
                        format!("meshes[{m}].weights"),
                        format!("{} weights for {targets} morph targets", w.len()),
                    ));
                }
                if w.iter().any(|v| !v.is_finite()) {
                    return Err(Error::invalid(
                        format!("meshes[{m}].weights"),
                        "non-finite weight",
                    ));
                }
                w.to_vec()
            }
            None => vec![0.0; targets],
        };
        meshes.push(Mesh {
            name: mesh
                .name()
                .map_or_else(|| format!("mesh{m}"), str::to_owned),
            primitives,
            default_weights,
        });
    }
    Ok(meshes)
}

/// A primitive's decoded Draco stream and its attribute ids.
struct Compressed<'d> {
    mesh: DracoMesh,
    ext: &'d DracoRef,
}

/// Decodes a Draco primitive's stream, bounded by what its accessors
/// declare (and charged for them, as reading them would be).
fn decode_draco<'d>(
    doc: &gltf::Document,
    prim: &gltf::Primitive<'_>,
    ext: &'d DracoRef,
    path: &str,
    reader: &AccessorReader<'_>,
) -> Result<Compressed<'d>> {
    let epath = format!("{path}.extensions.{DRACO}");
    let view = doc.views().nth(ext.buffer_view).ok_or_else(|| {
        Error::invalid(
            format!("{epath}.bufferView"),
            format!(
                "bufferViews[{}] does not exist ({} buffer views)",
                ext.buffer_view,
                doc.views().len()
            ),
        )
    })?;
    let stream = reader.view_bytes(&view)?;
    let points = prim
        .get(&Semantic::Positions)
        .map_or(0, |a| a.count() as u64);
    let faces = match prim.indices() {
        Some(i) => i.count().div_ceil(3) as u64,
        None => 0,
    };
    for name in ext.attributes.keys() {
        if !prim.attributes().any(|(s, _)| s.to_string() == *name) {
            return Err(Error::invalid(
                format!("{epath}.attributes.{name}"),
                format!("the primitive has no {name} accessor to decode it into"),
            ));
        }
    }
    let mesh = draco::decode(stream, points, faces, reader.bytes_left(), &epath)?;
    Ok(Compressed { mesh, ext })
}

impl Compressed<'_> {
    /// The decoded values of attribute `name` for accessor `acc`, checked
    /// and charged; `None` when the stream does not hold that attribute.
    fn floats(
        &self,
        name: &str,
        acc: &gltf::Accessor<'_>,
        apath: &str,
        reader: &AccessorReader<'_>,
    ) -> Result<Option<(Vec<f32>, bool)>> {
        let Some(&id) = self.ext.attributes.get(name) else {
            return Ok(None);
        };
        reader.charge_accessor(acc, apath)?;
        let components = acc.dimensions().multiplicity();
        if self.mesh.points() != acc.count() {
            return Err(Error::invalid(
                apath,
                format!(
                    "the Draco stream decodes {} points, but the accessor declares {}",
                    self.mesh.points(),
                    acc.count()
                ),
            ));
        }
        let decoded = self.mesh.attribute(id, components).ok_or_else(|| {
            Error::invalid(
                apath,
                format!(
                    "the Draco stream has no attribute {id} of {components} components for {name}"
                ),
            )
        })?;
        Ok(Some((decoded.values, decoded.integer)))
    }
}

/// The primitive's indices (from its Draco stream when it has one), each
/// checked below the vertex count `count`; `None` when not indexed.
fn read_indices(
    prim: &gltf::Primitive<'_>,
    path: &str,
    reader: &AccessorReader<'_>,
    draco: Option<&Compressed<'_>>,
    count: usize,
) -> Result<Option<Vec<u32>>> {
    Ok(match prim.indices() {
        None => None,
        Some(acc) => {
            let ipath = format!("{path}.indices");
            let rule = Allowed {
                types: &[U8, U16, U32],
                dims: SCALAR,
            };
            let idx = match draco {
                Some(c) => {
                    reader.charge_accessor(&acc, &ipath)?;
                    if c.mesh.faces() * 3 != acc.count() {
                        return Err(Error::invalid(
                            &ipath,
                            format!(
                                "the Draco stream decodes {} triangles, but the accessor declares {} indices",
                                c.mesh.faces(),
                                acc.count()
                            ),
                        ));
                    }
                    c.mesh.indices()
                }
                None => reader.uints(&acc, &ipath, rule)?,
            };
            if let Some(k) = idx.iter().position(|&i| i as usize >= count) {
                return Err(Error::invalid(
                    &ipath,
                    format!(
                        "index {} at position {k} is out of range ({count} vertices)",
                        idx[k]
                    ),
                ));
            }
            Some(idx)
        }
    })
}

/// The primitive's morph targets, each attribute of `count` elements.
fn read_morph_targets(
    prim: &gltf::Primitive<'_>,
    path: &str,
    reader: &AccessorReader<'_>,
    quantized: bool,
    count: usize,
) -> Result<Vec<MorphTarget>> {
    let mut morph_targets = Vec::new();
    for (t, target) in prim.morph_targets().enumerate() {
        let tpath = format!("{path}.targets[{t}]");
        let read =
            |acc: Option<gltf::Accessor<'_>>, what: &str, dims| -> Result<Option<Vec<f32>>> {
                let Some(acc) = acc else { return Ok(None) };
                let apath = format!("{tpath}.{what}");
                let v = reader.floats(&acc, &apath, target_allowed(quantized, dims))?;
                let n = v.len() / dims[0].multiplicity();
                if n != count {
                    return Err(Error::invalid(
                        apath,
                        format!("{n} elements, but POSITION has {count}"),
                    ));
                }
                Ok(Some(v))
            };
        morph_targets.push(MorphTarget {
            positions: read(target.positions(), "POSITION", VEC3)?.map(|v| vec3s(&v)),
            normals: read(target.normals(), "NORMAL", VEC3)?.map(|v| vec3s(&v)),
            tangents: read(target.tangents(), "TANGENT", VEC3)?.map(|v| vec3s(&v)),
        });
    }
    Ok(morph_targets)
}

fn build_primitive(
    prim: &gltf::Primitive<'_>,
    path: &str,
    reader: &AccessorReader<'_>,
    quantized: bool,
    draco: Option<&Compressed<'_>>,
) -> Result<Primitive> {
    let mode = match prim.mode() {
        gltf::mesh::Mode::Points => PrimitiveMode::Points,
        gltf::mesh::Mode::Lines => PrimitiveMode::Lines,
        gltf::mesh::Mode::LineLoop => PrimitiveMode::LineLoop,
        gltf::mesh::Mode::LineStrip => PrimitiveMode::LineStrip,
        gltf::mesh::Mode::Triangles => PrimitiveMode::Triangles,
        gltf::mesh::Mode::TriangleStrip => PrimitiveMode::TriangleStrip,
        gltf::mesh::Mode::TriangleFan => PrimitiveMode::TriangleFan,
    };
    let mut positions = None;
    let mut normals = None;
    let mut tangents = None;
    let mut tex_sets: Vec<(u32, Vec<Vec2>)> = Vec::new();
    let mut joint_sets: Vec<(u32, Vec<u32>)> = Vec::new();
    let mut weight_sets: Vec<(u32, Vec<f32>)> = Vec::new();
    // Counted before any is decoded.
    let uv_count = prim
        .attributes()
        .filter(|(s, _)| matches!(s, Semantic::TexCoords(_)))
        .count();
    if uv_count > MAX_TEXCOORD_SETS {
        return Err(Error::limit(
            format!("{path}.attributes"),
            format!(
                "{uv_count} TEXCOORD sets, more than the limit of {MAX_TEXCOORD_SETS}: the meshes rigbake writes keep the source's sets and add their own after them (the VAT lookup, up to 8 bone-weight sets), and a bake names at most 255"
            ),
        ));
    }
    for (semantic, acc) in prim.attributes() {
        let name = semantic.to_string();
        let apath = format!("{path}.attributes.{name}");
        let rule = allowed(&semantic, quantized);
        if let Some(c) = draco
            && let Some((values, integer)) = c.floats(&name, &acc, &apath, reader)?
        {
            match semantic {
                Semantic::Joints(set) => {
                    joint_sets.push((set, reader.uints_decoded(&acc, &apath, rule, &values)?));
                }
                _ => {
                    let v = reader.floats_decoded(&acc, &apath, rule, values, integer)?;
                    match semantic {
                        Semantic::Positions => positions = Some(vec3s(&v)),
                        Semantic::Normals => normals = Some(vec3s(&v)),
                        Semantic::Tangents => tangents = Some(vec4s(&v)),
                        Semantic::TexCoords(set) => {
                            tex_sets.push((set, v.chunks_exact(2).map(Vec2::from_slice).collect()));
                        }
                        Semantic::Weights(set) => weight_sets.push((set, v)),
                        _ => {}
                    }
                }
            }
            continue;
        }
        if draco.is_some() && acc.view().is_none() && acc.sparse().is_none() {
            // Exempt from the schema's bufferView rule only because it is a
            // Draco primitive's: the stream must fill it.
            return Err(Error::invalid(
                &apath,
                format!(
                    "the accessor has no bufferView and the Draco extension does not name {name}"
                ),
            ));
        }
        match semantic {
            Semantic::Positions => positions = Some(vec3s(&reader.floats(&acc, &apath, rule)?)),
            Semantic::Normals => normals = Some(vec3s(&reader.floats(&acc, &apath, rule)?)),
            Semantic::Tangents => tangents = Some(vec4s(&reader.floats(&acc, &apath, rule)?)),
            Semantic::TexCoords(set) => {
                let v = reader.floats(&acc, &apath, rule)?;
                tex_sets.push((set, v.chunks_exact(2).map(Vec2::from_slice).collect()));
            }
            Semantic::Joints(set) => joint_sets.push((set, reader.uints(&acc, &apath, rule)?)),
            Semantic::Weights(set) => weight_sets.push((set, reader.floats(&acc, &apath, rule)?)),
            // Colours and application-specific attributes are not baked.
            _ => {}
        }
    }
    let positions: Vec<Vec3> =
        positions.ok_or_else(|| Error::invalid(path, "primitive has no POSITION attribute"))?;
    let count = positions.len();
    let check_len = |what: &str, len: usize| -> Result<()> {
        if len == count {
            Ok(())
        } else {
            Err(Error::invalid(
                format!("{path}.attributes.{what}"),
                format!("{len} elements, but POSITION has {count}"),
            ))
        }
    };
    if let Some(n) = &mut normals {
        check_len("NORMAL", n.len())?;
        n.iter_mut().for_each(|n| *n = unit_direction(*n));
    }
    if let Some(t) = &mut tangents {
        check_len("TANGENT", t.len())?;
        t.iter_mut()
            .for_each(|t| *t = unit_direction(t.truncate()).extend(t.w));
    }
    tex_sets.sort_by_key(|(s, _)| *s);
    for (k, (set, v)) in tex_sets.iter().enumerate() {
        check_len(&format!("TEXCOORD_{set}"), v.len())?;
        if *set as usize != k {
            return Err(Error::invalid(
                format!("{path}.attributes"),
                format!("TEXCOORD sets are not contiguous: TEXCOORD_{k} is missing"),
            ));
        }
    }
    let influences = build_influences(path, count, joint_sets, weight_sets, reader)?;

    let indices = read_indices(prim, path, reader, draco, count)?;
    let morph_targets = read_morph_targets(prim, path, reader, quantized, count)?;

    Ok(Primitive {
        mode,
        positions,
        normals,
        tangents,
        tex_coords: tex_sets.into_iter().map(|(_, v)| v).collect(),
        indices,
        material: prim.material().index(),
        influences,
        morph_targets,
    })
}

/// Interleaves every JOINTS_n/WEIGHTS_n set into one influence table, checks
/// pairing, counts and weights, and clears the joint of zero-weight slots so
/// that every stored joint index is meaningful.
fn build_influences(
    path: &str,
    count: usize,
    mut joint_sets: Vec<(u32, Vec<u32>)>,
    mut weight_sets: Vec<(u32, Vec<f32>)>,
    reader: &AccessorReader<'_>,
) -> Result<Option<Influences>> {
    if joint_sets.is_empty() && weight_sets.is_empty() {
        return Ok(None);
    }
    joint_sets.sort_by_key(|(s, _)| *s);
    weight_sets.sort_by_key(|(s, _)| *s);
    let sets = joint_sets.len().max(weight_sets.len());
    if sets > MAX_INFLUENCE_SETS {
        return Err(Error::limit(
            format!("{path}.attributes"),
            format!("{sets} JOINTS_n/WEIGHTS_n sets, more than the limit of {MAX_INFLUENCE_SETS}"),
        ));
    }
    for k in 0..sets {
        let j = joint_sets.get(k).map(|(s, _)| *s as usize);
        let w = weight_sets.get(k).map(|(s, _)| *s as usize);
        if j != Some(k) || w != Some(k) {
            return Err(Error::invalid(
                format!("{path}.attributes"),
                format!(
                    "JOINTS_{k} and WEIGHTS_{k} must both be present (sets must pair up and be contiguous)"
                ),
            ));
        }
    }
    // Lengths first, so the tables below are only as large as data already
    // decoded (and counted against the limits).
    for (k, ((_, js), (_, ws))) in joint_sets.iter().zip(&weight_sets).enumerate() {
        if js.len() != count * 4 {
            return Err(Error::invalid(
                format!("{path}.attributes.JOINTS_{k}"),
                format!("{} elements, but POSITION has {count}", js.len() / 4),
            ));
        }
        if ws.len() != count * 4 {
            return Err(Error::invalid(
                format!("{path}.attributes.WEIGHTS_{k}"),
                format!("{} elements, but POSITION has {count}", ws.len() / 4),
            ));
        }
    }
    let per_vertex = sets * 4;
    // A u16 joint and an f32 weight per slot, on top of the decoded sets.
    let table_bytes = (count as u64)
        .saturating_mul(per_vertex as u64)
        .saturating_mul(6);
    reader.charge_bytes(table_bytes, &format!("{path}.attributes"))?;
    let mut joints = vec![0u16; count * per_vertex];
    let mut weights = vec![0f32; count * per_vertex];
    for (k, ((_, js), (_, ws))) in joint_sets.iter().zip(&weight_sets).enumerate() {
        for v in 0..count {
            for c in 0..4 {
                let w = ws[v * 4 + c];
                if w < 0.0 {
                    return Err(Error::invalid(
                        format!("{path}.attributes.WEIGHTS_{k}"),
                        format!("vertex {v} has a negative weight ({w})"),
                    ));
                }
                let slot = v * per_vertex + k * 4 + c;
                weights[slot] = w;
                // u16 is wide enough: JOINTS_n are UNSIGNED_BYTE or UNSIGNED_SHORT.
                joints[slot] = if w > 0.0 { js[v * 4 + c] as u16 } else { 0 };
            }
        }
    }
    for v in 0..count {
        let sum: f32 = weights[v * per_vertex..(v + 1) * per_vertex].iter().sum();
        if sum <= 0.0 {
            return Err(Error::invalid(
                format!("{path}.attributes.WEIGHTS_0"),
                format!("vertex {v} has no positive weight; it cannot be skinned"),
            )
            .with_hint("weight the vertex to at least one joint in the authoring tool"));
        }
    }
    Ok(Some(Influences {
        per_vertex,
        joints,
        weights,
    }))
}
