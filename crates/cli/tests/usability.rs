//! Issue 19 (trial findings), usability items: error advice, anchors.exr
//! with props as anchors, blends naming baked clips; usage errors of
//! `preview` and of VAT settings.

mod common;

use std::ffi::OsStr;
use std::process::Command;

use common::bake;

fn stderr(r: &std::process::Output) -> String {
    String::from_utf8_lossy(&r.stderr).into_owned()
}

#[test]
fn a_too_tall_bone_texture_folds_and_a_too_wide_one_advises_the_3x4_layout() {
    // tentacle: 8 joints (32 pixels wide in mat4), 92 frames at 30 fps.
    // Too tall for 64: the rows fold into two column blocks (issue 16 item
    // 3), recorded in the layout record, instead of failing.
    let out = tempfile::tempdir().unwrap();
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--max-texture-size", "64"],
    );
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let container = out.path().join("tentacle/tentacle.rigbake");
    let c = rigbake_format::container::Container::open(&container).unwrap();
    let folds = &c.records().layout.as_ref().expect("a layout record").folds;
    assert_eq!(folds.len(), 1);
    let f = folds[0];
    assert_eq!(f.block_width, 32, "a block is the unfolded width");
    assert!(f.rows_per_block <= 64, "a block fits the maximum height");
    assert!(
        u64::from(f.rows_per_block) * u64::from(f.blocks_per_page) >= 92,
        "the blocks hold every row: {f:?}"
    );
    assert!(
        f.block_width * f.blocks_per_page <= 64,
        "the blocks fit side by side"
    );
    // Too wide (32 > 24): folding cannot help; the 3x4 layout does, and the
    // advice says so without suggesting fewer frames.
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--max-texture-size", "24", "--fps", "5"],
    );
    assert_eq!(r.status.code(), Some(1));
    let text = stderr(&r);
    assert!(
        text.contains("32 pixels") && text.contains("wider"),
        "{text}"
    );
    assert!(text.contains("mat3x4") && !text.contains("fps"), "{text}");
    // ...and it does: 24 pixels wide.
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &[
            "--max-texture-size",
            "24",
            "--fps",
            "5",
            "--layout",
            "mat3x4",
        ],
    );
    assert!(r.status.success(), "{}", stderr(&r));
}

/// Bakes `spec_worked_example.glb` (clips Move, Idle, Death) with a
/// manifest whose `[[model]]` entry ends with `entries`.
fn bake_worked_example(entries: &str) -> (tempfile::TempDir, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        rigbake_fixtures::fixture("spec_worked_example.glb"),
        dir.path().join("m.glb"),
    )
    .unwrap();
    let manifest = dir.path().join("rigbake.toml");
    std::fs::write(&manifest, format!("[[model]]\npath = \"m.glb\"\n{entries}")).unwrap();
    let r = std::process::Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .args(["bake", "--manifest"])
        .arg(&manifest)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    (dir, r)
}

#[test]
fn blends_name_clips_by_their_baked_names() {
    let clips = |move_name: &str| {
        format!(
            "[[model.clip]]\nsource = \"Move\"\nname = \"{move_name}\"\n[[model.clip]]\nsource = \"Idle\"\n"
        )
    };
    // The blend names the renamed clip `walk`...
    let (renamed, r) = bake_worked_example(&format!(
        "{}[[model.blend]]\na = \"walk\"\nb = \"Idle\"\nweights = [0.25]\n",
        clips("walk")
    ));
    assert!(r.status.success(), "{}", stderr(&r));
    // ...and bakes exactly the rows a blend of its animation `Move` bakes.
    let (plain, r) = bake_worked_example(&format!(
        "{}[[model.blend]]\na = \"Move\"\nb = \"Idle\"\nweights = [0.25]\n",
        clips("Move")
    ));
    assert!(r.status.success(), "{}", stderr(&r));
    let texture =
        |dir: &tempfile::TempDir| std::fs::read(dir.path().join("out/m/bones.skin0.exr")).unwrap();
    assert_eq!(texture(&renamed), texture(&plain));
    let c = rigbake_format::container::Container::open(&renamed.path().join("out/m/m.rigbake"))
        .unwrap();
    let names: Vec<&str> = c.metadata().clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["walk", "Idle", "walk+Idle@0.25"]);
}

#[test]
fn a_blend_with_an_unknown_clip_says_so_and_suggests_names() {
    let (_dir, r) =
        bake_worked_example("[[model.blend]]\na = \"Move\"\nb = \"Idel\"\nweights = [0.5]\n");
    assert_eq!(r.status.code(), Some(1));
    let text = stderr(&r);
    assert!(text.contains("blend `Move` + `Idel`"), "{text}");
    assert!(text.contains("did you mean `Idle`?"), "{text}");
    assert!(!text.contains("Death"), "only close names: {text}");
    // A range clip cannot be blended: the error says why and what works.
    let (_dir, r) = bake_worked_example(
        "[[model.clip]]\nsource = \"Idle\"\nname = \"calm\"\nframes = [0, 10]\n\
         [[model.blend]]\na = \"Move\"\nb = \"calm\"\nweights = [0.5]\n",
    );
    assert_eq!(r.status.code(), Some(1));
    let text = stderr(&r);
    assert!(
        text.contains("blend `Move` + `calm`") && text.contains("time range of `Idle`"),
        "{text}"
    );
}

#[test]
fn an_unknown_clip_of_a_model_with_many_suggests_instead_of_listing_all() {
    let Some(models) = common::shared_models(
        "an_unknown_clip_of_a_model_with_many_suggests_instead_of_listing_all",
    ) else {
        return;
    };
    // Knight has 76 animations.
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        &[models.join("kaykit/Knight.glb")],
        out.path(),
        &["--clip", "Idle", "--blend", "Idle,Walking_Z,0.5"],
    );
    assert_eq!(r.status.code(), Some(1));
    let text = stderr(&r);
    assert!(text.contains("blend `Idle` + `Walking_Z`"), "{text}");
    assert!(
        text.contains("did you mean `Walking_A`, `Walking_B`, `Walking_C`?"),
        "{text}"
    );
    assert!(!text.contains("Death_A"), "no list of all 76 names: {text}");
}

#[test]
fn verify_and_preview_find_the_source_right_after_bake() {
    // Issue 19 item 7: models/tentacle.glb baked into out/ (not beside the
    // container): the container records `../../models/tentacle.glb`.
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    let model = models.join("tentacle.glb");
    std::fs::copy(rigbake_fixtures::fixture("tentacle.glb"), &model).unwrap();
    let out = dir.path().join("out");
    let r = bake(std::slice::from_ref(&models), &out, &[]);
    assert!(r.status.success(), "{}", stderr(&r));
    let container = out.join("tentacle/tentacle.rigbake");
    let c = rigbake_format::container::Container::open(&container).unwrap();
    assert_eq!(
        c.records()
            .source
            .as_ref()
            .map(|s| s.relative_path.as_str()),
        Some("../../models/tentacle.glb")
    );
    let run = |args: &[&std::ffi::OsStr]| common::rigbake(args);
    let verify = || run(&["verify".as_ref(), container.as_os_str()]);
    let r = verify();
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(String::from_utf8_lossy(&r.stdout).contains("PASS"));
    let png = dir.path().join("sheet.png");
    let r = run(&[
        "preview".as_ref(),
        container.as_os_str(),
        "--out".as_ref(),
        png.as_os_str(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(png.is_file());
    // From another working folder too (the path is relative to the
    // container, not to where the command runs).
    let r = std::process::Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("verify")
        .arg(&container)
        .current_dir(&out)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", stderr(&r));
    // Changed since the bake: not used; the error says so and asks for
    // --source (a usage error, as when no source is found).
    let mut bytes = std::fs::read(&model).unwrap();
    bytes.extend_from_slice(b"    ");
    std::fs::write(&model, &bytes).unwrap();
    let r = verify();
    assert_eq!(r.status.code(), Some(2));
    let text = stderr(&r);
    assert!(
        text.contains("../../models/tentacle.glb")
            && text.contains("changed")
            && text.contains("--source"),
        "{text}"
    );
    // Missing: the same, saying it is missing.
    std::fs::remove_file(&model).unwrap();
    let r = verify();
    assert_eq!(r.status.code(), Some(2));
    let text = stderr(&r);
    assert!(
        text.contains("missing") && text.contains("--source"),
        "{text}"
    );
    // --source still wins.
    let r = run(&[
        "verify".as_ref(),
        container.as_os_str(),
        "--source".as_ref(),
        rigbake_fixtures::fixture("tentacle.glb").as_os_str(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
}

#[test]
fn moving_the_output_folder_relative_to_the_models_rebakes() {
    // The recorded path is part of the outputs, so the bake key covers it.
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tentacle.glb");
    std::fs::copy(rigbake_fixtures::fixture("tentacle.glb"), &model).unwrap();
    let out = dir.path().join("out");
    assert!(
        bake(std::slice::from_ref(&model), &out, &[])
            .status
            .success()
    );
    let again = bake(std::slice::from_ref(&model), &out, &[]);
    assert!(stderr(&again).contains("up to date"), "{}", stderr(&again));
    let moved = dir.path().join("deeper/out");
    std::fs::create_dir(dir.path().join("deeper")).unwrap();
    std::fs::rename(&out, &moved).unwrap();
    let r = bake(std::slice::from_ref(&model), &moved, &[]);
    assert!(stderr(&r).contains("baked "), "{}", stderr(&r));
    let c = rigbake_format::container::Container::open(&moved.join("tentacle/tentacle.rigbake"))
        .unwrap();
    assert_eq!(
        c.records().source.as_ref().unwrap().relative_path,
        "../../../tentacle.glb"
    );
}

/// `--output KIND` takes a manifest's output names: `--output vat` bakes
/// what `--vat` bakes, byte for byte, and `--output openvat` adds the
/// OpenVAT export to a VAT bake (no flag of its own needed).
#[test]
fn output_kinds_are_flags_by_their_manifest_names() {
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let files = |args: &[&str]| {
        let out = tempfile::tempdir().unwrap();
        let r = bake(std::slice::from_ref(&model), out.path(), args);
        assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
        let dir = out.path().join("tentacle");
        let mut names: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let bytes = std::fs::read(e.path()).unwrap();
                (e.file_name().to_string_lossy().into_owned(), bytes)
            })
            .collect();
        names.sort();
        names
    };
    let by_flag = files(&["--vat"]);
    assert!(
        by_flag
            .iter()
            .any(|(n, _)| n.ends_with(".vat.positions.exr"))
    );
    assert_eq!(files(&["--output", "vat"]), by_flag);
    let with_openvat = files(&["--output", "vat", "--output", "openvat"]);
    assert!(
        with_openvat
            .iter()
            .any(|(n, _)| n == "tentacle-remap_info.json"),
        "{:?}",
        with_openvat.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
}

/// Issue 50 (newcomer frictions): `inspect FOLDER` is a usage error that
/// names the path once.
#[test]
fn inspect_of_a_folder_is_a_usage_error_naming_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("models");
    std::fs::create_dir(&folder).unwrap();
    let r = common::rigbake(&["inspect".as_ref(), folder.as_os_str()]);
    let text = stderr(&r);
    assert_eq!(r.status.code(), Some(2), "{text}");
    assert_eq!(
        text.matches(&*folder.to_string_lossy()).count(),
        1,
        "{text}"
    );
    assert!(text.contains("is a folder"), "{text}");
}

/// A rebake says why the previous bake was not kept: the file that is
/// missing or changed, the setting that changed, the source that changed.
#[test]
fn a_rebake_names_why() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tentacle.glb");
    std::fs::copy(rigbake_fixtures::fixture("tentacle.glb"), &model).unwrap();
    let out = dir.path().join("out");
    let first = bake(std::slice::from_ref(&model), &out, &[]);
    assert!(first.status.success());
    assert!(
        !stderr(&first).contains("rebaked"),
        "a first bake: {}",
        stderr(&first)
    );
    std::fs::remove_file(out.join("tentacle/bones.skin0.exr")).unwrap();
    let r = bake(std::slice::from_ref(&model), &out, &[]);
    assert!(
        stderr(&r).contains("rebaked: `bones.skin0.exr` of the previous bake is missing"),
        "{}",
        stderr(&r)
    );
    let path = out.join("tentacle/tentacle.weights.glb");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[20] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    let r = bake(std::slice::from_ref(&model), &out, &[]);
    assert!(
        stderr(&r).contains("`tentacle.weights.glb` of the previous bake changed"),
        "{}",
        stderr(&r)
    );
    let r = bake(std::slice::from_ref(&model), &out, &["--fps", "24"]);
    assert!(
        stderr(&r).contains("the setting fps changed (30 to 24)"),
        "{}",
        stderr(&r)
    );
    let r = bake(
        std::slice::from_ref(&model),
        &out,
        &["--fps", "24", "--force"],
    );
    assert!(stderr(&r).contains("rebaked: --force"), "{}", stderr(&r));
}

/// A model baked alone after a folder bake lands in another folder than
/// the folder bake put it: the run warns, naming both.
#[test]
fn a_second_bake_of_one_source_elsewhere_under_out_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models/khronos");
    std::fs::create_dir_all(&models).unwrap();
    let model = models.join("tentacle.glb");
    std::fs::copy(rigbake_fixtures::fixture("tentacle.glb"), &model).unwrap();
    let out = dir.path().join("out");
    let folder = bake(&[dir.path().join("models")], &out, &[]);
    assert!(folder.status.success(), "{}", stderr(&folder));
    assert!(out.join("khronos/tentacle/tentacle.rigbake").is_file());
    let alone = bake(std::slice::from_ref(&model), &out, &[]);
    let text = stderr(&alone);
    assert!(alone.status.success(), "{text}");
    assert!(
        text.contains("a bake of the same source") && text.contains("khronos"),
        "{text}"
    );
    // The folder's own bake is untouched and still up to date.
    let again = bake(&[dir.path().join("models")], &out, &[]);
    assert!(stderr(&again).contains("up to date"), "{}", stderr(&again));
}

/// A manifest `path` may be absolute when it lies under `models`; one
/// outside it says that paths are relative to `models`.
#[test]
fn manifest_paths_may_be_absolute_under_models() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tentacle.glb");
    std::fs::copy(rigbake_fixtures::fixture("tentacle.glb"), &model).unwrap();
    let manifest = dir.path().join("rigbake.toml");
    let write = |path: &str| {
        std::fs::write(
            &manifest,
            format!("out = \"out\"\n[[model]]\npath = {path:?}\n"),
        )
        .unwrap();
    };
    write(&model.canonicalize().unwrap().to_string_lossy());
    let r = common::rigbake(&["bake".as_ref(), "--manifest".as_ref(), manifest.as_os_str()]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(dir.path().join("out/tentacle/tentacle.rigbake").is_file());
    write("/elsewhere/tentacle.glb");
    let r = common::rigbake(&["bake".as_ref(), "--manifest".as_ref(), manifest.as_os_str()]);
    assert_eq!(r.status.code(), Some(2));
    assert!(
        stderr(&r).contains("relative to the manifest's `models` folder"),
        "{}",
        stderr(&r)
    );
}

/// Runs `rigbake preview ARGS`; the exit code and stderr, which never
/// reports a panic.
fn preview(args: &[&OsStr]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("preview")
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap_or(-1), stderr)
}

#[test]
fn preview_usage_errors() {
    let model = rigbake_fixtures::fixture("tentacle.glb");
    // Baked from a copy that is then deleted: the recorded source is gone.
    let models = tempfile::tempdir().unwrap();
    let copy = models.path().join("tentacle.glb");
    std::fs::copy(&model, &copy).unwrap();
    let out = tempfile::tempdir().unwrap();
    let r = common::bake(std::slice::from_ref(&copy), out.path(), &[]);
    assert!(r.status.success());
    std::fs::remove_file(&copy).unwrap();
    let file = out.path().join("tentacle/tentacle.rigbake");
    let png = out.path().join("x.png");
    let base: Vec<&OsStr> = vec![file.as_os_str(), "--out".as_ref(), png.as_os_str()];
    // The recorded source is missing and none is beside the container.
    let (code, stderr) = preview(&base);
    assert_eq!(code, 2);
    assert!(stderr.contains("--source"), "{stderr}");
    let with_source = |extra: &[&str]| {
        let mut a = base.clone();
        a.extend(["--source".as_ref(), model.as_os_str()]);
        a.extend(extra.iter().map(OsStr::new));
        preview(&a)
    };
    assert_eq!(with_source(&["--path", "vat"]).0, 2, "no VAT in this bake");
    assert_eq!(with_source(&["--animate", "nope"]).0, 2);
    assert_eq!(with_source(&["--columns", "0"]).0, 2);
    let (code, _) = with_source(&["--clip", "wave", "--columns", "3"]);
    assert_eq!(code, 0);
    // Huge column counts are refused by the image-size check before any
    // list of cells is sized by them, under a 1 GiB address-space cap
    // (they used to try 16 GiB and abort).
    #[cfg(unix)]
    for columns in ["4294967295", "1000000000"] {
        let mut args: Vec<std::ffi::OsString> = vec!["preview".into()];
        args.extend(base.iter().map(|a| a.to_os_string()));
        args.extend(["--source".into(), model.as_os_str().to_os_string()]);
        args.extend(["--columns".into(), columns.into()]);
        let o = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1048576 && exec \"$@\"")
            .arg("sh")
            .arg(env!("CARGO_BIN_EXE_rigbake"))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--columns {columns}: {stderr}");
        assert!(
            stderr.contains("pixels") && stderr.contains("--columns"),
            "{stderr}"
        );
    }
    let r = common::rigbake(&["preview".as_ref(), "--help".as_ref()]);
    assert!(String::from_utf8_lossy(&r.stdout).contains("--animate"));
}

/// A lookup UV set past TEXCOORD_31 is a usage error (exit 2).
#[test]
fn a_lookup_uv_set_out_of_range_is_a_usage_error() {
    let model = rigbake_fixtures::fixture("textured.gltf");
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--vat", "--lookup-uv-set", "32"],
    );
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
}

/// PNG16 is always deflate: an EXR compression asked with it is refused,
/// saying so, and nothing is written.
#[test]
fn png16_refuses_an_exr_compression() {
    let out = tempfile::tempdir().unwrap();
    let r = common::rigbake(&[
        "vat".as_ref(),
        rigbake_fixtures::fixture("tentacle.glb").as_os_str(),
        "--out".as_ref(),
        out.path().join("refused").as_os_str(),
        "--format".as_ref(),
        "png16".as_ref(),
        "--compression".as_ref(),
        "zip".as_ref(),
    ]);
    assert!(!r.status.success());
    assert!(
        stderr(&r).contains("EXR formats only") && stderr(&r).contains("png16"),
        "{}",
        stderr(&r)
    );
    assert!(!out.path().join("refused/tentacle").exists());
}

/// `--png-compression` where no model could write a PNG (the default
/// exr16, another format, a KTX2 or DDS container) is a usage error saying
/// why, and nothing is written; with png16, or with a budget that may
/// choose it, it is taken.
#[test]
fn png_compression_without_png_files_is_a_usage_error() {
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let refused: [(&[&str], &str); 3] = [
        (&[], "exr16 by default"),
        (&["--format", "exr32"], "--format exr32 writes no PNG"),
        (
            &["--format", "png16", "--texture-container", "ktx2"],
            "--texture-container ktx2",
        ),
    ];
    for (flags, why) in refused {
        let out = tempfile::tempdir().unwrap();
        let mut all = vec!["--vat", "--png-compression", "none"];
        all.extend(flags);
        let r = bake(std::slice::from_ref(&model), out.path(), &all);
        assert_eq!(r.status.code(), Some(2), "{flags:?}: {}", stderr(&r));
        assert!(
            stderr(&r).contains("--png-compression applies to PNG files only")
                && stderr(&r).contains(why),
            "{flags:?}: {}",
            stderr(&r)
        );
        assert!(!out.path().join("tentacle").exists(), "{flags:?}");
    }
    for flags in [&["--format", "png16"][..], &["--max-error", "1%"]] {
        let out = tempfile::tempdir().unwrap();
        let mut all = vec!["--vat", "--png-compression", "none"];
        all.extend(flags);
        let r = bake(std::slice::from_ref(&model), out.path(), &all);
        assert!(r.status.success(), "{flags:?}: {}", stderr(&r));
    }
}

/// A lossy `--layout-fallback` (qts) is a usage error (exit 2) saying
/// which layouts it may be.
#[test]
fn a_lossy_layout_fallback_is_a_usage_error() {
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        &[rigbake_fixtures::fixture("tentacle.glb")],
        out.path(),
        &["--layout", "qts", "--layout-fallback", "qts"],
    );
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("layout_fallback must be `mat4` or `mat3x4`"),
        "{}",
        stderr(&r)
    );
}

/// `--max-error` says what it chose under the model's line and in the
/// JSON report's `encodings`; a budget no form meets fails the model
/// (exit 1) naming the best figure, and the batch goes on; a malformed
/// budget is a usage error.
#[test]
fn max_error_says_what_it_chose_and_fails_what_it_cannot_meet() {
    let out = tempfile::tempdir().unwrap();
    let models = [
        rigbake_fixtures::fixture("tentacle.glb"),
        rigbake_fixtures::fixture("walker.glb"),
    ];
    let r = bake(
        &models,
        out.path(),
        &["--vat", "--max-error", "1%", "--json"],
    );
    assert!(r.status.success(), "{}", stderr(&r));
    let err = stderr(&r);
    assert!(
        err.contains("chose bone textures as qts unorm16 (16 bytes a joint)")
            && err.contains("chose VAT as png16"),
        "{err}"
    );
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    for m in report["models"].as_array().unwrap() {
        let encodings = m["encodings"].as_array().unwrap();
        assert_eq!(encodings.len(), 2, "{m}");
        assert!(
            encodings[0]
                .as_str()
                .unwrap()
                .starts_with("bone textures as ")
        );
        // The worst clip of each texture, within the budget it was chosen by.
        let errors = m["errors"].as_array().unwrap();
        assert_eq!(errors.len(), 2, "{m}");
        for e in errors {
            let relative = e["relative"].as_f64().unwrap();
            assert!(relative > 0.0 && relative <= 0.01, "{e}");
            assert!(e["p99"].as_f64().unwrap() <= e["max"].as_f64().unwrap());
        }
    }
    let r = bake(&models, &out.path().join("tight"), &["--max-error", "0"]);
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    let err = stderr(&r);
    assert_eq!(
        err.matches("no bone texture encoding keeps every clip")
            .count(),
        2,
        "{err}"
    );
    assert!(err.contains("the best, mat3x4 f32, costs"), "{err}");
    for bad in ["-1mm", "1inch", "fast"] {
        let flag = format!("--max-error={bad}");
        let r = bake(&models[..1], &out.path().join("bad"), &[flag.as_str()]);
        assert_eq!(r.status.code(), Some(2), "{bad}: {}", stderr(&r));
        assert!(stderr(&r).contains("--max-error"), "{}", stderr(&r));
    }
}

#[test]
fn eight_and_ten_bit_vats_ask_for_a_gpu_container_and_a_budget_takes_them_there() {
    let out = tempfile::tempdir().unwrap();
    let tentacle = [rigbake_fixtures::fixture("tentacle.glb")];
    // No PNG or EXR holds 8 or 10-bit samples: a usage error that says
    // what to add, and nothing written.
    for format in ["unorm8", "unorm10"] {
        let dir = out.path().join(format);
        let r = bake(&tentacle, &dir, &["--vat", "--format", format]);
        assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
        let err = stderr(&r);
        assert!(
            err.contains(&format!("VAT format `{format}`"))
                && err.contains("--texture-container ktx2"),
            "{err}"
        );
        assert!(!dir.join("tentacle").exists());
    }
    // In KTX2 a loose budget takes the 8-bit form and says so.
    let r = bake(
        &tentacle,
        &out.path().join("ktx2"),
        &[
            "--vat",
            "--normals",
            "--texture-container",
            "ktx2",
            "--max-error",
            "1%",
        ],
    );
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("chose VAT as unorm8 with octahedral normals"),
        "{}",
        stderr(&r)
    );
}
