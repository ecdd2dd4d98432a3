//! KTX2 and DDS texture containers (`--texture-container`): every texture
//! of a bake holds, sample for sample, what the EXR (or PNG) bake of the
//! same settings holds, read back with readers we did not write (the
//! `ktx2` and `ddsfile` crates, the parsers Bevy's loaders use; every DDS
//! also decoded by the `image_dds` crate; `tools/node/ktx_check.mjs` runs
//! three.js's own ktx-parse); bakes in them verify and play; damaged files beside a
//! container are refused naming the file and the header field.

mod common;

use std::path::{Path, PathBuf};

use common::{bake, rigbake, shared_models};
use rigbake_format::container::Container;

/// Every texture file of a container, with its record's shape: (name,
/// width, height, channels stored by EXR/PNG, layer in its file, layers).
#[derive(Clone)]
struct Texture {
    name: String,
    width: usize,
    height: usize,
    channels: usize,
    layer: usize,
    layers: usize,
}

fn textures(container: &Path) -> Vec<Texture> {
    let c = Container::open(container).unwrap();
    let mut out: Vec<Texture> = c
        .metadata()
        .textures
        .iter()
        .map(|t| Texture {
            name: t.name.clone(),
            width: t.width as usize,
            height: t.height as usize,
            channels: 4,
            layer: 0,
            layers: 1,
        })
        .collect();
    if let Some(vat) = c.records().vat.as_ref() {
        let folds = c
            .records()
            .layout
            .as_ref()
            .map(|l| l.folds.clone())
            .unwrap_or_default();
        for (i, t) in vat.textures.iter().enumerate() {
            // Page k of a folded stream: layer k of a KTX2/DDS file.
            let (layer, layers) = folds
                .iter()
                .find_map(|f| match f.texture {
                    rigbake_format::meta::FoldedTexture::Vat(first)
                        if (first as usize..first as usize + f.pages as usize).contains(&i) =>
                    {
                        Some((i - first as usize, f.pages as usize))
                    }
                    _ => None,
                })
                .unwrap_or((0, 1));
            out.push(Texture {
                name: t.name.clone(),
                width: t.width as usize,
                height: t.height as usize,
                channels: usize::from(t.channels),
                layer,
                layers,
            });
        }
    }
    if let Some(anchors) = c
        .records()
        .rig
        .as_ref()
        .and_then(|r| r.anchor_texture.clone())
    {
        // No record gives the anchor texture's size: the comparison takes
        // it from the EXR bake's file.
        out.push(Texture {
            name: anchors,
            width: 0,
            height: 0,
            channels: 4,
            layer: 0,
            layers: 1,
        });
    }
    out
}

/// Samples of an EXR or PNG texture of the reference bake: per texel, its
/// stored channels as raw bits (f32 bits, or u16 samples).
/// Also returns the file's width and height.
fn reference_samples(dir: &Path, t: &Texture) -> (Vec<u32>, (usize, usize)) {
    let path = dir.join(&t.name);
    let file = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
    if t.name.ends_with(".png") {
        let d = rigbake_format::texture::png::read(file).unwrap();
        assert_eq!(d.channels, t.channels, "{}", path.display());
        let shape = (d.width, d.height);
        (d.samples.into_iter().map(u32::from).collect(), shape)
    } else {
        let d = rigbake_format::texture::exr::read(file).unwrap();
        let mut bits = Vec::with_capacity(d.data.len());
        for px in d.data.chunks_exact(4) {
            bits.extend(px[..t.channels].iter().map(|v| v.to_bits()));
        }
        (bits, (d.width, d.height))
    }
}

/// What the independent readers make of a KTX2 or DDS file: the Vulkan or
/// DXGI format's sample size, and layer `t.layer`'s samples, the channels
/// the EXR/PNG stores (float bits or u16), checking alpha is 1 where the
/// EXR/PNG has none.
fn gpu_samples(path: &Path, t: &Texture) -> Vec<u32> {
    let bytes = std::fs::read(path).unwrap();
    let (sample_bytes, float, data): (usize, bool, Vec<u8>) = if path.extension().unwrap() == "dds"
    {
        let dds = ddsfile::Dds::read(&mut &bytes[..]).unwrap();
        assert_eq!(
            (dds.get_width(), dds.get_height()),
            (t.width as u32, t.height as u32)
        );
        assert_eq!(
            dds.get_num_array_layers(),
            t.layers as u32,
            "{}",
            path.display()
        );
        let (size, float) = match dds.get_dxgi_format() {
            Some(ddsfile::DxgiFormat::R32G32B32A32_Float) => (4, true),
            Some(ddsfile::DxgiFormat::R16G16B16A16_Float) => (2, true),
            Some(ddsfile::DxgiFormat::R16G16B16A16_UNorm) => (2, false),
            other => panic!("{}: DXGI format {other:?}", path.display()),
        };
        let layer = t.width * t.height * 4 * size;
        let data = dds.get_data(t.layer as u32).unwrap()[..layer].to_vec();
        check_with_image_dds(path, &dds, t, (size, float), &data);
        (size, float, data)
    } else {
        let reader = ktx2::Reader::new(&bytes[..]).unwrap();
        let h = reader.header();
        assert_eq!(
            (h.pixel_width, h.pixel_height),
            (t.width as u32, t.height as u32)
        );
        assert_eq!(h.layer_count.max(1), t.layers as u32, "{}", path.display());
        assert_eq!(h.level_count, 1);
        let (size, float) = match h.format {
            Some(ktx2::Format::R32G32B32A32_SFLOAT) => (4, true),
            Some(ktx2::Format::R16G16B16A16_SFLOAT) => (2, true),
            Some(ktx2::Format::R16G16B16A16_UNORM) => (2, false),
            other => panic!("{}: format {other:?}", path.display()),
        };
        let level = reader.levels().next().unwrap();
        KTX_LEVELS.with(|l| {
            l.borrow_mut().push(KtxLevel {
                path: path.to_path_buf(),
                format: h.format.map_or(0, |f| f.value()),
                width: t.width,
                height: t.height,
                layers: t.layers,
                zstd: h.supercompression_scheme.is_some(),
                sha256: format!("{:x}", <sha2::Sha256 as sha2::Digest>::digest(level.data)),
            })
        });
        let raw = match h.supercompression_scheme {
            None => level.data.to_vec(),
            Some(ktx2::SupercompressionScheme::Zstandard) => {
                zstd::bulk::decompress(level.data, level.uncompressed_byte_length as usize).unwrap()
            }
            other => panic!("{}: supercompression {other:?}", path.display()),
        };
        assert_eq!(raw.len() as u64, level.uncompressed_byte_length);
        let layer = t.width * t.height * 4 * size;
        (
            size,
            float,
            raw[t.layer * layer..(t.layer + 1) * layer].to_vec(),
        )
    };
    let samples: Vec<u32> = data
        .chunks_exact(sample_bytes)
        .map(|b| match (sample_bytes, float) {
            (4, _) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            // Half floats widen exactly: compare the f32 bits EXR's reader gives.
            (_, true) => half::f16::from_bits(u16::from_le_bytes([b[0], b[1]]))
                .to_f32()
                .to_bits(),
            _ => u32::from(u16::from_le_bytes([b[0], b[1]])),
        })
        .collect();
    let one = if float { 1f32.to_bits() } else { 65535 };
    let mut kept = Vec::with_capacity(samples.len());
    for texel in samples.chunks_exact(4) {
        kept.extend_from_slice(&texel[..t.channels]);
        if t.channels == 3 {
            assert_eq!(texel[3], one, "{}: alpha of an RGB stream", path.display());
        }
    }
    kept
}

thread_local! {
    /// How many DDS layers `image_dds` decoded in this test.
    static IMAGE_DDS_DECODED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Decodes layer `t.layer` of a DDS file with the `image_dds` crate (its
/// own surface layout and RGBA f32 conversion: half floats widened, UNORM
/// divided by 65535) and checks that it finds, bit for bit, the samples in
/// `data` (the layer's little-endian RGBA of `size`-byte samples, which the
/// comparison holds equal to the EXR or PNG bake's).
fn check_with_image_dds(
    path: &Path,
    dds: &ddsfile::Dds,
    t: &Texture,
    (size, float): (usize, bool),
    data: &[u8],
) {
    let surface = image_dds::Surface::from_dds(dds).unwrap();
    let layer = t.layer as u32;
    let decoded = surface
        .decode_layers_mipmaps_rgbaf32(layer..layer + 1, 0..1)
        .unwrap_or_else(|e| panic!("{}: image_dds: {e}", path.display()));
    assert_eq!(
        (decoded.width, decoded.height, decoded.layers),
        (t.width as u32, t.height as u32, 1)
    );
    let want: Vec<u32> = data
        .chunks_exact(size)
        .map(|b| match (size, float) {
            (4, _) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            (_, true) => half::f16::from_bits(u16::from_le_bytes([b[0], b[1]]))
                .to_f32()
                .to_bits(),
            _ => (f32::from(u16::from_le_bytes([b[0], b[1]])) / 65535.0).to_bits(),
        })
        .collect();
    let got: Vec<u32> = decoded.data.iter().map(|v| v.to_bits()).collect();
    assert!(
        got == want,
        "{}: image_dds decodes other samples",
        path.display()
    );
    IMAGE_DDS_DECODED.with(|n| n.set(n.get() + 1));
}

/// A KTX2 level as the `ktx2` crate read it, for [`check_with_ktx_parse`].
struct KtxLevel {
    path: PathBuf,
    format: u32,
    width: usize,
    height: usize,
    layers: usize,
    zstd: bool,
    sha256: String,
}

thread_local! {
    /// The KTX2 files a test's comparisons read (one entry per page).
    static KTX_LEVELS: std::cell::RefCell<Vec<KtxLevel>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Reads every KTX2 file the comparisons read with three.js's ktx-parse
/// (`tools/node/ktx_check.mjs`) and checks that it finds the same header
/// and, byte for byte, the same level data as the `ktx2` crate (whose texels
/// equal the EXR bake's). Skips with a message when Node or the pinned
/// three.js is missing, unless `RIGBAKE_REQUIRE_THREEJS` is set.
fn check_with_ktx_parse(test: &str) {
    let mut levels = KTX_LEVELS.with(|l| std::mem::take(&mut *l.borrow_mut()));
    levels.dedup_by(|a, b| a.path == b.path);
    if levels.is_empty() {
        return;
    }
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/node");
    let required =
        std::env::var_os("RIGBAKE_REQUIRE_THREEJS").is_some_and(|v| v != "0" && !v.is_empty());
    let available = tools
        .join("node_modules/three/examples/jsm/libs/ktx-parse.module.js")
        .is_file();
    if !available {
        assert!(
            !required,
            "{test}: three.js is not installed in tools/node (npm ci --prefix tools/node)"
        );
        eprintln!("SKIPPED {test} (ktx-parse part): three.js is not installed in tools/node");
        return;
    }
    let mut documents = Vec::new();
    for chunk in levels.chunks(200) {
        let out = std::process::Command::new("node")
            .arg(tools.join("ktx_check.mjs"))
            .args(chunk.iter().map(|l| &l.path))
            .output();
        let out = match out {
            Ok(o) => o,
            Err(e) => {
                assert!(!required, "{test}: cannot run node: {e}");
                eprintln!("SKIPPED {test} (ktx-parse part): cannot run node: {e}");
                return;
            }
        };
        assert!(
            out.status.success(),
            "ktx_check.mjs: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            documents.push(serde_json::from_str::<serde_json::Value>(line).unwrap());
        }
    }
    assert_eq!(documents.len(), levels.len());
    for (doc, level) in documents.iter().zip(&levels) {
        let what = level.path.display();
        let layer_count = if level.layers > 1 { level.layers } else { 0 };
        assert_eq!(doc["vkFormat"], level.format, "{what}");
        assert_eq!(doc["pixelWidth"], level.width, "{what}");
        assert_eq!(doc["pixelHeight"], level.height, "{what}");
        assert_eq!(doc["pixelDepth"], 0, "{what}");
        assert_eq!(doc["layerCount"], layer_count, "{what}");
        assert_eq!(doc["levelCount"], 1, "{what}");
        assert_eq!(
            doc["supercompressionScheme"],
            u32::from(level.zstd) * 2,
            "{what}"
        );
        assert_eq!(doc["colorModel"], 1, "{what}");
        assert_eq!(doc["samples"], 4, "{what}");
        assert_eq!(doc["keyValue"]["KTXorientation"], "rd", "{what}");
        assert_eq!(
            doc["levels"][0]["sha256"],
            level.sha256.as_str(),
            "{what}: level data"
        );
    }
}

/// Every container under `dir`, by path relative to it.
fn containers(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "rigbake"))
        .map(|e| e.path().strip_prefix(dir).unwrap().to_path_buf())
        .collect();
    out.sort();
    out
}

/// Runs `rigbake <command> INPUTS --out OUT FLAGS` (`bake` through the
/// schema-checking helper).
fn run(command: &str, inputs: &[PathBuf], out: &Path, flags: &[&str]) -> std::process::Output {
    if command == "bake" {
        return bake(inputs, out, flags);
    }
    let mut args: Vec<&std::ffi::OsStr> = vec![command.as_ref()];
    args.extend(inputs.iter().map(|m| m.as_os_str()));
    args.extend(["--out".as_ref(), out.as_os_str()]);
    args.extend(flags.iter().map(std::ffi::OsStr::new));
    rigbake(&args)
}

/// Bakes `inputs` once per container with `flags` and checks that every
/// texture of the KTX2 and DDS bakes holds the EXR/PNG bake's samples.
fn assert_same_samples(inputs: &[PathBuf], flags: &[&str], gpu: &[&str]) -> usize {
    assert_same_samples_of("bake", inputs, flags, gpu)
}

/// [`assert_same_samples`] with `command` (`bake` or `vat`).
fn assert_same_samples_of(
    command: &str,
    inputs: &[PathBuf],
    flags: &[&str],
    gpu: &[&str],
) -> usize {
    let root = tempfile::tempdir().unwrap();
    let bake_in = |name: &str, extra: &[&str]| {
        let out = root.path().join(name);
        let mut all = flags.to_vec();
        all.extend_from_slice(extra);
        let r = run(command, inputs, &out, &all);
        assert!(
            r.status.success(),
            "{name} {all:?}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        out
    };
    let reference = bake_in("exr", &[]);
    let mut compared = 0;
    for container in gpu {
        let out = bake_in(container, &["--texture-container", container]);
        let expected = containers(&reference);
        assert_eq!(
            containers(&out),
            expected,
            "{container}: the same models bake"
        );
        for rel in &expected {
            let (ref_tex, gpu_tex) = (textures(&reference.join(rel)), textures(&out.join(rel)));
            assert_eq!(ref_tex.len(), gpu_tex.len(), "{}", rel.display());
            for (r, g) in ref_tex.iter().zip(&gpu_tex) {
                let ext = if *container == "dds" { ".dds" } else { ".ktx2" };
                assert!(g.name.ends_with(ext), "{}: {}", rel.display(), g.name);
                assert_eq!(
                    (r.width, r.height, r.channels),
                    (g.width, g.height, g.channels)
                );
                let ref_dir = reference.join(rel).parent().unwrap().to_path_buf();
                let (want, shape) = reference_samples(&ref_dir, r);
                let g = Texture {
                    name: g.name.clone(),
                    width: shape.0,
                    height: shape.1,
                    ..g.clone()
                };
                let got = gpu_samples(&out.join(rel).parent().unwrap().join(&g.name), &g);
                assert!(
                    want == got,
                    "{} {container}: {} differs from {}",
                    rel.display(),
                    g.name,
                    r.name
                );
                compared += 1;
            }
        }
    }
    // While the files exist: three.js's ktx-parse reads the same.
    check_with_ktx_parse(&format!("containers ({command} {flags:?})"));
    compared
}

/// The bakes the container tests compare: bone textures (f32, f16) with
/// anchors, and VAT with normals and tangents as exr32, exr16 and png16.
const SETTINGS: [&[&str]; 3] = [
    &[
        "--vat",
        "--normals",
        "--tangents",
        "--format",
        "exr32",
        "--anchors",
        "auto",
        "--anchors-exr",
    ],
    &[
        "--vat",
        "--normals",
        "--format",
        "exr16",
        "--precision",
        "f16",
    ],
    &[
        "--vat",
        "--normals",
        "--tangents",
        "--format",
        "png16",
        "--no-weights",
    ],
];

#[test]
fn fixtures_in_ktx2_and_dds_hold_the_exr_and_png_samples() {
    let inputs: Vec<PathBuf> = ["tentacle.glb", "hierarchy.gltf", "spec_worked_example.glb"]
        .iter()
        .map(|f| rigbake_fixtures::fixture(f))
        .collect();
    let mut compared = 0;
    for flags in SETTINGS {
        compared += assert_same_samples(&inputs, flags, &["ktx2", "ktx2-zstd", "dds"]);
    }
    assert!(compared >= 30, "{compared} textures compared");
    // Every DDS (bones f32 and f16, VAT exr32, exr16 and png16) also went
    // through image_dds's decoder.
    let decoded = IMAGE_DDS_DECODED.with(std::cell::Cell::get);
    assert!(decoded >= 10, "{decoded} DDS layers decoded by image_dds");
}

#[test]
fn every_shared_model_in_ktx2_and_dds_holds_the_exr_and_png_samples() {
    let Some(models) =
        shared_models("every_shared_model_in_ktx2_and_dds_holds_the_exr_and_png_samples")
    else {
        return;
    };
    // A low frame rate keeps the bakes small; every texture kind, sample
    // type and container is still written and compared.
    let mut compared = 0;
    for (flags, gpu) in
        SETTINGS
            .iter()
            .zip([["ktx2", "dds"], ["ktx2-zstd", "dds"], ["ktx2", "dds"]])
    {
        let mut all = flags.to_vec();
        all.extend(["--fps", "4"]);
        compared += assert_same_samples(std::slice::from_ref(&models), &all, &gpu);
    }
    eprintln!("{compared} textures compared");
    assert!(compared > 100, "{compared} textures compared");
}

#[test]
fn folded_pages_are_the_layers_of_one_file_and_verify() {
    let tentacle = rigbake_fixtures::fixture("tentacle.glb");
    // A tiny maximum size folds the VAT into several pages.
    let flags = ["--normals", "--max-texture-size", "16"];
    let root = tempfile::tempdir().unwrap();
    let exr = root.path().join("exr");
    let r = run("vat", std::slice::from_ref(&tentacle), &exr, &flags);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let pages = std::fs::read_dir(exr.join("tentacle"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".page")
        })
        .count();
    assert!(pages >= 4, "the EXR bake has {pages} page files");
    for container in ["ktx2", "dds"] {
        let out = root.path().join(container);
        let mut all = flags.to_vec();
        all.extend(["--texture-container", container]);
        let r = run("vat", std::slice::from_ref(&tentacle), &out, &all);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let files: Vec<String> = std::fs::read_dir(out.join("tentacle"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(container))
            .collect();
        assert!(files.iter().all(|n| !n.contains(".page")), "{files:?}");
        let layered = textures(&out.join("tentacle/tentacle.rigbake"));
        assert!(layered.iter().any(|t| t.layers > 1));
        let sidecar: serde_json::Value = serde_json::from_slice(
            &std::fs::read(out.join("tentacle/tentacle.rigbake.json")).unwrap(),
        )
        .unwrap();
        let layers: Vec<u64> = sidecar["textures"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["layer"].as_u64())
            .collect();
        assert!(layers.contains(&1), "sidecar layers {layers:?}");
        let v = rigbake(&[
            "verify".as_ref(),
            out.join("tentacle/tentacle.rigbake").as_os_str(),
        ]);
        assert!(
            v.status.success(),
            "{}{}",
            String::from_utf8_lossy(&v.stdout),
            String::from_utf8_lossy(&v.stderr)
        );
    }
    assert_same_samples_of(
        "vat",
        std::slice::from_ref(&tentacle),
        &flags,
        &["ktx2", "dds"],
    );
}

/// The verify report of the bake in `dir`, with the container's own file
/// names taken out (they differ by extension only).
fn verify_json(dir: &Path) -> serde_json::Value {
    let v = rigbake(&[
        "verify".as_ref(),
        dir.join("tentacle/tentacle.rigbake").as_os_str(),
        "--json".as_ref(),
    ]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    serde_json::from_slice(&v.stdout).unwrap()
}

/// The bytes of `rigbake preview --path PATH` of the bake in `dir`.
fn preview_png(dir: &Path, path: &str) -> Vec<u8> {
    let png = dir.join(format!("preview-{path}.png"));
    let r = rigbake(&[
        "preview".as_ref(),
        dir.join("tentacle/tentacle.rigbake").as_os_str(),
        "--out".as_ref(),
        png.as_os_str(),
        "--path".as_ref(),
        path.as_ref(),
        "--size".as_ref(),
        "96".as_ref(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    std::fs::read(png).unwrap()
}

#[test]
fn a_ktx2_or_dds_bake_verifies_and_previews_as_the_exr_bake_does() {
    let tentacle = rigbake_fixtures::fixture("tentacle.glb");
    let root = tempfile::tempdir().unwrap();
    let flags = ["--vat", "--normals", "--precision", "f16"];
    let exr = root.path().join("exr");
    assert!(
        bake(std::slice::from_ref(&tentacle), &exr, &flags)
            .status
            .success()
    );
    let want = verify_json(&exr);
    for container in ["ktx2", "ktx2-zstd", "dds"] {
        let out = root.path().join(container);
        let mut all = flags.to_vec();
        all.extend(["--texture-container", container]);
        assert!(
            bake(std::slice::from_ref(&tentacle), &out, &all)
                .status
                .success()
        );
        let got = verify_json(&out);
        // Same playback, same errors: every measured number agrees.
        assert_eq!(
            got["outputs"], want["outputs"],
            "{container}: verify's outputs"
        );
        assert_eq!(
            got["problems"], want["problems"],
            "{container}: verify's problems"
        );
        // And the same pictures, on both paths.
        for path in ["bones", "vat"] {
            assert!(
                preview_png(&out, path) == preview_png(&exr, path),
                "{container}: the {path} preview differs from the EXR bake's"
            );
        }
    }
}

#[test]
fn damaged_ktx2_and_dds_files_are_refused_naming_the_file_and_field() {
    let tentacle = rigbake_fixtures::fixture("tentacle.glb");
    let root = tempfile::tempdir().unwrap();
    for (container, ext, field_at, field) in [
        ("ktx2", "ktx2", 20usize, "pixelWidth"),
        ("dds", "dds", 128, "dxgiFormat"),
    ] {
        let out = root.path().join(container);
        let r = bake(
            std::slice::from_ref(&tentacle),
            &out,
            &["--vat", "--texture-container", container],
        );
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let dir = out.join("tentacle");
        let file = dir.join(format!("tentacle.vat.positions.{ext}"));
        let good = std::fs::read(&file).unwrap();
        let verify = || {
            let v = rigbake(&["verify".as_ref(), dir.join("tentacle.rigbake").as_os_str()]);
            (
                v.status.code(),
                String::from_utf8_lossy(&v.stderr).into_owned(),
            )
        };
        // A header field that disagrees with the records.
        let mut lying = good.clone();
        lying[field_at] ^= 1;
        std::fs::write(&file, &lying).unwrap();
        let (code, err) = verify();
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains(&format!("tentacle.vat.positions.{ext}")) && err.contains(field),
            "{err}"
        );
        // Truncated.
        std::fs::write(&file, &good[..good.len() - 7]).unwrap();
        let (code, err) = verify();
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains(&format!("tentacle.vat.positions.{ext}")),
            "{err}"
        );
        // Not a texture at all.
        std::fs::write(&file, b"hello").unwrap();
        let (code, err) = verify();
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains(&format!("not a {}", ext.to_uppercase())),
            "{err}"
        );
    }
}

#[test]
fn exr_compression_with_a_gpu_container_is_a_usage_error() {
    let tentacle = rigbake_fixtures::fixture("tentacle.glb");
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        std::slice::from_ref(&tentacle),
        out.path(),
        &[
            "--vat",
            "--texture-container",
            "dds",
            "--compression",
            "zip",
        ],
    );
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("--compression") && err.contains("dds"),
        "{err}"
    );
}

#[test]
fn a_manifest_chooses_the_container_and_the_bake_key_sees_it() {
    let root = tempfile::tempdir().unwrap();
    std::fs::copy(
        rigbake_fixtures::fixture("tentacle.glb"),
        root.path().join("tentacle.glb"),
    )
    .unwrap();
    let manifest = root.path().join("rigbake.toml");
    let write = |container: &str| {
        std::fs::write(
            &manifest,
            format!("out = \"out\"\n[defaults]\ntexture_container = \"{container}\"\n[[model]]\npath = \"tentacle.glb\"\n"),
        )
        .unwrap();
    };
    let run = || {
        let r = rigbake(&["bake".as_ref(), "--manifest".as_ref(), manifest.as_os_str()]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    };
    write("ktx2");
    run();
    let dir = root.path().join("out/tentacle");
    assert!(dir.join("bones.skin0.ktx2").is_file());
    write("dds");
    run();
    // The setting is part of the key: the bake is redone, and the KTX2
    // files of the previous bake are removed as stale.
    assert!(dir.join("bones.skin0.dds").is_file());
    assert!(!dir.join("bones.skin0.ktx2").exists());
}

/// A Zstandard frame of `len` zero bytes in RLE blocks (4 bytes per 128
/// KiB), its content size recorded: a tiny file that claims a lot.
fn zero_frame(len: u64) -> Vec<u8> {
    let mut f = vec![0x28, 0xB5, 0x2F, 0xFD, 0xE0];
    f.extend_from_slice(&len.to_le_bytes());
    let mut left = len;
    loop {
        let n = left.min(128 << 10);
        left -= n;
        let header = u32::from(left == 0) | (1 << 1) | ((n as u32) << 3);
        f.extend_from_slice(&header.to_le_bytes()[..3]);
        f.push(0);
        if left == 0 {
            return f;
        }
    }
}

/// Rewrites the container at `file` with its VAT record edited: every
/// other section copied, every checksum right, so only the edited numbers
/// lie.
fn rewrite_vat(file: &Path, edit: impl FnOnce(&mut rigbake_format::meta::VatMetadata)) {
    use rigbake_format::container::ContainerWriter;
    use rigbake_format::records::SectionKind;
    let mut c = Container::open(file).unwrap();
    let meta = c.metadata().clone();
    let mut vat = c.records().vat.clone().unwrap();
    edit(&mut vat);
    let sections: Vec<_> = c.sections().to_vec();
    let mut payloads = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        payloads.push((s.kind, c.read_section(i).unwrap()));
    }
    drop(c);
    let mut w = ContainerWriter::new(std::fs::File::create(file).unwrap()).unwrap();
    for (kind, bytes) in &payloads {
        match *kind {
            SectionKind::Metadata => {}
            SectionKind::Vat => {
                let record = rigbake_format::codec::encode(&vat).unwrap();
                w.add_section(SectionKind::Vat, &record).unwrap();
            }
            k => {
                w.add_section(k, bytes).unwrap();
            }
        }
    }
    w.finish(&meta).unwrap();
}

/// Issue 49, class 2: a 64 KiB Zstandard frame behind a VAT record that
/// claims 16384 x 16384 half floats (exactly the decode limit) made
/// `verify` and `preview --path vat` decompress 2 GiB, widen it to 4 GiB
/// and abort. The records now agree with each other, so only the model's
/// own data (its vertices and rows) can refuse them: quickly, naming the
/// file and the texture, within a 3 GiB address space.
#[test]
fn a_tiny_zstd_frame_claiming_a_huge_vat_is_refused_by_what_the_model_needs() {
    use rigbake_format::texture::gpu_spec::{GpuSpec, SampleType};
    let tentacle = rigbake_fixtures::fixture("tentacle.glb");
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("out");
    let r = bake(
        std::slice::from_ref(&tentacle),
        &out,
        &[
            "--vat",
            "--format",
            "exr16",
            "--texture-container",
            "ktx2-zstd",
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let dir = out.join("tentacle");
    let container = dir.join("tentacle.rigbake");
    let side = 16384u32;
    rewrite_vat(&container, |v| {
        v.max_texture_size = side;
        for t in &mut v.textures {
            (t.width, t.height) = (side, side);
        }
        for p in &mut v.primitives {
            (p.width, p.bands, p.height) = (side, 1, side);
        }
    });
    let spec = GpuSpec {
        width: side as usize,
        height: side as usize,
        layers: 1,
        sample: SampleType::F16,
    };
    let frame = zero_frame(spec.data_bytes());
    assert!(frame.len() < 70 << 10);
    let mut file = rigbake_format::texture::ktx2::header(&spec, true, frame.len() as u64);
    file.extend_from_slice(&frame);
    std::fs::write(dir.join("tentacle.vat.positions.ktx2"), &file).unwrap();
    let png = root.path().join("p.png");
    for args in [
        vec!["verify".as_ref(), container.as_os_str()],
        vec![
            "preview".as_ref(),
            container.as_os_str(),
            "--path".as_ref(),
            "vat".as_ref(),
            "--out".as_ref(),
            png.as_os_str(),
        ],
    ] {
        let started = std::time::Instant::now();
        let o = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 3145728 && exec \"$0\" \"$@\"")
            .arg(env!("CARGO_BIN_EXE_rigbake"))
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("tentacle.rigbake")
                && err.contains("tentacle.vat.positions.ktx2")
                && err.contains("16384 x 16384 x 1 texels")
                && err.contains("vertices x"),
            "{args:?}: {err}"
        );
        assert!(started.elapsed().as_secs() < 20, "{args:?}");
    }
    assert!(!png.exists());
}

/// The models `names` (copies of the tentacle: one skin, so one bone
/// texture for all) baked with `--share-bones` into `out`, with `env`.
fn share_bones(
    models: &Path,
    out: &Path,
    container: &str,
    env: Option<(&str, &str)>,
) -> std::process::Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_rigbake"));
    c.args([
        "bake",
        "--quiet",
        "--share-bones",
        "--texture-container",
        container,
    ])
    .arg(models)
    .arg("--out")
    .arg(out);
    if let Some((k, v)) = env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// The files in `OUT/_shared/bones` (none when the folder is missing).
fn shared_files(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("_shared/bones"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Issue 49, class 8: `--share-bones` with a GPU container bakes one
/// shared texture in that container, which every model's container
/// names and `verify` reads.
#[test]
fn shared_bones_in_ktx2_and_dds_bake_and_verify() {
    let root = tempfile::tempdir().unwrap();
    let models = root.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    for name in ["a.glb", "b.glb"] {
        std::fs::copy(rigbake_fixtures::fixture("tentacle.glb"), models.join(name)).unwrap();
    }
    for (container, ext) in [("ktx2", "ktx2"), ("ktx2-zstd", "ktx2"), ("dds", "dds")] {
        let out = root.path().join(container);
        let r = share_bones(&models, &out, container, None);
        assert!(
            r.status.success(),
            "{container}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let shared = shared_files(&out);
        assert_eq!(shared.len(), 1, "{container}: {shared:?}");
        assert!(shared[0].ends_with(&format!(".{ext}")), "{shared:?}");
        for m in ["a", "b"] {
            let file = out.join(m).join(format!("{m}.rigbake"));
            let name = Container::open(&file).unwrap().metadata().textures[0]
                .name
                .clone();
            assert_eq!(name, format!("../_shared/bones/{}", shared[0]));
            let v = rigbake(&["verify".as_ref(), file.as_os_str()]);
            assert!(
                v.status.success(),
                "{container} {m}: {}",
                String::from_utf8_lossy(&v.stderr)
            );
        }
    }
}

/// A model that fails after its shared bone texture was written leaves
/// nothing in the shared store; a texture stored by an earlier model stays.
#[test]
fn a_failed_model_leaves_nothing_new_in_the_shared_store() {
    let root = tempfile::tempdir().unwrap();
    for container in ["exr", "ktx2", "dds"] {
        let models = root.path().join(format!("models-{container}"));
        std::fs::create_dir_all(&models).unwrap();
        std::fs::copy(
            rigbake_fixtures::fixture("tentacle.glb"),
            models.join("a.glb"),
        )
        .unwrap();
        let out = root.path().join(container);
        let fail = Some(("RIGBAKE_FAULT", "fail-before-commit:a.glb"));
        let r = share_bones(&models, &out, container, fail);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{container}: {err}");
        assert!(err.contains("injected failure"), "{err}");
        assert_eq!(shared_files(&out), Vec::<String>::new(), "{container}");
        // Stored by a model that succeeds, the texture survives a later
        // model's failure.
        let r = share_bones(&models, &out, container, None);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let stored = shared_files(&out);
        assert_eq!(stored.len(), 1, "{container}: {stored:?}");
        std::fs::copy(
            rigbake_fixtures::fixture("tentacle.glb"),
            models.join("b.glb"),
        )
        .unwrap();
        let r = share_bones(
            &models,
            &out,
            container,
            Some(("RIGBAKE_FAULT", "fail-before-commit:b.glb")),
        );
        assert_eq!(r.status.code(), Some(1), "{container}");
        assert_eq!(shared_files(&out), stored, "{container}");
        let v = rigbake(&["verify".as_ref(), out.join("a/a.rigbake").as_os_str()]);
        assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    }
}

/// The RGBA codes of layer `t.layer` of a KTX2 or DDS file of 8-bit or
/// RGB10A2 UNORM samples, read with the `ktx2` and `ddsfile` crates and
/// unpacked by the Vulkan and DXGI definitions of those formats (an 8-bit
/// DDS also through image_dds's own decoder, which must find `code /
/// 255`), and each channel's largest code.
fn narrow_codes(path: &Path, t: &Texture) -> (Vec<u32>, [u32; 4]) {
    let bytes = std::fs::read(path).unwrap();
    let layer_bytes = t.width * t.height * 4;
    let (ten, data) = if path.extension().unwrap() == "dds" {
        let dds = ddsfile::Dds::read(&mut &bytes[..]).unwrap();
        assert_eq!(dds.get_num_array_layers(), t.layers as u32);
        let ten = match dds.get_dxgi_format() {
            Some(ddsfile::DxgiFormat::R8G8B8A8_UNorm) => false,
            Some(ddsfile::DxgiFormat::R10G10B10A2_UNorm) => true,
            other => panic!("{}: DXGI format {other:?}", path.display()),
        };
        let data = dds.get_data(t.layer as u32).unwrap()[..layer_bytes].to_vec();
        (ten, data)
    } else {
        let reader = ktx2::Reader::new(&bytes[..]).unwrap();
        let h = reader.header();
        assert_eq!(h.layer_count.max(1), t.layers as u32);
        let ten = match h.format {
            Some(ktx2::Format::R8G8B8A8_UNORM) => false,
            Some(ktx2::Format::A2B10G10R10_UNORM_PACK32) => true,
            other => panic!("{}: format {other:?}", path.display()),
        };
        let level = reader.levels().next().unwrap();
        let raw = match h.supercompression_scheme {
            None => level.data.to_vec(),
            Some(_) => {
                zstd::bulk::decompress(level.data, level.uncompressed_byte_length as usize).unwrap()
            }
        };
        (
            ten,
            raw[t.layer * layer_bytes..(t.layer + 1) * layer_bytes].to_vec(),
        )
    };
    let (codes, max): (Vec<u32>, [u32; 4]) = if ten {
        let codes = data
            .chunks_exact(4)
            .flat_map(|b| {
                let w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                [w & 0x3ff, (w >> 10) & 0x3ff, (w >> 20) & 0x3ff, w >> 30]
            })
            .collect();
        (codes, [1023, 1023, 1023, 3])
    } else {
        (data.iter().map(|&b| u32::from(b)).collect(), [255; 4])
    };
    // image_dds 0.7 decodes R8G8B8A8_UNORM but no R10G10B10A2 (it says
    // `UnsupportedDdsFormat`): the 10-bit DDS is read by ddsfile and the
    // DXGI definition alone.
    if path.extension().unwrap() == "dds" && !ten {
        let dds = ddsfile::Dds::read(&mut &bytes[..]).unwrap();
        let surface = image_dds::Surface::from_dds(&dds).unwrap();
        let layer = t.layer as u32;
        let decoded = surface
            .decode_layers_mipmaps_rgbaf32(layer..layer + 1, 0..1)
            .unwrap_or_else(|e| panic!("{}: image_dds: {e}", path.display()));
        for (i, (got, code)) in decoded.data.iter().zip(&codes).enumerate() {
            let want = *code as f32 / max[i % 4] as f32;
            assert!(
                (got - want).abs() < 1e-6,
                "{}: image_dds reads sample {i} as {got}, the format's definition {want}",
                path.display()
            );
        }
        IMAGE_DDS_DECODED.with(|n| n.set(n.get() + 1));
    }
    (codes, max)
}

#[test]
fn eight_and_ten_bit_vats_hold_the_png16_samples_to_half_a_step_and_verify() {
    // The 8 and 10-bit VAT formats (KTX2 and DDS only) quantise the same
    // values over the same bounds (positions) or the same octahedral
    // coordinates (normals, tangents) as PNG16: read with readers we did not
    // write, every sample is the 16-bit one to within half a step of each
    // (plus f32 rounding), and the bakes verify against their records.
    let inputs: Vec<PathBuf> = ["tentacle.glb", "hierarchy.gltf"]
        .iter()
        .map(|f| rigbake_fixtures::fixture(f))
        .collect();
    let root = tempfile::tempdir().unwrap();
    let flags = ["--vat", "--normals", "--tangents", "--no-weights"];
    let bake_in = |name: &str, extra: &[&str]| {
        let out = root.path().join(name);
        let mut all = flags.to_vec();
        all.extend_from_slice(extra);
        let r = bake(&inputs, &out, &all);
        assert!(
            r.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        out
    };
    let reference = bake_in("png16", &["--format", "png16"]);
    let mut compared = 0;
    for format in ["unorm8", "unorm10"] {
        for container in ["ktx2", "ktx2-zstd", "dds"] {
            let out = bake_in(
                &format!("{format}-{container}"),
                &["--format", format, "--texture-container", container],
            );
            for rel in containers(&reference) {
                let (ref_tex, gpu_tex) =
                    (textures(&reference.join(&rel)), textures(&out.join(&rel)));
                assert_eq!(ref_tex.len(), gpu_tex.len(), "{}", rel.display());
                // The VAT's textures (the bone textures keep their floats).
                let vat = |t: &&Texture| t.name.contains(".vat.");
                for (r, g) in ref_tex.iter().filter(vat).zip(gpu_tex.iter().filter(vat)) {
                    let dir = reference.join(&rel).parent().unwrap().to_path_buf();
                    let (want, _) = reference_samples(&dir, r);
                    let path = out.join(&rel).parent().unwrap().join(&g.name);
                    let (codes, max) = narrow_codes(&path, g);
                    let mut k = 0;
                    for texel in codes.chunks_exact(4) {
                        for c in 0..4 {
                            if c >= r.channels {
                                assert_eq!(texel[c], max[c], "{}: alpha of RGB", g.name);
                                continue;
                            }
                            let (a, b) = (
                                f64::from(texel[c]) / f64::from(max[c]),
                                f64::from(want[k]) / 65535.0,
                            );
                            let step = 0.5 / f64::from(max[c]) + 0.5 / 65535.0 + 1e-6;
                            assert!(
                                (a - b).abs() <= step,
                                "{} {format} {container}: {} sample {k} is {a}, PNG16's {b}",
                                rel.display(),
                                g.name
                            );
                            k += 1;
                        }
                    }
                    assert_eq!(k, want.len(), "{}: every sample compared", g.name);
                    compared += 1;
                }
            }
            for rel in containers(&out) {
                let v = rigbake(&["verify".as_ref(), out.join(&rel).as_os_str()]);
                assert!(
                    v.status.success(),
                    "{format} {container} {}: verify: {}{}",
                    rel.display(),
                    String::from_utf8_lossy(&v.stdout),
                    String::from_utf8_lossy(&v.stderr)
                );
            }
        }
    }
    assert!(compared >= 18, "{compared} textures compared");
    assert!(IMAGE_DDS_DECODED.with(std::cell::Cell::get) >= 2);
}
