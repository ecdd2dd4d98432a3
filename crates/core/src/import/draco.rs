//! Decoding `KHR_draco_mesh_compression` primitives with the pure-Rust
//! `draco-core` decoder. The stream's size is bounded before decoding by the
//! primitive's own accessors: at most as many points as its `POSITION`
//! accessor declares, as many faces as its indices declare, and no more
//! attribute bytes than the import's memory budget has left; each decoded
//! attribute must then hold exactly its accessor's `count` elements.

use draco_core::{DecodeLimits, DecoderBuffer, Mesh, MeshDecoder};

use crate::error::{Error, Result};

/// One decoded Draco stream.
pub(crate) struct DracoMesh {
    mesh: Mesh,
}

/// What an attribute decodes to.
pub(crate) struct DracoValues {
    /// Flat values, `components` per point.
    pub values: Vec<f32>,
    /// Whether Draco stored integers (to normalise when the accessor says so).
    pub integer: bool,
}

/// Decodes `stream` (the bytes of the extension's buffer view), refusing
/// more than `max_points` points, `max_faces` faces or `max_bytes` bytes of
/// decoded attributes. `path` names the extension object.
pub(crate) fn decode(
    stream: &[u8],
    max_points: u64,
    max_faces: u64,
    max_bytes: u64,
    path: &str,
) -> Result<DracoMesh> {
    let limits = DecodeLimits::default()
        .with_max_points(max_points)
        .with_max_faces(max_faces)
        .with_max_decoded_bytes(max_bytes);
    let mut buffer = DecoderBuffer::new(stream).with_limits(limits);
    let mut mesh = Mesh::new();
    MeshDecoder::new()
        .decode(&mut buffer, &mut mesh)
        .map_err(|e| {
            if matches!(e.kind(), draco_core::ErrorKind::LimitExceeded) {
                Error::limit(
                    path,
                    format!(
                        "the Draco stream decodes to more than its accessors declare or the import memory budget allows ({})",
                        e.message()
                    ),
                )
            } else {
                Error::invalid(
                    path,
                    format!("the Draco stream cannot be decoded ({e}); the buffer is damaged"),
                )
                .with_hint("export or compress the model again")
            }
        })?;
    Ok(DracoMesh { mesh })
}

impl DracoMesh {
    /// Number of decoded points (vertices).
    pub fn points(&self) -> usize {
        self.mesh.num_points()
    }

    /// The attribute with Draco unique id `id`, as `components` floats per
    /// point; `None` when the stream has no such attribute or it has a
    /// different number of components.
    pub fn attribute(&self, id: u32, components: usize) -> Option<DracoValues> {
        let att = self.mesh.attribute_by_unique_id(id)?;
        if usize::from(att.num_components()) != components {
            return None;
        }
        let integer = !matches!(
            att.data_type(),
            draco_core::DataType::Float32 | draco_core::DataType::Float64
        );
        Some(DracoValues {
            values: att.read_f32s(self.points(), components),
            integer,
        })
    }

    /// The faces as a flat triangle list.
    pub fn indices(&self) -> Vec<u32> {
        self.mesh
            .faces()
            .iter()
            .flat_map(|f| f.iter().map(|p| p.0))
            .collect()
    }

    /// Number of faces.
    pub fn faces(&self) -> usize {
        self.mesh.num_faces()
    }
}
