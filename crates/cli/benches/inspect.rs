//! `inspect` reads only the header, the section table and the metadata:
//! its cost must not grow with the payload. Compares a container whose
//! embedded payload is 1 GiB with a tiny one (same metadata).
//!
//! Run: `cargo bench -p rigbake-cli --bench inspect`.

use std::io::Read;
use std::path::PathBuf;
use std::sync::OnceLock;

use rigbake_format::container::ContainerWriter;
use rigbake_format::records::SectionKind;

fn main() {
    divan::main();
}

/// (tiny, huge) container paths, written once.
fn containers() -> &'static (PathBuf, PathBuf, tempfile::TempDir) {
    static FILES: OnceLock<(PathBuf, PathBuf, tempfile::TempDir)> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("out");
        let model = rigbake_fixtures::fixture("tentacle.glb");
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_rigbake"))
            .args(["bake", "--quiet", "--out"])
            .arg(&out)
            .arg(&model)
            .status()
            .expect("rigbake runs");
        assert!(status.success());
        let tiny = out.join("tentacle/tentacle.rigbake");
        let meta = rigbake_format::container::Container::open(&tiny)
            .expect("tiny container")
            .metadata()
            .clone();
        let huge = dir.path().join("huge.rigbake");
        let file = std::io::BufWriter::new(std::fs::File::create(&huge).expect("create"));
        let mut w = ContainerWriter::new(file).expect("writer");
        w.add_section_from(
            SectionKind::Unknown(100),
            &mut std::io::repeat(0).take(1 << 30),
        )
        .expect("1 GiB payload");
        w.finish(&meta).expect("finish");
        (tiny, huge, dir)
    })
}

#[divan::bench(args = ["tiny", "1 GiB payload"])]
fn inspect(bencher: divan::Bencher<'_, '_>, which: &str) {
    let (tiny, huge, _) = containers();
    let path = if which == "tiny" { tiny } else { huge };
    bencher.bench(|| rigbake::inspect::load_report(divan::black_box(path), false).expect("report"));
}
