//! Interoperability: the OpenEXR reference library (through its Python
//! binding) reads rigbake's EXRs and sees the same pixels as the exr crate.
//!
//! Needs `python3` with the `OpenEXR` module (`pip install OpenEXR`). Without
//! it the test is skipped with a message, unless `RIGBAKE_REQUIRE_OPENEXR` is
//! set (CI sets it), in which case it fails.

mod common;

use std::path::Path;
use std::process::Command;

use common::{bake, read_exr};

fn openexr_dump(file: &Path) -> Option<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/openexr_dump.py");
    let out = Command::new("python3").arg(script).arg(file).output();
    let required = std::env::var_os("RIGBAKE_REQUIRE_OPENEXR").is_some();
    match out {
        Ok(o) if o.status.success() => {
            Some(serde_json::from_slice(&o.stdout).expect("JSON from the dump script"))
        }
        Ok(o) if o.status.code() == Some(3) && !required => {
            eprintln!("SKIPPED: python3 has no OpenEXR module (pip install OpenEXR)");
            None
        }
        Ok(o) => panic!(
            "OpenEXR failed to read {}: {}",
            file.display(),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) if !required => {
            eprintln!("SKIPPED: cannot run python3: {e}");
            None
        }
        Err(e) => panic!("cannot run python3: {e}"),
    }
}

#[test]
fn openexr_reference_library_reads_bone_textures() {
    let out = tempfile::tempdir().unwrap();
    let model = rigbake_fixtures::fixture("tentacle.glb");
    for precision in ["f32", "f16"] {
        let r = bake(
            std::slice::from_ref(&model),
            out.path(),
            &["--precision", precision],
        );
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let file = out.path().join("tentacle/bones.skin0.exr");
        let Some(dump) = openexr_dump(&file) else {
            return;
        };
        let ours = read_exr(&file);
        assert_eq!(dump["width"], ours.width);
        assert_eq!(dump["height"], ours.height);
        assert_eq!(dump["compression"], "ZIP_COMPRESSION");
        assert_eq!(dump["line_order"], "INCREASING_Y");
        assert_eq!(dump["tiled"], false);
        let expected_type = if precision == "f32" { "FLOAT" } else { "HALF" };
        for c in ["R", "G", "B", "A"] {
            assert_eq!(dump["channel_types"][c], expected_type, "{c}");
        }
        for (k, c) in ["R", "G", "B", "A"].iter().enumerate() {
            let values = dump["channels"][c].as_array().unwrap();
            for (i, v) in values.iter().enumerate() {
                let theirs = v.as_f64().unwrap() as f32;
                assert_eq!(
                    theirs,
                    ours.data[i * 4 + k],
                    "{precision} channel {c} pixel {i}"
                );
            }
        }
    }
}

#[test]
fn openexr_reference_library_reads_streamed_vat_textures() {
    let out = tempfile::tempdir().unwrap();
    let model = rigbake_fixtures::fixture("tentacle.glb");
    for (flags, compression, ty) in [
        (&["--format", "exr16"][..], "NO_COMPRESSION", "HALF"),
        (
            &["--format", "exr32", "--zip", "--tangents"][..],
            "ZIP_COMPRESSION",
            "FLOAT",
        ),
        (
            &["--format", "exr16", "--compression", "zip"][..],
            "ZIP_COMPRESSION",
            "HALF",
        ),
        (
            &["--format", "exr16", "--compression", "piz"][..],
            "PIZ_COMPRESSION",
            "HALF",
        ),
        (
            &["--format", "exr16", "--compression", "pxr24"][..],
            "PXR24_COMPRESSION",
            "HALF",
        ),
        (
            &["--format", "exr32", "--compression", "pxr24", "--tangents"][..],
            "PXR24_COMPRESSION",
            "FLOAT",
        ),
        (
            &["--format", "exr32", "--compression", "piz"][..],
            "PIZ_COMPRESSION",
            "FLOAT",
        ),
    ] {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "vat".as_ref(),
            model.as_os_str(),
            "--out".as_ref(),
            out.path().as_os_str(),
            "--normals".as_ref(),
        ];
        args.extend(flags.iter().map(std::ffi::OsStr::new));
        let r = common::rigbake(&args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        for stream in ["positions", "normals"] {
            let file = out
                .path()
                .join(format!("tentacle/tentacle.vat.{stream}.exr"));
            let Some(dump) = openexr_dump(&file) else {
                return;
            };
            let ours = read_exr(&file);
            assert_eq!(
                (dump["width"].as_u64(), dump["height"].as_u64()),
                (Some(ours.width as u64), Some(ours.height as u64))
            );
            assert_eq!(dump["compression"], compression);
            assert_eq!(dump["tiled"], false);
            for (k, c) in ["R", "G", "B"].iter().enumerate() {
                assert_eq!(dump["channel_types"][c], ty);
                let values = dump["channels"][c].as_array().unwrap();
                for (i, v) in values.iter().enumerate() {
                    assert_eq!(
                        v.as_f64().unwrap() as f32,
                        ours.data[i * 4 + k],
                        "{stream} {c} texel {i}"
                    );
                }
            }
            assert!(
                dump["channels"].get("A").is_none(),
                "positions and normals are RGB"
            );
        }
    }
}
