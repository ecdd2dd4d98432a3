//! The whole bake of arbitrary bytes as a GLB into a scratch folder. The
//! first two input bytes choose the options (encoding, EXR compression,
//! layouts, precision, root motion, embedding, OpenVAT, ...), the rest is
//! the model. `bake_model` turns a panic into an `Internal` error for the
//! batch's sake; here that is the crash it stands for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rigbake::settings::{AnchorSettings, Outputs};
use rigbake::{BakeSettings, ModelJob, Stage, bake_model, job::Silent};
use rigbake_core::timeline::root_motion::RootMotionRequest;
use rigbake_format::meta::{TextureCompression, VatEncoding};
use rigbake_types::{MatrixLayout, Precision, RootMotionMode, VatLayoutMode};

/// The bake options the two option bytes select.
fn settings(a: u8, b: u8) -> BakeSettings {
    let bit = |byte: u8, i: u32| byte >> i & 1 == 1;
    let mut s = BakeSettings {
        outputs: Outputs {
            bones: true,
            weights: true,
            vat: true,
            anchors: true,
        },
        // Small textures keep hostile frame counts cheap, and fold often.
        max_texture_size: if bit(b, 4) { 64 } else { 1024 },
        embed_textures: bit(a, 5),
        anchors: AnchorSettings {
            nodes: Vec::new(),
            auto: true,
            exr: bit(a, 6),
        },
        openvat: bit(a, 7),
        layout: if bit(b, 0) {
            MatrixLayout::Mat3x4
        } else {
            MatrixLayout::Mat4
        },
        precision: if bit(b, 1) {
            Precision::F16
        } else {
            Precision::F32
        },
        root_motion: RootMotionRequest {
            mode: match b >> 2 & 3 {
                1 => RootMotionMode::Extract,
                2 => RootMotionMode::ExtractYaw,
                _ => RootMotionMode::Keep,
            },
            node: None,
        },
        weights_as_uv: bit(b, 5),
        ..BakeSettings::default()
    };
    s.vat.encoding = match a & 3 {
        1 => VatEncoding::Exr32,
        2 => VatEncoding::Png16,
        _ => VatEncoding::Exr16,
    };
    s.vat.compression = match a >> 2 & 3 {
        1 if s.vat.encoding != VatEncoding::Png16 => TextureCompression::Zip,
        2 if s.vat.encoding != VatEncoding::Png16 => TextureCompression::Pxr24,
        _ if s.vat.encoding == VatEncoding::Png16 => TextureCompression::Deflate,
        _ => TextureCompression::None,
    };
    s.vat.options.normals = bit(a, 4);
    s.vat.options.tangents = bit(b, 6);
    s.vat.options.max_texture_size = s.max_texture_size;
    s.vat.options.layout = if bit(b, 7) {
        VatLayoutMode::PerPrimitive
    } else {
        VatLayoutMode::Atlas
    };
    s
}

fuzz_target!(|input: &[u8]| {
    let [a, b, bytes @ ..] = input else {
        return;
    };
    let settings = settings(*a, *b);
    let scratch =
        tempfile::tempdir_in(std::env::var_os("FUZZ_SCRATCH").unwrap_or_else(|| "/tmp".into()))
            .expect("scratch folder");
    let input = scratch.path().join("model.glb");
    std::fs::write(&input, bytes).expect("write input");
    let out_dir = scratch.path().join("out");
    let job = ModelJob {
        input: &input,
        bytes,
        out_dir: &out_dir,
        settings: &settings,
        key: "fuzz",
        shared: None,
        observer: &Silent,
        source_location: None,
    };
    if let Err(e) = bake_model(&job) {
        assert!(e.stage != Stage::Internal, "internal error: {e}");
    }
});
