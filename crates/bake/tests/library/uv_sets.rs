//! Where the UV sets go: the VAT lookup UV in the lowest free TEXCOORD set
//! (with a warning past TEXCOORD_3, which three.js drops) or the set
//! `--lookup-uv-set` names (the source's sets from there on move up, and
//! material texture references follow); bone-weight pairs as TEXCOORD sets
//! after the source's with `--weights-as-uv`; the container's UV-set record
//! says which set holds what. Expected UVs come from the fixture's
//! definition (`rigbake_fixtures::looks`) and the VAT record's layout.

use std::path::Path;

use rigbake_fixtures::looks::TEXTURED_UV_SETS;
use rigbake_format::container::Container;

type File = Container<std::io::BufReader<std::fs::File>>;
use rigbake_format::meta::PrimitiveUvSets;

use crate::common::{bake, settings, with_vat};

/// The UV sets of the first primitive of mesh `mesh` of a GLB, in order.
fn uv_sets(file: &Path, mesh: usize) -> (Vec<Vec<[f32; 2]>>, gltf::Document) {
    let g = gltf::Gltf::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let blob = g.blob.clone().unwrap();
    let prim = g
        .document
        .meshes()
        .nth(mesh)
        .unwrap()
        .primitives()
        .next()
        .unwrap();
    let reader = prim.reader(|_| Some(&blob[..]));
    let mut sets = Vec::new();
    while let Some(uv) = reader.read_tex_coords(sets.len() as u32) {
        sets.push(uv.into_f32().collect());
    }
    (sets, g.document.clone())
}

/// Source UV set `k` of the textured fixture: set 0 plus `(k / 10, 0)`,
/// set 0 being `(v % 2, (v / 2) / 4)` over its 10 vertices.
fn source_set(k: usize) -> Vec<[f32; 2]> {
    (0..10)
        .map(|v| [(v % 2) as f32 + k as f32 / 10.0, (v / 2) as f32 * 0.25])
        .collect()
}

fn valid(file: &Path) {
    if let Some(report) = rigbake_fixtures::testkit::gltf_validator::validate(file) {
        let issues = &report["issues"];
        assert_eq!(issues["numErrors"], 0, "{issues}");
        assert_eq!(issues["numWarnings"], 0, "{issues}");
    }
}

fn record(out: &Path) -> (File, Vec<PrimitiveUvSets>) {
    let c = Container::open(&out.join("textured/textured.rigbake")).unwrap();
    let sets = c
        .records()
        .uv_sets
        .as_ref()
        .expect("a UV-set record")
        .primitives
        .clone();
    (c, sets)
}

/// The lookup UV the VAT record's layout gives vertex `v`.
fn lookup(c: &File, v: usize) -> [f32; 2] {
    let first = c
        .records()
        .layout
        .as_ref()
        .and_then(|l| l.vat.as_ref())
        .map_or(0, |l| l.first_vertex[0] as usize);
    let s = first + v;
    [(s % 2048) as f32, (s / 2048) as f32]
}

#[test]
fn five_uv_sets_put_the_lookup_in_set_5_with_a_warning() {
    let model = rigbake_fixtures::fixture("textured.gltf");
    let out = tempfile::tempdir().unwrap();
    let r = bake(&model, out.path(), &settings(with_vat)).baked();
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("TEXCOORD_5") && w.contains("--lookup-uv-set")),
        "{:?}",
        r.warnings
    );
    let file = out.path().join("textured/textured.vat.glb");
    valid(&file);
    let (sets, doc) = uv_sets(&file, 0);
    assert_eq!(sets.len(), TEXTURED_UV_SETS + 1);
    for (k, set) in sets.iter().enumerate().take(TEXTURED_UV_SETS) {
        assert_eq!(*set, source_set(k), "set {k}");
    }
    let (c, record) = record(out.path());
    let want: Vec<[f32; 2]> = (0..10).map(|v| lookup(&c, v)).collect();
    assert_eq!(sets[TEXTURED_UV_SETS], want);
    let vat_entry = record
        .iter()
        .find(|p| p.file == "textured.vat.glb")
        .unwrap();
    assert_eq!((vat_entry.source_sets, vat_entry.lookup), (5, Some(5)));
    // Materials untouched: the emission texture still reads set 2.
    let m = doc.materials().next().unwrap();
    assert_eq!(m.emissive_texture().unwrap().tex_coord(), 2);
    assert_eq!(c.version().minor, rigbake_format::records::FORMAT_MINOR);
}

#[test]
fn lookup_uv_set_moves_the_lookup_and_the_sets_after_it() {
    let model = rigbake_fixtures::fixture("textured.gltf");
    let out = tempfile::tempdir().unwrap();
    let set_2 = settings(|s| {
        with_vat(s);
        s.lookup_uv_set = Some(2);
    });
    let r = bake(&model, out.path(), &set_2).baked();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let file = out.path().join("textured/textured.vat.glb");
    valid(&file);
    let (sets, doc) = uv_sets(&file, 0);
    let (c, record) = record(out.path());
    assert_eq!(sets.len(), TEXTURED_UV_SETS + 1);
    assert_eq!(sets[0], source_set(0));
    assert_eq!(sets[1], source_set(1));
    assert_eq!(sets[2], (0..10).map(|v| lookup(&c, v)).collect::<Vec<_>>());
    for k in 2..TEXTURED_UV_SETS {
        assert_eq!(sets[k + 1], source_set(k), "source set {k}");
    }
    let m = doc.materials().next().unwrap();
    assert_eq!(m.emissive_texture().unwrap().tex_coord(), 3);
    assert_eq!(
        m.pbr_metallic_roughness()
            .base_color_texture()
            .unwrap()
            .tex_coord(),
        0
    );
    let vat_entry = record
        .iter()
        .find(|p| p.file == "textured.vat.glb")
        .unwrap();
    assert_eq!(vat_entry.lookup, Some(2));
    // (Out of range, `--lookup-uv-set 32`, is a usage error of the command
    // line: crates/cli/tests/usability.rs.)
}

#[test]
fn weights_as_uv_adds_two_sets_per_channel_after_the_sources() {
    let model = rigbake_fixtures::fixture("textured.gltf");
    for as_uv in [false, true] {
        let out = tempfile::tempdir().unwrap();
        bake(&model, out.path(), &settings(|s| s.weights_as_uv = as_uv)).baked();
        let file = out.path().join("textured/textured.weights.glb");
        valid(&file);
        let (sets, _) = uv_sets(&file, 0);
        let (mut c, record) = record(out.path());
        let w = c.records().weights.as_ref().unwrap().clone();
        let channels = w.channels as usize;
        let entry = &record[0];
        assert_eq!(entry.file, "textured.weights.glb");
        assert_eq!(entry.source_sets, 5);
        if !as_uv {
            assert_eq!(sets.len(), TEXTURED_UV_SETS);
            assert_eq!((entry.weights_first, entry.weights_sets), (None, 0));
            continue;
        }
        assert_eq!(sets.len(), TEXTURED_UV_SETS + 2 * channels);
        assert_eq!(entry.weights_first, Some(5));
        assert_eq!(entry.weights_sets as usize, 2 * channels);
        let bytes = c.read_section(w.primitives[0].section as usize).unwrap();
        let values: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        for ch in 0..channels {
            let (first, second) = (&sets[5 + 2 * ch], &sets[6 + 2 * ch]);
            for (v, (a, b)) in first.iter().zip(second).enumerate() {
                let at = (v * channels + ch) * 4;
                assert_eq!(*a, [values[at], values[at + 1]]);
                assert_eq!(*b, [values[at + 2], values[at + 3]]);
            }
        }
        // two_joint's hand-stated weights: vertices 4 and 5 are half root
        // (joint 0), half tip (joint 1).
        let pairs: Vec<[f32; 2]> = (0..2 * channels).map(|s| sets[5 + s][4]).collect();
        assert!(
            pairs.contains(&[0.0, 0.5]) && pairs.contains(&[1.0, 0.5]),
            "{pairs:?}"
        );
    }
}
