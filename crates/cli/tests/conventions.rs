//! Command-line conventions: `--version` names the container format,
//! `--help` lists the exit codes, progress lines count in good English.

use std::process::Command;

fn rigbake(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn version_names_the_container_format() {
    let r = rigbake(&["--version"]);
    assert!(r.status.success());
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.starts_with("rigbake "), "{text}");
    assert!(text.contains("container format 1."), "{text}");
}

#[test]
fn help_lists_the_exit_codes() {
    let r = rigbake(&["--help"]);
    assert!(r.status.success());
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.contains("Exit codes: 0"), "{text}");
    assert!(text.contains("2 for usage errors"), "{text}");
}

#[test]
fn one_clip_is_not_one_clips() {
    let dir = tempfile::tempdir().unwrap();
    let model =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tentacle.glb");
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("bake")
        .arg(&model)
        .args(["--clip", "wave", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = String::from_utf8_lossy(&r.stderr);
    assert!(text.contains("1 clip,"), "{text}");
    assert!(!text.contains("1 clips"), "{text}");
}

#[test]
fn vat_only_flags_without_vat_are_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let model =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tentacle.glb");
    for flag in [&["--normals"][..], &["--format", "png16"], &["--zip"]] {
        let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
            .arg("bake")
            .arg(&model)
            .arg("--out")
            .arg(dir.path())
            .args(flag)
            .output()
            .unwrap();
        assert_eq!(r.status.code(), Some(2), "{flag:?}");
        let text = String::from_utf8_lossy(&r.stderr);
        assert!(text.contains(flag[0]) && text.contains("--vat"), "{text}");
    }
    // With --vat the same flags are used.
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("bake")
        .arg(&model)
        .arg("--out")
        .arg(dir.path())
        .args(["--vat", "--normals", "--quiet"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}
