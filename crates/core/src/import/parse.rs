//! Bytes -> glTF document: GLB framing, JSON deserialisation and schema
//! validation, each failure reported in plain words with the object path.
//!
//! The GLB container is split here rather than by the gltf crate, whose
//! parser underflows on a declared length below 12 and refuses chunks of
//! unknown type (which the glTF spec says to skip). Known panics of gltf-json
//! validation are checked for before it runs ([`check_before_validation`]).

use gltf::json::validation::{Checked, Validate};
use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

fn malformed(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Malformed, "", message)
}

fn truncated(message: impl Into<String>) -> Error {
    malformed(message).with_hint("the file is truncated or damaged; export or download it again")
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Splits a GLB into its JSON chunk and optional BIN chunk, checking every
/// length against the real size. Bytes after the declared length are ignored;
/// chunks of unknown type are skipped (glTF 2.0, section 4.4.3).
pub(super) fn split_glb(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>)> {
    if bytes.len() < 12 {
        return Err(truncated(format!(
            "GLB file is {} bytes, shorter than its 12-byte header",
            bytes.len()
        )));
    }
    let version = u32_at(bytes, 4);
    if version == 1 {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "",
            "GLB version 1 (glTF 1.0) is not supported; rigbake reads glTF 2.0",
        )
        .with_hint("convert the model to glTF 2.0"));
    }
    if version != 2 {
        return Err(malformed(format!(
            "GLB header holds version {version}; glTF 2.0 files say 2 (the header is damaged)"
        )));
    }
    let declared = u32_at(bytes, 8) as usize;
    if declared > bytes.len() {
        return Err(truncated(format!(
            "GLB header says the file is {declared} bytes, but it has only {}",
            bytes.len()
        )));
    }
    if declared < 20 {
        return Err(malformed(format!(
            "GLB header says the file is {declared} bytes, too short to hold a JSON chunk"
        )));
    }
    let body = &bytes[..declared];
    let mut at = 12;
    let mut json = None;
    let mut bin = None;
    let mut index = 0usize;
    while at < body.len() {
        if body.len() - at < 8 {
            return Err(truncated(format!(
                "GLB chunk {index} at byte {at} is cut short: {} bytes left, a chunk header needs 8",
                body.len() - at
            )));
        }
        let length = u32_at(body, at) as usize;
        let kind = u32_at(body, at + 4);
        let start = at + 8;
        let available = body.len() - start;
        let name = match kind {
            CHUNK_JSON => "JSON",
            CHUNK_BIN => "BIN",
            _ => "unknown",
        };
        if length > available {
            return Err(truncated(format!(
                "GLB chunk {index} ({name}) declares {length} bytes, but only {available} remain"
            )));
        }
        let data = &body[start..start + length];
        match (index, kind) {
            (0, CHUNK_JSON) => json = Some(data),
            (0, _) => {
                return Err(malformed(format!(
                    "the first GLB chunk is {name} (type {kind:#010x}); it must be the JSON chunk"
                )));
            }
            (_, CHUNK_JSON) => {
                return Err(malformed(format!(
                    "GLB chunk {index} is a second JSON chunk"
                )));
            }
            (_, CHUNK_BIN) if bin.is_some() => {
                return Err(malformed(format!(
                    "GLB chunk {index} is a second BIN chunk"
                )));
            }
            (_, CHUNK_BIN) => bin = Some(data),
            // Unknown chunk types are skipped, as the spec requires.
            _ => {}
        }
        at = start + length;
        index += 1;
    }
    let json = json.ok_or_else(|| malformed("GLB file has no JSON chunk"))?;
    Ok((json, bin))
}

/// A file split and deserialised: the JSON, its text and the GLB binary chunk.
pub(super) type Parsed<'a> = (gltf::json::Root, &'a [u8], Option<&'a [u8]>);

std::thread_local! {
    /// How many documents this thread has parsed ([`parse`]).
    static PARSED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many glTF documents the calling thread has parsed so far (GLB split
/// and JSON deserialised into glTF's types): what a test reads before and
/// after a bake to show that the bake parses its source once.
pub fn documents_parsed() -> u64 {
    PARSED.with(std::cell::Cell::get)
}

/// Splits a `.gltf` or `.glb` held in memory into its deserialised JSON, the
/// JSON text and the GLB binary chunk. Nothing is validated yet.
pub(super) fn parse(bytes: &[u8]) -> Result<Parsed<'_>> {
    PARSED.with(|n| n.set(n.get() + 1));
    let (json, blob) = if bytes.starts_with(GLB_MAGIC) {
        split_glb(bytes)?
    } else {
        (bytes, None)
    };
    Ok((deserialize(json)?, json, blob))
}

/// Schema-validates a deserialised document (`json` is its text, quoted in
/// error messages). The accessors in `decoded_elsewhere` (those a Draco
/// stream fills) may lack a `bufferView`.
pub(super) fn validate(
    root: &gltf::json::Root,
    json: &[u8],
    decoded_elsewhere: &[usize],
) -> Result<()> {
    check_before_validation(root, json)?;
    validate_schema(root, json, decoded_elsewhere)
}

/// Deserialises the glTF JSON. On failure, deserialises again while tracking
/// the path so the error names the object (`accessors[3].count`).
fn deserialize(json: &[u8]) -> Result<gltf::json::Root> {
    match serde_json::from_slice::<gltf::json::Root>(json) {
        Ok(root) => Ok(root),
        Err(plain) if plain.to_string().starts_with("missing field `nodes`") => {
            // gltf-json requires `nodes` on scenes, which glTF 2.0 does not:
            // add the empty list and try again.
            let mut doc: Value =
                serde_json::from_slice(json).map_err(|_| path_error(json, plain))?;
            if let Some(scenes) = doc.get_mut("scenes").and_then(Value::as_array_mut) {
                for scene in scenes.iter_mut().filter_map(Value::as_object_mut) {
                    scene
                        .entry("nodes")
                        .or_insert_with(|| Value::Array(Vec::new()));
                }
            }
            let patched = serde_json::to_vec(&doc).map_err(|e| malformed(e.to_string()))?;
            serde_json::from_slice::<gltf::json::Root>(&patched)
                .map_err(|plain| path_error(&patched, plain))
        }
        Err(plain) => Err(path_error(json, plain)),
    }
}

/// The error for JSON that does not deserialise, found again with the path
/// tracked so that it names the object.
fn path_error(json: &[u8], plain: serde_json::Error) -> Error {
    let mut de = serde_json::Deserializer::from_slice(json);
    let (path, inner) = match serde_path_to_error::deserialize::<_, gltf::json::Root>(&mut de) {
        Err(e) => (e.path().to_string(), e.into_inner()),
        // Cannot happen (same input), but never trust that.
        Ok(_) => (String::new(), plain),
    };
    let path = tidy_path(&path);
    let what = if inner.is_eof() {
        "the glTF JSON ends too early"
    } else if inner.to_string().starts_with("number out of range") {
        "the glTF JSON holds a number too large to represent"
    } else if inner.is_syntax() {
        "the glTF JSON is not well-formed"
    } else {
        "the glTF JSON does not match the glTF schema"
    };
    let e = Error::new(
        ErrorKind::Malformed,
        path,
        format!("{what}: {}", tidy_message(&inner.to_string())),
    );
    if inner.is_eof() {
        e.with_hint("the file is truncated or damaged; export or download it again")
    } else {
        e
    }
}

/// A serde path in rigbake's form: no `?` for keys that could not be read,
/// and runs of nesting (from deeply nested values) shortened.
fn tidy_path(path: &str) -> String {
    let path = path.replace(".?", "");
    let path = path.trim_start_matches('?').trim_start_matches('.');
    if path.len() <= 80 {
        return path.to_owned();
    }
    let cut: String = path.chars().take(60).collect();
    format!("{cut}...")
}

/// serde's wording for gltf-json types, in plain words.
fn tidy_message(message: &str) -> String {
    let mut out = message.replace(
        "index into child of root",
        "an index (a whole number, 0 or more)",
    );
    for (rust, plain) in [
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected u32", "expected a whole number, 0 or more"),
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected f32", "expected a number"),
        ("expected f64", "expected a number"),
    ] {
        out = out.replace(rust, plain);
    }
    while let Some(at) = out.find("expected struct ") {
        let name_start = at + "expected struct ".len();
        let name_end = out[name_start..]
            .find(|c: char| !c.is_alphanumeric())
            .map_or(out.len(), |e| name_start + e);
        let name = out[name_start..name_end].to_owned();
        out.replace_range(at..name_end, &format!("expected a JSON object ({name})"));
    }
    out
}

/// Checks what gltf-json's validation gets wrong: it panics on a primitive
/// whose POSITION refers to a missing accessor (it indexes directly), and it
/// never checks animation channel targets, whose node and path the gltf
/// wrappers then unwrap.
fn check_before_validation(root: &gltf::json::Root, json: &[u8]) -> Result<()> {
    use gltf::json::validation::Error as V;
    for (a, animation) in root.animations.iter().enumerate() {
        for (c, channel) in animation.channels.iter().enumerate() {
            let path = format!("animations[{a}].channels[{c}].target");
            if channel.target.node.value() >= root.nodes.len() {
                return Err(schema_error(
                    &format!("{path}.node"),
                    V::IndexOutOfBounds,
                    json,
                ));
            }
            if channel.target.path == Checked::Invalid {
                return Err(schema_error(&format!("{path}.path"), V::Invalid, json));
            }
        }
    }
    let accessors = root.accessors.len();
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let position = prim
                .attributes
                .get(&Checked::Valid(gltf::json::mesh::Semantic::Positions));
            if let Some(index) = position
                && index.value() >= accessors
            {
                let path = format!("meshes[{m}].primitives[{p}].attributes.POSITION");
                return Err(schema_error(&path, V::IndexOutOfBounds, json));
            }
        }
    }
    Ok(())
}

/// Runs the gltf crate's schema validation (index ranges, enum values,
/// required fields), ignoring its complaints about required extensions, which
/// the importer judges itself.
fn validate_schema(
    root: &gltf::json::Root,
    json: &[u8],
    decoded_elsewhere: &[usize],
) -> Result<()> {
    let mut first: Option<(String, gltf::json::validation::Error)> = None;
    let exempt: Vec<String> = decoded_elsewhere
        .iter()
        .map(|a| format!("accessors[{a}].bufferView"))
        .collect();
    root.validate(root, gltf::json::Path::new, &mut |path, error| {
        if first.is_none() {
            let path = path().to_string();
            if !path.starts_with("extensionsRequired") && !exempt.contains(&path) {
                first = Some((path, error));
            }
        }
    });
    match first {
        Some((path, error)) => Err(schema_error(&normalize_path(&path), error, json)),
        None => Ok(()),
    }
}

/// gltf-json writes map keys as `attributes["POSITION"]` and morph target
/// attributes by their Rust names; rigbake writes the JSON names,
/// `attributes.POSITION`, everywhere.
fn normalize_path(path: &str) -> String {
    path.replace("[\"", ".")
        .replace("\"]", "")
        .replace("].positions", "].POSITION")
        .replace("].normals", "].NORMAL")
        .replace("].tangents", "].TANGENT")
}

/// One step of an object path.
enum Step<'p> {
    Key(&'p str),
    Index(usize),
}

/// Splits `meshes[3].primitives[0].attributes.POSITION` into steps.
fn steps(path: &str) -> Option<Vec<Step<'_>>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            out.push(Step::Key(name));
        }
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            out.push(Step::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        }
    }
    Some(out)
}

fn lookup<'v>(root: &'v Value, path: &[Step<'_>]) -> Option<&'v Value> {
    path.iter().try_fold(root, |v, step| match step {
        Step::Key(k) => v.get(*k),
        Step::Index(i) => v.get(*i),
    })
}

/// The array an index at `path` refers to, as (name for messages, its JSON
/// location), from the name of the property holding the index.
fn target_collection(path: &[Step<'_>]) -> Option<(String, Vec<String>)> {
    let field = path.iter().rev().find_map(|s| match s {
        Step::Key(k) => Some(*k),
        Step::Index(_) => None,
    })?;
    let parent_is = |name: &str| path.iter().any(|s| matches!(s, Step::Key(k) if *k == name));
    let top = |name: &str| Some((name.to_owned(), vec![name.to_owned()]));
    match field {
        "children" | "joints" | "skeleton" | "node" | "nodes" => top("nodes"),
        "mesh" => top("meshes"),
        "skin" => top("skins"),
        "camera" => top("cameras"),
        "scene" => top("scenes"),
        "bufferView" => top("bufferViews"),
        "buffer" => top("buffers"),
        "material" => top("materials"),
        "source" => top("images"),
        "index" => top("textures"),
        "sampler" if parent_is("animations") => {
            let a = match path.get(1) {
                Some(Step::Index(a)) => *a,
                _ => return None,
            };
            Some((
                format!("animations[{a}].samplers"),
                vec!["animations".into(), a.to_string(), "samplers".into()],
            ))
        }
        "sampler" => top("samplers"),
        "inverseBindMatrices" | "input" | "output" | "indices" => top("accessors"),
        _ if parent_is("attributes") || parent_is("targets") => top("accessors"),
        _ => None,
    }
}

/// A schema validation failure in plain words, quoting the offending value
/// from the JSON text where it can be found.
fn schema_error(path: &str, error: gltf::json::validation::Error, json: &[u8]) -> Error {
    use gltf::json::validation::Error as V;
    // Only parsed on this error path; the text parsed once already.
    let doc: Option<Value> = serde_json::from_slice(json).ok();
    if let Some(e) = attribute_error(path, error, doc.as_ref()) {
        return e;
    }
    let parsed = steps(path);
    let value = doc
        .as_ref()
        .zip(parsed.as_deref())
        .and_then(|(d, p)| lookup(d, p));
    let message = match error {
        V::IndexOutOfBounds => {
            let target = parsed.as_deref().and_then(target_collection);
            match (value.and_then(Value::as_u64), target) {
                (Some(i), Some((name, location))) => {
                    let len = doc
                        .as_ref()
                        .and_then(|d| {
                            location
                                .iter()
                                .try_fold(d, |v, k| match k.parse::<usize>() {
                                    Ok(i) => v.get(i),
                                    Err(_) => v.get(k.as_str()),
                                })
                        })
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len);
                    format!(
                        "refers to {name}[{i}], which does not exist (the file has {len} {})",
                        if len == 1 { "entry" } else { "entries" }
                    )
                }
                (Some(i), None) => format!("refers to index {i}, which does not exist"),
                _ => "refers to an object that does not exist (index out of range)".to_owned(),
            }
        }
        V::Invalid => {
            let said = match value {
                Some(v) => format!(
                    "value {} is not allowed here by the glTF 2.0 schema",
                    short(v)
                ),
                None => "holds a value the glTF 2.0 schema does not allow".to_owned(),
            };
            let field = path.rsplit('.').next().unwrap_or("");
            let field = field.split('[').next().unwrap_or("");
            let allowed = match field {
                "path" => Some("translation, rotation, scale or weights"),
                "interpolation" => Some("LINEAR, STEP or CUBICSPLINE"),
                "componentType" => Some(
                    "5120 (BYTE), 5121 (UNSIGNED_BYTE), 5122 (SHORT), 5123 (UNSIGNED_SHORT), 5125 (UNSIGNED_INT) or 5126 (FLOAT)",
                ),
                "type" => Some("SCALAR, VEC2, VEC3, VEC4, MAT2, MAT3 or MAT4"),
                "mode" => Some("0 to 6 (POINTS to TRIANGLE_FAN)"),
                "byteStride" => Some("a multiple of 4 from 4 to 252"),
                "target" => Some("34962 (ARRAY_BUFFER) or 34963 (ELEMENT_ARRAY_BUFFER)"),
                _ => None,
            };
            match allowed {
                Some(allowed) => format!("{said}; allowed: {allowed}"),
                None => said,
            }
        }
        V::Missing => "is required by the glTF 2.0 schema but missing".to_owned(),
        V::Oversize => "is too large a size or offset for this machine".to_owned(),
        V::Unsupported => "is not supported".to_owned(),
    };
    Error::new(ErrorKind::Malformed, path, message)
}

/// Errors about a primitive's attributes, which gltf-json reports at paths
/// that do not exist in the JSON: an invalid attribute name (reported as
/// `<invalid semantic name>`) and the POSITION accessor's `min`/`max`.
fn attribute_error(
    path: &str,
    error: gltf::json::validation::Error,
    doc: Option<&Value>,
) -> Option<Error> {
    use gltf::json::validation::Error as V;
    let (prim, rest) = path.split_once(".attributes.")?;
    let prim_steps = steps(prim)?;
    let attributes = doc
        .and_then(|d| lookup(d, &prim_steps))
        .and_then(|p| p.get("attributes"))
        .and_then(Value::as_object);
    match (rest, error) {
        ("POSITION.min" | "POSITION.max", _) => {
            let field = &rest["POSITION.".len()..];
            let accessor = attributes
                .and_then(|a| a.get("POSITION"))
                .and_then(Value::as_u64);
            let (object, what) = match accessor {
                Some(i) => (format!("accessors[{i}].{field}"), format!("accessors[{i}]")),
                None => (
                    format!("{prim}.attributes.POSITION"),
                    "the accessor".to_owned(),
                ),
            };
            let problem = if error == V::Missing {
                "has no"
            } else {
                "has an invalid"
            };
            Some(
                Error::new(
                    ErrorKind::Malformed,
                    object,
                    format!(
                        "{what}, the POSITION of {prim}, {problem} `{field}`; glTF 2.0 requires `min` and `max` of 3 numbers each on POSITION accessors"
                    ),
                )
                .with_hint("re-export the model with a conforming exporter"),
            )
        }
        (_, V::Invalid) if !rest.contains('.') => {
            // Find the offending name in the JSON itself.
            let bad = attributes.and_then(|a| {
                a.keys()
                    .find(|k| {
                        serde_json::from_value::<Checked<gltf::json::mesh::Semantic>>(
                            Value::String((*k).clone()),
                        )
                        .map_or(true, |c| c == Checked::Invalid)
                    })
                    .cloned()
            });
            let name = bad.unwrap_or_else(|| rest.to_owned());
            Some(Error::new(
                ErrorKind::Malformed,
                format!("{prim}.attributes.{name}"),
                format!(
                    "`{name}` is not a glTF attribute name (POSITION, NORMAL, TANGENT, TEXCOORD_n, COLOR_n, JOINTS_n, WEIGHTS_n, or an application-specific name starting with _)"
                ),
            ))
        }
        _ => None,
    }
}

/// A JSON value shortened for a message.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        let cut: String = s.chars().take(40).collect();
        format!("{cut}...")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glb(chunks: &[(u32, &[u8])], declared: Option<u32>) -> Vec<u8> {
        let mut body = Vec::new();
        for (kind, data) in chunks {
            body.extend_from_slice(&(data.len() as u32).to_le_bytes());
            body.extend_from_slice(&kind.to_le_bytes());
            body.extend_from_slice(data);
        }
        let total = declared.unwrap_or(12 + body.len() as u32);
        let mut out = b"glTF".to_vec();
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&total.to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    #[test]
    fn glb_chunks_are_split_and_unknown_chunks_skipped() {
        let bytes = glb(
            &[
                (CHUNK_JSON, b"{}  "),
                (CHUNK_BIN, b"abcd"),
                (0x1234_5678, b"xx"),
            ],
            None,
        );
        let (json, bin) = split_glb(&bytes).unwrap();
        assert_eq!(json, b"{}  ");
        assert_eq!(bin, Some(&b"abcd"[..]));
    }

    #[test]
    fn glb_framing_errors_are_plain() {
        let e = split_glb(b"glTF\x02\0\0\0").unwrap_err();
        assert!(e.message.contains("shorter than its 12-byte header"), "{e}");
        // Declared length below the header size (the gltf crate underflows).
        let e = split_glb(&glb(&[(CHUNK_JSON, b"{}  ")], Some(3))).unwrap_err();
        assert!(e.message.contains("too short"), "{e}");
        let e = split_glb(&glb(&[(CHUNK_JSON, b"{}  ")], Some(4000))).unwrap_err();
        assert!(e.message.contains("has only"), "{e}");
        let mut cut = glb(&[(CHUNK_JSON, b"{}  "), (CHUNK_BIN, b"abcdefgh")], None);
        cut.truncate(cut.len() - 3);
        let declared = cut.len() as u32;
        cut[8..12].copy_from_slice(&declared.to_le_bytes());
        let e = split_glb(&cut).unwrap_err();
        assert!(
            e.message
                .contains("chunk 1 (BIN) declares 8 bytes, but only 5 remain"),
            "{e}"
        );
        let e = split_glb(&glb(&[(CHUNK_BIN, b"abcd")], None)).unwrap_err();
        assert!(e.message.contains("must be the JSON chunk"), "{e}");
        let e = split_glb(&glb(
            &[(CHUNK_JSON, b"{}"), (CHUNK_BIN, b""), (CHUNK_BIN, b"")],
            None,
        ))
        .unwrap_err();
        assert!(e.message.contains("second BIN"), "{e}");
    }

    #[test]
    fn json_errors_name_the_object() {
        let e = deserialize(br#"{"asset":{"version":"2.0"},"accessors":[{"count":"many"}]}"#)
            .unwrap_err();
        assert_eq!(e.object, "accessors[0].count");
        assert!(e.message.contains("does not match the glTF schema"), "{e}");
        let e = deserialize(br#"{"asset":{"version":"2.0"},"nodes":[{}"#).unwrap_err();
        assert!(e.message.contains("ends too early"), "{e}");
        assert!(e.hint.is_some());
    }

    #[test]
    fn serde_wording_is_made_plain() {
        let e = deserialize(br#"{"asset":{"version":"2.0"},"nodes":[{"mesh":-1}]}"#).unwrap_err();
        assert_eq!(e.object, "nodes[0].mesh");
        assert!(
            e.message
                .contains("expected an index (a whole number, 0 or more)"),
            "{e}"
        );
        let e = deserialize(br#"{"asset":{"version":"2.0"},"accessors":[{"count":"many"}]}"#)
            .unwrap_err();
        assert!(
            e.message.contains("expected a whole number, 0 or more"),
            "{e}"
        );
        let e = deserialize(br#"{"asset":{"version":"2.0"},"nodes":[7]}"#).unwrap_err();
        assert!(e.message.contains("expected a JSON object (Node)"), "{e}");
        let e = deserialize(br#"{"asset":{"version":"2.0"},"nodes":[{"#).unwrap_err();
        assert_eq!(e.object, "nodes[0]");
        let deep = format!(
            r#"{{"asset":{{"version":"2.0"}},"accessors":[{{"max":{}{}}}]}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        let e = deserialize(deep.as_bytes()).unwrap_err();
        assert!(e.object.len() < 70, "{}", e.object);
        assert!(e.message.contains("recursion limit"), "{e}");
    }

    #[test]
    fn schema_errors_quote_the_missing_target() {
        let json = br#"{"asset":{"version":"2.0"},"nodes":[{"children":[7]}]}"#;
        let (root, text, _) = parse(json).unwrap();
        let e = validate(&root, text, &[]).unwrap_err();
        assert_eq!(e.object, "nodes[0].children[0]");
        assert_eq!(
            e.message,
            "refers to nodes[7], which does not exist (the file has 1 entry)"
        );
    }

    #[test]
    fn paths_split_into_steps() {
        let s = steps("meshes[3].primitives[0].attributes.POSITION").unwrap();
        assert_eq!(s.len(), 6);
        assert!(matches!(s[5], Step::Key("POSITION")));
        assert_eq!(
            normalize_path("meshes[0].primitives[0].attributes[\"POSITION\"]"),
            "meshes[0].primitives[0].attributes.POSITION"
        );
    }
}
