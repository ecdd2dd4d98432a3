//! Settings a library user can build but the command line cannot: each is
//! refused with a clear error before anything is written, never baked into
//! a container rigbake would then refuse to read.

use rigbake::{BakeSettings, Baked, ModelJob, bake_model, job::Silent};
use rigbake_format::meta::{TextureCompression, VatEncoding};

/// Bakes `fixtures/tentacle.glb` with `settings` into `out`.
fn bake(settings: &BakeSettings, out: &std::path::Path) -> Result<Baked, rigbake::BakeError> {
    let input = rigbake_fixtures::fixture("tentacle.glb");
    bake_model(&ModelJob {
        input: &rigbake::ModelInput::read(&input, settings).unwrap(),
        out_dir: out,
        settings,
        key: "test",
        shared: None,
        observer: &Silent,
        source_location: None,
        protected: None,
    })
}

/// `deflate` is what PNG files are compressed with, not a compression to
/// ask for: a PNG16 VAT with it used to bake a container whose reader
/// refused its compression record (found by fuzzing, docs/fuzzing.md).
#[test]
fn deflate_asked_as_the_vat_compression_is_refused() {
    for encoding in [VatEncoding::Png16, VatEncoding::Exr16] {
        let mut settings = BakeSettings::default();
        settings.outputs.set(rigbake_types::OutputKind::Vat, true);
        settings.vat.encoding = encoding;
        settings.vat.compression = TextureCompression::Deflate;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("tentacle");
        let e = bake(&settings, &out).expect_err("deflate is refused");
        assert!(
            e.to_string().contains("`deflate` is not a choice"),
            "{encoding:?}: {e}"
        );
        assert!(
            !out.join("tentacle.rigbake").exists(),
            "{encoding:?}: nothing is written"
        );

        // Left at none, the same bake is written and reads back.
        settings.vat.compression = TextureCompression::None;
        assert!(matches!(bake(&settings, &out), Ok(Baked::Written { .. })));
        rigbake_format::container::Container::open(&out.join("tentacle.rigbake")).unwrap();
    }
}
