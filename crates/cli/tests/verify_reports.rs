//! `verify`'s printed reports do not move (issue 34: "no verdict, recorded
//! error or reported figure changes"). Every shared model and fixture is
//! baked with both paths under a handful of settings (32-bit and half
//! floats, half-float bones, PNG16 with octahedral normals and tangents,
//! folded pages, the blended-matrix convention with root motion, dropped
//! influences), `rigbake verify` runs on every container, and its report,
//! with the scratch folder's path taken out, is compared line by line
//! with `tests/golden/verify_reports.txt`. So every printed figure (to
//! its last printed digit), every verdict and every exit code stays what
//! it was. On every container the `--json` document (every figure to the
//! bit) is the same on one thread and on two (`RAYON_NUM_THREADS`): the
//! numbers do not depend on the thread count.
//!
//! A deliberate change of the measurement regenerates the file with
//! `RIGBAKE_BLESS=1 cargo test -p rigbake-cli --test verify_reports`
//! (with the shared models present), and the diff is reviewed.

mod common;

use std::path::{Path, PathBuf};

use common::{bake, containers, rigbake, shared_models};

/// The bakes: a label, the models (`fixtures/` relative paths, or `None`
/// for the shared models folder) and the flags.
const CONFIGS: &[(&str, Option<&str>, &[&str])] = &[
    ("shared", None, &["--vat", "--normals", "--fps", "4"]),
    ("fixtures", Some("."), &["--vat", "--normals"]),
    (
        "exr32-f16bones",
        Some("walker.glb"),
        &[
            "--vat",
            "--normals",
            "--format",
            "exr32",
            "--precision",
            "f16",
        ],
    ),
    (
        "png16-tangents",
        Some("walker.glb"),
        &["--vat", "--normals", "--tangents", "--format", "png16"],
    ),
    (
        "folded",
        Some("tentacle.glb"),
        &["--vat", "--normals", "--max-texture-size", "64"],
    ),
    (
        "blended-extract",
        Some("walker.glb"),
        &[
            "--vat",
            "--normals",
            "--normal-convention",
            "blended-matrix",
            "--root-motion",
            "extract-yaw",
        ],
    ),
    (
        "two-influences",
        Some("eight_influences.gltf"),
        &["--vat", "--normals", "--max-influences", "2"],
    ),
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// `rigbake verify CONTAINER`'s exit code and printed report, with
/// `scratch` and the models' folders replaced by names that do not depend
/// on where they are.
fn report(container: &Path, scratch: &Path, models: &[(&Path, &str)]) -> String {
    let r = rigbake(&["verify".as_ref(), container.as_os_str()]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let mut text = format!(
        "exit {}\n{}{}",
        r.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&r.stdout),
        stderr
    );
    text = text.replace(&scratch.display().to_string(), "OUT");
    for (dir, name) in models {
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        text = text.replace(&dir.display().to_string(), name);
    }
    text
}

/// `rigbake verify --json CONTAINER`'s document on `threads` threads.
fn json(container: &Path, threads: usize) -> Vec<u8> {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_rigbake"));
    command.args(["verify".as_ref(), "--json".as_ref(), container.as_os_str()]);
    command.env("RAYON_NUM_THREADS", threads.to_string());
    let r = command.output().expect("rigbake runs");
    assert!(
        !String::from_utf8_lossy(&r.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    r.stdout
}

#[test]
fn verify_reports_are_the_recorded_ones() {
    let shared = shared_models("verify_reports_are_the_recorded_ones");
    let fixtures = fixtures().canonicalize().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let scratch_dir = scratch.path().canonicalize().unwrap();
    let mut names: Vec<(&Path, &str)> = vec![(&fixtures, "FIXTURES")];
    if let Some(dir) = &shared {
        names.push((dir, "MODELS"));
    }
    let mut actual = String::new();
    for (label, models, flags) in CONFIGS {
        let model = match (models, &shared) {
            (Some(rel), _) => fixtures.join(rel),
            (None, Some(dir)) => dir.clone(),
            (None, None) => continue,
        };
        let out = scratch_dir.join(label);
        // A folder holds models the bake refuses (the unsupported ones, the
        // degenerate fixtures): the batch then exits non-zero; what it did
        // bake is verified.
        bake(std::slice::from_ref(&model), &out, flags);
        for container in containers(&out) {
            let name = container.strip_prefix(&out).unwrap().display().to_string();
            actual.push_str(&format!("=== {label} {name}\n"));
            actual.push_str(&report(&container, &scratch_dir, &names));
            let (one, two) = (json(&container, 1), json(&container, 2));
            assert!(!one.is_empty(), "{name}: no --json document");
            assert!(one == two, "{label} {name}: 1 and 2 threads differ");
        }
    }

    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/verify_reports.txt");
    if std::env::var_os("RIGBAKE_BLESS").is_some() {
        assert!(
            shared.is_some(),
            "bless with the shared models present, so every report is recorded"
        );
        std::fs::write(&golden, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&golden).expect("tests/golden/verify_reports.txt");
    // Without the shared models only the fixtures' reports are compared.
    let sections = |text: &str| -> Vec<String> {
        text.split("=== ")
            .filter(|s| !s.is_empty() && (shared.is_some() || !s.starts_with("shared ")))
            .map(str::to_owned)
            .collect()
    };
    let (want, got) = (sections(&expected), sections(&actual));
    assert!(want.len() >= 20, "only {} reports recorded", want.len());
    for (w, g) in want.iter().zip(&got) {
        assert_eq!(g, w, "a verify report changed");
    }
    assert_eq!(got.len(), want.len(), "a different number of reports");
}
