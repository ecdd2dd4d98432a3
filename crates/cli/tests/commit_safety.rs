//! A model's outputs have one commit point (the container, renamed last,
//! listing the size and CRC-32 of every other output): a run killed at any
//! step of the commit is never reported "up to date" afterwards, and two
//! runs into one output folder never mix their outputs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
}

/// `rigbake bake tentacle.glb` with bones, weights, VAT and anchors.exr (the
/// `seg7` socket), at
/// `fps`, into `out`; `fault` sets `RIGBAKE_FAULT`.
fn bake(out: &Path, fps: &str, fault: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rigbake"));
    cmd.arg("bake")
        .arg(fixture("tentacle.glb"))
        .arg("--out")
        .arg(out)
        .args([
            "--fps",
            fps,
            "--vat",
            "--anchor",
            "seg7",
            "--anchors-exr",
            "--json",
            "--quiet",
        ]);
    if let Some(f) = fault {
        cmd.env("RIGBAKE_FAULT", f);
    }
    cmd.output().unwrap()
}

/// The status the JSON report gives the one model.
fn status(out: &Output) -> String {
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    report["models"][0]["status"].as_str().unwrap().to_owned()
}

/// `rigbake inspect --verify` on the bake: every file matches the container.
fn consistent(out: &Path) -> bool {
    Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .args(["inspect", "--verify"])
        .arg(out.join("tentacle/tentacle.rigbake"))
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn a_run_killed_at_any_rename_is_never_taken_for_up_to_date() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let first = bake(&out, "30", None);
    assert_eq!(status(&first), "baked");
    // The files a complete bake renames into place (the container last):
    // the container, bones, weights mesh, VAT positions and playback mesh,
    // anchors.exr.
    let files = std::fs::read_dir(out.join("tentacle")).unwrap().count();
    assert!(files >= 6, "{files} files");
    for k in 0..files {
        // A rebake with other settings, killed after k renames: some new
        // files sit beside the old container.
        let killed = bake(&out, "24", Some(&format!("abort-after-renames:{k}")));
        assert!(!killed.status.success(), "step {k}: the run was killed");
        // With the old settings the old container's key matches, but its
        // files changed: a rebake, never "up to date" (unless nothing had
        // been renamed yet).
        let old = bake(&out, "30", None);
        let expected = if k == 0 { "up_to_date" } else { "baked" };
        assert_eq!(status(&old), expected, "step {k}, old settings");
        assert!(consistent(&out), "step {k}: outputs match the container");
        // Killed again, then the new settings: always a rebake.
        let killed = bake(&out, "24", Some(&format!("abort-after-renames:{k}")));
        assert!(!killed.status.success());
        let new = bake(&out, "24", None);
        assert_eq!(status(&new), "baked", "step {k}, new settings");
        assert!(consistent(&out), "step {k}: outputs match the container");
        // And back to the first settings for the next step.
        assert_eq!(status(&bake(&out, "30", None)), "baked");
    }
    let left: Vec<_> = std::fs::read_dir(out.join("tentacle"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(
        left.is_empty(),
        "temporaries of killed runs remain: {left:?}"
    );
}

#[test]
fn concurrent_runs_into_one_folder_take_turns() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for round in 0..4 {
        let spawn = |fps: &str| {
            Command::new(env!("CARGO_BIN_EXE_rigbake"))
                .arg("bake")
                .arg(fixture("tentacle.glb"))
                .arg("--out")
                .arg(&out)
                .args([
                    "--fps",
                    fps,
                    "--vat",
                    "--anchors",
                    "auto",
                    "--anchors-exr",
                    "--quiet",
                ])
                .spawn()
                .unwrap()
        };
        let (mut a, mut b) = (spawn("30"), spawn("24"));
        assert!(a.wait().unwrap().success(), "round {round}");
        assert!(b.wait().unwrap().success(), "round {round}");
        assert!(
            consistent(&out),
            "round {round}: two runs mixed their outputs"
        );
    }
}

#[test]
fn every_deleted_or_changed_output_is_rebaked() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    assert_eq!(status(&bake(&out, "30", None)), "baked");
    assert_eq!(status(&bake(&out, "30", None)), "up_to_date");
    let model_dir = out.join("tentacle");
    let mut names: Vec<String> = std::fs::read_dir(&model_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".rigbake"))
        .collect();
    names.sort();
    // Every output beside the container: bones, weights mesh, VAT texture
    // and playback mesh, anchors.exr.
    assert!(names.iter().any(|n| n == "anchors.exr"), "{names:?}");
    assert!(
        names.iter().any(|n| n.ends_with(".weights.glb")),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.ends_with(".vat.glb")), "{names:?}");
    for name in &names {
        // Deleted: rebaked, then up to date again.
        std::fs::remove_file(model_dir.join(name)).unwrap();
        assert_eq!(status(&bake(&out, "30", None)), "baked", "{name} deleted");
        assert_eq!(status(&bake(&out, "30", None)), "up_to_date");
        // Same size, one byte changed: rebaked too.
        let path = model_dir.join(name);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x5a;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(status(&bake(&out, "30", None)), "baked", "{name} changed");
    }
}

#[test]
fn a_changed_external_buffer_or_source_is_rebaked() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    for f in ["hierarchy.gltf", "hierarchy.bin"] {
        std::fs::copy(fixture(f), models.join(f)).unwrap();
    }
    let out = dir.path().join("out");
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_rigbake"))
            .arg("bake")
            .arg(models.join("hierarchy.gltf"))
            .arg("--out")
            .arg(&out)
            .args(["--json", "--quiet"])
            .output()
            .unwrap()
    };
    assert_eq!(status(&run()), "baked");
    assert_eq!(status(&run()), "up_to_date");
    // The external buffer changes: the lowest mantissa bit of its first
    // float (the first inverse bind matrix's m00), so the model stays valid.
    let bin = models.join("hierarchy.bin");
    let mut bytes = std::fs::read(&bin).unwrap();
    bytes[0] ^= 1;
    std::fs::write(&bin, &bytes).unwrap();
    assert_eq!(status(&run()), "baked", "external buffer changed");
    assert_eq!(status(&run()), "up_to_date");
    // The source changes (a new node name, same structure).
    let gltf = models.join("hierarchy.gltf");
    let text = std::fs::read_to_string(&gltf).unwrap();
    std::fs::write(
        &gltf,
        text.replacen("\"asset\"", "\"extras\": {\"x\": 1}, \"asset\"", 1),
    )
    .unwrap();
    assert_eq!(status(&run()), "baked", "source changed");
}

/// A stale file is removed only when it is provably rigbake's own: a source
/// model that now stands where an earlier OpenVAT export (`tentacle.glb`)
/// stood is an input of the run, so the rebake keeps it and says so.
#[test]
fn a_listed_file_that_is_now_an_input_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let export = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("vat")
        .arg(fixture("tentacle.glb"))
        .args(["--compat", "openvat", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let model_dir = out.join("tentacle");
    let listed = model_dir.join("tentacle.glb");
    assert!(listed.is_file(), "the export writes tentacle.glb");
    // The user puts the source model where the export stood and bakes it.
    let source = std::fs::read(fixture("tentacle.glb")).unwrap();
    std::fs::write(&listed, &source).unwrap();
    let rebake = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("bake")
        .arg(&listed)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&rebake.stderr);
    assert!(rebake.status.success(), "{stderr}");
    assert_eq!(
        std::fs::read(&listed).unwrap(),
        source,
        "the input survives"
    );
    assert!(
        stderr.contains("kept") && stderr.contains("input"),
        "the rebake says why it kept the file: {stderr}"
    );
}
