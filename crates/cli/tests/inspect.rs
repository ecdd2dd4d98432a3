//! `rigbake inspect`: the summary, the JSON document against its documented
//! schema, and `--verify` catching damage.

mod common;

use std::path::Path;

use common::{bake, rigbake};

fn schema() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../formats/inspect.schema.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn inspect(file: &Path, flags: &[&str]) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["inspect".as_ref(), file.as_os_str()];
    args.extend(flags.iter().map(std::ffi::OsStr::new));
    rigbake(&args)
}

#[test]
fn json_output_follows_the_documented_schema() {
    let validator = jsonschema::validator_for(&schema()).expect("the schema itself is valid");
    let out = tempfile::tempdir().unwrap();
    let model = rigbake_fixtures::fixture("tentacle.glb");
    for flags in [
        &["--precision", "f16"][..],
        &["--embed-textures", "--layout", "mat3x4"][..],
        // The VAT part of the document, in each encoding, with and without
        // normals.
        &["--vat"][..],
        &["--vat", "--normals", "--format", "png16"][..],
        &["--vat", "--normals", "--format", "exr32"][..],
    ] {
        let r = bake(std::slice::from_ref(&model), out.path(), flags);
        assert!(r.status.success());
        let container = out.path().join("tentacle/tentacle.rigbake");
        for verify in [false, true] {
            let r = inspect(
                &container,
                if verify {
                    &["--json", "--verify"]
                } else {
                    &["--json"]
                },
            );
            assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
            let doc: serde_json::Value =
                serde_json::from_slice(&r.stdout).expect("stdout is one JSON document");
            let errors: Vec<String> = validator
                .iter_errors(&doc)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{flags:?}: {errors:#?}");
            assert_eq!(
                doc["verified"],
                if verify {
                    serde_json::json!(true)
                } else {
                    serde_json::Value::Null
                }
            );
            assert_eq!(doc["metadata"]["clips"][0]["name"], "wave");
            assert_eq!(doc["vat"].is_null(), !flags.contains(&"--vat"));
            assert_eq!(doc["totals"]["frames"], 92);
            if flags.contains(&"--vat") {
                // The schema checked the VAT part above; it is really
                // there, and the schema rejects it with a field missing.
                let vat = doc["vat"].as_object().expect("a VAT object");
                let schema = schema();
                let required = schema["$defs"]["vat"]["required"].as_array().unwrap();
                assert!(required.len() >= 10);
                for field in required {
                    let field = field.as_str().unwrap();
                    assert!(vat.contains_key(field), "{flags:?}: no `{field}`");
                }
                let mut broken = doc.clone();
                broken["vat"]
                    .as_object_mut()
                    .unwrap()
                    .insert("undocumented".into(), serde_json::json!(1));
                assert!(
                    !validator.is_valid(&broken),
                    "{flags:?}: the schema admits an undocumented VAT field"
                );
                let mut broken = doc.clone();
                broken["vat"]
                    .as_object_mut()
                    .unwrap()
                    .remove("reference_node");
                assert!(
                    !validator.is_valid(&broken),
                    "{flags:?}: the schema admits a VAT part without reference_node"
                );
            }
        }
    }
    // The schema rejects what it should: a document missing a field.
    let mut broken: serde_json::Value = serde_json::from_slice(
        &inspect(&out.path().join("tentacle/tentacle.rigbake"), &["--json"]).stdout,
    )
    .unwrap();
    broken["metadata"].as_object_mut().unwrap().remove("clips");
    assert!(!validator.is_valid(&broken));
}

#[test]
fn summary_lists_clips_skins_and_textures() {
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        &[rigbake_fixtures::fixture("tentacle.glb")],
        out.path(),
        &["--precision", "f16"],
    );
    assert!(r.status.success());
    let r = inspect(&out.path().join("tentacle/tentacle.rigbake"), &[]);
    assert!(r.status.success());
    let text = String::from_utf8(r.stdout).unwrap();
    for needle in [
        "tentacle.glb",
        "wave",
        "curl",
        "61",
        "31",
        "8 joints",
        "bones.skin0.exr",
        "32 x 92",
        "f16",
        "max error",
    ] {
        assert!(text.contains(needle), "`{needle}` missing from:\n{text}");
    }
    // f16 is lossy: a non-zero error is reported.
    assert!(
        !text.contains("largest encoding error 0 (lossless)"),
        "{text}"
    );
}

#[test]
fn verify_detects_a_damaged_texture_and_a_damaged_container() {
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        &[rigbake_fixtures::fixture("two_joint.gltf")],
        out.path(),
        &[],
    );
    assert!(r.status.success());
    let dir = out.path().join("two_joint");
    let container = dir.join("two_joint.rigbake");
    assert!(inspect(&container, &["--verify"]).status.success());
    // Flip a byte of the texture beside the container.
    let tex = dir.join("bones.skin0.exr");
    let mut bytes = std::fs::read(&tex).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&tex, &bytes).unwrap();
    assert!(
        inspect(&container, &[]).status.success(),
        "plain inspect reads no payload"
    );
    let r = inspect(&container, &["--verify"]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("checksum"));
    // Damage the container's metadata (which plain inspect reads).
    let metadata_at = rigbake_format::container::Container::open(&container)
        .unwrap()
        .sections()
        .iter()
        .find(|s| s.kind == rigbake_format::container::SectionKind::Metadata)
        .unwrap()
        .offset as usize;
    let mut bytes = std::fs::read(&container).unwrap();
    bytes[metadata_at + 3] ^= 1;
    std::fs::write(&container, &bytes).unwrap();
    let r = inspect(&container, &[]);
    assert_eq!(r.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains("two_joint.rigbake") && stderr.contains("damaged"),
        "{stderr}"
    );
}

#[test]
fn containers_round_trip_on_every_shared_model() {
    use rigbake_format::container::Container;
    use rigbake_format::meta::Storage;
    let Some(models) = common::shared_models("containers_round_trip_on_every_shared_model") else {
        return;
    };
    let files: Vec<_> = common::model_files(&models);
    let embedded = tempfile::tempdir().unwrap();
    let beside = tempfile::tempdir().unwrap();
    // Every model bakes (the Draco file is decoded) or is skipped.
    bake(&files, embedded.path(), &["--embed-textures"]);
    bake(&files, beside.path(), &[]);
    let mut checked = 0;
    for file in &files {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let a_path = embedded.path().join(&stem).join(format!("{stem}.rigbake"));
        if !a_path.exists() {
            continue;
        }
        let mut a = Container::open(&a_path).unwrap();
        a.verify().unwrap();
        let b =
            Container::open(&beside.path().join(&stem).join(format!("{stem}.rigbake"))).unwrap();
        // Metadata survives encode -> decode -> encode byte for byte.
        let meta_section = a
            .sections()
            .iter()
            .position(|s| s.kind == rigbake_format::container::SectionKind::Metadata)
            .unwrap();
        let raw = a.read_section(meta_section).unwrap();
        let decoded = rigbake_format::codec::decode_metadata(&raw).unwrap();
        assert_eq!(
            rigbake_format::codec::encode_metadata(&decoded).unwrap(),
            raw,
            "{stem}"
        );
        // Both storage modes describe the same bake, and embedded payloads
        // are byte-identical to the files written beside the container.
        let (ma, mb) = (a.metadata().clone(), b.metadata().clone());
        assert_eq!(ma.clips, mb.clips, "{stem}");
        assert_eq!(ma.skins, mb.skins, "{stem}");
        assert_eq!(ma.source, mb.source, "{stem}");
        assert_eq!(ma.textures.len(), mb.textures.len());
        for (ta, tb) in ma.textures.iter().zip(&mb.textures) {
            let Storage::Section(index) = ta.storage else {
                panic!("{stem}: not embedded")
            };
            assert_eq!(tb.storage, Storage::File);
            assert_eq!(
                (ta.bytes, ta.crc32, ta.width, ta.height),
                (tb.bytes, tb.crc32, tb.width, tb.height)
            );
            let payload = a.read_section(index as usize).unwrap();
            let file_bytes = std::fs::read(beside.path().join(&stem).join(&tb.name)).unwrap();
            assert!(payload == file_bytes, "{stem}: {} differs", tb.name);
        }
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} containers checked");
}
