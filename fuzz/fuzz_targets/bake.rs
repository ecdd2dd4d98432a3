//! The whole bake of arbitrary bytes as a GLB into a scratch folder, then
//! what `rigbake verify` does with it: playback loads the bake and both
//! paths are measured against direct evaluation of the source. The first
//! three input bytes choose the options (encoding, EXR or PNG compression,
//! layouts, precision, root motion, embedding, OpenVAT, and the compact
//! forms of issue 52: texture container, `qts`, 8 and 10-bit and packed
//! VATs, `--max-error`), the rest is the model.
//! `bake_model` turns a panic into an `Internal` error for the batch's
//! sake; here that is the crash it stands for.
//!
//! With `FUZZ_VERIFY_FAILS=DIR`, an input whose bake succeeds but does not
//! verify (an error beyond the recorded ones and `rigbake verify`'s default
//! tolerances, recorded influence loss accepted) is
//! copied into DIR for a person to look at: a disagreement between the bake
//! and the independent reference, or a tolerance that is wrong for it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rigbake::playback::{self, Paths};
use rigbake::settings::AnchorSettings;
use rigbake::verify::{self as measure, Tolerances, judge};
use rigbake::{BakeSettings, Baked, ModelInput, ModelJob, Stage, bake_model, job::Silent};
use rigbake_core::timeline::root_motion::RootMotionRequest;
use rigbake_format::meta::{TextureCompression, VatEncoding};
use rigbake_types::{
    DirectionEncoding, ErrorBudget, MatrixLayout, OutputKind, OutputKinds, PngCompression,
    Precision, RootMotionMode, TextureContainer, VatLayoutMode,
};

/// The bake options the three option bytes select (`c` the compact forms
/// of issue 52, all off when it is 0).
fn settings(a: u8, b: u8, c: u8) -> BakeSettings {
    let bit = |byte: u8, i: u32| byte >> i & 1 == 1;
    let mut s = BakeSettings {
        outputs: OutputKinds::of(
            &[
                OutputKind::Bones,
                OutputKind::Weights,
                OutputKind::Vat,
                OutputKind::Anchors,
                OutputKind::OpenVat,
            ][..if bit(a, 7) { 5 } else { 4 }],
        ),
        // Small textures keep hostile frame counts cheap, and fold often.
        max_texture_size: if bit(b, 4) { 64 } else { 1024 },
        embed_textures: bit(a, 5),
        anchors: AnchorSettings {
            nodes: Vec::new(),
            auto: true,
            exr: bit(a, 6),
        },
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
    // PNG is always deflate, which is not a request (the library refuses
    // `Deflate`): PNG16 asks for none, as the command line does.
    s.vat.compression = match a >> 2 & 3 {
        1 if s.vat.encoding != VatEncoding::Png16 => TextureCompression::Zip,
        2 if s.vat.encoding != VatEncoding::Png16 => TextureCompression::Pxr24,
        _ => TextureCompression::None,
    };
    // For PNG the same bits choose its deflate: stored blocks or fdeflate
    // (also for packed VATs and budget choices below: ignored elsewhere).
    if bit(a, 2) {
        s.vat.png_compression = PngCompression::None;
    }
    s.vat.options.normals = bit(a, 4);
    s.vat.options.tangents = bit(b, 6);
    s.vat.options.max_texture_size = s.max_texture_size;
    s.vat.options.layout = if bit(b, 7) {
        VatLayoutMode::PerPrimitive
    } else {
        VatLayoutMode::Atlas
    };
    s.texture_container = match c & 3 {
        1 => TextureContainer::Ktx2,
        2 => TextureContainer::Ktx2Zstd,
        3 => TextureContainer::Dds,
        _ => TextureContainer::Exr,
    };
    if bit(c, 2) {
        s.layout = MatrixLayout::Qts;
        if bit(c, 3) {
            s.precision = Precision::Unorm16;
        }
        // A skin `qts` cannot hold falls back to mat4 (else it is refused).
        s.layout_fallback = bit(c, 7).then_some(MatrixLayout::Mat4);
    }
    // The 8 and 10-bit forms live in KTX2 and DDS only (EXR is taken to
    // KTX2); packed normals need 16-bit positions.
    let narrow = match c >> 4 & 3 {
        1 => Some(VatEncoding::Unorm8),
        2 => Some(VatEncoding::Unorm10),
        3 => {
            s.vat.encoding = VatEncoding::Png16;
            s.vat.compression = TextureCompression::None;
            s.vat.direction_encoding = DirectionEncoding::Packed;
            None
        }
        _ => None,
    };
    if let Some(encoding) = narrow {
        s.vat.encoding = encoding;
        if s.texture_container == TextureContainer::Exr {
            s.texture_container = TextureContainer::Ktx2;
        }
    }
    if s.texture_container != TextureContainer::Exr {
        s.vat.compression = TextureCompression::None;
    }
    // A budget of 1e-4 of the model's size: the bake picks the forms.
    if bit(c, 6) {
        s.max_error = Some(ErrorBudget::Relative(1e-4));
    }
    s
}

fuzz_target!(|input_bytes: &[u8]| {
    let [a, b, c, bytes @ ..] = input_bytes else {
        return;
    };
    let settings = settings(*a, *b, *c);
    let scratch =
        tempfile::tempdir_in(std::env::var_os("FUZZ_SCRATCH").unwrap_or_else(|| "/tmp".into()))
            .expect("scratch folder");
    let input = scratch.path().join("model.glb");
    std::fs::write(&input, bytes).expect("write input");
    let out_dir = scratch.path().join("out");
    let model = match ModelInput::read(&input, &settings) {
        Ok(model) => model,
        Err(e) => return assert!(e.stage != Stage::Internal, "internal error: {e}"),
    };
    let job = ModelJob {
        input: &model,
        out_dir: &out_dir,
        settings: &settings,
        key: "fuzz",
        shared: None,
        observer: &Silent,
        source_location: None,
        protected: None,
    };
    match bake_model(&job) {
        Err(e) => assert!(e.stage != Stage::Internal, "internal error: {e}"),
        Ok(Baked::Skipped(_)) => {}
        Ok(Baked::Written { .. }) => {
            let container = rigbake::sink::container_path(&input, &out_dir);
            let problems = verify(&container, &input);
            if let (false, Some(dir)) = (problems.is_empty(), std::env::var_os("FUZZ_VERIFY_FAILS"))
            {
                let path = std::path::Path::new(&dir).join(format!("{:016x}", fxhash(input_bytes)));
                let _ = std::fs::write(&path, input_bytes);
                let _ = std::fs::write(path.with_extension("txt"), problems.join("\n"));
            }
        }
    }
});

/// Loads the bake as `rigbake verify` does and judges every clip of both
/// paths at every frame and between frames; the problems (none: it passes).
fn verify(container: &std::path::Path, source: &std::path::Path) -> Vec<String> {
    let loaded = match playback::load(container, Some(source), Paths::All) {
        Ok(l) => l,
        // A bake that cannot be read back is a failure too.
        Err(e) => return vec![format!("cannot load the bake: {e:?}")],
    };
    let subject = measure::Subject::of(&loaded);
    let selected: Vec<usize> = (0..loaded.clips.len()).collect();
    let paths = measure::Path::all(&loaded);
    let outputs = match measure::measure(&subject, &paths, &selected, 1) {
        Ok(o) => o,
        Err(e) => return vec![format!("cannot decode the bake: {e:?}")],
    };
    let tolerances = Tolerances {
        relative: measure::DEFAULT_RELATIVE_TOLERANCE,
        normal_degrees: 0.01,
        mid_relative: None,
        accept_recorded_loss: true,
    };
    // The recorded numbers besides the textures, recomputed, then every
    // clip of every path judged.
    let mut problems = measure::records::check_all(&loaded, &outputs).failures;
    for o in &outputs {
        for c in &o.clips {
            for p in judge(c, o.diagonal, &tolerances) {
                problems.push(format!("{:?} clip {}: {p}", o.output, c.clip));
            }
        }
    }
    problems
}

/// A stable name for a saved input.
fn fxhash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}
