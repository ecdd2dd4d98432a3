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
use std::io::{Read as _, Write as _};
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
    // Drain both pipes while waiting: a child that writes more than a pipe
    // holds would otherwise block and look like a hang.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
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
    let run = Run {
        code: status.code(),
        stderr: String::from_utf8_lossy(&stderr.join().unwrap()).into_owned(),
        stdout: String::from_utf8_lossy(&stdout.join().unwrap()).into_owned(),
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
    use rigbake_format::container::{Container, ContainerWriter};
    use rigbake_format::records::SectionKind;
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

// ---------------------------------------------------------------------------
// Reliability part 2: one generator per class of defect. Each builds files
// of its class from a real bake or fixture and runs every command that reads
// them under the memory cap and time limit.

/// Rewrites `container` with its records edited: the metadata by `meta` and
/// the VAT record by `vat`; every other section is kept byte for byte.
fn edit_container(
    container: &Path,
    meta: impl FnOnce(&mut rigbake_format::meta::Metadata),
    vat: impl FnOnce(&mut rigbake_format::meta::VatMetadata),
) {
    use rigbake_format::codec;
    use rigbake_format::container::{Container, ContainerWriter};
    use rigbake_format::records::SectionKind;
    let mut c = Container::open(container).unwrap();
    let mut metadata = c.metadata().clone();
    meta(&mut metadata);
    let sections: Vec<_> = c.sections().to_vec();
    let mut payloads = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        payloads.push((s.kind, c.read_section(i).unwrap()));
    }
    drop(c);
    let mut vat = Some(vat);
    let file = fs::File::create(container).unwrap();
    let mut w = ContainerWriter::new(file).unwrap();
    for (kind, bytes) in &payloads {
        match kind {
            SectionKind::Metadata => {}
            SectionKind::Vat => {
                let mut record = codec::decode::<rigbake_format::meta::VatMetadata>(bytes).unwrap();
                if let Some(edit) = vat.take() {
                    edit(&mut record);
                }
                w.add_section(*kind, &codec::encode(&record).unwrap())
                    .unwrap();
            }
            _ => {
                w.add_section(*kind, bytes).unwrap();
            }
        }
    }
    w.finish(&metadata).unwrap();
}

/// Every command that reads a container, VAT path included.
fn every_reader(container: &Path, work: &Path) -> Vec<Vec<OsString>> {
    let mut all = vec![
        os(&[&"inspect", &container]),
        os(&[&"inspect", &container, &"--json"]),
    ];
    all.extend(read_commands(container, work));
    all.push(os(&[
        &"preview",
        &container,
        &"--source",
        &fixtures().join("tentacle.glb"),
        &"--path",
        &"vat",
        &"--out",
        &work.join("preview-vat.png"),
    ]));
    all
}

/// Class 1: counts and sizes read from a container or a texture header are
/// checked against the data really there before anything is allocated or
/// looped over. Every lie below is refused by every reader, naming the file.
#[test]
fn class1_counts_that_lie_are_refused_before_any_allocation() {
    type Lie = (
        &'static str,
        fn(&mut rigbake_format::meta::Metadata),
        fn(&mut rigbake_format::meta::VatMetadata),
    );
    let lies: [Lie; 5] = [
        (
            "clip frames beyond the texture",
            |m| m.clips[0].frames = 1 << 20,
            |_| {},
        ),
        (
            "bone texture size claimed huge",
            |m| {
                m.textures[0].width = 65_536;
                m.textures[0].height = 65_536;
            },
            |_| {},
        ),
        (
            "VAT primitive frames beyond its texture",
            |_| {},
            |v| v.primitives[0].frames = 1 << 20,
        ),
        (
            "VAT texture size claimed huge",
            |_| {},
            |v| {
                v.textures[0].width = 65_536;
                v.textures[0].height = 65_536;
            },
        ),
        (
            "VAT bands times frames overflow",
            |_| {},
            |v| v.primitives[0].bands = u32::MAX,
        ),
    ];
    for (case, meta, vat) in lies {
        let area = Area::new();
        let container = baked_tentacle(&area);
        edit_container(&container, meta, vat);
        for args in every_reader(&container, &area.work()) {
            fails_with(case, &area.work(), &args, "tentacle.rigbake");
        }
    }

    // A PNG16 VAT texture whose header claims 2^31-1 x 2^31-1 (the PNG
    // maximum; the chunk CRC is fixed so only the size lies).
    let area = Area::new();
    let r = run_clean(
        "png16 setup",
        &area.work(),
        &os(&[
            &"bake",
            &fixtures().join("tentacle.glb"),
            &"--out",
            &area.out(),
            &"--vat",
            &"--format",
            &"png16",
            &"--quiet",
        ]),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let dir = area.out().join("tentacle");
    let png = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "png"))
        .expect("a PNG16 texture");
    let mut bytes = fs::read(&png).unwrap();
    // IHDR: length(4) "IHDR"(4) width(4) height(4) ... at offset 8.
    assert_eq!(&bytes[12..16], b"IHDR");
    bytes[16..20].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
    bytes[20..24].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
    let crc = crc32fast::hash(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    fs::write(&png, bytes).unwrap();
    let container = dir.join("tentacle.rigbake");
    let name = png.file_name().unwrap().to_string_lossy().into_owned();
    for args in [
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
            &"--path",
            &"vat",
            &"--out",
            &area.work().join("p.png"),
        ]),
    ] {
        fails_with("PNG16 header 2^31-1 square", &area.work(), &args, &name);
    }
}

/// The tentacle fixture, to edit.
fn tentacle() -> rigbake_fixtures::builder::Builder {
    rigbake_fixtures::builder::Builder::from_glb(
        &fs::read(fixtures().join("tentacle.glb")).unwrap(),
    )
}

/// Class 2: a small file that multiplies into huge work or output (one
/// accessor shared by thousands of primitives and instances, a long
/// timeline) is refused by the per-model budget before baking, naming the
/// model and the budget; the batch goes on with the next model.
#[test]
fn class2_small_files_that_multiply_are_refused_by_the_budget() {
    let area = Area::new();
    let mut b = tentacle();
    let json = &mut b.root;
    // Every primitive of the first mesh, 256 times over, in one mesh that
    // 2,000 skinned nodes instance: a few KB of JSON.
    let mesh = json["meshes"][0].clone();
    let prim = mesh["primitives"][0].clone();
    json["meshes"][0]["primitives"] = serde_json::Value::Array(vec![prim; 256]);
    let skinned = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n.get("mesh").is_some())
        .unwrap();
    let node = json["nodes"][skinned].clone();
    let first_new = json["nodes"].as_array().unwrap().len();
    for _ in 0..2000 {
        json["nodes"].as_array_mut().unwrap().push(node.clone());
    }
    let roots = json["scenes"][0]["nodes"].as_array_mut().unwrap();
    roots.extend((first_new..first_new + 2000).map(|n| serde_json::json!(n)));
    let model = area.work().join("multiplied.glb");
    fs::write(&model, b.to_glb()).unwrap();
    fs::copy(
        fixtures().join("tentacle.glb"),
        area.work().join("fine.glb"),
    )
    .unwrap();
    let r = fails_with(
        "shared accessor x instances",
        &area.work(),
        &os(&[
            &"bake",
            &area.work(),
            &"--out",
            &area.out(),
            &"--vat",
            &"--normals",
            &"--fps",
            &"1000",
        ]),
        "multiplied.glb",
    );
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("budget"), "{}", r.stderr);
    assert!(
        area.out().join("fine/fine.rigbake").is_file(),
        "the batch went on past the model over budget"
    );
    assert!(
        !area
            .out()
            .join("multiplied")
            .join("multiplied.rigbake")
            .exists()
    );
}

/// Class 3: verdicts are earned. A container recording NaN, infinite or
/// negative values is refused by every reader (so `inspect --json` never
/// prints a document outside its schema), and `verify` never passes it.
#[test]
fn class3_non_finite_records_never_pass() {
    type Lie = (
        &'static str,
        fn(&mut rigbake_format::meta::Metadata),
        fn(&mut rigbake_format::meta::VatMetadata),
    );
    let lies: [Lie; 5] = [
        ("NaN fps", |m| m.clips[0].fps = f64::NAN, |_| {}),
        (
            "infinite duration",
            |m| m.clips[0].duration = f64::INFINITY,
            |_| {},
        ),
        ("negative duration", |m| m.clips[0].duration = -1.0, |_| {}),
        (
            "NaN bone error",
            |m| m.textures[0].max_error = f64::NAN,
            |_| {},
        ),
        (
            "negative VAT error",
            |_| {},
            |v| v.textures[0].max_error = -0.5,
        ),
    ];
    for (case, meta, vat) in lies {
        let area = Area::new();
        let container = baked_tentacle(&area);
        edit_container(&container, meta, vat);
        for args in every_reader(&container, &area.work()) {
            let r = run_clean(case, &area.work(), &args);
            assert_ne!(r.code, Some(0), "{case}: {args:?} passed\n{}", r.stdout);
        }
    }
    // A finite but absurd recorded error reads (the number is well formed)
    // but never earns a pass: verify fails instead of adding it to its
    // tolerance.
    let area = Area::new();
    let container = baked_tentacle(&area);
    edit_container(&container, |m| m.textures[0].max_error = 1e300, |_| {});
    let r = run_clean(
        "absurd bone error",
        &area.work(),
        &os(&[
            &"verify",
            &container,
            &"--source",
            &fixtures().join("tentacle.glb"),
        ]),
    );
    assert_eq!(
        r.code,
        Some(1),
        "absurd recorded error passed verify\n{}",
        r.stdout
    );
}

/// Class 4: shard reports that do not add up are refused, with checked
/// totals.
#[test]
fn class4_shard_sets_that_do_not_add_up_are_refused() {
    let area = Area::new();
    fs::copy(fixtures().join("tentacle.glb"), area.work().join("a.glb")).unwrap();
    fs::copy(fixtures().join("two_skins.glb"), area.work().join("b.glb")).unwrap();
    let mut reports = Vec::new();
    for shard in ["1/2", "2/2"] {
        let r = run_clean(
            "shard",
            &area.work(),
            &os(&[
                &"bake",
                &area.work(),
                &"--out",
                &area.out(),
                &"--shard",
                &shard,
                &"--json",
            ]),
        );
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        reports.push(doc);
    }
    let write = |name: &str, doc: &serde_json::Value| {
        let p = area.work().join(name);
        fs::write(&p, serde_json::to_vec(doc).unwrap()).unwrap();
        p
    };
    let one = write("1.json", &reports[0]);
    let two = write("2.json", &reports[1]);
    let ok = run_clean("merge", &area.work(), &os(&[&"merge-report", &one, &two]));
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    let mut mixed = reports[1].clone();
    mixed["shards"] = serde_json::json!(["2/3"]);
    let mut impossible = reports[1].clone();
    impossible["shards"] = serde_json::json!(["3/2"]);
    // Merged totals are summed from the models' outputs: two outputs of
    // u64::MAX bytes in a model of either shard overflow.
    let huge = serde_json::json!([
        { "path": "x", "bytes": u64::MAX },
        { "path": "y", "bytes": u64::MAX },
    ]);
    let with_models = usize::from(reports[0]["models"].as_array().unwrap().is_empty());
    let mut overflow = reports[with_models].clone();
    overflow["models"][0]["outputs"] = huge;
    let overflow_one = reports[1 - with_models].clone();
    let (overflow, overflow_one) = if with_models == 0 {
        (overflow_one, overflow)
    } else {
        (overflow, overflow_one)
    };
    let cases = [
        ("mixed N", vec![one.clone(), write("m.json", &mixed)], "N ="),
        (
            "impossible K/N",
            vec![one.clone(), write("i.json", &impossible)],
            "3/2",
        ),
        ("duplicate shard", vec![one.clone(), one.clone()], "1/2"),
        ("missing shard", vec![one.clone()], "missing"),
        (
            "totals that overflow",
            vec![write("o1.json", &overflow_one), write("o2.json", &overflow)],
            "overflow",
        ),
    ];
    for (case, files, needle) in cases {
        let mut args = vec![OsString::from("merge-report")];
        args.extend(files.into_iter().map(OsString::from));
        fails_with(case, &area.work(), &args, needle);
    }
}

/// Class 5: nothing panics on a dependency's limits or on formatting: a
/// clip name of 65,536 characters bakes, inspects and verifies, printed cut
/// short; a manifest glob past the glob crate's limits is a clear error.
#[test]
fn class5_huge_names_and_patterns_end_cleanly() {
    let area = Area::new();
    let mut b = tentacle();
    b.get_mut("animations", 0)
        .insert("name".into(), serde_json::json!("x".repeat(65_536)));
    let model = area.work().join("long.glb");
    fs::write(&model, b.to_glb()).unwrap();
    let r = run_clean(
        "long clip name",
        &area.work(),
        &os(&[&"bake", &model, &"--out", &area.out(), &"--vat"]),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr.len() + r.stdout.len() < 20_000,
        "the name was printed whole"
    );
    let container = area.out().join("long/long.rigbake");
    for args in [
        os(&[&"inspect", &container]),
        os(&[&"inspect", &model]),
        os(&[&"verify", &container, &"--source", &model]),
        os(&[&"verify", &container, &"--source", &model, &"--json"]),
    ] {
        let r = run_clean("long clip name", &area.work(), &args);
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
        if !args.iter().any(|a| a == "--json") {
            assert!(r.stdout.len() < 20_000, "{args:?} printed the name whole");
        }
    }
    let manifest = area.work().join("rigbake.toml");
    fs::write(
        &manifest,
        format!(
            "models = \".\"\nout = \"out\"\n[[model]]\npath = \"{}\"\n",
            "{a,".repeat(5000) + &"}".repeat(5000)
        ),
    )
    .unwrap();
    fails_with(
        "glob past the limits",
        &area.work(),
        &os(&[&"bake", &"--manifest", &manifest]),
        "rigbake.toml",
    );
}
