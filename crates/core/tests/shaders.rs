//! The runtime shaders in `docs/shaders/`: the WGSL parses and validates
//! with naga (the WGSL front end of wgpu) and defines what the
//! documentation promises; the HLSL and GLSL versions define the same
//! functions (they are kept line-by-line parallel to the WGSL) and, when
//! the Khronos reference compiler `glslangValidator` is installed (Debian:
//! `glslang-tools`; CI installs it and sets `RIGBAKE_REQUIRE_GLSLANG`),
//! compile to SPIR-V, each example entry point.

use std::path::PathBuf;

fn shader(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/shaders")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Functions every version defines (the CPU reference's steps).
const FUNCTIONS: &[&str] = &[
    "add_weighted",
    "transform_point",
    "cofactor_normal",
    "safe_normalize",
    "lerp3",
    "bone_texel",
    "bone_matrix",
    "blend_bones",
    "skin",
    "bone_deform",
    "vat_texel",
    "vat_texel_from_uv",
    "sign_not_zero",
    "octahedral_decode",
    "vat_decode",
    "vat_position",
    "vat_normal",
    "vat_deform",
];

#[test]
fn wgsl_parses_and_validates() {
    let source = shader("rigbake.wgsl");
    let module = naga::front::wgsl::parse_str(&source)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&source)));
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&source)));
    let _ = info;
    let names: Vec<&str> = module
        .functions
        .iter()
        .filter_map(|(_, f)| f.name.as_deref())
        .collect();
    for f in FUNCTIONS {
        assert!(names.contains(f), "rigbake.wgsl lacks `{f}`");
    }
    let entries: Vec<&str> = module
        .entry_points
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(entries, ["bone_vertex", "vat_vertex"]);
}

#[test]
fn hlsl_and_glsl_define_the_same_functions() {
    for name in ["rigbake.hlsl", "rigbake.glsl"] {
        let source = shader(name);
        for f in FUNCTIONS {
            let defined = source
                .lines()
                .any(|l| !l.starts_with(' ') && l.contains(&format!(" {f}(")));
            assert!(defined, "{name} lacks a top-level `{f}`");
        }
    }
}

/// Compiles with glslangValidator; `None` (skipped) when it is missing and
/// not required.
fn glslang(args: &[&str]) -> Option<std::process::Output> {
    let required = std::env::var_os("RIGBAKE_REQUIRE_GLSLANG").is_some();
    match std::process::Command::new("glslangValidator")
        .args(args)
        .output()
    {
        Ok(out) => Some(out),
        Err(e) if !required => {
            eprintln!(
                "SKIPPED: glslangValidator is not installed ({e}); apt-get install glslang-tools"
            );
            None
        }
        Err(e) => panic!("cannot run glslangValidator: {e}"),
    }
}

#[test]
fn glsl_and_hlsl_compile_with_glslang() {
    let dir = tempfile::tempdir().unwrap();
    let shaders = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/shaders");
    // glslang picks the stage from the file extension.
    let vert = dir.path().join("rigbake.vert");
    std::fs::copy(shaders.join("rigbake.glsl"), &vert).unwrap();
    let hlsl = shaders.join("rigbake.hlsl");
    let spv = dir.path().join("out.spv");
    let (vert, hlsl, spv) = (
        vert.to_str().unwrap(),
        hlsl.to_str().unwrap(),
        spv.to_str().unwrap(),
    );
    let runs: [Vec<&str>; 4] = [
        vec!["-V", "-DBONE_PATH", vert, "-o", spv],
        vec!["-V", "-DVAT_PATH", vert, "-o", spv],
        vec![
            "-V",
            "-D",
            "-S",
            "vert",
            "-e",
            "bone_vertex",
            hlsl,
            "-o",
            spv,
        ],
        vec![
            "-V",
            "-D",
            "-S",
            "vert",
            "-e",
            "vat_vertex",
            hlsl,
            "-o",
            spv,
        ],
    ];
    for args in runs {
        let Some(out) = glslang(&args) else { return };
        assert!(
            out.status.success(),
            "glslangValidator {args:?}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
