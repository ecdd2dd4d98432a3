//! `verify` and `preview` on streamed VAT textures (issue 34, item 1): a
//! VAT EXR damaged after the bake fails both commands, naming the
//! texture. (That the streamed measurement and preview give exactly what
//! a whole decode gives is a test of the library:
//! crates/bake/tests/library/verify.rs.)

mod common;

use std::path::Path;

use common::{bake, containers, rigbake, shared_models};

/// A VAT EXR damaged after the bake (cut short, or its blocks zeroed
/// past the header) fails `verify` and `preview` with exit code 1 and a
/// message naming the texture; the header is checked at load, the blocks
/// when their rows are read. Never a panic.
#[test]
fn a_damaged_streamed_exr_fails_naming_the_texture() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let model = fixtures.join("walker.glb");
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--vat", "--normals", "--no-weights"],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let container = containers(out.path()).remove(0);
    let dir = container.parent().unwrap();
    let name = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.ends_with(".vat.positions.exr"))
        .expect("a positions EXR");
    let texture = dir.join(&name);
    let good = std::fs::read(&texture).unwrap();
    let cut = good[..good.len() / 2].to_vec();
    let mut zeroed = good.clone();
    let from = good.len() / 3;
    zeroed[from..].fill(0);
    for (case, bytes) in [("cut short", cut), ("zeroed", zeroed)] {
        std::fs::write(&texture, &bytes).unwrap();
        let png = out.path().join("sheet.png");
        for args in [
            vec!["verify".as_ref(), container.as_os_str()],
            vec![
                "preview".as_ref(),
                container.as_os_str(),
                "--out".as_ref(),
                png.as_os_str(),
            ],
        ] {
            let r = rigbake(&args);
            let stderr = String::from_utf8_lossy(&r.stderr);
            let stdout = String::from_utf8_lossy(&r.stdout);
            assert_eq!(
                r.status.code(),
                Some(1),
                "{case}: {args:?}: {stderr} {stdout}"
            );
            assert!(
                stderr.contains(&name) || stdout.contains(&name),
                "{case}: {args:?} names the texture: {stderr} {stdout}"
            );
            assert!(!stderr.contains("panicked"), "{case}: {stderr}");
        }
    }
    std::fs::write(&texture, &good).unwrap();
    let r = rigbake(&["verify".as_ref(), container.as_os_str()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stdout));
}

/// `verify` evaluates the source a block of vertices at a time, in columns
/// (`PrimitiveDeform::deform_columns`); those are the bits the per-vertex
/// reference (`position_normal`, what `deform` gives) computes, on every
/// mesh of every fixture and shared model, at the rest pose and at a
/// third of every clip, in both normal conventions and in the space of
/// the scene and of the mesh's node.
#[test]
fn columns_are_the_per_vertex_reference_to_the_bit() {
    use rigbake_core::bake::vat::NormalConvention;
    use rigbake_core::eval::sample::{LocalPose, sample_clip};
    use rigbake_core::import::{ImportOptions, import_file};
    use rigbake_core::reference::{
        BlendBlock, ColumnBlock, Columns, DirectGlobals, PrimitiveDeform,
    };

    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut files = common::model_files(&fixtures);
    if let Some(dir) = shared_models("columns_are_the_per_vertex_reference_to_the_bit") {
        files.extend(common::model_files(&dir));
    }
    let mut vertices = 0usize;
    for file in files {
        let Ok(model) = import_file(&file, &ImportOptions::default()) else {
            continue;
        };
        let mut poses = vec![LocalPose::rest(&model)];
        for clip in &model.clips {
            let mut pose = LocalPose::rest(&model);
            sample_clip(&model, clip, clip.duration / 3.0, &mut pose);
            poses.push(pose);
        }
        for pose in &poses {
            let mut globals = DirectGlobals::new(&model, pose);
            let (mut block, mut want) = (BlendBlock::boxed(), ColumnBlock::boxed());
            for (node, n) in model.nodes.iter().enumerate() {
                let Some(mesh) = n.mesh else { continue };
                for prim in 0..model.meshes[mesh].primitives.len() {
                    for space in [None, Some(node)] {
                        let d = PrimitiveDeform::new(&model, pose, &mut globals, node, prim, space)
                            .unwrap();
                        for convention in [
                            NormalConvention::InverseTranspose,
                            NormalConvention::BlendedMatrix,
                        ] {
                            let mut columns = Columns::default();
                            d.deform_columns(&mut block, &mut want, convention, &mut columns);
                            assert_eq!(columns.len(), d.vertex_count());
                            for v in 0..d.vertex_count() {
                                let (p, n) = d.position_normal(v, convention);
                                let (cp, cn) = columns.get(v);
                                let bits = |a: glam::DVec3| a.to_array().map(f64::to_bits);
                                assert_eq!(
                                    (bits(cp), bits(cn)),
                                    (bits(p), bits(n)),
                                    "{}: node {node} primitive {prim} vertex {v}",
                                    file.display()
                                );
                            }
                            vertices += d.vertex_count();
                        }
                    }
                }
            }
        }
    }
    assert!(vertices > 1000, "only {vertices} vertices compared");
}
