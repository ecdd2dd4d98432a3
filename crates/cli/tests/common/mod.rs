//! Helpers shared by the CLI integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[allow(unused_imports)]
pub use rigbake_fixtures::testkit::files::{
    Rgba, containers, glb_primitive, read_exr, rgba_f32, tree,
};
#[allow(unused_imports)]
pub use rigbake_fixtures::testkit::models::{model_files, shared_models};
#[allow(unused_imports)]
pub use rigbake_fixtures::testkit::reference;

/// Runs the `rigbake` binary with `args`.
pub fn rigbake(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .args(args)
        .output()
        .expect("rigbake runs")
}

/// Runs `rigbake bake` on `models` into `out` with extra `flags`. When the
/// bake succeeds, every container it wrote has its `inspect --json`
/// document and its sidecar checked against formats/inspect.schema.json
/// and formats/sidecar.schema.json ([`check_documents`]), so every bake of
/// the suite keeps the documented schemas.
pub fn bake(models: &[PathBuf], out: &Path, flags: &[&str]) -> Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["bake".as_ref()];
    args.extend(models.iter().map(|m| m.as_os_str()));
    args.push("--out".as_ref());
    args.push(out.as_os_str());
    args.extend(flags.iter().map(|f| std::ffi::OsStr::new(*f)));
    let started = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
    let r = rigbake(&args);
    if r.status.success() {
        check_documents(out, started);
    }
    r
}

/// Runs `rigbake vat MODEL --compat openvat --out OUT`, asserting success.
pub fn openvat_export(model: &Path, out: &Path) {
    openvat_export_with(model, out, &[]);
}

/// [`openvat_export`] with more flags; returns stderr (the warnings).
pub fn openvat_export_with(model: &Path, out: &Path, flags: &[&str]) -> String {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "vat".as_ref(),
        model.as_os_str(),
        "--compat".as_ref(),
        "openvat".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ];
    args.extend(flags.iter().map(std::ffi::OsStr::new));
    let r = rigbake(&args);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    String::from_utf8_lossy(&r.stderr).into_owned()
}

/// A validator for `formats/<name>`.
pub fn schema_validator(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats")
        .join(name);
    let schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("the schema")).expect("schema JSON");
    jsonschema::validator_for(&schema).expect("the schema itself is valid")
}

/// Panics with every error when `doc` is not valid under `validator`.
pub fn assert_schema(validator: &jsonschema::Validator, doc: &serde_json::Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

/// Checks every container under `out` written since `since`: the
/// document `rigbake inspect --json` prints for it (built by the same
/// library call) against formats/inspect.schema.json, and the sidecar
/// beside it against formats/sidecar.schema.json and against the
/// document's `sidecar`.
pub fn check_documents(out: &Path, since: std::time::SystemTime) {
    use std::sync::OnceLock;
    static INSPECT: OnceLock<jsonschema::Validator> = OnceLock::new();
    static SIDECAR: OnceLock<jsonschema::Validator> = OnceLock::new();
    let inspect = INSPECT.get_or_init(|| schema_validator("inspect.schema.json"));
    let sidecar = SIDECAR.get_or_init(|| schema_validator("sidecar.schema.json"));
    for entry in walkdir::WalkDir::new(out)
        .into_iter()
        .filter_map(Result::ok)
    {
        let path = entry.path();
        let fresh = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .is_some_and(|t| t >= since);
        if !(entry.file_type().is_file()
            && fresh
            && path.extension().is_some_and(|e| e == "rigbake"))
        {
            continue;
        }
        let (report, _) = rigbake::inspect::load_report(path, false)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Through text, as `inspect --json` prints it (an f32 becomes its
        // shortest decimal, as in the sidecar file).
        let doc: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
        assert_schema(
            inspect,
            &doc,
            &format!("inspect --json of {}", path.display()),
        );
        let side = path.with_extension("rigbake.json");
        let side_doc: serde_json::Value = serde_json::from_slice(
            &std::fs::read(&side).unwrap_or_else(|e| panic!("{}: {e}", side.display())),
        )
        .unwrap();
        assert_schema(sidecar, &side_doc, &side.display().to_string());
        assert_eq!(doc["sidecar"], side_doc, "{}", side.display());
    }
}

/// Runs the Khronos glTF-Validator (npm package in tools/node) on `file` and
/// returns its issues object, or `None` with a SKIPPED message when node or
/// the package is missing and `RIGBAKE_REQUIRE_GLTF_VALIDATOR` is not set.
pub fn gltf_validator(file: &Path) -> Option<serde_json::Value> {
    rigbake_fixtures::testkit::gltf_validator::validate(file).map(|report| report["issues"].clone())
}

/// The set vertex a playback mesh's lookup UV names (format 1.11,
/// formats/vat.md "Playback mesh"): `(s mod 2048, s div 2048)`, both
/// integers; panics when a component is not an integer below 2048.
#[allow(dead_code)]
pub fn lookup_vertex(uv: [f32; 2]) -> usize {
    for c in uv {
        assert!(
            c.fract() == 0.0 && (0.0..2048.0).contains(&c),
            "lookup UV {uv:?}: each component is an integer below 2048"
        );
    }
    uv[0] as usize + 2048 * uv[1] as usize
}

/// The silhouette of a screenshot drawn white on black: its size and, per
/// pixel, whether it is brighter than mid-grey (red and green over 127).
#[allow(dead_code)]
pub fn bright_mask(png_file: &Path) -> (u32, u32, Vec<bool>) {
    let file =
        std::fs::File::open(png_file).unwrap_or_else(|e| panic!("{}: {e}", png_file.display()));
    let decoder = png::Decoder::new(std::io::BufReader::new(file));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let px = (info.width * info.height) as usize;
    let mask = (0..px)
        .map(|i| buf[i * channels] > 127 && buf[i * channels + 1] > 127)
        .collect();
    (info.width, info.height, mask)
}

/// Intersection over union of two silhouettes, and the union's size.
#[allow(dead_code)]
pub fn iou(a: &[bool], b: &[bool]) -> (f64, usize) {
    let (mut both, mut either) = (0usize, 0usize);
    for (x, y) in a.iter().zip(b) {
        both += usize::from(*x && *y);
        either += usize::from(*x || *y);
    }
    (both as f64 / either.max(1) as f64, either)
}

/// The silhouette of an RGBA8 PNG drawn on a transparent clear colour (the
/// Bevy checkers' screenshots): its size and, per pixel, alpha over 127.
#[allow(dead_code)]
pub fn alpha_mask(png_file: &Path) -> (u32, u32, Vec<bool>) {
    let file =
        std::fs::File::open(png_file).unwrap_or_else(|e| panic!("{}: {e}", png_file.display()));
    let decoder = png::Decoder::new(std::io::BufReader::new(file));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(
        info.color_type,
        png::ColorType::Rgba,
        "{}",
        png_file.display()
    );
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let mask = buf.chunks_exact(4).map(|p| p[3] > 127).collect();
    (info.width, info.height, mask)
}

/// Mesa's lavapipe ICD file (`/usr/share/vulkan/icd.d/lvp_icd.*.json`),
/// which `VK_ICD_FILENAMES` selects, when installed.
#[allow(dead_code)]
pub fn lavapipe_icd() -> Option<PathBuf> {
    std::fs::read_dir("/usr/share/vulkan/icd.d")
        .ok()
        .and_then(|d| {
            d.filter_map(Result::ok).map(|e| e.path()).find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("lvp_icd.") && n.ends_with(".json"))
            })
        })
}
