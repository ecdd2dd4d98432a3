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

/// The WGSL module, parsed and validated by naga.
fn wgsl_module() -> naga::Module {
    let source = shader("rigbake.wgsl");
    let module = naga::front::wgsl::parse_str(&source)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&source)));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&source)));
    module
}

#[test]
fn wgsl_parses_and_validates() {
    let module = wgsl_module();
    let names: Vec<&str> = module
        .functions
        .iter()
        .filter_map(|(_, f)| f.name.as_deref())
        .collect();
    for f in FUNCTIONS {
        assert!(names.contains(f), "rigbake.wgsl lacks `{f}`");
    }
    // Both entry points are vertex shaders.
    let entries: Vec<(&str, naga::ShaderStage)> = module
        .entry_points
        .iter()
        .map(|e| (e.name.as_str(), e.stage))
        .collect();
    assert_eq!(
        entries,
        [
            ("bone_vertex", naga::ShaderStage::Vertex),
            ("vat_vertex", naga::ShaderStage::Vertex)
        ]
    );
    // The resource bindings the integration guide documents (group 0: the
    // textures; group 1: the per-instance and per-draw uniforms).
    let mut bindings: Vec<(String, u32, u32, bool)> = module
        .global_variables
        .iter()
        .filter_map(|(_, g)| {
            let b = g.binding.as_ref()?;
            let uniform = g.space == naga::AddressSpace::Uniform;
            Some((g.name.clone()?, b.group, b.binding, uniform))
        })
        .collect();
    bindings.sort_by_key(|(_, g, b, _)| (*g, *b));
    let expected = [
        ("bone_texture", 0, 0, false),
        ("vat_positions", 0, 1, false),
        ("vat_normals", 0, 2, false),
        ("instance", 1, 0, true),
        ("params", 1, 1, true),
    ];
    let expected: Vec<(String, u32, u32, bool)> = expected
        .iter()
        .map(|(n, g, b, u)| (n.to_string(), *g, *b, *u))
        .collect();
    assert_eq!(bindings, expected);
}

/// The parameter names of the top-level function `f` in a GLSL or HLSL
/// source (declared as `Type f(Type a, Type b, ...)`, possibly over several
/// lines), or `None` when it is not defined at top level.
fn c_like_parameters(source: &str, f: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = source.lines().collect();
    let start = lines.iter().position(|l| {
        !l.starts_with(' ') && !l.starts_with("//") && l.contains(&format!(" {f}("))
    })?;
    let text = lines[start..].join("\n");
    let open = text.find(&format!(" {f}("))? + f.len() + 2;
    let close = open + text[open..].find(')')?;
    let params = text[open..close].trim();
    if params.is_empty() || params == "void" {
        return Some(Vec::new());
    }
    Some(
        params
            .split(',')
            .map(|p| {
                // Qualifiers and the type come first, the name last, then
                // an array size or an HLSL semantic.
                let p = p.split(':').next().unwrap_or("");
                let name = p.split_whitespace().last().unwrap_or("");
                name.split('[').next().unwrap_or("").to_string()
            })
            .collect(),
    )
}

#[test]
fn hlsl_and_glsl_define_the_same_functions() {
    // Not only the names: each shared function takes the same parameters,
    // in the same order, as the WGSL function that naga parsed (the three
    // versions are kept line-by-line parallel, so a parameter dropped,
    // added or swapped in one of them is a divergence). Executing them is
    // done elsewhere: the WGSL on lavapipe (crates/shader-exec), the GLSL
    // in Chromium (the browser tests); glslang compiles GLSL and HLSL below.
    let module = wgsl_module();
    for name in ["rigbake.hlsl", "rigbake.glsl"] {
        let source = shader(name);
        for f in FUNCTIONS {
            let wgsl = module
                .functions
                .iter()
                .find(|(_, g)| g.name.as_deref() == Some(*f))
                .map(|(_, g)| g)
                .unwrap_or_else(|| panic!("rigbake.wgsl lacks `{f}`"));
            let expected: Vec<String> = wgsl
                .arguments
                .iter()
                .map(|a| a.name.clone().unwrap_or_default())
                .collect();
            let params = c_like_parameters(&source, f)
                .unwrap_or_else(|| panic!("{name} lacks a top-level `{f}`"));
            assert_eq!(params, expected, "{name}: parameters of `{f}`");
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
fn shader_headers_say_what_ci_checks() {
    // glslang runs in CI (`.ci/run`); a header claiming otherwise misleads
    // whoever edits the shaders.
    for name in ["rigbake.glsl", "rigbake.hlsl"] {
        let source = shader(name);
        let header: String = source.lines().take_while(|l| l.starts_with("//")).collect();
        assert!(!header.contains("compiler runs"), "{name}: {header}");
        assert!(header.contains("glslangValidator"), "{name}: {header}");
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
