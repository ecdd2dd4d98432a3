//! The source's look: materials, textures, samplers and images, kept as glTF
//! JSON objects and image bytes for the meshes rigbake writes (see
//! [`crate::model::Looks`]).
//!
//! Images are loaded whatever their source: a buffer view (checked against
//! its buffer), a base64 data URI (size bounded before decoding) or a file
//! beside the model (read with the same policy as external buffers: no
//! network, nothing outside the model's folder, regular files only, size
//! limited). Their total size is bounded by `max_file_bytes`.
//!
//! An image that cannot be read (missing file, damaged data URI, a format
//! that is none of PNG, JPEG, WebP or KTX2) does not fail the import: it is
//! dropped with a warning, together with the textures that use it, and
//! every material keeps its other properties (a texture reference to a
//! dropped texture is removed, so the factor alone applies).

use std::borrow::Cow;
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::buffers;
use super::options::{ImportOptions, Source};
use crate::error::{Error, Result};
use crate::model::{LookImage, Looks};

type Object = Map<String, Value>;

/// The objects of the top-level array `key` (empty when absent).
fn objects(root: &Value, key: &str) -> Result<Vec<Object>> {
    let Some(list) = root.get(key) else {
        return Ok(Vec::new());
    };
    let list = list
        .as_array()
        .ok_or_else(|| Error::invalid(key, "must be an array"))?;
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_object()
                .cloned()
                .ok_or_else(|| Error::invalid(format!("{key}[{i}]"), "must be a JSON object"))
        })
        .collect()
}

/// Loads the look of the document whose JSON text is `json`.
pub(super) fn load(
    json: &[u8],
    doc: &gltf::Document,
    buffers: &[Cow<'_, [u8]>],
    source: &Source<'_>,
    options: &ImportOptions,
) -> Result<Looks> {
    let root: Value = serde_json::from_slice(json)
        .map_err(|e| Error::invalid("", format!("the glTF JSON cannot be read again: {e}")))?;
    let mut materials = objects(&root, "materials")?;
    let mut textures = objects(&root, "textures")?;
    let samplers = objects(&root, "samplers")?;
    let images = objects(&root, "images")?;
    let mut warnings = Vec::new();
    let mut loaded: Vec<Option<LookImage>> = Vec::with_capacity(images.len());
    let mut total = 0u64;
    for (i, image) in images.iter().enumerate() {
        let path = format!("images[{i}]");
        match load_image(image, &path, doc, buffers, source, options) {
            Ok(img) => {
                total += img.bytes.len() as u64;
                if total > options.limits.max_file_bytes {
                    return Err(Error::limit(
                        &path,
                        format!(
                            "the model's images add up to more than the limit of {} bytes",
                            options.limits.max_file_bytes
                        ),
                    ));
                }
                loaded.push(Some(img));
            }
            Err(reason) => {
                warnings.push(format!("{path}: {reason}; the image is left out"));
                loaded.push(None);
            }
        }
    }
    // Drop textures that use a dropped image, then renumber.
    let image_map = renumber(loaded.iter().map(Option::is_some));
    let keep_texture: Vec<bool> = textures
        .iter()
        .map(|t| {
            image_refs(t)
                .iter()
                .all(|&i| image_map.get(i).copied().flatten().is_some())
        })
        .collect();
    for (t, keep) in keep_texture.iter().enumerate() {
        if !keep {
            warnings.push(format!(
                "textures[{t}] uses an image that was left out; it is left out too and the materials that used it keep their other properties"
            ));
        }
    }
    let texture_map = renumber(keep_texture.iter().copied());
    textures = textures
        .into_iter()
        .zip(&keep_texture)
        .filter(|(_, keep)| **keep)
        .map(|(mut t, _)| {
            remap_image_refs(&mut t, &image_map);
            t
        })
        .collect();
    for m in &mut materials {
        remap_texture_infos(m, &texture_map);
    }
    let extensions_required = root
        .get("extensionsRequired")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok(Looks {
        materials,
        textures,
        samplers,
        images: loaded.into_iter().flatten().collect(),
        extensions_required,
        warnings,
    })
}

/// New indices for the kept entries (`None` for dropped ones).
fn renumber(keep: impl Iterator<Item = bool>) -> Vec<Option<usize>> {
    let mut next = 0;
    keep.map(|k| {
        k.then(|| {
            next += 1;
            next - 1
        })
    })
    .collect()
}

/// The image indices a texture refers to: `source` and `source` inside any
/// extension (`EXT_texture_webp`, `KHR_texture_basisu`, ...). A reference
/// that is not a whole number counts as out of range.
fn image_refs(texture: &Object) -> Vec<usize> {
    let mut refs = Vec::new();
    let mut push = |v: &Value| refs.push(v.as_u64().map_or(usize::MAX, |i| i as usize));
    if let Some(v) = texture.get("source") {
        push(v);
    }
    if let Some(exts) = texture.get("extensions").and_then(Value::as_object) {
        for ext in exts.values() {
            if let Some(v) = ext.get("source") {
                push(v);
            }
        }
    }
    refs
}

fn remap_image_refs(texture: &mut Object, map: &[Option<usize>]) {
    let fix = |v: &mut Value| {
        if let Some(n) = v
            .as_u64()
            .and_then(|i| map.get(i as usize).copied().flatten())
        {
            *v = n.into();
        }
    };
    if let Some(v) = texture.get_mut("source") {
        fix(v);
    }
    if let Some(exts) = texture.get_mut("extensions").and_then(Value::as_object_mut) {
        for ext in exts.values_mut() {
            if let Some(v) = ext.get_mut("source") {
                fix(v);
            }
        }
    }
}

/// Renumbers every texture reference in a material (any object under a key
/// ending in `Texture` that holds an `index`, in the core material and in
/// its extensions) and removes those to dropped textures.
fn remap_texture_infos(object: &mut Object, map: &[Option<usize>]) {
    let keys: Vec<String> = object.keys().cloned().collect();
    for key in keys {
        let Some(value) = object.get_mut(&key) else {
            continue;
        };
        let info_index = key
            .ends_with("Texture")
            .then(|| value.get("index").and_then(Value::as_u64))
            .flatten();
        match info_index {
            Some(i) => match map.get(i as usize).copied().flatten() {
                Some(n) => value["index"] = n.into(),
                None => {
                    object.remove(&key);
                }
            },
            None => remap_value(value, map),
        }
    }
}

fn remap_value(value: &mut Value, map: &[Option<usize>]) {
    match value {
        Value::Object(o) => remap_texture_infos(o, map),
        Value::Array(a) => a.iter_mut().for_each(|v| remap_value(v, map)),
        _ => {}
    }
}

/// The bytes and type of one image, or why it cannot be kept.
fn load_image(
    image: &Object,
    path: &str,
    doc: &gltf::Document,
    buffers: &[Cow<'_, [u8]>],
    source: &Source<'_>,
    options: &ImportOptions,
) -> std::result::Result<LookImage, String> {
    let declared = image.get("mimeType").and_then(Value::as_str);
    let bytes = match (
        image.get("uri").and_then(Value::as_str),
        image.get("bufferView"),
    ) {
        (Some(uri), _) => buffers::load_uri(uri, path, source, options).map_err(|e| e.message)?,
        (None, Some(view)) => {
            let view = view
                .as_u64()
                .and_then(|v| doc.views().nth(v as usize))
                .ok_or("bufferView does not exist")?;
            let data = buffers
                .get(view.buffer().index())
                .ok_or("its buffer does not exist")?;
            let (start, len) = (view.offset(), view.length());
            if len as u64 > options.limits.max_file_bytes {
                return Err(format!(
                    "its buffer view is {len} bytes, more than the limit of {}",
                    options.limits.max_file_bytes
                ));
            }
            start
                .checked_add(len)
                .and_then(|end| data.get(start..end))
                .ok_or("its buffer view lies outside its buffer")?
                .to_vec()
        }
        (None, None) => return Err("it has neither a uri nor a bufferView".into()),
    };
    let mime_type = sniff(&bytes)
        .or(declared)
        .ok_or("its data is not a PNG, JPEG, WebP or KTX2 image and it declares no mimeType")?;
    Ok(LookImage {
        name: image.get("name").and_then(Value::as_str).map(str::to_owned),
        mime_type: mime_type.to_owned(),
        bytes,
    })
}

/// The MIME type of an encoded image, from its first bytes.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else if bytes.starts_with(b"\xABKTX 20\xBB\r\n\x1a\n") {
        Some("image/ktx2")
    } else {
        None
    }
}

/// The image files beside the model that its look reads (relative URIs
/// that pass the external-file checks; the others are left out with a
/// warning when the look is loaded), for the bake key.
pub(super) fn image_files(
    json: &[u8],
    source: &Source<'_>,
    options: &ImportOptions,
) -> Vec<PathBuf> {
    let Ok(root) = serde_json::from_slice::<Value>(json) else {
        return Vec::new();
    };
    let Ok(images) = objects(&root, "images") else {
        return Vec::new();
    };
    images
        .iter()
        .enumerate()
        .filter_map(|(i, image)| {
            let uri = image.get("uri").and_then(Value::as_str)?;
            if uri.starts_with("data:") {
                return None;
            }
            buffers::external_file(uri, &format!("images[{i}]"), source, options).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dropped_textures_leave_their_materials_with_the_rest() {
        let mut m = json!({
            "pbrMetallicRoughness": {
                "baseColorTexture": {"index": 1},
                "metallicRoughnessTexture": {"index": 0},
                "baseColorFactor": [1, 0.5, 0.5, 1]
            },
            "extensions": {"KHR_materials_clearcoat": {"clearcoatTexture": {"index": 2, "texCoord": 1}}}
        })
        .as_object()
        .cloned()
        .unwrap();
        remap_texture_infos(&mut m, &[None, Some(0), Some(1)]);
        assert_eq!(
            Value::Object(m),
            json!({
                "pbrMetallicRoughness": {
                    "baseColorTexture": {"index": 0},
                    "baseColorFactor": [1, 0.5, 0.5, 1]
                },
                "extensions": {"KHR_materials_clearcoat": {"clearcoatTexture": {"index": 1, "texCoord": 1}}}
            })
        );
    }

    #[test]
    fn image_types_are_sniffed() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(b"GIF89a"), None);
    }
}
