//! `verify` and `preview` on streamed VAT textures (issue 34, item 1): a
//! VAT EXR damaged after the bake fails both commands, naming the
//! texture. (That the streamed measurement and preview give exactly what
//! a whole decode gives is a test of the library:
//! crates/bake/tests/library/verify.rs.)

mod common;

use std::path::Path;

use common::{bake, containers, rigbake};

/// A VAT EXR damaged after the bake (cut short, or its blocks zeroed
/// past the header) fails `verify` and `preview` with exit code 1 and a
/// message naming the texture; the header is checked at load, the blocks
/// when their rows are read. Never a panic.
#[test]
fn a_damaged_streamed_exr_fails_naming_the_texture() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let model = fixtures.join("walker.glb");
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--vat", "--normals", "--no-weights"],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let container = containers(out.path()).remove(0);
    let dir = container.parent().unwrap();
    let name = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.ends_with(".vat.positions.exr"))
        .expect("a positions EXR");
    let texture = dir.join(&name);
    let good = std::fs::read(&texture).unwrap();
    let cut = good[..good.len() / 2].to_vec();
    let mut zeroed = good.clone();
    let from = good.len() / 3;
    zeroed[from..].fill(0);
    for (case, bytes) in [("cut short", cut), ("zeroed", zeroed)] {
        std::fs::write(&texture, &bytes).unwrap();
        let png = out.path().join("sheet.png");
        for args in [
            vec!["verify".as_ref(), container.as_os_str()],
            vec![
                "preview".as_ref(),
                container.as_os_str(),
                "--out".as_ref(),
                png.as_os_str(),
            ],
        ] {
            let r = rigbake(&args);
            let stderr = String::from_utf8_lossy(&r.stderr);
            let stdout = String::from_utf8_lossy(&r.stdout);
            assert_eq!(
                r.status.code(),
                Some(1),
                "{case}: {args:?}: {stderr} {stdout}"
            );
            assert!(
                stderr.contains(&name) || stdout.contains(&name),
                "{case}: {args:?} names the texture: {stderr} {stdout}"
            );
            assert!(!stderr.contains("panicked"), "{case}: {stderr}");
        }
    }
    std::fs::write(&texture, &good).unwrap();
    let r = rigbake(&["verify".as_ref(), container.as_os_str()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stdout));
}

/// The streamed measurement (VAT rows decoded a window at a time, here
/// windows of one row) gives exactly the numbers of the whole decode, on
/// the fixtures' bakes (the library test does the shared models).
#[test]
fn windowed_results_are_the_whole_files_results() {
    use rigbake::playback::{self, Decode, Paths};
    use rigbake::verify::{self, Subject};
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let out = tempfile::tempdir().unwrap();
    for model in ["walker.glb", "tentacle.glb"] {
        bake(&[fixtures.join(model)], out.path(), &["--vat", "--normals"]);
    }
    let mut compared = 0;
    for container in containers(out.path()) {
        let measure = |decode: Decode, window: u64| {
            let l = playback::load_with(&container, None, Paths::All, decode).unwrap();
            let subject = Subject::of(&l);
            let paths = verify::Path::all(&l);
            let all: Vec<usize> = (0..l.clips.len()).collect();
            verify::measure_windowed(&subject, &paths, &all, 1, window).unwrap()
        };
        let whole = measure(Decode::Whole, verify::WINDOW_BYTES);
        assert_eq!(measure(Decode::Rows, 1), whole, "{}", container.display());
        assert_eq!(measure(Decode::Rows, verify::WINDOW_BYTES), whole);
        compared += whole.len();
    }
    assert!(compared >= 4, "only {compared} outputs compared");
}
