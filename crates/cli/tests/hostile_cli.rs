//! Hostile command lines, names and folder trees: every one ends in a clear
//! error or a correct bake, never a panic, a silent drop, or a write outside
//! `--out`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `rigbake` binary (`RIGBAKE_BIN` overrides the one cargo built, for
/// target folders shared between checkouts).
fn rigbake() -> Command {
    Command::new(
        std::env::var_os("RIGBAKE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_rigbake").into()),
    )
}

fn fixture(name: &str) -> PathBuf {
    rigbake_fixtures::fixtures_dir().join(name)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn bake(inputs: &[&Path], out: &Path, flags: &[&str]) -> Output {
    let mut c = rigbake();
    c.arg("bake").args(inputs).arg("--out").arg(out).args(flags);
    c.output().expect("rigbake runs")
}

/// Asserts a usage error (exit 2) whose message contains every `needle`.
fn usage_error(o: &Output, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    for n in needles {
        assert!(e.contains(n), "`{n}` not in: {e}");
    }
}

#[test]
fn jobs_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture("tentacle.glb");
    for jobs in ["0", "100000"] {
        let o = bake(&[&model], &dir.path().join("out"), &["--jobs", jobs]);
        usage_error(&o, &["--jobs", "1024", jobs]);
    }
    assert!(!dir.path().join("out").exists());
}

#[test]
fn max_texture_size_is_bounded_on_the_flag_and_in_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture("tentacle.glb");
    for size in ["0", "65537", "4294967296"] {
        let o = bake(
            &[&model],
            &dir.path().join("out"),
            &["--max-texture-size", size],
        );
        usage_error(&o, &["--max-texture-size", "65536", size]);
    }
    std::fs::copy(&model, dir.path().join("m.glb")).unwrap();
    let manifest = dir.path().join("rigbake.toml");
    std::fs::write(
        &manifest,
        "models = \".\"\nout = \"out\"\n[defaults]\nmax_texture_size = 4294967296\n[[model]]\npath = \"*.glb\"\n",
    )
    .unwrap();
    let o = rigbake()
        .arg("bake")
        .arg("--manifest")
        .arg(&manifest)
        .output()
        .unwrap();
    usage_error(&o, &["max_texture_size", "4294967296"]);
}

fn manifest_with_outputs(dir: &Path, outputs: &str) -> PathBuf {
    std::fs::copy(fixture("tentacle.glb"), dir.join("m.glb")).unwrap();
    let manifest = dir.join("rigbake.toml");
    std::fs::write(
        &manifest,
        format!(
            "models = \".\"\nout = \"out\"\n[[model]]\npath = \"*.glb\"\noutputs = {outputs}\n"
        ),
    )
    .unwrap();
    manifest
}

#[test]
fn anchors_without_bones_are_a_settings_error_not_a_silent_skip() {
    for outputs in [r#"["anchors"]"#, r#"["vat", "anchors"]"#, r#"["weights"]"#] {
        let dir = tempfile::tempdir().unwrap();
        let manifest = manifest_with_outputs(dir.path(), outputs);
        let o = rigbake()
            .arg("bake")
            .arg("--manifest")
            .arg(&manifest)
            .output()
            .unwrap();
        usage_error(&o, &["m.glb", "bones"]);
        assert!(!dir.path().join("out").exists(), "{outputs}");
    }
}

#[test]
fn an_empty_outputs_list_is_skipped_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest_with_outputs(dir.path(), "[]");
    let o = rigbake()
        .args(["bake", "--json", "--manifest"])
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let m = &r["models"][0];
    assert_eq!(m["status"], "skipped");
    assert!(m["message"].as_str().is_some_and(|s| !s.is_empty()), "{m}");
}

/// Bakes `model` (a fixture) into a fresh folder; returns (temp dir, the
/// container path).
fn baked(model: &Path, flags: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = bake(&[model], &out, flags);
    assert!(o.status.success(), "{}", stderr(&o));
    let stem = model.file_stem().unwrap().to_string_lossy().into_owned();
    let container = out.join(&stem).join(format!("{stem}.rigbake"));
    assert!(container.is_file(), "{}", container.display());
    (dir, container)
}

#[test]
fn inspect_into_a_closed_pipe_does_not_panic() {
    let (_dir, container) = baked(&fixture("tentacle.glb"), &[]);
    for json in [false, true] {
        let mut c = rigbake();
        c.arg("inspect").arg(&container);
        if json {
            c.arg("--json");
        }
        let mut child = c
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader quits before reading anything
        let o = child.wait_with_output().unwrap();
        let e = stderr(&o);
        assert_ne!(o.status.code(), Some(101), "{e}");
        assert!(o.status.code().is_some(), "killed by a signal: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}

/// A copy of the `two_joint` fixture with its mesh node and first clip
/// renamed, written as a .glb into `dir`.
fn renamed_two_joint(dir: &Path, file: &str, node: &str, clip: &str) -> PathBuf {
    let mut b = rigbake_fixtures::models::two_joint();
    b.get_mut("nodes", 2).insert("name".into(), node.into());
    b.get_mut("animations", 0)
        .insert("name".into(), clip.into());
    let path = dir.join(file);
    std::fs::write(&path, b.to_glb()).unwrap();
    path
}

#[test]
fn inspect_escapes_control_characters_and_cuts_huge_names() {
    let dir = tempfile::tempdir().unwrap();
    let long = "W".repeat(65_536);
    let model = renamed_two_joint(dir.path(), "evil.glb", "m\u{1b}[2J\r\u{0}x", &long);
    let (_out, container) = baked(&model, &[]);
    let o = rigbake().arg("inspect").arg(&container).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!text.contains(['\u{1b}', '\r', '\u{0}']), "{text:?}");
    assert!(text.contains("\\u{1b}"), "{text}");
    assert!(text.contains('…'), "{text}");
    assert!(
        !text.contains(&"W".repeat(100)),
        "a huge name printed whole"
    );
    // The JSON document keeps names whole (escaped by JSON itself).
    let o = rigbake()
        .args(["inspect", "--json"])
        .arg(&container)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let clips = doc["metadata"]["clips"].as_array().unwrap();
    assert!(clips.iter().any(|c| c["name"] == long.as_str()));
}

#[test]
fn a_glob_past_the_regex_limits_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("tentacle.glb"), dir.path().join("m.glb")).unwrap();
    let huge = "{a,".repeat(2000) + &"}".repeat(2000);
    let big = "[a-z]*?".repeat(20_000);
    let nested = "{".repeat(300) + "m.glb" + &"}".repeat(300);
    for pattern in [huge, big, nested, "**/*.glb".repeat(600)] {
        let manifest = dir.path().join("rigbake.toml");
        std::fs::write(
            &manifest,
            format!("models = \".\"\nout = \"out\"\n[[model]]\npath = \"{pattern}\"\n"),
        )
        .unwrap();
        let o = rigbake()
            .arg("bake")
            .arg("--manifest")
            .arg(&manifest)
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_ne!(o.status.code(), Some(101), "{e}");
        assert!(!e.contains("panicked"), "{e}");
        assert!(e.len() < 2000, "the error repeats the whole pattern");
        if o.status.code() == Some(2) {
            assert!(e.contains("rigbake.toml:4"), "{e}");
        }
    }
}

#[test]
fn a_model_named_dots_cannot_write_outside_out() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["...glb", "..gltf"] {
        let model = dir.path().join(name);
        std::fs::copy(fixture("tentacle.glb"), &model).unwrap();
        let out = dir.path().join("a").join("out");
        let o = bake(&[&model], &out, &[]);
        usage_error(&o, &["outside --out"]);
        assert!(!dir.path().join("a").exists(), "{name}");
    }
}

#[test]
fn long_node_names_get_bounded_vat_file_names() {
    // Node names reach file names in the per-primitive layout (the atlas is
    // named after the model).
    let dir = tempfile::tempdir().unwrap();
    let model = renamed_two_joint(dir.path(), "long.glb", &"n".repeat(240), "turn");
    let out = dir.path().join("out");
    let o = bake(
        &[&model],
        &out,
        &[
            "--vat",
            "--normals",
            "--tangents",
            "--vat-layout",
            "per-primitive",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mut names = Vec::new();
    for e in std::fs::read_dir(out.join("long")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(name.len() <= 200, "{name}");
        names.push(name);
    }
    assert!(names.iter().any(|n| n.contains('~')), "{names:?}");
    // Deterministic: a second bake writes the same names.
    let out2 = dir.path().join("out2");
    let o = bake(
        &[&model],
        &out2,
        &[
            "--vat",
            "--normals",
            "--tangents",
            "--vat-layout",
            "per-primitive",
        ],
    );
    assert!(o.status.success());
    let mut again: Vec<String> = std::fs::read_dir(out2.join("long"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    again.sort();
    assert_eq!(names, again);
}

#[test]
fn a_model_over_the_per_model_budget_fails_before_allocating() {
    use rigbake_fixtures::parts::{add_animation, add_channel};
    let dir = tempfile::tempdir().unwrap();
    let mut b = rigbake_fixtures::models::two_joint();
    // 30 instances of the 10-vertex skinned mesh and a 1000 s clip: at
    // 1000 fps the VAT alone would hold about 4.8 GB in memory.
    for i in 0..29 {
        let n = b.node(serde_json::json!({"name": format!("copy{i}"), "mesh": 0, "skin": 0}));
        b.get_mut("scenes", 0)["nodes"]
            .as_array_mut()
            .unwrap()
            .push(n.into());
    }
    let a = add_animation(&mut b, "long");
    let q = rigbake_fixtures::parts::axis_angle([0.0, 0.0, 1.0], 0.0);
    let keys: Vec<f64> = q.iter().chain(&q).copied().collect();
    add_channel(&mut b, a, 1, "rotation", "LINEAR", &[0.0, 1000.0], &keys);
    let model = dir.path().join("heavy.glb");
    std::fs::write(&model, b.to_glb()).unwrap();
    let out = dir.path().join("out");
    let started = std::time::Instant::now();
    let o = rigbake()
        .arg("vat")
        .arg(&model)
        .arg("--out")
        .arg(&out)
        .args(["--fps", "1000", "--clip", "long", "--json"])
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let message = r["models"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("heavy"), "{message}");
    assert!(message.contains("budget"), "{message}");
    assert!(
        started.elapsed().as_secs() < 60,
        "took {:?}",
        started.elapsed()
    );
}

fn json_ids(o: &Output) -> Vec<String> {
    let r: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    r["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["input"].as_str().unwrap().to_owned())
        .collect()
}

#[cfg(unix)]
#[test]
fn non_utf8_names_that_read_the_same_are_not_dropped() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    for name in [&b"m\xff.glb"[..], &b"m\xfe.glb"[..]] {
        let p = models.join(std::ffi::OsStr::from_bytes(name));
        if std::fs::copy(fixture("tentacle.glb"), &p).is_err() {
            return; // a file system that refuses such names
        }
    }
    let o = bake(&[&models], &dir.path().join("out"), &[]);
    usage_error(&o, &["\\xFF", "\\xFE"]);
}

#[test]
fn the_same_file_given_twice_bakes_once() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.glb");
    std::fs::copy(fixture("tentacle.glb"), &model).unwrap();
    let again = dir.path().join(".").join("m.glb");
    let o = bake(&[&model, &again], &dir.path().join("out"), &["--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json_ids(&o).len(), 1);
}

#[cfg(unix)]
#[test]
fn discovery_follows_file_links_and_skips_output_trees() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir_all(models.join("real")).unwrap();
    std::fs::copy(fixture("tentacle.glb"), models.join("real/a.glb")).unwrap();
    let elsewhere = dir.path().join("elsewhere.glb");
    std::fs::copy(fixture("two_skins.glb"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, models.join("linked.glb")).unwrap();
    // A linked folder is not followed (no loops).
    std::os::unix::fs::symlink(&models, models.join("loop")).unwrap();
    // Another run's output root (holds a lock file) is not an input.
    std::fs::create_dir_all(models.join("old_out/x")).unwrap();
    std::fs::write(models.join("old_out/.rigbake.lock"), b"").unwrap();
    std::fs::copy(fixture("tentacle.glb"), models.join("old_out/x/x.glb")).unwrap();
    // The output folder inside the models folder.
    let out = models.join("baked");
    for run in 0..2 {
        let o = bake(&[&models], &out, &["--json"]);
        assert!(o.status.success(), "run {run}: {}", stderr(&o));
        assert_eq!(json_ids(&o), ["linked.glb", "real/a.glb"], "run {run}");
    }
    assert!(out.join("linked/linked.rigbake").is_file());
}

#[cfg(unix)]
#[test]
fn a_dangling_model_link_is_reported_and_the_rest_bake() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    std::fs::copy(fixture("tentacle.glb"), models.join("a.glb")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone.glb"), models.join("b.glb")).unwrap();
    let o = bake(&[&models], &dir.path().join("out"), &["--json"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("b.glb"), "{e}");
    assert_eq!(json_ids(&o), ["a.glb"]);
}

#[cfg(unix)]
#[test]
fn an_unreadable_folder_is_reported_and_the_rest_bake() {
    use std::os::unix::fs::PermissionsExt as _;
    use std::os::unix::process::CommandExt as _;
    let dir = tempfile::tempdir().unwrap();
    let open = std::fs::Permissions::from_mode(0o777);
    std::fs::set_permissions(dir.path(), open.clone()).unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir_all(models.join("ok")).unwrap();
    std::fs::create_dir_all(models.join("shut")).unwrap();
    std::fs::copy(fixture("tentacle.glb"), models.join("ok/a.glb")).unwrap();
    std::fs::copy(fixture("tentacle.glb"), models.join("shut/b.glb")).unwrap();
    for p in [&models, &models.join("ok")] {
        std::fs::set_permissions(p, open.clone()).unwrap();
    }
    for f in [models.join("ok/a.glb"), models.join("shut/b.glb")] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::set_permissions(models.join("shut"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut c = rigbake();
    c.arg("bake")
        .arg(&models)
        .arg("--out")
        .arg(dir.path().join("out"))
        .arg("--json");
    // Root reads every folder: run as nobody then.
    let root = {
        use std::os::unix::fs::MetadataExt as _;
        std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
    };
    if root {
        c.uid(65534).gid(65534);
    }
    let o = c.output().unwrap();
    std::fs::set_permissions(models.join("shut"), open).unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("shut"), "{e}");
    assert_eq!(json_ids(&o), ["ok/a.glb"]);
}

/// A model whose finite transforms and vertices multiply past the range of
/// f32 (a root scaled by 3e38) used to bake "successfully" into a container
/// with infinite bounds and errors that `verify` and `inspect` then refused
/// (found by fuzzing the whole bake, docs/fuzzing.md). Now the bake fails,
/// naming the file, the primitive, the clip and the frame; the batch goes on
/// to the next model, and the bad model leaves no output behind.
#[test]
fn deformed_positions_past_the_f32_range_fail_the_model_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = rigbake_fixtures::models::two_joint();
    b.get_mut("nodes", 0)
        .insert("scale".into(), serde_json::json!([3e38, 3e38, 3e38]));
    let huge = dir.path().join("huge.glb");
    std::fs::write(&huge, b.to_glb()).unwrap();
    let fine = fixture("tentacle.glb");
    for flags in [&[][..], &["--vat", "--normals"][..]] {
        let out = dir.path().join(format!("out{}", flags.len()));
        let o = bake(&[&huge, &fine], &out, flags);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{flags:?}: {e}");
        assert!(
            e.contains("huge.glb")
                && e.contains("meshes[0].primitives[0]")
                && e.contains("the deformed positions of node `mesh` are not finite at clip"),
            "{flags:?}: {e}"
        );
        assert!(
            !out.join("huge").exists(),
            "{flags:?}: the failed model wrote outputs"
        );
        assert!(
            out.join("tentacle/tentacle.rigbake").is_file(),
            "{flags:?}: the batch goes on"
        );
    }
}

/// Finite node scales whose product overflows f32 (a parent and the mesh
/// node each scaled by 1e20: the mesh node's rest-pose global holds 1e40)
/// used to bake with exit 0, writing meshes whose node matrix was infinite
/// in f32 (issue 49, class 5). Now the placement is range-checked at plan
/// time: the model fails naming the file, the node and the value, and
/// writes nothing; the batch goes on.
#[test]
fn placements_past_the_f32_range_fail_the_model_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = rigbake_fixtures::models::two_joint();
    let mesh = b.first_mesh_node();
    let root = b.node_named("root");
    b.get_mut("nodes", mesh)
        .insert("scale".into(), serde_json::json!([1e20, 1e20, 1e20]));
    let big = b.node(serde_json::json!({"name": "big", "scale": [1e20, 1e20, 1e20]}));
    b.add_child(big, mesh);
    b.scene(&[root, big]);
    let huge = dir.path().join("huge.glb");
    std::fs::write(&huge, b.to_glb()).unwrap();
    let fine = fixture("tentacle.glb");
    for flags in [&[][..], &["--vat"][..]] {
        let out = dir.path().join(format!("out{}", flags.len()));
        let o = bake(&[&huge, &fine], &out, flags);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{flags:?}: {e}");
        assert!(
            e.contains("huge.glb")
                && e.contains(&format!("nodes[{mesh}]"))
                && e.contains("node `mesh` holds 1.0000000")
                && e.contains("e40, past the range")
                && e.contains("32-bit floats"),
            "{flags:?}: {e}"
        );
        assert!(
            !out.join("huge").exists(),
            "{flags:?}: the failed model wrote outputs"
        );
        assert!(
            out.join("tentacle/tentacle.rigbake").is_file(),
            "{flags:?}: the batch goes on"
        );
    }
}

/// No output replaces an input of the same run (issue 30, class 9): the
/// OpenVAT export's `<m>.glb` would land on the source itself when the
/// source lies at `OUT/<m>/<m>.glb`, whatever the spelling of --out; the
/// model fails naming both and the source is untouched. Another model's
/// source and a model's external buffer are protected too.
#[test]
fn no_output_ever_replaces_an_input_of_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let hero_dir = dir.path().join("assets/hero");
    std::fs::create_dir_all(&hero_dir).unwrap();
    let hero = hero_dir.join("hero.glb");
    std::fs::copy(fixture("tentacle.glb"), &hero).unwrap();
    let before = std::fs::read(&hero).unwrap();
    for out in [
        dir.path().join("assets"),
        dir.path().join("assets/./hero/.."),
    ] {
        let o = rigbake()
            .arg("vat")
            .arg(&hero)
            .args(["--compat", "openvat", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(
            e.contains("never replaces an input") && e.contains("hero.glb"),
            "{e}"
        );
        assert_eq!(
            std::fs::read(&hero).unwrap(),
            before,
            "the source was overwritten"
        );
        assert!(
            !hero_dir.join("hero.rigbake").exists(),
            "nothing of the model is committed"
        );
    }
    // Another model of the same run at a final name: refused the same way.
    let models = dir.path().join("models");
    std::fs::create_dir_all(models.join("a")).unwrap();
    std::fs::copy(fixture("tentacle.glb"), models.join("a.glb")).unwrap();
    // Model `a/a.weights.glb` is an input of the run, and also the name
    // of model `a.glb`'s weights mesh in OUT/a/.
    std::fs::copy(fixture("tentacle.glb"), models.join("a/a.weights.glb")).unwrap();
    let victim = std::fs::read(models.join("a/a.weights.glb")).unwrap();
    let o = rigbake()
        .arg("bake")
        .arg(models.join("a.glb"))
        .arg(models.join("a/a.weights.glb"))
        .arg("--out")
        .arg(&models)
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("never replaces an input"), "{e}");
    assert_eq!(
        std::fs::read(models.join("a/a.weights.glb")).unwrap(),
        victim
    );
    // preview's image never replaces a texture of the bake it draws.
    let out = dir.path().join("png");
    let o = bake(
        &[&fixture("tentacle.glb")],
        &out,
        &["--vat", "--format", "png16"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let texture = std::fs::read_dir(out.join("tentacle"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "png"))
        .expect("a PNG texture");
    let bytes = std::fs::read(&texture).unwrap();
    let o = rigbake()
        .arg("preview")
        .arg(out.join("tentacle/tentacle.rigbake"))
        .arg("--out")
        .arg(&texture)
        .output()
        .unwrap();
    usage_error(&o, &["never replaces an input"]);
    assert_eq!(std::fs::read(&texture).unwrap(), bytes);
}

/// Every number the OpenVAT export writes is finite (issue 30, class 10):
/// finite positions (+-3e38) whose offsets from frame 0 overflow f32 fail
/// the model, naming the primitive, instead of writing infinities into the
/// EXR and `null` into remap_info.json with exit 0.
#[test]
fn openvat_offsets_past_the_f32_range_fail_the_model() {
    use rigbake_fixtures::parts::{add_animation, add_channel};
    let dir = tempfile::tempdir().unwrap();
    let mut b = rigbake_fixtures::models::two_joint();
    let root = b.node_named("root");
    let a = add_animation(&mut b, "flip");
    let s = 1.5e38;
    add_channel(
        &mut b,
        a,
        root,
        "scale",
        "LINEAR",
        &[0.0, 1.0],
        &[s, s, s, -s, -s, -s],
    );
    let model = dir.path().join("flip.glb");
    std::fs::write(&model, b.to_glb()).unwrap();
    let out = dir.path().join("out");
    let o = rigbake()
        .arg("vat")
        .arg(&model)
        .args([
            "--compat", "openvat", "--clip", "flip", "--format", "exr32", "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("flip.glb") && e.contains("meshes[0].primitives[0]") && e.contains("not finite"),
        "{e}"
    );
    assert!(!out.join("flip").exists(), "the failed model wrote outputs");
    // rigbake's own VAT of the same clip stores positions, not offsets,
    // and bakes.
    let o = bake(
        &[&model],
        &out,
        &["--vat", "--clip", "flip", "--format", "exr32"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A name two nodes share picks neither silently (issue 30, class 11):
/// `--root-node` and `--anchor` refuse it, list both with their paths and
/// indices, and take the path or `#N` instead.
#[test]
fn an_ambiguous_node_name_is_refused_and_says_how_to_pick() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = rigbake_fixtures::models::two_joint();
    // A static second `tip` beside the skeleton.
    let twin = b.node(serde_json::json!({"name": "tip"}));
    let scene_roots: Vec<usize> = b.get_mut("scenes", 0)["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .chain([twin])
        .collect();
    b.get_mut("scenes", 0)["nodes"] = serde_json::json!(scene_roots);
    // And a second `root`, a static scene root too.
    let twin_root = b.node(serde_json::json!({"name": "root"}));
    let mut roots = b.get_mut("scenes", 0)["nodes"].as_array().unwrap().clone();
    roots.push(serde_json::json!(twin_root));
    b.get_mut("scenes", 0)["nodes"] = serde_json::json!(roots);
    let model = dir.path().join("twins.glb");
    std::fs::write(&model, b.to_glb()).unwrap();
    let tip = b.node_named("tip");
    let root = b.node_named("root");
    let cases = [
        (
            vec!["--anchor", "tip"],
            "tip",
            vec!["root/tip".to_owned(), format!("#{tip}")],
        ),
        (
            vec!["--root-motion", "extract", "--root-node", "root"],
            "root",
            // Both are scene roots named `root`: only the index picks.
            vec![format!("#{root}")],
        ),
    ];
    for (flags, name, picks) in cases {
        let out = dir.path().join("out");
        let o = bake(&[&model], &out, &flags);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{flags:?}: {e}");
        assert!(
            e.contains("twins.glb") && e.contains(&format!("`{name}` names 2 nodes")),
            "{e}"
        );
        assert!(e.contains(&picks[0]), "{e}");
        for pick in &picks {
            let flags: Vec<&str> = flags
                .iter()
                .map(|f| if *f == name { pick.as_str() } else { *f })
                .collect();
            let o = bake(&[&model], &out, &flags);
            assert!(o.status.success(), "{flags:?}: {}", stderr(&o));
        }
    }
}

/// Values the container reader refuses are refused where they enter the
/// bake (issue 30, class 8), naming the file and the limit, instead of
/// failing as "a rigbake bug" when the container is read back: a model
/// name too long to name its outputs, a control character in it, more
/// TEXCOORD sets than the UV-set record can name, a root travel past the
/// root-motion record's range.
#[test]
fn values_past_the_readers_limits_are_refused_where_they_enter() {
    use rigbake_fixtures::parts::{add_animation, add_channel};
    let dir = tempfile::tempdir().unwrap();
    let fine = rigbake_fixtures::models::two_joint().to_glb();
    let mut cases: Vec<(PathBuf, Vec<&str>, &str)> = Vec::new();
    let long = dir.path().join(format!("{}.glb", "m".repeat(246)));
    std::fs::write(&long, &fine).unwrap();
    cases.push((long, vec![], "limit of 200"));
    let tab = dir.path().join("a\tb.glb");
    std::fs::write(&tab, &fine).unwrap();
    cases.push((tab, vec![], "control character"));
    let mut b = rigbake_fixtures::models::two_joint();
    let uv = b.floats(&[0.5; 20], "VEC2");
    let attributes = b.get_mut("meshes", 0)["primitives"][0]["attributes"]
        .as_object_mut()
        .unwrap();
    for k in 0..300 {
        attributes.insert(format!("TEXCOORD_{k}"), serde_json::json!(uv));
    }
    let uvs = dir.path().join("uvs.glb");
    std::fs::write(&uvs, b.to_glb()).unwrap();
    cases.push((uvs, vec![], "300 TEXCOORD sets, more than the limit of 128"));
    let mut b = rigbake_fixtures::models::two_joint();
    let root = b.node_named("root");
    let a = add_animation(&mut b, "launch");
    add_channel(
        &mut b,
        a,
        root,
        "translation",
        "LINEAR",
        &[0.0, 1.0],
        &[0.0, 0.0, 0.0, 2e9, 0.0, 0.0],
    );
    let far = dir.path().join("far.glb");
    std::fs::write(&far, b.to_glb()).unwrap();
    cases.push((
        far,
        vec![
            "--clip",
            "launch",
            "--root-motion",
            "extract",
            "--root-node",
            "root",
        ],
        "more than the limit of 1e9",
    ));
    for (model, flags, needle) in &cases {
        let out = dir.path().join("out");
        let o = bake(&[model, &fixture("tentacle.glb")], &out, flags);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{}: {e}", model.display());
        assert!(
            e.contains(needle),
            "{}: `{needle}` not in {e}",
            model.display()
        );
        assert!(!e.contains("rigbake bug"), "{e}");
        let name = model.file_name().unwrap().to_string_lossy();
        // (The end of the name: a control character is printed escaped.)
        assert!(
            e.contains(&name[name.len() - 5..]),
            "the error names the file: {e}"
        );
        assert!(
            out.join("tentacle/tentacle.rigbake").is_file(),
            "the batch goes on"
        );
    }
}

/// A clip name two animations share picks neither (issue 30, class 11):
/// `--clip` refuses it listing both, and `#N` picks one, baked under its
/// own name.
#[test]
fn an_ambiguous_clip_name_is_refused_and_picked_by_index() {
    use rigbake_fixtures::parts::{add_animation, add_channel};
    let dir = tempfile::tempdir().unwrap();
    let mut b = rigbake_fixtures::models::two_joint();
    let tip = b.node_named("tip");
    let a = add_animation(&mut b, "turn_linear");
    add_channel(
        &mut b,
        a,
        tip,
        "translation",
        "LINEAR",
        &[0.0, 2.0],
        &[0.0, 1.0, 0.0, 0.0, 2.0, 0.0],
    );
    let model = dir.path().join("twice.glb");
    std::fs::write(&model, b.to_glb()).unwrap();
    let out = dir.path().join("out");
    let o = bake(&[&model], &out, &["--clip", "turn_linear"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("`turn_linear` names 2 animations") && e.contains("`#0`"),
        "{e}"
    );
    let last = a.to_string();
    let o = bake(&[&model], &out, &["--clip", &format!("#{last}")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let c = rigbake_format::container::Container::open(&out.join("twice/twice.rigbake")).unwrap();
    let clips: Vec<&str> = c.metadata().clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(clips, ["turn_linear"]);
    assert!(
        (c.metadata().clips[0].duration - 2.0).abs() < 1e-9,
        "the second animation"
    );
}
