//! GLB (binary glTF 2.0) writer for plain mesh data.
//!
//! The caller hands over a [`GlbDocument`] of meshes and placeholder
//! materials; [`write_glb`] checks it and lays it out as one GLB file:
//!
//! - one scene whose root nodes are one node per mesh (node name = mesh
//!   name, identity transform), in the document's order;
//! - one binary buffer (the BIN chunk) and one tightly packed, 4-byte aligned
//!   buffer view per attribute or index list (no `byteStride`, `target` set);
//! - float accessors for every attribute, with exact `min`/`max` on
//!   `POSITION`; indices as `UNSIGNED_SHORT` when the primitive has at most
//!   65535 vertices (so no index can be the restart value 65535), else
//!   `UNSIGNED_INT`;
//! - materials, textures, samplers and images as the caller gives them:
//!   materials and textures are glTF JSON objects whose texture and image
//!   indices refer to the document's lists; every image is embedded as a
//!   buffer view (after the mesh data) with its `mimeType`;
//!   `extensionsUsed` lists every extension that appears in them, and
//!   `extensionsRequired` those of the caller's required list still used.
//!
//! Application-specific attributes (names starting with `_`) are written as
//! float `VEC4` accessors. The output depends only on the input: the same
//! document always gives the same bytes.
//!
//! The writer never renormalises or repairs data: invalid input (see
//! [`write_glb`]) is refused with [`FormatError::Invalid`].

use std::io::Write;

use serde_json::{Map, Value, json};

use crate::error::{FormatError, Result};

/// How far a normal's or a tangent's length may be from 1. The Khronos
/// validator allows 0.00674; we stay inside that.
pub const UNIT_LENGTH_TOLERANCE: f32 = 0.005;

const FLOAT: u32 = 5126;
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const GLB_MAGIC: u32 = 0x4654_6C67; // "glTF"
const CHUNK_JSON: u32 = 0x4E4F_534A; // "JSON"
const CHUNK_BIN: u32 = 0x004E_4942; // "BIN\0"

/// A whole GLB file: meshes (one node each) and the materials they use.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GlbDocument {
    /// Meshes, one scene node each, in this order (at least one).
    pub meshes: Vec<GlbMesh>,
    /// Materials, referenced by index from primitives.
    pub materials: Vec<GlbMaterial>,
    /// glTF texture objects; `sampler` indexes [`Self::samplers`], `source`
    /// (also inside extensions) indexes [`Self::images`].
    pub textures: Vec<Map<String, Value>>,
    /// glTF sampler objects.
    pub samplers: Vec<Map<String, Value>>,
    /// Images, embedded in the binary chunk.
    pub images: Vec<GlbImage>,
    /// Extensions the source required; written to `extensionsRequired` when
    /// the written objects still use them.
    pub extensions_required: Vec<String>,
    /// Written as `asset.generator`.
    pub generator: String,
}

/// A material: a name, optional extras, and any other glTF material
/// properties (`pbrMetallicRoughness`, `normalTexture`, `alphaMode`,
/// `extensions`, ...; empty gives the glTF default material). Texture
/// references (an object under a key ending in `Texture`, with `index`)
/// index [`GlbDocument::textures`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GlbMaterial {
    /// Material name.
    pub name: String,
    /// Extras, e.g. `{"source_material": 3}`; must be a JSON object.
    pub extras: Option<Value>,
    /// The other material properties, as glTF JSON (no `name`, no `extras`).
    pub properties: Map<String, Value>,
}

/// An encoded image (PNG, JPEG, ...), embedded as a buffer view.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GlbImage {
    /// Image name, if any.
    pub name: Option<String>,
    /// MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// The encoded file's bytes (not empty).
    pub bytes: Vec<u8>,
}

/// Whether a column-major matrix is exactly the identity.
fn is_identity(m: &[f64; 16]) -> bool {
    (0..16).all(|i| m[i] == if i % 5 == 0 { 1.0 } else { 0.0 })
}

/// A named mesh: one or more primitives.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GlbMesh {
    /// Mesh name, also used as its node's name.
    pub name: String,
    /// Primitives (at least one).
    pub primitives: Vec<GlbPrimitive>,
    /// Its node's transform, column-major (glTF's `matrix`); `None` (or the
    /// identity, which is left out) for an identity node. Finite, with the
    /// bottom row `0 0 0 1`.
    pub matrix: Option<[f64; 16]>,
}

pub use rigbake_types::PrimitiveMode;

/// One draw call's geometry. Every attribute has one value per position.
///
/// glTF requires unit-length normals and tangents with a unit-length `xyz`
/// and a `w` of exactly 1 or -1; the caller must supply such data (within
/// [`UNIT_LENGTH_TOLERANCE`]), the writer checks but never renormalises.
/// Tangents also need normals (the Khronos validator warns otherwise).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GlbPrimitive {
    /// Topology.
    pub mode: PrimitiveMode,
    /// `POSITION` (at least one vertex).
    pub positions: Vec<[f32; 3]>,
    /// `NORMAL`, unit length.
    pub normals: Option<Vec<[f32; 3]>>,
    /// `TANGENT`: unit `xyz`, `w` = ±1 (bitangent sign); needs normals.
    pub tangents: Option<Vec<[f32; 4]>>,
    /// `TEXCOORD_0`, `TEXCOORD_1`, ... in order.
    pub tex_coords: Vec<Vec<[f32; 2]>>,
    /// Application-specific float `VEC4` attributes: (name starting with `_`,
    /// values); names must be distinct.
    pub custom: Vec<(String, Vec<[f32; 4]>)>,
    /// Vertex indices (each below the vertex count), or none to draw the
    /// vertices in order.
    pub indices: Option<Vec<u32>>,
    /// Index into [`GlbDocument::materials`].
    pub material: Option<usize>,
}

/// Checks `doc` and encodes it as GLB bytes.
///
/// Refused with [`FormatError::Invalid`]: no meshes; a mesh without
/// primitives; a primitive without vertices; an attribute whose length
/// differs from the position count; a NaN or infinite value; a normal or
/// tangent that is not unit length, a tangent `w` other than ±1, tangents
/// without normals; a custom attribute name not starting with `_` (or just
/// `_`), or used twice; an empty index list or an index out of range; an
/// index or vertex count that does not suit the mode; a material index out of
/// range; material extras that are not a JSON object; material properties
/// holding `name` or `extras`; a texture reference, sampler or image index
/// out of range; an image without bytes or MIME type. A file over 4 GiB is
/// [`FormatError::Unrepresentable`].
pub fn write_glb(doc: &GlbDocument) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write_glb_to(doc, &mut out)?;
    Ok(out)
}

/// Like [`write_glb`], writing to `out`. Nothing is written when `doc` is
/// refused.
pub fn write_glb_to<W: Write>(doc: &GlbDocument, mut out: W) -> Result<()> {
    validate(doc)?;
    // First pass: the layout (JSON, BIN length) without any view's bytes.
    let (root, bin_len, _) = build(doc, None);
    let mut json = serde_json::to_vec(&root)
        .map_err(|e| FormatError::Invalid(format!("GLB: cannot encode JSON: {e}")))?;
    json.resize(json.len().next_multiple_of(4), b' ');
    let total = u32::try_from(12 + 8 + json.len() + 8 + bin_len)
        .map_err(|_| FormatError::Unrepresentable("GLB: the file would exceed 4 GiB".into()))?;
    let mut header = Vec::with_capacity(20);
    for word in [GLB_MAGIC, 2, total, json.len() as u32, CHUNK_JSON] {
        header.extend_from_slice(&word.to_le_bytes());
    }
    out.write_all(&header)?;
    out.write_all(&json)?;
    out.write_all(&(bin_len as u32).to_le_bytes())?;
    out.write_all(&CHUNK_BIN.to_le_bytes())?;
    // Second pass: the same traversal streams each view's bytes.
    let (_, written, error) = build(doc, Some(&mut out));
    if let Some(e) = error {
        return Err(e.into());
    }
    debug_assert_eq!(written, bin_len, "both passes lay out the same views");
    Ok(())
}

fn invalid(msg: String) -> FormatError {
    FormatError::Invalid(format!("GLB: {msg}"))
}

fn validate(doc: &GlbDocument) -> Result<()> {
    if doc.meshes.is_empty() {
        return Err(invalid("the document has no meshes".into()));
    }
    for (m, mat) in doc.materials.iter().enumerate() {
        if mat.extras.as_ref().is_some_and(|e| !e.is_object()) {
            return Err(invalid(format!(
                "material {m} ({:?}): extras must be a JSON object",
                mat.name
            )));
        }
        if mat.properties.contains_key("name") || mat.properties.contains_key("extras") {
            return Err(invalid(format!(
                "material {m} ({:?}): properties must not hold name or extras",
                mat.name
            )));
        }
        let mut refs = Vec::new();
        texture_refs(&mat.properties, &mut refs);
        if let Some(bad) = refs.iter().find(|&&t| t >= doc.textures.len()) {
            return Err(invalid(format!(
                "material {m} ({:?}) refers to texture {bad}, out of range ({} textures)",
                mat.name,
                doc.textures.len()
            )));
        }
    }
    for (t, texture) in doc.textures.iter().enumerate() {
        if let Some(s) = texture.get("sampler")
            && s.as_u64().is_none_or(|s| s as usize >= doc.samplers.len())
        {
            return Err(invalid(format!(
                "texture {t}: sampler {s} is out of range ({} samplers)",
                doc.samplers.len()
            )));
        }
        for source in image_sources(texture) {
            if source
                .as_u64()
                .is_none_or(|i| i as usize >= doc.images.len())
            {
                return Err(invalid(format!(
                    "texture {t}: image {source} is out of range ({} images)",
                    doc.images.len()
                )));
            }
        }
    }
    for (i, image) in doc.images.iter().enumerate() {
        if image.bytes.is_empty() || image.mime_type.is_empty() {
            return Err(invalid(format!(
                "image {i} ({:?}) has no bytes or no MIME type",
                image.name
            )));
        }
    }
    for (m, mesh) in doc.meshes.iter().enumerate() {
        if mesh.primitives.is_empty() {
            return Err(invalid(format!(
                "mesh {m} ({:?}) has no primitives",
                mesh.name
            )));
        }
        if let Some(matrix) = &mesh.matrix {
            let affine = [matrix[3], matrix[7], matrix[11], matrix[15]] == [0.0, 0.0, 0.0, 1.0];
            if !affine || matrix.iter().any(|v| !v.is_finite()) {
                return Err(invalid(format!(
                    "mesh {m} ({:?}): its node matrix is not a finite affine matrix",
                    mesh.name
                )));
            }
        }
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let at = format!("mesh {m} ({:?}) primitive {p}", mesh.name);
            validate_primitive(prim, doc.materials.len())
                .map_err(|e| invalid(format!("{at}: {e}")))?;
        }
    }
    Ok(())
}

/// Texture indices of the texture references in a material: every object
/// under a key ending in `Texture` that holds an `index`, at any depth.
fn texture_refs(object: &Map<String, Value>, out: &mut Vec<usize>) {
    for (key, value) in object {
        match value.get("index").filter(|_| key.ends_with("Texture")) {
            Some(index) => out.push(index.as_u64().map_or(usize::MAX, |i| i as usize)),
            None => walk_objects(value, &mut |o| texture_refs(o, out)),
        }
    }
}

/// Calls `f` on every object directly inside `value` (itself or the
/// elements of an array).
fn walk_objects(value: &Value, f: &mut dyn FnMut(&Map<String, Value>)) {
    match value {
        Value::Object(o) => f(o),
        Value::Array(a) => a.iter().for_each(|v| walk_objects(v, f)),
        _ => {}
    }
}

/// A texture's image references: `source` and `source` in its extensions.
fn image_sources(texture: &Map<String, Value>) -> Vec<&Value> {
    let mut out: Vec<&Value> = texture.get("source").into_iter().collect();
    if let Some(exts) = texture.get("extensions").and_then(Value::as_object) {
        out.extend(exts.values().filter_map(|e| e.get("source")));
    }
    out
}

/// Adds the names of every `extensions` object found in `value`, at any
/// depth, to `out`.
fn extension_names(value: &Value, out: &mut std::collections::BTreeSet<String>) {
    match value {
        Value::Object(o) => {
            for (key, v) in o {
                if key == "extensions"
                    && let Some(exts) = v.as_object()
                {
                    out.extend(exts.keys().cloned());
                }
                extension_names(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| extension_names(v, out)),
        _ => {}
    }
}

fn check_values<const N: usize>(
    name: &str,
    values: &[[f32; N]],
    count: usize,
) -> Result<(), String> {
    if values.len() != count {
        return Err(format!(
            "{name} has {} values but there are {count} positions",
            values.len()
        ));
    }
    match values.iter().position(|v| v.iter().any(|x| !x.is_finite())) {
        Some(i) => Err(format!("{name}[{i}] is not finite: {:?}", values[i])),
        None => Ok(()),
    }
}

fn is_unit(v: &[f32]) -> bool {
    let len = v.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    (len - 1.0).abs() <= f64::from(UNIT_LENGTH_TOLERANCE)
}

fn validate_primitive(prim: &GlbPrimitive, materials: usize) -> Result<(), String> {
    let n = prim.positions.len();
    if n == 0 {
        return Err("no vertices".into());
    }
    check_values("POSITION", &prim.positions, n)?;
    if let Some(normals) = &prim.normals {
        check_values("NORMAL", normals, n)?;
        if let Some(i) = normals.iter().position(|v| !is_unit(v)) {
            return Err(format!("NORMAL[{i}] is not unit length: {:?}", normals[i]));
        }
    }
    if let Some(tangents) = &prim.tangents {
        if prim.normals.is_none() {
            return Err("TANGENT without NORMAL".into());
        }
        check_values("TANGENT", tangents, n)?;
        if let Some(i) = tangents.iter().position(|v| !is_unit(&v[..3])) {
            return Err(format!(
                "TANGENT[{i}] xyz is not unit length: {:?}",
                tangents[i]
            ));
        }
        if let Some(i) = tangents.iter().position(|v| v[3].abs() != 1.0) {
            return Err(format!("TANGENT[{i}] w is not 1 or -1: {:?}", tangents[i]));
        }
    }
    for (set, uv) in prim.tex_coords.iter().enumerate() {
        check_values(&format!("TEXCOORD_{set}"), uv, n)?;
    }
    for (k, (name, values)) in prim.custom.iter().enumerate() {
        if !name.starts_with('_') || name.len() < 2 {
            return Err(format!(
                "custom attribute {name:?} must be '_' followed by a name"
            ));
        }
        if prim.custom[..k].iter().any(|(other, _)| other == name) {
            return Err(format!("custom attribute {name:?} appears twice"));
        }
        check_values(name, values, n)?;
    }
    let count = match &prim.indices {
        Some(indices) => {
            if indices.is_empty() {
                return Err("the index list is empty".into());
            }
            if let Some(i) = indices.iter().position(|&x| x as usize >= n) {
                return Err(format!(
                    "index [{i}] = {} is out of range ({n} vertices)",
                    indices[i]
                ));
            }
            indices.len()
        }
        None => n,
    };
    if !prim.mode.whole_primitives(count) {
        return Err(format!(
            "{count} vertices or indices do not suit mode {:?}",
            prim.mode
        ));
    }
    if let Some(m) = prim.material.filter(|&m| m >= materials) {
        return Err(format!(
            "material {m} is out of range ({materials} materials)"
        ));
    }
    Ok(())
}

/// The binary buffer's layout (views and accessors), built up in order.
/// The same traversal runs twice: first without `out`, to lay out the JSON
/// (offsets and lengths only), then with `out`, to stream the bytes of each
/// view straight to the file, so the BIN chunk is never held whole in
/// memory.
#[derive(Default)]
struct Buffers<'w> {
    /// Bytes of the BIN chunk so far (padding included).
    len: usize,
    views: Vec<Value>,
    accessors: Vec<Value>,
    /// Where the second pass writes; `None` in the first.
    out: Option<&'w mut dyn Write>,
    /// The first write error of the second pass.
    error: Option<std::io::Error>,
    /// One view's bytes, reused from view to view.
    scratch: Vec<u8>,
}

impl Buffers<'_> {
    /// Appends `bytes` as a new 4-byte aligned view; returns its index.
    fn view(&mut self, bytes: impl IntoIterator<Item = u8>, target: u32) -> usize {
        let view = self.plain_view(bytes);
        self.views[view]["target"] = target.into();
        view
    }

    /// Appends `bytes` as a new 4-byte aligned view without a target (for
    /// images); returns its index.
    fn plain_view(&mut self, bytes: impl IntoIterator<Item = u8>) -> usize {
        let offset = self.len;
        let length = match self.out.as_mut() {
            Some(out) => {
                self.scratch.clear();
                self.scratch.extend(bytes);
                let length = self.scratch.len();
                self.scratch.resize(length.next_multiple_of(4), 0);
                if self.error.is_none()
                    && let Err(e) = out.write_all(&self.scratch)
                {
                    self.error = Some(e);
                }
                length
            }
            None => bytes.into_iter().count(),
        };
        self.len += length.next_multiple_of(4);
        self.views.push(json!({
            "buffer": 0, "byteOffset": offset, "byteLength": length,
        }));
        self.views.len() - 1
    }

    /// Adds a float `VECn` attribute (with min/max when `bounds`); returns the
    /// accessor index.
    fn floats<const N: usize>(&mut self, values: &[[f32; N]], bounds: bool) -> usize {
        let bytes = values.iter().flatten().flat_map(|x| x.to_le_bytes());
        let view = self.view(bytes, ARRAY_BUFFER);
        let mut accessor = json!({
            "bufferView": view, "componentType": FLOAT, "count": values.len(),
            "type": format!("VEC{N}"),
        });
        if bounds {
            let (mut min, mut max) = ([f32::INFINITY; N], [f32::NEG_INFINITY; N]);
            for v in values {
                for c in 0..N {
                    min[c] = min[c].min(v[c]);
                    max[c] = max[c].max(v[c]);
                }
            }
            // f64 from f32 is exact, so the JSON numbers equal the stored floats.
            accessor["min"] = json!(min.map(f64::from).as_slice());
            accessor["max"] = json!(max.map(f64::from).as_slice());
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    /// Adds an index list for a primitive of `vertices` vertices; returns the
    /// accessor index.
    fn indices(&mut self, indices: &[u32], vertices: usize) -> usize {
        let (view, component) = if vertices <= 65535 {
            let bytes = indices.iter().flat_map(|&i| (i as u16).to_le_bytes());
            (self.view(bytes, ELEMENT_ARRAY_BUFFER), UNSIGNED_SHORT)
        } else {
            let bytes = indices.iter().flat_map(|i| i.to_le_bytes());
            (self.view(bytes, ELEMENT_ARRAY_BUFFER), UNSIGNED_INT)
        };
        self.accessors.push(json!({
            "bufferView": view, "componentType": component, "count": indices.len(),
            "type": "SCALAR",
        }));
        self.accessors.len() - 1
    }
}

/// Lays out a validated document: the glTF JSON and the unpadded BIN data.
fn build(doc: &GlbDocument, out: Option<&mut dyn Write>) -> (Value, usize, Option<std::io::Error>) {
    let mut buf = Buffers {
        out,
        ..Buffers::default()
    };
    let meshes: Vec<Value> = doc
        .meshes
        .iter()
        .map(|mesh| {
            let primitives: Vec<Value> = mesh
                .primitives
                .iter()
                .map(|prim| primitive_json(prim, &mut buf))
                .collect();
            json!({ "name": mesh.name, "primitives": primitives })
        })
        .collect();
    let nodes: Vec<Value> = doc
        .meshes
        .iter()
        .enumerate()
        .map(|(i, mesh)| {
            let mut node = json!({ "name": mesh.name, "mesh": i });
            if let Some(m) = mesh.matrix.filter(|m| !is_identity(m)) {
                node["matrix"] = json!(m);
            }
            node
        })
        .collect();
    let images: Vec<Value> = doc
        .images
        .iter()
        .map(|image| {
            let view = buf.plain_view(image.bytes.iter().copied());
            let mut i = json!({ "bufferView": view, "mimeType": image.mime_type });
            if let Some(name) = &image.name {
                i["name"] = name.clone().into();
            }
            i
        })
        .collect();
    let mut root = json!({
        "asset": { "version": "2.0", "generator": doc.generator },
        "scene": 0,
        "scenes": [{ "nodes": (0..nodes.len()).collect::<Vec<_>>() }],
        "nodes": nodes,
        "meshes": meshes,
        "accessors": buf.accessors,
        "bufferViews": buf.views,
        "buffers": [{ "byteLength": buf.len }],
    });
    if !doc.materials.is_empty() {
        let materials: Vec<Value> = doc
            .materials
            .iter()
            .map(|mat| {
                let mut m = Value::Object(mat.properties.clone());
                m["name"] = mat.name.clone().into();
                if let Some(extras) = &mat.extras {
                    m["extras"] = extras.clone();
                }
                m
            })
            .collect();
        root["materials"] = Value::Array(materials);
    }
    let objects = |list: &[Map<String, Value>]| {
        Value::Array(list.iter().cloned().map(Value::Object).collect())
    };
    if !doc.textures.is_empty() {
        root["textures"] = objects(&doc.textures);
    }
    if !doc.samplers.is_empty() {
        root["samplers"] = objects(&doc.samplers);
    }
    if !images.is_empty() {
        root["images"] = Value::Array(images);
    }
    let mut used = std::collections::BTreeSet::new();
    for key in ["materials", "textures", "samplers", "images"] {
        if let Some(v) = root.get(key) {
            extension_names(v, &mut used);
        }
    }
    if !used.is_empty() {
        let required: std::collections::BTreeSet<&String> = doc
            .extensions_required
            .iter()
            .filter(|e| used.contains(*e))
            .collect();
        if !required.is_empty() {
            root["extensionsRequired"] = json!(required);
        }
        root["extensionsUsed"] = json!(used);
    }
    (root, buf.len, buf.error)
}

fn primitive_json(prim: &GlbPrimitive, buf: &mut Buffers<'_>) -> Value {
    let mut attributes = Map::new();
    attributes.insert("POSITION".into(), buf.floats(&prim.positions, true).into());
    if let Some(normals) = &prim.normals {
        attributes.insert("NORMAL".into(), buf.floats(normals, false).into());
    }
    if let Some(tangents) = &prim.tangents {
        attributes.insert("TANGENT".into(), buf.floats(tangents, false).into());
    }
    for (set, uv) in prim.tex_coords.iter().enumerate() {
        attributes.insert(format!("TEXCOORD_{set}"), buf.floats(uv, false).into());
    }
    for (name, values) in &prim.custom {
        attributes.insert(name.clone(), buf.floats(values, false).into());
    }
    let mut p = json!({ "attributes": attributes, "mode": prim.mode.gltf_mode() });
    if let Some(indices) = &prim.indices {
        p["indices"] = buf.indices(indices, prim.positions.len()).into();
    }
    if let Some(material) = prim.material {
        p["material"] = material.into();
    }
    p
}
