//! Batch bakes for CI: manifests, folders, failure isolation, determinism,
//! incremental rebakes, interruption safety, shards and merged reports.

mod common;

use std::path::PathBuf;

use assert_cmd::Command;
use common::{shared_models, tree};
use rigbake_format::container::Container;

fn rigbake() -> Command {
    Command::cargo_bin("rigbake").unwrap()
}

fn fixtures() -> PathBuf {
    rigbake_fixtures::fixtures_dir()
}

/// Parses the `--json` report printed on stdout.
fn report(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn statuses(r: &serde_json::Value) -> Vec<(String, String)> {
    r["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["input"].as_str().unwrap().to_owned(),
                m["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn example_manifest_bakes_split_renamed_and_blended_clips() {
    let out = tempfile::tempdir().unwrap();
    let r = rigbake()
        .args(["bake", "--json", "--manifest"])
        .arg(fixtures().join("rigbake.toml"))
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let rep = report(&r);
    assert_eq!(
        statuses(&rep),
        [
            ("eight_influences.gltf".to_owned(), "baked".to_owned()),
            ("spec_worked_example.glb".to_owned(), "baked".to_owned()),
            ("tentacle.glb".to_owned(), "baked".to_owned())
        ]
    );
    let c = Container::open(&out.path().join("tentacle/tentacle.rigbake")).unwrap();
    let clips: Vec<(&str, u32, bool)> = c
        .metadata()
        .clips
        .iter()
        .map(|c| (c.name.as_str(), c.frames, c.looping))
        .collect();
    // frames [0, 30] and time [1, 2] s at 30 fps: 31 frames each (the second
    // half of the wave starts and ends at opposite phases: no loop); curl is
    // 1 s (31 frames) and forced to loop; the blends last 2, 1.5 and 1 s.
    assert_eq!(
        clips,
        [
            ("wave_first_half", 31, false),
            ("wave_end", 31, false),
            ("curl_loop", 31, true),
            ("wave+curl@0", 61, true),
            ("wave+curl@0.5", 46, false),
            ("wave+curl@1", 31, false)
        ]
    );
    assert!(c.records().vat.as_ref().is_some(), "vat output requested");
    let rig = c.records().rig.as_ref().unwrap();
    assert_eq!(rig.anchors[0].node, "seg7");
    assert!(out.path().join("tentacle/anchors.exr").is_file());
    // Glob entry: 15 fps, f16, mat3x4.
    let spec = Container::open(
        &out.path()
            .join("spec_worked_example/spec_worked_example.rigbake"),
    )
    .unwrap();
    let m = spec.metadata();
    assert_eq!(m.options.fps, 15.0);
    assert_eq!(m.textures[0].width, 35 * 3);
    assert!(m.textures[0].max_error > 0.0, "f16 records an error");
    let eight =
        Container::open(&out.path().join("eight_influences/eight_influences.rigbake")).unwrap();
    assert_eq!(eight.records().weights.as_ref().unwrap().max_influences, 8);
}

#[test]
fn a_bad_manifest_key_names_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("rigbake.toml");
    std::fs::write(
        &manifest,
        "out = \"o\"\n\n[defaults]\nfps = 30\nmax_influence = 4\n",
    )
    .unwrap();
    let r = rigbake()
        .args(["bake", "--manifest"])
        .arg(&manifest)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains(&format!("{}:5:", manifest.display())),
        "{stderr}"
    );
    assert!(stderr.contains("max_influence"), "{stderr}");
    // A wrong type, and a path that matches nothing.
    std::fs::write(&manifest, "[[model]]\npath = \"*.glb\"\nfps = \"fast\"\n").unwrap();
    let r = rigbake()
        .args(["bake", "--out", "o", "--manifest"])
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&r.stderr).contains(":3:"),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    std::fs::write(&manifest, "[[model]]\npath = \"nothing/*.glb\"\n").unwrap();
    let r = rigbake()
        .args(["bake", "--out", "o", "--manifest"])
        .arg(&manifest)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains(":2:") && stderr.contains("matches no"),
        "{stderr}"
    );
}

#[test]
fn a_manifest_covering_every_option_bakes_the_shared_models() {
    let Some(models) = shared_models("a_manifest_covering_every_option_bakes_the_shared_models")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("rigbake.toml");
    let text = format!(
        r#"
models = "{}"
out = "baked"
[defaults]
fps = 24
sampling = "even-spread"
outputs = ["bones", "weights"]
layout = "mat3x4"
precision = "f16"
max_texture_size = 4096
max_influences = 4
embed_textures = true
props = "anchors"
[defaults.vat]
format = "png16"
normals = true
tangents = true
normal_convention = "blended-matrix"
direction_encoding = "bounds"
power_of_two = true
zip = true

[[model]]
path = "**/*.gl*"

[[model]]
path = "unsupported/*"
outputs = []

[[model]]
path = "raylib/greenman.glb"
outputs = ["bones", "weights", "vat", "anchors"]
auto_anchors = true
anchors_exr = true
[[model.clip]]
source = "1_idle"
name = "idle_part"
time = [0.5, 1.5]
loop = true
[[model.blend]]
a = "1_idle"
b = "2_move"
weights = [0.25, 0.75]
"#,
        models.display().to_string().replace('\\', "/")
    );
    std::fs::write(&manifest, text).unwrap();
    let r = rigbake()
        .args(["bake", "--json", "--manifest"])
        .arg(&manifest)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    let rep = report(&r);
    for (input, status) in statuses(&rep) {
        let expected = if input.starts_with("unsupported/")
            || [
                "greenman_",
                "Morph",
                "BoxAnimated",
                "InterpolationTest",
                "SimpleMorph",
            ]
            .iter()
            .any(|s| input.contains(s))
        {
            "skipped"
        } else {
            "baked"
        };
        assert_eq!(status, expected, "{input}");
    }
    let c = Container::open(&dir.path().join("baked/raylib/greenman/greenman.rigbake")).unwrap();
    let m = c.metadata();
    assert_eq!((m.options.fps, m.options.max_texture_size), (24.0, 4096));
    let names: Vec<&str> = m.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["idle_part", "1_idle+2_move@0.25", "1_idle+2_move@0.75"]
    );
    assert_eq!(m.clips[0].frames, 25, "1 s at 24 fps");
    assert!(m.clips[0].looping);
    let vat = c.records().vat.as_ref().unwrap();
    assert_eq!(vat.encoding, rigbake_format::meta::VatEncoding::Png16);
    assert!(
        vat.power_of_two && vat.primitives[0].tangents.is_none(),
        "greenman has no tangents"
    );
    assert!(
        c.records()
            .rig
            .as_ref()
            .unwrap()
            .anchors
            .iter()
            .any(|a| a.node == "socket_hat")
    );
    assert!(c.records().weights.as_ref().unwrap().max_influences == 4);
    let fox = Container::open(&dir.path().join("baked/khronos/Fox/Fox.rigbake")).unwrap();
    assert!(
        matches!(
            fox.metadata().textures[0].storage,
            rigbake_format::meta::Storage::Section(_)
        ),
        "embedded"
    );
}

#[test]
fn one_corrupt_file_fails_alone_and_the_rest_bake() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir_all(models.join("sub")).unwrap();
    for f in ["two_joint.gltf", "tentacle.glb", "spec_worked_example.glb"] {
        std::fs::copy(fixtures().join(f), models.join("sub").join(f)).unwrap();
    }
    let mut bad = std::fs::read(fixtures().join("tentacle.glb")).unwrap();
    bad.truncate(bad.len() / 2);
    std::fs::write(models.join("broken.glb"), bad).unwrap();
    let out = dir.path().join("out");
    let r = rigbake()
        .args(["bake", "--json"])
        .arg(&models)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let rep = report(&r);
    let st = statuses(&rep);
    assert_eq!(st[0], ("broken.glb".to_owned(), "failed".to_owned()));
    assert!(st[1..].iter().all(|(_, s)| s == "baked"), "{st:?}");
    let failed = &rep["models"][0];
    assert!(
        failed["message"].as_str().unwrap().contains("broken.glb"),
        "{failed}"
    );
    for f in ["two_joint", "tentacle", "spec_worked_example"] {
        assert!(
            out.join("sub")
                .join(f)
                .join(format!("{f}.rigbake"))
                .is_file(),
            "{f}"
        );
    }
    assert!(
        !out.join("broken").exists(),
        "no output folder for the failed model"
    );
    // An injected panic in one model is reported for that file only.
    let out2 = dir.path().join("out2");
    let r = rigbake()
        .env("RIGBAKE_FAULT", "panic:tentacle")
        .args(["bake", "--json"])
        .arg(models.join("sub"))
        .arg("--out")
        .arg(&out2)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let rep = report(&r);
    let st = statuses(&rep);
    assert_eq!(st.iter().filter(|(_, s)| s == "baked").count(), 2, "{st:?}");
    let t = rep["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["input"] == "tentacle.glb")
        .unwrap();
    assert!(
        t["message"].as_str().unwrap().contains("internal error"),
        "{t}"
    );
}

#[test]
fn outputs_are_identical_across_job_counts_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for (i, jobs) in ["1", "2", "2", "3", "8"].iter().enumerate() {
        let out = dir.path().join(format!("out{i}"));
        let r = rigbake()
            .args([
                "bake",
                "--quiet",
                "--vat",
                "--normals",
                "--anchors",
                "auto",
                "--jobs",
                jobs,
            ])
            .arg(fixtures())
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        // The degenerate fixtures fail (exit 1); everything else bakes.
        assert_eq!(r.status.code(), Some(1));
        runs.push(tree(&out));
    }
    assert!(runs[0].len() > 20);
    for other in &runs[1..] {
        assert_eq!(runs[0].len(), other.len());
        for ((pa, a), (pb, b)) in runs[0].iter().zip(other) {
            assert_eq!(pa, pb);
            assert!(a == b, "{} differs between runs", pa.display());
        }
    }
}

#[test]
fn unchanged_models_are_skipped_and_one_changed_option_rebakes_one_model() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("rigbake.toml");
    let write = |fps: u32| {
        let text = format!(
            "models = \"{}\"\nout = \"o\"\n[[model]]\npath = \"*.gl*\"\n[[model]]\npath = \"tentacle.glb\"\nfps = {fps}\n",
            fixtures().display().to_string().replace('\\', "/")
        );
        std::fs::write(&manifest, text).unwrap();
    };
    let run = || {
        let r = rigbake()
            .args(["bake", "--json", "--manifest"])
            .arg(&manifest)
            .output()
            .unwrap();
        statuses(&report(&r))
    };
    write(30);
    let first = run();
    assert!(first.iter().any(|(_, s)| s == "baked"));
    let second = run();
    for ((id, a), (_, b)) in first.iter().zip(&second) {
        let expected = if a == "baked" {
            "up_to_date"
        } else {
            a.as_str()
        };
        assert_eq!(b, expected, "{id}");
    }
    write(24);
    let third = run();
    for (id, s) in &third {
        let expected = match (
            id.as_str(),
            first.iter().find(|(i, _)| i == id).unwrap().1.as_str(),
        ) {
            ("tentacle.glb", _) => "baked",
            (_, "baked") => "up_to_date",
            (_, other) => other,
        };
        assert_eq!(s, expected, "{id}");
    }
    // --force rebakes everything.
    let r = rigbake()
        .args(["bake", "--json", "--force", "--manifest"])
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(statuses(&report(&r)).iter().all(|(_, s)| s != "up_to_date"));
    // Deleting an output file makes the model stale again.
    std::fs::remove_file(dir.path().join("o/two_joint/bones.skin0.exr")).unwrap();
    let st = run();
    assert_eq!(
        st.iter().find(|(i, _)| i == "two_joint.gltf").unwrap().1,
        "baked"
    );
}

#[test]
fn an_interrupted_bake_leaves_no_partial_file_under_a_final_name() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixtures().join("tentacle.glb");
    let out = dir.path().join("out");
    // A first good bake.
    rigbake()
        .args(["bake", "--quiet", "--vat"])
        .arg(&model)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let before = tree(&out);
    // A rebake killed after writing its temporaries, before renaming them.
    let r = rigbake()
        .env("RIGBAKE_FAULT", "abort-before-commit")
        .args(["bake", "--quiet", "--force", "--vat", "--fps", "24"])
        .arg(&model)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(!r.status.success(), "the process was killed");
    let after = tree(&out);
    let finals: Vec<_> = after
        .iter()
        .filter(|(p, _)| !p.to_string_lossy().ends_with(".tmp"))
        .cloned()
        .collect();
    assert_eq!(
        finals, before,
        "final names hold exactly the previous good outputs"
    );
    assert!(
        after.len() > before.len(),
        "the killed run had written temporaries"
    );
    // The next run cleans nothing up by itself but bakes correctly.
    rigbake()
        .args(["bake", "--quiet", "--fps", "24", "--vat"])
        .arg(&model)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let c = Container::open(&out.join("tentacle/tentacle.rigbake")).unwrap();
    assert_eq!(c.metadata().options.fps, 24.0);
}

#[test]
fn shards_bake_the_full_set_exactly_once_and_reports_merge() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut reports = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for k in 1..=3 {
        let r = rigbake()
            .args(["bake", "--json", "--shard", &format!("{k}/3")])
            .arg(fixtures())
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let file = dir.path().join(format!("report{k}.json"));
        std::fs::write(&file, &r.stdout).unwrap();
        reports.push(file);
        seen.extend(statuses(&report(&r)).into_iter().map(|(id, _)| id));
    }
    let all: Vec<String> = rigbake::discover::find_models(&fixtures())
        .unwrap()
        .into_iter()
        .map(|(_, id)| id)
        .collect();
    seen.sort();
    assert_eq!(seen, all, "every model in exactly one shard");
    let r = rigbake()
        .arg("merge-report")
        .arg("--json")
        .args(&reports)
        .output()
        .unwrap();
    assert_eq!(
        r.status.code(),
        Some(1),
        "the degenerate fixtures failed in some shard"
    );
    let merged = report(&r);
    let ids: Vec<String> = statuses(&merged).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, all);
    assert_eq!(merged["shards"], serde_json::json!(["1/3", "2/3", "3/3"]));
    // Merging a shard twice is refused.
    let r = rigbake()
        .arg("merge-report")
        .arg(&reports[0])
        .arg(&reports[0])
        .output()
        .unwrap();
    assert_ne!(r.status.code(), Some(0));
}

#[test]
fn identical_skins_across_models_share_one_bone_texture() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    // Two copies of one character under different names: same skin, same
    // clips, so the same bone texture.
    for name in ["a.glb", "b.glb"] {
        std::fs::copy(fixtures().join("tentacle.glb"), models.join(name)).unwrap();
    }
    let out = dir.path().join("out");
    rigbake()
        .args(["bake", "--quiet", "--share-bones"])
        .arg(&models)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let shared: Vec<_> = std::fs::read_dir(out.join("_shared/bones"))
        .unwrap()
        .collect();
    assert_eq!(shared.len(), 1, "one shared texture");
    for m in ["a", "b"] {
        let c = Container::open(&out.join(m).join(format!("{m}.rigbake"))).unwrap();
        let name = &c.metadata().textures[0].name;
        assert!(name.starts_with("../_shared/bones/"), "{name}");
        assert!(out.join(m).join(name).is_file());
        assert!(!out.join(m).join("bones.skin0.exr").exists());
    }
    let r = common::rigbake(&[
        "inspect".as_ref(),
        "--verify".as_ref(),
        out.join("a/a.rigbake").as_os_str(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}

/// Validates a `--json` report against formats/report.schema.json.
fn assert_valid_report(doc: &serde_json::Value) {
    let validator = common::schema_validator("report.schema.json");
    common::assert_schema(&validator, doc, "the --json report");
}

/// (path, bytes) of a report model's outputs, sorted.
fn outputs_of(m: &serde_json::Value) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = m["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["path"].as_str().unwrap().to_owned(),
                o["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn the_json_report_carries_warnings_every_output_and_paths_relative_to_out() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::copy(fixtures().join("tentacle.glb"), work.join("tentacle.glb")).unwrap();
    // `--out` as a CI script might spell it.
    let run = |flags: &[&str]| {
        let r = rigbake()
            .current_dir(&work)
            .args(["bake", "--json", "tentacle.glb", "--out", "./../out"])
            .args(flags)
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let doc = report(&r);
        assert_valid_report(&doc);
        assert_eq!(doc["out"], "./../out");
        doc
    };
    let out = dir.path().join("out");
    let flags = ["--vat", "--max-influences", "1", "--root-node", "nowhere"];
    let baked = run(&flags);
    let model = &baked["models"][0];
    assert_eq!(model["status"], "baked");
    let warnings: Vec<&str> = model["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("`nowhere`") && w.contains("unused")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("per vertex (--max-influences)")),
        "{warnings:?}"
    );
    let written = outputs_of(model);
    assert!(
        written
            .iter()
            .any(|(p, _)| p == "tentacle/tentacle.rigbake"),
        "{written:?}"
    );
    assert!(
        written
            .iter()
            .any(|(p, _)| p == "tentacle/tentacle.vat.glb"),
        "{written:?}"
    );
    for (path, bytes) in &written {
        assert!(!path.starts_with('.') && !path.starts_with('/'), "{path}");
        assert_eq!(
            std::fs::metadata(out.join(path)).unwrap().len(),
            *bytes,
            "{path}"
        );
    }

    // Up to date: the same files, so a CI job can collect its artifacts
    // from the report whichever way the model went.
    let again = run(&flags);
    let model = &again["models"][0];
    assert_eq!(model["status"], "up_to_date");
    assert_eq!(outputs_of(model), written);
    assert_eq!(again["totals"]["bytes"], 0, "nothing was written");

    // Rebaked without --vat: the VAT files the previous container listed
    // are removed and reported; a file rigbake never wrote stays.
    std::fs::write(out.join("tentacle/notes.txt"), b"mine").unwrap();
    let rebaked = run(&["--max-influences", "1"]);
    let model = &rebaked["models"][0];
    assert_eq!(model["status"], "baked");
    let removed: Vec<&str> = model["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    let vat_files: Vec<&str> = written
        .iter()
        .map(|(p, _)| p.as_str())
        .filter(|p| p.contains(".vat."))
        .collect();
    assert!(vat_files.len() >= 2, "{vat_files:?}");
    let mut sorted = removed.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, vat_files);
    for p in &removed {
        assert!(!out.join(p).exists(), "{p} is still there");
    }
    assert_eq!(
        std::fs::read(out.join("tentacle/notes.txt")).unwrap(),
        b"mine"
    );
    let left: Vec<String> = std::fs::read_dir(out.join("tentacle"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!left.iter().any(|n| n.contains(".vat.")), "{left:?}");
    // The new bake is whole.
    let r = common::rigbake(&[
        "inspect".as_ref(),
        "--verify".as_ref(),
        out.join("tentacle/tentacle.rigbake").as_os_str(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}

#[cfg(unix)]
#[test]
fn outputs_get_an_ordinary_files_mode_under_the_callers_umask() {
    use std::os::unix::fs::PermissionsExt;
    let bin = assert_cmd::cargo::cargo_bin("rigbake");
    for (umask, want) in [("022", 0o644), ("027", 0o640), ("002", 0o664)] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask {umask} && exec \"$0\" bake -q --vat --share-bones \"$1\" --out \"$2\""
            ))
            .arg(&bin)
            .arg(fixtures().join("tentacle.glb"))
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        let mut files = 0;
        for entry in walkdir::WalkDir::new(&out) {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                let mode = entry.metadata().unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, want, "umask {umask}: {}", entry.path().display());
                files += 1;
            }
        }
        // Container, sidecar, meshes, textures, the shared bone texture.
        assert!(files >= 6, "{files} files");
    }
}

#[test]
fn vat_takes_a_manifest_like_bake() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixtures().join("tentacle.glb"),
        dir.path().join("tentacle.glb"),
    )
    .unwrap();
    std::fs::copy(
        fixtures().join("two_joint.gltf"),
        dir.path().join("two_joint.gltf"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("rigbake.toml"),
        "out = \"baked\"\n\n[[model]]\npath = \"tentacle.glb\"\n\n[[model]]\npath = \"two_joint.gltf\"\noutputs = []\n",
    )
    .unwrap();
    // A bare `rigbake vat` in the manifest's folder, and --manifest.
    for explicit in [false, true] {
        let mut cmd = rigbake();
        cmd.current_dir(dir.path())
            .args(["vat", "--json", "--force"]);
        if explicit {
            cmd.args(["--manifest", "rigbake.toml"]);
        }
        let r = cmd.output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let rep = report(&r);
        assert_valid_report(&rep);
        assert_eq!(
            statuses(&rep),
            [
                ("tentacle.glb".to_owned(), "baked".to_owned()),
                ("two_joint.gltf".to_owned(), "skipped".to_owned())
            ]
        );
        let c = Container::open(&dir.path().join("baked/tentacle/tentacle.rigbake")).unwrap();
        assert!(c.records().vat.as_ref().is_some(), "a VAT bake");
        assert!(
            c.metadata().textures.is_empty(),
            "VAT only: no bone textures"
        );
    }
    // No model, no manifest: a usage error that says what to give.
    let empty = tempfile::tempdir().unwrap();
    let r = rigbake()
        .current_dir(empty.path())
        .arg("vat")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("rigbake.toml"));
}

/// A shard report as `bake --json --shard K/2` writes it, by hand: one
/// baked model and (in shard 2) one failed one.
fn shard_report(k: usize) -> serde_json::Value {
    let key = "0123456789abcdef".repeat(4);
    let mut models = vec![serde_json::json!({
        "input": format!("m{k}.glb"),
        "status": "baked",
        "message": null,
        "outputs": [{ "path": format!("m{k}/m{k}.rigbake"), "bytes": 10 }],
        "removed": [],
        "warnings": ["a warning"],
        "key": key,
        "seconds": 0.5
    })];
    if k == 2 {
        models.push(serde_json::json!({
            "input": "z.glb",
            "status": "failed",
            "message": "z.glb: nodes[0]: bad",
            "outputs": [],
            "removed": [],
            "warnings": [],
            "key": null,
            "seconds": 0.1
        }));
    }
    serde_json::json!({
        "schema_version": 2,
        "tool": "rigbake 0.1.0",
        "shards": [format!("{k}/2")],
        "out": "out",
        "seconds": 1.5,
        "models": models,
        "totals": { "baked": 1, "up_to_date": 0, "skipped": 0, "failed": k - 1, "bytes": 10 }
    })
}

#[test]
fn merge_report_refuses_every_field_the_schema_refuses() {
    let validator = common::schema_validator("report.schema.json");
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, doc: &serde_json::Value| {
        let file = dir.path().join(name);
        std::fs::write(&file, serde_json::to_vec(doc).unwrap()).unwrap();
        file
    };
    let second = write("2.json", &shard_report(2));
    // The unmutated reports are valid, merge, and the merge is valid.
    assert_valid_report(&shard_report(1));
    assert_valid_report(&shard_report(2));
    let r = rigbake()
        .args(["merge-report", "--json"])
        .arg(write("1.json", &shard_report(1)))
        .arg(&second)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1), "one model failed");
    assert_valid_report(&report(&r));

    // (the field a mutation breaks, the mutation).
    type Mutation = Box<dyn Fn(&mut serde_json::Value)>;
    let set = |at: &'static str, v: serde_json::Value| -> Mutation {
        Box::new(move |doc| *doc.pointer_mut(at).unwrap() = v.clone())
    };
    let mutations: Vec<(&str, Mutation)> = vec![
        ("status", set("/models/0/status", "half_baked".into())),
        ("extra", Box::new(|d| d["extra"] = 1.into())),
        ("extra", Box::new(|d| d["models"][0]["extra"] = 1.into())),
        ("extra", Box::new(|d| d["totals"]["extra"] = 1.into())),
        (
            "extra",
            Box::new(|d| d["models"][0]["outputs"][0]["extra"] = 1.into()),
        ),
        (
            "warnings",
            Box::new(|d| drop(d["models"][0].as_object_mut().unwrap().remove("warnings"))),
        ),
        (
            "key",
            Box::new(|d| drop(d["models"][0].as_object_mut().unwrap().remove("key"))),
        ),
        (
            "out",
            Box::new(|d| drop(d.as_object_mut().unwrap().remove("out"))),
        ),
        ("seconds", set("/seconds", "1".into())),
        ("seconds", set("/seconds", (-1.0).into())),
        ("seconds", set("/models/0/seconds", (-0.5).into())),
        ("bytes", set("/models/0/outputs/0/bytes", (-1).into())),
        ("bytes", set("/models/0/outputs/0/bytes", "10".into())),
        ("baked", set("/totals/baked", (-1).into())),
        ("failed", set("/totals/failed", 0.5.into())),
        ("shards", set("/shards", "1/2".into())),
        ("shards", set("/shards/0", "01/2".into())),
        ("shards", set("/shards/0", " 1/2".into())),
        ("schema_version", set("/schema_version", 3.into())),
        ("tool", set("/tool", "bakery 1.0".into())),
        ("tool", set("/tool", 7.into())),
        ("input", set("/models/0/input", serde_json::Value::Null)),
        (
            "path",
            set("/models/0/outputs/0/path", "/etc/passwd".into()),
        ),
        (
            "path",
            set("/models/0/outputs/0/path", "./m1/m1.rigbake".into()),
        ),
        ("path", set("/models/0/outputs/0/path", "".into())),
        (
            "removed",
            set("/models/0/removed", serde_json::json!(["/abs"])),
        ),
        (
            "warnings",
            set("/models/0/warnings", serde_json::json!([1])),
        ),
        ("key", set("/models/0/key", "K".into())),
        ("key", set("/models/0/key", serde_json::Value::Null)),
        ("message", set("/models/0/message", "why".into())),
        ("outputs", set("/models/0/outputs", serde_json::json!([]))),
        ("models", set("/models", serde_json::json!({}))),
    ];
    for (i, (field, mutate)) in mutations.iter().enumerate() {
        let mut doc = shard_report(1);
        mutate(&mut doc);
        assert!(
            !validator.is_valid(&doc),
            "mutation {i} ({field}) is valid by the schema: the test is wrong"
        );
        let file = write(&format!("bad{i}.json"), &doc);
        let r = rigbake()
            .args(["merge-report", "--json"])
            .arg(&file)
            .arg(&second)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(
            r.status.code(),
            Some(2),
            "mutation {i} ({field}) merged: {err}"
        );
        assert!(r.stdout.is_empty(), "mutation {i}: printed a report");
        assert!(
            err.contains(&format!("bad{i}.json")) && err.contains(field),
            "mutation {i}: the error names neither the file nor `{field}`: {err}"
        );
    }
    // A failed model with a key, a skipped one without a message.
    for (i, mutate) in [
        set("/models/1/key", "0123456789abcdef".repeat(4).into()),
        set("/models/1/status", "skipped".into()),
    ]
    .into_iter()
    .enumerate()
    {
        let mut doc = shard_report(2);
        mutate(&mut doc);
        if i == 1 {
            doc["models"][1]["message"] = serde_json::Value::Null;
        }
        assert!(!validator.is_valid(&doc), "case {i}");
        let r = rigbake()
            .arg("merge-report")
            .arg(dir.path().join("1.json"))
            .arg(write(&format!("worse{i}.json"), &doc))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "case {i}: {err}");
        assert!(
            err.contains(&format!("worse{i}.json")) && err.contains("models[1]"),
            "{err}"
        );
    }
}

// Batch bakes of many models through the command line: one line per model
// (baked, skipped with its reason, or the error), exit codes 0, 1 and 2.

use rigbake_fixtures::testkit::models::UNSKINNED;

#[test]
fn every_shared_model_bakes_or_is_refused_cleanly() {
    let Some(models) = shared_models("every_shared_model_bakes_or_is_refused_cleanly") else {
        return;
    };
    let files = common::model_files(&models);
    let out = tempfile::tempdir().unwrap();
    let result = common::bake(&files, out.path(), &[]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        result.status.code(),
        Some(0),
        "every model bakes or is skipped (the Draco file is decoded):\n{stderr}"
    );
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let shown = file.display().to_string();
        // Warnings (morph targets the bone textures drop) come before the
        // report line.
        let line = stderr
            .lines()
            .find(|l| l.contains(&shown) && !l.starts_with("warning: "))
            .unwrap_or_else(|| panic!("no report line for {shown}:\n{stderr}"));
        // Lines read `[n/N] baked ...`, `[n/N] skipped ...`, `[n/N] error: ...`.
        let line = line.split_once("] ").map_or(line, |(_, rest)| rest);
        if UNSKINNED.contains(&name.as_str()) {
            assert!(line.starts_with("skipped "), "{line}");
            assert!(line.contains("no skinned mesh"), "{line}");
            // An unskinned model with animated meshes: the line says what
            // bakes it (the greenman props have no animation).
            assert_eq!(
                line.contains("`--vat` bakes"),
                !name.starts_with("greenman_"),
                "{line}"
            );
        } else {
            assert!(line.starts_with("baked "), "{line}");
            let dir = out.path().join(&name);
            let container = dir.join(format!("{name}.rigbake"));
            let meta = Container::open(&container)
                .unwrap_or_else(|e| panic!("{}: {e}", container.display()))
                .metadata()
                .clone();
            assert!(!meta.textures.is_empty());
            for t in &meta.textures {
                assert!(dir.join(&t.name).is_file(), "{name}: {} missing", t.name);
            }
        }
    }
}

#[test]
fn exit_codes_follow_the_contract() {
    let out = tempfile::tempdir().unwrap();
    let good = rigbake_fixtures::fixture("two_joint.gltf");
    let bad = rigbake_fixtures::fixture("degenerate/cycle.gltf");
    let r = common::bake(std::slice::from_ref(&good), out.path(), &[]);
    assert_eq!(r.status.code(), Some(0));
    let r = common::bake(&[good.clone(), bad.clone()], out.path(), &[]);
    assert_eq!(r.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    let line = stderr.lines().find(|l| l.contains("] error:")).unwrap();
    assert!(
        line.contains("cycle.gltf") && line.contains("nodes[") && line.contains("cycle"),
        "{line}"
    );
    assert!(
        stderr.contains("0 baked, 1 up to date, 0 skipped, 1 failed"),
        "the good model was baked by the first run: {stderr}"
    );
    // Usage errors exit with 2.
    let r = common::bake(std::slice::from_ref(&good), out.path(), &["--fps", "0"]);
    assert_eq!(r.status.code(), Some(2));
    let r = common::rigbake(&["bake".as_ref(), good.as_os_str()]);
    assert_eq!(r.status.code(), Some(2), "missing --out");
    // A model path that does not exist is a usage error (exit 2) naming it
    // (issue 19 item 12): nothing was baked.
    let r = common::bake(&[PathBuf::from("does/not/exist.glb")], out.path(), &[]);
    assert_eq!(r.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains("exist.glb") && stderr.contains("no such file or folder"),
        "{stderr}"
    );
}
