//! Containers read back: `rigbake::inspect`'s summary lists clips, skins
//! and textures; on every shared model, the metadata survives encode,
//! decode and encode byte for byte, and a bake with its textures embedded
//! describes the same bake as one with them beside it, with the same
//! bytes.

use rigbake_format::container::Container;
use rigbake_format::meta::Storage;
use rigbake_format::texture::Precision;

use crate::common::{bake, bake_all, model_files, settings, shared_models};

/// The summary `rigbake inspect FILE.rigbake` prints
/// (`rigbake::inspect::render` of the report `load_report` makes).
#[test]
fn summary_lists_clips_skins_and_textures() {
    let out = tempfile::tempdir().unwrap();
    let model = rigbake_fixtures::fixture("tentacle.glb");
    bake(
        &model,
        out.path(),
        &settings(|s| s.precision = Precision::F16),
    )
    .baked();
    let (report, problem) =
        rigbake::inspect::load_report(&out.path().join("tentacle/tentacle.rigbake"), false)
            .unwrap();
    assert_eq!(problem, None);
    let text = rigbake::inspect::render(&report);
    for needle in [
        "tentacle.glb",
        "wave",
        "curl",
        "61",
        "31",
        "8 joints",
        "bones.skin0.exr",
        "32 x 92",
        "f16",
        "max error",
    ] {
        assert!(text.contains(needle), "`{needle}` missing from:\n{text}");
    }
    // f16 is lossy: a non-zero error is reported.
    assert!(
        !text.contains("largest encoding error 0 (lossless)"),
        "{text}"
    );
}

#[test]
fn containers_round_trip_on_every_shared_model() {
    let Some(models) = shared_models("containers_round_trip_on_every_shared_model") else {
        return;
    };
    let files: Vec<_> = model_files(&models);
    let embedded = tempfile::tempdir().unwrap();
    let beside = tempfile::tempdir().unwrap();
    // Every model bakes (the Draco file is decoded) or is skipped.
    bake_all(
        &files,
        embedded.path(),
        &settings(|s| s.embed_textures = true),
    );
    bake_all(&files, beside.path(), &settings(|_| {}));
    let mut checked = 0;
    for file in &files {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let a_path = embedded.path().join(&stem).join(format!("{stem}.rigbake"));
        if !a_path.exists() {
            continue;
        }
        let mut a = Container::open(&a_path).unwrap();
        a.verify().unwrap();
        let b =
            Container::open(&beside.path().join(&stem).join(format!("{stem}.rigbake"))).unwrap();
        // Metadata survives encode -> decode -> encode byte for byte.
        let meta_section = a
            .sections()
            .iter()
            .position(|s| s.kind == rigbake_format::records::SectionKind::Metadata)
            .unwrap();
        let raw = a.read_section(meta_section).unwrap();
        let decoded =
            rigbake_format::codec::decode::<rigbake_format::meta::Metadata>(&raw).unwrap();
        assert_eq!(
            rigbake_format::codec::encode(&decoded).unwrap(),
            raw,
            "{stem}"
        );
        // Both storage modes describe the same bake, and embedded payloads
        // are byte-identical to the files written beside the container.
        let (ma, mb) = (a.metadata().clone(), b.metadata().clone());
        assert_eq!(ma.clips, mb.clips, "{stem}");
        assert_eq!(ma.skins, mb.skins, "{stem}");
        assert_eq!(ma.source, mb.source, "{stem}");
        assert_eq!(ma.textures.len(), mb.textures.len());
        for (ta, tb) in ma.textures.iter().zip(&mb.textures) {
            let Storage::Section(index) = ta.storage else {
                panic!("{stem}: not embedded")
            };
            assert_eq!(tb.storage, Storage::File);
            assert_eq!(
                (ta.bytes, ta.crc32, ta.width, ta.height),
                (tb.bytes, tb.crc32, tb.width, tb.height)
            );
            let payload = a.read_section(index as usize).unwrap();
            let file_bytes = std::fs::read(beside.path().join(&stem).join(&tb.name)).unwrap();
            assert!(payload == file_bytes, "{stem}: {} differs", tb.name);
        }
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} containers checked");
}
