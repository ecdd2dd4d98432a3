//! Byte-identity lock: the SHA-256 of every file rigbake writes, for every
//! fixture and every shared model, under `bake`, `bake --anchors auto`
//! (with the anchors EXR, and again all in DDS) and `vat` in each encoding
//! (with normals, and exr16 again as Zstandard-supercompressed KTX2).
//!
//! The expected hashes live in `tests/golden/output_hashes.txt`. They were
//! recorded before the pipeline moved into its own library crate, so a
//! refactor that changes a single output byte fails here. A deliberate
//! change of output regenerates them with `RIGBAKE_BLESS=1 cargo test -p
//! rigbake-cli --test output_hashes`, and the commit says why.
mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The bake configurations whose outputs are locked.
const CONFIGS: &[(&str, &[&str])] = &[
    ("bake", &["bake"]),
    ("anchors", &["bake", "--anchors", "auto", "--anchors-exr"]),
    ("vat-exr16", &["vat", "--format", "exr16", "--normals"]),
    ("vat-exr32", &["vat", "--format", "exr32", "--normals"]),
    ("vat-png16", &["vat", "--format", "png16", "--normals"]),
    (
        "anchors-dds",
        &[
            "bake",
            "--anchors",
            "auto",
            "--anchors-exr",
            "--texture-container",
            "dds",
        ],
    ),
    (
        "vat-ktx2-zstd",
        &[
            "vat",
            "--format",
            "exr16",
            "--normals",
            "--texture-container",
            "ktx2-zstd",
        ],
    ),
];

fn golden_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/output_hashes.txt")
}

fn fixture_models() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("glb" | "gltf")))
        .collect();
    out.sort();
    out
}

/// One line per output file: `config model relative/path sha256`, plus a
/// line with the exit code of each run.
fn hash_lines(label: &str, model: &Path, config: &str, args: &[&str], scratch: &Path) -> String {
    let out = scratch.join(format!("{label}-{config}"));
    let mut cmd: Vec<&std::ffi::OsStr> = vec![args[0].as_ref(), model.as_os_str()];
    cmd.push("--out".as_ref());
    cmd.push(out.as_os_str());
    cmd.push("--quiet".as_ref());
    cmd.extend(args[1..].iter().map(std::ffi::OsStr::new));
    let run = common::rigbake(&cmd);
    let mut lines = format!(
        "{config} {label} exit {}\n",
        run.status.code().unwrap_or(-1)
    );
    if out.is_dir() {
        // The run's lock file (empty, `.rigbake.lock`) is not an output.
        for (rel, bytes) in common::tree(&out)
            .into_iter()
            .filter(|(rel, _)| rel.as_os_str() != ".rigbake.lock")
        {
            let digest = Sha256::digest(&bytes);
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            let _ = writeln!(
                lines,
                "{config} {label} {} {hex}",
                rel.to_string_lossy().replace('\\', "/")
            );
        }
        std::fs::remove_dir_all(&out).unwrap();
    }
    lines
}

#[test]
fn every_output_byte_matches_the_recorded_hashes() {
    let mut models: Vec<(String, PathBuf)> = fixture_models()
        .into_iter()
        .map(|p| {
            (
                format!("fixtures/{}", p.file_name().unwrap().to_string_lossy()),
                p,
            )
        })
        .collect();
    let shared = common::shared_models("every_output_byte_matches_the_recorded_hashes");
    if let Some(dir) = &shared {
        for p in common::model_files(dir) {
            let rel = p
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            models.push((format!("shared/{rel}"), p));
        }
    }
    // The container records the source's path relative to itself (format
    // 1.6), so models are baked from a copy at a fixed place beside the
    // outputs: the recorded paths, and so the bytes, do not depend on where
    // the checkout or the shared models are.
    let scratch = tempfile::tempdir().unwrap();
    let inputs = scratch.path().join("in");
    copy_tree(
        fixture_models()[0].parent().unwrap(),
        &inputs.join("fixtures"),
    );
    if let Some(dir) = &shared {
        copy_tree(dir, &inputs.join("shared"));
    }
    let models: Vec<(String, PathBuf)> = models
        .into_iter()
        .map(|(label, _)| {
            let copy = inputs.join(&label);
            (label, copy)
        })
        .collect();
    let mut actual = String::new();
    for (label, model) in &models {
        for (config, args) in CONFIGS {
            actual.push_str(&hash_lines(label, model, config, args, scratch.path()));
        }
    }

    let golden = golden_path();
    if std::env::var_os("RIGBAKE_BLESS").is_some() {
        assert!(
            shared.is_some(),
            "bless with the shared models present, so every line is recorded"
        );
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&golden).expect("tests/golden/output_hashes.txt exists");
    // Without the shared models only the fixture lines can be compared.
    let expected: Vec<&str> = expected
        .lines()
        .filter(|l| {
            shared.is_some()
                || l.split(' ')
                    .nth(1)
                    .is_some_and(|m| m.starts_with("fixtures/"))
        })
        .collect();
    let actual: Vec<&str> = actual.lines().collect();
    let missing: Vec<&&str> = expected.iter().filter(|l| !actual.contains(l)).collect();
    let extra: Vec<&&str> = actual.iter().filter(|l| !expected.contains(l)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "outputs differ from the recorded hashes\nexpected but not produced:\n{}\nproduced but not expected:\n{}",
        missing
            .iter()
            .map(|l| format!("  {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
        extra
            .iter()
            .map(|l| format!("  {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
}

/// Copies the folder `from` to `to`, files and folders (links followed).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else if path.is_file() {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}
