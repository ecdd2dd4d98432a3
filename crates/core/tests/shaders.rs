//! The runtime shaders in `docs/shaders/`: the WGSL, the one source, parses
//! and validates with naga (the WGSL front end of wgpu) and defines what
//! the documentation promises; the GLSL (desktop 4.50 and WebGL2's GLSL ES
//! 3.00) and HLSL in `docs/shaders/generated/` are what naga's back ends
//! write from it (`RIGBAKE_BLESS=1`, or `just shaders`, rewrites them), and
//! the GLSL passes the Khronos reference compiler `glslangValidator` when
//! it is installed (Debian: `glslang-tools`; CI installs it and sets
//! `RIGBAKE_REQUIRE_GLSLANG`).

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
    "lerp_vec3",
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
fn wgsl_module() -> (naga::Module, naga::valid::ModuleInfo) {
    parse_validated(&shader("rigbake.wgsl"))
}

/// A WGSL source parsed and validated by naga (a panic shows naga's
/// message over the source).
fn parse_validated(source: &str) -> (naga::Module, naga::valid::ModuleInfo) {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(source)));
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{}", e.emit_to_string(source)));
    (module, info)
}

/// One entry point of `module` in GLSL (`options` say which dialect), and
/// what naga reports of its names.
fn write_glsl(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    options: &naga::back::glsl::Options,
    shader_stage: naga::ShaderStage,
    entry: &str,
) -> (String, naga::back::glsl::ReflectionInfo) {
    let pipeline = naga::back::glsl::PipelineOptions {
        shader_stage,
        entry_point: entry.to_owned(),
        multiview: None,
    };
    let mut text = String::new();
    let reflection = naga::back::glsl::Writer::new(
        &mut text,
        module,
        info,
        options,
        &pipeline,
        naga::proc::BoundsCheckPolicies::default(),
    )
    .and_then(|mut w| w.write())
    .unwrap_or_else(|e| panic!("naga cannot write GLSL of `{entry}`: {e:?}"));
    (text, reflection)
}

#[test]
fn wgsl_parses_and_validates() {
    let (module, _) = wgsl_module();
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

/// A generated file's comment: where it comes from and how to remake it
/// (after the `#version` line in GLSL, which GLSL ES wants first).
fn generated_header(what: &str) -> String {
    format!(
        "// {what}, generated from docs/shaders/rigbake.wgsl by naga {NAGA_VERSION}\n\
         // (`just shaders`, or RIGBAKE_BLESS=1 cargo test --test shaders). Do not\n\
         // edit: change rigbake.wgsl and generate again.\n"
    )
}

/// The naga release the generated files come from (Cargo.lock pins it).
const NAGA_VERSION: &str = "28.0.0";

/// Every generated shader: per vertex entry point, desktop GLSL 4.50 and
/// WebGL2's GLSL ES 3.00; and the whole module as HLSL (Shader Model 5.1).
fn generated() -> Vec<(String, String)> {
    use naga::back::{glsl, hlsl};
    let (module, info) = wgsl_module();
    let mut out = Vec::new();
    for entry in ["bone_vertex", "vat_vertex"] {
        let versions = [
            ("vert", "GLSL 4.50", glsl::Version::Desktop(450)),
            (
                "es.vert",
                "GLSL ES 3.00 (WebGL2)",
                glsl::Version::Embedded {
                    version: 300,
                    is_webgl: true,
                },
            ),
        ];
        for (extension, what, version) in versions {
            let options = glsl::Options {
                version,
                ..glsl::Options::default()
            };
            let (mut text, _) =
                write_glsl(&module, &info, &options, naga::ShaderStage::Vertex, entry);
            let header = generated_header(&format!("{what}, entry point `{entry}`"));
            let at = text.find('\n').map_or(0, |i| i + 1);
            text.insert_str(at, &header);
            out.push((format!("{entry}.{extension}"), text));
        }
    }
    let mut text = generated_header("HLSL, Shader Model 5.1, both entry points");
    let options = hlsl::Options::default();
    let pipeline = hlsl::PipelineOptions::default();
    hlsl::Writer::new(&mut text, &options, &pipeline)
        .write(&module, &info, None)
        .unwrap_or_else(|e| panic!("naga cannot write HLSL: {e:?}"));
    out.push(("rigbake.hlsl".to_owned(), text));
    out
}

fn generated_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/shaders/generated")
}

/// Asserts that the committed `path` holds `text` (what naga writes now);
/// with `RIGBAKE_BLESS` set, writes it first.
fn assert_committed(path: &std::path::Path, text: &str) {
    if std::env::var_os("RIGBAKE_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let committed = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}; run `just shaders`", path.display()));
    assert!(
        committed == text,
        "{} is not what naga writes from the WGSL; run `just shaders`",
        path.display()
    );
}

#[test]
fn the_generated_shaders_are_what_naga_writes_from_the_wgsl() {
    let dir = generated_dir();
    let files = generated();
    for (name, text) in &files {
        assert_committed(&dir.join(name), text);
    }
    // Nothing else in the folder: a file naga no longer writes goes.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = files.into_iter().map(|(n, _)| n).collect();
    expected.sort();
    assert_eq!(names, expected);
}

#[test]
fn the_generated_shaders_keep_the_reference_functions() {
    // What an integrator looks for in the generated files: the steps of
    // the reference by their WGSL names (each GLSL file holds the
    // functions its entry point calls; the HLSL holds them all).
    for (name, text) in generated() {
        let wanted: &[&str] = if name.starts_with("bone_vertex") {
            &[
                "bone_matrix",
                "blend_bones",
                "bone_deform",
                "cofactor_normal",
            ]
        } else if name.starts_with("vat_vertex") {
            &["vat_texel", "octahedral_decode", "vat_decode", "vat_deform"]
        } else {
            FUNCTIONS
        };
        for f in wanted {
            // naga appends `_` to a name that ends in a digit (none does:
            // Bevy's shader modules refuse such names, docs/shaders/README.md).
            let found = text.contains(&format!(" {f}(")) || text.contains(&format!(" {f}_("));
            assert!(found, "{name} lacks `{f}`");
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
fn the_generated_glsl_compiles_with_glslang() {
    // Desktop GLSL 4.50 and GLSL ES 3.00, each entry point, through the
    // reference compiler's front end (glslang picks the stage from the
    // `.vert` extension). naga's HLSL is for Microsoft's compilers, which
    // do not run here (docs/shaders/README.md).
    let dir = tempfile::tempdir().unwrap();
    // The viewer's stages (WebGL2) too, each in a file whose extension
    // names its stage.
    let (module, info) = viewer_module();
    let viewer = viewer_stages(&module, &info).into_iter().map(|s| {
        let extension = if s.stage == "vertex" { "vert" } else { "frag" };
        (format!("viewer_{}.es.{extension}", s.program), s.text)
    });
    for (name, text) in generated().into_iter().chain(viewer) {
        if !name.ends_with(".vert") && !name.ends_with(".frag") {
            continue;
        }
        let path = dir.path().join(&name);
        std::fs::write(&path, &text).unwrap();
        let Some(out) = glslang(&[path.to_str().unwrap()]) else {
            return;
        };
        assert!(
            out.status.success(),
            "glslangValidator {name}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ------------------------------------------------------------- the viewer

/// The viewer's shader source: the reference followed by the page's
/// bindings and entry points (`crates/view/assets/viewer.wgsl`).
fn viewer_source() -> String {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../crates/view/assets/viewer.wgsl");
    let page = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    format!("{}\n{page}", shader("rigbake.wgsl"))
}

/// The viewer's programs: its name in shaders.js, and its vertex and
/// fragment entry points.
const VIEWER_PROGRAMS: [(&str, &str, &str); 3] = [
    ("bones", "viewer_bone_vertex", "viewer_mesh_fragment"),
    ("vat", "viewer_vat_vertex", "viewer_mesh_fragment"),
    ("ground", "ground_vertex", "ground_fragment"),
];

/// The viewer's module, parsed and validated.
fn viewer_module() -> (naga::Module, naga::valid::ModuleInfo) {
    parse_validated(&viewer_source())
}

/// The layout of the uniform blocks named `globals` as naga lays out their
/// WGSL structs (the uniform address space's rules, which std140 shares
/// for these members): per block its size in bytes and each member's
/// offset in 4-byte words, as JS lines.
fn uniform_layouts(module: &naga::Module, globals: &[String]) -> String {
    let mut out = String::new();
    for name in globals {
        let global = module
            .global_variables
            .iter()
            .map(|(_, g)| g)
            .find(|g| g.name.as_deref() == Some(name.as_str()))
            .unwrap_or_else(|| panic!("no global `{name}`"));
        let ty = &module.types[global.ty];
        let naga::TypeInner::Struct { members, span } = &ty.inner else {
            panic!("`{name}` is not a struct");
        };
        let offsets: Vec<String> = members
            .iter()
            .map(|m| {
                assert_eq!(m.offset % 4, 0);
                format!("{}: {}", m.name.as_deref().unwrap_or("?"), m.offset / 4)
            })
            .collect();
        out.push_str(&format!(
            "  {name}: {{ bytes: {span}, {} }},\n",
            offsets.join(", ")
        ));
    }
    out
}

/// One stage of a viewer program as naga writes it in GLSL ES 3.00
/// (WebGL2), with the GLSL names of its uniform blocks and samplers mapped
/// to the WGSL globals they are.
struct ViewerStage {
    program: &'static str,
    /// `vertex` or `fragment`.
    stage: &'static str,
    text: String,
    blocks: Vec<(String, String)>,
    samplers: Vec<(String, String)>,
}

/// Every stage of the viewer's programs. GL's clip space is what the
/// page's matrices give, so the coordinate adjustment naga applies for
/// wgpu is off.
fn viewer_stages(module: &naga::Module, info: &naga::valid::ModuleInfo) -> Vec<ViewerStage> {
    use naga::back::glsl;
    let global_name = |h: naga::Handle<naga::GlobalVariable>| {
        module.global_variables[h]
            .name
            .clone()
            .expect("named global")
    };
    let mut out = Vec::new();
    for (program, vertex, fragment) in VIEWER_PROGRAMS {
        for (stage, shader_stage, entry) in [
            ("vertex", naga::ShaderStage::Vertex, vertex),
            ("fragment", naga::ShaderStage::Fragment, fragment),
        ] {
            let options = glsl::Options {
                version: glsl::Version::Embedded {
                    version: 300,
                    is_webgl: true,
                },
                writer_flags: glsl::WriterFlags::empty(),
                ..glsl::Options::default()
            };
            let (text, reflection) = write_glsl(module, info, &options, shader_stage, entry);
            let mut blocks: Vec<(String, String)> = reflection
                .uniforms
                .iter()
                .map(|(h, name)| (name.clone(), global_name(*h)))
                .collect();
            let mut samplers: Vec<(String, String)> = reflection
                .texture_mapping
                .iter()
                .map(|(name, m)| (name.clone(), global_name(m.texture)))
                .collect();
            blocks.sort();
            samplers.sort();
            out.push(ViewerStage {
                program,
                stage,
                text,
                blocks,
                samplers,
            });
        }
    }
    out
}

/// `crates/view/assets/shaders.js` as naga writes it: per program, both
/// stages and the names the page binds.
fn viewer_shaders_js() -> String {
    let mut js = format!(
        "// rigbake view's WebGL2 shaders (GLSL ES 3.00), generated by naga {NAGA_VERSION}\n\
         // from docs/shaders/rigbake.wgsl and crates/view/assets/viewer.wgsl (`just\n\
         // shaders`, or RIGBAKE_BLESS=1 cargo test --test shaders). Do not edit:\n\
         // change the WGSL and generate again. Per program: the two stages, and the\n\
         // GLSL names of its uniform blocks and samplers with the WGSL globals they\n\
         // are (viewer.js binds by the WGSL names); per uniform block, its size and\n\
         // its members' offsets in 4-byte words.\n\nexport const PROGRAMS = {{\n"
    );
    let map = |pairs: &[(String, String)]| {
        pairs
            .iter()
            .map(|(glsl, wgsl)| format!("{glsl}: '{wgsl}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (module, info) = viewer_module();
    let stages = viewer_stages(&module, &info);
    let mut globals: Vec<String> = Vec::new();
    for pair in stages.chunks(2) {
        js.push_str(&format!("  {}: {{\n", pair[0].program));
        let mut blocks = Vec::new();
        let mut samplers = Vec::new();
        for s in pair {
            assert!(
                !s.text.contains('`') && !s.text.contains("${"),
                "{} {} needs quoting",
                s.program,
                s.stage
            );
            js.push_str(&format!("    {}: `{}`,\n", s.stage, s.text));
            blocks.extend(s.blocks.iter().cloned());
            samplers.extend(s.samplers.iter().cloned());
        }
        blocks.sort();
        samplers.sort();
        globals.extend(blocks.iter().map(|(_, g)| g.clone()));
        js.push_str(&format!("    blocks: {{ {} }},\n", map(&blocks)));
        js.push_str(&format!("    samplers: {{ {} }},\n  }},\n", map(&samplers)));
    }
    js.push_str("};\n\nexport const LAYOUTS = {\n");
    globals.sort();
    globals.dedup();
    js.push_str(&uniform_layouts(&module, &globals));
    js.push_str("};\n");
    js
}

fn viewer_shaders_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../crates/view/assets/shaders.js")
}

#[test]
fn the_viewer_shaders_are_what_naga_writes_from_the_wgsl() {
    let js = viewer_shaders_js();
    assert_committed(&viewer_shaders_path(), &js);
    // The page's skinning and VAT lookup are the reference's functions.
    for f in [
        "bone_deform",
        "vat_texel",
        "vat_decode",
        "vat_position",
        "cofactor_normal",
    ] {
        assert!(js.contains(&format!(" {f}(")), "shaders.js lacks `{f}`");
    }
}
