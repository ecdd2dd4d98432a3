//! The file-level damage corpus: hostile inputs at every path a user or a
//! container can name (models, external buffers, manifests, reports,
//! container texture names, EXR and PNG headers) and hostile output trees
//! (planted symlinks, FIFOs, stale temporaries). Every command runs on them
//! under a memory cap (`ulimit -v`, 3 GiB) and a time limit, and must end in
//! a clean exit (0, 1 or 2) with no panic, no abort, no hang and no write
//! outside its output folder.
//!
//! The time limit (120 s per command) only catches hangs: every case here
//! finishes in well under a second when handled, so the limit is generous
//! on purpose, to stay far from a loaded 2-core runner's noise.
//!
//! Writes outside `--out` are caught with a victim folder beside each case:
//! symlinks in the output tree point into it, and its files and their bytes
//! must be unchanged after every command.
#![cfg(unix)]

mod common;

use std::ffi::OsString;
use std::fs;
use std::io::Write as _;
use std::os::unix::ffi::OsStringExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Memory cap of every run, in KiB (3 GiB of address space).
const MEMORY_CAP_KIB: u64 = 3 << 20;
/// Wall-clock limit of every run (see the module documentation).
const TIME_LIMIT: Duration = Duration::from_secs(120);

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// A scratch area: `work/` holds the case's inputs and outputs, `victim/`
/// must never change.
struct Area {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Area {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        fs::create_dir_all(root.join("work")).unwrap();
        fs::create_dir_all(root.join("victim")).unwrap();
        fs::write(root.join("victim/precious.txt"), b"do not overwrite").unwrap();
        Self { _dir: dir, root }
    }
    fn work(&self) -> PathBuf {
        self.root.join("work")
    }
    fn victim(&self) -> PathBuf {
        self.root.join("victim")
    }
    fn out(&self) -> PathBuf {
        self.work().join("out")
    }
    /// Every file under `victim/` with its bytes.
    fn victim_state(&self) -> Vec<(PathBuf, Vec<u8>)> {
        common::tree(&self.victim())
    }
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
    assert!(ok, "mkfifo {}", p.display());
}

/// What one command did.
struct Run {
    code: Option<i32>,
    stderr: String,
    stdout: String,
}

/// Runs `rigbake args` in `cwd` under the memory cap and time limit, and
/// checks the universal rules: finished in time, clean exit code, no panic.
fn run_clean(case: &str, cwd: &Path, args: &[OsString]) -> Run {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -v {MEMORY_CAP_KIB}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_rigbake"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{case}: `rigbake {args:?}` did not finish within {TIME_LIMIT:?} (a hang)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    let run = Run {
        code: status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    };
    assert!(
        matches!(run.code, Some(0..=2)),
        "{case}: `rigbake {args:?}` ended with {status} (a crash or abort)\n{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("panicked"),
        "{case}: `rigbake {args:?}` panicked\n{}",
        run.stderr
    );
    run
}

/// Runs a command expected to fail cleanly, naming `needle` in its error.
fn fails_with(case: &str, cwd: &Path, args: &[OsString], needle: &str) -> Run {
    let r = run_clean(case, cwd, args);
    assert_ne!(
        r.code,
        Some(0),
        "{case}: `rigbake {args:?}` succeeded\n{}",
        r.stderr
    );
    let text = format!("{}{}", r.stderr, r.stdout);
    assert!(
        text.contains(needle),
        "{case}: expected `{needle}` in the error of `rigbake {args:?}`:\n{text}"
    );
    r
}

fn os(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    args.iter().map(|a| a.as_ref().to_owned()).collect()
}

/// Bakes the tentacle fixture (bones, weights, VAT, anchors.exr) into
/// `area/work/out`; returns the container path.
fn baked_tentacle(area: &Area) -> PathBuf {
    let r = run_clean(
        "setup",
        &area.work(),
        &os(&[
            &"bake",
            &fixtures().join("tentacle.glb"),
            &"--out",
            &area.out(),
            &"--vat",
            &"--anchors",
            &"auto",
            &"--anchors-exr",
            &"--quiet",
        ]),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    area.out().join("tentacle/tentacle.rigbake")
}

/// Every reader command on one container that reads its textures. (Plain
/// `inspect` reads only the container; it is run too, and must stay clean,
/// by [`texture_damage`].)
fn read_commands(container: &Path, work: &Path) -> Vec<Vec<OsString>> {
    vec![
        os(&[&"inspect", &container, &"--verify"]),
        os(&[
            &"verify",
            &container,
            &"--source",
            &fixtures().join("tentacle.glb"),
        ]),
        os(&[
            &"preview",
            &container,
            &"--source",
            &fixtures().join("tentacle.glb"),
            &"--out",
            &work.join("preview.png"),
        ]),
    ]
}

/// Runs every command on a container whose textures are damaged: plain
/// `inspect` (which reads no texture) ends cleanly, every command that
/// reads textures fails naming `needle`.
fn texture_damage(case: &str, container: &Path, work: &Path, needle: &str) {
    run_clean(case, work, &os(&[&"inspect", &container]));
    for args in read_commands(container, work) {
        fails_with(case, work, &args, needle);
    }
}

// ---------------------------------------------------------------------------
// Inputs named by the user.

#[test]
fn models_that_are_not_regular_files_fail_cleanly() {
    let area = Area::new();
    let fifo = area.work().join("pipe.glb");
    mkfifo(&fifo);
    let dir_model = area.work().join("folder.glb");
    fs::create_dir_all(dir_model.join("inner")).unwrap();
    for (case, model) in [
        ("a FIFO as the model", fifo.as_path()),
        ("/dev/zero as the model", Path::new("/dev/zero")),
    ] {
        for cmd in ["bake", "vat"] {
            fails_with(
                case,
                &area.work(),
                &os(&[&cmd, &model, &"--out", &area.out()]),
                "regular file",
            );
        }
        fails_with(
            case,
            &area.work(),
            &os(&[&"inspect", &model]),
            &model.display().to_string(),
        );
    }
    assert!(area.victim_state().len() == 1);
}

#[test]
fn external_buffers_that_are_fifos_devices_or_oversized_fail_cleanly() {
    let area = Area::new();
    let text = fs::read_to_string(fixtures().join("hierarchy.gltf")).unwrap();
    // `hierarchy.gltf` in a folder of its own, with `plant` putting
    // something hostile in its buffer's place; the bake must fail naming
    // `needle`.
    let case = |folder: &str, name: &str, plant: &dyn Fn(&Path), needle: &str| {
        let dir = area.work().join(folder);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("hierarchy.gltf"), &text).unwrap();
        plant(&dir.join("hierarchy.bin"));
        fails_with(
            name,
            &area.work(),
            &os(&[&"bake", &dir.join("hierarchy.gltf"), &"--out", &area.out()]),
            needle,
        );
    };
    case(
        "fifo",
        "a FIFO as the external buffer",
        &|p| mkfifo(p),
        "hierarchy.bin",
    );
    case(
        "zero",
        "/dev/zero as the external buffer",
        &|p| std::os::unix::fs::symlink("/dev/zero", p).unwrap(),
        "hierarchy.bin",
    );
    // A sparse 3 GiB buffer: over the file limit, and over the memory cap if
    // it were read in full (as the bake key once did).
    case(
        "huge",
        "an external buffer over the size limit",
        &|p| fs::File::create(p).unwrap().set_len(3 << 30).unwrap(),
        "limit",
    );
}

#[test]
fn manifests_and_reports_that_are_not_regular_files_fail_cleanly() {
    let area = Area::new();
    let fifo = area.work().join("pipe.toml");
    mkfifo(&fifo);
    for (case, path) in [
        ("a FIFO as the manifest", fifo.as_path()),
        ("/dev/zero as the manifest", Path::new("/dev/zero")),
        ("a folder as the manifest", area.work().as_path()),
    ] {
        run_clean(
            case,
            &area.work(),
            &os(&[&"bake", &"--manifest", &path, &"--out", &area.out()]),
        );
        run_clean(case, &area.work(), &os(&[&"merge-report", &path]));
    }
}

#[test]
fn a_bare_manifest_name_in_its_own_folder_bakes() {
    let area = Area::new();
    let dir = area.work().join("models");
    fs::create_dir_all(&dir).unwrap();
    fs::copy(fixtures().join("tentacle.glb"), dir.join("tentacle.glb")).unwrap();
    fs::write(
        dir.join("rigbake.toml"),
        "out = \"../out\"\n[[model]]\npath = \"tentacle.glb\"\n",
    )
    .unwrap();
    let r = run_clean(
        "a bare manifest name",
        &dir,
        &os(&[&"bake", &"--manifest", &"rigbake.toml", &"--quiet"]),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(area.out().join("tentacle/tentacle.rigbake").is_file());
}

#[test]
fn model_names_never_write_outside_out() {
    let area = Area::new();
    let dir = area.work().join("models");
    fs::create_dir_all(&dir).unwrap();
    fs::copy(fixtures().join("tentacle.glb"), dir.join("...glb")).unwrap();
    run_clean(
        "a model named ...glb",
        &area.work(),
        &os(&[&"bake", &dir.join("...glb"), &"--out", &area.out()]),
    );
    // Nothing may land beside `out` (in `work`) but the inputs and `out`.
    let mut names: Vec<_> = fs::read_dir(area.work())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert!(
        names.iter().all(|n| n == "models" || n == "out"),
        "written beside --out: {names:?}"
    );
}

#[test]
fn names_that_collide_after_lossy_conversion_are_not_dropped() {
    let area = Area::new();
    let dir = area.work().join("models");
    fs::create_dir_all(&dir).unwrap();
    for byte in [0xffu8, 0xfe] {
        let name = OsString::from_vec(vec![b'm', byte, b'.', b'g', b'l', b'b']);
        fs::copy(fixtures().join("tentacle.glb"), dir.join(name)).unwrap();
    }
    let r = run_clean(
        "non-UTF-8 names",
        &area.work(),
        &os(&[&"bake", &dir, &"--out", &area.out(), &"--json"]),
    );
    // Either both models are baked into distinct folders, or the run fails
    // naming the collision; one model must never vanish silently.
    if r.code == Some(0) {
        let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(
            report["models"].as_array().unwrap().len(),
            2,
            "{}",
            r.stdout
        );
    } else {
        assert!(r.stderr.contains("m"), "{}", r.stderr);
    }
}

#[test]
fn jobs_and_texture_sizes_are_bounded() {
    let area = Area::new();
    let model = fixtures().join("tentacle.glb");
    fails_with(
        "--jobs 100000",
        &area.work(),
        &os(&[&"bake", &model, &"--out", &area.out(), &"--jobs", &"100000"]),
        "--jobs",
    );
    fails_with(
        "--max-texture-size 2^32",
        &area.work(),
        &os(&[
            &"bake",
            &model,
            &"--out",
            &area.out(),
            &"--max-texture-size",
            &"4294967296",
        ]),
        "max",
    );
}

// ---------------------------------------------------------------------------
// Names and headers inside a container.

/// Rewrites the container with its bone texture renamed: every section is
/// copied in order through the format crate's writer, so every checksum is
/// right and only the name lies.
fn rename_bone_texture(container: &Path, to: &str) {
    use rigbake_format::container::{Container, ContainerWriter, SectionKind};
    let mut c = Container::open(container).unwrap();
    let mut meta = c.metadata().clone();
    meta.textures[0].name = to.to_owned();
    let sections: Vec<_> = c.sections().to_vec();
    let mut payloads = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        payloads.push((s.kind, c.read_section(i).unwrap()));
    }
    drop(c);
    let file = fs::File::create(container).unwrap();
    let mut w = ContainerWriter::new(file).unwrap();
    for (kind, bytes) in &payloads {
        if *kind != SectionKind::Metadata {
            w.add_section(*kind, bytes).unwrap();
        }
    }
    w.finish(&meta).unwrap();
}

#[test]
fn texture_names_that_leave_the_bake_are_refused_by_every_reader() {
    let area = Area::new();
    let container = baked_tentacle(&area);
    let original = fs::read(&container).unwrap();
    rename_bone_texture(&container, "/dev/zero");
    fails_with(
        "texture name /dev/zero",
        &area.work(),
        &os(&[&"inspect", &container]),
        "/dev/zero",
    );
    for args in read_commands(&container, &area.work()) {
        fails_with("texture name /dev/zero", &area.work(), &args, "/dev/zero");
    }
    fs::write(&container, &original).unwrap();
    rename_bone_texture(&container, "../../victim/precious.txt");
    for args in read_commands(&container, &area.work()) {
        fails_with("texture name ../..", &area.work(), &args, "precious.txt");
    }
}

#[test]
fn a_fifo_or_folder_in_a_textures_place_is_refused_by_every_reader() {
    for kind in ["fifo", "folder"] {
        let area = Area::new();
        let container = baked_tentacle(&area);
        let texture = container.with_file_name("bones.skin0.exr");
        fs::remove_file(&texture).unwrap();
        if kind == "fifo" {
            mkfifo(&texture);
        } else {
            fs::create_dir(&texture).unwrap();
        }
        texture_damage(kind, &container, &area.work(), "bones.skin0.exr");
    }
}

/// Sets an EXR's dataWindow (and displayWindow) to `w` x `h` in place.
fn patch_exr_size(path: &Path, w: i32, h: i32) {
    let mut bytes = fs::read(path).unwrap();
    for name in [&b"dataWindow\0box2i\0"[..], &b"displayWindow\0box2i\0"[..]] {
        let at = bytes
            .windows(name.len())
            .position(|x| x == name)
            .expect("attribute present")
            + name.len()
            + 4; // the attribute size
        for (k, v) in [0i32, 0, w - 1, h - 1].iter().enumerate() {
            bytes[at + 4 * k..at + 4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    fs::write(path, bytes).unwrap();
}

#[test]
fn texture_headers_claiming_huge_sizes_are_refused_before_decoding() {
    let area = Area::new();
    let container = baked_tentacle(&area);
    patch_exr_size(&container.with_file_name("bones.skin0.exr"), 65535, 65535);
    // `inspect --verify` names the checksum mismatch, verify and preview the
    // header; under the 3 GiB cap, a decode sized from the header would abort.
    texture_damage(
        "EXR header 65535 x 65535",
        &container,
        &area.work(),
        "bones.skin0.exr",
    );
}

// ---------------------------------------------------------------------------
// Output trees.

#[test]
fn planted_symlinks_in_the_output_tree_are_never_written_through() {
    let area = Area::new();
    let model = fixtures().join("tentacle.glb");
    let before = area.victim_state();
    // Every output name, and every plausible temporary name, is a symlink
    // into the victim folder.
    let dir = area.out().join("tentacle");
    fs::create_dir_all(&dir).unwrap();
    for name in [
        "tentacle.rigbake",
        "bones.skin0.exr",
        "tentacle.weights.glb",
        "anchors.exr",
        ".lock",
        ".rigbake.lock",
    ] {
        std::os::unix::fs::symlink(area.victim().join("precious.txt"), dir.join(name)).unwrap();
    }
    let r = run_clean(
        "planted symlinks",
        &area.work(),
        &os(&[
            &"bake",
            &model,
            &"--out",
            &area.out(),
            &"--anchors",
            &"auto",
            &"--anchors-exr",
        ]),
    );
    assert_eq!(area.victim_state(), before, "a file outside --out changed");
    if r.code == Some(0) {
        let meta = fs::symlink_metadata(dir.join("tentacle.rigbake")).unwrap();
        assert!(meta.is_file(), "the container is still a symlink");
    }
    // The model's folder itself a symlink out of the tree.
    let area = Area::new();
    fs::create_dir_all(area.out()).unwrap();
    std::os::unix::fs::symlink(area.victim(), area.out().join("tentacle")).unwrap();
    let before = area.victim_state();
    run_clean(
        "output folder symlinked outside",
        &area.work(),
        &os(&[&"bake", &model, &"--out", &area.out()]),
    );
    assert_eq!(
        area.victim_state(),
        before,
        "wrote through a symlinked folder"
    );
}

#[test]
fn a_fifo_at_the_containers_name_does_not_hang_the_up_to_date_check() {
    let area = Area::new();
    let dir = area.out().join("tentacle");
    fs::create_dir_all(&dir).unwrap();
    mkfifo(&dir.join("tentacle.rigbake"));
    run_clean(
        "a FIFO at the container's name",
        &area.work(),
        &os(&[
            &"bake",
            &fixtures().join("tentacle.glb"),
            &"--out",
            &area.out(),
        ]),
    );
}

#[test]
fn stale_temporaries_of_killed_runs_are_cleaned_up() {
    let area = Area::new();
    let dir = area.out().join("tentacle");
    fs::create_dir_all(&dir).unwrap();
    let stale = dir.join(".tentacle.rigbake.12345.tmp");
    fs::File::create(&stale)
        .unwrap()
        .write_all(b"half")
        .unwrap();
    let r = run_clean(
        "stale temporaries",
        &area.work(),
        &os(&[
            &"bake",
            &fixtures().join("tentacle.glb"),
            &"--out",
            &area.out(),
        ]),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let left: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporaries left: {left:?}");
}
