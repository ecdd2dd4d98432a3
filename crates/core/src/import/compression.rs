//! The JSON of the mesh compression extensions rigbake decodes:
//! `KHR_draco_mesh_compression` on primitives, and `EXT_meshopt_compression`
//! / `KHR_meshopt_compression` on buffer views and buffers. The gltf crate
//! (built without its `extensions` feature) drops these objects, so they are
//! read here from the JSON text, with serde, into plain records. Nothing is
//! decoded here; [`super::draco`] and [`super::meshopt`] do that.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::{Error, ErrorKind, Result};

/// Draco extension name.
pub(crate) const DRACO: &str = "KHR_draco_mesh_compression";
/// The two meshopt extension names (same schema; KHR adds the COLOR filter
/// and newer codec versions, which the decoder reads under either name).
pub(crate) const MESHOPT: [&str; 2] = ["EXT_meshopt_compression", "KHR_meshopt_compression"];

/// A primitive's `KHR_draco_mesh_compression` object.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct DracoRef {
    /// The buffer view holding the Draco stream.
    #[serde(rename = "bufferView")]
    pub buffer_view: usize,
    /// glTF attribute name (`POSITION`) -> Draco attribute unique id.
    pub attributes: BTreeMap<String, u32>,
}

/// A buffer view's meshopt object: where the compressed bytes are and what
/// they decode to (`count * byte_stride` bytes).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct MeshoptView {
    /// Buffer holding the compressed bytes.
    pub buffer: usize,
    /// Offset of the compressed bytes in that buffer.
    #[serde(default, rename = "byteOffset")]
    pub byte_offset: usize,
    /// Length of the compressed bytes.
    #[serde(rename = "byteLength")]
    pub byte_length: usize,
    /// Size of one decoded element.
    #[serde(rename = "byteStride")]
    pub byte_stride: usize,
    /// Number of decoded elements.
    pub count: usize,
    /// `ATTRIBUTES`, `TRIANGLES` or `INDICES`.
    pub mode: String,
    /// `NONE`, `OCTAHEDRAL`, `QUATERNION`, `EXPONENTIAL` (or `COLOR`).
    #[serde(default)]
    pub filter: Option<String>,
}

/// Every compression extension object of a file.
#[derive(Debug, Default)]
pub(crate) struct Compression {
    /// Draco streams by (mesh, primitive).
    pub draco: BTreeMap<(usize, usize), DracoRef>,
    /// Meshopt-compressed buffer views: (view index, extension name, object).
    pub meshopt: Vec<(usize, &'static str, MeshoptView)>,
    /// Buffers marked as meshopt fallbacks (`fallback: true`): their bytes
    /// are never needed, as every view into them is decoded.
    pub fallback_buffers: Vec<usize>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Raw {
    meshes: Vec<RawMesh>,
    #[serde(rename = "bufferViews")]
    buffer_views: Vec<RawView>,
    buffers: Vec<RawBuffer>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawMesh {
    primitives: Vec<RawPrimitive>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawPrimitive {
    extensions: RawPrimitiveExt,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawPrimitiveExt {
    #[serde(rename = "KHR_draco_mesh_compression")]
    draco: Option<DracoRef>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawView {
    extensions: RawViewExt,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawViewExt {
    #[serde(rename = "EXT_meshopt_compression")]
    ext: Option<MeshoptView>,
    #[serde(rename = "KHR_meshopt_compression")]
    khr: Option<MeshoptView>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawBuffer {
    extensions: RawBufferExt,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawBufferExt {
    #[serde(rename = "EXT_meshopt_compression")]
    ext: Option<Fallback>,
    #[serde(rename = "KHR_meshopt_compression")]
    khr: Option<Fallback>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Fallback {
    fallback: bool,
}

/// Reads the compression extension objects out of the glTF JSON text
/// (already parsed once, so only their own shape can be wrong: such an
/// error is `Invalid` and names the object, e.g.
/// `bufferViews[3].extensions.EXT_meshopt_compression.count`).
pub(crate) fn read(json: &[u8]) -> Result<Compression> {
    // Cheap filter: most files use neither extension.
    let text = String::from_utf8_lossy(json);
    if !text.contains(DRACO) && !MESHOPT.iter().any(|m| text.contains(m)) {
        return Ok(Compression::default());
    }
    let mut de = serde_json::Deserializer::from_slice(json);
    let raw: Raw = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        Error::new(
            ErrorKind::Invalid,
            path,
            format!(
                "the compression extension object does not match its schema: {}",
                e.inner()
            ),
        )
    })?;
    let mut out = Compression::default();
    for (m, mesh) in raw.meshes.into_iter().enumerate() {
        for (p, prim) in mesh.primitives.into_iter().enumerate() {
            if let Some(d) = prim.extensions.draco {
                out.draco.insert((m, p), d);
            }
        }
    }
    for (v, view) in raw.buffer_views.into_iter().enumerate() {
        // KHR wins when a view carries both (the newer name).
        if let Some(k) = view.extensions.khr {
            out.meshopt.push((v, MESHOPT[1], k));
        } else if let Some(e) = view.extensions.ext {
            out.meshopt.push((v, MESHOPT[0], e));
        }
    }
    for (b, buffer) in raw.buffers.into_iter().enumerate() {
        let ext = buffer.extensions;
        if ext.ext.or(ext.khr).is_some_and(|f| f.fallback) {
            out.fallback_buffers.push(b);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_objects_are_read_and_bad_ones_named() {
        let json = br#"{"meshes":[{"primitives":[{"attributes":{},"extensions":{"KHR_draco_mesh_compression":{"bufferView":2,"attributes":{"POSITION":0}}}}]}],
            "bufferViews":[{"buffer":1,"byteLength":8,"extensions":{"EXT_meshopt_compression":{"buffer":0,"byteLength":5,"byteStride":4,"count":2,"mode":"ATTRIBUTES"}}}],
            "buffers":[{"byteLength":5},{"byteLength":8,"extensions":{"EXT_meshopt_compression":{"fallback":true}}}]}"#;
        let c = read(json).unwrap();
        assert_eq!(c.draco[&(0, 0)].buffer_view, 2);
        assert_eq!(c.draco[&(0, 0)].attributes["POSITION"], 0);
        assert_eq!(c.meshopt.len(), 1);
        assert_eq!(c.meshopt[0].2.count, 2);
        assert_eq!(c.fallback_buffers, vec![1]);

        let bad = br#"{"bufferViews":[{"extensions":{"EXT_meshopt_compression":{"buffer":0,"byteLength":5,"byteStride":4,"count":-2,"mode":"ATTRIBUTES"}}}]}"#;
        let e = read(bad).unwrap_err();
        assert_eq!(
            e.object, "bufferViews[0].extensions.EXT_meshopt_compression.count",
            "{e}"
        );
    }
}
