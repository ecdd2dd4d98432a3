//! `rigbake inspect`: the JSON document against its documented
//! schema, and `--verify` catching damage.

mod common;

use std::path::Path;

use common::{bake, rigbake};

fn schema() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../formats/inspect.schema.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The subschema of `schema` at `path` (keys of the schema's JSON),
/// following `$ref`s into `$defs` and, for a nullable value, its non-null
/// branch: the schema is generated, and names its types' schemas by type.
fn subschema(schema: &serde_json::Value, path: &[&str]) -> serde_json::Value {
    fn resolve<'a>(
        schema: &'a serde_json::Value,
        mut at: &'a serde_json::Value,
    ) -> &'a serde_json::Value {
        loop {
            if let Some(r) = at["$ref"].as_str() {
                at = schema
                    .pointer(r.trim_start_matches('#'))
                    .unwrap_or_else(|| panic!("{r} resolves"));
            } else if let Some(branch) = at["anyOf"]
                .as_array()
                .and_then(|b| b.iter().find(|s| s["type"] != "null"))
            {
                at = branch;
            } else {
                return at;
            }
        }
    }
    let mut at = resolve(schema, schema);
    for key in path {
        at = resolve(schema, &at[*key]);
    }
    at.clone()
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
                let vat_schema = subschema(&schema(), &["properties", "vat"]);
                let required = vat_schema["required"].as_array().unwrap();
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
        .find(|s| s.kind == rigbake_format::records::SectionKind::Metadata)
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

/// Every section kind this version writes or reads is named by a pattern
/// of formats/inspect.schema.json and listed in formats/inspect.md.
#[test]
fn every_section_kind_is_in_the_schema_and_the_page() {
    use rigbake_format::records::SectionKind;
    let schema = schema();
    let kind_schema = &subschema(
        &schema,
        &[
            "properties",
            "container",
            "properties",
            "sections",
            "items",
            "properties",
            "kind",
        ],
    );
    assert!(kind_schema.get("pattern").is_some(), "{kind_schema}");
    let validator = jsonschema::validator_for(kind_schema).unwrap();
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../formats/inspect.md"),
    )
    .unwrap();
    let mut known = 0;
    for code in 0..64u32 {
        let kind = SectionKind::from_code(code);
        let name = kind.name();
        assert!(
            validator.is_valid(&serde_json::json!(name)),
            "section kind `{name}` (code {code}) is not in the schema's pattern"
        );
        if !matches!(kind, SectionKind::Unknown(_)) {
            known += 1;
            assert!(
                page.contains(&format!("`{name}`")),
                "formats/inspect.md omits `{name}`"
            );
        }
    }
    assert!(known >= 17, "{known} known kinds");
}

/// Bakes `model` with `flags` (their schemas checked by `common::bake`);
/// where the model refuses root-motion extraction for a documented reason
/// (no skin, or weighted joints outside the motion root), the same flags
/// without it.
fn bake_family(model: &std::path::Path, flags: &[&str]) {
    let out = tempfile::tempdir().unwrap();
    let mut r = bake(
        std::slice::from_ref(&model.to_path_buf()),
        out.path(),
        flags,
    );
    let refused = String::from_utf8_lossy(&r.stderr).into_owned();
    if refused.contains("root motion: the model has no skin")
        || refused.contains("is not under the motion root")
    {
        let without: Vec<&str> = flags
            .iter()
            .copied()
            .filter(|f| !["--root-motion", "extract"].contains(f))
            .collect();
        r = bake(
            std::slice::from_ref(&model.to_path_buf()),
            out.path(),
            &without,
        );
    }
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        r.status.success(),
        "{} {flags:?}: {stderr}",
        model.display()
    );
}

/// `inspect --json` (and the sidecar) of a bake of every fixture, with each
/// option family, and of every shared model with all families at once (at
/// 10 fps: the documents do not depend on the rate, and the other tests
/// bake the shared models at full rate, checked the same way), follow
/// their schemas: the checks run inside `common::bake` for each bake.
#[test]
fn every_fixture_and_shared_model_bake_follows_the_schemas() {
    let fixtures: Vec<std::path::PathBuf> = std::fs::read_dir(rigbake_fixtures::fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("glb" | "gltf")))
        .collect();
    let families: [&[&str]; 3] = [
        &[],
        &[
            "--vat",
            "--normals",
            "--tangents",
            "--anchors",
            "auto",
            "--anchors-exr",
            "--root-motion",
            "extract",
        ],
        &[
            "--vat",
            "--format",
            "png16",
            "--embed-textures",
            "--layout",
            "mat3x4",
            "--precision",
            "f16",
            "--weights-as-uv",
            "--max-influences",
            "2",
        ],
    ];
    for model in &fixtures {
        for flags in families {
            bake_family(model, flags);
        }
        // The OpenVAT export beside a VAT bake.
        let out = tempfile::tempdir().unwrap();
        let since = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
        common::openvat_export(model, out.path());
        common::check_documents(out.path(), since);
    }
    assert!(fixtures.len() >= 9, "{} fixtures", fixtures.len());
    let Some(dir) =
        common::shared_models("every_fixture_and_shared_model_bake_follows_the_schemas")
    else {
        return;
    };
    // Every family at once (one `--vat`), at 10 fps.
    let mut all: Vec<&str> = families[1].to_vec();
    all.extend(families[2].iter().filter(|f| **f != "--vat"));
    all.extend(["--fps", "10"]);
    let models = common::model_files(&dir);
    assert!(models.len() >= 15, "{} shared models", models.len());
    for model in &models {
        bake_family(model, &all);
    }
}
