//! Helpers shared by the CLI integration tests.
#![allow(dead_code)]

pub mod reference;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[allow(unused_imports)]
pub use rigbake_fixtures::testkit::models::{model_files, shared_models};

/// Runs the `rigbake` binary with `args`.
pub fn rigbake(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .args(args)
        .output()
        .expect("rigbake runs")
}

/// Runs `rigbake bake` on `models` into `out` with extra `flags`.
pub fn bake(models: &[PathBuf], out: &Path, flags: &[&str]) -> Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["bake".as_ref()];
    args.extend(models.iter().map(|m| m.as_os_str()));
    args.push("--out".as_ref());
    args.push(out.as_os_str());
    args.extend(flags.iter().map(|f| std::ffi::OsStr::new(*f)));
    rigbake(&args)
}

/// An RGBA float image read with the exr crate directly (not our reader).
pub struct Rgba {
    pub width: usize,
    pub height: usize,
    pub data: Vec<f32>,
}

/// Reads the first RGBA layer of an EXR file with the exr crate.
pub fn read_exr(path: &Path) -> Rgba {
    let image = exr::prelude::read_first_rgba_layer_from_file(
        path,
        |size, _| Rgba {
            width: size.width(),
            height: size.height(),
            data: vec![0.0; size.width() * size.height() * 4],
        },
        |img: &mut Rgba, p: exr::prelude::Vec2<usize>, (r, g, b, a): (f32, f32, f32, f32)| {
            let i = (p.y() * img.width + p.x()) * 4;
            img.data[i..i + 4].copy_from_slice(&[r, g, b, a]);
        },
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    image.layer_data.channel_data.pixels
}

/// Little-endian RGBA f32 texels (16 bytes each), as the weights record's
/// vertex-data sections and the weights meshes' `_RIGBAKE_UV*` accessors
/// store bone-weight channels.
pub fn rgba_f32(bytes: &[u8]) -> Vec<[f32; 4]> {
    bytes
        .chunks_exact(16)
        .map(|b| {
            let f = |i: usize| f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            [f(0), f(4), f(8), f(12)]
        })
        .collect()
}

/// Primitive `primitive` of mesh `mesh` of a GLB; panics naming them when
/// the file has no such primitive.
pub fn glb_primitive(g: &gltf::Gltf, mesh: usize, primitive: usize) -> gltf::Primitive<'_> {
    g.document
        .meshes()
        .nth(mesh)
        .and_then(|m| m.primitives().nth(primitive))
        .unwrap_or_else(|| panic!("the GLB has no meshes[{mesh}].primitives[{primitive}]"))
}

/// All files under `dir` with their bytes, as (relative path, bytes), sorted.
pub fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Runs the Khronos glTF-Validator (npm package in tools/node) on `file` and
/// returns its issues object, or `None` with a SKIPPED message when node or
/// the package is missing and `RIGBAKE_REQUIRE_GLTF_VALIDATOR` is not set.
pub fn gltf_validator(file: &Path) -> Option<serde_json::Value> {
    rigbake_fixtures::testkit::gltf_validator::validate(file).map(|report| report["issues"].clone())
}
